/* diag-v0's lean evaluation entry (env_lean.h): evaluate()'s numbers without JSON, one point at a
 * time (eval) or a block of integer points in one call (eval_many: the model costs nanoseconds a
 * point, so a call per point would cost more than the model). */
#include "env_lean.h"

#include <string.h>

int diag_env_eval_action(void *p, const hw_act *act, double *reward, double *dist, hw_err *err);
int diag_env_eval_many(void *p, const int64_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride);
int diag_env_eval_many8(void *p, const int8_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride);

static const char *const names[] = {"distance"};

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)ctx;
    *feasible = true;
    return diag_env_eval_action(env, act, reward, &v[0], err);
}

static int lean_eval_many(void *env, void *ctx, const int64_t *pts, int64_t n, int64_t d, double *reward, uint8_t *feasible, double *v) {
    (void)ctx;
    if (diag_env_eval_many(env, pts, n, d, reward, v, 1)) return -1;
    for (int64_t k = 0; k < n; k++) feasible[k] = 1;
    return 0;
}

static int lean_eval_many8(void *env, void *ctx, const int8_t *pts, int64_t n, int64_t d, double *reward, uint8_t *feasible, double *v) {
    (void)ctx;
    if (diag_env_eval_many8(env, pts, n, d, reward, v, 1)) return -1;
    memset(feasible, 1, (size_t)n);
    return 0;
}

const hw_env_lean hw_lean_diag = {
    .id = "diag-v0",
    .version = "diag-v0/1",
    .nmetrics = 1,
    .metric_names = names,
    .eval = lean_eval,
    .eval_many = lean_eval_many,
    .eval_many8 = lean_eval_many8,
};
