/* lb_curve.c - see lb_curve.h */
#include "lb_curve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_db.h"
#include "lb_stats.h"

#define MAX_WORKERS 64

typedef struct {
    char name[64];
    long long episode;
    double acc;
} wstate;

/* accumulates one trial; returns the score it completes (NAN when none) */
static double trial_score(const char *kind_score, const char *kind, const char *worker, long long episode, double r, bool has_r,
                          bool done, wstate *ws, size_t *nws) {
    if (!has_r) return NAN;
    if (!strcmp(kind_score, "max_reward") || !strcmp(kind, "eval")) return r;
    size_t i = 0;
    while (i < *nws && strcmp(ws[i].name, worker)) i++;
    if (i == *nws) {
        if (*nws == MAX_WORKERS) return NAN;
        snprintf(ws[i].name, sizeof ws[i].name, "%s", worker);
        ws[i].episode = episode, ws[i].acc = 0;
        (*nws)++;
    }
    if (ws[i].episode != episode) ws[i].episode = episode, ws[i].acc = 0; /* an episode cut without its end */
    if (!strcmp(kind_score, "sched_log")) ws[i].acc += -log1p(-fmin(fmax(r, 0.0), 1 - 1e-12));
    else ws[i].acc += r;
    if (!done) return NAN;
    double v = ws[i].acc;
    ws[i].acc = 0;
    ws[i].episode = episode + 1;
    return v;
}

static int load_curve(sqlite3 *db, const lb_env *e, long long run_id, double cpu_s, double started, lb_curve *c, hw_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT kind, worker, episode, reward, coalesce(terminated, 0) OR coalesce(truncated, 0), time"
                           " FROM trials WHERE run_id = ? ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return hw_fail(err, HW_E_IO, "leaderboard DB: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, run_id);
    /* first pass into arrays: score completed at trial i, and its time */
    size_t n = 0, cap = 1024;
    double *sc = malloc(cap * sizeof *sc), *tm = malloc(cap * sizeof *tm);
    wstate ws[MAX_WORKERS];
    size_t nws = 0;
    int rc = 0;
    while (sc && tm && sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap *= 2;
            double *a = realloc(sc, cap * sizeof *sc), *b = a ? realloc(tm, cap * sizeof *tm) : NULL;
            if (a) sc = a;
            if (b) tm = b;
            if (!a || !b) {
                rc = hw_fail(err, HW_E_INTERNAL, "out of memory");
                break;
            }
        }
        const char *kind = (const char *)sqlite3_column_text(st, 0), *worker = (const char *)sqlite3_column_text(st, 1);
        bool has_r = sqlite3_column_type(st, 3) != SQLITE_NULL;
        sc[n] = trial_score(e->score, kind ? kind : "step", worker ? worker : "0", sqlite3_column_int64(st, 2),
                            sqlite3_column_double(st, 3), has_r, sqlite3_column_int(st, 4), ws, &nws);
        tm[n++] = sqlite3_column_double(st, 5);
    }
    sqlite3_finalize(st);
    if (!sc || !tm) rc = hw_fail(err, HW_E_INTERNAL, "out of memory");
    if (!rc) {
        c->evals = (long long)n;
        c->cpu_s = cpu_s;
        double span = n ? tm[n - 1] - started : 0, best = NAN;
        long long small = e->budget.small;
        c->small = NAN;
        for (int k = 0; k < LB_GRID; k++) c->ev[k] = c->cpu[k] = NAN;
        for (size_t i = 0; i < n; i++) {
            if (!isnan(sc[i]) && (isnan(best) || sc[i] > best)) best = sc[i];
            long long done = (long long)i + 1;
            if (done <= small) c->small = best;
            for (int k = 0; k < LB_GRID; k++) {
                if (done <= llround((double)e->budget.evals * (k + 1) / LB_GRID)) c->ev[k] = best;
                /* CPU time of trial i: the cell's CPU seconds spread evenly over its wall time */
                double cpu_i = span > 0 ? cpu_s * (tm[i] - started) / span : cpu_s;
                if (cpu_i <= e->budget.cpu_s * (k + 1) / LB_GRID + 1e-9) c->cpu[k] = best;
            }
        }
        /* a run stopped early (CPU cap) keeps its last best for the rest of the evaluation grid */
        for (int k = 1; k < LB_GRID; k++) {
            if (isnan(c->ev[k])) c->ev[k] = c->ev[k - 1];
            if (isnan(c->cpu[k])) c->cpu[k] = c->cpu[k - 1];
        }
        if (isnan(c->small) && (long long)n < small) c->small = best;
    }
    free(sc);
    free(tm);
    return rc;
}

