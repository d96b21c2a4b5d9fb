/* gnn.c - the graph attention layer and the Graph U-Net (see gnn.h): parameters, forward,
 * backward, initialisation, save/load. */
#include "gnn.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "gnn_int.h"

#define LEAKY 0.2

struct gnn_scratch {
    gnn_dbuf out, dH, dO, dZ, ds, dt, dX, dU, dx, dpool, dA, ph;
};

static double *dres(gnn_dbuf *b, size_t n) {
    if (n > b->cap) {
        b->cap = n + n / 4 + 16;
        free(b->p);
        b->p = malloc(sizeof(double) * b->cap);
        if (!b->p) abort();
    }
    return b->p;
}

static void dfree(gnn_dbuf *b) {
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

gnn_cfg gnn_cfg_default(int in, int n_out) {
    gnn_cfg c = {in, 128, 128, 4, 4, n_out, 0.5};
    return c;
}

int gnn_cfg_check(const gnn_cfg *c, hw_err *err) {
    if (c->in < 1 || c->in > 4096) return hw_fail(err, HW_E_BAD_CONFIG, "gnn: input size %d outside [1, 4096]", c->in);
    if (c->heads < 1 || c->heads > 64) return hw_fail(err, HW_E_BAD_CONFIG, "gnn: heads %d outside [1, 64]", c->heads);
    if (c->hidden < 1 || c->hidden > 4096 || c->hidden % c->heads)
        return hw_fail(err, HW_E_BAD_CONFIG, "gnn: hidden %d must be in [1, 4096] and divisible by heads %d", c->hidden, c->heads);
    if (c->out < 1 || c->out > 4096 || c->out % c->heads)
        return hw_fail(err, HW_E_BAD_CONFIG, "gnn: out %d must be in [1, 4096] and divisible by heads %d", c->out, c->heads);
    if (c->depth < 1 || c->depth > GNN_MAX_DEPTH)
        return hw_fail(err, HW_E_BAD_CONFIG, "gnn: depth %d outside [1, %d]", c->depth, GNN_MAX_DEPTH);
    if (c->n_out < 1 || c->n_out > 4096) return hw_fail(err, HW_E_BAD_CONFIG, "gnn: n_out %d outside [1, 4096]", c->n_out);
    if (!(c->ratio > 0 && c->ratio <= 1)) return hw_fail(err, HW_E_BAD_CONFIG, "gnn: pooling ratio %g outside (0, 1]", c->ratio);
    return 0;
}

gnn_net *gnn_new(const gnn_cfg *cfg) {
    if (gnn_cfg_check(cfg, NULL)) return NULL;
    gnn_net *n = calloc(1, sizeof *n);
    n->cfg = *cfg;
    int D = cfg->depth;
    n->nconv = 2 * D + 1;
    size_t off = 0;
    for (int c = 0; c < n->nconv; c++) {
        int in = c == 0 ? cfg->in : cfg->hidden, out = c == n->nconv - 1 ? cfg->out : cfg->hidden;
        n->conv_in[c] = in;
        n->conv_out[c] = out;
        n->conv_w[c] = off;
        off += (size_t)in * (size_t)out;
        n->conv_as[c] = off;
        off += (size_t)out;
        n->conv_ad[c] = off;
        off += (size_t)out;
        n->conv_b[c] = off;
        off += (size_t)out;
    }
    for (int l = 1; l <= D; l++) {
        n->pool_p[l] = off;
        off += (size_t)cfg->hidden;
    }
    n->head_w = off;
    off += (size_t)cfg->out * (size_t)cfg->n_out;
    n->head_b = off;
    off += (size_t)cfg->n_out;
    n->nparams = off;
    n->params = calloc(off, sizeof(double));
    n->grads = calloc(off, sizeof(double));
    n->cc = calloc((size_t)n->nconv, sizeof(gnn_conv_cache));
    n->lv = calloc((size_t)D + 1, sizeof(gnn_level));
    for (int l = 1; l <= D; l++) n->lv[l].g = calloc(1, sizeof(gnn_graph));
    n->sc = calloc(1, sizeof(struct gnn_scratch));
    openblas_set_num_threads(1); /* as nnet_new: small matrices, reproducible sums */
    return n;
}

void gnn_free(gnn_net *n) {
    if (!n) return;
    for (int c = 0; c < n->nconv; c++) {
        gnn_conv_cache *k = &n->cc[c];
        dfree(&k->X), dfree(&k->Z), dfree(&k->s), dfree(&k->t), dfree(&k->pre), dfree(&k->alpha), dfree(&k->O), dfree(&k->Y);
    }
    for (int l = 0; l <= n->cfg.depth; l++) {
        gnn_level *v = &n->lv[l];
        gnn_graph_free(v->g);
        free(v->perm.p);
        free(v->ws.p);
        free(v->ws.sc);
        dfree(&v->y), dfree(&v->th), dfree(&v->Xp), dfree(&v->dY);
    }
    struct gnn_scratch *s = n->sc;
    dfree(&s->out), dfree(&s->dH), dfree(&s->dO), dfree(&s->dZ), dfree(&s->ds), dfree(&s->dt), dfree(&s->dX),
        dfree(&s->dU), dfree(&s->dx), dfree(&s->dpool), dfree(&s->dA), dfree(&s->ph);
    free(s);
    free(n->cc);
    free(n->lv);
    free(n->params);
    free(n->grads);
    free(n);
}

static void glorot(double *w, size_t n, int fan_in, int fan_out, gsl_rng *rng) {
    double a = sqrt(6.0 / (double)(fan_in + fan_out));
    for (size_t i = 0; i < n; i++) w[i] = a * (2.0 * gsl_rng_uniform(rng) - 1.0);
}

void gnn_init(gnn_net *n, gsl_rng *rng) {
    memset(n->params, 0, sizeof(double) * n->nparams);
    int K = n->cfg.heads;
    for (int c = 0; c < n->nconv; c++) {
        int in = n->conv_in[c], out = n->conv_out[c], d = out / K;
        glorot(n->params + n->conv_w[c], (size_t)in * (size_t)out, in, out, rng);
        glorot(n->params + n->conv_as[c], (size_t)out, d, 1, rng);
        glorot(n->params + n->conv_ad[c], (size_t)out, d, 1, rng);
    }
    for (int l = 1; l <= n->cfg.depth; l++) glorot(n->params + n->pool_p[l], (size_t)n->cfg.hidden, n->cfg.hidden, 1, rng);
    glorot(n->params + n->head_w, (size_t)n->cfg.out * (size_t)n->cfg.n_out, n->cfg.out, n->cfg.n_out, rng);
}

void gnn_zero_grad(gnn_net *n) { memset(n->grads, 0, sizeof(double) * n->nparams); }

int gnn_ntensors(const gnn_net *n) { return 4 * n->nconv + n->cfg.depth + 2; }

void gnn_layer_range(const gnn_net *n, int t, size_t *begin, size_t *end) {
    size_t b, e;
    if (t < 4 * n->nconv) {
        int c = t / 4, k = t % 4;
        size_t starts[4] = {n->conv_w[c], n->conv_as[c], n->conv_ad[c], n->conv_b[c]};
        b = starts[k];
        e = k < 3 ? starts[k + 1] : n->conv_b[c] + (size_t)n->conv_out[c];
    } else if (t < 4 * n->nconv + n->cfg.depth) {
        int l = t - 4 * n->nconv + 1;
        b = n->pool_p[l];
        e = b + (size_t)n->cfg.hidden;
    } else if (t == 4 * n->nconv + n->cfg.depth) {
        b = n->head_w;
        e = n->head_b;
    } else {
        b = n->head_b;
        e = n->nparams;
    }
    *begin = b;
    *end = e;
}

/* ------------------------------------------------------------------ GAT layer */

/* exp(x) for x <= 709 (clamped below at -708), relative error below 3e-13: Cody-Waite
 * reduction and a degree-10 Taylor polynomial, written branch-free so the loops below
 * vectorise (AVX-512 and AVX2 clones dispatched at load time; the same arithmetic lane by lane, no
 * reassociation and no contraction under -std=c11, so every clone gives the same bits). */
static inline __attribute__((always_inline)) double fexp(double v) {
    const double L2E = 1.4426950408889634, C1 = 6.93145751953125E-1, C2 = 1.42860682030941723212E-6, SH = 0x1.8p52;
    v = v < -708.0 ? -708.0 : v;
    v = v > 709.0 ? 709.0 : v;
    double kd = v * L2E + SH;
    uint64_t kb;
    memcpy(&kb, &kd, 8);
    double k = kd - SH, r = v - k * C1 - k * C2;
    double p = 1.0 / 3628800;
    p = 1.0 / 362880 + r * p;
    p = 1.0 / 40320 + r * p;
    p = 1.0 / 5040 + r * p;
    p = 1.0 / 720 + r * p;
    p = 1.0 / 120 + r * p;
    p = 1.0 / 24 + r * p;
    p = 1.0 / 6 + r * p;
    p = 0.5 + r * p;
    p = 1.0 + r * p;
    p = 1.0 + r * p;
    uint64_t bits = (kb + 1023) << 52;
    double sc;
    memcpy(&sc, &bits, 8);
    return p * sc;
}

#define VEC_FN __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3", "no-trapping-math")))

/* y = exp(y) in place */
VEC_FN static void vexp_inplace(double *restrict y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = fexp(y[i]);
}

/* The per-edge kernels below are written once as always-inline bodies taking the number of
 * heads K and the head width d, and instantiated for Table 2's shapes (4 heads of 8: width 32;
 * 4 heads of 32: width 128) with K and d known at compile time, so the per-head loops unroll
 * into whole vectors, and once for any other shape. Same arithmetic in every instance. */
#define KERNEL_OPT optimize("O3", "no-trapping-math")
#define SHAPES(call, K, d)                                                                                                      \
    do {                                                                                                                        \
        if ((K) == 4 && (d) == 8) call(4, 8);                                                                                   \
        else if ((K) == 4 && (d) == 32) call(4, 32);                                                                            \
        else call(K, d);                                                                                                        \
    } while (0)

/* s_i^k = Z_i^k . a_src^k, t_i^k = Z_i^k . a_dst^k */
static inline __attribute__((always_inline, KERNEL_OPT)) void scores_body(const double *restrict Z, const double *restrict as,
                                                                         const double *restrict ad, double *restrict s,
                                                                         double *restrict t, int R, const int K, const int d) {
    const int H = K * d;
    for (int i = 0; i < R; i++)
        for (int h = 0; h < K; h++) {
            const double *z = Z + (size_t)i * H + (size_t)h * d, *ah = as + h * d, *dh = ad + h * d;
            double ss = 0, tt = 0;
            for (int q = 0; q < d; q++) ss += z[q] * ah[q], tt += z[q] * dh[q];
            s[(size_t)i * K + h] = ss;
            t[(size_t)i * K + h] = tt;
        }
}

VEC_FN static void attn_scores(const double *restrict Z, const double *restrict as, const double *restrict ad, double *restrict s,
                               double *restrict t, int R, int H, int K) {
#define CALL(KK, dd) scores_body(Z, as, ad, s, t, R, KK, dd)
    SHAPES(CALL, K, H / K);
#undef CALL
}

/* O_i = sum_j alpha_ij Z_j per head, normalising alpha (exp of the shifted logits) in place,
 * then Y_i = ELU(O_i + b) while the row is in cache (O itself is not kept: the backward takes
 * ELU'(O) from Y, which is exact, since O > 0 exactly when Y > 0 and ELU'(O) = Y + 1 otherwise) */
static inline __attribute__((always_inline, KERNEL_OPT)) void aggregate_body(const gnn_graph *g, const double *restrict Z,
                                                                            double *restrict al, double *restrict o,
                                                                            const double *restrict b, double *restrict Y, int R,
                                                                            const int K, const int d) {
    const int H = K * d;
    for (int i = 0; i < R; i++) {
        const int p0 = g->rowptr[i], p1 = g->rowptr[i + 1];
        double sum[64];
        if (p1 == p0) memset(o, 0, sizeof(double) * (size_t)H); /* no neighbour (never: self loops) */
        for (int h = 0; h < K; h++) sum[h] = 0;
        for (int p = p0; p < p1; p++)
            for (int h = 0; h < K; h++) sum[h] += al[(size_t)p * K + h];
        for (int h = 0; h < K; h++) sum[h] = 1.0 / sum[h];
        for (int p = p0; p < p1; p++) {
            double *ap = al + (size_t)p * K;
            const double *restrict z = Z + (size_t)g->col[p] * H;
            for (int h = 0; h < K; h++) {
                double a = ap[h] * sum[h];
                ap[h] = a;
                if (p == p0) /* the first neighbour initialises the row (no memset) */
                    for (int q = h * d; q < (h + 1) * d; q++) o[q] = a * z[q];
                else
                    for (int q = h * d; q < (h + 1) * d; q++) o[q] += a * z[q];
            }
        }
        double *restrict y = Y + (size_t)i * H;
        for (int q = 0; q < H; q++) {
            double v = o[q] + b[q];
            double e = fexp(v < 0 ? v : 0.0) - 1.0;
            y[q] = v > 0 ? v : e;
        }
    }
}

VEC_FN static void aggregate(const gnn_graph *g, const double *restrict Z, double *restrict al, double *restrict orow,
                             const double *restrict b, double *restrict Y, int R, int H, int K) {
#define CALL(KK, dd) aggregate_body(g, Z, al, orow, b, Y, R, KK, dd)
    SHAPES(CALL, K, H / K);
#undef CALL
}

static const double *conv_forward(gnn_net *n, int c, const gnn_graph *g, const double *X) {
    gnn_conv_cache *k = &n->cc[c];
    const int F = n->conv_in[c], H = n->conv_out[c], K = n->cfg.heads, R = g->n;
    const size_t nnz = (size_t)g->rowptr[R];
    k->g = g;
    k->rows = R;
    double *Xc = dres(&k->X, (size_t)R * F), *Z = dres(&k->Z, (size_t)R * H), *s = dres(&k->s, (size_t)R * K),
           *t = dres(&k->t, (size_t)R * K), *pre = dres(&k->pre, nnz * K), *al = dres(&k->alpha, nnz * K),
           *orow = dres(&k->O, (size_t)H), *Y = dres(&k->Y, (size_t)R * H);
    if (Xc != X) memcpy(Xc, X, sizeof(double) * (size_t)R * F);
    const double *W = n->params + n->conv_w[c], *as = n->params + n->conv_as[c], *ad = n->params + n->conv_ad[c],
                 *b = n->params + n->conv_b[c];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, H, F, 1.0, Xc, F, W, H, 0.0, Z, H);
    attn_scores(Z, as, ad, s, t, R, H, K);
    /* logits per edge and head, shifted by the row's max; one vectorised exp over all */
    double mx[64];
    for (int i = 0; i < R; i++) {
        const int p0 = g->rowptr[i], p1 = g->rowptr[i + 1];
        const double *ti = t + (size_t)i * K;
        for (int h = 0; h < K; h++) mx[h] = -INFINITY;
        for (int p = p0; p < p1; p++) {
            const double *sj = s + (size_t)g->col[p] * K;
            double *pp = pre + (size_t)p * K;
            for (int h = 0; h < K; h++) {
                double e = ti[h] + sj[h];
                e = e > 0 ? e : LEAKY * e;
                pp[h] = e;
                mx[h] = e > mx[h] ? e : mx[h];
            }
        }
        for (int p = p0; p < p1; p++)
            for (int h = 0; h < K; h++) al[(size_t)p * K + h] = pre[(size_t)p * K + h] - mx[h];
    }
    vexp_inplace(al, nnz * K);
    aggregate(g, Z, al, orow, b, Y, R, H, K);
    return Y;
}

