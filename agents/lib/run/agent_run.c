/* agent_run.c - a run: trial logging (hwgym_trials.h), best tracking, progress on stderr and the
 * JSON summary on stdout (agent_common.h). */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "hwgym_trials.h"

struct ag_run {
    char *agent, *env, *run_name, *endpoint;
    uint64_t seed;
    int64_t budget;
    bool quiet;
    hwt_db *db;
    int64_t run_id;
    bool attached;
    int64_t samples;
    double best;
    json_t *best_action, *best_metrics;
    double t0, last_print;
    int64_t kill_at; /* HWGYM_TEST_KILL_AT (checkpoint.h) */
    pthread_mutex_t mu; /* best/progress state may be shared by threads */
};

ag_run *ag_run_begin(const ag_opts *o, const char *agent, const json_t *agent_config, hw_err *err) {
    if ((o->checkpoint_every > 0 || o->resume) && !ag_ckpt_claimed()) {
        hw_fail(err, HW_E_NOT_SUPPORTED, "%s does not checkpoint yet: --checkpoint-every/--resume are not supported",
                agent ? agent : "this agent");
        return NULL;
    }
    ag_run *r = calloc(1, sizeof *r);
    r->agent = strdup(agent ? agent : "agent");
    r->env = strdup(o->env ? o->env : "");
    r->run_name = o->run_name ? strdup(o->run_name) : NULL;
    r->endpoint = strdup(o->endpoint ? o->endpoint : "");
    r->seed = o->seed;
    r->budget = o->budget;
    r->quiet = o->quiet;
    r->best = -INFINITY;
    r->t0 = ag_now();
    r->last_print = r->t0;
    r->kill_at = ag_test_kill_at();
    pthread_mutex_init(&r->mu, NULL);
    if (o->db) {
        r->db = hwt_open(o->db, NULL, err);
        if (!r->db) goto fail;
        if (o->attach_run_id > 0) {
            r->run_id = o->attach_run_id;
            r->attached = true;
        } else {
            json_t *cfg = agent_config ? json_deep_copy(agent_config) : json_object();
            if (o->run_name && json_is_object(cfg)) json_object_set_new(cfg, "run_name", json_string(o->run_name));
            hwt_run run = {0};
            run.agent = r->agent;
            run.agent_config = cfg;
            run.env = r->env;
            run.env_config = o->config;
            run.has_seed = true;
            run.seed = (int64_t)(o->seed & 0x7fffffffffffffffULL);
            run.endpoint = o->endpoint;
            r->run_id = hwt_begin_run(r->db, &run, err);
            json_decref(cfg);
            if (r->run_id <= 0) goto fail;
        }
    }
    return r;
fail:
    hwt_close(r->db, NULL);
    r->db = NULL;
    free(r->agent);
    free(r->env);
    free(r->run_name);
    free(r->endpoint);
    free(r);
    return NULL;
}

static void progress_locked(ag_run *r, bool force);

static void track(ag_run *r, const json_t *action, double reward, const json_t *metrics) {
    pthread_mutex_lock(&r->mu);
    r->samples++;
    if (isfinite(reward) && reward > r->best) {
        r->best = reward;
        json_decref(r->best_action);
        json_decref(r->best_metrics);
        r->best_action = action ? json_deep_copy(action) : json_null();
        r->best_metrics = metrics ? json_deep_copy(metrics) : json_null();
    }
    progress_locked(r, false);
    if (r->kill_at > 0 && r->samples == r->kill_at) raise(SIGKILL); /* test hook: a preemption */
    pthread_mutex_unlock(&r->mu);
}

static int feasible_of(const json_t *m) {
    json_t *f = json_object_get(m, "feasible");
    return json_is_boolean(f) ? json_is_true(f) : -1;
}

int ag_run_step(ag_run *r, const char *worker, int64_t episode, int64_t step, int64_t reset_seed, const json_t *action,
                const json_t *obs, double reward, int terminated, int truncated, const json_t *info, hw_err *err) {
    int rc = 0;
    if (r->db) {
        hwt_trial t = {0};
        t.run_id = r->run_id;
        t.worker = worker;
        t.episode = episode;
        t.step = step;
        t.kind = HWT_STEP;
        t.has_reset_seed = reset_seed >= 0;
        t.reset_seed = reset_seed;
        t.action = action;
        t.observation = obs;
        t.has_reward = true;
        t.reward = reward;
        t.terminated = terminated;
        t.truncated = truncated;
        t.metrics = info;
        t.feasible = feasible_of(info);
        rc = hwt_add_trial(r->db, &t, err);
    }
    track(r, action, reward, info);
    return rc;
}

