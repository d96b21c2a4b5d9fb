/* lb_db.h - the leaderboard's SQLite file: the project's trial schema (schemas/trials.sql, made
 * by the trial-logging module) plus two tables of its own (docs/leaderboard.md):
 *   leaderboard_suite(name, json)   the suite as run (so --from-db needs no suite file);
 *   leaderboard_cells(key, ...)     one row per finished cell: its run id in `runs`, the
 *                                   evaluations logged, the agent's CPU and wall seconds, exit
 *                                   status and whether the CPU cap cut it.
 * Owns: opening/creating the file, and moving one cell's trials (each cell logs into its own
 * file while it runs) into it in one transaction with the cell's row, so a cell is either
 * wholly in the leaderboard file or not at all: --resume skips exactly the cells with a row. */
#ifndef LB_DB_H
#define LB_DB_H

#include <sqlite3.h>
#include <stdbool.h>

#include "hw_error.h"

typedef struct lb_cell_rec {
    const char *key, *env_name, *env, *variant;
    int seed;
    bool off;
    double cpu_s, wall_s, started_at, ended_at;
    int status;          /* 0 ok; else the exit code, or 128 + signal when not cut by the runner */
    const char *cut;     /* "" or "cpu" (stopped at the CPU cap) or "wall" (stopped by the wall safety bound) */
    const char *error;   /* last stderr line of a failed cell, or NULL */
    const char *endpoint;
} lb_cell_rec;

sqlite3 *lb_db_open(const char *path, bool readonly, hw_err *err);
void lb_db_close(sqlite3 *db);
int lb_db_put_suite(sqlite3 *db, const char *name, const char *json, hw_err *err);
/* The stored suite JSON (caller frees) or NULL with err set. */
char *lb_db_get_suite(sqlite3 *db, hw_err *err);
/* 1 when the cell has a row (failed cells too unless retry_failed), 0 otherwise, -1 on error. */
int lb_db_cell_done(sqlite3 *db, const char *key, bool retry_failed, hw_err *err);
/* Copies the runs and trials of `celldb` (observations dropped unless keep_obs) into db and adds
 * rec's row (with the first copied run's new id), in one transaction. A missing/empty celldb
 * records the cell with no run. */
int lb_db_merge_cell(sqlite3 *db, const char *celldb, bool keep_obs, const lb_cell_rec *rec, hw_err *err);
/* The row of cell `key` in a leaderboard file, into *rec (its strings are the caller's: free them
 * with lb_cell_rec_free). 1 found, 0 no such row, -1 error. */
int lb_db_read_cell(sqlite3 *db, const char *key, lb_cell_rec *rec, hw_err *err);
void lb_cell_rec_free(lb_cell_rec *rec);

/* Writes a copy of db to `path` (which must not exist) that keeps what the pages are computed
 * from (cells, runs, and per trial its run, worker, episode, step, kind, reward, end flags and
 * time) and drops each trial's action (stored as JSON null), observation and metrics: a small
 * file to commit beside a page. The pages computed from it equal the full file's. */
int lb_db_slim_copy(sqlite3 *db, const char *path, hw_err *err);
/* The two steps of a copy: db VACUUMed INTO `path` (which must not exist; `opt` names the
 * option in errors), and `sql` run on such a file. */
int lb_db_copy(sqlite3 *db, const char *path, const char *opt, hw_err *err);
int lb_db_exec_file(const char *path, const char *opt, const char *sql, hw_err *err);

#endif