/* The attention part of a GAT layer's backward (everything but the two products with W):
 * dO = dY * ELU'(O); gb += column sums of dO; per row i and head h, with dalpha_p = dO_i . Z_j:
 * dZ_j += alpha_p dO_i, de_p = alpha_p (dalpha_p - sum_p' alpha_p' dalpha_p'), through the
 * LeakyReLU into dt_i and ds_j; then dZ_i += dt_i a_dst + ds_i a_src and the attention vectors'
 * gradients. Sums are vectorised (reassociated: the same binary gives the same results). */
#define BW_OPT optimize("O3", "no-trapping-math", "no-signed-zeros", "associative-math")
static inline __attribute__((always_inline, BW_OPT)) void attn_backward_body(
    const gnn_graph *g, const double *restrict Z, const double *restrict al, const double *restrict pre, const double *restrict Y, const double *restrict dY, const double *restrict as, const double *restrict ad, double *restrict dO,
    double *restrict dZ, double *restrict da, double *restrict ds, double *restrict dt, double *restrict gb, double *restrict gas,
    double *restrict gad, int R, const int K, const int d) {
    const int H = K * d;
    memset(dZ, 0, sizeof(double) * (size_t)R * H);
    memset(ds, 0, sizeof(double) * (size_t)R * K);
    memset(dt, 0, sizeof(double) * (size_t)R * K);
    for (int i = 0; i < R; i++) {
        const int p0 = g->rowptr[i], p1 = g->rowptr[i + 1];
        /* dO_i = dY_i * ELU'(O_i), made where it is used (one pass over the rows) */
        double *dOi = dO + (size_t)i * H;
        const double *dYi = dY + (size_t)i * H, *Yi = Y + (size_t)i * H;
        for (int q = 0; q < H; q++) {
            double v = dYi[q] * (Yi[q] > 0 ? 1.0 : Yi[q] + 1.0);
            dOi[q] = v;
            gb[q] += v;
        }
        double dot_sum[64];
        for (int h = 0; h < K; h++) dot_sum[h] = 0;
        for (int p = p0; p < p1; p++) {
            const double *z = Z + (size_t)g->col[p] * H;
            for (int h = 0; h < K; h++) {
                double v = 0;
                for (int q = h * d; q < (h + 1) * d; q++) v += dOi[q] * z[q];
                da[(size_t)p * K + h] = v;
                dot_sum[h] += al[(size_t)p * K + h] * v;
            }
        }
        for (int p = p0; p < p1; p++) {
            const int j = g->col[p];
            double *dz = dZ + (size_t)j * H;
            for (int h = 0; h < K; h++) {
                const double a = al[(size_t)p * K + h];
                for (int q = h * d; q < (h + 1) * d; q++) dz[q] += a * dOi[q];
                double de = a * (da[(size_t)p * K + h] - dot_sum[h]);
                double dp = de * (pre[(size_t)p * K + h] > 0 ? 1.0 : LEAKY);
                dt[(size_t)i * K + h] += dp;
                ds[(size_t)j * K + h] += dp;
            }
        }
    }
    for (int i = 0; i < R; i++) {
        const double *z = Z + (size_t)i * H;
        double *dz = dZ + (size_t)i * H;
        for (int h = 0; h < K; h++) {
            const double dti = dt[(size_t)i * K + h], dsi = ds[(size_t)i * K + h];
            for (int q = h * d; q < (h + 1) * d; q++) {
                dz[q] += dti * ad[q] + dsi * as[q];
                gad[q] += dti * z[q];
                gas[q] += dsi * z[q];
            }
        }
    }
}