int ag_run_eval(ag_run *r, const char *worker, int64_t episode, const json_t *point, double reward,
                const json_t *metrics, hw_err *err) {
    int rc = 0;
    if (r->db) {
        hwt_trial t = {0};
        t.run_id = r->run_id;
        t.worker = worker;
        t.episode = episode;
        t.step = -1;
        t.kind = HWT_EVAL;
        t.action = point;
        t.has_reward = true;
        t.reward = reward;
        t.terminated = t.truncated = -1;
        t.metrics = metrics;
        t.feasible = feasible_of(metrics);
        rc = hwt_add_trial(r->db, &t, err);
    }
    track(r, point, reward, metrics);
    return rc;
}

void ag_run_progress(ag_run *r, bool force) {
    pthread_mutex_lock(&r->mu);
    progress_locked(r, force);
    pthread_mutex_unlock(&r->mu);
}

double ag_progress_interval(void) {
    static double every = -1; /* decided once per process: the streams do not change kind */
    if (every > 0) return every;
    const char *e = getenv("HWGYM_PROGRESS_S");
    double x = e ? strtod(e, NULL) : 0;
    every = x > 0 ? x : isatty(STDERR_FILENO) ? 0.5 : 10.0;
    return every;
}

static void progress_locked(ag_run *r, bool force) {
    if (r->quiet) return;
    double now = ag_now();
    if (!force && now - r->last_print < ag_progress_interval()) return;
    r->last_print = now;
    double el = now - r->t0;
    double rate = el > 0 ? (double)r->samples / el : 0;
    double left = (double)(r->budget - r->samples);
    double eta = rate > 0 && left > 0 ? left / rate : 0;
    char best[32];
    if (isfinite(r->best)) snprintf(best, sizeof best, "%.6g", r->best);
    else snprintf(best, sizeof best, "-");
    fprintf(stderr, "[%s] samples %lld/%lld (%.1f%%)  best %s  rate %.1f/s  eta %.1fs\n", r->agent,
            (long long)r->samples, (long long)r->budget, r->budget > 0 ? 100.0 * (double)r->samples / (double)r->budget : 0.0,
            best, rate, eta);
}

bool ag_run_done(const ag_run *r) { return r->samples >= r->budget; }
int64_t ag_run_samples(const ag_run *r) { return r->samples; }
double ag_run_best(const ag_run *r) { return r->best; }
int64_t ag_run_id(const ag_run *r) { return r->run_id; }

int ag_run_end(ag_run *r, const json_t *extra, hw_err *err) {
    if (!r) return 0;
    int rc = 0;
    ag_run_progress(r, true);
    double wall = ag_now() - r->t0;
    json_t *j = json_object();
    json_object_set_new(j, "agent", json_string(r->agent));
    json_object_set_new(j, "env", json_string(r->env));
    json_object_set_new(j, "run_id", r->db ? json_integer(r->run_id) : json_null());
    json_object_set_new(j, "run_name", r->run_name ? json_string(r->run_name) : json_null());
    json_object_set_new(j, "seed", json_integer((json_int_t)(r->seed & 0x7fffffffffffffffULL)));
    json_object_set_new(j, "budget", json_integer(r->budget));
    json_object_set_new(j, "samples", json_integer(r->samples));
    json_object_set_new(j, "best_reward", isfinite(r->best) ? json_real(r->best) : json_null());
    json_object_set_new(j, "best_action", r->best_action ? json_incref(r->best_action) : json_null());
    json_object_set_new(j, "best_metrics", r->best_metrics ? json_incref(r->best_metrics) : json_null());
    json_object_set_new(j, "wall_s", json_real(wall));
    json_object_set_new(j, "samples_per_s", json_real(wall > 0 ? (double)r->samples / wall : 0));
    if (json_is_object(extra)) json_object_update(j, (json_t *)extra);
    char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(s);
    }
    json_decref(j);
    if (r->db) {
        if (!r->attached && hwt_end_run(r->db, r->run_id, err)) rc = -1;
        if (hwt_close(r->db, rc ? NULL : err)) rc = -1;
    }
    json_decref(r->best_action);
    json_decref(r->best_metrics);
    pthread_mutex_destroy(&r->mu);
    free(r->agent);
    free(r->env);
    free(r->run_name);
    free(r->endpoint);
    free(r);
    return rc;
}

