/* lb_db.c - see lb_db.h */
#include "lb_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwgym_trials.h"

static const char *schema =
    "CREATE TABLE IF NOT EXISTS leaderboard_suite (name TEXT NOT NULL, json TEXT NOT NULL, saved_at REAL);"
    "CREATE TABLE IF NOT EXISTS leaderboard_cells ("
    " key TEXT PRIMARY KEY, env_name TEXT NOT NULL, env TEXT NOT NULL, variant TEXT NOT NULL,"
    " seed INTEGER NOT NULL, off INTEGER NOT NULL, run_id INTEGER REFERENCES runs(id), evals INTEGER,"
    " cpu_s REAL, wall_s REAL, started_at REAL, ended_at REAL, status INTEGER NOT NULL, cut TEXT,"
    " error TEXT, endpoint TEXT);";

static int sql_fail(sqlite3 *db, hw_err *err, const char *what) {
    return hw_fail(err, HW_E_IO, "leaderboard DB: %s: %s", what, sqlite3_errmsg(db));
}

sqlite3 *lb_db_open(const char *path, bool readonly, hw_err *err) {
    sqlite3 *db = NULL;
    if (readonly) {
        if (access(path, R_OK)) {
            hw_fail(err, HW_E_IO, "%s: cannot read the leaderboard DB", path);
            return NULL;
        }
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
            hw_fail(err, HW_E_IO, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
            sqlite3_close(db);
            return NULL;
        }
        sqlite3_busy_timeout(db, 30000);
        return db;
    }
    /* the trial schema comes from the trial-logging module, exactly as the agents make it */
    hwt_opts o = hwt_opts_default();
    o.handle_signals = false;
    o.no_thread = true;
    hwt_db *t = hwt_open(path, &o, err);
    if (!t || hwt_close(t, err)) return NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        hw_fail(err, HW_E_IO, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 30000);
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        sql_fail(db, err, "create tables");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

void lb_db_close(sqlite3 *db) { sqlite3_close(db); }

int lb_db_put_suite(sqlite3 *db, const char *name, const char *json, hw_err *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_exec(db, "DELETE FROM leaderboard_suite", NULL, NULL, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(db, "INSERT INTO leaderboard_suite VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK;
    if (!rc) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, json, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 3, hwt_now());
        rc = sqlite3_step(st) != SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return rc ? sql_fail(db, err, "save the suite") : 0;
}

char *lb_db_get_suite(sqlite3 *db, hw_err *err) {
    sqlite3_stmt *st = NULL;
    char *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT json FROM leaderboard_suite LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
        sql_fail(db, err, "read the suite (is this a leaderboard DB?)");
        return NULL;
    }
    if (sqlite3_step(st) == SQLITE_ROW) out = strdup((const char *)sqlite3_column_text(st, 0));
    else hw_fail(err, HW_E_BAD_REQUEST, "leaderboard DB: no suite stored (not written by hwgym leaderboard)");
    sqlite3_finalize(st);
    return out;
}

int lb_db_cell_done(sqlite3 *db, const char *key, bool retry_failed, hw_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT status FROM leaderboard_cells WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return sql_fail(db, err, "query cells");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    int done = 0;
    if (sqlite3_step(st) == SQLITE_ROW) done = !(retry_failed && sqlite3_column_int(st, 0) != 0);
    sqlite3_finalize(st);
    return done;
}

/* copies the cell DB's runs and trials; *first = the first new run id (0: none) */
static int copy_runs(sqlite3 *db, bool keep_obs, long long *first) {
    sqlite3_stmt *runs = NULL, *ins = NULL, *tr = NULL;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO main.trials (run_id, worker, episode, step, kind, reset_seed, action, observation, reward,"
             " terminated, truncated, metrics, feasible, time, cache_hit) SELECT ?, worker, episode, step, kind,"
             " reset_seed, action, %s, reward, terminated, truncated, metrics, feasible, time, cache_hit"
             " FROM cell.trials WHERE run_id = ? ORDER BY id",
             keep_obs ? "observation" : "NULL");
    int rc = sqlite3_prepare_v2(db, "SELECT id FROM cell.runs ORDER BY id", -1, &runs, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(db,
                                "INSERT INTO main.runs (agent, agent_config, env, env_config, seed, host, version,"
                                " endpoint, started_at, ended_at) SELECT agent, agent_config, env, env_config, seed,"
                                " host, version, endpoint, started_at, ended_at FROM cell.runs WHERE id = ?",
                                -1, &ins, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(db, sql, -1, &tr, NULL) != SQLITE_OK;
    *first = 0;
    while (!rc && sqlite3_step(runs) == SQLITE_ROW) {
        long long old = sqlite3_column_int64(runs, 0);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, old);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = 1;
        long long nid = sqlite3_last_insert_rowid(db);
        if (!*first) *first = nid;
        sqlite3_reset(tr);
        sqlite3_bind_int64(tr, 1, nid);
        sqlite3_bind_int64(tr, 2, old);
        if (!rc && sqlite3_step(tr) != SQLITE_DONE) rc = 1;
    }
    sqlite3_finalize(runs);
    sqlite3_finalize(ins);
    sqlite3_finalize(tr);
    return rc;
}

static int insert_cell(sqlite3 *db, const lb_cell_rec *r, long long run_id, long long evals) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO leaderboard_cells VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
                           NULL) != SQLITE_OK)
        return 1;
    sqlite3_bind_text(st, 1, r->key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r->env_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->env, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->variant, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, r->seed);
    sqlite3_bind_int(st, 6, r->off);
    if (run_id) sqlite3_bind_int64(st, 7, run_id);
    sqlite3_bind_int64(st, 8, evals);
    sqlite3_bind_double(st, 9, r->cpu_s);
    sqlite3_bind_double(st, 10, r->wall_s);
    sqlite3_bind_double(st, 11, r->started_at);
    sqlite3_bind_double(st, 12, r->ended_at);
    sqlite3_bind_int(st, 13, r->status);
    sqlite3_bind_text(st, 14, r->cut ? r->cut : "", -1, SQLITE_TRANSIENT);
    if (r->error) sqlite3_bind_text(st, 15, r->error, -1, SQLITE_TRANSIENT);
    if (r->endpoint) sqlite3_bind_text(st, 16, r->endpoint, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) != SQLITE_DONE;
    sqlite3_finalize(st);
    return rc;
}

