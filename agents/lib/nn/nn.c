/* nn.c - see nn.h. Includes OpenBLAS's cblas.h: never include gsl/gsl_randist.h here. */
#include "nn.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

nnet_mlp *nnet_new(int nlayers, const int *sizes, nnet_act act) {
    if (nlayers < 1 || nlayers > NNET_MAX_LAYERS) return NULL;
    /* Our matrices are small (batch <= a few hundred, 64 units): OpenBLAS's threads cost more
     * than they save (2x slower measured in bench_ppo) and single-threaded sums are reproducible. */
    openblas_set_num_threads(1);
    nnet_mlp *n = calloc(1, sizeof *n);
    n->nlayers = nlayers;
    n->act = act;
    size_t off = 0;
    for (int l = 0; l <= nlayers; l++) n->sizes[l] = sizes[l];
    for (int l = 0; l < nlayers; l++) {
        n->woff[l] = off;
        off += (size_t)sizes[l + 1] * (size_t)sizes[l];
        n->boff[l] = off;
        off += (size_t)sizes[l + 1];
    }
    n->nparams = off;
    n->params = calloc(off, sizeof(double));
    n->grads = calloc(off, sizeof(double));
    return n;
}

void nnet_free(nnet_mlp *n) {
    if (!n) return;
    for (int l = 0; l <= n->nlayers; l++) free(n->h[l]);
    free(n->dh[0]);
    free(n->dh[1]);
    free(n->params);
    free(n->grads);
    free(n->p32);
    free(n->x32[0]);
    free(n->x32[1]);
    free(n->y32);
    free(n->s32);
    free(n);
}

int nnet_orthogonal(double *W, int rows, int cols, double gain, gsl_rng *rng) {
    /* QR of a Gaussian (big x small) matrix A; Q (big x small) has orthonormal columns. */
    int big = rows > cols ? rows : cols, small = rows > cols ? cols : rows;
    double *A = malloc(sizeof(double) * (size_t)big * (size_t)small);
    double *tau = malloc(sizeof(double) * (size_t)small);
    double *d = malloc(sizeof(double) * (size_t)small);
    for (size_t i = 0; i < (size_t)big * (size_t)small; i++) A[i] = ag_rng_normal(rng);
    int rc = (int)LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, big, small, A, small, tau);
    if (rc == 0) {
        for (int i = 0; i < small; i++) d[i] = A[(size_t)i * (size_t)small + (size_t)i] < 0 ? -1.0 : 1.0; /* sign(diag R) */
        rc = (int)LAPACKE_dorgqr(LAPACK_ROW_MAJOR, big, small, small, A, small, tau);
    }
    if (rc == 0) {
        for (int i = 0; i < big; i++)
            for (int j = 0; j < small; j++) {
                double q = A[(size_t)i * (size_t)small + (size_t)j] * d[j] * gain;
                if (rows >= cols) W[(size_t)i * (size_t)cols + (size_t)j] = q; /* W = Q */
                else W[(size_t)j * (size_t)cols + (size_t)i] = q;              /* W = Q^T */
            }
    }
    free(A);
    free(tau);
    free(d);
    return rc == 0 ? 0 : -1;
}

int nnet_init_orthogonal(nnet_mlp *n, gsl_rng *rng, double hidden_gain, double out_gain) {
    for (int l = 0; l < n->nlayers; l++) {
        double g = l == n->nlayers - 1 ? out_gain : hidden_gain;
        if (nnet_orthogonal(n->params + n->woff[l], n->sizes[l + 1], n->sizes[l], g, rng)) return -1;
        memset(n->params + n->boff[l], 0, sizeof(double) * (size_t)n->sizes[l + 1]);
    }
    return 0;
}

/* tanh through one exp: glibc's tanh (expm1-based) was half of a PPO update's time. Absolute
 * error ~1e-16, saturates correctly for large |x| (exp overflows to inf -> 1, underflows -> -1). */
static inline double fast_tanh(double x) { return 1.0 - 2.0 / (exp(2.0 * x) + 1.0); }

static void ensure(nnet_mlp *n, int B) {
    if (B <= n->cap) return;
    for (int l = 0; l <= n->nlayers; l++) {
        free(n->h[l]);
        n->h[l] = malloc(sizeof(double) * (size_t)B * (size_t)n->sizes[l]);
    }
    size_t m = (size_t)B * (size_t)nnet_max_size(n);
    free(n->dh[0]);
    free(n->dh[1]);
    n->dh[0] = malloc(sizeof(double) * m);
    n->dh[1] = malloc(sizeof(double) * m);
    n->cap = B;
}

