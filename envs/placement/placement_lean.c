/* placement_lean.c - placement-v0's lean evaluation entry (env_lean.h): an array point (one
 * memory per tensor, the action space) scored as evaluate() scores it, numbers only. */
#include "env_lean.h"

int placement_env_eval_action(void *p, const int64_t *a, double *reward, int *feasible, double *v);

static const char *const names[] = {"valid", "eps", "speedup", "latency_us", "baseline_latency_us", "rectified_speedup",
                                    "reassigned_bytes", "reassigned_tensors", "total_bytes"};

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)ctx;
    if (!act->i) return hw_fail(err, HW_E_BAD_ACTION, "point: expected integer memory choices");
    int f;
    placement_env_eval_action(env, act->i, reward, &f, v);
    *feasible = f;
    return 0;
}

const hw_env_lean hw_lean_placement = {
    .id = "placement-v0",
    .version = "placement-v0/1",
    .nmetrics = (int)(sizeof names / sizeof names[0]),
    .metric_names = names,
    .eval = lean_eval,
};
