/* placement-v0 on the hand-built 3-layer chain (tests/data/placement/chain3*.json).
 *
 * Chain (element_bytes 1): l0 -> l1 -> l2, graph input 100 B.
 *   tensors  w0 1000, a0 200, w1 3000, a1 300, w2 500, a2 50   (total 5050 B)
 *   liveness a0 [0,1], a1 [1,2], a2 [2,2]; weights always
 *   compute  25000 / 600000 / 15000 MACs at 1000 MAC/ns -> 25, 600, 15 ns
 * Memories: DRAM 0.5/0.5 B/ns, 100 ns; LLC 4000 B, 10/5 B/ns, 10 ns; SRAM 1500 B, 100/50 B/ns, 1 ns.
 * Node time = max(compute, max_mem(read/rbw + write/wbw)) + max latency of memories touched. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "pl_test.h"

#define CHAIN_CFG "{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw_file\":\"tests/data/placement/chain3_hw.json\""

static const uint8_t ALL_SRAM[6] = {2, 2, 2, 2, 2, 2};
static const uint8_t ALL_DRAM[6] = {0, 0, 0, 0, 0, 0};

Test(placement_chain, tensors_and_liveness) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    cr_assert_eq(m->n, 3);
    cr_assert_eq(m->nt, 6);
    const int64_t bytes[6] = {1000, 200, 3000, 300, 500, 50};
    for (int t = 0; t < 6; t++) cr_assert_eq(m->bytes[t], bytes[t], "tensor %d", t);
    cr_assert_eq(m->total_bytes, 5050);
    /* weights alive everywhere */
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < 3; i++) cr_assert(pl_alive(m, 2 * i, s));
    /* activations from producer to last consumer */
    const int alive[3][3] = {{1, 1, 0}, {0, 1, 1}, {0, 0, 1}};
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 3; s++) cr_assert_eq(pl_alive(m, 2 * i + 1, s), alive[i][s], "act %d step %d", i, s);
    cr_assert_eq(m->last_use[0], 1);
    cr_assert_eq(m->last_use[1], 2);
    cr_assert_eq(m->last_use[2], 2);
    cr_assert_eq(m->ne, 2);
    cr_assert_eq(m->edges[0], 0);
    cr_assert_eq(m->edges[1], 1);
    cr_assert_eq(m->edges[2], 1);
    cr_assert_eq(m->edges[3], 2);
    f->destroy(env);
}

Test(placement_chain, capacity_violations) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    /* all-SRAM: 4500 B of weights plus the live activations, against 1500 B */
    cr_assert_eq(pl_occupancy(m, ALL_SRAM, 2, 0), 4700);
    cr_assert_eq(pl_occupancy(m, ALL_SRAM, 2, 1), 5000);
    cr_assert_eq(pl_occupancy(m, ALL_SRAM, 2, 2), 4850);
    cr_assert_eq(pl_occupancy(m, ALL_SRAM, 1, 1), 0);
    /* the heuristic fits everywhere */
    for (int k = 0; k < 3; k++)
        for (int s = 0; s < 3; s++) cr_assert_leq(pl_occupancy(m, m->heuristic, k, s), m->hw.mem[k].capacity);
    f->destroy(env);
}

