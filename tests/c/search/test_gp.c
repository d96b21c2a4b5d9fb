/* test_gp.c - BO's Gaussian process against hand computations from the Matern 5/2 formula,
 * and the expected-improvement formula. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>

#include "helpers.h"

#define NEAR(a, b, tol) cr_expect(fabs((a) - (b)) <= (tol), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

Test(search_gp, matern52) {
    /* k(r) = sf2 (1 + sqrt5 r/l + 5 r^2/(3 l^2)) exp(-sqrt5 r/l) */
    NEAR(hs_matern52(0, 0.3, 2.0), 2.0, 1e-15);
    NEAR(hs_matern52(0.3, 0.3, 1.0), (1 + sqrt(5) + 5.0 / 3) * exp(-sqrt(5)), 1e-15);
    NEAR(hs_matern52(0.6, 0.3, 1.5), 1.5 * (1 + 2 * sqrt(5) + 20.0 / 3) * exp(-2 * sqrt(5)), 1e-15);
}

/* Two points in 1-D: x = 0.2 and 0.6 with y = 1 and 3 (mean 2, population std 1, so the
 * standardised targets are -1 and +1). Posterior at x* = 0.3 by the 2x2 inverse. */
Test(search_gp, posterior_two_points) {
    const double ell = 0.3, sn2 = 1e-4;
    double X[2] = {0.2, 0.6}, y[2] = {1, 3};
    hs_gp *g = hs_gp_new(1, 4);
    double ll = hs_gp_fit(g, 2, X, y, ell, 1.0, sn2);
    double a = 1 + sn2, b = hs_matern52(0.4, ell, 1), det = a * a - b * b;
    double k1 = hs_matern52(0.1, ell, 1), k2 = hs_matern52(0.3, ell, 1);
    /* K^-1 = [[a,-b],[-b,a]]/det; ys = (-1, 1) */
    double w1 = (a * -1 - b * 1) / det, w2 = (-b * -1 + a * 1) / det;
    double mean = 2 + k1 * w1 + k2 * w2;
    double var = 1 - (k1 * (a * k1 - b * k2) + k2 * (-b * k1 + a * k2)) / det;
    double m, v, xs = 0.3;
    hs_gp_predict(g, &xs, &m, &v);
    NEAR(m, mean, 1e-10);
    NEAR(v, var, 1e-10);
    /* log marginal likelihood: -1/2 y'K^-1 y - 1/2 log det K - n/2 log 2pi */
    double quad = (-1) * w1 + 1 * w2;
    NEAR(ll, -0.5 * quad - 0.5 * log(det) - log(2 * M_PI), 1e-10);
    /* at a training point the mean is (almost) its target and the variance (almost) the noise */
    hs_gp_predict(g, &X[1], &m, &v);
    NEAR(m, 3, 1e-3);
    cr_expect_lt(v, 2e-4);
    /* far away: the prior (mean of the targets, signal variance) */
    xs = 5;
    hs_gp_predict(g, &xs, &m, &v);
    NEAR(m, 2, 1e-9);
    NEAR(v, 1, 1e-9);
    hs_gp_free(g);
}

/* Three points in 2-D, checked against a direct solve of K alpha = y (Cramer's rule). */
Test(search_gp, posterior_three_points_2d) {
    double X[6] = {0, 0, 1, 0, 0, 1}, y[3] = {0, 1, 2}; /* mean 1, std sqrt(2/3) */
    const double ell = 0.7, sn2 = 1e-6;
    hs_gp *g = hs_gp_new(2, 4);
    hs_gp_fit(g, 3, X, y, ell, 1.0, sn2);
    double K[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double dx = X[2 * i] - X[2 * j], dy = X[2 * i + 1] - X[2 * j + 1];
            K[i][j] = hs_matern52(sqrt(dx * dx + dy * dy), ell, 1) + (i == j ? sn2 : 0);
        }
    double sd = sqrt(2.0 / 3), ys[3] = {-1 / sd, 0, 1 / sd};
#define DET3(M) (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) + \
                 M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]))
    double D = DET3(K), alpha[3], kv[3], w[3];
    double xs[2] = {0.5, 0.5};
    /* x* = (0.5, 0.5) is sqrt(0.5) from every training point */
    kv[0] = hs_matern52(sqrt(0.5), ell, 1);
    kv[1] = hs_matern52(sqrt(0.5), ell, 1);
    kv[2] = hs_matern52(sqrt(0.5), ell, 1);
    for (int c = 0; c < 3; c++) {
        double M[3][3], N[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                M[i][j] = j == c ? ys[i] : K[i][j];
                N[i][j] = j == c ? kv[i] : K[i][j];
            }
        alpha[c] = DET3(M) / D;
        w[c] = DET3(N) / D;
    }
    double mean = 1 + sd * (kv[0] * alpha[0] + kv[1] * alpha[1] + kv[2] * alpha[2]);
    double var = sd * sd * (1 - (kv[0] * w[0] + kv[1] * w[1] + kv[2] * w[2]));
    double m, v;
    hs_gp_predict(g, xs, &m, &v);
    NEAR(m, mean, 1e-9);
    NEAR(v, var, 1e-9);
    hs_gp_free(g);
}

