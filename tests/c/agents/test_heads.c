/* test_heads.c - policy heads: gradients by finite differences, masks, sampling. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "heads.h"

Test(heads, mcat_values_and_gradients) {
    int64_t nvec[2] = {3, 2};
    double z[5] = {0.2, -0.5, 1.0, 0.3, 0.3};
    int64_t a[2] = {2, 1};
    double lp, h, dlp[5], dh[5];
    mcat_eval(2, nvec, z, NULL, a, &lp, &h, dlp, dh);
    double s0 = exp(0.2) + exp(-0.5) + exp(1.0);
    cr_assert_float_eq(lp, 1.0 - log(s0) + log(0.5), 1e-12);
    double hh = 0;
    for (int j = 0; j < 3; j++) {
        double p = exp(z[j]) / s0;
        hh -= p * log(p);
    }
    cr_assert_float_eq(h, hh + log(2.0), 1e-12);
    double eps = 1e-6;
    for (int j = 0; j < 5; j++) {
        double zz[5];
        memcpy(zz, z, sizeof zz);
        double lpp, hp, lpm, hm;
        zz[j] = z[j] + eps;
        mcat_eval(2, nvec, zz, NULL, a, &lpp, &hp, NULL, NULL);
        zz[j] = z[j] - eps;
        mcat_eval(2, nvec, zz, NULL, a, &lpm, &hm, NULL, NULL);
        cr_assert_float_eq((lpp - lpm) / (2 * eps), dlp[j], 1e-7);
        cr_assert_float_eq((hp - hm) / (2 * eps), dh[j], 1e-7);
    }
}

Test(heads, mcat_mask_gradients_and_sampling) {
    int64_t nvec[2] = {4, 3};
    double z[7] = {3.0, 0.1, -0.2, 0.5, 0, 0, 5.0};
    uint8_t m[7] = {0, 1, 1, 0, 1, 1, 0};
    int64_t a[2] = {1, 0};
    double probs[7], lp, h, dlp[7], dh[7];
    mcat_probs(2, nvec, z, m, probs, NULL);
    cr_assert_eq(probs[0], 0.0);
    cr_assert_eq(probs[3], 0.0);
    cr_assert_eq(probs[6], 0.0);
    cr_assert_float_eq(probs[4], 0.5, 1e-12);
    mcat_eval(2, nvec, z, m, a, &lp, &h, dlp, dh);
    cr_assert_float_eq(h, -(exp(0.1) / (exp(0.1) + exp(-0.2))) * log(exp(0.1) / (exp(0.1) + exp(-0.2))) -
                              (exp(-0.2) / (exp(0.1) + exp(-0.2))) * log(exp(-0.2) / (exp(0.1) + exp(-0.2))) + log(2.0),
                       1e-9);
    cr_assert_eq(dlp[0], 0.0);
    cr_assert_eq(dh[6], 0.0);
    /* finite differences on the allowed logits */
    double eps = 1e-6;
    int allowed[4] = {1, 2, 4, 5};
    for (int k = 0; k < 4; k++) {
        int j = allowed[k];
        double zz[7], lpp, lpm, hp, hm;
        memcpy(zz, z, sizeof zz);
        zz[j] += eps;
        mcat_eval(2, nvec, zz, m, a, &lpp, &hp, NULL, NULL);
        zz[j] -= 2 * eps;
        mcat_eval(2, nvec, zz, m, a, &lpm, &hm, NULL, NULL);
        cr_assert_float_eq((lpp - lpm) / (2 * eps), dlp[j], 1e-7);
        cr_assert_float_eq((hp - hm) / (2 * eps), dh[j], 1e-7);
    }
    /* masked choices are never sampled, even with the largest logits */
    gsl_rng *r = ag_rng_new(5);
    int count[7] = {0};
    for (int i = 0; i < 20000; i++) {
        int64_t s[2];
        mcat_sample(2, nvec, z, m, r, s);
        count[s[0]]++;
        count[4 + s[1]]++;
    }
    cr_assert_eq(count[0], 0);
    cr_assert_eq(count[3], 0);
    cr_assert_eq(count[6], 0);
    cr_assert(count[1] > 9000 && count[2] > 7000, "%d %d", count[1], count[2]);
    int64_t g[2];
    mcat_argmax(2, nvec, z, m, g);
    cr_assert_eq(g[0], 1);
    cr_assert(g[1] == 0 || g[1] == 1);
    /* an all-masked dimension falls back to unmasked */
    uint8_t none[7] = {0, 0, 0, 0, 1, 1, 1};
    mcat_probs(2, nvec, z, none, probs, NULL);
    cr_assert_gt(probs[0], 0.5);
    gsl_rng_free(r);
}

Test(heads, gaussian_gradients) {
    double mu[2] = {0.3, -1.0}, ls[2] = {-0.5, 0.2}, a[2] = {0.1, 0.4};
    double lp, h, dmu[2], dls[2], dh[2];
    gauss_eval(2, mu, ls, a, &lp, &h, dmu, dls, dh);
    double want = 0;
    for (int i = 0; i < 2; i++) {
        double s = exp(ls[i]);
        want += log(1.0 / (s * sqrt(2 * M_PI))) - (a[i] - mu[i]) * (a[i] - mu[i]) / (2 * s * s);
    }
    cr_assert_float_eq(lp, want, 1e-12);
    cr_assert_float_eq(h, 2 * (0.5 + 0.5 * log(2 * M_PI)) + ls[0] + ls[1], 1e-12);
    double eps = 1e-6;
    for (int i = 0; i < 2; i++) {
        double m2[2] = {mu[0], mu[1]}, l2[2] = {ls[0], ls[1]}, p1, p2;
        m2[i] += eps;
        gauss_eval(2, m2, ls, a, &p1, NULL, NULL, NULL, NULL);
        m2[i] -= 2 * eps;
        gauss_eval(2, m2, ls, a, &p2, NULL, NULL, NULL, NULL);
        cr_assert_float_eq((p1 - p2) / (2 * eps), dmu[i], 1e-7);
        l2[i] += eps;
        gauss_eval(2, mu, l2, a, &p1, NULL, NULL, NULL, NULL);
        l2[i] -= 2 * eps;
        gauss_eval(2, mu, l2, a, &p2, NULL, NULL, NULL, NULL);
        cr_assert_float_eq((p1 - p2) / (2 * eps), dls[i], 1e-7);
        cr_assert_eq(dh[i], 1.0);
    }
    gsl_rng *r = ag_rng_new(2);
    double sum = 0, sq = 0;
    for (int i = 0; i < 20000; i++) {
        double x[2];
        gauss_sample(2, mu, ls, r, x);
        sum += x[1];
        sq += (x[1] - mu[1]) * (x[1] - mu[1]);
    }
    cr_assert_float_eq(sum / 20000, mu[1], 0.05);
    cr_assert_float_eq(sqrt(sq / 20000), exp(ls[1]), 0.05);
    gsl_rng_free(r);
}