/* A curve stored by lb_curve_copy: small, ev[] and cpu[] as one blob of IEEE doubles in the
 * host's byte order (NAN kept), evals and cpu_s as columns. 1 found, 0 none, -1 error. */
#define CURVE_DOUBLES (1 + 2 * LB_GRID)

static int stored_curve(sqlite3_stmt *st, long long run_id, lb_curve *c, hw_err *err) {
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run_id);
    int r = sqlite3_step(st);
    if (r == SQLITE_DONE) return 0;
    if (r != SQLITE_ROW || sqlite3_column_bytes(st, 2) != (int)(CURVE_DOUBLES * sizeof(double)))
        return hw_fail(err, HW_E_IO, "leaderboard DB: leaderboard_curves row of run %lld is malformed", run_id);
    double v[CURVE_DOUBLES];
    memcpy(v, sqlite3_column_blob(st, 2), sizeof v);
    c->evals = sqlite3_column_int64(st, 0);
    c->cpu_s = sqlite3_column_double(st, 1);
    c->small = v[0];
    memcpy(c->ev, v + 1, sizeof c->ev);
    memcpy(c->cpu, v + 1 + LB_GRID, sizeof c->cpu);
    return 1;
}

static bool has_table(sqlite3 *db, const char *name) {
    sqlite3_stmt *st = NULL;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) == SQLITE_OK &&
               sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

int lb_curve_copy(sqlite3 *db, const lb_suite *s, const char *path, hw_err *err) {
    if (lb_db_copy(db, path, "--curves", err)) return -1;
    sqlite3 *c = NULL;
    sqlite3_stmt *cells = NULL, *ins = NULL;
    int rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
             sqlite3_exec(c,
                          "BEGIN; CREATE TABLE IF NOT EXISTS leaderboard_curves (run_id INTEGER PRIMARY KEY, evals INTEGER NOT NULL,"
                          " cpu_s REAL NOT NULL, curve BLOB NOT NULL);",
                          NULL, NULL, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(c, "INSERT OR REPLACE INTO leaderboard_curves VALUES (?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(db, "SELECT env_name, run_id, cpu_s, started_at FROM leaderboard_cells WHERE status = 0 AND run_id IS NOT NULL",
                                -1, &cells, NULL) != SQLITE_OK;
    if (rc) hw_fail(err, HW_E_IO, "--curves %s: %s", path, c ? sqlite3_errmsg(c) : "cannot open");
    while (!rc && sqlite3_step(cells) == SQLITE_ROW) {
        const lb_env *e = lb_suite_env(s, (const char *)sqlite3_column_text(cells, 0));
        if (!e) continue;
        lb_curve cv;
        long long run = sqlite3_column_int64(cells, 1);
        if ((rc = load_curve(db, e, run, sqlite3_column_double(cells, 2), sqlite3_column_double(cells, 3), &cv, err))) break;
        double v[CURVE_DOUBLES];
        v[0] = cv.small;
        memcpy(v + 1, cv.ev, sizeof cv.ev);
        memcpy(v + 1 + LB_GRID, cv.cpu, sizeof cv.cpu);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, run);
        sqlite3_bind_int64(ins, 2, cv.evals);
        sqlite3_bind_double(ins, 3, cv.cpu_s);
        sqlite3_bind_blob(ins, 4, v, sizeof v, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = hw_fail(err, HW_E_IO, "--curves %s: %s", path, sqlite3_errmsg(c));
    }
    sqlite3_finalize(cells);
    sqlite3_finalize(ins);
    if (!rc && sqlite3_exec(c, "DROP TABLE trials; COMMIT; PRAGMA journal_mode = DELETE; VACUUM;", NULL, NULL, NULL) != SQLITE_OK)
        rc = hw_fail(err, HW_E_IO, "--curves %s: %s", path, sqlite3_errmsg(c));
    sqlite3_close(c);
    if (rc) unlink(path);
    return rc ? -1 : 0;
}

lb_curve *lb_table_cell(const lb_table *t, size_t env, size_t v, int seed) {
    return t->c[(env * t->nv + v) * (size_t)t->s->seeds + (size_t)seed];
}

static int variant_index(const lb_suite *s, const char *variant, size_t *v) {
    size_t len = strlen(variant);
    bool off = len > 4 && !strcmp(variant + len - 4, "~off");
    for (size_t a = 0; a < s->nagents; a++)
        if (strlen(s->agents[a].name) == (off ? len - 4 : len) && !strncmp(s->agents[a].name, variant, off ? len - 4 : len)) {
            *v = 2 * a + off;
            return 0;
        }
    return -1;
}

static double mean_finite(const double *x, size_t n) {
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) s += x[i], k++;
    return k ? s / (double)k : NAN;
}

