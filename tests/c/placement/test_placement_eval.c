/* placement-v0's evaluation (placement_eval.c) against recounts from first principles, over
 * sequences of random maps evaluated one after the other with one scratch, as the env's steps
 * do. The evaluation loads every channel (memory, bank) from the map in one pass, moves each
 * demoted tensor's bytes between channels as it goes, takes the occupancy from those channels
 * and the latency from per-node read lists; here:
 *  - every node's time and the latency equal pl_node_time_masked's (the per-channel path that
 *    keys each transfer by (memory, bank)), bit for bit, on the rectified map and on the raw one;
 *  - the peaks, resident weights and non-empty tensor counts per memory equal a recount of the
 *    rectified map step by step and bank by bank (pl_occupancy_bank), and pl_occupancy_of's
 *    equal the same recount of the raw map;
 *  - the result of a map evaluated after a sequence of others equals its evaluation with a fresh
 *    scratch (nothing of the previous step leaks into the next).
 * Configs: one bank per memory (ResNet-50 with a graph input; BERT-base, more than 64 nodes, an
 * embedding), nnp-i's 12 SRAM banks, a banked LLC and SRAM, and the hand-built chain. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <string.h>

#include "pl_test.h"

#define HW_TWO_BANKED                                                                                              \
    "{\"preset\":\"nnp-i\",\"memories\":["                                                                       \
    "{\"name\":\"DRAM\",\"capacity_bytes\":34359738368,\"read_gbps\":67.2,\"latency_ns\":100},"                   \
    "{\"name\":\"LLC\",\"capacity_bytes\":3145728,\"read_gbps\":680,\"write_gbps\":600,\"latency_ns\":20,\"banks\":3}," \
    "{\"name\":\"SRAM\",\"capacity_bytes\":1048576,\"read_gbps\":566.7,\"write_gbps\":500,\"latency_ns\":30,\"banks\":5}]}"

/* one bank per memory, four memories, latencies not in speed order, writes slower than reads */
#define HW_FOUR                                                                                                    \
    "{\"memories\":["                                                                                              \
    "{\"name\":\"DRAM\",\"capacity_bytes\":34359738368,\"read_gbps\":68,\"latency_ns\":100},"                         \
    "{\"name\":\"HBM\",\"capacity_bytes\":33554432,\"read_gbps\":300,\"write_gbps\":250,\"latency_ns\":120},"         \
    "{\"name\":\"LLC\",\"capacity_bytes\":8388608,\"read_gbps\":400,\"write_gbps\":300,\"latency_ns\":20},"          \
    "{\"name\":\"SRAM\",\"capacity_bytes\":2097152,\"read_gbps\":2000,\"write_gbps\":1500,\"latency_ns\":50}]}"

/* kind 0: uniform; 1: 80% the fastest memory; 2: 90% the two fastest; 3: everything in one
 * random memory */
static void random_map(const pl_model *m, gsl_rng *rng, int kind, uint8_t *map) {
    const int M = m->hw.n_mem, all = (int)gsl_rng_uniform_int(rng, (unsigned long)M);
    for (int t = 0; t < m->nt; t++) {
        double u = gsl_rng_uniform(rng);
        int k = (int)gsl_rng_uniform_int(rng, (unsigned long)M);
        if (kind == 1) k = u < 0.8 ? M - 1 : k;
        else if (kind == 2) k = u < 0.9 ? M - 1 - (int)gsl_rng_uniform_int(rng, 2) : k;
        else if (kind == 3) k = all;
        map[t] = (uint8_t)k;
    }
}

static void check_latency(const char *cfg, const pl_model *m, const uint8_t *map, double lat, const double *node_time) {
    double sum = 0;
    for (int i = 0; i < m->n; i++) {
        double want = pl_node_time_masked(m, map, i, ~0u), one = pl_node_time(m, map, i);
        cr_assert_eq(memcmp(&node_time[i], &want, sizeof want), 0, "%s: node %d time %.17g, per channel %.17g", cfg, i, node_time[i],
                     want);
        cr_assert_eq(memcmp(&one, &want, sizeof want), 0, "%s: pl_node_time of node %d", cfg, i);
        sum += want;
    }
    cr_assert_eq(memcmp(&lat, &sum, sizeof sum), 0, "%s: latency %.17g, summed %.17g", cfg, lat, sum);
}

