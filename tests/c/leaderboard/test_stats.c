/* tests/c/leaderboard/test_stats.c - lb_stats against hand-computed cases.
 * The tiny dataset (two tasks):
 *   X: task0 {0.1, 0.4, 0.5, 0.9}, task1 {0.2, 0.6, 0.3, 0.8}
 *   Y: task0 {0.4, 0.2, 0.7},      task1 {0.3, 0.3}
 * IQM(X): pooled sorted 0.1 0.2 0.3 0.4 0.5 0.6 0.8 0.9, drop 2 each end -> (0.3+0.4+0.5+0.6)/4 = 0.45
 * profile(X, 0.5) = |{0.6, 0.8, 0.9}| / 8 = 0.375; profile(X, 0.4) = 4/8 (0.4 itself is not above)
 * P(X > Y): task0 pairs (x against 0.4, 0.2, 0.7): 0.1 -> 0, 0.4 -> 1 + tie 0.5, 0.5 -> 2, 0.9 -> 3:
 *   6.5 / 12; task1 (x against 0.3, 0.3): 0.2 -> 0, 0.6 -> 2, 0.3 -> two ties = 1, 0.8 -> 2: 5 / 8;
 *   mean (6.5/12 + 5/8) / 2 = 0.58333...; P(Y > X) = 1 - that (ties split evenly). */
#include <criterion/criterion.h>
#include <math.h>

#include "clients/cli/lb_stats.h"

static const double xA[] = {0.1, 0.4, 0.5, 0.9}, xB[] = {0.2, 0.6, 0.3, 0.8};
static const double yA[] = {0.4, 0.2, 0.7}, yB[] = {0.3, 0.3};
static const double *xs[] = {xA, xB}, *ys[] = {yA, yB};
static const size_t xn[] = {4, 4}, ynr[] = {3, 2};
static const lbs_set X = {2, xn, xs}, Y = {2, ynr, ys};

#define EPS 1e-12

Test(stats, normalise) {
    cr_expect_float_eq(lbs_normalise(5, 2, 8), 0.5, EPS);
    cr_expect_float_eq(lbs_normalise(2, 2, 8), 0.0, EPS);
    cr_expect_float_eq(lbs_normalise(8, 2, 8), 1.0, EPS);
    cr_expect_float_eq(lbs_normalise(0, 2, 8), -1.0 / 3.0, EPS); /* worse than random: negative */
    cr_expect_float_eq(lbs_normalise(3, 2, 2), 1.0, EPS);         /* nothing known beyond random */
    cr_expect_float_eq(lbs_normalise(2, 2, 2), 0.0, EPS);
    /* random's mean equals the best known score but for rounding: no room, not 0.5 or 1e15 */
    const double lo = 1.726, hi = 1.726 * (1 + 2e-16) + 1e-15;
    cr_expect_float_eq(lbs_normalise(hi, lo, hi), 0.0, EPS);
    cr_expect_float_eq(lbs_normalise(lo, lo, hi), 0.0, EPS);
    cr_expect_float_eq(lbs_normalise(1.0, lo, hi), -1.0, EPS);
}

Test(stats, iqm_by_hand) {
    const double a[] = {100, 2, 1, 4, 3};
    cr_expect_float_eq(lbs_iqm(a, 5), 3.0, EPS); /* drop 1 each end: (2+3+4)/3 */
    const double b[] = {1, 2, 6};
    cr_expect_float_eq(lbs_iqm(b, 3), 3.0, EPS); /* n/4 = 0: the mean */
    cr_expect(isnan(lbs_iqm(b, 0)));
    cr_expect_float_eq(lbs_set_iqm(&X), 0.45, EPS);
    cr_expect_float_eq(a[0], 100.0, 0); /* input untouched */
}

Test(stats, profile_by_hand) {
    cr_expect_float_eq(lbs_profile(&X, 0.5), 0.375, EPS);
    cr_expect_float_eq(lbs_profile(&X, 0.4), 0.5, EPS);
    cr_expect_float_eq(lbs_profile(&X, -1), 1.0, EPS);
    cr_expect_float_eq(lbs_profile(&X, 0.9), 0.0, EPS);
}

