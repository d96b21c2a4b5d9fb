/* cmd_replay.c - `hwgym replay DB [--run ID] --endpoint EP`: re-executes a logged run.
 * Step trials: per (worker, episode) one single session with the run's env and env_config,
 * reset with the episode's reset_seed, then the logged actions in step order; each step's
 * reward, terminated, truncated, metrics (= step info) and observation are compared with the
 * log. Eval trials: scored again with evaluate_batch; reward and metrics compared. A logged
 * NULL is not compared (the agent did not log that field). */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hwgym_client.h"
#include "hwgym_trials.h"

static const char *usage =
    "usage: hwgym replay DB --endpoint EP [--run ID] [--tol T] [--max-mismatches N] [--timeout MS]\n"
    "Re-executes the actions of a logged run (default: the most recent run in DB) against the\n"
    "hwgym-server at EP and compares every trial with the log. Step trials are replayed per\n"
    "(worker, episode) in a fresh session reset with the logged reset_seed; eval trials are\n"
    "scored again. Prints JSON:\n"
    "  {\"run\": ID, \"env\": ENV, \"trials\": N, \"matching\": M, \"mismatches\": [first N details]}\n"
    "Numbers match when |a - b| <= T * max(1, |a|, |b|) (default T = 0: bit-identical).\n"
    "Exit status 0 when every trial matches, 1 otherwise (or on an error), 2 on bad usage.\n";

typedef struct trial {
    int64_t id, episode, step, reset_seed;
    bool has_seed, eval;
    char *worker;
    json_t *action, *observation, *metrics;
    bool has_reward, has_term, has_trunc;
    double reward;
    int term, trunc;
} trial;

typedef struct ctx {
    hwc_client *c;
    const char *env;
    json_t *cfg;
    double tol;
    int64_t matching;
    json_t *mism;
    int max_mism;
    int64_t nmism;
} ctx;

static bool num_eq(double a, double b, double tol) {
    if (a == b) return true;
    if (isnan(a) && isnan(b)) return true;
    double s = fmax(1.0, fmax(fabs(a), fabs(b)));
    return fabs(a - b) <= tol * s;
}

/* Numeric-tolerant JSON equality (integers and reals compare by value). Writes the first
 * differing path into where. */
static bool json_same(const json_t *a, const json_t *b, double tol, char *where, size_t cap, const char *path) {
    if (json_is_number(a) && json_is_number(b)) {
        if (num_eq(json_number_value(a), json_number_value(b), tol)) return true;
        snprintf(where, cap, "%s", path);
        return false;
    }
    if (json_typeof(a) != json_typeof(b) && !(json_is_boolean(a) && json_is_boolean(b))) {
        snprintf(where, cap, "%s", path);
        return false;
    }
    char sub[256];
    if (json_is_object(a)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            json_t *w = json_object_get(b, k);
            if (!w || !json_same(v, w, tol, where, cap, sub)) {
                if (!w) snprintf(where, cap, "%s (missing in replay)", sub);
                return false;
            }
        }
        json_object_foreach((json_t *)b, k, v) if (!json_object_get(a, k)) {
            snprintf(where, cap, "%s.%s (not in log)", path, k);
            return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) {
            snprintf(where, cap, "%s (length %zu vs %zu)", path, json_array_size(a), json_array_size(b));
            return false;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (!json_same(json_array_get(a, i), json_array_get(b, i), tol, where, cap, sub)) return false;
        }
        return true;
    }
    if (json_equal((json_t *)a, (json_t *)b)) return true;
    snprintf(where, cap, "%s", path);
    return false;
}

/* Flattens a logged observation (list, nested lists, or Dict object in sorted key order). */
static void flatten(const json_t *j, json_t *out) {
    if (json_is_number(j)) {
        json_array_append_new(out, json_real(json_number_value(j)));
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) flatten(json_array_get(j, i), out);
    } else if (json_is_object(j)) {
        size_t n = json_object_size(j), k = 0;
        const char **keys = malloc(sizeof *keys * (n ? n : 1));
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v) keys[k++] = key;
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
                const char *t = keys[b];
                keys[b] = keys[b - 1];
                keys[b - 1] = t;
            }
        for (size_t a = 0; a < n; a++) flatten(json_object_get(j, keys[a]), out);
        free(keys);
    } else if (json_is_boolean(j)) {
        json_array_append_new(out, json_real(json_is_true(j)));
    }
}

