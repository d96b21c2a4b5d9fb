/* cmd_placement_bound.c - `hwgym placement-bound`: the capacity-free and capacity-aware upper
 * bounds of the speedup over the native heuristic for a placement-v0 workload and chip
 * (docs/placement.md "Headroom bounds"). Thin wrapper: the bounds are pl_bound_compute
 * (envs/placement/placement_bound.c); the env runs in this process. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "placement/placement_bound.h"
#include "placement/placement_env.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym placement-bound [--config JSON|@file] [--iterations N]\n"
    "Prints, as JSON, upper bounds of the speedup any mapping can reach over the native compiler\n"
    "heuristic on placement-v0 for that workload and chip:\n"
    "  capacity_free   every node picks its tensors' memories on its own, no capacities\n"
    "  capacity_aware  the same with every memory bank's capacity at every step (Lagrangian)\n"
    "  --config      env config (docs/placement.md), e.g. '{\"workload\":\"resnet50\",\"hw\":\"nnp-i\"}'\n"
    "  --iterations  subgradient steps for capacity_aware (default 2000, 0..100000)\n";

int hwcli_placement_bound(int argc, char **argv) {
    const char *cfgtext = NULL, *itext = NULL;
    hwcli_opt opts[] = {{"--config", &cfgtext, NULL}, {"--iterations", &itext, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, NULL, 0, 0, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err = {0};
    long long iters = 2000;
    if (itext && hwcli_int_arg(itext, "--iterations", 0, 100000, &iters, &err))
        return hwcli_fail("placement-bound", 2, "%s", err.msg);
    json_t *cfg = NULL;
    if (hwcli_json_arg(cfgtext, "--config", &cfg, &err)) return hwcli_fail("placement-bound", 2, "%s", err.msg);
    if (cfg && !json_is_object(cfg)) {
        json_decref(cfg);
        return hwcli_fail("placement-bound", 2, "--config: expected a JSON object");
    }
    const hw_env_family *f;
    void *env = hw_env_create("placement-v0", cfg, &f, &err);
    json_decref(cfg);
    if (!env) return hwcli_fail("placement-bound", 2, "%s: %s", hw_code_name(err.code), err.msg);
    const pl_model *m = pl_env_model(env);
    pl_bound b;
    if (pl_bound_compute(m, (int)iters, &b)) {
        f->destroy(env);
        return hwcli_fail("placement-bound", 1, "out of memory");
    }
    json_t *o = json_pack("{s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:i, s:i}", "workload", m->g.name, "hw",
                          m->hw.name, "nodes", m->n, "baseline_latency_us", b.baseline * 1e6, "free_latency_us",
                          b.free_latency * 1e6, "aware_latency_us", b.aware_latency * 1e6, "capacity_free",
                          b.capacity_free, "capacity_aware", b.capacity_aware, "iterations", b.iterations,
                          "inputs_dropped", b.inputs_dropped);
    hwcli_print_json(o);
    json_decref(o);
    f->destroy(env);
    return 0;
}