const double *nnet_forward(nnet_mlp *n, const double *X, int B) {
    ensure(n, B);
    n->batch = B;
    memcpy(n->h[0], X, sizeof(double) * (size_t)B * (size_t)n->sizes[0]);
    if (n->train32) nnet_sync32(n);
    for (int l = 0; l < n->nlayers; l++) {
        int in = n->sizes[l], out = n->sizes[l + 1];
        double *Z = n->h[l + 1];
        const double *b = n->params + n->boff[l];
        for (int r = 0; r < B; r++) memcpy(Z + (size_t)r * (size_t)out, b, sizeof(double) * (size_t)out);
        if (n->train32) nnet32_fwd(n, l, B, n->h[l], Z);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0, n->h[l], in, n->params + n->woff[l], in,
                        1.0, Z, out);
        if (l < n->nlayers - 1) {
            size_t m = (size_t)B * (size_t)out;
            if (n->act == NNET_TANH)
                for (size_t i = 0; i < m; i++) Z[i] = fast_tanh(Z[i]);
            else
                for (size_t i = 0; i < m; i++) Z[i] = Z[i] > 0 ? Z[i] : 0;
        }
    }
    return n->h[n->nlayers];
}

void nnet_backward(nnet_mlp *n, const double *dY, double *dX) {
    int B = n->batch, L = n->nlayers;
    double *dz = n->dh[0], *dnext = n->dh[1];
    memcpy(dz, dY, sizeof(double) * (size_t)B * (size_t)n->sizes[L]);
    for (int l = L - 1; l >= 0; l--) {
        int in = n->sizes[l], out = n->sizes[l + 1];
        double *gW = n->grads + n->woff[l], *gb = n->grads + n->boff[l];
        if (n->train32) nnet32_gw(n, l, B, dz, n->h[l], gW);
        else cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, B, 1.0, dz, out, n->h[l], in, 1.0, gW, in);
        for (int r = 0; r < B; r++) {
            const double *row = dz + (size_t)r * (size_t)out;
            for (int j = 0; j < out; j++) gb[j] += row[j];
        }
        if (l == 0 && !dX) break;
        double *target = l == 0 ? dX : dnext;
        if (n->train32) nnet32_dx(n, l, B, dz, target);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, out, 1.0, dz, out, n->params + n->woff[l], in, 0.0,
                        target, in);
        if (l == 0) break;
        const double *H = n->h[l];
        size_t m = (size_t)B * (size_t)in;
        if (n->act == NNET_TANH)
            for (size_t i = 0; i < m; i++) target[i] *= 1.0 - H[i] * H[i];
        else
            for (size_t i = 0; i < m; i++) target[i] = H[i] > 0 ? target[i] : 0;
        double *t = dz;
        dz = dnext;
        dnext = t;
    }
}

void nnet_zero_grad(nnet_mlp *n) { memset(n->grads, 0, sizeof(double) * n->nparams); }

nnet_adam *nnet_adam_new(size_t n, double lr) {
    nnet_adam *a = calloc(1, sizeof *a);
    a->n = n;
    a->m = calloc(n ? n : 1, sizeof(double));
    a->v = calloc(n ? n : 1, sizeof(double));
    a->lr = lr;
    a->beta1 = 0.9;
    a->beta2 = 0.999;
    a->eps = 1e-5;
    return a;
}

void nnet_adam_free(nnet_adam *a) {
    if (!a) return;
    free(a->m);
    free(a->v);
    free(a);
}

void nnet_adam_step(nnet_adam *a, double *p, const double *g) {
    a->t++;
    double bc1 = 1.0 - pow(a->beta1, (double)a->t), bc2 = 1.0 - pow(a->beta2, (double)a->t);
    double step = a->lr / bc1, sbc2 = sqrt(bc2);
    for (size_t i = 0; i < a->n; i++) {
        a->m[i] = a->beta1 * a->m[i] + (1 - a->beta1) * g[i];
        a->v[i] = a->beta2 * a->v[i] + (1 - a->beta2) * g[i] * g[i];
        /* torch: p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) */
        p[i] -= step * a->m[i] / (sqrt(a->v[i]) / sbc2 + a->eps);
    }
}