/* lo (random control means), hi (optimum or best logged) and the worst raw score of every env */
static void normalisers(lb_table *t) {
    const lb_suite *s = t->s;
    double *tmp = malloc((size_t)s->seeds * sizeof *tmp);
    for (size_t e = 0; tmp && e < s->nenvs; e++) {
        const lb_env *env = &s->envs[e];
        size_t rv = 2 * (size_t)(lb_suite_agent(s, env->random) - s->agents);
        for (int k = -1; k < 2 * LB_GRID; k++) {
            for (int sd = 0; sd < s->seeds; sd++) {
                lb_curve *c = lb_table_cell(t, e, rv, sd);
                tmp[sd] = !c ? NAN : k < 0 ? c->small : k < LB_GRID ? c->ev[k] : c->cpu[k - LB_GRID];
            }
            double m = mean_finite(tmp, (size_t)s->seeds);
            if (k < 0) t->lo_small[e] = m;
            else if (k < LB_GRID) t->lo_ev[e * LB_GRID + (size_t)k] = m;
            else t->lo_cpu[e * LB_GRID + (size_t)(k - LB_GRID)] = m;
        }
        double hi = NAN, worst = NAN;
        for (size_t v = 0; v < t->nv; v++)
            for (int sd = 0; sd < s->seeds; sd++) {
                lb_curve *c = lb_table_cell(t, e, v, sd);
                if (!c) continue;
                double vals[] = {c->small, c->ev[0], c->cpu[0], c->ev[LB_GRID - 1], c->cpu[LB_GRID - 1]};
                for (size_t i = 0; i < 5; i++) {
                    if (isnan(vals[i])) continue;
                    if (isnan(hi) || vals[i] > hi) hi = vals[i];
                    if (isnan(worst) || vals[i] < worst) worst = vals[i];
                }
            }
        t->hi_is_optimum[e] = env->has_optimum;
        if (env->has_known && (isnan(hi) || env->known > hi)) hi = env->known;
        t->hi[e] = env->has_optimum ? env->optimum : hi;
        t->worst[e] = worst;
    }
    free(tmp);
}

