/* placement-v0's compiler rectification against a brute-force oracle. The library rectifies
 * every bank of a memory in one pass over the steps (placement_model.c, rectify_mem); the
 * oracle below applies the rule of docs/placement.md literally, one bank after the other,
 * recounting the bank's occupancy from scratch before every demotion. Both must give the same
 * map, byte for byte, on the zoo workloads, on the default chip, on nnp-i's 12 SRAM banks and
 * on a chip whose LLC is banked too, for random maps of several mixes. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <string.h>

#include "pl_test.h"

/* The demotion rule as documented: memories from the fastest to memory 1, each bank on its own,
 * steps in execution order; while the bank overflows at step t, demote the smallest tensor
 * resident in it at t whose size covers the overflow (ties: the lower tensor id), or else the
 * largest one (ties: the higher id, i.e. the last in (bytes, id) order). */
static void oracle_rectify(const pl_model *m, uint8_t *out) {
    for (int mem = m->hw.n_mem - 1; mem >= 1; mem--)
        for (int b = 0; b < m->hw.mem[mem].banks; b++)
            for (int t = 0; t < m->n; t++)
                for (;;) {
                    int64_t over = pl_occupancy_bank(m, out, mem, b, t) - m->hw.mem[mem].capacity;
                    if (over <= 0) break;
                    int fit = -1, big = -1;
                    for (int x = 0; x < m->nt; x++) {
                        if (out[x] != mem || pl_bank(m, x, mem) != b || !pl_alive(m, x, t) || m->bytes[x] == 0) continue;
                        if (m->bytes[x] >= over) {
                            if (fit < 0 || m->bytes[x] < m->bytes[fit]) fit = x;
                        } else if (big < 0 || m->bytes[x] >= m->bytes[big]) {
                            big = x;
                        }
                    }
                    int x = fit >= 0 ? fit : big;
                    cr_assert_geq(x, 0, "memory %d bank %d step %d overflows with nothing to demote", mem, b, t);
                    out[x] = (uint8_t)(mem - 1);
                }
}

/* nnp-i's figures with a 3-bank LLC of 3 MiB each and 5 SRAM banks of 1 MiB each: two banked
 * memories, bank counts that do not divide each other, and overflow in both. */
#define HW_TWO_BANKED                                                                                              \
    "{\"preset\":\"nnp-i\",\"memories\":["                                                                       \
    "{\"name\":\"DRAM\",\"capacity_bytes\":34359738368,\"read_gbps\":67.2,\"latency_ns\":100},"                   \
    "{\"name\":\"LLC\",\"capacity_bytes\":3145728,\"read_gbps\":680,\"write_gbps\":680,\"latency_ns\":20,\"banks\":3}," \
    "{\"name\":\"SRAM\",\"capacity_bytes\":1048576,\"read_gbps\":566.7,\"write_gbps\":566.7,\"latency_ns\":2,\"banks\":5}]}"

/* Random maps: kind 0 uniform over the memories, 1 mostly the fastest memory, 2 mostly the two
 * fastest, 3 everything in the fastest memory. */
static void random_map(const pl_model *m, gsl_rng *rng, int kind, uint8_t *map) {
    const int M = m->hw.n_mem;
    for (int t = 0; t < m->nt; t++) {
        double u = gsl_rng_uniform(rng);
        int k = (int)gsl_rng_uniform_int(rng, (unsigned long)M);
        if (kind == 1) k = u < 0.8 ? M - 1 : k;
        else if (kind == 2) k = u < 0.9 ? M - 1 - (int)gsl_rng_uniform_int(rng, 2) : k;
        else if (kind == 3) k = M - 1;
        map[t] = (uint8_t)k;
    }
}