Test(placement_chain, rectified_map_and_eps) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    pl_scratch *s = pl_scratch_new(m);
    pl_result r;
    pl_evaluate(m, ALL_SRAM, s, &r);
    /* SRAM pass: t=0 over by 3200 -> none covers it, largest (w1) to LLC; over by 200 -> smallest
     * covering is a0 (200); t=1 over by 300 -> a1; t=2 over by 50 -> a2. LLC then fits. */
    const uint8_t want[6] = {2, 1, 1, 1, 2, 1};
    for (int t = 0; t < 6; t++) cr_assert_eq(r.rectified[t], want[t], "tensor %d: %d", t, r.rectified[t]);
    cr_assert_eq(r.reassigned_bytes, 3550);
    cr_assert_eq(r.n_reassigned, 4);
    cr_assert_float_eq(r.eps, 3550.0 / 5050.0, 1e-15);
    cr_assert_eq(r.peak[2], 1500);
    cr_assert_eq(r.peak[1], 3500);
    cr_assert_eq(r.weights_in[2], 1500);
    /* the rectified map fits everywhere */
    for (int k = 0; k < 3; k++)
        for (int st = 0; st < 3; st++) cr_assert_leq(pl_occupancy(m, want, k, st), m->hw.mem[k].capacity);
    /* all-DRAM needs no change */
    pl_evaluate(m, ALL_DRAM, s, &r);
    cr_assert_eq(r.reassigned_bytes, 0);
    cr_assert_eq(r.eps, 0.0);
    pl_scratch_free(s);
    f->destroy(env);
}

Test(placement_chain, heuristic_map) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    /* activations first: a0, a1, a2 all fit in SRAM (peak 500); then weights in order:
     * w0 fills SRAM to 1500, w1 -> LLC (3000), w2 -> LLC (3500) */
    const uint8_t want[6] = {2, 2, 1, 2, 1, 2};
    for (int t = 0; t < 6; t++) cr_assert_eq(m->heuristic[t], want[t], "tensor %d", t);
    f->destroy(env);
}

Test(placement_chain, latency_by_hand) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    double nt[3];
    /* all-DRAM: l0 reads 1000+100, writes 200 at 0.5 B/ns = 2600 > 25 -> +100 = 2700
     *           l1 reads 3000+200, writes 300 = 7000 > 600 -> 7100
     *           l2 reads 500+300, writes 50 = 1700 > 15 -> 1800 */
    double lat = pl_latency(m, ALL_DRAM, nt);
    cr_assert_float_eq(nt[0], 2700e-9, 1e-15);
    cr_assert_float_eq(nt[1], 7100e-9, 1e-15);
    cr_assert_float_eq(nt[2], 1800e-9, 1e-15);
    cr_assert_float_eq(lat, 11600e-9, 1e-15);
    /* heuristic {SRAM,SRAM,LLC,SRAM,LLC,SRAM}:
     *   l0: SRAM 1000/100+200/50 = 14, DRAM input 100/0.5 = 200 -> 200 + 100 = 300
     *   l1: LLC 3000/10 = 300, SRAM 200/100+300/50 = 8; compute 600 -> 600 + 10 = 610
     *   l2: LLC 500/10 = 50, SRAM 300/100+50/50 = 4 -> 50 + 10 = 60 */
    lat = pl_latency(m, m->heuristic, nt);
    cr_assert_float_eq(nt[0], 300e-9, 1e-15);
    cr_assert_float_eq(nt[1], 610e-9, 1e-15);
    cr_assert_float_eq(nt[2], 60e-9, 1e-15);
    cr_assert_float_eq(lat, 970e-9, 1e-15);
    cr_assert_float_eq(m->baseline, 970e-9, 1e-15);
    /* rectified all-SRAM {SRAM,LLC,LLC,LLC,SRAM,LLC}:
     *   l0: SRAM 10, DRAM 200, LLC 200/5 = 40 -> 200 + 100 = 300
     *   l1: LLC (3000+200)/10 + 300/5 = 380 < 600 -> 610
     *   l2: SRAM 5, LLC 300/10 + 50/5 = 40 < 15? no: 40 -> 40 + 10 = 50 */
    const uint8_t rect[6] = {2, 1, 1, 1, 2, 1};
    lat = pl_latency(m, rect, nt);
    cr_assert_float_eq(nt[0], 300e-9, 1e-15);
    cr_assert_float_eq(nt[1], 610e-9, 1e-15);
    cr_assert_float_eq(nt[2], 50e-9, 1e-15);
    cr_assert_float_eq(lat, 960e-9, 1e-15);
    f->destroy(env);
}

