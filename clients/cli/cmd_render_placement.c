/* cmd_render_placement.c - `hwgym render --env placement-v0`: an SVG memory map of a mapping
 * next to the native heuristic's (EGRL paper, Figure 7). Thin wrapper: the drawing is
 * pl_render_svg (envs/placement/placement_render.c); the env runs in this process. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "placement/placement_env.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym render --env placement-v0 [--config JSON|@file] [--action JSON|@file] [--out FILE.svg]\n"
    "                    [--title TEXT]\n"
    "Draws the memory map of a mapping (one band per tensor, coloured by memory) under the native\n"
    "compiler heuristic's, the compiler's rectification when the mapping does not fit, the memory\n"
    "transition matrix and each memory's occupancy over the inference, as SVG.\n"
    "  --config  env config (docs/placement.md), e.g. '{\"workload\":\"resnet50\"}'\n"
    "  --action  the mapping: a JSON list of 2N memory indices or names, or \"heuristic\",\n"
    "            \"all-dram\", \"random\", \"random:SEED\" (default heuristic; bare words need no quotes)\n"
    "  --out     output file (default: stdout)\n"
    "The mapping's metrics (latency, speedup, eps) go to stderr as JSON.\n";

int hwcli_render_placement(int argc, char **argv) {
    const char *env_id = NULL, *cfgtext = NULL, *acttext = NULL, *out = NULL, *title = NULL;
    hwcli_opt opts[] = {{"--env", &env_id, NULL},   {"--config", &cfgtext, NULL}, {"--action", &acttext, NULL},
                        {"--point", &acttext, NULL}, {"--out", &out, NULL},       {"--title", &title, NULL},
                        {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, NULL, 0, 0, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err = {0};
    json_t *cfg = NULL, *act = NULL;
    if (hwcli_json_arg(cfgtext, "--config", &cfg, &err)) return hwcli_fail("render", 2, "%s", err.msg);
    if (cfg && !json_is_object(cfg)) {
        json_decref(cfg);
        return hwcli_fail("render", 2, "--config: expected a JSON object");
    }
    /* a bare policy word (heuristic, all-dram, random:7) needs no JSON quotes here */
    if (acttext && acttext[0] != '@' && acttext[0] != '[' && acttext[0] != '{' && acttext[0] != '"')
        act = json_string(acttext);
    else if (acttext && hwcli_json_arg(acttext, "--action", &act, &err)) {
        json_decref(cfg);
        return hwcli_fail("render", 2, "%s", err.msg);
    }
    if (!act) act = json_string("heuristic");
    const hw_env_family *f;
    void *env = hw_env_create("placement-v0", cfg, &f, &err);
    json_decref(cfg);
    if (!env) {
        json_decref(act);
        return hwcli_fail("render", 2, "%s: %s", hw_code_name(err.code), err.msg);
    }
    const pl_model *m = pl_env_model(env);
    uint8_t *map = calloc((size_t)m->nt, 1);
    char policy[64];
    double reward;
    json_t *metrics = json_object();
    rc = 0;
    if (!map || pl_parse_point(m, act, map, policy, sizeof policy, &err) ||
        f->evaluate(env, act, &reward, metrics, &err)) {
        rc = hwcli_fail("render", 2, "--action: %s", err.msg);
    } else {
        FILE *o = out ? fopen(out, "w") : stdout;
        if (!o) {
            rc = hwcli_fail("render", 1, "--out: cannot write '%s'", out);
        } else {
            char t[160];
            snprintf(t, sizeof t, "%s: %s vs heuristic", m->g.name, policy);
            if (pl_render_svg(m, map, title ? title : t, o)) rc = hwcli_fail("render", 1, "writing the SVG failed");
            if (out && fclose(o)) rc = hwcli_fail("render", 1, "--out: cannot write '%s'", out);
            json_object_del(metrics, "rectified");
            json_object_set_new(metrics, "reward", json_real(reward));
            json_dumpf(metrics, stderr, JSON_COMPACT | JSON_REAL_PRECISION(10));
            fputc('\n', stderr);
        }
    }
    free(map);
    json_decref(metrics);
    json_decref(act);
    f->destroy(env);
    return rc;
}