/* The kriging believer keeps the mean and shrinks the variance at the appended point. */
Test(search_gp, believer_append) {
    double X[2] = {0.2, 0.6}, y[2] = {1, 3};
    hs_gp *g = hs_gp_new(1, 4);
    hs_gp_fit(g, 2, X, y, 0.3, 1.0, 1e-4);
    double xn = 0.4, xo = 0.45, m0, v0, m1, v1, mo0, vo0, mo1, vo1;
    hs_gp_predict(g, &xn, &m0, &v0);
    hs_gp_predict(g, &xo, &mo0, &vo0);
    cr_assert_eq(hs_gp_append_believer(g, &xn), 0);
    cr_assert_eq(g->n, 3);
    hs_gp_predict(g, &xn, &m1, &v1);
    hs_gp_predict(g, &xo, &mo1, &vo1);
    NEAR(m1, m0, 1e-9);
    NEAR(mo1, mo0, 1e-9);
    cr_expect_lt(v1, 2e-4);
    cr_expect_lt(vo1, vo0);
    /* the same as refitting from scratch on 3 points with the fantasy target (standardisation kept) */
    hs_gp *h = hs_gp_new(1, 4);
    double X3[3] = {0.2, 0.6, 0.4};
    hs_gp_fit(h, 3, X3, (double[]){1, 3, m0}, 0.3, 1.0, 1e-4);
    double mh, vh;
    hs_gp_predict(h, &xo, &mh, &vh);
    NEAR(mh, mo1, 1e-9);
    NEAR(vh / (h->ystd * h->ystd), vo1 / (g->ystd * g->ystd), 1e-9);
    hs_gp_free(g);
    hs_gp_free(h);
}

Test(search_gp, hyperparameters_by_marginal_likelihood) {
    /* a smooth function sampled on 30 points prefers a long length scale over a very short one */
    double X[30], y[30];
    for (int i = 0; i < 30; i++) {
        X[i] = i / 29.0;
        y[i] = sin(3 * X[i]);
    }
    hs_gp *g = hs_gp_new(1, 32);
    hs_gp_fit_ml(g, 30, X, y);
    cr_expect_geq(g->ell, 0.35, "ell %g", g->ell);
    double best = hs_gp_fit(g, 30, X, y, g->ell, 1, g->sn2), shortl = hs_gp_fit(g, 30, X, y, 0.05, 1, 1e-6);
    cr_expect_gt(best, shortl);
    double xs = 0.5, m, v;
    hs_gp_fit_ml(g, 30, X, y);
    hs_gp_predict(g, &xs, &m, &v);
    NEAR(m, sin(1.5), 1e-3);
    hs_gp_free(g);
}

Test(search_gp, expected_improvement) {
    /* EI = (mu - best - xi) Phi(z) + sd phi(z), z = (mu - best - xi)/sd */
    double z = 0.5;
    NEAR(hs_ei(1.0, 1.0, 0.5, 0.0), 0.5 * gsl_cdf_ugaussian_P(z) + exp(-z * z / 2) / sqrt(2 * M_PI), 1e-12);
    NEAR(hs_ei(1.0, 1.0, 0.5, 0.0), 0.697796558, 1e-8);
    z = (0.2 - 0.5 - 0.1) / 0.3;
    NEAR(hs_ei(0.2, 0.3, 0.5, 0.1), (0.2 - 0.6) * gsl_cdf_ugaussian_P(z) + 0.3 * exp(-z * z / 2) / sqrt(2 * M_PI), 1e-12);
    NEAR(hs_ei(2.0, 0.0, 0.5, 0.0), 1.5, 1e-15);
    NEAR(hs_ei(0.0, 0.0, 0.5, 0.0), 0.0, 1e-15);
    cr_expect_gt(hs_ei(0.0, 2.0, 0.5, 0.0), hs_ei(0.0, 1.0, 0.5, 0.0)); /* more uncertainty, more EI */
}
