/* helpers.c - see helpers.h */
#include "helpers.h"

#include <criterion/criterion.h>
#include <string.h>

typedef struct counting {
    hs_objective inner;
    trace *tr;
    int dim;
} counting;

static int count_eval(void *ctx, int n, const double *x, double *r, json_t **m, hw_err *err) {
    counting *c = ctx;
    if (n > c->tr->max_call) c->tr->max_call = n;
    c->tr->calls++;
    return c->inner.eval(c->inner.ctx, n, x, r, m, err);
}

static void observe(void *ud, int64_t index, const double *x, double reward, const json_t *metrics) {
    (void)metrics;
    (void)reward;
    counting *c = ud;
    cr_assert_eq(index, c->tr->n, "observer index %lld, expected %lld", (long long)index, (long long)c->tr->n);
    c->tr->n++;
    for (int i = 0; i < c->dim; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        c->tr->hash = (c->tr->hash ^ b) * 1099511628211ULL;
    }
}

void run_local(hs_algo algo, const char *env, const char *cfg, uint64_t seed, int64_t budget, int batch,
               const hs_params *p, hs_result *res, trace *tr) {
    hw_err err = {0};
    json_error_t je;
    json_t *config = json_loads(cfg, 0, &je);
    cr_assert(config, "bad config %s", cfg);
    ag_sess *s = ag_sess_make("local", env, config, NULL, 0, &err);
    cr_assert(s, "ag_sess_make: %s", err.msg);
    hs_space *sp = hs_space_from_hw(s->act_space, &err);
    cr_assert(sp, "%s", err.msg);
    hs_sess_obj so = {s, sp};
    memset(tr, 0, sizeof *tr);
    tr->hash = 1469598103934665603ULL;
    counting cnt = {hs_sess_objective(&so), tr, sp->dim};
    hs_objective obj = {&cnt, count_eval};
    hs_opts o = {0};
    o.algo = algo;
    o.seed = seed;
    o.budget = budget;
    o.batch = batch;
    if (p) o.p = *p;
    else hs_params_default(&o.p);
    o.observer = observe;
    o.observer_ud = &cnt;
    int rc = hs_run(&o, sp, &obj, res, &err);
    cr_assert_eq(rc, 0, "hs_run: %s", err.msg);
    hs_space_free(sp);
    ag_sess_free(s);
    json_decref(config);
}
