/* rlsched.c - see rlsched.h. */
#include "rlsched.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "ppo_loop.h"

rls_cfg rls_cfg_default(void) {
    rls_cfg c;
    memset(&c, 0, sizeof c);
    c.ppo = ppo_cfg_default();
    c.ppo.lr = 3e-4;          /* actor */
    c.ppo.lr_critic = 1e-3;   /* critic */
    c.ppo.gamma = 0.99;
    c.ppo.clip_coef = 0.2;
    c.ppo.vf_coef = 0.5;      /* c1 */
    c.ppo.vloss = PPO_VLOSS_SMOOTH_L1;
    c.ppo.critic_l2 = 0.01;   /* lambda_L2 */
    c.ppo.anneal_lr = false;  /* the paper decays the entropy coefficient, not the learning rate */
    c.ppo.num_steps = 64;
    c.ppo.minibatch_size = 16;
    c.ppo.update_epochs = 4;
    c.ppo.hidden = 64;
    c.ent_start = 0.1;
    c.ent_final = 0.02;
    c.ent_decay = 0.995;
    c.episodes = 3000;
    c.norm_obs = false;
    c.reward = RLS_REWARD_ENV;
    c.learn = true;
    c.eval_every = 0;
    return c;
}

const char *rls_objective(const json_t *env_config) {
    const json_t *o = env_config ? json_object_get(env_config, "objective") : NULL;
    return json_is_string(o) ? json_string_value(o) : "energy";
}

