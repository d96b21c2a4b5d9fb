/* test_algos.c - every algorithm finds diag-v0's optimum (dims 3, choices 6: 216 points, reward
 * 1.0 only at the hidden target), budgets are exact, one objective call per generation holds at
 * most --batch points, and runs are deterministic for a seed. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "helpers.h"

static void cfg_for(int tseed, char *buf, size_t cap) {
    snprintf(buf, cap, "{\"dims\":3,\"choices\":6,\"target_seed\":%d}", tseed);
}

/* Runs `algo` on 4 targets x seeds; asserts best >= want on every one. */
static void finds(hs_algo algo, int64_t budget, int batch, double want) {
    for (int k = 0; k < 4; k++) {
        char cfg[128];
        cfg_for(k + 1, cfg, sizeof cfg);
        hs_result res;
        trace tr;
        run_local(algo, "diag-v0", cfg, (uint64_t)(11 + k), budget, batch, NULL, &res, &tr);
        cr_expect_geq(res.best, want, "%s target %d: best %g after %lld samples", hs_algo_name(algo), k + 1, res.best,
                      (long long)res.samples);
        cr_expect_eq(res.samples, budget, "%s: %lld samples, budget %lld", hs_algo_name(algo), (long long)res.samples,
                     (long long)budget);
        cr_expect_eq(tr.n, budget);
        cr_expect_leq(tr.max_call, batch, "%s: a call of %d points, batch %d", hs_algo_name(algo), tr.max_call, batch);
        cr_expect_eq(res.calls, tr.calls);
        hs_result_free(&res);
    }
}

Test(search_algos, random_finds_optimum) { finds(HS_RANDOM, 1500, 50, 1.0); }
Test(search_algos, ga_finds_optimum) { finds(HS_GA, 400, 20, 1.0); }
Test(search_algos, gamma_finds_optimum) { finds(HS_GAMMA, 400, 20, 1.0); }
Test(search_algos, aco_finds_optimum) { finds(HS_ACO, 400, 20, 1.0); }
Test(search_algos, bo_finds_optimum) { finds(HS_BO, 80, 4, 1.0); }
Test(search_algos, es_reaches_09) { finds(HS_ES, 600, 20, 0.9); }

/* GA generations: the initial population is one call of `batch`, then one call of batch-elite per generation. */
Test(search_algos, one_call_per_generation) {
    hs_result res;
    trace tr;
    run_local(HS_GA, "diag-v0", "{\"dims\":3,\"choices\":6}", 3, 20 + 18 * 5, 20, NULL, &res, &tr);
    cr_expect_eq(tr.calls, 6, "GA calls %lld", (long long)tr.calls);
    hs_result_free(&res);
    run_local(HS_ES, "diag-v0", "{\"dims\":3,\"choices\":6}", 3, 200, 20, NULL, &res, &tr);
    cr_expect_eq(tr.calls, 10);
    hs_result_free(&res);
    run_local(HS_BO, "diag-v0", "{\"dims\":3,\"choices\":6}", 3, 40, 8, NULL, &res, &tr);
    cr_expect_eq(tr.calls, 5);
    hs_result_free(&res);
}

Test(search_algos, budget_not_a_multiple_of_batch) {
    for (int a = 0; a < HS_NALGO; a++) {
        hs_result res;
        trace tr;
        run_local((hs_algo)a, "diag-v0", "{\"dims\":3,\"choices\":6}", 5, 53, 10, NULL, &res, &tr);
        cr_expect_eq(res.samples, 53, "%s: %lld samples", hs_algo_name((hs_algo)a), (long long)res.samples);
        cr_expect_eq(tr.n, 53);
        hs_result_free(&res);
    }
}

Test(search_algos, deterministic_for_a_seed) {
    for (int a = 0; a < HS_NALGO; a++) {
        hs_result r1, r2, r3;
        trace t1, t2, t3;
        const char *cfg = "{\"dims\":4,\"choices\":8}";
        run_local((hs_algo)a, "diag-v0", cfg, 42, 120, 12, NULL, &r1, &t1);
        run_local((hs_algo)a, "diag-v0", cfg, 42, 120, 12, NULL, &r2, &t2);
        run_local((hs_algo)a, "diag-v0", cfg, 43, 120, 12, NULL, &r3, &t3);
        cr_expect_eq(t1.hash, t2.hash, "%s: same seed, different points", hs_algo_name((hs_algo)a));
        cr_expect_eq(r1.best, r2.best);
        cr_expect_eq(r1.best_index, r2.best_index);
        cr_expect_neq(t1.hash, t3.hash, "%s: seeds 42 and 43 evaluated the same points", hs_algo_name((hs_algo)a));
        hs_result_free(&r1);
        hs_result_free(&r2);
        hs_result_free(&r3);
    }
}

/* Box action spaces work too (continuous genes): diag's box target is on a grid of 6 levels. */
Test(search_algos, box_space) {
    const char *cfg = "{\"dims\":2,\"choices\":6,\"action_space\":\"box\"}";
    for (int a = 0; a < HS_NALGO; a++) {
        hs_result res;
        trace tr;
        run_local((hs_algo)a, "diag-v0", cfg, 7, 400, 20, NULL, &res, &tr);
        cr_expect_geq(res.best, a == HS_RANDOM ? 0.85 : 0.9, "%s on a Box space: best %g", hs_algo_name((hs_algo)a), res.best);
        for (int i = 0; i < 2; i++) cr_expect(res.best_x[i] >= -1 && res.best_x[i] <= 1);
        hs_result_free(&res);
    }
}

/* The search works on a real mapping space too (smoke: feasible designs are found). */
Test(search_algos, maestro_smoke) {
    for (int a = 0; a < HS_NALGO; a++) {
        hs_result res;
        trace tr;
        run_local((hs_algo)a, "maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"action_space\":\"gamma17\"}", 1,
                  a == HS_BO ? 48 : 200, a == HS_BO ? 8 : 20, NULL, &res, &tr);
        cr_expect_gt(res.best, 0, "%s found no feasible mapping", hs_algo_name((hs_algo)a));
        cr_expect(json_is_true(json_object_get(res.best_metrics, "feasible")));
        hs_result_free(&res);
    }
}