__attribute__((target_clones("avx2", "default"), BW_OPT)) static void attn_backward(
    const gnn_graph *g, const double *restrict Z, const double *restrict al, const double *restrict pre, const double *restrict Y, const double *restrict dY, const double *restrict as, const double *restrict ad, double *restrict dO,
    double *restrict dZ, double *restrict da, double *restrict ds, double *restrict dt, double *restrict gb, double *restrict gas,
    double *restrict gad, int R, int H, int K) {
#define CALL(KK, dd) attn_backward_body(g, Z, al, pre, Y, dY, as, ad, dO, dZ, da, ds, dt, gb, gas, gad, R, KK, dd)
    SHAPES(CALL, K, H / K);
#undef CALL
}

/* dY: R x H (post-activation); dX (R x F) is written (not added). */
static void conv_backward(gnn_net *n, int c, const double *dY, double *dX) {
    gnn_conv_cache *k = &n->cc[c];
    struct gnn_scratch *sc = n->sc;
    const gnn_graph *g = k->g;
    const int F = n->conv_in[c], H = n->conv_out[c], K = n->cfg.heads, R = k->rows;
    const double *Z = k->Z.p, *al = k->alpha.p, *pre = k->pre.p, *Y = k->Y.p, *X = k->X.p;
    const double *W = n->params + n->conv_w[c], *as = n->params + n->conv_as[c], *ad = n->params + n->conv_ad[c];
    double *gW = n->grads + n->conv_w[c], *gas = n->grads + n->conv_as[c], *gad = n->grads + n->conv_ad[c],
           *gb = n->grads + n->conv_b[c];
    double *dO = dres(&sc->dO, (size_t)R * H), *dZ = dres(&sc->dZ, (size_t)R * H), *ds = dres(&sc->ds, (size_t)R * K),
           *dt = dres(&sc->dt, (size_t)R * K);
    double *da = dres(&sc->dA, (size_t)g->rowptr[R] * K);
    attn_backward(g, Z, al, pre, Y, dY, as, ad, dO, dZ, da, ds, dt, gb, gas, gad, R, H, K);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, F, H, R, 1.0, X, F, dZ, H, 1.0, gW, H);
    if (dX) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, F, H, 1.0, dZ, H, W, H, 0.0, dX, F);
}

