/* core.c - hs_run, budget accounting, hyperparameters and the random walker (see search.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

/* The algorithms, in hs_algo order: name, entry point, default points per objective call. */
static const struct {
    const char *name;
    int (*run)(hs_ctx *c);
    int batch;
} algos[HS_NALGO] = {{"random", hs_run_random, 64}, {"ga", hs_run_ga, 64}, {"gamma", hs_run_gamma, 64},
                     {"bo", hs_run_bo, 8},          {"es", hs_run_es, 64},  {"aco", hs_run_aco, 16},
                     {"sa", hs_run_sa, 1}};

const char *hs_algo_name(hs_algo a) { return a >= 0 && a < HS_NALGO ? algos[a].name : "?"; }

int hs_algo_from_name(const char *s) {
    for (int i = 0; i < HS_NALGO; i++)
        if (s && !strcmp(s, algos[i].name)) return i;
    return -1;
}

int hs_default_batch(hs_algo a) { return a >= 0 && a < HS_NALGO ? algos[a].batch : 64; }

void hs_params_default(hs_params *p) {
    memset(p, 0, sizeof *p);
    p->ga_tournament = 3;
    p->ga_crossover = 0.9;
    p->ga_mutation = -1; /* 1/dim */
    p->ga_elite = 2;
    /* GAMMA's run() defaults: elite 5%, parents 40%, crossover 0.57, swap_order 0.47,
     * mutate_tile 0.53 (3 tries), born_cluster 0.57 */
    p->gm_elite_frac = 0.05;
    p->gm_parent_frac = 0.4;
    p->gm_crossover = 0.57;
    p->gm_mutation = 0.53;
    p->gm_reorder = 0.47;
    p->gm_growth = 0.57;
    p->bo_init = 0;
    p->bo_train = 256;
    p->bo_refit = 8;
    p->bo_xi = 0.01;
    p->bo_cand = 128;
    p->bo_starts = 2;
    p->bo_maxeval = 60;
    p->es_sigma = 0.1;
    p->es_lr = 0.05;
    p->es_init_random = 0;
    /* ArchGym's ACO defaults (DeepSwarm): evaporation 0.1, greediness 0.5 */
    p->aco_evaporation = 0.1;
    p->aco_greediness = 0.5;
    p->aco_tau0 = 0.1;
    p->aco_bins = 16;
    /* simulated annealing: T from 2% to 0.01% of the first reward's magnitude, 1-3 moves */
    p->sa_t0 = 0.02;
    p->sa_t1 = 1e-4;
    p->sa_moves = 3;
    p->sa_step = 0.1;
    p->sa_relative = 1;
}

typedef struct pdesc {
    const char *key;
    size_t off;
    hs_algo algo;
    double lo, hi; /* accepted range */
} pdesc;

#define P(k, a, lo, hi) {#k, offsetof(hs_params, k), a, lo, hi}
static const pdesc ptab[] = {
    P(ga_tournament, HS_GA, 1, 1e6),      P(ga_crossover, HS_GA, 0, 1),         P(ga_mutation, HS_GA, -1, 1),
    P(ga_elite, HS_GA, 0, 1e6),           P(gm_elite_frac, HS_GAMMA, 0, 1),     P(gm_parent_frac, HS_GAMMA, 0, 1),
    P(gm_crossover, HS_GAMMA, 0, 1),      P(gm_mutation, HS_GAMMA, 0, 1),       P(gm_reorder, HS_GAMMA, 0, 1),
    P(gm_growth, HS_GAMMA, 0, 1),         P(bo_init, HS_BO, 0, 1e6),            P(bo_train, HS_BO, 8, 4096),
    P(bo_refit, HS_BO, 1, 1e6),           P(bo_xi, HS_BO, 0, 1e3),              P(bo_cand, HS_BO, 4, 65536),
    P(bo_starts, HS_BO, 0, 64),           P(bo_maxeval, HS_BO, 1, 1e5),         P(es_sigma, HS_ES, 1e-6, 10),
    P(es_lr, HS_ES, 0, 10),               P(es_init_random, HS_ES, 0, 1),       P(aco_evaporation, HS_ACO, 0, 1),
    P(aco_greediness, HS_ACO, 0, 1),      P(aco_tau0, HS_ACO, 1e-9, 1e9),       P(aco_bins, HS_ACO, 2, 1e6),
    P(sa_t0, HS_SA, 1e-12, 1e12),         P(sa_t1, HS_SA, 1e-12, 1e12),         P(sa_moves, HS_SA, 1, 1e6),
    P(sa_step, HS_SA, 1e-9, 1),           P(sa_relative, HS_SA, 0, 1),
};
#undef P
#define NPARAMS (sizeof ptab / sizeof ptab[0])