Test(placement_chain, reward_follows_algorithm_1) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    hw_obs obs;
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, NULL, NULL), 0);
    /* invalid: reward = -eps, info reports the rectified map */
    int64_t a[6] = {2, 2, 2, 2, 2, 2};
    hw_act act = {6, a, NULL};
    hw_step_out out;
    json_t *info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
    cr_assert_float_eq(out.reward, -3550.0 / 5050.0, 1e-12);
    cr_assert(out.truncated && !out.terminated, "one step per episode by default (a time limit: truncated)");
    cr_assert(json_is_false(json_object_get(info, "valid")));
    cr_assert_float_eq(json_real_value(json_object_get(info, "speedup")), 0.0, 0);
    json_t *rect = json_object_get(info, "rectified");
    const int want[6] = {2, 1, 1, 1, 2, 1};
    for (int t = 0; t < 6; t++) cr_assert_eq(json_integer_value(json_array_get(rect, (size_t)t)), want[t]);
    cr_assert_float_eq(json_real_value(json_object_get(info, "latency_us")), 0.960, 1e-12);
    json_t *occ = json_object_get(json_object_get(info, "occupancy"), "SRAM");
    cr_assert_eq(json_integer_value(json_object_get(occ, "peak_bytes")), 1500);
    cr_assert_eq(json_integer_value(json_object_get(occ, "capacity_bytes")), 1500);
    /* the observation carries the rectified map */
    cr_assert_eq(out.obs.n, 3);
    cr_assert_str_eq(out.obs.keys[1], "mapping");
    const int64_t *om = out.obs.arr[1].data;
    for (int t = 0; t < 6; t++) cr_assert_eq(om[t], want[t]);
    json_decref(info);
    /* a step after the end needs a reset */
    hw_err err = {0};
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    /* the rectified map resubmitted: valid, reward = speedup = 970/960 */
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    int64_t b[6] = {2, 1, 1, 1, 2, 1};
    act.i = b;
    info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
    cr_assert_float_eq(json_real_value(json_object_get(info, "eps")), 0.0, 0);
    cr_assert_float_eq(out.reward, 970.0 / 960.0, 1e-12);
    cr_assert(json_is_true(json_object_get(info, "valid")));
    json_decref(info);
    f->destroy(env);
}

Test(placement_chain, heuristic_speedup_is_exactly_one) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    double r;
    json_t *pt = json_string("heuristic"), *met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &r, met, NULL), 0);
    cr_assert_eq(r, 1.0);
    cr_assert(json_is_true(json_object_get(met, "feasible")));
    cr_assert_eq(json_real_value(json_object_get(met, "speedup")), 1.0);
    json_decref(pt);
    json_decref(met);
    f->destroy(env);
}

Test(placement_chain, all_sram_beats_all_dram_when_it_fits) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":["
                   "{\"name\":\"DRAM\",\"capacity_bytes\":1000000,\"read_gbps\":0.5,\"latency_ns\":100},"
                   "{\"name\":\"LLC\",\"capacity_bytes\":8000,\"read_gbps\":10,\"latency_ns\":10},"
                   "{\"name\":\"SRAM\",\"capacity_bytes\":6000,\"read_gbps\":100,\"latency_ns\":1}]}}",
                   &f);
    double rs, rd;
    json_t *s = json_string("all-sram"), *d = json_string("ALL-DRAM"), *ms = json_object(), *md = json_object();
    cr_assert_eq(f->evaluate(env, s, &rs, ms, NULL), 0);
    cr_assert_eq(f->evaluate(env, d, &rd, md, NULL), 0);
    cr_assert(json_is_true(json_object_get(ms, "feasible")), "all-SRAM (peak 5000 B) fits 6000 B");
    cr_assert(json_is_true(json_object_get(md, "feasible")));
    cr_assert_gt(rs, rd);
    cr_assert_lt(json_real_value(json_object_get(ms, "latency_us")), json_real_value(json_object_get(md, "latency_us")));
    json_decref(s);
    json_decref(d);
    json_decref(ms);
    json_decref(md);
    f->destroy(env);
}

