/* env_limits.c - see env_limits.h */
#include "env_limits.h"

#include <stdatomic.h>
#include <time.h>

#include "config.h"

int64_t hw_env_limit(const hw_env_ctx *ctx, const char *knob, int64_t def) {
    json_t *v = ctx && ctx->limits ? json_object_get(ctx->limits, knob) : NULL;
    return v && json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

int hw_cfg_int_capped(const json_t *cfg, const hw_env_ctx *ctx, const char *key, int64_t def, int64_t lo, int64_t hard_hi,
                      int64_t cap_def, int64_t *out, hw_err *err) {
    if (hw_cfg_int(cfg, key, def, lo, hard_hi, out, err)) return -1;
    int64_t cap = hw_env_limit(ctx, key, cap_def);
    if (*out > cap)
        return hw_fail(err, HW_E_LIMIT, "config.%s: %lld exceeds this server's limit of %lld (hwgym-server --env-limit ENV.%s=N)", key,
                       (long long)*out, (long long)cap, key);
    return 0;
}

double hw_mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Thread_local double deadline_at;
static atomic_int cancel_all;

void hw_deadline_set(double at) { deadline_at = at; }
double hw_deadline_get(void) { return deadline_at; }
void hw_deadline_cancel_all(void) { atomic_store(&cancel_all, 1); }
void hw_deadline_reset_all(void) { atomic_store(&cancel_all, 0); }

bool hw_deadline_passed(void) {
    if (atomic_load_explicit(&cancel_all, memory_order_relaxed)) return true;
    return deadline_at > 0 && hw_mono_now() >= deadline_at;
}

int hw_deadline_check(const char *what, hw_err *err) {
    if (!hw_deadline_passed()) return 0;
    return hw_fail(err, HW_E_TIMEOUT, "%s: the request exceeded the server's time limit (--request-timeout) and was abandoned",
                   what ? what : "request");
}
