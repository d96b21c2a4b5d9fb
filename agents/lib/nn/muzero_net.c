/* muzero_net.c - see muzero_net.h. */
#include "muzero_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw_space.h"

#define MZ_EPS 1e-3

double mz_h(double x) { return (x < 0 ? -1.0 : 1.0) * (sqrt(fabs(x) + 1.0) - 1.0) + MZ_EPS * x; }

double mz_hinv(double y) {
    /* solve |y| = sqrt(|x|+1) - 1 + eps |x| for |x| (quadratic in sqrt(|x|+1)) */
    double a = fabs(y);
    double r = (sqrt(1.0 + 4.0 * MZ_EPS * (a + 1.0 + MZ_EPS)) - 1.0) / (2.0 * MZ_EPS);
    double x = r * r - 1.0;
    return (y < 0 ? -1.0 : 1.0) * x;
}

void mz_to_cat(double x, int S, double *out) {
    int V = 2 * S + 1;
    memset(out, 0, sizeof(double) * (size_t)V);
    double y = mz_h(x);
    if (!(y > -S)) y = -S;
    if (!(y < S)) y = S;
    double fl = floor(y);
    int i = (int)fl + S;
    double w = y - fl;
    out[i] += 1.0 - w;
    if (i + 1 < V) out[i + 1] += w;
}

void mz_softmax(const double *x, int n, double *out) {
    double m = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    double s = 0;
    for (int i = 0; i < n; i++) s += out[i] = exp(x[i] - m);
    for (int i = 0; i < n; i++) out[i] /= s;
}

double mz_from_logits(const double *logits, int S, double *probs) {
    int V = 2 * S + 1;
    double tmp[256], *p = probs ? probs : tmp;
    mz_softmax(logits, V, p);
    double e = 0;
    for (int i = 0; i < V; i++) e += p[i] * (double)(i - S);
    return mz_hinv(e);
}

/* ------------------------------------------------------------------ features */
int mz_layout_from_space(const hw_space *d, mz_layout *L, hw_err *err) {
    memset(L, 0, sizeof *L);
    if (!d || d->type != HW_SPACE_DICT) return hw_fail(err, HW_E_BAD_REQUEST, "observation space: not a Dict (is the env mmap-v0?)");
    L->off_map = -1;
    int off = 0, seen = 0;
    for (int i = 0; i < d->nchild; i++) {
        const hw_space *c = d->child[i];
        int n = (int)hw_space_numel(c);
        const char *k = d->keys[i];
        if (!strcmp(k, "actions")) {
            L->off_actions = off, seen |= 1;
            if (n != MZ_NACT * 4) return hw_fail(err, HW_E_BAD_REQUEST, "observation.actions: %d elements, expected 12", n);
        } else if (!strcmp(k, "buffers")) {
            L->off_buffers = off, seen |= 2;
            if (n % 10) return hw_fail(err, HW_E_BAD_REQUEST, "observation.buffers: %d elements, not rows of 10", n);
            L->rows = n / 10;
        } else if (!strcmp(k, "global")) {
            L->off_global = off, seen |= 4;
        } else if (!strcmp(k, "memory_map")) {
            L->off_map = off;
            L->map = (int)c->shape[0];
        } else if (!strcmp(k, "memory_profile")) {
            L->off_profile = off, seen |= 8;
            L->profile_len = n;
        } else if (!strcmp(k, "supply")) {
            L->off_supply = off, seen |= 16;
            L->supply_len = n;
        }
        off += n;
    }
    L->obs_dim = off;
    static const char *const names[] = {"actions", "buffers", "global", "memory_profile", "supply"};
    for (int b = 0; b < 5; b++)
        if (!(seen >> b & 1)) return hw_fail(err, HW_E_BAD_REQUEST, "observation: no '%s' key (is the env mmap-v0?)", names[b]);
    return 0;
}

int mzf_dim(const mz_layout *L) { return L->rows * 10 + 12 + 6 + MZ_POOL * MZ_POOL + 2 * MZ_VEC; }

static double lg(double x) { return x > 0 ? log1p(x) / 16.0 : 0.0; }
static double rel(double t, double t0) {
    double v = (t - t0) / 64.0;
    return v > 4 ? 4 : v < -4 ? -4 : v;
}