static long long count_trials(sqlite3 *db, long long run_id) {
    sqlite3_stmt *st = NULL;
    long long n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM trials WHERE run_id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

int lb_db_merge_cell(sqlite3 *db, const char *celldb, bool keep_obs, const lb_cell_rec *rec, hw_err *err) {
    bool have = celldb && access(celldb, R_OK) == 0;
    sqlite3_stmt *at = NULL;
    if (have) {
        if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS cell", -1, &at, NULL) != SQLITE_OK) return sql_fail(db, err, "attach");
        sqlite3_bind_text(at, 1, celldb, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(at);
        sqlite3_finalize(at);
        if (rc != SQLITE_DONE) return sql_fail(db, err, celldb);
        /* a cell that died before logging has a file without tables: treat as empty */
        sqlite3_stmt *chk = NULL;
        have = sqlite3_prepare_v2(db, "SELECT 1 FROM cell.sqlite_master WHERE name = 'trials'", -1, &chk, NULL) == SQLITE_OK &&
               sqlite3_step(chk) == SQLITE_ROW;
        sqlite3_finalize(chk);
    }
    long long run_id = 0;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK;
    if (!rc && have) rc = copy_runs(db, keep_obs, &run_id);
    if (!rc) rc = insert_cell(db, rec, run_id, run_id ? count_trials(db, run_id) : 0);
    if (!rc) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK;
    if (rc) {
        sql_fail(db, err, rec->key);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    if (celldb && access(celldb, R_OK) == 0) sqlite3_exec(db, "DETACH DATABASE cell", NULL, NULL, NULL);
    return rc ? -1 : 0;
}

static char *col_dup(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

int lb_db_read_cell(sqlite3 *db, const char *key, lb_cell_rec *r, hw_err *err) {
    sqlite3_stmt *st = NULL;
    memset(r, 0, sizeof *r);
    if (sqlite3_prepare_v2(db,
                           "SELECT key, env_name, env, variant, seed, off, cpu_s, wall_s, started_at, ended_at, status, cut,"
                           " error, endpoint FROM leaderboard_cells WHERE key = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return sql_fail(db, err, "read a cell");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found) {
        r->key = col_dup(st, 0), r->env_name = col_dup(st, 1), r->env = col_dup(st, 2), r->variant = col_dup(st, 3);
        r->seed = sqlite3_column_int(st, 4);
        r->off = sqlite3_column_int(st, 5) != 0;
        r->cpu_s = sqlite3_column_double(st, 6), r->wall_s = sqlite3_column_double(st, 7);
        r->started_at = sqlite3_column_double(st, 8), r->ended_at = sqlite3_column_double(st, 9);
        r->status = sqlite3_column_int(st, 10);
        r->cut = col_dup(st, 11), r->error = col_dup(st, 12), r->endpoint = col_dup(st, 13);
    }
    sqlite3_finalize(st);
    return found;
}

void lb_cell_rec_free(lb_cell_rec *r) {
    const char *s[] = {r->key, r->env_name, r->env, r->variant, r->cut, r->error, r->endpoint};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) free((char *)s[i]);
    memset(r, 0, sizeof *r);
}

int lb_db_copy(sqlite3 *db, const char *path, const char *opt, hw_err *err) {
    if (!access(path, F_OK)) return hw_fail(err, HW_E_IO, "%s %s: the file exists", opt, path);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &st, NULL) != SQLITE_OK;
    if (!rc) {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) != SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return rc ? sql_fail(db, err, path) : 0;
}

int lb_db_exec_file(const char *path, const char *opt, const char *sql, hw_err *err) {
    sqlite3 *c = NULL;
    int rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
             sqlite3_exec(c, sql, NULL, NULL, NULL) != SQLITE_OK;
    if (rc) hw_fail(err, HW_E_IO, "%s %s: %s", opt, path, c ? sqlite3_errmsg(c) : "cannot open");
    sqlite3_close(c);
    return rc ? -1 : 0;
}

int lb_db_slim_copy(sqlite3 *db, const char *path, hw_err *err) {
    if (lb_db_copy(db, path, "--slim", err)) return -1;
    return lb_db_exec_file(path, "--slim",
                           "PRAGMA journal_mode = DELETE; UPDATE trials SET action = 'null', observation = NULL, metrics = NULL; VACUUM;",
                           err);
}