Test(placement_chain, evaluate_point_forms) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const char *same[] = {"[2,1,1,1,2,1]", "[\"SRAM\",\"llc\",\"LLC\",\"LLC\",\"sram\",\"LLC\"]", "[[2,1],[1,1],[2,1]]",
                          "{\"mapping\":[2,1,1,1,2,1]}"};
    for (int k = 0; k < 4; k++) {
        json_t *pt = json_loads(same[k], 0, NULL);
        double r;
        hw_err err = {0};
        cr_assert_eq(f->evaluate(env, pt, &r, NULL, &err), 0, "%s: %s", same[k], err.msg);
        cr_assert_float_eq(r, 970.0 / 960.0, 1e-12, "%s", same[k]);
        json_decref(pt);
    }
    /* random is deterministic for a seed */
    double r1, r2, r3;
    json_t *p1 = json_string("random:7"), *p2 = json_loads("{\"policy\":\"random\",\"seed\":7}", 0, NULL);
    json_t *p3 = json_string("random:8");
    cr_assert_eq(f->evaluate(env, p1, &r1, NULL, NULL), 0);
    cr_assert_eq(f->evaluate(env, p2, &r2, NULL, NULL), 0);
    cr_assert_eq(f->evaluate(env, p3, &r3, NULL, NULL), 0);
    cr_assert_eq(r1, r2);
    json_decref(p1);
    json_decref(p2);
    json_decref(p3);
    /* bad points name the element */
    const char *bad[][2] = {{"[2,1,1,1,2,3]", "point[5] (l2.act)"},
                            {"[2,1,1]", "3 elements, expected 6"},
                            {"\"all-hbm\"", "unknown policy 'all-hbm'"},
                            {"[[2,1],[1,\"x\"],[2,1]]", "point[1][1] (l1.act)"},
                            {"\"random:x\"", "random:<seed>"}};
    for (int k = 0; k < 5; k++) {
        json_t *pt = json_loads(bad[k][0], JSON_DECODE_ANY, NULL);
        cr_assert(pt, "%s", bad[k][0]);
        double r;
        hw_err err = {0};
        cr_assert_eq(f->evaluate(env, pt, &r, NULL, &err), -1, "%s", bad[k][0]);
        cr_assert_eq(err.code, HW_E_BAD_ACTION);
        cr_assert(strstr(err.msg, bad[k][1]), "'%s' lacks '%s'", err.msg, bad[k][1]);
        json_decref(pt);
    }
    f->destroy(env);
}

Test(placement_chain, observation_and_features) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const hw_space *os = f->observation_space(env);
    cr_assert_eq(os->type, HW_SPACE_DICT);
    cr_assert_eq(os->nchild, 3);
    cr_assert_str_eq(os->keys[0], "edges");
    cr_assert_str_eq(os->keys[2], "node_features");
    const hw_space *as = f->action_space(env);
    cr_assert_eq(as->type, HW_SPACE_MULTIDISCRETE);
    cr_assert_eq(hw_space_numel(as), 6);
    cr_assert_str_eq(as->names[0], "l0.weights");
    cr_assert_str_eq(as->names[5], "l2.act");
    cr_assert_str_eq(as->labels[3][0], "DRAM");
    cr_assert_str_eq(as->labels[3][2], "SRAM");
    hw_obs obs;
    json_t *info = json_object();
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, info, NULL), 0);
    cr_assert_float_eq(json_real_value(json_object_get(info, "baseline_latency_us")), 0.970, 1e-12);
    json_decref(info);
    cr_assert_eq(obs.n, 3);
    cr_assert_eq(obs.arr[0].dtype, HW_DT_INT64);
    cr_assert_eq(obs.arr[0].shape[0], 2);
    cr_assert_eq(obs.arr[0].shape[1], 2);
    cr_assert_eq(obs.arr[2].dtype, HW_DT_FLOAT32);
    cr_assert_eq(obs.arr[2].shape[0], 3);
    cr_assert_eq(obs.arr[2].shape[1], PL_NFEAT);
    const float *x = obs.arr[2].data;
    /* l1 row: op fc(2), weight 3000 B, ifm 1x1x200, ofm 1x1x300, sizes, ops after = 15000,
     * weights from l1 on = 3500, fc: conv fields 0, batch 1 */
    const float want[PL_NFEAT] = {2, 3000, 1, 1, 200, 1, 1, 300, 200, 300, 15000, 3500, 0, 0, 0, 0, 0, 0, 1};
    for (int k = 0; k < PL_NFEAT; k++) cr_assert_eq(x[PL_NFEAT + k], want[k], "feature %s", pl_feature_names[k]);
    cr_assert_eq(x[10], 615000); /* l0: ops of l1 + l2 */
    cr_assert_eq(x[2 * PL_NFEAT + 10], 0);
    const int64_t *om = obs.arr[1].data;
    for (int t = 0; t < 6; t++) cr_assert_eq(om[t], 0, "initial mapping is all-DRAM");
    f->destroy(env);
}

