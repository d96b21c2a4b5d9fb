/* test_gnn.c - the Graph U-Net of graph attention layers (agents/lib/nn/gnn.h): finite-difference
 * gradients of every parameter and of the input on a batched graph, graph construction,
 * top-k pooling, variable node counts and save/load. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent_common.h"
#include "gnn.h"

static const int64_t EDGES7[] = {0, 1, 1, 2, 2, 3, 1, 4, 4, 5, 3, 5, 5, 6};

static double loss(gnn_net *n, const gnn_graph *g, const double *X, const double *C) {
    const double *Y = gnn_forward(n, g, X);
    double L = 0;
    for (int i = 0; i < g->n * n->cfg.n_out; i++) L += C[i] * Y[i] + 0.1 * Y[i] * Y[i];
    return L;
}

Test(gnn, graph_from_edges_is_undirected_with_self_loops) {
    hw_err err = {0};
    gnn_graph *g = gnn_graph_from_edges(7, EDGES7, 7, &err);
    cr_assert_not_null(g, "%s", err.msg);
    cr_assert_eq(g->rowptr[7], 7 + 2 * 7);
    /* node 1: self, 0, 2, 4 in order */
    int want[] = {0, 1, 2, 4};
    cr_assert_eq(g->rowptr[2] - g->rowptr[1], 4);
    for (int k = 0; k < 4; k++) cr_assert_eq(g->col[g->rowptr[1] + k], want[k]);
    gnn_graph *b = gnn_graph_batch(g, 3);
    cr_assert_eq(b->n, 21);
    cr_assert_eq(b->nseg, 3);
    cr_assert_eq(b->seg[2], 14);
    for (int i = 14; i < 21; i++)
        for (int p = b->rowptr[i]; p < b->rowptr[i + 1]; p++) cr_assert(b->col[p] >= 14);
    int64_t bad[] = {0, 7};
    cr_assert_null(gnn_graph_from_edges(7, bad, 1, &err));
    cr_assert(strstr(err.msg, "edges[0]"), "%s", err.msg);
    gnn_graph_free(b);
    gnn_graph_free(g);
}

/* finite-difference check of every stride-th parameter (a prime stride samples every tensor) and every input */
static void gradcheck_shape(int heads, int hidden, int out, int depth, int B, size_t stride) {
    gnn_cfg c = {3, hidden, out, heads, depth, 3, 0.5};
    gnn_net *n = gnn_new(&c);
    cr_assert_not_null(n);
    gsl_rng *r = ag_rng_new(11 + heads + depth);
    gnn_init(n, r);
    for (size_t i = 0; i < n->nparams; i++) n->params[i] += 0.1 * (ag_rng_uniform(r) - 0.5); /* non-zero biases */
    hw_err err = {0};
    gnn_graph *g1 = gnn_graph_from_edges(7, EDGES7, 7, &err);
    gnn_graph *g = gnn_graph_batch(g1, B);
    int R = g->n;
    double *X = malloc(sizeof(double) * (size_t)R * 3), *C = malloc(sizeof(double) * (size_t)R * 3);
    for (int i = 0; i < R * 3; i++) X[i] = 2 * ag_rng_uniform(r) - 1, C[i] = 2 * ag_rng_uniform(r) - 1;
    const double *Y = gnn_forward(n, g, X);
    double *dY = malloc(sizeof(double) * (size_t)R * 3), *dX = malloc(sizeof(double) * (size_t)R * 3);
    for (int i = 0; i < R * 3; i++) dY[i] = C[i] + 0.2 * Y[i];
    gnn_zero_grad(n);
    gnn_backward(n, dY, dX);
    double *g0 = malloc(sizeof(double) * n->nparams);
    memcpy(g0, n->grads, sizeof(double) * n->nparams);
    const double eps = 1e-6;
    int bad = 0;
    for (size_t i = 0; i < n->nparams; i += stride) {
        double w = n->params[i];
        n->params[i] = w + eps;
        double lp = loss(n, g, X, C);
        n->params[i] = w - eps;
        double lm = loss(n, g, X, C);
        n->params[i] = w;
        double num = (lp - lm) / (2 * eps);
        if (fabs(num - g0[i]) > 1e-5 * fmax(1.0, fabs(num))) {
            if (bad++ < 5) cr_log_error("param %zu: numeric %.9g analytic %.9g", i, num, g0[i]);
        }
    }
    for (int i = 0; i < R * 3; i++) {
        double x = X[i];
        X[i] = x + eps;
        double lp = loss(n, g, X, C);
        X[i] = x - eps;
        double lm = loss(n, g, X, C);
        X[i] = x;
        double num = (lp - lm) / (2 * eps);
        if (fabs(num - dX[i]) > 1e-5 * fmax(1.0, fabs(num))) {
            if (bad++ < 10) cr_log_error("input %d: numeric %.9g analytic %.9g", i, num, dX[i]);
        }
    }
    cr_assert_eq(bad, 0, "%d gradient mismatches (heads %d depth %d batch %d)", bad, heads, depth, B);
    free(X), free(C), free(dY), free(dX), free(g0);
    gnn_graph_free(g);
    gnn_graph_free(g1);
    gsl_rng_free(r);
    gnn_free(n);
}