static double info_num(const json_t *info, const char *k) {
    const json_t *v = info ? json_object_get(info, k) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

double rls_metric(double energy_pj, double cycles, const char *objective) {
    return !strcmp(objective, "cycles") ? cycles : !strcmp(objective, "edp") ? energy_pj * cycles : energy_pj;
}

static void grow_best(rls_result *r, int n) {
    if (n <= r->nlayers) return;
    r->best = realloc(r->best, sizeof(rls_layer_best) * (size_t)n);
    memset(r->best + r->nlayers, 0, sizeof(rls_layer_best) * (size_t)(n - r->nlayers));
    r->nlayers = n;
}

static void keep_best(rls_result *r, json_int_t li, double energy, double cycles, const char *objective,
                      const json_t *table, const char *name) {
    if (li < 0 || li >= 100000) return;
    grow_best(r, (int)li + 1);
    double m = rls_metric(energy, cycles, objective);
    if (!isfinite(m)) return;
    rls_layer_best *b = &r->best[li];
    if (b->seen && !r->keep_last && !(m < b->metric)) return;
    b->seen = true;
    b->metric = m;
    b->energy_pj = energy;
    b->cycles = cycles;
    if (name) snprintf(b->name, sizeof b->name, "%s", name);
    json_decref(b->table);
    b->table = json_deep_copy(table);
}

/* Keeps the step's schedule when it is the best seen for its layer. In network mode the step
 * that finishes a layer reports that layer's final table under "finished_layer*" and the next
 * layer's starting table under "layer". */
static void note_best(rls_result *r, const json_t *info, const char *objective) {
    if (!info) return;
    const json_t *fl = json_object_get(info, "finished_layer");
    if (json_is_integer(fl)) {
        json_int_t li = json_integer_value(fl);
        keep_best(r, li, info_num(info, "finished_layer_energy_pj"), info_num(info, "finished_layer_cycles"),
                  objective, json_object_get(info, "finished_layer_table"), NULL);
    }
    const json_t *lj = json_object_get(info, "layer");
    if (!json_is_integer(lj)) return;
    const json_t *nm = json_object_get(info, "layer_name");
    keep_best(r, json_integer_value(lj), info_num(info, "energy_pj"), info_num(info, "cycles"), objective,
              json_object_get(info, "table"), json_is_string(nm) ? json_string_value(nm) : "");
}

ppo *rls_ppo_new(ag_sess *s, const rls_cfg *cfg, uint64_t seed, hw_err *err) {
    if (s->act_space->type != HW_SPACE_DISCRETE) {
        hw_fail(err, HW_E_NOT_SUPPORTED,
                "hwgym-rlsched: env %s has a %s action space; RL-Scheduling picks rows with one Discrete action "
                "(sched-v0)",
                s->env, hw_space_type_name(s->act_space->type));
        return NULL;
    }
    int64_t n = hw_space_choices(s->act_space, 0);
    return ppo_new(&cfg->ppo, (int)s->obs_dim, PPO_MCAT, 1, &n, seed);
}

typedef struct loop_ctx {
    ag_sess *s;
    ag_run *run;
    ppo *p;
    const char *objective, *worker;
    gsl_rng *rng;
    ag_rms *rms;
    double *obs;
    uint8_t *mask; /* our own copy: the session's mask is freed by the next step */
    int64_t nact, offset;
    int reward;
} loop_ctx;

/* The objective of the table the step left for its layer, and of the next layer's start. */
static void step_metrics(const json_t *info, const char *objective, double *done_layer, double *now) {
    *now = rls_metric(info_num(info, "energy_pj"), info_num(info, "cycles"), objective);
    *done_layer = json_is_integer(json_object_get(info, "finished_layer"))
                      ? rls_metric(info_num(info, "finished_layer_energy_pj"), info_num(info, "finished_layer_cycles"),
                                  objective)
                      : *now;
}

/* The reward PPO learns from (rls_cfg.reward). m0: the layer's first table; prev: before the step. */
static double shaped_reward(int kind, double env_r, double m0, double prev, double after) {
    if (kind == RLS_REWARD_ENV || !(m0 > 0) || !(prev > 0) || !(after > 0)) return env_r;
    double pen = env_r < 0 ? env_r : 0;
    if (kind == RLS_REWARD_LOG) return log(prev / after) + pen;
    return (m0 - after) / m0 + pen;
}

/* The shaped-reward state of one episode: m0, the current layer's first table; prev, the
 * objective before the step. shaper_start at reset, shaper_step after each env step. */
typedef struct {
    double m0, prev;
} shaper;

static void shaper_start(shaper *sh, const json_t *info, const char *objective) {
    step_metrics(info, objective, &sh->m0, &sh->prev);
    sh->m0 = sh->prev;
}

/* The reward PPO learns from for the step that returned env_r and info. */
static double shaper_step(shaper *sh, int kind, const json_t *info, const char *objective, double env_r) {
    double after, next;
    step_metrics(info, objective, &after, &next);
    double rl = shaped_reward(kind, env_r, sh->m0, sh->prev, after);
    if (after != next) sh->m0 = next; /* network mode: a new layer starts */
    sh->prev = next;
    return rl;
}

/* train: the normaliser learns from the observation; a greedy pass uses it frozen */
static void load_obs(loop_ctx *c, bool train) {
    int od = (int)c->s->obs_dim;
    if (c->rms) {
        if (train) ag_rms_update(c->rms, c->s->obs);
        ag_rms_apply(c->rms, c->s->obs, c->obs, 10.0);
    } else {
        memcpy(c->obs, c->s->obs, sizeof(double) * (size_t)od);
    }
}

/* Copies the session's action mask (NULL when it has none of the right length). */
static const uint8_t *take_mask(loop_ctx *c) {
    if (!c->s->mask || c->s->mask_len != c->nact) return NULL;
    memcpy(c->mask, c->s->mask, (size_t)c->nact);
    return c->mask;
}

static void push_total(rls_result *r, double v) {
    if (r->n_ep_totals == r->cap_ep_totals) {
        r->cap_ep_totals = r->cap_ep_totals ? 2 * r->cap_ep_totals : 64;
        r->ep_totals = realloc(r->ep_totals, sizeof(double) * (size_t)r->cap_ep_totals);
    }
    r->ep_totals[r->n_ep_totals++] = v;
}

/* The objective's network total at the end of an episode (network mode: the env's running
 * network totals; layer mode: the layer's own figures). */
static double end_total(const json_t *info, const char *objective) {
    double e = info_num(info, "network_energy_pj"), cy = info_num(info, "network_cycles");
    if (!isfinite(e)) e = info_num(info, "energy_pj");
    if (!isfinite(cy)) cy = info_num(info, "cycles");
    return rls_metric(e, cy, objective);
}

/* The reset seed of training episode ep (53 bits: it survives JSON in the trial log). */
static uint64_t episode_reset_seed(uint64_t seed, int64_t ep) {
    return ag_rng_derive(seed, 1 + (uint64_t)ep) & ((1ULL << 53) - 1);
}

/* The entropy coefficient c2 of episode ep: ent_start * ent_decay^ep, floored at ent_final. */
static void set_ent_coef(ppo *p, const rls_cfg *cfg, int64_t ep, rls_result *res) {
    double c2 = cfg->ent_start * pow(cfg->ent_decay, (double)ep);
    p->cfg.ent_coef = c2 > cfg->ent_final ? c2 : cfg->ent_final;
    res->ent_coef = p->cfg.ent_coef;
}

/* One episode. train: sample and store (update when the rollout is full, unless learning is
 * off); else argmax. A training episode that runs to its end records its total (ep_totals). */
static int episode(loop_ctx *c, rls_result *res, int64_t ep, uint64_t seed, int64_t budget, bool train, bool learn,
                   double *ret, hw_err *err) {
    ag_sess *s = c->s;
    uint64_t rs = episode_reset_seed(seed, ep);
    if (ag_sess_reset(s, &rs, err)) return -1;
    load_obs(c, train);
    *ret = 0;
    shaper sh;
    shaper_start(&sh, s->info, c->objective);
    for (int64_t t = 0; res->steps < budget; t++) {
        const uint8_t *mask = take_mask(c);
        int64_t a, ae;
        double logp = 0, v = 0;
        if (train) ppo_act(c->p, c->obs, mask, c->rng, &a, NULL, &logp, &v);
        else ppo_act_greedy(c->p, c->obs, mask, &a, NULL);
        ae = a + c->offset;
        json_t *aj = json_integer(ae);
        if (ag_sess_step_i64(s, &ae, err)) {
            json_decref(aj);
            return -1;
        }
        res->steps++;
        double r = s->reward, rl = shaper_step(&sh, c->reward, s->info, c->objective, r);
        *ret += rl;
        note_best(res, s->info, c->objective);
        int rc = 0;
        if (c->run) {
            json_t *oj = ag_json_f64(s->obs, s->obs_dim);
            rc = ag_run_step(c->run, train ? c->worker : "greedy", ep, t, (int64_t)rs, aj, oj, r, s->terminated,
                             s->truncated, s->info, err);
            json_decref(oj);
        }
        json_decref(aj);
        if (rc) return -1;
        bool done = s->terminated || s->truncated;
        if (train) {
            int full = ppo_store(c->p, c->obs, mask, &a, NULL, logp, v, isfinite(rl) ? rl : 0.0, done);
            load_obs(c, train);
            if (learn && (full || res->steps >= budget)) {
                ppo_stats st;
                ppo_update(c->p, c->obs, &st);
                res->updates++;
            }
        } else {
            load_obs(c, train);
        }
        if (done) {
            if (train) push_total(res, end_total(s->info, c->objective));
            break;
        }
    }
    return 0;
}

/* The per-layer best schedules: numbers (seen, metric, energy, cycles per layer; NaN-safe) in
 * "<pre>.num", names and tables in "<pre>.tables" ([[name, table], ...]). */
static void best_put(ag_ckpt *k, const char *pre, const rls_result *r) {
    char key[96];
    size_t n = (size_t)r->nlayers;
    double *num = calloc(4 * n + 1, sizeof(double));
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const rls_layer_best *b = &r->best[i];
        num[4 * i] = b->seen;
        num[4 * i + 1] = b->metric;
        num[4 * i + 2] = b->energy_pj;
        num[4 * i + 3] = b->cycles;
        json_array_append_new(a, json_pack("[s,O?]", b->name, b->table));
    }
    snprintf(key, sizeof key, "%s.num", pre);
    ag_ckpt_put_f64(k, key, num, 4 * n);
    snprintf(key, sizeof key, "%s.tables", pre);
    ag_ckpt_put_json(k, key, a);
    json_decref(a);
    free(num);
}

