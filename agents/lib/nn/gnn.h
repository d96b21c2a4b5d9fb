/* gnn.h - graph neural networks on CBLAS, float64: the EGRL paper's Graph U-Net (Gao and Ji
 * 2019) built from multi-head graph attention layers (Velickovic et al. 2018), with a per-node
 * linear head. Owns: batched graphs (CSR, disjoint unions of samples), the GAT layer, top-k
 * pooling / unpooling with A^2 connectivity augmentation, the U-Net assembly, its flat
 * parameters and gradients, Glorot initialisation, batched forward/backward and save/load.
 * docs/egrl.md is the user guide.
 *
 * Graph (gnn_graph): T rows (nodes) split into `nseg` segments (samples); neighbour lists in
 * CSR, undirected, with a self loop on every node, never crossing a segment. A batch of B
 * copies of one workload graph is gnn_graph_batch(g, B): same-shape matrices then run as one
 * dgemm over all B*N rows, while pooling picks each sample's own top-k nodes.
 *
 * GAT layer (F -> H = K heads x d, heads concatenated):
 *   Z = X W (W: F x H); s_i^k = Z_i^k . a_src^k; t_i^k = Z_i^k . a_dst^k;
 *   e_ij^k = LeakyReLU_0.2(t_i^k + s_j^k) over j in N(i) (self included);
 *   alpha_ij^k = softmax_j e_ij^k;  O_i^k = sum_j alpha_ij^k Z_j^k;  Y = act(O + b),
 *   act = ELU on every layer of the U-Net, the last up layer GAT'_0 included; the only linear
 *   map after it is the per-node head below.
 * Top-k pooling (projection p): y = X p / |p|; per segment keep the k = ceil(ratio n) rows of
 *   largest y (ties: lower row), in row order; X' = X[idx] * tanh(y[idx]); the pooled graph is
 *   A^2 restricted to idx (Gao and Ji's augmentation, as PyG's GraphUNet).
 * U-Net of depth D (PyG GraphUNet with sum residuals):
 *   x = ELU(GAT_0(x; A_0));  for l = 1..D: pool_l, x = ELU(GAT_l(x; A_l));
 *   for l = D-1..0: x = skip_l + unpool(x) (zeros elsewhere); x = ELU(GAT'_l(x; A_l));
 *   then the linear head per node: out = x Wh + bh (n_out outputs).
 *   Widths: GAT_0: in -> hidden; the others hidden -> hidden; GAT'_0: hidden -> out.
 * The same parameters run on any graph (any N), which is what zero-shot transfer needs.
 *
 * Parameters are one flat vector (params, grads alike) so Adam, mutation and crossover see
 * one array; gnn_layer_range() gives the [begin, end) of each parameter tensor for
 * layer-wise operators. gnn_backward ADDS into grads (gnn_zero_grad first) and can return
 * dL/dX. File format: "HWGN" magic, uint32 version 1, uint32 in, hidden, out, heads, depth,
 * n_out, uint32 ratio*1e6, then nparams float64 (little-endian). */
#ifndef HWGYM_GNN_H
#define HWGYM_GNN_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw_error.h"

#define GNN_MAX_DEPTH 8

typedef struct gnn_graph {
    int n;         /* rows (total over segments) */
    int nseg;      /* samples */
    int *seg;      /* nseg + 1 row offsets */
    int *rowptr;   /* n + 1 */
    int *col;      /* rowptr[n] neighbour rows */
    int cap_n, cap_e, cap_s;
} gnn_graph;

/* One graph of n nodes from E (src, dst) pairs (int64 rows, as placement-v0's "edges"): made
 * undirected with self loops, duplicates removed. NULL with err on a bad edge. */
gnn_graph *gnn_graph_from_edges(int n, const int64_t *edges, int E, hw_err *err);
/* B disjoint copies of g (one segment each). */
gnn_graph *gnn_graph_batch(const gnn_graph *g, int B);
void gnn_graph_free(gnn_graph *g);

typedef struct gnn_cfg {
    int in, hidden, out, heads, depth, n_out;
    double ratio; /* pooling ratio (0.5) */
} gnn_cfg;

/* hidden 128, out 128, heads 4, depth 4, ratio 0.5 (Table 2); in and n_out from the caller. */
gnn_cfg gnn_cfg_default(int in, int n_out);
/* Checks sizes (hidden and out divisible by heads, depth 1..GNN_MAX_DEPTH, ...). */
int gnn_cfg_check(const gnn_cfg *c, hw_err *err);

typedef struct gnn_conv_cache gnn_conv_cache; /* private */
typedef struct gnn_level gnn_level;           /* private */

typedef struct gnn_net {
    gnn_cfg cfg;
    int nconv; /* 2 depth + 1: down 0..depth, then up depth-1..0 */
    size_t nparams;
    double *params, *grads;
    /* offsets into params per conv: W, a_src, a_dst, b; per pool p; head Wh, bh */
    size_t conv_w[2 * GNN_MAX_DEPTH + 1], conv_as[2 * GNN_MAX_DEPTH + 1], conv_ad[2 * GNN_MAX_DEPTH + 1],
        conv_b[2 * GNN_MAX_DEPTH + 1];
    int conv_in[2 * GNN_MAX_DEPTH + 1], conv_out[2 * GNN_MAX_DEPTH + 1];
    size_t pool_p[GNN_MAX_DEPTH + 1];
    size_t head_w, head_b;
    /* forward caches (grown on demand) */
    gnn_conv_cache *cc;
    gnn_level *lv;
    struct gnn_scratch *sc;
    int rows; /* rows of the last forward */
} gnn_net;

gnn_net *gnn_new(const gnn_cfg *cfg);
void gnn_free(gnn_net *n);
/* Glorot-uniform weights and attention vectors, uniform pooling projections, zero biases. */
void gnn_init(gnn_net *n, gsl_rng *rng);
/* Forward on X (g->n x in, row-major); returns g->n x n_out (owned by n, valid until the next
 * forward). g must outlive the backward of this forward. */
const double *gnn_forward(gnn_net *n, const gnn_graph *g, const double *X);
/* Backward of the last forward: dY (rows x n_out); adds parameter gradients into grads; dX
 * (rows x in) may be NULL. */
void gnn_backward(gnn_net *n, const double *dY, double *dX);
void gnn_zero_grad(gnn_net *n);
/* Number of parameter tensors and the [begin, end) of tensor t in params. */
int gnn_ntensors(const gnn_net *n);
void gnn_layer_range(const gnn_net *n, int t, size_t *begin, size_t *end);

int gnn_save(const gnn_net *n, FILE *f, hw_err *err);
/* Reads a network written by gnn_save into a new gnn_net (sizes from the file). */
gnn_net *gnn_load(FILE *f, hw_err *err);

#endif
