/* The headroom bounds (envs/placement/placement_bound.h) on hand-computed cases.
 *
 * chain3 (tests/data/placement/chain3*.json; see test_placement_chain.c): heuristic 970 ns.
 * Capacity-free, each node on its own:
 *   l0: the graph input is read from DRAM (100 B / 0.5 = 200 ns, latency 100) whatever the map:
 *       300 ns (w0 on chip);
 *   l1: w1, a0, a1 in SRAM: 30 + 2 + 6 = 38 < compute 600 -> 600 + 1 = 601 ns;
 *   l2: w2, a1, a2 in SRAM: 5 + 3 + 1 = 9 < compute 15 -> 15 + 1 = 16 ns;
 *   917 ns -> capacity_free = 970 / 917.
 * With capacities: w1 (3000 B) cannot be in the 1500 B SRAM, so l1 >= 600 + 10 (LLC latency):
 * the best valid map is w0 LLC, a0 SRAM, w1 LLC, a1 SRAM, w2 SRAM, a2 SRAM (LLC 4000 B, SRAM
 * at most 1000 B) with 300 + 610 + 16 = 926 ns. The bound must not fall below 970 / 926. */
#include <criterion/criterion.h>
#include <math.h>

#include "placement/placement_bound.h"
#include "pl_test.h"

#define CHAIN_CFG "{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw_file\":\"tests/data/placement/chain3_hw.json\"}"

Test(placement_bound, chain3_by_hand) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG, &f);
    const pl_model *m = pl_env_model(env);
    pl_bound b;
    cr_assert_eq(pl_bound_compute(m, 2000, &b), 0);
    cr_assert_float_eq(b.baseline, 970e-9, 1e-15);
    cr_assert_float_eq(b.free_latency, 917e-9, 1e-15);
    cr_assert_float_eq(b.capacity_free, 970.0 / 917.0, 1e-12);
    cr_assert_leq(b.aware_latency, 926e-9 * (1 + 1e-12), "aware %g ns", b.aware_latency * 1e9);
    cr_assert_geq(b.aware_latency, 917e-9 * (1 - 1e-12));
    cr_assert_geq(b.capacity_aware, 970.0 / 926.0 - 1e-12);
    cr_assert_leq(b.capacity_aware, b.capacity_free + 1e-12);
    /* the multipliers are worth something here: w1 alone forces 9 ns */
    cr_assert_geq(b.aware_latency, 926e-9 - 1e-12, "aware %g ns", b.aware_latency * 1e9);
    /* no iterations: only the size rule */
    cr_assert_eq(pl_bound_compute(m, 0, &b), 0);
    cr_assert_eq(b.iterations, 0);
    cr_assert_float_eq(b.aware_latency, 926e-9, 1e-15);
    f->destroy(env);
}

/* One fc node: 1 B graph input (DRAM, 2 ns + 100 ns latency), 3000 B of weights, 1 B out, 100
 * MACs (0.1 ns). The heuristic puts the output in SRAM and the weights in the LLC (3000 > 1500):
 * max(300 LLC, 2 DRAM) + 100 = 400 ns. Capacity-free, the weights go to SRAM: 30 + 100 = 130 ns.
 * The weights never fit the SRAM, so the heuristic is optimal and capacity_aware is exactly 1. */
Test(placement_bound, heuristic_proved_optimal) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"graph\":{\"name\":\"one\",\"nodes\":[{\"name\":\"l0\",\"op\":\"fc\",\"inputs\":[],\"ifm\":[1,1,1],"
                   "\"ofm\":[1,1,1],\"weights\":3000,\"ops\":100}]},"
                   "\"hw_file\":\"tests/data/placement/chain3_hw.json\"}",
                   &f);
    const pl_model *m = pl_env_model(env);
    pl_bound b;
    cr_assert_eq(pl_bound_compute(m, 100, &b), 0);
    cr_assert_float_eq(b.baseline, 400e-9, 1e-15);
    cr_assert_float_eq(b.free_latency, 130e-9, 1e-15);
    cr_assert_float_eq(b.capacity_free, 400.0 / 130.0, 1e-12);
    cr_assert_float_eq(b.capacity_aware, 1.0, 1e-12);
    f->destroy(env);
}

/* The bounds hold on the zoo: the heuristic's own map is valid, so capacity_aware >= 1, and no
 * bound is below a valid map's speedup (here the heuristic and a few random rectified maps). */
Test(placement_bound, zoo_bounds_are_sound) {
    const char *hw[] = {"nnpi-like", "nnp-i"};
    for (int h = 0; h < 2; h++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "{\"workload\":\"resnet50\",\"hw\":\"%s\"}", hw[h]);
        const hw_env_family *f;
        void *env = pl_test_env(cfg, &f);
        const pl_model *m = pl_env_model(env);
        pl_bound b;
        cr_assert_eq(pl_bound_compute(m, 500, &b), 0);
        cr_assert_geq(b.capacity_aware, 1.0 - 1e-12, "%s", hw[h]);
        cr_assert_leq(b.capacity_aware, b.capacity_free + 1e-12, "%s", hw[h]);
        pl_scratch *s = pl_scratch_new(m);
        uint8_t *map = malloc((size_t)m->nt);
        unsigned x = 12345;
        for (int r = 0; r < 20; r++) {
            for (int t = 0; t < m->nt; t++) {
                x = x * 1103515245u + 12345u;
                map[t] = (uint8_t)((x >> 16) % 3);
            }
            pl_result res;
            pl_evaluate(m, map, s, &res);
            cr_assert_leq(m->baseline / res.latency, b.capacity_aware + 1e-12, "%s map %d", hw[h], r);
        }
        free(map);
        pl_scratch_free(s);
        f->destroy(env);
    }
}
