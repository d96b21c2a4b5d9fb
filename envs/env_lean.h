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
    /* The form of a point. raw_ndim 0: a point is an action, validated against the env's action
     * space before eval (act->i for integer spaces, else act->f). raw_ndim 1 or 2: a point is
     * raw integers of shape raw_shape (sched-v0: a 10x8 table) handed to eval unvalidated as
     * act->i (act->n elements): eval validates them and fails with the point's error. */
    int raw_ndim;
    int64_t raw_shape[2];
    /* Optional per-slice context: prepare(env) once before a slice's points (e.g. sched-v0's
     * all-DRAM objective, the reward's reference), release(ctx) after. ctx is NULL without. */
    void *(*prepare)(void *env);
    void (*release)(void *ctx);
    /* Scores one point. vals gets nmetrics numbers (NaN when a metric does not apply, e.g. an
     * invalid mapping). Returns 0, or -1 with err (the point's error; others still run). */
    int (*eval)(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *vals, hw_err *err);
    /* Optional, for a family whose model costs nanoseconds (diag-v0): scores n points at once,
     * given as n x d integers, row-major, each already range-checked against the env's integer
     * action space (raw_ndim 0 only). Writes reward[n], feasible[n] and, when vals is not NULL,
     * n x nmetrics numbers (point-major): for every point exactly eval()'s numbers. Returns 0, or
     * -1 when it does not take these points (e.g. diag-v0 with step_us); the server then scores
     * them one by one with eval(), which reports each point's error. */
    int (*eval_many)(void *env, void *ctx, const int64_t *pts, int64_t n, int64_t d, double *reward, uint8_t *feasible, double *vals);
    /* Optional, beside eval_many: eval_many on int8 points (libhwgym sends the points of a space
     * whose bounds fit int8 as int8), read in place from the request or from a block gathered
     * from it: the server widens nothing. Same contract and numbers as eval_many. */
    int (*eval_many8)(void *env, void *ctx, const int8_t *pts, int64_t n, int64_t d, double *reward, uint8_t *feasible, double *vals);
} hw_env_lean;

/* NULL when the family has no lean entry in this build. */
const hw_env_lean *hw_env_lean_find(const char *id);
/* Index of `name` in l's metric list, -1 when absent. */
int hw_env_lean_metric(const hw_env_lean *l, const char *name, size_t len);

#endif