double nnet_clip_grad_norm(double *const *g, const size_t *len, int k, double max_norm) {
    double s = 0;
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < len[i]; j++) s += g[i][j] * g[i][j];
    double norm = sqrt(s);
    if (max_norm > 0 && norm > max_norm) {
        double c = max_norm / (norm + 1e-6);
        for (int i = 0; i < k; i++)
            for (size_t j = 0; j < len[i]; j++) g[i][j] *= c;
    }
    return norm;
}

double nnet_linear_lr(double lr0, long update, long num_updates) {
    if (num_updates <= 0) return lr0;
    double frac = 1.0 - (double)(update - 1) / (double)num_updates;
    return frac * lr0;
}

static const char MAGIC[4] = {'H', 'W', 'N', 'N'};

static void put_u32(FILE *f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static int get_u32(FILE *f, uint32_t *v) {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

int nnet_save(const nnet_mlp *n, FILE *f, hw_err *err) {
    fwrite(MAGIC, 1, 4, f);
    put_u32(f, 1);
    put_u32(f, (uint32_t)n->nlayers);
    for (int l = 0; l <= n->nlayers; l++) put_u32(f, (uint32_t)n->sizes[l]);
    put_u32(f, (uint32_t)n->act);
    for (size_t i = 0; i < n->nparams; i++) {
        uint64_t u;
        memcpy(&u, &n->params[i], 8);
        unsigned char b[8];
        for (int k = 0; k < 8; k++) b[k] = (unsigned char)(u >> (8 * k));
        fwrite(b, 1, 8, f);
    }
    if (ferror(f)) return hw_fail(err, HW_E_IO, "nnet_save: write failed");
    return 0;
}

int nnet_load(nnet_mlp *n, FILE *f, hw_err *err) {
    char m[4];
    uint32_t v, nl, s, act;
    if (fread(m, 1, 4, f) != 4 || memcmp(m, MAGIC, 4)) return hw_fail(err, HW_E_IO, "nnet_load: not an hwgym network (bad magic)");
    if (get_u32(f, &v) || v != 1) return hw_fail(err, HW_E_IO, "nnet_load: unsupported version %u", v);
    if (get_u32(f, &nl)) return hw_fail(err, HW_E_IO, "nnet_load: truncated header");
    if ((int)nl != n->nlayers)
        return hw_fail(err, HW_E_BAD_CONFIG, "nnet_load: file has %u layers, network has %d", nl, n->nlayers);
    for (int l = 0; l <= n->nlayers; l++) {
        if (get_u32(f, &s)) return hw_fail(err, HW_E_IO, "nnet_load: truncated header");
        if ((int)s != n->sizes[l])
            return hw_fail(err, HW_E_BAD_CONFIG, "nnet_load: sizes[%d] is %u in the file, %d in the network", l, s, n->sizes[l]);
    }
    if (get_u32(f, &act)) return hw_fail(err, HW_E_IO, "nnet_load: truncated header");
    if ((int)act != (int)n->act)
        return hw_fail(err, HW_E_BAD_CONFIG, "nnet_load: activation %u in the file, %d in the network", act, (int)n->act);
    for (size_t i = 0; i < n->nparams; i++) {
        unsigned char b[8];
        if (fread(b, 1, 8, f) != 8) return hw_fail(err, HW_E_IO, "nnet_load: truncated parameters (%zu of %zu)", i, n->nparams);
        uint64_t u = 0;
        for (int k = 0; k < 8; k++) u |= (uint64_t)b[k] << (8 * k);
        memcpy(&n->params[i], &u, 8);
    }
    return 0;
}

int nnet_save_file(const char *path, nnet_mlp *const *nets, int k, hw_err *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return hw_fail(err, HW_E_IO, "cannot write %s", path);
    int rc = 0;
    for (int i = 0; i < k && !rc; i++) rc = nnet_save(nets[i], f, err);
    if (fclose(f) && !rc) rc = hw_fail(err, HW_E_IO, "cannot write %s", path);
    return rc;
}

int nnet_load_file(const char *path, nnet_mlp *const *nets, int k, hw_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return hw_fail(err, HW_E_IO, "cannot read %s", path);
    int rc = 0;
    for (int i = 0; i < k && !rc; i++) {
        rc = nnet_load(nets[i], f, err);
        if (rc) hw_err_prefix(err, path);
    }
    fclose(f);
    return rc;
}
