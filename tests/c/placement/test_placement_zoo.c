/* placement-v0 on the zoo workloads of the EGRL paper: node counts, properties of the
 * rectification (only demotes, always fits, idempotent), Algorithm 1's reward on resubmitted
 * rectified maps, the heuristic's exact speedup of 1, and user zoo files. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <string.h>

#include "pl_test.h"

static void check_fits(const pl_model *m, const uint8_t *map) {
    for (int k = 0; k < m->hw.n_mem; k++)
        for (int b = 0; b < m->hw.mem[k].banks; b++)
            for (int s = 0; s < m->n; s++)
                cr_assert_leq(pl_occupancy_bank(m, map, k, b, s), m->hw.mem[k].capacity, "memory %d bank %d step %d", k, b, s);
}

Test(placement_zoo, paper_node_counts) {
    const char *w[] = {"resnet50", "resnet101", "bert_base"};
    const int n[] = {57, 108, 376};
    for (int k = 0; k < 3; k++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"workload\":\"%s\"}", w[k]);
        const hw_env_family *f;
        void *env = pl_test_env(cfg, &f);
        const pl_model *m = pl_env_model(env);
        cr_assert_eq(m->n, n[k], "%s: %d nodes", w[k], m->n);
        cr_assert_eq(hw_space_numel(f->action_space(env)), 2 * n[k]);
        cr_assert_geq(m->ne, m->n - 1, "%s: connected", w[k]);
        /* edges go forward (execution order) */
        for (int e = 0; e < m->ne; e++) cr_assert_lt(m->edges[2 * e], m->edges[2 * e + 1]);
        /* ops left decreases along the order, weights left is the suffix sum */
        for (int i = 1; i < m->n; i++) {
            cr_assert_leq(m->feat[i * PL_NFEAT + 10], m->feat[(i - 1) * PL_NFEAT + 10]);
            cr_assert_leq(m->feat[i * PL_NFEAT + 11], m->feat[(i - 1) * PL_NFEAT + 11]);
        }
        f->destroy(env);
    }
}

Test(placement_zoo, resnet50_features_of_conv1) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"workload\":\"resnet50\"}", &f);
    const pl_model *m = pl_env_model(env);
    const float *x = m->feat;
    /* conv1: 7x7/2, pad 3, 3 -> 64 channels, 224 -> 112, int8 weights 64*3*7*7 = 9408 B */
    cr_assert_eq(x[0], 0);
    cr_assert_eq(x[1], 9408);
    cr_assert_eq(x[2], 224);
    cr_assert_eq(x[4], 3);
    cr_assert_eq(x[5], 112);
    cr_assert_eq(x[7], 64);
    cr_assert_eq(x[8], 224 * 224 * 3);
    cr_assert_eq(x[13], 7);
    cr_assert_eq(x[14], 7);
    cr_assert_eq(x[15], 2);
    cr_assert_eq(x[16], 3);
    cr_assert_eq(x[18], 1);
    f->destroy(env);
}

Test(placement_zoo, heuristic_speedup_exactly_one) {
    const char *w[] = {"resnet50", "resnet101", "bert_base"};
    for (int k = 0; k < 3; k++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"workload\":\"%s\"}", w[k]);
        const hw_env_family *f;
        void *env = pl_test_env(cfg, &f);
        const pl_model *m = pl_env_model(env);
        check_fits(m, m->heuristic);
        json_t *pt = json_string("heuristic"), *met = json_object();
        double r;
        cr_assert_eq(f->evaluate(env, pt, &r, met, NULL), 0);
        cr_assert_eq(r, 1.0, "%s: %.17g", w[k], r);
        cr_assert_eq(json_real_value(json_object_get(met, "eps")), 0.0);
        json_decref(pt);
        json_decref(met);
        f->destroy(env);
    }
}

