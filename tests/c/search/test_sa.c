/* test_sa.c - simulated annealing (agents/search/sa.c): the schedule and the Metropolis rule by
 * hand, its chains (one objective call of --batch points per step), a greedy run that never
 * steps down, and the optimum of diag-v0 (the budget, batch and determinism checks of every
 * algorithm in test_algos.c cover sa as well). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

Test(search_sa, temperature_schedule_by_hand) {
    /* t0 = 1, t1 = 0.01 over 3 steps: 1, 0.1, 0.01 */
    cr_assert_float_eq(hs_sa_temperature(1, 0.01, 0, 3), 1.0, 1e-15);
    cr_assert_float_eq(hs_sa_temperature(1, 0.01, 1, 3), 0.1, 1e-15);
    cr_assert_float_eq(hs_sa_temperature(1, 0.01, 2, 3), 0.01, 1e-15);
    cr_assert_float_eq(hs_sa_temperature(1, 0.01, 9, 3), 0.01, 1e-15); /* clamped past the end */
    cr_assert_float_eq(hs_sa_temperature(0.5, 0.01, 0, 1), 0.5, 1e-15);
}

Test(search_sa, metropolis_by_hand) {
    cr_assert(hs_sa_accept(1.0, 0.5, 0.1, 0.999));  /* better: always */
    cr_assert(hs_sa_accept(0.5, 0.5, 0.1, 0.999));  /* equal: always */
    cr_assert(hs_sa_accept(0.3, -INFINITY, 0.1, 0.999));
    cr_assert_not(hs_sa_accept(-INFINITY, 0.3, 1e9, 0.0));
    cr_assert_not(hs_sa_accept(-INFINITY, -INFINITY, 1e9, 0.0));
    /* worse by 0.1 at T = 0.1: exp(-1) = 0.3679 */
    cr_assert(hs_sa_accept(0.4, 0.5, 0.1, 0.36));
    cr_assert_not(hs_sa_accept(0.4, 0.5, 0.1, 0.37));
    cr_assert_not(hs_sa_accept(0.4, 0.5, 0.0, 0.0));
}

Test(search_sa, greedy_chain_never_steps_down) {
    /* T ~ 1e-12 of the first reward: a worse proposal is accepted with probability exp(-huge), so
     * the running best of the chain's accepted points is the running best of all points, and
     * the run ends at a local optimum of diag-v0 (whose reward has no local optima: 1.0). */
    hs_params p;
    hs_params_default(&p);
    p.sa_t0 = 1e-12;
    p.sa_t1 = 1e-12;
    p.sa_moves = 1;
    for (int k = 1; k <= 3; k++) {
        char cfg[96];
        snprintf(cfg, sizeof cfg, "{\"dims\":4,\"choices\":6,\"target_seed\":%d}", k);
        hs_result res;
        trace tr;
        run_local(HS_SA, "diag-v0", cfg, (uint64_t)k, 300, 1, &p, &res, &tr);
        cr_expect_eq(res.samples, 300);
        cr_expect_eq(tr.calls, 300, "one point per call with batch 1");
        cr_expect_eq(res.best, 1.0, "target %d: best %g", k, res.best);
        hs_result_free(&res);
    }
}

Test(search_sa, finds_optimum_with_chains) {
    for (int k = 1; k <= 4; k++) {
        char cfg[96];
        snprintf(cfg, sizeof cfg, "{\"dims\":3,\"choices\":6,\"target_seed\":%d}", k);
        hs_result res;
        trace tr;
        run_local(HS_SA, "diag-v0", cfg, (uint64_t)(11 + k), 400, 4, NULL, &res, &tr);
        cr_expect_geq(res.best, 1.0, "target %d: best %g", k, res.best);
        cr_expect_eq(tr.max_call, 4);
        cr_expect_eq(tr.calls, 100, "4 chains: one call per step");
        hs_result_free(&res);
    }
}

Test(search_sa, params_and_name) {
    cr_assert_eq(hs_algo_from_name("sa"), HS_SA);
    cr_assert_str_eq(hs_algo_name(HS_SA), "sa");
    cr_assert_eq(hs_default_batch(HS_SA), 1);
    hs_params p;
    hs_params_default(&p);
    hw_err err = {0};
    cr_assert_eq(hs_params_set(&p, "sa_t0=0.5", &err), 0);
    cr_assert_float_eq(p.sa_t0, 0.5, 1e-15);
    cr_assert_neq(hs_params_set(&p, "sa_moves=0", &err), 0);
    cr_assert(strstr(err.msg, "sa_moves"), "%s", err.msg);
    cr_assert_neq(hs_params_set(&p, "sa_x=1", &err), 0);
    cr_assert(strstr(err.msg, "sa_t0"), "unknown sa_ key lists the sa_ keys: %s", err.msg);
}