double lb_table_norm(const lb_table *t, size_t env, double raw, double lo) {
    if (isnan(raw)) raw = t->worst[env];
    if (isnan(lo)) lo = t->worst[env];
    if (isnan(raw) || isnan(lo) || isnan(t->hi[env])) return 0;
    return lbs_normalise(raw, lo, t->hi[env]);
}

int lb_table_load(lb_table *t, const lb_suite *s, sqlite3 *db, hw_err *err) {
    memset(t, 0, sizeof *t);
    t->s = s;
    t->nv = 2 * s->nagents;
    size_t ncell = s->nenvs * t->nv * (size_t)s->seeds;
    t->c = calloc(ncell ? ncell : 1, sizeof *t->c);
    t->lo_small = calloc(s->nenvs, sizeof(double));
    t->lo_ev = calloc(s->nenvs * LB_GRID, sizeof(double));
    t->lo_cpu = calloc(s->nenvs * LB_GRID, sizeof(double));
    t->hi = calloc(s->nenvs, sizeof(double));
    t->worst = calloc(s->nenvs, sizeof(double));
    t->hi_is_optimum = calloc(s->nenvs, sizeof(bool));
    if (!t->c || !t->lo_small || !t->lo_ev || !t->lo_cpu || !t->hi || !t->worst || !t->hi_is_optimum)
        return hw_fail(err, HW_E_INTERNAL, "out of memory");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT env_name, variant, seed, run_id, cpu_s, started_at, status FROM leaderboard_cells", -1, &st,
                           NULL) != SQLITE_OK)
        return hw_fail(err, HW_E_IO, "leaderboard DB: %s (is this a leaderboard DB?)", sqlite3_errmsg(db));
    /* a --curves file holds each run's curve instead of its trials */
    sqlite3_stmt *cst = NULL;
    if (has_table(db, "leaderboard_curves") &&
        sqlite3_prepare_v2(db, "SELECT evals, cpu_s, curve FROM leaderboard_curves WHERE run_id = ?", -1, &cst, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return hw_fail(err, HW_E_IO, "leaderboard DB: %s", sqlite3_errmsg(db));
    }
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const lb_env *e = lb_suite_env(s, (const char *)sqlite3_column_text(st, 0));
        size_t v;
        int seed = sqlite3_column_int(st, 2);
        if (!e || variant_index(s, (const char *)sqlite3_column_text(st, 1), &v) || seed < 0 || seed >= s->seeds) continue;
        if (sqlite3_column_int(st, 6) != 0 || sqlite3_column_type(st, 3) == SQLITE_NULL) {
            t->failed++;
            continue;
        }
        size_t ei = (size_t)(e - s->envs);
        lb_curve *c = calloc(1, sizeof *c);
        if (!c) rc = hw_fail(err, HW_E_INTERNAL, "out of memory");
        else {
            long long run = sqlite3_column_int64(st, 3);
            int got = cst ? stored_curve(cst, run, c, err)
                          : load_curve(db, e, run, sqlite3_column_double(st, 4), sqlite3_column_double(st, 5), c, err) ? -1 : 1;
            if (got == 0) hw_fail(err, HW_E_IO, "leaderboard DB: no stored curve for run %lld", run);
            if (got != 1) {
                rc = -1;
                free(c);
                break;
            }
            size_t idx = (ei * t->nv + v) * (size_t)s->seeds + (size_t)seed;
            free(t->c[idx]);
            t->c[idx] = c;
            t->done++;
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(cst);
    if (!rc) normalisers(t);
    return rc;
}

void lb_table_free(lb_table *t) {
    size_t ncell = t->s ? t->s->nenvs * t->nv * (size_t)t->s->seeds : 0;
    for (size_t i = 0; t->c && i < ncell; i++) free(t->c[i]);
    free(t->c);
    free(t->lo_small);
    free(t->lo_ev);
    free(t->lo_cpu);
    free(t->hi);
    free(t->worst);
    free(t->hi_is_optimum);
    memset(t, 0, sizeof *t);
}