static int best_get(const ag_ckpt *k, const char *pre, rls_result *r, hw_err *err) {
    char key[96];
    snprintf(key, sizeof key, "%s.num", pre);
    int64_t len = ag_ckpt_len(k, key);
    if (len < 0 || len % 4 || len / 4 > 100000)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' is missing or not 4 numbers per layer", key);
    size_t n = (size_t)len / 4;
    double *num = calloc(4 * n + 1, sizeof(double));
    int rc = ag_ckpt_get_f64(k, key, num, 4 * n, err);
    snprintf(key, sizeof key, "%s.tables", pre);
    json_t *a = rc ? NULL : ag_ckpt_get_json(k, key, err);
    if (!rc && (!a || !json_is_array(a) || json_array_size(a) != n))
        rc = a ? hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' does not list %zu layers", key, n) : -1;
    if (!rc) {
        grow_best(r, (int)n);
        for (size_t i = 0; i < n; i++) {
            rls_layer_best *b = &r->best[i];
            json_t *e = json_array_get(a, i), *t = json_array_get(e, 1);
            const char *nm = json_string_value(json_array_get(e, 0));
            b->seen = num[4 * i] != 0;
            b->metric = num[4 * i + 1];
            b->energy_pj = num[4 * i + 2];
            b->cycles = num[4 * i + 3];
            snprintf(b->name, sizeof b->name, "%s", nm ? nm : "");
            b->table = t && !json_is_null(t) ? json_incref(t) : NULL;
        }
    }
    json_decref(a);
    free(num);
    return rc;
}