int ag_run_finish(ag_run **r, json_t *extra, bool failed, hw_err *err, const char *prog) {
    if (failed && json_is_object(extra)) json_object_set_new(extra, "error", json_string(err->msg));
    hw_err e2 = {0};
    int erc = ag_run_end(*r, extra, &e2);
    *r = NULL;
    if (!failed && erc) {
        *err = e2;
        failed = true;
    }
    if (failed) fprintf(stderr, "%s: %s: %s\n", prog, hw_code_name(err->code), err->msg);
    return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- checkpoints (checkpoint.h) */
int ag_trials_truncate(struct sqlite3 *db, int64_t run_id, const char *worker, int64_t keep, hw_err *err) {
    sqlite3_stmt *st = NULL;
    int64_t have = -1;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM trials WHERE run_id=?1 AND (?2 = '*' OR worker=?2)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, worker, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) have = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (have < 0) return hw_fail(err, HW_E_IO, "resume: cannot count the trials of run %lld: %s", (long long)run_id, sqlite3_errmsg(db));
    if (have < keep)
        return hw_fail(err, HW_E_BAD_STATE,
                       "resume: the trial DB holds %lld trials of run %lld worker '%s', the checkpoint counts %lld "
                       "(a checkpoint from another DB?)",
                       (long long)have, (long long)run_id, worker, (long long)keep);
    if (have == keep) return 0;
    int rc = 0;
    const char *q = "DELETE FROM trials WHERE run_id=?1 AND (?2 = '*' OR worker=?2) AND id NOT IN "
                    "(SELECT id FROM trials WHERE run_id=?1 AND (?2 = '*' OR worker=?2) ORDER BY id LIMIT ?3)";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) rc = -1;
    else {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, worker, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, keep);
        if (sqlite3_step(st) != SQLITE_DONE) rc = -1;
    }
    sqlite3_finalize(st);
    if (rc) return hw_fail(err, HW_E_IO, "resume: cannot drop the trials after the checkpoint: %s", sqlite3_errmsg(db));
    return 0;
}

static void run_discard(ag_run *r) {
    hwt_close(r->db, NULL);
    json_decref(r->best_action);
    json_decref(r->best_metrics);
    pthread_mutex_destroy(&r->mu);
    free(r->agent);
    free(r->env);
    free(r->run_name);
    free(r->endpoint);
    free(r);
}

ag_run *ag_run_resume(const ag_opts *o, const char *agent, const json_t *agent_config, const ag_ckpt *ck,
                      const char *worker, hw_err *err) {
    if (!ck) return ag_run_begin(o, agent, agent_config, err);
    int64_t id = 0, samples = 0;
    double best = -INFINITY;
    if (ag_ckpt_get_int(ck, "run.id", &id, err) || ag_ckpt_get_int(ck, "run.samples", &samples, err) ||
        ag_ckpt_get_real(ck, "run.best", &best, err))
        return NULL;
    ag_opts o2 = *o;
    o2.attach_run_id = id > 0 ? id : 0;
    ag_run *r = ag_run_begin(&o2, agent, agent_config, err);
    if (!r) return NULL;
    r->attached = false; /* the resumed run is ours: ag_run_end ends it */
    if (r->db && id > 0 && ag_trials_truncate(hwt_sqlite(r->db), id, worker ? worker : "0", samples, err)) {
        run_discard(r);
        return NULL;
    }
    r->samples = samples;
    r->best = best;
    r->kill_at = 0; /* the test hook preempts first attempts only (a requeued job then finishes) */
    hw_err e2 = {0};
    r->best_action = ag_ckpt_get_json(ck, "run.best_action", &e2);
    r->best_metrics = ag_ckpt_get_json(ck, "run.best_metrics", &e2);
    if (!r->best_action || !r->best_metrics) {
        *err = e2;
        run_discard(r);
        return NULL;
    }
    /* always said (also with --quiet): a resumed run must be visible in the job's log */
    fprintf(stderr, "[%s] resuming run %lld at sample %lld (best %.6g)\n", r->agent, (long long)id,
                (long long)samples, best);
    return r;
}

int ag_run_drop_worker(ag_run *r, const char *worker, hw_err *err) {
    if (!r->db || r->run_id <= 0) return 0;
    if (hwt_flush(r->db, err)) return -1;
    return ag_trials_truncate(hwt_sqlite(r->db), r->run_id, worker, 0, err);
}

int ag_run_ckpt_put(ag_run *r, ag_ckpt *c, hw_err *err) {
    if (r->db && hwt_flush(r->db, err)) return -1;
    pthread_mutex_lock(&r->mu);
    ag_ckpt_put_int(c, "run.id", r->db ? r->run_id : 0);
    ag_ckpt_put_int(c, "run.samples", r->samples);
    ag_ckpt_put_real(c, "run.best", r->best);
    ag_ckpt_put_json(c, "run.best_action", r->best_action);
    ag_ckpt_put_json(c, "run.best_metrics", r->best_metrics);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* The run's checkpoint: the run's part first (its trials flushed), then the file (checkpoint.c). */
int ag_ckpt_commit(ag_ckpt_ctl *ctl, ag_ckpt *c, ag_run *run, int64_t samples, hw_err *err) {
    if (run && ag_run_ckpt_put(run, c, err)) return -1;
    if (ag_ckpt_save(ctl->path, ctl->owner, samples, ctl->config, c, err)) return -1;
    ctl->last = samples;
    return 0;
}