Test(placement_chain, episode_steps_and_snapshot) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG ",\"episode_steps\":3}", &f);
    hw_obs obs;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    int64_t a[6] = {2, 2, 2, 2, 2, 2}, b[6] = {0, 0, 0, 0, 0, 0};
    hw_act act = {6, a, NULL};
    hw_step_out o1, o2;
    cr_assert_eq(f->step(env, &act, &o1, NULL, NULL), 0);
    cr_assert_not(o1.terminated || o1.truncated);
    void *snap = f->snapshot(env, NULL);
    act.i = b;
    cr_assert_eq(f->step(env, &act, &o1, NULL, NULL), 0);
    cr_assert_not(o1.terminated || o1.truncated);
    cr_assert_eq(((const int64_t *)o1.obs.arr[1].data)[0], 0);
    cr_assert_eq(f->restore(env, snap, NULL), 0);
    f->snapshot_free(snap);
    act.i = a;
    cr_assert_eq(f->step(env, &act, &o2, NULL, NULL), 0);
    cr_assert_eq(f->step(env, &act, &o2, NULL, NULL), 0);
    cr_assert(o2.truncated && !o2.terminated, "third step after restore ends the episode");
    f->destroy(env);
}

Test(placement_chain, step_before_reset_fails) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    int64_t a[6] = {0};
    hw_act act = {6, a, NULL};
    hw_step_out o;
    hw_err err = {0};
    cr_assert_eq(f->step(env, &act, &o, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    f->destroy(env);
}

Test(placement_chain, config_errors_name_the_field) {
    pl_test_env_err("{\"foo\":1}", "config.foo: unknown field");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/none.json\"}", "config.graph_file");
    pl_test_env_err(CHAIN_CFG ",\"episode_steps\":0}", "config.episode_steps");
    pl_test_env_err(CHAIN_CFG ",\"features\":\"cubic\"}", "config.features");
    pl_test_env_err("{\"graph\":{\"nodes\":[{\"name\":\"a\",\"op\":\"fc\",\"ifm\":[1,1,4],\"ofm\":[1,1,4]},"
           "{\"name\":\"b\",\"op\":\"fc\",\"ofm\":[1,1,4]}]}}",
           "config.graph.nodes[1].ifm: missing");
    pl_test_env_err("{\"graph\":{\"nodes\":[{\"name\":\"a\",\"op\":\"warp\",\"ifm\":[1,1,4],\"ofm\":[1,1,4]}]}}",
           "config.graph.nodes[0].op: unknown op 'warp'");
    pl_test_env_err("{\"graph\":{\"nodes\":[{\"name\":\"a\",\"op\":\"fc\",\"ifm\":[1,1,4],\"ofm\":[1,1,4],\"inputs\":[\"b\"]},"
           "{\"name\":\"b\",\"op\":\"fc\",\"ifm\":[1,1,4],\"ofm\":[1,1,4]}]}}",
           "config.graph.nodes[0].inputs[0]: 'b' is not an earlier node");
    pl_test_env_err("{\"graph\":{\"nodes\":[{\"name\":\"a\",\"op\":\"fc\",\"ifm\":[1,1,4],\"ofm\":[1,1,4],\"weights\":-3}]}}",
           "config.graph.nodes[0].weights");
    pl_test_env_err("{\"graph\":{\"nodes\":[{\"name\":\"a\",\"op\":\"fc\",\"ifm\":[1,1,4],\"ofm\":[1,1,4],\"colour\":1}]}}",
           "config.graph.nodes[0].colour: unknown field");
    pl_test_env_err("{\"graph\":{\"nodes\":[]}}", "config.graph.nodes");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":["
           "{\"name\":\"DRAM\",\"capacity_bytes\":1000000,\"read_gbps\":1},"
           "{\"name\":\"SRAM\",\"capacity_bytes\":100,\"read_gbps\":\"fast\"}]}}",
           "config.hw.memories[1].read_gbps: expected a number");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":["
           "{\"name\":\"DRAM\",\"read_gbps\":1},{\"name\":\"SRAM\",\"capacity_bytes\":100,\"read_gbps\":2}]}}",
           "config.hw.memories[0].capacity_bytes: missing");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"compute\":{\"engines\":0}}}",
           "config.hw.compute.engines");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":[{\"name\":\"DRAM\","
           "\"capacity_bytes\":10,\"read_gbps\":1}]}}",
           "config.hw.memories: expected an array of 2..8");
    /* the backing store must hold the peak of all-DRAM (4500 + 500 B) */
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":["
           "{\"name\":\"DRAM\",\"capacity_bytes\":4999,\"read_gbps\":1},"
           "{\"name\":\"SRAM\",\"capacity_bytes\":100,\"read_gbps\":2}]}}",
           "config.hw.memories[0].capacity_bytes");
    pl_test_env_err("{\"graph_file\":\"tests/data/placement/chain3.json\",\"graph\":{}}", "config.graph_file: give either");
}