/* run == NULL: restore the training state from ctl->resume; else write a checkpoint (before an
 * episode's reset: no env state in flight). The state: PPO, the loop's RNG and normaliser,
 * the counters and the best schedules. The entropy coefficient follows from the episode. */
static int train_ckpt(ag_ckpt_ctl *ctl, ag_run *run, loop_ctx *c, rls_result *res, hw_err *err) {
    int64_t cnt[3] = {res->episodes, res->steps, res->updates};
    double sv[2] = {res->last_return, res->ent_coef};
    if (run) {
        ag_ckpt *k = ag_ckpt_new();
        ppo_ckpt_put(k, "ppo", c->p);
        ag_ckpt_put_rng(k, "loop.rng", c->rng);
        if (c->rms) ag_rms_ckpt_put(k, "loop.obs_rms", c->rms);
        ag_ckpt_put_i64(k, "loop.counts", cnt, 3);
        ag_ckpt_put_f64(k, "loop.stats", sv, 2);
        best_put(k, "rlsched.best", res);
        int rc = ag_ckpt_commit(ctl, k, run, res->steps, err);
        ag_ckpt_free(k);
        return rc;
    }
    const ag_ckpt *k = ctl->resume;
    if (ppo_ckpt_get(k, "ppo", c->p, err) || ag_ckpt_get_rng(k, "loop.rng", c->rng, err) ||
        (c->rms && ag_rms_ckpt_get(k, "loop.obs_rms", c->rms, err)) || ag_ckpt_get_i64(k, "loop.counts", cnt, 3, err) ||
        ag_ckpt_get_f64(k, "loop.stats", sv, 2, err))
        return -1;
    rls_result_free(res);
    if (best_get(k, "rlsched.best", res, err)) return -1;
    res->episodes = cnt[0];
    res->steps = cnt[1];
    res->updates = cnt[2];
    res->last_return = sv[0];
    res->ent_coef = sv[1];
    return 0;
}