static void mismatch(ctx *x, const trial *t, const char *field, json_t *logged, json_t *replayed, const char *detail) {
    x->nmism++;
    if ((int)json_array_size(x->mism) < x->max_mism) {
        json_t *m = json_pack("{sIsssIsIssss}", "trial", (json_int_t)t->id, "worker", t->worker, "episode",
                              (json_int_t)t->episode, "step", (json_int_t)t->step, "kind", t->eval ? "eval" : "step",
                              "field", field);
        json_object_set_new(m, "logged", logged ? logged : json_null());
        json_object_set_new(m, "replayed", replayed ? replayed : json_null());
        if (detail && *detail) json_object_set_new(m, "detail", json_string(detail));
        json_array_append_new(x->mism, m);
    } else {
        json_decref(logged);
        json_decref(replayed);
    }
}

static json_t *num_json(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Compares one replayed result with the log; counts a match or records the first difference. */
static void compare(ctx *x, const trial *t, double reward, int term, int trunc, const json_t *metrics, const json_t *obs) {
    char where[512] = "";
    if (t->has_reward && !num_eq(t->reward, reward, x->tol)) {
        mismatch(x, t, "reward", num_json(t->reward), num_json(reward), NULL);
        return;
    }
    if (t->has_term && term >= 0 && t->term != term) {
        mismatch(x, t, "terminated", json_boolean(t->term), json_boolean(term), NULL);
        return;
    }
    if (t->has_trunc && trunc >= 0 && t->trunc != trunc) {
        mismatch(x, t, "truncated", json_boolean(t->trunc), json_boolean(trunc), NULL);
        return;
    }
    if (t->metrics) {
        json_t *m = metrics ? json_incref((json_t *)metrics) : json_object(), *logged = json_incref(t->metrics);
        if (json_is_boolean(json_object_get(logged, "cache_hit"))) {
            /* a lean evaluate_batch result (numeric metrics + cache_hit): compare the logged keys */
            json_t *l2 = json_deep_copy(logged), *m2 = json_object();
            json_object_del(l2, "cache_hit");
            const char *k;
            json_t *v;
            json_object_foreach(l2, k, v) json_object_set(m2, k, json_object_get(m, k) ? json_object_get(m, k) : json_null());
            json_decref(logged);
            json_decref(m);
            logged = l2;
            m = m2;
        }
        bool same = json_same(logged, m, x->tol, where, sizeof where, "metrics");
        if (!same) mismatch(x, t, "metrics", json_incref(logged), json_incref(m), where);
        json_decref(logged);
        json_decref(m);
        if (!same) return;
    }
    if (t->observation && obs) {
        json_t *a = json_array();
        flatten(t->observation, a);
        if (!json_same(a, obs, x->tol, where, sizeof where, "observation")) {
            mismatch(x, t, "observation", a, json_incref((json_t *)obs), where);
            return;
        }
        json_decref(a);
    }
    x->matching++;
}

static void error_mismatch(ctx *x, const trial *t, const hw_err *err) {
    char d[HW_ERR_MSG + 32];
    snprintf(d, sizeof d, "%s: %s", hw_code_name(err->code), err->msg);
    mismatch(x, t, "error", NULL, NULL, d);
}

/* Replays trials[a..b) of one (worker, episode), sorted by step. Returns -1 on a transport error. */
static int replay_episode(ctx *x, trial *tr, size_t a, size_t b) {
    hw_err err;
    hwc_session s;
    if (hwc_make(x->c, x->env, x->cfg, NULL, &s, &err)) {
        for (size_t i = a; i < b; i++) error_mismatch(x, &tr[i], &err);
        return err.code == HW_E_IO ? -1 : 0;
    }
    hwc_result r;
    int rc = 0;
    if (hwc_reset(x->c, &s, tr[a].has_seed ? &tr[a].reset_seed : NULL, NULL, &r, &err)) {
        for (size_t i = a; i < b; i++) error_mismatch(x, &tr[i], &err);
        rc = err.code == HW_E_IO ? -1 : 0;
        goto done;
    }
    hwc_result_free(&r);
    for (size_t i = a; i < b; i++) {
        trial *t = &tr[i];
        if (t->step != (int64_t)(i - a)) { /* a gap: the env state cannot be reproduced past it */
            char d[128];
            snprintf(d, sizeof d, "step %lld expected; the log has no trial for it", (long long)(i - a));
            for (size_t k = i; k < b; k++) mismatch(x, &tr[k], "missing_step", NULL, NULL, d);
            break;
        }
        if (hwc_step_json(x->c, &s, t->action, &r, &err)) {
            error_mismatch(x, t, &err);
            if (err.code == HW_E_IO) {
                rc = -1;
                goto done;
            }
            continue;
        }
        json_t *obs = json_array();
        for (size_t k = 0; k < r.obs_len; k++) json_array_append_new(obs, json_real(r.obs[k]));
        compare(x, t, r.reward[0], r.terminated[0], r.truncated[0], r.info, obs);
        json_decref(obs);
        hwc_result_free(&r);
    }
done:
    hwc_close(x->c, &s, NULL);
    hwc_session_free(&s);
    return rc;
}

static int replay_evals(ctx *x, trial *tr, size_t a, size_t b) {
    const size_t chunk = 512;
    for (size_t s = a; s < b; s += chunk) {
        size_t e = s + chunk < b ? s + chunk : b;
        json_t *pts = json_array();
        for (size_t i = s; i < e; i++) json_array_append(pts, tr[i].action);
        hwc_batch bt;
        hw_err err;
        int rc = hwc_evaluate_batch(x->c, NULL, x->env, x->cfg, pts, &bt, &err);
        json_decref(pts);
        if (rc) {
            for (size_t i = s; i < e; i++) error_mismatch(x, &tr[i], &err);
            if (err.code == HW_E_IO) return -1;
            continue;
        }
        for (size_t i = s; i < e; i++) {
            json_t *pe = json_array_get(bt.errors, i - s);
            if (pe && json_is_object(pe)) {
                hw_err e2;
                const char *code = json_string_value(json_object_get(pe, "code"));
                hw_fail(&e2, hw_code_from_name(code ? code : "INTERNAL"), "%s",
                        json_string_value(json_object_get(pe, "message")) ? json_string_value(json_object_get(pe, "message")) : "");
                error_mismatch(x, &tr[i], &e2);
                continue;
            }
            json_t *m = json_array_get(bt.metrics, i - s);
            compare(x, &tr[i], bt.reward[i - s], -1, -1, json_is_object(m) ? m : NULL, NULL);
        }
        hwc_batch_free(&bt);
    }
    return 0;
}

static json_t *load_json_col(sqlite3_stmt *st, int i) {
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return NULL;
    return json_loads((const char *)sqlite3_column_text(st, i), JSON_DECODE_ANY, NULL);
}

int hwcli_replay(int argc, char **argv) {
    const char *ep = NULL, *runtext = NULL, *toltext = NULL, *maxtext = NULL, *to = NULL, *pos[1];
    hwcli_opt opts[] = {{"--endpoint", &ep, NULL},    {"--run", &runtext, NULL}, {"--tol", &toltext, NULL},
                        {"--max-mismatches", &maxtext, NULL}, {"--timeout", &to, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    if (!ep) return hwcli_fail("replay", 2, "missing --endpoint (the hwgym-server to replay against)");
    hw_err err;
    long long run = 0, maxm = 10, tms = HWCLI_DEFAULT_TIMEOUT_MS;
    if (runtext && hwcli_int_arg(runtext, "--run", 1, INT64_MAX, &run, &err)) return hwcli_fail("replay", 2, "%s", err.msg);
    if (maxtext && hwcli_int_arg(maxtext, "--max-mismatches", 0, 1000000, &maxm, &err)) return hwcli_fail("replay", 2, "%s", err.msg);
    if (to && hwcli_int_arg(to, "--timeout", 1, 86400000, &tms, &err)) return hwcli_fail("replay", 2, "%s", err.msg);
    double tol = 0;
    if (toltext) {
        char *end;
        tol = strtod(toltext, &end);
        if (end == toltext || *end || !(tol >= 0) || !isfinite(tol))
            return hwcli_fail("replay", 2, "--tol: '%s' is not a non-negative number", toltext);
    }
    sqlite3 *db = hwt_open_readonly(pos[0], &err);
    if (!db) return hwcli_fail("replay", 1, "%s", err.msg);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT id, env, env_config FROM runs WHERE (?1 = 0 OR id = ?1) ORDER BY id DESC LIMIT 1", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        sqlite3_close(db);
        if (run) return hwcli_fail("replay", 1, "--run: no run %lld in %s", run, pos[0]);
        return hwcli_fail("replay", 1, "%s has no runs", pos[0]);
    }
    run = sqlite3_column_int64(st, 0);
    char *env = strdup((const char *)sqlite3_column_text(st, 1));
    json_t *cfg = load_json_col(st, 2);
    sqlite3_finalize(st);
    if (json_is_null(cfg)) {
        json_decref(cfg);
        cfg = NULL;
    }

    /* all trials of the run, grouped: evals last, then by worker, episode, step */
    sqlite3_prepare_v2(db,
                       "SELECT id, worker, episode, step, kind, reset_seed, action, observation, reward, terminated, truncated, "
                       "metrics FROM trials WHERE run_id = ? ORDER BY kind = 'eval', worker, episode, step, id",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, run);
    size_t n = 0, cap = 1024;
    trial *tr = malloc(sizeof *tr * cap);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) tr = realloc(tr, sizeof *tr * (cap *= 2));
        trial *t = &tr[n++];
        memset(t, 0, sizeof *t);
        t->id = sqlite3_column_int64(st, 0);
        t->worker = strdup((const char *)sqlite3_column_text(st, 1));
        t->episode = sqlite3_column_int64(st, 2);
        t->step = sqlite3_column_int64(st, 3);
        t->eval = !strcmp((const char *)sqlite3_column_text(st, 4), "eval");
        t->has_seed = sqlite3_column_type(st, 5) != SQLITE_NULL;
        t->reset_seed = sqlite3_column_int64(st, 5);
        t->action = load_json_col(st, 6);
        if (!t->action) t->action = json_null();
        t->observation = load_json_col(st, 7);
        t->has_reward = sqlite3_column_type(st, 8) != SQLITE_NULL;
        t->reward = sqlite3_column_double(st, 8);
        t->has_term = sqlite3_column_type(st, 9) != SQLITE_NULL;
        t->term = sqlite3_column_int(st, 9) != 0;
        t->has_trunc = sqlite3_column_type(st, 10) != SQLITE_NULL;
        t->trunc = sqlite3_column_int(st, 10) != 0;
        t->metrics = load_json_col(st, 11);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);

    ctx x = {.env = env, .cfg = cfg, .tol = tol, .mism = json_array(), .max_mism = (int)maxm};
    x.c = hwc_connect(NULL, ep, (int)tms, &err);
    int fatal = 0;
    if (!x.c || hwc_hello(x.c, NULL, &err)) {
        fatal = hwcli_fail("replay", 1, "--endpoint %s: %s", ep, err.msg);
    } else {
        fprintf(stderr, "hwgym replay: run %lld (%s), %zu trials against %s\n", run, env, n, ep);
        size_t i = 0;
        while (i < n && !fatal) {
            size_t j = i + 1;
            if (tr[i].eval) {
                j = n;
                if (replay_evals(&x, tr, i, j)) fatal = 1;
            } else {
                while (j < n && !tr[j].eval && tr[j].episode == tr[i].episode && !strcmp(tr[j].worker, tr[i].worker)) j++;
                if (replay_episode(&x, tr, i, j)) fatal = 1;
            }
            i = j;
        }
        if (fatal) fprintf(stderr, "hwgym replay: transport error, stopped\n");
    }
    hwc_disconnect(x.c);
    int status = 1;
    if (x.c) {
        json_t *out = json_pack("{sIsssIsIsIso}", "run", (json_int_t)run, "env", env, "trials", (json_int_t)n, "matching",
                                (json_int_t)x.matching, "mismatched", (json_int_t)(n - (size_t)x.matching), "mismatches", x.mism);
        x.mism = NULL;
        if (fatal) json_object_set_new(out, "error", json_string("transport error: replay incomplete"));
        hwcli_print_json(out);
        json_decref(out);
        status = !fatal && (size_t)x.matching == n ? 0 : 1;
    }
    json_decref(x.mism);
    for (size_t i = 0; i < n; i++) {
        free(tr[i].worker);
        json_decref(tr[i].action);
        json_decref(tr[i].observation);
        json_decref(tr[i].metrics);
    }
    free(tr);
    free(env);
    json_decref(cfg);
    return status;
}
