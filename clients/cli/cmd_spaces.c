/* cmd_spaces.c - `hwgym spaces ENV [--config JSON|@file] [--endpoint EP] [--json]`: a compact
 * human summary of the action and observation spaces (one line per parameter or Dict key, Box
 * bounds as ranges, label and name lists cut short), or the full JSON with --json. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hwgym_client.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym spaces ENV [--config JSON|@file] [--endpoint EP] [--timeout MS] [--json]\n"
    "Prints a short summary of the env's action and observation spaces: one line per parameter\n"
    "or Dict key with its size, bounds (min..max over the elements; the float limit prints as\n"
    "inf) and the first names and labels. --json prints {\"env\", \"action_space\",\n"
    "\"observation_space\"} instead: Gymnasium spaces with every bound, parameter name and\n"
    "categorical label (PROTOCOL.md \"Spaces\"), for programs. The env is built in this process\n"
    "from the config (default: all defaults), or asked of the server at --endpoint.\n";

#define SHOW_MAX 6 /* names or labels listed before "... (N)" */

static void num_text(double v, char *out, size_t n) {
    if (v >= 1.7976931348623157e308) snprintf(out, n, "inf");
    else if (v <= -1.7976931348623157e308) snprintf(out, n, "-inf");
    else snprintf(out, n, "%.6g", v);
}

/* "a, b, c, ... (N)" of a JSON string list */
static void list_text(const json_t *a) {
    size_t n = json_array_size(a);
    for (size_t i = 0; i < n && i < SHOW_MAX; i++) {
        const char *x = json_string_value(json_array_get(a, i));
        printf("%s%s", i ? ", " : "", x ? x : "-");
    }
    if (n > SHOW_MAX) printf(", ... (%zu)", n);
}

static void range_text(const json_t *a, char *out, size_t n) {
    size_t k = json_array_size(a);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < k; i++) {
        double v = json_number_value(json_array_get(a, i));
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    char l[32], h[32];
    num_text(lo, l, sizeof l), num_text(hi, h, sizeof h);
    if (!k) snprintf(out, n, "-");
    else if (lo == hi) snprintf(out, n, "%s", l);
    else snprintf(out, n, "%s..%s", l, h);
}

static void space_text(const json_t *sp, int ind) {
    const char *t = json_string_value(json_object_get(sp, "type"));
    if (!t) t = "?";
    if (!strcmp(t, "Dict")) {
        const json_t *ch = json_object_get(sp, "spaces");
        printf("Dict, %zu keys\n", json_object_size(ch));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)ch, k, v) {
            printf("%*s%s: ", ind + 2, "", k);
            space_text(v, ind + 2);
        }
        return;
    }
    if (!strcmp(t, "Discrete")) {
        printf("Discrete(%lld)", (long long)json_integer_value(json_object_get(sp, "n")));
        const json_t *lab = json_object_get(sp, "labels");
        if (json_is_array(lab)) printf(": "), list_text(lab);
        printf("\n");
        return;
    }
    if (!strcmp(t, "MultiBinary")) {
        printf("MultiBinary(%lld)\n", (long long)json_integer_value(json_object_get(sp, "n")));
        return;
    }
    const json_t *names = json_object_get(sp, "names");
    if (!strcmp(t, "MultiDiscrete")) {
        const json_t *nv = json_object_get(sp, "nvec"), *lab = json_object_get(sp, "labels");
        size_t n = json_array_size(nv);
        printf("MultiDiscrete, %zu parameters\n", n);
        int w = 4;
        for (size_t i = 0; i < json_array_size(names); i++) {
            const char *x = json_string_value(json_array_get(names, i));
            if (x && (int)strlen(x) > w) w = (int)strlen(x);
        }
        for (size_t i = 0, j; i < n; i = j) {
            /* a run of 3+ parameters with the same choices prints as one line */
            const json_t *l = json_array_get(lab, i);
            for (j = i + 1; j < n && json_equal(json_array_get(nv, j), json_array_get(nv, i)) &&
                            (l ? json_equal(json_array_get(lab, j), l) : !json_array_get(lab, j));
                 j++) {
            }
            if (j - i < 3) j = i + 1;
            char a[160], def[32];
            const char *x = json_string_value(json_array_get(names, i));
            snprintf(def, sizeof def, "[%zu]", i);
            snprintf(a, sizeof a, "%s", x ? x : def);
            if (j - i > 1) {
                const char *y = json_string_value(json_array_get(names, j - 1));
                char b[400];
                snprintf(def, sizeof def, "[%zu]", j - 1);
                snprintf(b, sizeof b, "%.150s .. %.150s (%zu parameters)", a, y ? y : def, j - i);
                snprintf(a, sizeof a, "%.159s", b);
            }
            long long c = (long long)json_integer_value(json_array_get(nv, i));
            printf("%*s%-*s %6lld choice%s", ind + 2, "", w, a, c, c == 1 ? "" : "s");
            if (json_is_array(l)) printf(": "), list_text(l);
            printf("\n");
        }
        return;
    }
    if (!strcmp(t, "Box")) {
        const json_t *shape = json_object_get(sp, "shape");
        printf("Box(");
        for (size_t i = 0; i < json_array_size(shape); i++)
            printf("%s%lld", i ? "x" : "", (long long)json_integer_value(json_array_get(shape, i)));
        char lo[80], hi[80];
        range_text(json_object_get(sp, "low"), lo, sizeof lo);
        range_text(json_object_get(sp, "high"), hi, sizeof hi);
        printf(") %s, low %s, high %s\n", json_string_value(json_object_get(sp, "dtype")), lo, hi);
        if (json_is_array(names)) printf("%*snames: ", ind + 4, ""), list_text(names), printf("\n");
        return;
    }
    printf("%s\n", t);
}

