/* config.c - see config.h */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hw_files.h"

static json_t *get(const json_t *cfg, const char *key) {
    if (!cfg || !json_is_object(cfg)) return NULL;
    json_t *v = json_object_get(cfg, key);
    return json_is_null(v) ? NULL : v;
}

int hw_cfg_int(const json_t *cfg, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out, hw_err *err) {
    json_t *v = get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    int64_t x;
    if (json_is_integer(v)) {
        x = json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) && fabs(json_real_value(v)) < 9e18) {
        x = (int64_t)json_real_value(v);
    } else {
        return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: expected an integer", key);
    }
    if (x < lo || x > hi)
        return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: %lld out of range [%lld, %lld]", key, (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

int hw_cfg_num(const json_t *cfg, const char *key, double def, double lo, double hi, double *out, hw_err *err) {
    json_t *v = get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: expected a number", key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: %g out of range [%g, %g]", key, x, lo, hi);
    *out = x;
    return 0;
}

int hw_cfg_bool(const json_t *cfg, const char *key, bool def, bool *out, hw_err *err) {
    json_t *v = get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v)) return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: expected true or false", key);
    *out = json_is_true(v);
    return 0;
}

int hw_cfg_str(const json_t *cfg, const char *key, const char *def, const char **out, hw_err *err) {
    json_t *v = get(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_string(v)) return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: expected a string", key);
    *out = json_string_value(v);
    return 0;
}

static void join_list(char *buf, size_t cap, const char *const *items) {
    buf[0] = 0;
    size_t len = 0;
    for (int i = 0; items[i] && len + 4 < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", items[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

int hw_cfg_enum(const json_t *cfg, const char *key, const char *const *choices, int def, int *out, hw_err *err) {
    const char *s;
    if (hw_cfg_str(cfg, key, NULL, &s, err)) return -1;
    if (!s) {
        *out = def;
        return 0;
    }
    for (int i = 0; choices[i]; i++)
        if (strcmp(choices[i], s) == 0) {
            *out = i;
            return 0;
        }
    char list[200];
    join_list(list, sizeof list, choices);
    return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: '%s' is not one of: %s", key, s, list);
}

int hw_cfg_check_keys(const json_t *cfg, const char *const *allowed, hw_err *err) {
    if (!cfg) return 0;
    if (!json_is_object(cfg)) return hw_fail(err, HW_E_BAD_CONFIG, "config: expected an object");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)cfg, k, v) {
        (void)v;
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(allowed[i], k) == 0) ok = 1;
        if (!ok) {
            char list[240];
            join_list(list, sizeof list, allowed);
            return hw_fail(err, HW_E_BAD_CONFIG, "config.%s: unknown field (known: %s)", k, list);
        }
    }
    return 0;
}

json_t *hw_json_load_file(const char *path, hw_err *err) { return hw_files_load_json(&hw_files_local, path, path, err); }