static void gradcheck(int heads, int depth, int B) { gradcheck_shape(heads, 4 * heads, 2 * heads, depth, B, 1); }

Test(gnn, gradient_check_one_head_depth1) { gradcheck(1, 1, 1); }
/* the attention kernels' compiled-in shapes: 4 heads of 8 (the critics' width 32) and of 32
 * (Table 2's width 128); the others above run the generic instance */
Test(gnn, gradient_check_four_heads_of_8_batch2) { gradcheck_shape(4, 32, 32, 2, 2, 13); }
Test(gnn, gradient_check_four_heads_of_32) { gradcheck_shape(4, 128, 128, 1, 1, 97); }
Test(gnn, gradient_check_two_heads_depth2_batch2) { gradcheck(2, 2, 2); }
Test(gnn, gradient_check_two_heads_depth3_batch3) { gradcheck(2, 3, 3); }

Test(gnn, batch_rows_equal_single_runs_and_any_node_count) {
    gnn_cfg c = {3, 8, 8, 2, 2, 2, 0.5};
    gnn_net *n = gnn_new(&c);
    gsl_rng *r = ag_rng_new(5);
    gnn_init(n, r);
    hw_err err = {0};
    gnn_graph *g1 = gnn_graph_from_edges(7, EDGES7, 7, &err), *g2 = gnn_graph_batch(g1, 2);
    double X[42];
    for (int i = 0; i < 42; i++) X[i] = ag_rng_uniform(r);
    double Yb[28], Y0[14], Y1[14];
    memcpy(Yb, gnn_forward(n, g2, X), sizeof Yb);
    memcpy(Y0, gnn_forward(n, g1, X), sizeof Y0);
    memcpy(Y1, gnn_forward(n, g1, X + 21), sizeof Y1);
    for (int i = 0; i < 14; i++) {
        cr_assert_float_eq(Yb[i], Y0[i], 1e-12);
        cr_assert_float_eq(Yb[14 + i], Y1[i], 1e-12);
    }
    /* the same weights on a 3-node chain and a single node */
    int64_t e3[] = {0, 1, 1, 2};
    gnn_graph *g3 = gnn_graph_from_edges(3, e3, 2, &err), *gs = gnn_graph_from_edges(1, NULL, 0, &err);
    const double *Y3 = gnn_forward(n, g3, X);
    for (int i = 0; i < 6; i++) cr_assert(isfinite(Y3[i]));
    const double *Ys = gnn_forward(n, gs, X);
    cr_assert(isfinite(Ys[0]) && isfinite(Ys[1]));
    gnn_graph_free(g1), gnn_graph_free(g2), gnn_graph_free(g3), gnn_graph_free(gs);
    gsl_rng_free(r);
    gnn_free(n);
}

Test(gnn, save_load_round_trip) {
    gnn_cfg c = gnn_cfg_default(19, 6);
    c.hidden = c.out = 16;
    gnn_net *n = gnn_new(&c);
    gsl_rng *r = ag_rng_new(9);
    gnn_init(n, r);
    char path[] = "/tmp/hwgym-gnn-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    hw_err err = {0};
    cr_assert_eq(gnn_save(n, f, &err), 0);
    fclose(f);
    f = fopen(path, "rb");
    gnn_net *m = gnn_load(f, &err);
    fclose(f);
    cr_assert_not_null(m, "%s", err.msg);
    cr_assert_eq(m->cfg.hidden, 16);
    cr_assert_eq(m->cfg.heads, 4);
    cr_assert_eq(m->nparams, n->nparams);
    cr_assert_eq(memcmp(m->params, n->params, sizeof(double) * n->nparams), 0);
    f = fopen(path, "wb");
    fputs("HWNN", f);
    fclose(f);
    f = fopen(path, "rb");
    cr_assert_null(gnn_load(f, &err));
    cr_assert(strstr(err.msg, "magic"), "%s", err.msg);
    fclose(f);
    remove(path);
    gnn_cfg bad = c;
    bad.hidden = 18;
    cr_assert_eq(gnn_cfg_check(&bad, &err), -1);
    cr_assert(strstr(err.msg, "divisible"), "%s", err.msg);
    gnn_free(m);
    gnn_free(n);
    gsl_rng_free(r);
}