int hwcli_spaces(int argc, char **argv) {
    const char *ep = NULL, *to = NULL, *cfgtext = NULL, *pos[1];
    bool as_json = false;
    hwcli_opt opts[] = {{"--endpoint", &ep, NULL},   {"--timeout", &to, NULL}, {"--config", &cfgtext, NULL},
                        {"--json", NULL, &as_json}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err;
    long long tms = HWCLI_DEFAULT_TIMEOUT_MS;
    if (to && hwcli_int_arg(to, "--timeout", 1, 86400000, &tms, &err)) return hwcli_fail("spaces", 2, "%s", err.msg);
    json_t *cfg;
    if (hwcli_json_arg(cfgtext, "--config", &cfg, &err)) return hwcli_fail("spaces", 2, "%s", err.msg);
    if (cfg && !json_is_object(cfg)) {
        json_decref(cfg);
        return hwcli_fail("spaces", 2, "--config: expected a JSON object");
    }
    json_t *as = NULL, *os = NULL;
    if (ep) {
        hwc_client *c = hwc_connect(NULL, ep, (int)tms, &err);
        if (!c) {
            json_decref(cfg);
            return hwcli_fail("spaces", 1, "--endpoint: %s", err.msg);
        }
        rc = hwc_spaces(c, NULL, pos[0], cfg, &as, &os, &err);
        hwc_disconnect(c);
    } else {
        const hw_env_family *f;
        void *env = hw_env_create(pos[0], cfg, &f, &err);
        rc = env ? 0 : -1;
        if (env) {
            as = hw_space_to_json(f->action_space(env));
            os = hw_space_to_json(f->observation_space(env));
            f->destroy(env);
        }
    }
    json_decref(cfg);
    if (rc) return hwcli_fail("spaces", err.code == HW_E_UNKNOWN_ENV || err.code == HW_E_BAD_CONFIG ? 2 : 1, "%s: %s",
                              hw_code_name(err.code), err.msg);
    json_t *out = json_pack("{sssoso}", "env", pos[0], "action_space", as ? as : json_null(), "observation_space",
                            os ? os : json_null());
    if (as_json) hwcli_print_json(out);
    else {
        printf("%s\naction space: ", pos[0]);
        space_text(json_object_get(out, "action_space"), 0);
        printf("observation space: ");
        space_text(json_object_get(out, "observation_space"), 0);
        printf("(hwgym spaces %s --json prints every bound, name and label)\n", pos[0]);
    }
    json_decref(out);
    return 0;
}
