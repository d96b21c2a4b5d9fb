/* nn.h - small dense networks on CBLAS (OpenBLAS), float64 throughout (and a float32 inference
 * path, nn32.c).
 * Owns: MLPs (dense layers, tanh/ReLU hidden activations, linear output), orthogonal
 * initialisation (LAPACKE QR), batched forward/backward with gradient accumulation, Adam,
 * global gradient-norm clipping, the linear learning-rate schedule, and save/load.
 *
 * Layout: layer l maps n_l -> n_{l+1}; its weight W_l is n_{l+1} x n_l row-major, followed by
 * its bias b_l (n_{l+1}); all layers' parameters are one contiguous vector `params` (and the
 * same layout for `grads`), so optimisers and clipping see one flat array.
 * Forward on a batch X (B x n_0 row-major): H_{l+1} = act(H_l W_l^T + b_l), the last layer
 * linear. nnet_backward() takes dL/dY (B x n_L) and ADDS dL/dparams into grads (call nnet_zero_grad
 * first), and returns dL/dX when asked.
 *
 * File format (nnet_save/nnet_load, little-endian): "HWNN" magic, uint32 version 1, uint32 nlayers,
 * uint32 sizes[nlayers+1], uint32 hidden activation (0 tanh, 1 relu), then nparams float64.
 * nnet_load checks every field against the network it loads into and names the mismatch.
 * Several networks can be written to one stream one after another.
 * Threads: nnet_new() sets OpenBLAS to ONE thread for the whole process (small matrices run
 * faster single-threaded, and results are reproducible); a process that wants BLAS threads for
 * big matrices can call openblas_set_num_threads() again after creating its networks. */
#ifndef HWGYM_NN_H
#define HWGYM_NN_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdio.h>

#include "hw_error.h"

#define NNET_MAX_LAYERS 8

typedef enum nnet_act { NNET_TANH = 0, NNET_RELU = 1 } nnet_act;

typedef struct nnet_mlp {
    int nlayers;                   /* dense layers */
    int sizes[NNET_MAX_LAYERS + 1];  /* sizes[0] inputs ... sizes[nlayers] outputs */
    nnet_act act;                    /* hidden activation */
    size_t nparams;
    double *params, *grads;
    size_t woff[NNET_MAX_LAYERS], boff[NNET_MAX_LAYERS];
    /* forward cache of the last nnet_forward (batch rows) */
    int batch, cap;
    double *h[NNET_MAX_LAYERS + 1];  /* h[0] = input copy, h[l] = layer l output (post-activation) */
    double *dh[2];                 /* backward scratch */
    /* float32 inference (nn32.c): a float mirror of params (nnet_sync32) and its own buffers, so
     * nnet_forward32 leaves the float64 forward cache above alone */
    float *p32, *x32[2];
    double *y32;
    int cap32;
    /* mixed-precision training (nnet_train32): nnet_forward / nnet_backward run their GEMMs in
     * float32 from the mirror (synced at each forward), activations and gradients stay float64 */
    int train32;
    float *s32;
    size_t s32cap;
} nnet_mlp;

/* the widest layer (inputs and outputs included): the row width of per-batch scratch */
static inline int nnet_max_size(const nnet_mlp *n) {
    int m = 0;
    for (int l = 0; l <= n->nlayers; l++)
        if (n->sizes[l] > m) m = n->sizes[l];
    return m;
}

/* sizes has nlayers+1 entries. Parameters are zero until nnet_init_orthogonal. */
nnet_mlp *nnet_new(int nlayers, const int *sizes, nnet_act act);
void nnet_free(nnet_mlp *n);
/* Orthogonal weights (gain `hidden_gain` for hidden layers, `out_gain` for the last; CleanRL
 * uses sqrt(2) and 0.01 (policy) or 1.0 (value)), zero biases. */
int nnet_init_orthogonal(nnet_mlp *n, gsl_rng *rng, double hidden_gain, double out_gain);
/* Fills W (rows x cols, row-major) with gain * a (semi-)orthogonal matrix: rows are
 * orthonormal when rows <= cols, columns otherwise. */
int nnet_orthogonal(double *W, int rows, int cols, double gain, gsl_rng *rng);
/* Forward for B rows; returns the output (B x n_L), owned by n, valid until the next call. */
const double *nnet_forward(nnet_mlp *n, const double *X, int B);
/* Backward of the last forward. dY: B x n_L. dX (B x n_0) may be NULL. */
void nnet_backward(nnet_mlp *n, const double *dY, double *dX);
void nnet_zero_grad(nnet_mlp *n);
/* float32 inference (nn32.c). nnet_sync32 copies params into the float mirror (call it after
 * params change); nnet_forward32 runs the forward pass in single precision (cblas_sgemm) from
 * that mirror, syncing first if it was never synced, and returns the output as float64 (B x n_L,
 * owned by n, valid until the next nnet_forward32); the float64 forward cache is left alone, so
 * it cannot be used for nnet_backward. */
void nnet_sync32(nnet_mlp *n);
const double *nnet_forward32(nnet_mlp *n, const double *X, int B);
/* Mixed precision: with on, nnet_forward syncs the float mirror and nnet_forward / nnet_backward
 * run every GEMM in float32 (inputs rounded to float, products added into the float64
 * activations and gradients); the forward cache, biases, activations and grads stay float64. */
void nnet_train32(nnet_mlp *n, int on);
/* the GEMMs of the mixed-precision path (called by nn.c): Z (B x out) += H (B x in) W_l^T;
 * gW (out x in) += dZ^T H; dX (B x in) = dZ W_l */
void nnet32_fwd(nnet_mlp *n, int l, int B, const double *H, double *Z);
void nnet32_gw(nnet_mlp *n, int l, int B, const double *dZ, const double *H, double *gW);
void nnet32_dx(nnet_mlp *n, int l, int B, const double *dZ, double *dX);

typedef struct nnet_adam {
    size_t n;
    double *m, *v;
    long t;
    double lr, beta1, beta2, eps;
} nnet_adam;

/* Adam with beta1 0.9, beta2 0.999, eps 1e-5 (CleanRL's PPO) unless changed after. */
nnet_adam *nnet_adam_new(size_t n, double lr);
void nnet_adam_free(nnet_adam *a);
/* p -= lr * mhat / (sqrt(vhat) + eps), bias-corrected. */
void nnet_adam_step(nnet_adam *a, double *p, const double *g);

/* Global L2 norm over k gradient vectors; when it exceeds max_norm (> 0) all are scaled by
 * max_norm / (norm + 1e-6) (torch's clip_grad_norm_). Returns the norm before clipping. */
double nnet_clip_grad_norm(double *const *g, const size_t *len, int k, double max_norm);
/* CleanRL's annealing: lr0 * (1 - (update - 1) / num_updates), update counted from 1. */
double nnet_linear_lr(double lr0, long update, long num_updates);

int nnet_save(const nnet_mlp *n, FILE *f, hw_err *err);
int nnet_load(nnet_mlp *n, FILE *f, hw_err *err);
/* Whole-file helpers for k networks saved in order. */
int nnet_save_file(const char *path, nnet_mlp *const *nets, int k, hw_err *err);
int nnet_load_file(const char *path, nnet_mlp *const *nets, int k, hw_err *err);

#endif
