/* env_limits.h - operator limits on the env knobs that scale work and memory, and the
 * per-request deadline envs check in long loops (docs/security.md lists every knob).
 * Owns: reading a cap from hw_env_ctx.limits, the capped integer config getter, and the
 * thread-local deadline (set by the server around each request; a local tool sets none). */
#ifndef HW_ENV_LIMITS_H
#define HW_ENV_LIMITS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "env.h"
#include "hw_error.h"

/* The operator's cap for `knob` (ctx->limits[knob], an integer), else `def`. */
int64_t hw_env_limit(const hw_env_ctx *ctx, const char *knob, int64_t def);
/* hw_cfg_int with the upper bound hw_env_limit(ctx, key, cap_def): a value above the cap (but
 * within `hard_hi`, the family's own range) fails with HW_E_LIMIT naming the knob and the cap. */
int hw_cfg_int_capped(const json_t *cfg, const hw_env_ctx *ctx, const char *key, int64_t def, int64_t lo, int64_t hard_hi,
                      int64_t cap_def, int64_t *out, hw_err *err);

/* ---- per-request deadline (thread-local; monotonic seconds, 0 = none) ---- */
double hw_mono_now(void);
void hw_deadline_set(double at);
double hw_deadline_get(void);
/* Process-wide: every deadline counts as passed from now on (the server's drain deadline). */
void hw_deadline_cancel_all(void);
void hw_deadline_reset_all(void); /* a server starting in a process that ran one before */
bool hw_deadline_passed(void);
/* -1 with HW_E_TIMEOUT "<what>: the request exceeded the server's time limit" once passed. */
int hw_deadline_check(const char *what, hw_err *err);

#endif
