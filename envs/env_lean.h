/* env_lean.h - the optional lean evaluation entry of an env family (issue 18).
 * Owns: the hw_env_lean interface and its lookup by family id. A family that has one scores a
 * design point given as an already validated action (hw_act) and writes numbers only: the
 * reward, the feasible flag and a fixed list of numeric metrics, without building JSON. The
 * server's lean evaluate_batch (PROTOCOL.md) uses it; families without one are served through
 * their JSON evaluate() (the numeric and boolean top-level metrics are then taken from the JSON).
 *
 * Entries live in new files next to each family (e.g. envs/maestro/maestro_lean.c) and are found
 * through weak symbols, like the registry, so a build without the family still links.
 * Thread use: eval() touches only `env` (worker-private) and its arguments. */
#ifndef HW_ENV_LEAN_H
#define HW_ENV_LEAN_H

#include <stdbool.h>

#include "env.h"

typedef struct hw_env_lean {
    const char *id;                   /* the family id, "maestro-v0" */
    const char *version;              /* model version: part of every evaluation-cache key */
    int nmetrics;
    const char *const *metric_names;  /* nmetrics names, as in the family's evaluate() metrics */
    /* Scores one point. vals gets nmetrics numbers (NaN when a metric does not apply, e.g. an
     * invalid mapping). Returns 0, or -1 with err (the point's error; others still run). */
    int (*eval)(void *env, const hw_act *act, double *reward, bool *feasible, double *vals, hw_err *err);
} hw_env_lean;

/* NULL when the family has no lean entry in this build. */
const hw_env_lean *hw_env_lean_find(const char *id);
/* Index of `name` in l's metric list, -1 when absent. */
int hw_env_lean_metric(const hw_env_lean *l, const char *name, size_t len);

#endif