/* A greedy pass of the current policy for the learning curve: not logged, not counted. */
static int curve_point(loop_ctx *c, rls_result *res, uint64_t seed, hw_err *err) {
    rls_result g = {.keep_last = true};
    ag_run *run = c->run;
    c->run = NULL;
    double ret;
    int rc = episode(c, &g, 0, seed, INT64_MAX, false, false, &ret, err);
    c->run = run;
    if (!rc) {
        if (res->n_curve == res->cap_curve) {
            res->cap_curve = res->cap_curve ? 2 * res->cap_curve : 16;
            res->curve = realloc(res->curve, sizeof(rls_curve_pt) * (size_t)res->cap_curve);
        }
        res->curve[res->n_curve++] = (rls_curve_pt){res->episodes, rls_result_total(&g, c->objective)};
    }
    rls_result_free(&g);
    return rc;
}

/* ---------------------------------------------------------------- episode workers (cfg.workers > 1) */

/* One step of a worker's episode: what the learner stores, logs and scores. */
typedef struct wstep {
    int64_t a;               /* action index (without the space's offset) */
    double logp, v, rl, r;   /* log-prob and value of the snapshot, shaped and env reward */
    bool term, trunc, masked;
    json_t *info;            /* new reference */
} wstep;

/* A worker's state for one round: its session, its snapshot of the policy (own parameters copy
 * and scratch), and the episode it played: obs holds n + 1 observations (before each step, then
 * the last), masks n x nact. */
typedef struct rls_worker {
    int idx;
    ag_sess *s;
    ppo *snap;
    const char *objective;
    int reward;
    int64_t nact, offset, od;
    uint64_t seed, rs;
    int64_t ep, cap, n, room; /* episode index, step cap (0: idle this round), steps, capacity */
    double *obs, ret;
    uint8_t *masks;
    wstep *st;
    int rc;
    hw_err err;
    pthread_t th;
    bool threaded;
} rls_worker;

static void worker_clear(rls_worker *w) {
    for (int64_t t = 0; t < w->n; t++) json_decref(w->st[t].info);
    w->n = 0;
    w->ret = 0;
}

static void worker_room(rls_worker *w, int64_t n) {
    if (n <= w->room) return;
    int64_t r = w->room ? 2 * w->room : 64;
    while (r < n) r *= 2;
    w->obs = realloc(w->obs, sizeof(double) * (size_t)(r + 1) * (size_t)w->od);
    w->masks = realloc(w->masks, (size_t)r * (size_t)w->nact);
    w->st = realloc(w->st, sizeof(wstep) * (size_t)r);
    w->room = r;
}

/* Plays episode w->ep for at most w->cap steps with the snapshot (thread body). */
static void *worker_play(void *arg) {
    rls_worker *w = arg;
    ag_sess *s = w->s;
    size_t od = (size_t)w->od;
    worker_clear(w);
    w->rc = 0;
    gsl_rng *rng = ag_rng_new(ag_rng_derive(ag_rng_derive(w->seed, 0x5eed0000ULL + (uint64_t)w->idx), (uint64_t)w->ep));
    w->rs = episode_reset_seed(w->seed, w->ep);
    uint64_t rs = w->rs;
    if (ag_sess_reset(s, &rs, &w->err)) {
        w->rc = -1;
        goto out;
    }
    worker_room(w, 1);
    memcpy(w->obs, s->obs, sizeof(double) * od);
    shaper sh;
    shaper_start(&sh, s->info, w->objective);
    for (int64_t t = 0; t < w->cap; t++) {
        worker_room(w, t + 1);
        const uint8_t *mask = NULL;
        if (s->mask && s->mask_len == w->nact) {
            memcpy(w->masks + (size_t)t * (size_t)w->nact, s->mask, (size_t)w->nact);
            mask = w->masks + (size_t)t * (size_t)w->nact;
        }
        wstep *x = &w->st[t];
        ppo_act(w->snap, w->obs + (size_t)t * od, mask, rng, &x->a, NULL, &x->logp, &x->v);
        int64_t ae = x->a + w->offset;
        if (ag_sess_step_i64(s, &ae, &w->err)) {
            w->rc = -1;
            break;
        }
        x->r = s->reward;
        x->rl = shaper_step(&sh, w->reward, s->info, w->objective, x->r);
        w->ret += x->rl;
        x->term = s->terminated;
        x->trunc = s->truncated;
        x->masked = mask != NULL;
        x->info = json_incref(s->info);
        memcpy(w->obs + (size_t)(t + 1) * od, s->obs, sizeof(double) * od);
        w->n = t + 1;
        if (x->term || x->trunc) break;
    }
out:
    gsl_rng_free(rng);
    return NULL;
}