/* Average of src[a..b) pooled into n bins. */
static void pool1(const double *src, int len, int n, double *out, int logv) {
    for (int i = 0; i < n; i++) {
        int a = (int)((long)i * len / n), b = (int)((long)(i + 1) * len / n);
        if (b <= a) b = a + 1;
        if (b > len) b = len;
        double s = 0;
        for (int j = a; j < b; j++) s += logv ? lg(src[j]) : src[j];
        out[i] = b > a ? s / (b - a) : 0;
    }
}

void mzf_encode(const mz_layout *L, const double *obs, int nbuf, double rscale, double *out) {
    double *o = out;
    const double *B = obs + L->off_buffers;
    double t0 = B[3], ten0 = B[4], al0 = B[5];
    for (int r = 0; r < L->rows; r++, B += 10) {
        if (B[0] == 0) {
            memset(o, 0, sizeof(double) * 10);
            o += 10;
            continue;
        }
        *o++ = 1;
        *o++ = lg(B[1]);
        *o++ = B[2];
        *o++ = rel(B[3], t0);
        *o++ = B[4] == ten0;
        *o++ = B[5] == al0;
        *o++ = rel(B[6], t0);
        *o++ = rel(B[7], t0);
        *o++ = lg(B[8]);
        *o++ = lg(B[9]);
    }
    const double *A = obs + L->off_actions;
    for (int a = 0; a < MZ_NACT; a++, A += 4) {
        *o++ = A[0];
        *o++ = A[1] >= 0 ? rel(A[1], t0) : -5;
        *o++ = A[2] >= 0 ? rel(A[2], t0) : -5;
        *o++ = A[3] >= 0 ? lg(A[3] + 1) : -1;
    }
    const double *G = obs + L->off_global;
    double nb = nbuf > 0 ? nbuf : 1;
    *o++ = G[0] / nb;
    *o++ = G[1] / nb;
    *o++ = lg(G[2]) * 4;
    *o++ = lg(G[3]) * 4;
    *o++ = G[4] * rscale / 100.0;
    *o++ = G[5];
    if (L->off_map >= 0 && L->map > 0) {
        int M = L->map;
        const double *m = obs + L->off_map;
        for (int i = 0; i < MZ_POOL; i++)
            for (int j = 0; j < MZ_POOL; j++) {
                int ra = i * M / MZ_POOL, rb = (i + 1) * M / MZ_POOL, ca = j * M / MZ_POOL, cb = (j + 1) * M / MZ_POOL;
                if (rb <= ra) rb = ra + 1;
                if (cb <= ca) cb = ca + 1;
                double s = 0;
                for (int r = ra; r < rb && r < M; r++)
                    for (int c = ca; c < cb && c < M; c++) s += m[r * M + c];
                *o++ = s / ((rb - ra) * (cb - ca));
            }
    } else {
        memset(o, 0, sizeof(double) * MZ_POOL * MZ_POOL);
        o += MZ_POOL * MZ_POOL;
    }
    pool1(obs + L->off_profile, L->profile_len, MZ_VEC, o, 0);
    o += MZ_VEC;
    pool1(obs + L->off_supply, L->supply_len, MZ_VEC, o, 1);
}

/* ------------------------------------------------------------------ networks */
mz_net_cfg mz_net_cfg_default(int F) {
    mz_net_cfg c = {F, 32, 128, 64, 15};
    return c;
}

mz_net *mz_net_new(const mz_net_cfg *c, gsl_rng *rng) {
    mz_net *n = calloc(1, sizeof *n);
    n->c = *c;
    n->V = 2 * c->S + 1;
    int rs[4] = {c->F, c->Hr, c->Hr, c->E};
    int ds[4] = {c->E + MZ_NACT, c->H, c->H, c->E + n->V};
    int ps[4] = {c->E, c->H, c->H, MZ_NACT + n->V};
    n->repr = nnet_new(3, rs, NNET_RELU);
    n->dyn = nnet_new(3, ds, NNET_RELU);
    n->pred = nnet_new(3, ps, NNET_RELU);
    nnet_init_orthogonal(n->repr, rng, sqrt(2.0), 1.0);
    nnet_init_orthogonal(n->dyn, rng, sqrt(2.0), 1.0);
    nnet_init_orthogonal(n->pred, rng, sqrt(2.0), 0.1);
    /* zero output layers for the reward, value and policy heads (EfficientZero, LightZero): the
     * untrained model predicts reward 0 and value 0 for every action and a uniform prior, so the
     * first searches prefer nothing (a random reward head made them all prefer one action) */
    nnet_mlp *pr = n->pred, *dy = n->dyn;
    int L = pr->nlayers - 1;
    memset(pr->params + pr->woff[L], 0, sizeof(double) * (size_t)pr->sizes[L + 1] * (size_t)pr->sizes[L]);
    memset(pr->params + pr->boff[L], 0, sizeof(double) * (size_t)pr->sizes[L + 1]);
    L = dy->nlayers - 1;
    memset(dy->params + dy->woff[L] + (size_t)c->E * (size_t)dy->sizes[L], 0, sizeof(double) * (size_t)n->V * (size_t)dy->sizes[L]);
    memset(dy->params + dy->boff[L] + c->E, 0, sizeof(double) * (size_t)n->V);
    return n;
}

