/* placement_lean.c - placement-v0's lean evaluation entry (env_lean.h): the numeric metrics of
 * evaluate() (same names and values; "valid" as 1/0), without the JSON object, the 2N-entry
 * "rectified" list and the occupancy objects, which cost far more than the model itself on
 * BERT (752 action elements). */
#include <math.h>

#include "env_lean.h"
#include "placement_env.h"

static const char *const names[] = {"valid",      "eps",           "speedup",           "latency_us",  "baseline_latency_us",
                                    "rectified_speedup", "reassigned_bytes", "reassigned_tensors", "total_bytes"};
#define NM ((int)(sizeof names / sizeof names[0]))

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)ctx;
    pl_result r;
    if (pl_env_eval_action(env, act, reward, &r, err)) return -1;
    const pl_model *m = pl_env_model(env);
    const int valid = r.reassigned_bytes == 0;
    const double rect = m->baseline / r.latency;
    *feasible = valid;
    v[0] = valid;
    v[1] = r.eps;
    v[2] = valid ? rect : 0.0;
    v[3] = r.latency * 1e6;
    v[4] = m->baseline * 1e6;
    v[5] = rect;
    v[6] = (double)r.reassigned_bytes;
    v[7] = r.n_reassigned;
    v[8] = (double)m->total_bytes;
    return 0;
}

const hw_env_lean hw_lean_placement = {
    .id = "placement-v0",
    .version = "placement-v0/1",
    .nmetrics = NM,
    .metric_names = names,
    .eval = lean_eval,
};
