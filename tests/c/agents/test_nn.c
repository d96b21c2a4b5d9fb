/* test_nn.c - nn.h: gradient checks by finite differences, orthogonality, Adam by hand,
 * clipping, LR schedule, save/load round trip with shape checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_common.h"
#include "nn.h"

/* L = sum_k sum_j c_kj * Y_kj with fixed random c: dL/dY = c. */
static double loss_of(nnet_mlp *n, const double *X, int B, const double *c) {
    const double *Y = nnet_forward(n, X, B);
    double L = 0;
    for (int i = 0; i < B * n->sizes[n->nlayers]; i++) L += c[i] * Y[i];
    return L;
}

static void gradcheck(nnet_act act) {
    int sizes[4] = {3, 5, 4, 2};
    nnet_mlp *n = nnet_new(3, sizes, act);
    gsl_rng *r = ag_rng_new(3);
    cr_assert_eq(nnet_init_orthogonal(n, r, sqrt(2.0), 1.0), 0);
    for (size_t i = 0; i < n->nparams; i++) n->params[i] += 0.1 * (ag_rng_uniform(r) - 0.5); /* nonzero biases */
    int B = 4;
    double X[12], c[8], dX[12];
    for (int i = 0; i < 12; i++) X[i] = ag_rng_uniform(r) * 2 - 1;
    for (int i = 0; i < 8; i++) c[i] = ag_rng_uniform(r) * 2 - 1;
    loss_of(n, X, B, c);
    nnet_zero_grad(n);
    nnet_backward(n, c, dX);
    double eps = 1e-6, maxerr = 0;
    for (size_t i = 0; i < n->nparams; i++) {
        double p0 = n->params[i];
        n->params[i] = p0 + eps;
        double lp = loss_of(n, X, B, c);
        n->params[i] = p0 - eps;
        double lm = loss_of(n, X, B, c);
        n->params[i] = p0;
        double num = (lp - lm) / (2 * eps);
        double e = fabs(num - n->grads[i]) / fmax(1e-4, fabs(num) + fabs(n->grads[i]));
        if (e > maxerr) maxerr = e;
    }
    cr_assert_lt(maxerr, 1e-5, "param gradient relative error %g", maxerr);
    for (int i = 0; i < 12; i++) {
        double x0 = X[i];
        X[i] = x0 + eps;
        double lp = loss_of(n, X, B, c);
        X[i] = x0 - eps;
        double lm = loss_of(n, X, B, c);
        X[i] = x0;
        double num = (lp - lm) / (2 * eps);
        cr_assert_float_eq(num, dX[i], 1e-6, "dX[%d]: numeric %g analytic %g", i, num, dX[i]);
    }
    /* gradients accumulate */
    double g0 = n->grads[0];
    loss_of(n, X, B, c);
    nnet_backward(n, c, NULL);
    cr_assert_float_eq(n->grads[0], 2 * g0, 1e-12);
    gsl_rng_free(r);
    nnet_free(n);
}

Test(nn, gradient_check_tanh) { gradcheck(NNET_TANH); }
Test(nn, gradient_check_relu) { gradcheck(NNET_RELU); }

Test(nn, orthogonal_init) {
    gsl_rng *r = ag_rng_new(1);
    double W[6 * 4];
    for (int shape = 0; shape < 2; shape++) {
        int rows = shape ? 4 : 6, cols = shape ? 6 : 4;
        cr_assert_eq(nnet_orthogonal(W, rows, cols, 2.0, r), 0);
        /* the small side is orthonormal * gain: W^T W = 4 I (rows >= cols) or W W^T = 4 I */
        int k = rows >= cols ? cols : rows;
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k; b++) {
                double s = 0;
                if (rows >= cols)
                    for (int i = 0; i < rows; i++) s += W[i * cols + a] * W[i * cols + b];
                else
                    for (int j = 0; j < cols; j++) s += W[a * cols + j] * W[b * cols + j];
                cr_assert_float_eq(s, a == b ? 4.0 : 0.0, 1e-10);
            }
    }
    gsl_rng_free(r);
}

