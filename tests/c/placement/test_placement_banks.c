/* placement-v0 with banked memories (per-engine SRAMs) and the "nnp-i" preset.
 *
 * The chain of tests/data/placement/chain3.json (see test_placement_chain.c) on the chip of
 * chain3_hw.json, except that the SRAM is 2 banks of 1500 B, each at 100/50 B/ns. Node i's
 * tensors live in bank i mod 2: l0 and l2 in bank 0, l1 in bank 1.
 *   tensors  w0 1000, a0 200, w1 3000, a1 300, w2 500, a2 50
 *   liveness a0 [0,1], a1 [1,2], a2 [2,2]; weights always
 *   compute  25 / 600 / 15 ns (1000 MAC/ns) */
#include <criterion/criterion.h>
#include <string.h>

#include "pl_test.h"

#define HW_BANKED(MACS, BANKS)                                                                                        \
    "{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"name\":\"banked\",\"compute\":{\"engines\":1,"     \
    "\"freq_ghz\":1,\"macs_per_cycle\":" MACS ",\"vector_ops_per_cycle\":1},\"memories\":["                           \
    "{\"name\":\"DRAM\",\"capacity_bytes\":1000000000,\"read_gbps\":0.5,\"latency_ns\":100},"                          \
    "{\"name\":\"LLC\",\"capacity_bytes\":4000,\"read_gbps\":10,\"write_gbps\":5,\"latency_ns\":10},"                  \
    "{\"name\":\"SRAM\",\"capacity_bytes\":1500,\"read_gbps\":100,\"write_gbps\":50,\"latency_ns\":1,\"banks\":" BANKS \
    "}]}}"

static const uint8_t ALL_SRAM[6] = {2, 2, 2, 2, 2, 2};

Test(placement_banks, bank_affinity_and_occupancy) {
    const hw_env_family *f;
    void *env = pl_test_env(HW_BANKED("1000", "2"), &f);
    const pl_model *m = pl_env_model(env);
    cr_assert_eq(m->hw.mem[2].banks, 2);
    cr_assert_eq(pl_bank(m, 0, 2), 0);
    cr_assert_eq(pl_bank(m, 3, 2), 1);
    cr_assert_eq(pl_bank(m, 5, 2), 0);
    cr_assert_eq(pl_bank(m, 3, 1), 0); /* the LLC has one bank */
    /* all-SRAM, step 1: bank 0 holds w0 + w2 + a0 = 1700, bank 1 holds w1 + a1 = 3300 */
    cr_assert_eq(pl_occupancy_bank(m, ALL_SRAM, 2, 0, 1), 1700);
    cr_assert_eq(pl_occupancy_bank(m, ALL_SRAM, 2, 1, 1), 3300);
    cr_assert_eq(pl_occupancy(m, ALL_SRAM, 2, 1), 5000);
    f->destroy(env);
}

Test(placement_banks, rectify_per_bank_by_hand) {
    const hw_env_family *f;
    void *env = pl_test_env(HW_BANKED("1000", "2"), &f);
    const pl_model *m = pl_env_model(env);
    pl_scratch *s = pl_scratch_new(m);
    pl_result r;
    pl_evaluate(m, ALL_SRAM, s, &r);
    /* bank 0: W = w0 + w2 = 1500; t=0 a0 makes 1700, over 200 -> smallest covering is a0 (200);
     * t=2 a2 makes 1550, over 50 -> a2. bank 1: W = 3000, over 1500 at t=0 -> w1 (the only
     * candidate); a1 then fits. The LLC (w1, a0, a2: at most 3200 B) fits. */
    const uint8_t want[6] = {2, 1, 1, 2, 2, 1};
    for (int t = 0; t < 6; t++) cr_assert_eq(r.rectified[t], want[t], "tensor %d: %d", t, r.rectified[t]);
    cr_assert_eq(r.reassigned_bytes, 3250);
    cr_assert_eq(r.n_reassigned, 3);
    cr_assert_eq(r.peak[2], 1500); /* bank 0: w0 + w2 */
    cr_assert_eq(r.weights_in[2], 1500);
    /* latency of the rectified map:
     *   l0: SRAM b0 1000/100 = 10, DRAM input 100/0.5 = 200, LLC 200/5 = 40 -> 200 + 100 = 300
     *   l1: LLC 3000/10 + 200/10 = 320, SRAM b1 300/50 = 6; compute 600 -> 600 + 10 = 610
     *   l2: SRAM b0 500/100 = 5, SRAM b1 300/100 = 3, LLC 50/5 = 10; compute 15 -> 15 + 10 = 25 */
    double nt[3];
    double lat = pl_latency(m, want, nt);
    cr_assert_float_eq(nt[0], 300e-9, 1e-15);
    cr_assert_float_eq(nt[1], 610e-9, 1e-15);
    cr_assert_float_eq(nt[2], 25e-9, 1e-15);
    cr_assert_float_eq(lat, 935e-9, 1e-15);
    cr_assert_float_eq(r.latency, 935e-9, 1e-15);
    /* resubmitting the rectified map changes nothing */
    pl_evaluate(m, want, s, &r);
    cr_assert_eq(r.reassigned_bytes, 0);
    pl_scratch_free(s);
    f->destroy(env);
}