Test(placement_chain, render_svg) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    const pl_model *m = pl_env_model(env);
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    cr_assert_eq(pl_render_svg(m, ALL_SRAM, "chain", o), 0);
    fclose(o);
    cr_assert(strstr(buf, "<svg"));
    cr_assert(strstr(buf, "</svg>"));
    cr_assert(strstr(buf, "rectified W"), "an invalid mapping also shows its rectification");
    /* 3 mappings x 6 tensors = 18 bands, each with a tooltip */
    int bands = 0;
    for (const char *p = buf; (p = strstr(p, "<title>")); p++) bands++;
    cr_assert_eq(bands, 18);
    free(buf);
    f->destroy(env);
}

Test(placement_chain, hw_json_round_trip_and_defaults) {
    pl_hw d, back;
    pl_hw_default(&d);
    cr_assert_eq(d.n_mem, 3);
    cr_assert_str_eq(d.mem[0].name, "DRAM");
    cr_assert_str_eq(d.mem[2].name, "SRAM");
    cr_assert_gt(d.mem[0].capacity, d.mem[1].capacity);
    cr_assert_gt(d.mem[1].capacity, d.mem[2].capacity);
    cr_assert_lt(d.mem[0].read_bw, d.mem[1].read_bw);
    cr_assert_lt(d.mem[1].read_bw, d.mem[2].read_bw);
    json_t *j = pl_hw_to_json(&d);
    hw_err err = {0};
    cr_assert_eq(pl_hw_from_json(j, "hw", &back, &err), 0, "%s", err.msg);
    json_decref(j);
    cr_assert_eq(back.n_mem, d.n_mem);
    for (int k = 0; k < d.n_mem; k++) {
        cr_assert_str_eq(back.mem[k].name, d.mem[k].name);
        cr_assert_eq(back.mem[k].capacity, d.mem[k].capacity);
        cr_assert_float_eq(back.mem[k].read_bw, d.mem[k].read_bw, 1e-3);
        cr_assert_float_eq(back.mem[k].latency, d.mem[k].latency, 1e-18);
    }
    cr_assert_eq(back.engines, 12);
    /* a partial object keeps the other defaults */
    j = json_loads("{\"compute\":{\"engines\":6}}", 0, NULL);
    cr_assert_eq(pl_hw_from_json(j, "hw", &back, &err), 0);
    json_decref(j);
    cr_assert_eq(back.engines, 6);
    cr_assert_eq(back.n_mem, 3);
    cr_assert_eq(back.mem[1].capacity, 24LL << 20);
    /* two memories: the action has two choices */
    const hw_env_family *f;
    void *env = pl_test_env("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"memories\":["
                   "{\"name\":\"HBM\",\"capacity_bytes\":100000,\"read_gbps\":1},"
                   "{\"name\":\"SPM\",\"capacity_bytes\":1200,\"read_gbps\":10}]}}",
                   &f);
    const hw_space *as = f->action_space(env);
    cr_assert_eq(as->nvec[0], 2);
    cr_assert_str_eq(as->labels[0][1], "SPM");
    json_t *pt = json_string("all-spm"), *met = json_object();
    double r;
    cr_assert_eq(f->evaluate(env, pt, &r, met, NULL), 0);
    /* SPM pass (cap 1200): t=0 4700 B, over 3500: nothing covers it -> largest w1 (3000);
     * over 500 -> smallest covering is w2 (500). t=1: w0 + a0 + a1 = 1500, over 300 -> a1.
     * t=2: w0 + a2 = 1050 fits. Reassigned 3000 + 300 + 500 = 3800 B. */
    cr_assert_float_eq(r, -3800.0 / 5050.0, 1e-12);
    json_t *rect = json_object_get(met, "rectified");
    const pl_model *m = pl_env_model(env);
    const int want[6] = {1, 1, 0, 0, 0, 1};
    uint8_t map[6];
    for (int t = 0; t < 6; t++) {
        map[t] = (uint8_t)json_integer_value(json_array_get(rect, (size_t)t));
        cr_assert_eq(map[t], want[t], "tensor %d", t);
    }
    for (int s = 0; s < 3; s++) cr_assert_leq(pl_occupancy(m, map, 1, s), 1200);
    json_decref(pt);
    json_decref(met);
    f->destroy(env);
}

