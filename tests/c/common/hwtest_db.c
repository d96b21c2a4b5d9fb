/* hwtest_db.c - see hwtest_db.h. */
#include "hwtest_db.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>

double hwtest_db_double(const char *db, const char *sql) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    double v = NAN;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}
