/* cmd_spaces.c - `hwgym spaces ENV [--config JSON|@file] [--endpoint EP]`. */
#include <stdio.h>

#include "cli.h"
#include "hwgym_client.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym spaces ENV [--config JSON|@file] [--endpoint EP] [--timeout MS]\n"
    "Prints {\"env\", \"action_space\", \"observation_space\"} as JSON: Gymnasium spaces with\n"
    "parameter names and categorical labels (PROTOCOL.md \"Spaces\"). The env is built in this\n"
    "process from the config (default: all defaults), or asked of the server at --endpoint.\n";

int hwcli_spaces(int argc, char **argv) {
    const char *ep = NULL, *to = NULL, *cfgtext = NULL, *pos[1];
    hwcli_opt opts[] = {{"--endpoint", &ep, NULL}, {"--timeout", &to, NULL}, {"--config", &cfgtext, NULL}, {NULL, NULL, NULL}};
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
    hwcli_print_json(out);
    json_decref(out);
    return 0;
}