Test(placement_chain, feature_scaling) {
    const hw_env_family *f;
    void *raw = pl_test_env(CHAIN_CFG "}", &f);
    void *lg = pl_test_env(CHAIN_CFG ",\"features\":\"log1p\"}", &f);
    void *nm = pl_test_env(CHAIN_CFG ",\"features\":\"normalized\"}", &f);
    const float *a = pl_env_model(raw)->feat, *b = pl_env_model(lg)->feat, *c = pl_env_model(nm)->feat;
    for (int i = 0; i < 3 * PL_NFEAT; i++) {
        cr_assert_float_eq(b[i], (float)log1p(a[i]), 1e-5);
        cr_assert_leq(c[i], 1.0f);
        cr_assert_geq(c[i], 0.0f);
    }
    cr_assert_float_eq(c[PL_NFEAT + 1], 1.0f, 1e-7, "l1 has the largest weights");
    cr_assert_float_eq(c[1], 1000.0f / 3000.0f, 1e-7);
    f->destroy(raw);
    f->destroy(lg);
    f->destroy(nm);
}

Test(placement_chain, invalid_reward_options) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG ",\"invalid_reward_scale\":5}", &f);
    json_t *pt = json_string("all-sram");
    double r;
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
    cr_assert_float_eq(r, -5 * 3550.0 / 5050.0, 1e-12);
    f->destroy(env);
    env = pl_test_env(CHAIN_CFG ",\"invalid_reward\":-1}", &f);
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
    cr_assert_eq(r, -1.0);
    json_t *h = json_string("heuristic");
    cr_assert_eq(f->evaluate(env, h, &r, NULL, NULL), 0);
    cr_assert_eq(r, 1.0, "valid mappings keep the speedup");
    json_decref(h);
    json_decref(pt);
    f->destroy(env);
    pl_test_env_err(CHAIN_CFG ",\"invalid_reward\":\"zero\"}", "config.invalid_reward");
}