int hs_params_set(hs_params *p, const char *kv, hw_err *err) {
    const char *eq = strchr(kv, '=');
    if (!eq) return hw_fail(err, HW_E_BAD_CONFIG, "--opt %s: expected key=value", kv);
    size_t kl = (size_t)(eq - kv);
    for (size_t i = 0; i < NPARAMS; i++) {
        if (strlen(ptab[i].key) == kl && !strncmp(kv, ptab[i].key, kl)) {
            char *end;
            double v = strtod(eq + 1, &end);
            if (end == eq + 1 || *end || !isfinite(v)) return hw_fail(err, HW_E_BAD_CONFIG, "--opt %s: not a number", kv);
            if (v < ptab[i].lo || v > ptab[i].hi)
                return hw_fail(err, HW_E_BAD_CONFIG, "--opt %s: out of range [%g, %g]", kv, ptab[i].lo, ptab[i].hi);
            *(double *)((char *)p + ptab[i].off) = v;
            return 0;
        }
    }
    /* list the keys that share the given key's prefix (ga_, gm_, bo_, es_, aco_, sa_) */
    const char *us = memchr(kv, '_', kl);
    size_t pl = us ? (size_t)(us - kv) + 1 : 0;
    char known[512] = "";
    for (size_t i = 0; i < NPARAMS; i++) {
        if (pl && strncmp(ptab[i].key, kv, pl)) continue;
        if (known[0]) strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, ptab[i].key, sizeof known - strlen(known) - 1);
    }
    if (!known[0]) snprintf(known, sizeof known, "keys start with ga_, gm_ (gamma), bo_, es_, aco_, sa_");
    return hw_fail(err, HW_E_BAD_CONFIG, "--opt %.*s: unknown hyperparameter (known: %s)", (int)kl, kv, known);
}

json_t *hs_params_json(const hs_params *p, hs_algo a) {
    json_t *o = json_object();
    for (size_t i = 0; i < NPARAMS; i++)
        if (ptab[i].algo == a) json_object_set_new(o, ptab[i].key, json_real(*(const double *)((const char *)p + ptab[i].off)));
    return o;
}

int hs_eval(hs_ctx *c, int n, const double *x, double *r) {
    int64_t left = hs_left(c);
    if (left <= 0 || n <= 0) return 0;
    if (n > left) n = (int)left;
    if (n > c->batch) n = c->batch;
    const int d = c->s->dim;
    for (int i = 0; i < n; i++) c->mbuf[i] = NULL;
    if (c->obj->eval(c->obj->ctx, n, x, r, c->mbuf, c->err)) {
        for (int i = 0; i < n; i++) json_decref(c->mbuf[i]);
        return -1;
    }
    c->res->calls++;
    for (int i = 0; i < n; i++) {
        int64_t idx = c->res->samples++;
        if (c->o->observer) c->o->observer(c->o->observer_ud, idx, x + (size_t)i * d, r[i], c->mbuf[i]);
        if (!isnan(r[i]) && r[i] > c->res->best) {
            c->res->best = r[i];
            c->res->best_index = idx;
            memcpy(c->res->best_x, x + (size_t)i * d, sizeof(double) * (size_t)d);
            json_decref(c->res->best_metrics);
            c->res->best_metrics = c->mbuf[i] ? json_incref(c->mbuf[i]) : NULL;
        }
        json_decref(c->mbuf[i]);
        c->mbuf[i] = NULL;
        r[i] = hs_fit(r[i]);
    }
    return n;
}

void hs_random_point(hs_ctx *c, double *x) {
    const hs_space *s = c->s;
    for (int i = 0; i < s->dim; i++) {
        if (s->card[i]) x[i] = (double)gsl_rng_uniform_int(c->rng, (unsigned long)s->card[i]);
        else x[i] = s->low[i] + gsl_rng_uniform(c->rng) * (s->high[i] - s->low[i]);
    }
}

int hs_run_random(hs_ctx *c) {
    const int d = c->s->dim;
    double *x = malloc(sizeof(double) * (size_t)d * (size_t)c->batch);
    double *r = malloc(sizeof(double) * (size_t)c->batch);
    if (!x || !r) abort();
    int rc = 0;
    while (hs_left(c) > 0) {
        int n = hs_left(c) < c->batch ? (int)hs_left(c) : c->batch;
        for (int i = 0; i < n; i++) hs_random_point(c, x + (size_t)i * d);
        if (hs_eval(c, n, x, r) < 0) {
            rc = -1;
            break;
        }
    }
    free(x);
    free(r);
    return rc;
}

int hs_run(const hs_opts *o, const hs_space *s, hs_objective *obj, hs_result *res, hw_err *err) {
    memset(res, 0, sizeof *res);
    res->best = -INFINITY;
    res->best_index = -1;
    res->best_x = calloc((size_t)s->dim, sizeof(double));
    if (!res->best_x) abort();
    if (o->budget < 0) return hw_fail(err, HW_E_BAD_CONFIG, "budget: %lld < 0", (long long)o->budget);
    hs_ctx c = {0};
    c.o = o;
    c.s = s;
    c.obj = obj;
    c.res = res;
    c.err = err;
    c.batch = o->batch > 0 ? o->batch : hs_default_batch(o->algo);
    if (o->algo == HS_ES && c.batch < 2) c.batch = 2;
    c.rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(c.rng, (unsigned long)o->seed);
    c.mbuf = calloc((size_t)c.batch, sizeof(json_t *));
    if (!c.mbuf) abort();
    int rc = o->algo >= 0 && o->algo < HS_NALGO ? algos[o->algo].run(&c)
                                                 : hw_fail(err, HW_E_BAD_CONFIG, "unknown algorithm %d", (int)o->algo);
    gsl_rng_free(c.rng);
    free(c.mbuf);
    return rc;
}

void hs_result_free(hs_result *r) {
    if (!r) return;
    free(r->best_x);
    json_decref(r->best_metrics);
    memset(r, 0, sizeof *r);
}