static void check_against_oracle(const char *cfg, int maps_per_kind) {
    const hw_env_family *f;
    void *env = pl_test_env(cfg, &f);
    const pl_model *m = pl_env_model(env);
    pl_scratch *s = pl_scratch_new(m);
    uint8_t *map = malloc((size_t)m->nt), *want = malloc((size_t)m->nt), *got = malloc((size_t)m->nt);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 27);
    int demoted_somewhere = 0;
    for (int kind = 0; kind < 4; kind++)
        for (int k = 0; k < maps_per_kind; k++) {
            random_map(m, rng, kind, map);
            memcpy(want, map, (size_t)m->nt);
            oracle_rectify(m, want);
            int n_moved = -1;
            int64_t moved = pl_rectify(m, map, got, s, &n_moved);
            int64_t want_moved = 0;
            int want_n = 0;
            for (int t = 0; t < m->nt; t++) {
                cr_assert_eq(got[t], want[t], "%s: kind %d map %d tensor %d: %d, oracle %d", cfg, kind, k, t, got[t], want[t]);
                if (want[t] != map[t]) {
                    want_moved += m->bytes[t];
                    want_n++;
                }
            }
            cr_assert_eq(moved, want_moved, "%s: reassigned bytes", cfg);
            cr_assert_eq(n_moved, want_n, "%s: reassigned tensors", cfg);
            /* in place (out == map) the same map and counts */
            memcpy(got, map, (size_t)m->nt);
            cr_assert_eq(pl_rectify(m, got, got, s, &n_moved), want_moved, "%s: reassigned bytes in place", cfg);
            cr_assert_eq(n_moved, want_n, "%s: reassigned tensors in place", cfg);
            cr_assert_eq(memcmp(got, want, (size_t)m->nt), 0, "%s: the map rectified in place", cfg);
            /* pl_evaluate rectifies the same way */
            pl_result r;
            pl_evaluate(m, map, s, &r);
            cr_assert_eq(memcmp(r.rectified, want, (size_t)m->nt), 0, "%s: pl_evaluate's map", cfg);
            /* its occupancy (running sums over the steps) against a recount of every step and bank */
            for (int mem = 0; mem < m->hw.n_mem; mem++) {
                int64_t peak = 0, win = 0;
                for (int b = 0; b < m->hw.mem[mem].banks; b++)
                    for (int st = 0; st < m->n; st++) {
                        int64_t o = pl_occupancy_bank(m, want, mem, b, st);
                        if (o > peak) peak = o;
                    }
                for (int i = 0; i < m->n; i++) win += want[2 * i] == mem ? m->bytes[2 * i] : 0;
                cr_assert_eq(r.peak[mem], peak, "%s: memory %d peak %lld, recounted %lld", cfg, mem, (long long)r.peak[mem], (long long)peak);
                cr_assert_eq(r.weights_in[mem], win, "%s: memory %d weights", cfg, mem);
            }
            demoted_somewhere |= want_n > 0;
        }
    cr_assert(demoted_somewhere, "%s: the maps never overflowed, the comparison proves nothing", cfg);
    gsl_rng_free(rng);
    free(map);
    free(want);
    free(got);
    pl_scratch_free(s);
    f->destroy(env);
}

Test(placement_rectify, one_pass_equals_bank_by_bank_on_the_default_chip) {
    check_against_oracle("{\"workload\":\"resnet50\"}", 4);
    check_against_oracle("{\"workload\":\"bert_base\"}", 3);
}

Test(placement_rectify, one_pass_equals_bank_by_bank_on_nnp_i, .timeout = 120) {
    /* (ResNet-50 fits nnp-i's SRAM banks whatever the map: nothing to compare there) */
    check_against_oracle("{\"workload\":\"resnet101\",\"hw\":\"nnp-i\"}", 4);
    check_against_oracle("{\"workload\":\"bert_base\",\"hw\":\"nnp-i\"}", 4);
}

Test(placement_rectify, one_pass_equals_bank_by_bank_with_two_banked_memories, .timeout = 120) {
    check_against_oracle("{\"workload\":\"resnet101\",\"hw\":" HW_TWO_BANKED "}", 4);
    check_against_oracle("{\"workload\":\"bert_base\",\"hw\":" HW_TWO_BANKED "}", 3);
}

/* With one bank per memory (the default chip) the latency and the occupancy take faster paths
 * (placement_model.c one_bank): the same random maps scored with them and with the general
 * per-(memory, bank) paths give the same latency, per-node times, peaks and resident weights,
 * bit for bit. */
static void check_one_bank_paths(const char *cfg) {
    const hw_env_family *f;
    void *env = pl_test_env(cfg, &f);
    pl_model *m = (pl_model *)pl_env_model(env); /* the test flips the path switch */
    cr_assert(m->one_bank, "%s: expected one bank per memory", cfg);
    pl_scratch *s1 = pl_scratch_new(m), *s0 = pl_scratch_new(m);
    uint8_t *map = malloc((size_t)m->nt);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 41);
    for (int kind = 0; kind < 4; kind++)
        for (int k = 0; k < 25; k++) {
            random_map(m, rng, kind, map);
            pl_result r1, r0;
            m->one_bank = 1;
            pl_evaluate(m, map, s1, &r1);
            m->one_bank = 0;
            pl_evaluate(m, map, s0, &r0);
            m->one_bank = 1;
            cr_assert_eq(memcmp(&r1.latency, &r0.latency, sizeof r1.latency), 0, "%s: kind %d map %d: latency %.17g against %.17g", cfg,
                         kind, k, r1.latency, r0.latency);
            cr_assert_eq(memcmp(s1->node_time, s0->node_time, sizeof(double) * (size_t)m->n), 0, "%s: per-node times", cfg);
            cr_assert_eq(memcmp(r1.peak, r0.peak, sizeof(int64_t) * (size_t)m->hw.n_mem), 0, "%s: peaks", cfg);
            cr_assert_eq(memcmp(r1.weights_in, r0.weights_in, sizeof(int64_t) * (size_t)m->hw.n_mem), 0, "%s: resident weights", cfg);
            for (int i = 0; i < m->n; i++) {
                double a = pl_node_time(m, r1.rectified, i), b = pl_node_time_masked(m, r1.rectified, i, ~0u);
                cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "%s: node %d time", cfg, i);
            }
        }
    gsl_rng_free(rng);
    free(map);
    pl_scratch_free(s1);
    pl_scratch_free(s0);
    f->destroy(env);
}

Test(placement_rectify, one_bank_paths_equal_the_general_paths) {
    check_one_bank_paths("{\"workload\":\"resnet50\"}");
    check_one_bank_paths("{\"workload\":\"bert_base\"}");
}