Test(placement_banks, heuristic_fills_each_bank) {
    const hw_env_family *f;
    void *env = pl_test_env(HW_BANKED("1000", "2"), &f);
    const pl_model *m = pl_env_model(env);
    /* activations: a0 (b0), a1 (b1), a2 (b0) all fit; bank peaks 200 / 300. Weights: w0 (b0)
     * 200 + 1000 fits; w1 (b1) 300 + 3000 > 1500 -> LLC (3000); w2 (b0) 1200 + 500 > 1500 -> LLC */
    const uint8_t want[6] = {2, 2, 1, 2, 1, 2};
    for (int t = 0; t < 6; t++) cr_assert_eq(m->heuristic[t], want[t], "tensor %d", t);
    /* l0 300, l1 610, l2: LLC 500/10 = 50, SRAM b1 3, SRAM b0 1 -> 60 */
    cr_assert_float_eq(m->baseline, 970e-9, 1e-15);
    f->destroy(env);
}

Test(placement_banks, banks_transfer_in_parallel) {
    /* fast compute (1e6 MAC/ns): l2 with w2 (b0), a1 (b1) and a2 (b0) in SRAM:
     * two banks: b0 500/100 + 50/50 = 6, b1 300/100 = 3 -> 6 + 1 = 7 ns;
     * one bank:  500/100 + 300/100 + 50/50 = 9 -> 10 ns */
    const uint8_t map[6] = {0, 0, 0, 2, 2, 2};
    const hw_env_family *f;
    void *env = pl_test_env(HW_BANKED("1000000", "2"), &f);
    cr_assert_float_eq(pl_node_time(pl_env_model(env), map, 2), 7e-9, 1e-15);
    f->destroy(env);
    env = pl_test_env(HW_BANKED("1000000", "1"), &f);
    cr_assert_float_eq(pl_node_time(pl_env_model(env), map, 2), 10e-9, 1e-15);
    f->destroy(env);
}

Test(placement_banks, nnpi_preset) {
    pl_hw hw;
    hw_err err = {0};
    cr_assert_eq(pl_hw_preset("nnp-i", "hw", &hw, &err), 0);
    cr_assert_str_eq(hw.name, "nnp-i");
    cr_assert_eq(hw.n_mem, 3);
    cr_assert_eq(hw.mem[2].banks, 12);
    cr_assert_eq(hw.mem[2].capacity, 4LL << 20);
    cr_assert_float_eq(hw.mem[2].read_bw * 12, 6.8e12, 1);
    cr_assert_eq(hw.mem[1].capacity, 24LL << 20);
    cr_assert_float_eq(hw.mem[1].read_bw, 680e9, 1);
    cr_assert_float_eq(hw.mem[0].read_bw, 67.2e9, 1);
    cr_assert_eq(hw.engines, 12);
    cr_assert_float_eq(hw.macs_per_cycle, 4096, 1e-9);
    /* the default is still the single-SRAM chip, also reachable by name */
    pl_hw d, byname;
    pl_hw_default(&d);
    cr_assert_eq(pl_hw_preset("nnpi-like", "hw", &byname, &err), 0);
    cr_assert_eq(memcmp(&d, &byname, sizeof d), 0);
    cr_assert_eq(d.mem[2].banks, 1);
    /* a preset plus overrides; the JSON round trip keeps the banks */
    json_t *j = json_loads("{\"preset\":\"nnp-i\",\"compute\":{\"engines\":6}}", 0, NULL);
    cr_assert_eq(pl_hw_from_json(j, "hw", &hw, &err), 0, "%s", err.msg);
    json_decref(j);
    cr_assert_eq(hw.engines, 6);
    cr_assert_eq(hw.mem[2].banks, 12);
    j = pl_hw_to_json(&hw);
    pl_hw back;
    cr_assert_eq(pl_hw_from_json(j, "hw", &back, &err), 0, "%s", err.msg);
    json_decref(j);
    cr_assert_eq(back.mem[2].banks, 12);
}

Test(placement_banks, nnpi_heuristic_is_valid_on_the_zoo) {
    const char *w[] = {"resnet50", "resnet101", "bert_base"};
    for (int i = 0; i < 3; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "{\"workload\":\"%s\",\"hw\":\"nnp-i\"}", w[i]);
        const hw_env_family *f;
        void *env = pl_test_env(cfg, &f);
        const pl_model *m = pl_env_model(env);
        pl_scratch *s = pl_scratch_new(m);
        pl_result r;
        pl_evaluate(m, m->heuristic, s, &r);
        cr_assert_eq(r.reassigned_bytes, 0, "%s", w[i]);
        cr_assert_float_eq(r.latency, m->baseline, 1e-15, "%s", w[i]);
        for (int k = 1; k < 3; k++) cr_assert_leq(r.peak[k], m->hw.mem[k].capacity, "%s mem %d", w[i], k);
        pl_scratch_free(s);
        f->destroy(env);
    }
}

Test(placement_banks, errors_name_the_field) {
    pl_test_env_err("{\"hw\":\"nope\"}", "config.hw: unknown preset 'nope'");
    pl_test_env_err("{\"hw\":{\"preset\":\"nope\"}}", "config.hw.preset: unknown preset");
    pl_test_env_err("{\"hw\":7}", "config.hw: expected an object or a preset name");
    pl_test_env_err(HW_BANKED("1000", "0"), "config.hw.memories[2].banks: 0 out of range");
    pl_test_env_err(HW_BANKED("1000", "17"), "config.hw.memories[2].banks: 17 out of range");
    pl_test_env_err("{\"hw\":{\"memories\":[{\"name\":\"D\",\"capacity_bytes\":1000000000,\"read_gbps\":1,\"banks\":2},"
           "{\"name\":\"S\",\"capacity_bytes\":10,\"read_gbps\":2}]}}",
           "config.hw.memories[0].banks: 2 out of range [1, 1]");
}
