/* hwtest_db.h - reading a trial DB from a C test (linked into every test binary).
 * Owns: one-value SQL queries and the trial-log dump the resume tests compare, against a SQLite
 * file, asserting (Criterion) that the DB opens and the statement prepares. */
#ifndef HWTEST_DB_H
#define HWTEST_DB_H

/* The first column of the first row of `sql` on the SQLite file `db` as a double; NAN when the
 * query returns no row. */
double hwtest_db_double(const char *db, const char *sql);
/* Every trial of the DB as text, one line "worker|episode|step|action|reward|run_id" per trial
 * (reward as SQL quote() gives it, exact), per worker in log order; *count gets the number of
 * trials. malloc'd. */
char *hwtest_db_trials(const char *db, long long *count);

#endif
