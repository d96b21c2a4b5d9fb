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

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t k;
    unsigned cp, min;
    if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
    else return 0;
    if (k >= n) return 0;
    for (size_t j = 1; j <= k; j++) {
        if ((p[j] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (p[j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return k + 1;
}

void hw_utf8_sanitize(char *s) {
    if (!s) return;
    size_t n = strlen(s);
    unsigned char *p = (unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(p + i, n - i);
        if (k == 0) {
            p[i++] = '?';
            continue;
        }
        /* control characters other than tab/newline become '?' too */
        if (k == 1 && (p[i] < 0x20 || p[i] == 0x7f) && p[i] != '\t' && p[i] != '\n') p[i] = '?';
        i += k;
    }
}

int hw_vfail(hw_err *e, hw_code code, const char *fmt, va_list ap) {
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        hw_utf8_sanitize(e->msg); /* a cut at HW_ERR_MSG or a quoted byte must not break UTF-8 */
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
    hw_utf8_sanitize(e->msg);
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
