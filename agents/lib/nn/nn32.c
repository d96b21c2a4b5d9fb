/* nn32.c - float32 for nnet_mlp (nn.h): a float mirror of the parameters; inference in single
 * precision (nnet_forward32, float activations throughout, its own buffers); and the GEMMs of
 * mixed-precision training (nnet_train32: nn.c's forward and backward call nnet32_fwd/gw/dx, with
 * activations, gradients and parameters kept float64). At MuZero's batch sizes the float GEMMs run
 * 1.8-2.1x faster than the double ones (bench/bench_gemm.c). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

void nnet_sync32(nnet_mlp *n) {
    if (!n->p32) n->p32 = malloc(sizeof(float) * n->nparams);
    if (!n->p32) abort();
    for (size_t i = 0; i < n->nparams; i++) n->p32[i] = (float)n->params[i];
}

static void to_f32(const double *x, size_t m, float *y) {
    for (size_t i = 0; i < m; i++) y[i] = (float)x[i];
}

static void ensure32(nnet_mlp *n, int B) {
    if (B <= n->cap32) return;
    size_t m = (size_t)B * (size_t)nnet_max_size(n);
    for (int k = 0; k < 2; k++) {
        free(n->x32[k]);
        n->x32[k] = malloc(sizeof(float) * m);
    }
    free(n->y32);
    n->y32 = malloc(sizeof(double) * (size_t)B * (size_t)n->sizes[n->nlayers]);
    if (!n->x32[0] || !n->x32[1] || !n->y32) abort();
    n->cap32 = B;
}

const double *nnet_forward32(nnet_mlp *n, const double *X, int B) {
    if (!n->p32) nnet_sync32(n);
    ensure32(n, B);
    float *in = n->x32[0];
    to_f32(X, (size_t)B * (size_t)n->sizes[0], in);
    for (int l = 0; l < n->nlayers; l++) {
        int ni = n->sizes[l], no = n->sizes[l + 1];
        float *Z = n->x32[(l + 1) & 1];
        const float *b = n->p32 + n->boff[l];
        for (int r = 0; r < B; r++) memcpy(Z + (size_t)r * (size_t)no, b, sizeof(float) * (size_t)no);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, no, ni, 1.0f, in, ni, n->p32 + n->woff[l], ni, 1.0f, Z, no);
        if (l < n->nlayers - 1) {
            size_t m = (size_t)B * (size_t)no;
            if (n->act == NNET_TANH)
                for (size_t i = 0; i < m; i++) Z[i] = 1.0f - 2.0f / (expf(2.0f * Z[i]) + 1.0f);
            else
                for (size_t i = 0; i < m; i++) Z[i] = Z[i] > 0 ? Z[i] : 0;
        }
        in = Z;
    }
    size_t mL = (size_t)B * (size_t)n->sizes[n->nlayers];
    for (size_t i = 0; i < mL; i++) n->y32[i] = (double)in[i];
    return n->y32;
}

void nnet_train32(nnet_mlp *n, int on) { n->train32 = on; }

/* float scratch of at least m elements (one block, carved by the callers) */
static float *scratch(nnet_mlp *n, size_t m) {
    if (m > n->s32cap) {
        free(n->s32);
        n->s32 = malloc(sizeof(float) * m);
        if (!n->s32) abort();
        n->s32cap = m;
    }
    return n->s32;
}

void nnet32_fwd(nnet_mlp *n, int l, int B, const double *H, double *Z) {
    int ni = n->sizes[l], no = n->sizes[l + 1];
    size_t mh = (size_t)B * (size_t)ni, mz = (size_t)B * (size_t)no;
    float *h = scratch(n, mh + mz), *z = h + mh;
    to_f32(H, mh, h);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, no, ni, 1.0f, h, ni, n->p32 + n->woff[l], ni, 0.0f, z, no);
    for (size_t i = 0; i < mz; i++) Z[i] += (double)z[i];
}

void nnet32_gw(nnet_mlp *n, int l, int B, const double *dZ, const double *H, double *gW) {
    int ni = n->sizes[l], no = n->sizes[l + 1];
    size_t md = (size_t)B * (size_t)no, mh = (size_t)B * (size_t)ni, mw = (size_t)no * (size_t)ni;
    float *d = scratch(n, md + mh + mw), *h = d + md, *g = h + mh;
    to_f32(dZ, md, d);
    to_f32(H, mh, h);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, no, ni, B, 1.0f, d, no, h, ni, 0.0f, g, ni);
    for (size_t i = 0; i < mw; i++) gW[i] += (double)g[i];
}

void nnet32_dx(nnet_mlp *n, int l, int B, const double *dZ, double *dX) {
    int ni = n->sizes[l], no = n->sizes[l + 1];
    size_t md = (size_t)B * (size_t)no, mx = (size_t)B * (size_t)ni;
    float *d = scratch(n, md + mx), *x = d + md;
    to_f32(dZ, md, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, ni, no, 1.0f, d, no, n->p32 + n->woff[l], ni, 0.0f, x, ni);
    for (size_t i = 0; i < mx; i++) dX[i] = (double)x[i];
}