/* The learner's side of one worker's episode, as episode() does it step by step at N = 1: the
 * trial log, the best tables, the PPO rollout (an update whenever it is full and at the end of
 * the budget) and the episode's end total. */
static int learn_from(loop_ctx *c, const rls_worker *w, rls_result *res, int64_t budget, bool learn, hw_err *err) {
    size_t od = (size_t)w->od;
    for (int64_t t = 0; t < w->n; t++) {
        const wstep *x = &w->st[t];
        const double *o = w->obs + (size_t)t * od, *o1 = o + od;
        res->steps++;
        note_best(res, x->info, c->objective);
        if (c->run) {
            json_t *aj = json_integer(x->a + c->offset), *oj = ag_json_f64(o1, w->od);
            int rc = ag_run_step(c->run, c->worker, w->ep, t, (int64_t)w->rs, aj, oj, x->r, x->term, x->trunc,
                                 x->info, err);
            json_decref(oj);
            json_decref(aj);
            if (rc) return -1;
        }
        bool done = x->term || x->trunc;
        int full = ppo_store(c->p, o, x->masked ? w->masks + (size_t)t * (size_t)w->nact : NULL, &x->a, NULL, x->logp,
                             x->v, isfinite(x->rl) ? x->rl : 0.0, done);
        if (learn && (full || res->steps >= budget)) {
            ppo_stats st;
            ppo_update(c->p, o1, &st);
            res->updates++;
        }
        if (done) push_total(res, end_total(x->info, c->objective));
    }
    res->last_return = w->ret;
    return 0;
}

static void workers_free(rls_worker *w, int n) {
    for (int i = 0; w && i < n; i++) {
        worker_clear(&w[i]);
        ppo_free(w[i].snap);
        free(w[i].obs);
        free(w[i].masks);
        free(w[i].st);
    }
    free(w);
}

static rls_worker *workers_new(loop_ctx *c, const rls_cfg *cfg, uint64_t seed, hw_err *err) {
    int n = cfg->workers;
    rls_worker *w = calloc((size_t)n, sizeof *w);
    for (int i = 0; i < n; i++) {
        ag_sess *s = cfg->sess ? cfg->sess[i] : NULL;
        if (!s || s->obs_dim != c->s->obs_dim || s->act_space->type != HW_SPACE_DISCRETE ||
            hw_space_choices(s->act_space, 0) != c->nact || s->act_space->start != c->offset) {
            hw_fail(err, HW_E_BAD_CONFIG, "--workers: worker %d's session is missing or not the same env as worker 0's", i);
            workers_free(w, n);
            return NULL;
        }
        w[i] = (rls_worker){.idx = i, .s = s, .objective = c->objective, .reward = c->reward, .nact = c->nact,
                            .offset = c->offset, .od = s->obs_dim, .seed = seed};
        w[i].snap = rls_ppo_new(s, cfg, seed, err);
        if (!w[i].snap) {
            workers_free(w, n);
            return NULL;
        }
    }
    return w;
}

