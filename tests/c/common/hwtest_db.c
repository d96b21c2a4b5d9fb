/* hwtest_db.c - see hwtest_db.h. */
#include "hwtest_db.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *hwtest_db_trials(const char *db, long long *count) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT worker, episode, step, action, quote(reward), run_id FROM trials ORDER BY worker, id", -1,
                                    &st, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(h));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cr_assert(buf);
    buf[0] = 0;
    *count = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *w = (const char *)sqlite3_column_text(st, 0), *a = (const char *)sqlite3_column_text(st, 3),
                   *r = (const char *)sqlite3_column_text(st, 4);
        /* room for the three texts and three integers, whatever the action's length */
        size_t need = (w ? strlen(w) : 0) + (a ? strlen(a) : 0) + (r ? strlen(r) : 0) + 3 * 21 + 8;
        while (n + need > cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert(buf);
        }
        n += (size_t)snprintf(buf + n, cap - n, "%s|%lld|%lld|%s|%s|%lld\n", w ? w : "", (long long)sqlite3_column_int64(st, 1),
                              (long long)sqlite3_column_int64(st, 2), a ? a : "", r ? r : "", (long long)sqlite3_column_int64(st, 5));
        ++*count;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return buf;
}
