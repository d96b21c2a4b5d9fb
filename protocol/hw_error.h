/* hw_error.h - error codes shared by the wire protocol, the server, the envs and the clients.
 * Owns: the hw_code enum, its wire names (PROTOCOL.md lists them) and the hw_err carrier. */
#ifndef HW_ERROR_H
#define HW_ERROR_H

#include <stdarg.h>

typedef enum hw_code {
    HW_OK = 0,
    HW_E_BAD_REQUEST,         /* malformed msgpack, wrong type, missing field */
    HW_E_UNSUPPORTED_VERSION, /* request "v" is not a protocol version the server speaks */
    HW_E_UNKNOWN_OP,          /* "op" names no operation */
    HW_E_UNKNOWN_SESSION,     /* session token unknown, closed or reaped */
    HW_E_UNKNOWN_ENV,         /* env id not registered */
    HW_E_BAD_CONFIG,          /* env config invalid; message names the field */
    HW_E_BAD_ACTION,          /* action out of range or wrong shape/dtype */
    HW_E_BAD_STATE,           /* op not valid now (step before reset, ...) */
    HW_E_LIMIT,               /* a size or count limit was exceeded */
    HW_E_TIMEOUT,             /* multi-agent barrier or client-side timeout */
    HW_E_NOT_SUPPORTED,       /* env or session kind does not support the op */
    HW_E_UNKNOWN_AGENT,       /* multi-agent: agent name unknown */
    HW_E_UNKNOWN_SNAPSHOT,    /* snapshot id unknown */
    HW_E_SUPERSEDED,          /* multi-agent: a newer submission from the same agent replaced this one */
    HW_E_SHUTTING_DOWN,       /* server is draining */
    HW_E_IO,                  /* client side: transport or file error */
    HW_E_INTERNAL,            /* a bug: please report */
    HW_CODE_COUNT
} hw_code;

#define HW_ERR_MSG 320

typedef struct hw_err {
    hw_code code;
    char msg[HW_ERR_MSG];
} hw_err;

/* Sets e (if non-NULL) and returns -1, so callers can `return hw_fail(...)`. */
int hw_fail(hw_err *e, hw_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int hw_vfail(hw_err *e, hw_code code, const char *fmt, va_list ap);
void hw_err_clear(hw_err *e);
/* Prefixes the message with "prefix: " (used to add context such as "config.layer"). */
void hw_err_prefix(hw_err *e, const char *prefix);
/* Makes a NUL-terminated message valid UTF-8 in place: each byte that does not start a valid
 * sequence (a cut multibyte character, Latin-1, ...) and each control character other than
 * tab and newline becomes '?'. hw_fail/hw_vfail/hw_err_prefix apply it to every message. */
void hw_utf8_sanitize(char *s);
const char *hw_code_name(hw_code code);         /* "BAD_ACTION" */
hw_code hw_code_from_name(const char *name);    /* HW_E_INTERNAL when unknown */

#endif
