/* The brute force's lower bound (tl_eval_bound, sched_tl.h) against the tables it bounds: for a
 * valid table T, a 3-row action and any set of columns taken out of the selected rows (the
 * partial table the search holds while those columns are unassigned), the bound of the partial
 * table must not exceed T's energy or DRAM words, because T is one of its completions. And the
 * search with the bound must return what the search without it returns, on ResNet-50-like
 * layers on every built-in accelerator. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/sched_internal.h"
#include "sched/sched_tl.h"

static void builtin(int i, sched_accel *a) {
    json_t *s = json_string(sched_builtin_name(i));
    hw_err err;
    int rc = sched_accel_resolve(s, "acc", a, &err);
    json_decref(s);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

static const sched_layer layers[] = {
    {"1x1", {1, 64, 1, 64, 1, 1, 14, 14}, 1},      {"3x3", {1, 32, 1, 32, 3, 3, 14, 14}, 1},
    {"3x3s2", {1, 16, 1, 32, 3, 3, 7, 7}, 2},      {"1x1s2", {1, 32, 1, 64, 1, 1, 7, 7}, 2},
    {"dw", {1, 1, 32, 1, 3, 3, 14, 14}, 1},        {"fc", {2, 256, 1, 100, 1, 1, 1, 1}, 1},
};
#define NLAYER ((int)(sizeof layers / sizeof layers[0]))

/* a valid table with factors spread over the levels: random two-row brute-force steps */
static void spread(const sched_accel *a, const sched_layer *l, gsl_rng *rng, sched_table *t) {
    sched_table_init(l, t);
    for (int s = 0; s < 6;) {
        int act = (int)gsl_rng_uniform_int(rng, 10), r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
        if (!sched_action_valid(a, act, r)) continue;
        int rows[3];
        int n = sched_action_rows(act, r, rows);
        int obj = (int)gsl_rng_uniform_int(rng, 3); /* energy, cycles or EDP: different tables */
        sched_bruteforce(a, l, t, n, rows, obj, -1, NULL, NULL);
        s++;
    }
}

Test(sched_bound, never_above_a_completion, .timeout = 120) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 26);
    long checked = 0, per_mac = 0;
    for (int ai = 0; ai < sched_builtin_count(); ai++) {
        sched_accel a;
        builtin(ai, &a);
        for (int li = 0; li < NLAYER; li++)
            for (int rep = 0; rep < 12; rep++) {
                sched_table t;
                spread(&a, &layers[li], rng, &t);
                cr_assert_eq(sched_check(&a, &layers[li], &t, NULL), 0);
                sched_cost full;
                sched_cost_eval(&a, &layers[li], &t, &full);
                int act, r, rows[3];
                do act = 10 + (int)gsl_rng_uniform_int(rng, SCHED_NACT - 10), r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
                while (!sched_action_valid(&a, act, r));
                int n = sched_action_rows(act, r, rows);
                for (int sub = 0; sub < 8; sub++) {
                    /* take a random set of columns out of the selected rows */
                    sched_table p = t;
                    tl_bound_in b = {{1, 1, 1}, 1, 1, 0};
                    for (int d = 0; d < SCHED_NDIM; d++) {
                        if (gsl_rng_uniform_int(rng, 2)) continue;
                        int prod = 1;
                        for (int i = 0; i < n; i++) prod *= t.f[rows[i]][d], p.f[rows[i]][d] = 1;
                        b.all *= prod;
                        for (int ten = 0; ten < SCHED_NT; ten++) b.mul[ten] *= sched_bound_mul(&layers[li], ten, d, prod);
                    }
                    tl_spec s;
                    sched_tl_from_table(&a, &layers[li], &p, &s);
                    for (int i = 0; i < n; i++)
                        if (s.rowsp[rows[i]] && s.rowlvl[rows[i]] >= 0) b.fan |= 1u << s.rowlvl[rows[i]];
                    double out[4], weak[4];
                    tl_eval_bound(&s, &b, out);
                    double dram = 0;
                    for (int ten = 0; ten < SCHED_NT; ten++) dram += full.access[SR_DRAM][ten];
                    cr_assert_leq(out[0], full.energy_pj * (1 + 1e-12), "%s %s rows %d %d %d: bound %.17g > energy %.17g",
                                  a.name, layers[li].name, rows[0], rows[1], rows[2], out[0], full.energy_pj);
                    cr_assert_leq(out[3], dram * (1 + 1e-12), "%s %s: DRAM bound %g > %g", a.name, layers[li].name, out[3],
                                  dram);
                    /* the per-MAC terms: off when every level may fan out */
                    b.fan = ~0u;
                    tl_eval_bound(&s, &b, weak);
                    cr_assert_leq(weak[0], out[0] * (1 + 1e-12));
                    per_mac += out[0] > weak[0] * (1 + 1e-9);
                    checked++;
                }
            }
    }
    gsl_rng_free(rng);
    /* not vacuous: the per-MAC terms tightened a good share of the bounds checked */
    cr_assert_gt(per_mac, checked / 10, "per-MAC terms tightened %ld of %ld bounds", per_mac, checked);
}

/* the bounded search returns exactly the unbounded one, and cuts leaves */
Test(sched_bound, search_equals_unbounded_search, .timeout = 240) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 62);
    long long lb = 0, lnb = 0;
    int steps_done = 0;
    for (int ai = 0; ai < sched_builtin_count(); ai++) {
        sched_accel a;
        builtin(ai, &a);
        for (int li = 0; li < NLAYER; li++)
            for (int obj = SOBJ_ENERGY; obj <= SOBJ_EDP; obj++) {
                sched_table t;
                sched_table_init(&layers[li], &t);
                for (int steps = 0; steps < 3;) {
                    int act = (int)gsl_rng_uniform_int(rng, SCHED_NACT), r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
                    if (!sched_action_valid(&a, act, r)) continue;
                    int rows[3];
                    int n = sched_action_rows(act, r, rows);
                    sched_table t1 = t, t2 = t;
                    sched_cost c1, c2;
                    sched_bf_stats s1, s2;
                    sched_bruteforce(&a, &layers[li], &t1, n, rows, obj, -1, &c1, &s1);
                    sched_bruteforce_nobound(&a, &layers[li], &t2, n, rows, obj, -1, &c2, &s2);
                    cr_assert_eq(sched_objective(&c1, obj), sched_objective(&c2, obj), "%s %s obj %d rows %d %d: %.17g vs %.17g",
                                 a.name, layers[li].name, obj, rows[0], rows[1], sched_objective(&c1, obj),
                                 sched_objective(&c2, obj));
                    cr_assert(!memcmp(t1.f, t2.f, sizeof t1.f), "%s %s obj %d: a different table", a.name, layers[li].name,
                              obj);
                    lb += s1.leaves;
                    lnb += s2.leaves;
                    t = t2;
                    steps++;
                    steps_done++;
                }
            }
    }
    gsl_rng_free(rng);
    cr_assert_lt(lb * 2, lnb, "the bound cut too little (%lld vs %lld leaves over %d steps)", lb, lnb, steps_done);
}
