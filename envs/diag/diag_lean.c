/* diag_lean.c - diag-v0's lean evaluation entry (env_lean.h): evaluate()'s numbers without JSON. */
#include "env_lean.h"

int diag_env_eval_action(void *p, const hw_act *act, double *reward, double *dist);

static const char *const names[] = {"distance"};

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)err;
    (void)ctx;
    *feasible = true;
    return diag_env_eval_action(env, act, reward, &v[0]);
}

const hw_env_lean hw_lean_diag = {
    .id = "diag-v0",
    .version = "diag-v0/1",
    .nmetrics = 1,
    .metric_names = names,
    .eval = lean_eval,
};