/* One round: workers 0..k-1 play episodes ep0 .. ep0+k-1 concurrently (worker 0 on this thread)
 * with the policy as it is now; the learner then takes them in worker order. The budget left is
 * split evenly (worker w gets left/k, the first left%k one more), so no round overruns it. */
static int play_round(loop_ctx *c, rls_worker *w, int k, const rls_cfg *cfg, int64_t budget, rls_result *res,
                      hw_err *err) {
    int64_t left = budget - res->steps;
    const ppo *p = c->p;
    for (int i = 0; i < k; i++) {
        w[i].ep = res->episodes + i;
        w[i].cap = left / k + (i < left % k);
        memcpy(w[i].snap->actor->params, p->actor->params, sizeof(double) * p->actor->nparams);
        memcpy(w[i].snap->critic->params, p->critic->params, sizeof(double) * p->critic->nparams);
    }
    int active = 0;
    while (active < k && w[active].cap > 0) active++;
    for (int i = 1; i < active; i++) w[i].threaded = !pthread_create(&w[i].th, NULL, worker_play, &w[i]);
    worker_play(&w[0]);
    for (int i = 1; i < active; i++) {
        if (w[i].threaded) pthread_join(w[i].th, NULL);
        else worker_play(&w[i]); /* no thread to be had: played here, the same episode */
    }
    for (int i = 0; i < active; i++)
        if (w[i].rc) {
            *err = w[i].err;
            return -1;
        }
    for (int i = 0; i < active; i++) {
        set_ent_coef(c->p, cfg, w[i].ep, res);
        if (learn_from(c, &w[i], res, budget, cfg->learn, err)) return -1;
        res->episodes++;
    }
    return 0;
}

/* Training with cfg->workers > 1, in rounds of one episode per worker. Curve points (eval_every)
 * fall at the first round boundary at or after each multiple of eval_every. */
static int train_rounds(loop_ctx *c, const rls_cfg *cfg, uint64_t seed, int64_t budget, rls_result *res,
                        hw_err *err) {
    if (cfg->norm_obs || c->rms)
        return hw_fail(err, HW_E_BAD_CONFIG, "--workers > 1 does not support --norm-obs (one running normaliser)");
    rls_worker *w = workers_new(c, cfg, seed, err);
    if (!w) return -1;
    int rc = 0;
    int64_t next_curve = 0;
    while (!rc && res->episodes < cfg->episodes && res->steps < budget) {
        if (cfg->eval_every > 0 && res->episodes >= next_curve) {
            if ((rc = curve_point(c, res, seed, err))) break;
            next_curve = (res->episodes / cfg->eval_every + 1) * cfg->eval_every;
        }
        int64_t k = cfg->episodes - res->episodes;
        rc = play_round(c, w, k < cfg->workers ? (int)k : cfg->workers, cfg, budget, res, err);
    }
    if (!rc && cfg->eval_every > 0 && res->episodes >= next_curve) rc = curve_point(c, res, seed, err);
    workers_free(w, cfg->workers);
    return rc;
}

