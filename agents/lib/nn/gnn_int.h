/* gnn_int.h - private pieces shared by gnn.c and gnn_graph.c (not part of the agents API). */
#ifndef HWGYM_GNN_INT_H
#define HWGYM_GNN_INT_H

#include <stddef.h>

#include "gnn.h"

typedef struct gnn_ws_int {
    int *p;
    size_t cap;
    void *sc; /* gnn_pool_select's (score, row) pairs */
    size_t sc_cap;
} gnn_ws_int;

typedef struct gnn_dbuf {
    double *p;
    size_t cap;
} gnn_dbuf;

void gnn_ws_int_reserve(gnn_ws_int *w, int n);
void gnn_graph_reserve(gnn_graph *g, int n, int nnz, int nseg);
int gnn_topk_rows(int n, double ratio);
/* Top-k rows of every segment by score y (ties: lower row), ascending; returns their count. */
int gnn_pool_select(const gnn_graph *g, const double *y, double ratio, int *perm, gnn_ws_int *ws);
/* out = A^2 of g restricted to perm (m rows), segments kept. */
void gnn_pool_graph(const gnn_graph *g, const int *perm, int m, gnn_graph *out, gnn_ws_int *ws);

struct gnn_conv_cache {
    const gnn_graph *g;
    int rows;
    gnn_dbuf X, Z, s, t, pre, alpha, O, Y; /* O: one row of scratch (the pre-activation is not kept) */
};

struct gnn_level {
    gnn_graph *g; /* pooled graph (levels >= 1; owned) */
    gnn_ws_int perm;
    int rows;
    gnn_dbuf y, th, Xp, dY; /* scores of the previous level, tanh at perm, pooled input, dL/dY of the down conv */
    gnn_ws_int ws;          /* pooling scratch, kept between forwards (no allocation per call) */
};

#endif