Test(nn, adam_by_hand) {
    nnet_adam *a = nnet_adam_new(2, 0.1);
    cr_assert_float_eq(a->eps, 1e-5, 0);
    double p[2] = {1.0, -2.0}, g[2] = {0.5, -4.0};
    nnet_adam_step(a, p, g);
    /* step 1: m = 0.1 g, v = 0.001 g^2, mhat = g, vhat = g^2: p -= 0.1 * g / (|g| + 1e-5) */
    cr_assert_float_eq(p[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-5), 1e-12);
    cr_assert_float_eq(p[1], -2.0 + 0.1 * 4.0 / (4.0 + 1e-5), 1e-12);
    double g2[2] = {1.0, 0.0};
    double p0 = p[0], p1 = p[1];
    nnet_adam_step(a, p, g2);
    double m = 0.9 * 0.05 + 0.1 * 1.0, v = 0.999 * 0.00025 + 0.001 * 1.0;
    double mh = m / (1 - 0.81), vh = v / (1 - 0.999 * 0.999);
    cr_assert_float_eq(p[0], p0 - 0.1 * mh / (sqrt(vh) + 1e-5), 1e-12);
    double m1 = 0.9 * -0.4, v1 = 0.999 * 0.016;
    cr_assert_float_eq(p[1], p1 - 0.1 * (m1 / 0.19) / (sqrt(v1 / (1 - 0.998001)) + 1e-5), 1e-12);
    nnet_adam_free(a);
}

Test(nn, clip_and_schedule) {
    double a[2] = {3, 0}, b[1] = {4};
    double *g[2] = {a, b};
    size_t len[2] = {2, 1};
    double norm = nnet_clip_grad_norm(g, len, 2, 0.5);
    cr_assert_float_eq(norm, 5.0, 1e-12);
    cr_assert_float_eq(sqrt(a[0] * a[0] + b[0] * b[0]), 0.5, 1e-6);
    cr_assert_float_eq(a[0] / b[0], 0.75, 1e-12);
    double c[1] = {0.1};
    double *g2[1] = {c};
    size_t l2[1] = {1};
    nnet_clip_grad_norm(g2, l2, 1, 0.5);
    cr_assert_float_eq(c[0], 0.1, 0);
    cr_assert_float_eq(nnet_linear_lr(1e-3, 1, 10), 1e-3, 1e-15);
    cr_assert_float_eq(nnet_linear_lr(1e-3, 10, 10), 1e-4, 1e-15);
}

Test(nn, save_load_round_trip) {
    int sizes[3] = {4, 8, 3};
    nnet_mlp *a = nnet_new(2, sizes, NNET_TANH), *b = nnet_new(2, sizes, NNET_TANH);
    gsl_rng *r = ag_rng_new(9);
    nnet_init_orthogonal(a, r, 1.0, 1.0);
    char path[64];
    snprintf(path, sizeof path, "/tmp/hwgym-nn-%d.bin", (int)getpid());
    hw_err err = {0};
    nnet_mlp *nets[1] = {a};
    cr_assert_eq(nnet_save_file(path, nets, 1, &err), 0, "%s", err.msg);
    nnet_mlp *nb[1] = {b};
    cr_assert_eq(nnet_load_file(path, nb, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(a->params, b->params, sizeof(double) * a->nparams), 0);
    double X[4] = {0.1, -0.2, 0.3, 0.4}, Y[3];
    memcpy(Y, nnet_forward(a, X, 1), sizeof Y);
    const double *Y2 = nnet_forward(b, X, 1);
    for (int i = 0; i < 3; i++) cr_assert_eq(Y[i], Y2[i]);
    int bad[3] = {4, 9, 3};
    nnet_mlp *c = nnet_new(2, bad, NNET_TANH);
    nnet_mlp *nc[1] = {c};
    cr_assert_eq(nnet_load_file(path, nc, 1, &err), -1);
    cr_assert(strstr(err.msg, "sizes[1] is 8 in the file, 9 in the network"), "%s", err.msg);
    nnet_mlp *d = nnet_new(2, sizes, NNET_RELU);
    nnet_mlp *nd[1] = {d};
    cr_assert_eq(nnet_load_file(path, nd, 1, &err), -1);
    cr_assert(strstr(err.msg, "activation"), "%s", err.msg);
    unlink(path);
    nnet_free(a);
    nnet_free(b);
    nnet_free(c);
    nnet_free(d);
    gsl_rng_free(r);
}
