/* hw_error.c - see hw_error.h */
#include "hw_error.h"

#include <stdio.h>
#include <string.h>

static const char *const names[HW_CODE_COUNT] = {
    [HW_OK] = "OK",
    [HW_E_BAD_REQUEST] = "BAD_REQUEST",
    [HW_E_UNSUPPORTED_VERSION] = "UNSUPPORTED_VERSION",
    [HW_E_UNKNOWN_OP] = "UNKNOWN_OP",
    [HW_E_UNKNOWN_SESSION] = "UNKNOWN_SESSION",
    [HW_E_UNKNOWN_ENV] = "UNKNOWN_ENV",
    [HW_E_BAD_CONFIG] = "BAD_CONFIG",
    [HW_E_BAD_ACTION] = "BAD_ACTION",
    [HW_E_BAD_STATE] = "BAD_STATE",
    [HW_E_LIMIT] = "LIMIT",
    [HW_E_TIMEOUT] = "TIMEOUT",
    [HW_E_NOT_SUPPORTED] = "NOT_SUPPORTED",
    [HW_E_UNKNOWN_AGENT] = "UNKNOWN_AGENT",
    [HW_E_UNKNOWN_SNAPSHOT] = "UNKNOWN_SNAPSHOT",
    [HW_E_SUPERSEDED] = "SUPERSEDED",
    [HW_E_SHUTTING_DOWN] = "SHUTTING_DOWN",
    [HW_E_IO] = "IO",
    [HW_E_INTERNAL] = "INTERNAL",
};

int hw_vfail(hw_err *e, hw_code code, const char *fmt, va_list ap) {
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    }
    return -1;
}

int hw_fail(hw_err *e, hw_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hw_vfail(e, code, fmt, ap);
    va_end(ap);
    return -1;
}

void hw_err_clear(hw_err *e) {
    if (e) {
        e->code = HW_OK;
        e->msg[0] = 0;
    }
}

void hw_err_prefix(hw_err *e, const char *prefix) {
    if (!e || !prefix) return;
    char tmp[HW_ERR_MSG];
    memcpy(tmp, e->msg, sizeof tmp);
    int w = snprintf(e->msg, sizeof e->msg, "%s: ", prefix);
    if (w > 0 && (size_t)w < sizeof e->msg) snprintf(e->msg + w, sizeof e->msg - (size_t)w, "%.*s", (int)(sizeof e->msg - (size_t)w - 1), tmp);
}

const char *hw_code_name(hw_code code) {
    if ((int)code < 0 || code >= HW_CODE_COUNT) return "INTERNAL";
    return names[code];
}

hw_code hw_code_from_name(const char *name) {
    if (!name) return HW_E_INTERNAL;
    for (int i = 0; i < HW_CODE_COUNT; i++)
        if (strcmp(names[i], name) == 0) return (hw_code)i;
    return HW_E_INTERNAL;
}