Test(placement_zoo, rectification_properties_on_random_maps) {
    /* the default chip, and the nnp-i chip's 12 SRAM banks */
    const char *cfgs[] = {"{\"workload\":\"resnet50\"}", "{\"workload\":\"bert_base\"}",
                          "{\"workload\":\"bert_base\",\"hw\":\"nnp-i\"}"};
    for (int k = 0; k < 3; k++) {
        const char *cfg = cfgs[k];
        const hw_env_family *f;
        void *env = pl_test_env(cfg, &f);
        const pl_model *m = pl_env_model(env);
        pl_scratch *s = pl_scratch_new(m);
        uint8_t *map = malloc((size_t)m->nt), *rect = malloc((size_t)m->nt);
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, 11);
        for (int trial = 0; trial < 12; trial++) {
            /* biased towards the fast memories so that most maps overflow */
            for (int t = 0; t < m->nt; t++) map[t] = (uint8_t)(gsl_rng_uniform(rng) < 0.2 ? 0 : 1 + gsl_rng_uniform_int(rng, 2));
            pl_result r;
            pl_evaluate(m, map, s, &r);
            memcpy(rect, r.rectified, (size_t)m->nt);
            int64_t moved = 0;
            for (int t = 0; t < m->nt; t++) {
                cr_assert_leq(rect[t], map[t], "only demotes");
                if (rect[t] != map[t]) moved += m->bytes[t];
            }
            cr_assert_eq(moved, r.reassigned_bytes);
            cr_assert_float_eq(r.eps, (double)moved / (double)m->total_bytes, 1e-15);
            if (trial < 3) check_fits(m, rect);
            double lat = r.latency;
            /* resubmitting the rectified map: eps 0, same map, same latency */
            pl_evaluate(m, rect, s, &r);
            cr_assert_eq(r.eps, 0.0);
            cr_assert_eq(r.reassigned_bytes, 0);
            cr_assert_eq(memcmp(r.rectified, rect, (size_t)m->nt), 0);
            cr_assert_eq(r.latency, lat);
        }
        /* through the env: reward of the resubmitted map is its speedup */
        json_t *pt = json_string("random:3"), *met = json_object();
        double rw;
        cr_assert_eq(f->evaluate(env, pt, &rw, met, NULL), 0);
        cr_assert_lt(rw, 0.0, "a random map overflows SRAM/LLC");
        json_t *again = json_deep_copy(json_object_get(met, "rectified")), *met2 = json_object();
        double rw2;
        cr_assert_eq(f->evaluate(env, again, &rw2, met2, NULL), 0);
        cr_assert_eq(json_real_value(json_object_get(met2, "eps")), 0.0);
        cr_assert_float_eq(rw2, json_real_value(json_object_get(met, "rectified_speedup")), 1e-12);
        cr_assert_gt(rw2, 0.0);
        json_decref(pt);
        json_decref(met);
        json_decref(again);
        json_decref(met2);
        gsl_rng_free(rng);
        free(map);
        free(rect);
        pl_scratch_free(s);
        f->destroy(env);
    }
}

Test(placement_zoo, all_sram_beats_all_dram_when_it_fits) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"workload\":\"resnet50\",\"hw\":{\"memories\":["
                   "{\"name\":\"DRAM\",\"capacity_bytes\":34359738368,\"read_gbps\":68,\"latency_ns\":100},"
                   "{\"name\":\"LLC\",\"capacity_bytes\":25165824,\"read_gbps\":400,\"latency_ns\":20},"
                   "{\"name\":\"SRAM\",\"capacity_bytes\":67108864,\"read_gbps\":2000,\"latency_ns\":2}]}}",
                   &f);
    double rs, rd;
    json_t *s = json_string("all-SRAM"), *d = json_string("all-DRAM");
    cr_assert_eq(f->evaluate(env, s, &rs, NULL, NULL), 0);
    cr_assert_eq(f->evaluate(env, d, &rd, NULL, NULL), 0);
    cr_assert_gt(rs, 0, "all-SRAM fits a 64 MiB SRAM");
    cr_assert_gt(rs, rd);
    cr_assert_geq(rs, 1.0, "nothing beats everything in the fastest memory");
    json_decref(s);
    json_decref(d);
    f->destroy(env);
}

Test(placement_zoo, bert_embedding_reads_rows_only) {
    const hw_env_family *f;
    void *env = pl_test_env("{\"workload\":\"bert_base\"}", &f);
    const pl_model *m = pl_env_model(env);
    cr_assert_eq(m->g.nodes[0].op, 10 /* embed */);
    cr_assert_gt(m->bytes[0], 20000000, "the embedding table is tens of MB");
    cr_assert_eq(m->w_read[0], m->bytes[1], "a lookup reads one row per token");
    f->destroy(env);
}

Test(placement_zoo, unknown_workload_and_zoo_file) {
    json_t *cfg = json_loads("{\"workload\":\"resnet5000\"}", 0, NULL);
    hw_err err = {0};
    cr_assert_null(hw_env_create("placement-v0", cfg, NULL, &err));
    cr_assert(strstr(err.msg, "config.workload: unknown model 'resnet5000'"), "%s", err.msg);
    json_decref(cfg);
    cfg = json_loads("{\"zoo_file\":\"tests/data/placement/nope.csv\"}", 0, NULL);
    cr_assert_null(hw_env_create("placement-v0", cfg, NULL, &err));
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, "config.zoo_file"), "%s", err.msg);
    json_decref(cfg);
    cfg = json_loads("{\"zoo_file\":\"tests/data/placement/tiny_zoo.csv\",\"workload\":\"resnet50\"}", 0, NULL);
    cr_assert_null(hw_env_create("placement-v0", cfg, NULL, &err));
    cr_assert(strstr(err.msg, "give one of"), "%s", err.msg);
    json_decref(cfg);
    const hw_env_family *f;
    void *env = pl_test_env("{\"zoo_file\":\"tests/data/placement/tiny_zoo.csv\"}", &f);
    cr_assert_eq(pl_env_model(env)->n, 3);
    f->destroy(env);
}

/* The documented default hardware file is the built-in default: same baseline on BERT. */
Test(placement_zoo, default_hw_file_equals_builtin) {
    const hw_env_family *f;
    void *a = pl_test_env("{\"workload\":\"bert_base\"}", &f);
    void *b = pl_test_env("{\"workload\":\"bert_base\",\"hw_file\":\"tests/data/placement/nnpi_hw.json\"}", &f);
    cr_assert_eq(pl_env_model(a)->baseline, pl_env_model(b)->baseline);
    cr_assert_eq(memcmp(pl_env_model(a)->heuristic, pl_env_model(b)->heuristic, (size_t)pl_env_model(a)->nt), 0);
    f->destroy(a);
    f->destroy(b);
}
