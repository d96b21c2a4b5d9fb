/* cmd_eval.c - `hwgym eval ENV --config JSON --action JSON [--endpoint EP]`: one design point. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "cli_ticker.h"
#include "hwgym_client.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym eval ENV --action JSON|@file [--config JSON|@file] [--endpoint EP] [--timeout MS]\n"
    "Scores one design point with the env's one-shot evaluate and prints\n"
    "  {\"env\": ENV, \"reward\": R, \"metrics\": {...}}\n"
    "The action is an action vector (a JSON list) or an env-specific object (for example\n"
    "{\"directives\": \"...\"} for maestro-v0). By default the env runs in this process (the same\n"
    "code the server runs); with --endpoint the server's evaluate op scores it.\n"
    "A reward that is not finite prints as null. A call that runs longer than 1 s (sched-v0's\n"
    "\"mode\":\"network\" scores every layer) prints a progress line on stderr every 2 s\n"
    "(10 s when stderr is not a terminal; HWGYM_PROGRESS_S=<seconds> sets it).\n";

int hwcli_eval(int argc, char **argv) {
    const char *ep = NULL, *to = NULL, *cfgtext = NULL, *acttext = NULL, *pos[1];
    hwcli_opt opts[] = {{"--endpoint", &ep, NULL}, {"--timeout", &to, NULL}, {"--config", &cfgtext, NULL},
                        {"--action", &acttext, NULL}, {"--point", &acttext, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err;
    long long tms = HWCLI_DEFAULT_TIMEOUT_MS;
    if (to && hwcli_int_arg(to, "--timeout", 1, 86400000, &tms, &err)) return hwcli_fail("eval", 2, "%s", err.msg);
    if (!acttext) return hwcli_fail("eval", 2, "missing --action (the design point as JSON; see hwgym eval --help)");
    json_t *cfg, *act;
    if (hwcli_json_arg(cfgtext, "--config", &cfg, &err)) return hwcli_fail("eval", 2, "%s", err.msg);
    if (cfg && !json_is_object(cfg)) {
        json_decref(cfg);
        return hwcli_fail("eval", 2, "--config: expected a JSON object");
    }
    if (hwcli_json_arg(acttext, "--action", &act, &err)) {
        json_decref(cfg);
        return hwcli_fail("eval", 2, "%s", err.msg);
    }
    double reward = NAN;
    json_t *metrics = NULL;
    /* one evaluate can take seconds (sched-v0 "mode":"network" scores every layer): say so */
    char what[200];
    const char *model = json_string_value(json_object_get(cfg, "model")), *mode = json_string_value(json_object_get(cfg, "mode"));
    snprintf(what, sizeof what, "scoring one design point of %s%s%s%s%s%s", pos[0], model || mode ? " (" : "",
             model ? model : "", model && mode ? ", " : "", mode ? mode : "", model || mode ? ")" : "");
    hwcli_ticker *tick = hwcli_ticker_start("eval", what);
    if (ep) {
        hwc_client *c = hwc_connect(NULL, ep, (int)tms, &err);
        rc = c ? hwc_evaluate(c, NULL, pos[0], cfg, act, &reward, &metrics, &err) : -1;
        if (!c) hw_err_prefix(&err, "--endpoint");
        hwc_disconnect(c);
    } else {
        const hw_env_family *f;
        void *env = hw_env_create(pos[0], cfg, &f, &err);
        rc = -1;
        if (env) {
            if (!f->evaluate) {
                hw_fail(&err, HW_E_NOT_SUPPORTED, "%s has no one-shot evaluate", pos[0]);
            } else {
                metrics = json_object();
                rc = f->evaluate(env, act, &reward, metrics, &err);
                if (rc) hw_err_prefix(&err, "--action");
            }
            f->destroy(env);
        }
    }
    hwcli_ticker_stop(tick);
    json_decref(cfg);
    json_decref(act);
    if (rc) {
        json_decref(metrics);
        bool usage_err = err.code == HW_E_UNKNOWN_ENV || err.code == HW_E_BAD_CONFIG || err.code == HW_E_BAD_ACTION;
        return hwcli_fail("eval", usage_err ? 2 : 1, "%s: %s", hw_code_name(err.code), err.msg);
    }
    json_t *out = json_pack("{sssoso}", "env", pos[0], "reward", isfinite(reward) ? json_real(reward) : json_null(),
                            "metrics", metrics ? metrics : json_object());
    hwcli_print_json(out);
    json_decref(out);
    return 0;
}
