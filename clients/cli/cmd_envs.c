/* cmd_envs.c - `hwgym envs [--endpoint EP]`: the env ids and one-line summaries as JSON. */
#include <stdio.h>

#include "cli.h"
#include "hwgym_client.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym envs [--endpoint EP] [--timeout MS]\n"
    "Lists the envs as JSON [{\"id\", \"summary\"}, ...]: those built into this binary, or with\n"
    "--endpoint those served by the hwgym-server at EP (tcp://host:port or ipc://path).\n";

int hwcli_envs(int argc, char **argv) {
    const char *ep = NULL, *to = NULL;
    hwcli_opt opts[] = {{"--endpoint", &ep, NULL}, {"--timeout", &to, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, NULL, 0, 0, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err;
    long long tms = HWCLI_DEFAULT_TIMEOUT_MS;
    if (to && hwcli_int_arg(to, "--timeout", 1, 86400000, &tms, &err)) return hwcli_fail("envs", 2, "%s", err.msg);
    json_t *list;
    if (ep) {
        hwc_client *c = hwc_connect(NULL, ep, (int)tms, &err);
        if (!c) return hwcli_fail("envs", 1, "--endpoint: %s", err.msg);
        rc = hwc_envs(c, &list, &err);
        hwc_disconnect(c);
        if (rc) return hwcli_fail("envs", 1, "%s: %s", hw_code_name(err.code), err.msg);
    } else {
        list = json_array();
        for (int i = 0; i < hw_registry_count(); i++) {
            const hw_env_family *f = hw_registry_at(i);
            json_array_append_new(list, json_pack("{ssss}", "id", f->id, "summary", f->summary ? f->summary : ""));
        }
    }
    hwcli_print_json(list);
    json_decref(list);
    return 0;
}