/* ------------------------------------------------------------------ U-Net */

const double *gnn_forward(gnn_net *n, const gnn_graph *g, const double *X) {
    const int D = n->cfg.depth, Hd = n->cfg.hidden;
    n->rows = g->n;
    const double *x = conv_forward(n, 0, g, X);
    const gnn_graph *gp = g;
    for (int l = 1; l <= D; l++) {
        gnn_level *v = &n->lv[l];
        const double *p = n->params + n->pool_p[l];
        double pn = cblas_dnrm2(Hd, p, 1);
        if (pn < 1e-12) pn = 1e-12;
        double *y = dres(&v->y, (size_t)gp->n);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, gp->n, Hd, 1.0 / pn, x, Hd, p, 1, 0.0, y, 1);
        gnn_ws_int_reserve(&v->perm, gp->n);
        int m = gnn_pool_select(gp, y, n->cfg.ratio, v->perm.p, &v->ws);
        gnn_pool_graph(gp, v->perm.p, m, v->g, &v->ws);
        v->rows = m;
        double *th = dres(&v->th, (size_t)m), *Xp = dres(&n->cc[l].X, (size_t)m * Hd); /* the conv's own input copy */
        for (int r = 0; r < m; r++) {
            int u = v->perm.p[r];
            th[r] = tanh(y[u]);
            for (int q = 0; q < Hd; q++) Xp[(size_t)r * Hd + q] = x[(size_t)u * Hd + q] * th[r];
        }
        x = conv_forward(n, l, v->g, Xp);
        gp = v->g;
    }
    struct gnn_scratch *sc = n->sc;
    for (int i = 0; i < D; i++) {
        int l = D - 1 - i, c = D + 1 + i;
        const gnn_graph *gl = l == 0 ? g : n->lv[l].g;
        const gnn_level *up = &n->lv[l + 1];
        double *U = dres(&n->cc[c].X, (size_t)gl->n * Hd); /* the conv's own input copy */
        memcpy(U, n->cc[l].Y.p, sizeof(double) * (size_t)gl->n * Hd);
        for (int r = 0; r < up->rows; r++) {
            double *u = U + (size_t)up->perm.p[r] * Hd;
            for (int q = 0; q < Hd; q++) u[q] += x[(size_t)r * Hd + q];
        }
        x = conv_forward(n, c, gl, U);
    }
    const int Fo = n->cfg.out, No = n->cfg.n_out;
    double *out = dres(&sc->out, (size_t)g->n * No);
    for (int i = 0; i < g->n; i++) memcpy(out + (size_t)i * No, n->params + n->head_b, sizeof(double) * (size_t)No);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, No, Fo, 1.0, x, Fo, n->params + n->head_w, No, 1.0, out, No);
    return out;
}