void mz_net_free(mz_net *n) {
    if (!n) return;
    nnet_free(n->repr);
    nnet_free(n->dyn);
    nnet_free(n->pred);
    free(n->in);
    free(n->tmp);
    free(n);
}

size_t mz_net_nparams(const mz_net *n) { return n->repr->nparams + n->dyn->nparams + n->pred->nparams; }

static void ensure(mz_net *n, int B) {
    if (B <= n->cap) return;
    n->cap = B;
    free(n->in);
    n->in = malloc(sizeof(double) * (size_t)B * (size_t)(n->c.E + MZ_NACT));
}

void mz_net_use_f32(mz_net *n, bool on) {
    n->f32 = on;
    n->dirty32 = true;
}

void mz_net_params_changed(mz_net *n) { n->dirty32 = true; }

/* one MLP's inference forward, in the precision mz_net_use_f32 chose */
static const double *infer(mz_net *n, nnet_mlp *m, const double *X, int B) {
    if (!n->f32) return nnet_forward(m, X, B);
    if (n->dirty32) {
        nnet_sync32(n->repr);
        nnet_sync32(n->dyn);
        nnet_sync32(n->pred);
        n->dirty32 = false;
    }
    return nnet_forward32(m, X, B);
}

static void predict(mz_net *n, const double *emb, int B, double *policy_logits, double *value) {
    if (!policy_logits && !value) return;
    const double *Y = infer(n, n->pred, emb, B);
    int W = MZ_NACT + n->V;
    for (int b = 0; b < B; b++) {
        const double *y = Y + (size_t)b * (size_t)W;
        if (policy_logits) memcpy(policy_logits + b * MZ_NACT, y, sizeof(double) * MZ_NACT);
        if (value) value[b] = mz_from_logits(y + MZ_NACT, n->c.S, NULL);
    }
}

void mz_net_initial(mz_net *n, const double *feats, int B, double *emb_out, double *policy_logits, double *value) {
    const double *Y = infer(n, n->repr, feats, B);
    size_t m = (size_t)B * (size_t)n->c.E;
    for (size_t i = 0; i < m; i++) emb_out[i] = tanh(Y[i]);
    predict(n, emb_out, B, policy_logits, value);
}

void mz_net_recurrent(mz_net *n, const double *emb, const int *act, int B, double *emb_out, double *reward,
                      double *policy_logits, double *value) {
    ensure(n, B);
    int E = n->c.E, I = E + MZ_NACT, W = E + n->V;
    for (int b = 0; b < B; b++) {
        double *x = n->in + (size_t)b * (size_t)I;
        memcpy(x, emb + (size_t)b * (size_t)E, sizeof(double) * (size_t)E);
        x[E] = x[E + 1] = x[E + 2] = 0;
        x[E + act[b]] = 1;
    }
    const double *Y = infer(n, n->dyn, n->in, B);
    for (int b = 0; b < B; b++) {
        const double *y = Y + (size_t)b * (size_t)W;
        double *e = emb_out + (size_t)b * (size_t)E;
        for (int i = 0; i < E; i++) e[i] = tanh(y[i]);
        if (reward) reward[b] = mz_from_logits(y + E, n->c.S, NULL);
    }
    predict(n, emb_out, B, policy_logits, value);
}

int mz_net_save(const mz_net *n, const char *path, hw_err *err) {
    nnet_mlp *nets[3] = {n->repr, n->dyn, n->pred};
    return nnet_save_file(path, nets, 3, err);
}

int mz_net_load(mz_net *n, const char *path, hw_err *err) {
    nnet_mlp *nets[3] = {n->repr, n->dyn, n->pred};
    n->dirty32 = true;
    return nnet_load_file(path, nets, 3, err);
}
