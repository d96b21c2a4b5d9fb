/* cli_util.c - see cli.h */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int hwcli_fail(const char *cmd, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hwgym %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return rc;
}

int hwcli_parse(int argc, char **argv, const hwcli_opt *opts, const char **pos, int maxpos, int minpos, int *npos,
                const char *usage) {
    const char *cmd = argv[0];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 1;
        }
        /* a short option (-o) only when the command declares it, so "-1" stays a positional */
        int is_short = 0;
        if (a[0] == '-' && a[1] && a[1] != '-')
            for (int k = 0; opts && opts[k].name; k++)
                if (!strcmp(opts[k].name, a)) is_short = 1;
        if ((a[0] == '-' && a[1] == '-' && a[2]) || is_short) {
            const char *eq = is_short ? NULL : strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            const hwcli_opt *o = NULL;
            for (int k = 0; opts && opts[k].name; k++)
                if (strlen(opts[k].name) == nl && !strncmp(opts[k].name, a, nl)) o = &opts[k];
            if (!o) {
                hwcli_fail(cmd, 2, "unknown option '%.*s' (see hwgym %s --help)", (int)nl, a, cmd);
                return 2;
            }
            if (o->flag) {
                if (eq) {
                    hwcli_fail(cmd, 2, "option %s takes no value", o->name);
                    return 2;
                }
                *o->flag = true;
                continue;
            }
            if (eq) {
                *o->value = eq + 1;
            } else {
                if (i + 1 >= argc) {
                    hwcli_fail(cmd, 2, "option %s needs a value (see hwgym %s --help)", o->name, cmd);
                    return 2;
                }
                *o->value = argv[++i];
            }
            continue;
        }
        if (np >= maxpos) {
            hwcli_fail(cmd, 2, "unexpected argument '%s' (see hwgym %s --help)", a, cmd);
            return 2;
        }
        pos[np++] = a;
    }
    if (np < minpos) {
        fprintf(stderr, "hwgym %s: missing argument\n%s", cmd, usage);
        return 2;
    }
    if (npos) *npos = np;
    return 0;
}

int hwcli_json_arg(const char *text, const char *what, json_t **out, hw_err *err) {
    *out = NULL;
    if (!text) return 0;
    json_error_t je;
    json_t *j;
    if (text[0] == '@') {
        j = json_load_file(text + 1, JSON_DECODE_ANY, &je);
        if (!j) return hw_fail(err, HW_E_BAD_REQUEST, "%s: %s: %s (line %d, column %d)", what, text + 1, je.text, je.line, je.column);
    } else {
        j = json_loads(text, JSON_DECODE_ANY, &je);
        if (!j) return hw_fail(err, HW_E_BAD_REQUEST, "%s: invalid JSON: %s (column %d)", what, je.text, je.column);
    }
    *out = j;
    return 0;
}

int hwcli_int_arg(const char *text, const char *what, long long lo, long long hi, long long *out, hw_err *err) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return hw_fail(err, HW_E_BAD_REQUEST, "%s: '%s' is not an integer in [%lld, %lld]", what, text, lo, hi);
    *out = v;
    return 0;
}

void hwcli_print_json(const json_t *j) {
    json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);
    fputc('\n', stdout);
    fflush(stdout);
}
