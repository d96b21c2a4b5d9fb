/* hwtest_db.h - reading a trial DB from a C test (linked into every test binary).
 * Owns: one-value SQL queries against a SQLite file, asserting (Criterion) that the DB opens and
 * the statement prepares. */
#ifndef HWTEST_DB_H
#define HWTEST_DB_H

/* The first column of the first row of `sql` on the SQLite file `db` as a double; NAN when the
 * query returns no row. */
double hwtest_db_double(const char *db, const char *sql);

#endif