void gnn_backward(gnn_net *n, const double *dY, double *dX) {
    const int D = n->cfg.depth, Hd = n->cfg.hidden, Fo = n->cfg.out, No = n->cfg.n_out, R0 = n->rows;
    struct gnn_scratch *sc = n->sc;
    const double *xo = n->cc[n->nconv - 1].Y.p;
    /* head */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Fo, No, R0, 1.0, xo, Fo, dY, No, 1.0, n->grads + n->head_w, No);
    for (int i = 0; i < R0; i++)
        for (int j = 0; j < No; j++) n->grads[n->head_b + j] += dY[(size_t)i * No + j];
    double *dx = dres(&sc->dH, (size_t)R0 * Fo);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R0, Fo, No, 1.0, dY, No, n->params + n->head_w, No, 0.0, dx, Fo);
    /* dL/dY of every down conv */
    for (int l = 0; l <= D; l++) {
        int rows = n->cc[l].rows;
        memset(dres(&n->lv[l].dY, (size_t)rows * Hd), 0, sizeof(double) * (size_t)rows * Hd);
    }
    /* up path, last conv first */
    gnn_dbuf *cur = &sc->dH, *nxt = &sc->dx;
    for (int i = D - 1; i >= 0; i--) {
        int l = D - 1 - i, c = D + 1 + i;
        int rows = n->cc[c].rows;
        double *dU = dres(&sc->dU, (size_t)rows * Hd);
        conv_backward(n, c, cur->p, dU);
        double *dskip = n->lv[l].dY.p;
        for (size_t k = 0; k < (size_t)rows * Hd; k++) dskip[k] += dU[k];
        const gnn_level *up = &n->lv[l + 1];
        double *dprev;
        if (i == 0) dprev = n->lv[D].dY.p; /* the input of the first up conv was Y_D */
        else dprev = memset(dres(nxt, (size_t)up->rows * Hd), 0, sizeof(double) * (size_t)up->rows * Hd);
        for (int r = 0; r < up->rows; r++) {
            const double *s = dU + (size_t)up->perm.p[r] * Hd;
            for (int q = 0; q < Hd; q++) dprev[(size_t)r * Hd + q] += s[q];
        }
        if (i > 0) {
            gnn_dbuf *t = cur;
            cur = nxt;
            nxt = t;
        }
    }
    /* down path */
    for (int l = D; l >= 1; l--) {
        gnn_level *v = &n->lv[l];
        int m = v->rows;
        double *dXp = dres(&sc->dpool, (size_t)m * Hd);
        conv_backward(n, l, v->dY.p, dXp);
        const double *xprev = n->cc[l - 1].Y.p, *p = n->params + n->pool_p[l];
        double *dprev = n->lv[l - 1].dY.p, *gp = n->grads + n->pool_p[l];
        double pn = cblas_dnrm2(Hd, p, 1);
        if (pn < 1e-12) pn = 1e-12;
        const double ipn = 1.0 / pn;
        double *ph = dres(&sc->ph, (size_t)Hd); /* p / |p|, once per level instead of per row */
        for (int q = 0; q < Hd; q++) ph[q] = p[q] * ipn;
        for (int r = 0; r < m; r++) {
            int u = v->perm.p[r];
            const double *xu = xprev + (size_t)u * Hd;
            const double *g = dXp + (size_t)r * Hd;
            double th = v->th.p[r], dth = 0;
            for (int q = 0; q < Hd; q++) {
                dprev[(size_t)u * Hd + q] += g[q] * th;
                dth += g[q] * xu[q];
            }
            double dy = dth * (1.0 - th * th), yu = v->y.p[u];
            const double dyi = dy * ipn; /* d(x.p/|p|)/dp = (x - y p/|p|) / |p| */
            for (int q = 0; q < Hd; q++) {
                dprev[(size_t)u * Hd + q] += dy * ph[q];
                gp[q] += dyi * (xu[q] - yu * ph[q]);
            }
        }
    }
    conv_backward(n, 0, n->lv[0].dY.p, dX);
}