/* Every observation array has the dtype and shape of its Dict entry, also for a one-node graph
 * (no edges). */
Test(placement_chain, observation_matches_space_single_node) {
    const char *cfgs[] = {CHAIN_CFG "}",
                          "{\"graph\":{\"name\":\"one\",\"nodes\":[{\"name\":\"only\",\"op\":\"conv\",\"ifm\":[8,8,3],"
                          "\"ofm\":[8,8,4],\"weights\":108,\"kernel\":[3,3],\"pad\":1}]}}"};
    for (int c = 0; c < 2; c++) {
        const hw_env_family *f;
        void *env = pl_test_env(cfgs[c], &f);
        const hw_space *os = f->observation_space(env);
        hw_obs obs;
        cr_assert_eq(f->reset(env, NULL, NULL, &obs, NULL, NULL), 0);
        cr_assert_eq(obs.n, os->nchild);
        for (int k = 0; k < obs.n; k++) {
            const hw_space *ch = os->child[k];
            cr_assert_str_eq(obs.keys[k], os->keys[k]);
            cr_assert_eq(obs.arr[k].dtype, ch->dtype, "%s", obs.keys[k]);
            cr_assert_eq(obs.arr[k].ndim, ch->ndim, "%s", obs.keys[k]);
            for (int d = 0; d < ch->ndim; d++) cr_assert_eq(obs.arr[k].shape[d], ch->shape[d], "%s dim %d", obs.keys[k], d);
        }
        json_t *sj = hw_space_to_json(os);
        cr_assert(sj, "space serialises");
        json_decref(sj);
        json_t *pt = json_string("all-sram");
        double r;
        cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
        if (c == 1) {
            cr_assert_eq(pl_env_model(env)->ne, 0);
            /* 108 B of weights and 256 B of activation fit the 4 MiB SRAM: the heuristic's map */
            cr_assert_eq(r, 1.0);
            cr_assert_eq(pl_env_model(env)->heuristic[0], 2);
            cr_assert_eq(pl_env_model(env)->heuristic[1], 2);
        }
        json_decref(pt);
        f->destroy(env);
    }
}

/* An out-of-range memory index names the first bad position (negative, or past the last memory),
 * and the env keeps stepping after it. */
Test(placement_chain, bad_memory_index_names_its_position) {
    const hw_env_family *f;
    void *env = pl_test_env(CHAIN_CFG "}", &f);
    hw_obs obs;
    hw_err err = {0};
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, NULL, &err), 0);
    hw_step_out o;
    int64_t bad1[6] = {0, 1, 2, 0, -1, 7}, bad2[6] = {3, 0, 0, 0, 0, 0}, good[6] = {0, 1, 2, 0, 1, 2};
    hw_act a1 = {6, bad1, NULL}, a2 = {6, bad2, NULL}, a3 = {6, good, NULL};
    cr_assert_eq(f->step(env, &a1, &o, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    cr_assert(strstr(err.msg, "action[4]: -1 out of range [0, 2]"), "%s", err.msg);
    cr_assert_eq(f->step(env, &a2, &o, NULL, &err), -1);
    cr_assert(strstr(err.msg, "action[0]: 3 out of range [0, 2]"), "%s", err.msg);
    cr_assert_eq(f->step(env, &a3, &o, NULL, &err), 0, "%s", err.msg);
    f->destroy(env);
}
