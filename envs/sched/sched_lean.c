/* sched_lean.c - sched-v0's lean evaluation entry (env_lean.h): a point is a scheduling table
 * (10 rows x 8 columns of loop factors, the dataflow's loop orders), checked and scored by the
 * cost core directly, with evaluate()'s reward and numeric metrics and no JSON. An invalid table
 * is infeasible with reward 0, as in evaluate(); a non-positive factor is the point's error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "env_lean.h"
#include "sched.h"
#include "sched_internal.h"

void sched_env_lean_ctx(void *p, const sched_accel **acc, const sched_layer **layer, int *obj);

static const char *const names[] = {"energy_pj", "cycles", "edp", "utilisation", "dram_words", "utilization_with_stalls"};
#define NM ((int)(sizeof names / sizeof names[0]))

typedef struct lean_ctx {
    const sched_accel *acc;
    const sched_layer *layer;
    int obj;
    double ref; /* objective of the all-in-DRAM table: reward = log(ref / objective) */
} lean_ctx;

static void *lean_prepare(void *env) {
    lean_ctx *c = malloc(sizeof *c);
    if (!c) abort();
    sched_env_lean_ctx(env, &c->acc, &c->layer, &c->obj);
    sched_table t0;
    sched_cost c0;
    sched_table_init(c->layer, &t0);
    sched_cost_eval(c->acc, c->layer, &t0, &c0);
    c->ref = sched_objective(&c0, c->obj);
    return c;
}

static void lean_release(void *ctx) { free(ctx); }

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)env;
    const lean_ctx *c = ctx;
    sched_table t;
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) {
            int64_t x = act->i[r * SCHED_NDIM + d];
            if (x < 1 || x > (1 << 20))
                return hw_fail(err, HW_E_BAD_ACTION, "table[%d][%d] (%s.%s): expected a positive integer", r, d, sched_row_names[r],
                               sched_dim_names[d]);
            t.f[r][d] = (int)x;
        }
    memset(t.ord, 0, sizeof t.ord);
    sched_cost k;
    hw_err e2;
    if (sched_evaluate(c->acc, c->layer, &t, &k, &e2)) {
        *reward = 0;
        *feasible = false;
        for (int i = 0; i < NM; i++) v[i] = NAN;
        return 0;
    }
    *feasible = true;
    *reward = log(c->ref / sched_objective(&k, c->obj));
    v[0] = k.energy_pj, v[1] = k.cycles, v[2] = k.edp, v[3] = k.utilisation;
    v[4] = sched_objective(&k, SOBJ_DRAM), v[5] = k.tl_utilization;
    return 0;
}

const hw_env_lean hw_lean_sched = {
    .id = "sched-v0",
    .version = "sched-v0/2",
    .nmetrics = NM,
    .metric_names = names,
    .raw_ndim = 2,
    .raw_shape = {SCHED_NROW, SCHED_NDIM},
    .prepare = lean_prepare,
    .release = lean_release,
    .eval = lean_eval,
};