/* the occupancy keys of r against a recount of `map` */
static void check_occupancy(const char *cfg, const pl_model *m, const uint8_t *map, const pl_result *r) {
    for (int k = 0; k < m->hw.n_mem; k++) {
        int64_t peak = 0, win = 0;
        int nw = 0, na = 0;
        for (int b = 0; b < m->hw.mem[k].banks; b++)
            for (int t = 0; t < m->n; t++) {
                int64_t o = pl_occupancy_bank(m, map, k, b, t);
                peak = o > peak ? o : peak;
            }
        for (int x = 0; x < m->nt; x++) {
            if (map[x] != k || m->bytes[x] == 0) continue;
            if (x & 1) na++;
            else nw++, win += m->bytes[x];
        }
        cr_assert_eq(r->peak[k], peak, "%s: memory %d peak %lld, recounted %lld", cfg, k, (long long)r->peak[k], (long long)peak);
        cr_assert_eq(r->weights_in[k], win, "%s: memory %d weights %lld, recounted %lld", cfg, k, (long long)r->weights_in[k],
                     (long long)win);
        cr_assert_eq(r->weight_tensors[k], nw, "%s: memory %d weight tensors %d, recounted %d", cfg, k, r->weight_tensors[k], nw);
        cr_assert_eq(r->act_tensors[k], na, "%s: memory %d activation tensors %d, recounted %d", cfg, k, r->act_tensors[k], na);
    }
}

static void check_maps(const char *cfg, const pl_model *m, int maps) {
    pl_scratch *s = pl_scratch_new(m), *fresh_s;
    uint8_t *map = malloc((size_t)m->nt);
    double *nt_raw = malloc(sizeof(double) * (size_t)m->n);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 29);
    int demoted = 0;
    for (int q = 0; q < maps; q++) {
        random_map(m, rng, q % 4, map);
        pl_result r, fresh;
        pl_evaluate(m, map, s, &r);
        demoted += r.n_reassigned > 0;
        check_latency(cfg, m, r.rectified, r.latency, s->node_time);
        check_occupancy(cfg, m, r.rectified, &r);
        /* the raw map: latency and occupancy without rectification */
        double lat_raw = pl_latency(m, map, nt_raw);
        check_latency(cfg, m, map, lat_raw, nt_raw);
        pl_result raw;
        pl_occupancy_of(m, map, s, &raw);
        check_occupancy(cfg, m, map, &raw);
        /* the same map with a fresh scratch (r.rectified is s->map, which pl_occupancy_of left alone) */
        fresh_s = pl_scratch_new(m);
        pl_evaluate(m, map, fresh_s, &fresh);
        cr_assert_eq(memcmp(fresh.rectified, r.rectified, (size_t)m->nt), 0, "%s: map %d rectified after a sequence", cfg, q);
        cr_assert(fresh.latency == r.latency && fresh.reassigned_bytes == r.reassigned_bytes && fresh.n_reassigned == r.n_reassigned,
                  "%s: map %d scored after a sequence", cfg, q);
        cr_assert_eq(memcmp(fresh.peak, r.peak, sizeof r.peak[0] * (size_t)m->hw.n_mem), 0, "%s: map %d peaks after a sequence", cfg, q);
        pl_scratch_free(fresh_s);
    }
    cr_assert_gt(demoted, maps / 4, "%s: %d of %d maps needed the compiler: too few to test the channels' moves", cfg, demoted, maps);
    gsl_rng_free(rng);
    free(map);
    free(nt_raw);
    pl_scratch_free(s);
}

static void check_sequence(const char *cfg, int maps) {
    const hw_env_family *f;
    void *env = pl_test_env(cfg, &f);
    check_maps(cfg, pl_env_model(env), maps);
    f->destroy(env);
}

Test(placement_eval, one_bank_per_memory) {
    check_sequence("{\"workload\":\"resnet50\"}", 60);
    check_sequence("{\"workload\":\"bert_base\"}", 24);
    check_sequence("{\"workload\":\"resnet50\",\"hw\":" HW_FOUR "}", 40);
}

Test(placement_eval, banked_memories, .timeout = 120) {
    check_sequence("{\"workload\":\"resnet101\",\"hw\":\"nnp-i\"}", 24);
    check_sequence("{\"workload\":\"bert_base\",\"hw\":" HW_TWO_BANKED "}", 16);
}

Test(placement_eval, hand_built_chain) {
    check_sequence("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw_file\":\"tests/data/placement/chain3_hw.json\"}", 200);
}