/* ------------------------------------------------------------------ save / load */

static int wr_u32(FILE *f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

static int rd_u32(FILE *f, uint32_t *v) {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

int gnn_save(const gnn_net *n, FILE *f, hw_err *err) {
    const gnn_cfg *c = &n->cfg;
    uint32_t hdr[8] = {1, (uint32_t)c->in, (uint32_t)c->hidden, (uint32_t)c->out, (uint32_t)c->heads, (uint32_t)c->depth,
                       (uint32_t)c->n_out, (uint32_t)llround(c->ratio * 1e6)};
    if (fwrite("HWGN", 1, 4, f) != 4) return hw_fail(err, HW_E_INTERNAL, "gnn_save: write failed");
    for (int i = 0; i < 8; i++)
        if (wr_u32(f, hdr[i])) return hw_fail(err, HW_E_INTERNAL, "gnn_save: write failed");
    for (size_t i = 0; i < n->nparams; i++) {
        uint64_t u;
        memcpy(&u, &n->params[i], 8);
        if (wr_u32(f, (uint32_t)u) || wr_u32(f, (uint32_t)(u >> 32))) return hw_fail(err, HW_E_INTERNAL, "gnn_save: write failed");
    }
    return 0;
}

gnn_net *gnn_load(FILE *f, hw_err *err) {
    char magic[4];
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "HWGN", 4)) {
        hw_fail(err, HW_E_BAD_CONFIG, "gnn_load: not a GNN file (magic)");
        return NULL;
    }
    uint32_t h[8];
    for (int i = 0; i < 8; i++)
        if (rd_u32(f, &h[i])) {
            hw_fail(err, HW_E_BAD_CONFIG, "gnn_load: truncated header");
            return NULL;
        }
    if (h[0] != 1) {
        hw_fail(err, HW_E_BAD_CONFIG, "gnn_load: version %u (expected 1)", h[0]);
        return NULL;
    }
    gnn_cfg c = {(int)h[1], (int)h[2], (int)h[3], (int)h[4], (int)h[5], (int)h[6], h[7] / 1e6};
    if (gnn_cfg_check(&c, err)) return NULL;
    gnn_net *n = gnn_new(&c);
    for (size_t i = 0; i < n->nparams; i++) {
        uint32_t lo, hi;
        if (rd_u32(f, &lo) || rd_u32(f, &hi)) {
            hw_fail(err, HW_E_BAD_CONFIG, "gnn_load: truncated parameters (%zu of %zu)", i, n->nparams);
            gnn_free(n);
            return NULL;
        }
        uint64_t u = (uint64_t)lo | (uint64_t)hi << 32;
        memcpy(&n->params[i], &u, 8);
    }
    return n;
}