Test(stats, poi_by_hand) {
    double p = (6.5 / 12 + 5.0 / 8) / 2;
    cr_expect_float_eq(lbs_poi(&X, &Y), p, EPS);
    cr_expect_float_eq(lbs_poi(&Y, &X), 1 - p, EPS);
    cr_expect_float_eq(lbs_poi(&X, &X), 0.5, EPS);
    /* a task one side did not run is left out of the average */
    const size_t ynr1[] = {3, 0};
    lbs_set y1only = {2, ynr1, ys};
    cr_expect_float_eq(lbs_poi(&X, &y1only), 6.5 / 12, EPS);
}

Test(stats, bootstrap_exact_distribution) {
    /* one task, runs {0, 1}: a replicate's IQM (= mean, n/4 = 0) is 0 w.p. 1/4, 0.5 w.p. 1/2,
     * 1 w.p. 1/4, so the 95% percentile interval is [0, 1] and the 40% one (quantiles 0.3, 0.7) is [0.5, 0.5]. */
    const double r[] = {0, 1};
    const double *rs[] = {r};
    const size_t rn[] = {2};
    lbs_set s = {1, rn, rs};
    lbs_ci ci;
    cr_assert_eq(lbs_iqm_ci(&s, 4000, 7, 0.05, &ci), 0);
    cr_expect_float_eq(ci.point, 0.5, EPS);
    cr_expect_float_eq(ci.lo, 0.0, EPS);
    cr_expect_float_eq(ci.hi, 1.0, EPS);
    cr_assert_eq(lbs_iqm_ci(&s, 4000, 7, 0.6, &ci), 0);
    cr_expect_float_eq(ci.lo, 0.5, EPS);
    cr_expect_float_eq(ci.hi, 0.5, EPS);
}

Test(stats, bootstrap_stratified_and_deterministic) {
    lbs_ci a, b, c;
    cr_assert_eq(lbs_iqm_ci(&X, 2000, 1, 0.05, &a), 0);
    cr_assert_eq(lbs_iqm_ci(&X, 2000, 1, 0.05, &b), 0);
    cr_expect_float_eq(a.point, 0.45, EPS);
    cr_expect(a.lo <= a.point && a.point <= a.hi && a.lo < a.hi);
    cr_expect(a.lo >= 0.1 && a.hi <= 0.9);
    cr_expect_eq(a.lo, b.lo);
    cr_expect_eq(a.hi, b.hi);
    /* strata: a task whose runs all score the same stays fixed in every replicate */
    const double k0[] = {0.3, 0.3, 0.3}, k1[] = {0.7, 0.7, 0.7};
    const double *ks[] = {k0, k1};
    const size_t kn[] = {3, 3};
    lbs_set K = {2, kn, ks};
    cr_assert_eq(lbs_iqm_ci(&K, 500, 3, 0.05, &c), 0);
    /* pooled sorted 0.3 x3, 0.7 x3 -> drop 1 each end: (0.3+0.3+0.7+0.7)/4 = 0.5 in every replicate;
     * an unstratified bootstrap would mix the tasks and widen this */
    cr_expect_float_eq(c.lo, 0.5, EPS);
    cr_expect_float_eq(c.hi, 0.5, EPS);
}

Test(stats, poi_and_profile_intervals) {
    lbs_ci p, q;
    cr_assert_eq(lbs_poi_ci(&X, &Y, 2000, 5, 0.05, &p), 0);
    cr_expect_float_eq(p.point, (6.5 / 12 + 5.0 / 8) / 2, EPS);
    cr_expect(p.lo <= p.point && p.point <= p.hi && p.lo >= 0 && p.hi <= 1 && p.lo < p.hi);
    cr_assert_eq(lbs_profile_ci(&X, 0.5, 2000, 5, 0.05, &q), 0);
    cr_expect_float_eq(q.point, 0.375, EPS);
    cr_expect(q.lo <= 0.375 && q.hi >= 0.375);
    /* empty sets: NAN and -1, no crash */
    const size_t zn[] = {0, 0};
    lbs_set Z = {2, zn, xs};
    cr_expect_eq(lbs_iqm_ci(&Z, 100, 1, 0.05, &p), -1);
    cr_expect(isnan(p.point) && isnan(p.lo));
    cr_expect(isnan(lbs_profile(&Z, 0)));
    cr_expect(isnan(lbs_poi(&X, &Z)));
}