/* By hand, on the chain (tests/data/placement/chain3.json: w0 1000, a0 200, w1 3000, a1 300,
 * w2 500, a2 50; a0 alive at steps 0-1, a1 at 1-2, a2 at 2) with an LLC of 3400 B: the map puts
 * w0, a0, a1, w2 in the SRAM (1500 B) and w1, a2 in the LLC, whose own tensors fit at once
 * (3000 + 50). The SRAM overflows at step 0 by a0's 200 B (a0 is the smallest that covers it)
 * and at step 1 by a1's 300 B: both go to the LLC, which then holds 3000 + 200 + 300 at step 1,
 * 100 B too many: a0, the smallest that covers it, goes on to DRAM. An LLC skipped because of its
 * own tensors alone would keep a0. */
Test(placement_eval, demoted_activations_can_overflow_the_slower_memory) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw\":{\"name\":\"tight\",\"compute\":{"
                            "\"engines\":1,\"freq_ghz\":1,\"macs_per_cycle\":1000,\"vector_ops_per_cycle\":1},\"memories\":["
                            "{\"name\":\"DRAM\",\"capacity_bytes\":1000000000,\"read_gbps\":0.5,\"latency_ns\":100},"
                            "{\"name\":\"LLC\",\"capacity_bytes\":3400,\"read_gbps\":10,\"write_gbps\":5,\"latency_ns\":10},"
                            "{\"name\":\"SRAM\",\"capacity_bytes\":1500,\"read_gbps\":100,\"write_gbps\":50,\"latency_ns\":1}]}}",
                            &f);
    const pl_model *m = pl_env_model(env);
    const uint8_t map[6] = {2, 2, 1, 2, 2, 1}, want[6] = {2, 0, 1, 1, 2, 1};
    pl_scratch *s = pl_scratch_new(m);
    pl_result r;
    pl_evaluate(m, map, s, &r);
    for (int t = 0; t < 6; t++) cr_assert_eq(r.rectified[t], want[t], "tensor %d: memory %d, expected %d", t, r.rectified[t], want[t]);
    cr_assert_eq(r.n_reassigned, 2, "a0 and a1 moved");
    cr_assert_eq(r.reassigned_bytes, 500);
    check_occupancy("chain3, tight LLC", m, r.rectified, &r);
    cr_assert_eq(r.peak[1], 3350, "the LLC's fullest step (2: w1, a1, a2)");
    pl_scratch_free(s);
    f->destroy(env);
}

/* A graph built in C with empty tensors (no graph file can give an activation of 0 bytes: its
 * ofm must be at least 1): a pool with no weights whose output is empty, read by an fc; an
 * eltwise that reads it and the first conv. Empty tensors are never demoted, never counted as
 * tensors of a memory, and still touch their memory (its latency). */
Test(placement_eval, empty_tensors) {
    pl_hw hw;
    pl_hw_default(&hw);
    hw.mem[1].capacity = 4000;
    hw.mem[2].capacity = 1500;
    pl_graph g = {.name = "empties", .n = 4, .nodes = calloc(4, sizeof(pl_node))};
    const int64_t ofm[4][3] = {{10, 10, 3}, {0, 10, 3}, {1, 1, 500}, {1, 1, 500}}, w[4] = {1000, 0, 3000, 0};
    for (int i = 0; i < 4; i++) {
        pl_node *d = &g.nodes[i];
        snprintf(d->name, sizeof d->name, "n%d", i);
        d->op = i == 0 ? 0 : i == 1 ? 4 : i == 2 ? 2 : 5; /* conv, pool, fc, eltwise */
        memcpy(d->ofm, ofm[i], sizeof d->ofm);
        memcpy(d->ifm, i ? ofm[i - 1] : ofm[0], sizeof d->ifm);
        d->weights = w[i];
        d->ops = 1000 * (i + 1);
        d->groups = d->kx = d->ky = d->stride = d->dilation = d->batch = 1;
        d->n_in = i == 3 ? 2 : 1;
        d->in[0] = i - 1;
        d->in[1] = 0;
    }
    hw_err err;
    pl_model *m = pl_model_build(&g, &hw, PL_FEAT_RAW, &err);
    cr_assert_not_null(m, "%s", err.msg);
    cr_assert_eq(m->bytes[3], 0, "n1's output is empty");
    cr_assert_eq(m->bytes[2], 0, "n1 has no weights");
    check_maps("empties", m, 200);
    pl_graph_free(&g);
    pl_model_free(m);
}