static int run_loop(ag_sess *s, ag_run *run, ppo *p, const rls_cfg *cfg, const char *objective, uint64_t seed,
                    int64_t budget, bool train, rls_result *res, hw_err *err) {
    loop_ctx c = {.s = s, .run = run, .p = p, .objective = objective, .worker = cfg && cfg->worker ? cfg->worker : "0"};
    c.nact = hw_space_choices(s->act_space, 0);
    c.reward = cfg ? cfg->reward : RLS_REWARD_ENV;
    c.offset = s->act_space->start;
    c.rng = ag_rng_new(ag_rng_derive(seed, 7));
    c.rms = cfg && cfg->norm_obs ? ag_rms_new((int)s->obs_dim) : NULL;
    c.obs = calloc((size_t)s->obs_dim + 1, sizeof(double));
    c.mask = calloc((size_t)c.nact + 1, 1);
    int rc = 0;
    int64_t episodes = train ? cfg->episodes : 1, ep0 = 0;
    ag_ckpt_ctl *ck = train && cfg->ckpt && ag_ckpt_on(cfg->ckpt) ? cfg->ckpt : NULL;
    if (ck && ck->resume) {
        rc = train_ckpt(ck, NULL, &c, res, err);
        ep0 = res->episodes;
    }
    if (!rc && train && cfg->workers > 1) {
        if (ck) rc = hw_fail(err, HW_E_BAD_CONFIG, "--workers > 1 does not checkpoint (--checkpoint-every, --resume)");
        else rc = train_rounds(&c, cfg, seed, budget, res, err);
        episodes = 0; /* done: skip the sequential loop */
    }
    for (int64_t ep = ep0; ep < episodes && res->steps < budget && !rc; ep++) {
        if (ck && ag_ckpt_due(ck, res->steps) && (rc = train_ckpt(ck, run, &c, res, err))) break;
        if (train) set_ent_coef(p, cfg, ep, res);
        if (train && cfg->eval_every > 0 && ep % cfg->eval_every == 0 && (rc = curve_point(&c, res, seed, err))) break;
        rc = episode(&c, res, train ? ep : 0, seed, budget, train, !cfg || cfg->learn, &res->last_return, err);
        if (!rc) res->episodes++;
    }
    if (!rc && train && cfg->eval_every > 0 && res->episodes % cfg->eval_every == 0 &&
        (res->n_curve == 0 || res->curve[res->n_curve - 1].episode != res->episodes))
        rc = curve_point(&c, res, seed, err);
    gsl_rng_free(c.rng);
    ag_rms_free(c.rms);
    free(c.obs);
    free(c.mask);
    return rc;
}

int rls_train(ag_sess *s, ag_run *run, ppo *p, const rls_cfg *cfg, const char *objective, uint64_t seed,
              int64_t budget, rls_result *res, hw_err *err) {
    return run_loop(s, run, p, cfg, objective, seed, budget, true, res, err);
}

int rls_eval(ag_sess *s, ag_run *run, ppo *p, const char *objective, uint64_t seed, int64_t budget, rls_result *res,
             hw_err *err) {
    rls_result_free(res);
    res->keep_last = true;
    return run_loop(s, run, p, NULL, objective, seed, budget, false, res, err);
}

void rls_result_free(rls_result *r) {
    for (int i = 0; i < r->nlayers; i++) json_decref(r->best[i].table);
    free(r->best);
    free(r->ep_totals);
    free(r->curve);
    memset(r, 0, sizeof *r);
}

json_t *rls_result_json(const rls_result *r) {
    json_t *layers = json_array();
    double e = 0, cy = 0;
    int seen = 0;
    for (int i = 0; i < r->nlayers; i++) {
        const rls_layer_best *b = &r->best[i];
        if (!b->seen) {
            json_array_append_new(layers, json_null());
            continue;
        }
        seen++;
        e += b->energy_pj;
        cy += b->cycles;
        json_array_append_new(layers, json_pack("{s:i,s:s,s:f,s:f,s:O*}", "layer", i, "name", b->name, "energy_pj",
                                                b->energy_pj, "cycles", b->cycles, "table", b->table));
    }
    return json_pack("{s:o,s:f,s:f,s:i,s:i}", "layers", layers, "total_energy_pj", e, "total_cycles", cy,
                     "layers_seen", seen, "layers_total", r->nlayers);
}

double rls_result_total(const rls_result *r, const char *objective) {
    double e = 0, cy = 0;
    int seen = 0;
    for (int i = 0; i < r->nlayers; i++)
        if (r->best[i].seen) {
            seen++;
            e += r->best[i].energy_pj;
            cy += r->best[i].cycles;
        }
    return seen ? rls_metric(e, cy, objective) : NAN;
}
