/* bo.c - Bayesian optimisation with a Gaussian process (see docs/search.md).
 *
 * Model: GP on the [0,1] encoding of the parameters (hs_encode), Matern 5/2 kernel with one
 * length scale, targets standardised (zero mean, unit variance) so the signal variance is 1.
 * The length scale and noise come from the log marginal likelihood on a small grid, refitted
 * every bo_refit rounds; the Cholesky factor comes from LAPACKE_dpotrf, K^-1 y from
 * LAPACKE_dpotrs, predictive variances from triangular solves (cblas_dtrsv / dtrsm). L is kept
 * row-major lower, which is the same memory as column-major upper: LAPACK is called in
 * column-major 'U' (the _work variants), so nothing is transposed or NaN-scanned per call.
 *
 * Acquisition: expected improvement over the best training target, maximised over the
 * continuous relaxation [0,1]^d: bo_cand candidates (half uniform, half Gaussian perturbations
 * of the best points) are screened with one batched solve, then NLopt's BOBYQA (COBYLA for
 * d = 1) polishes the best bo_starts of them; the optimum is rounded to the nearest choice.
 * A rounded point that was already evaluated (or proposed in this batch) is replaced by the
 * next-best rounded candidate, or else a random unseen point.
 *
 * Tractable at 20,000 samples because:
 *  - the training set is bounded: the best bo_train/2 points plus the most recent bo_train/2
 *    (default 256 in all), so one fit costs O(256^3) whatever the sample count;
 *  - each round proposes q = batch points (default 8) with the kriging believer: after each
 *    proposal the GP is conditioned on its own mean there through an O(n^2) Cholesky append,
 *    and all q points are scored by ONE evaluate_batch;
 *  - the hyperparameter grid search runs only every bo_refit rounds (others reuse them). */
#include <cblas.h>
#include <lapacke.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

static void *bo_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

double hs_matern52(double r, double ell, double sf2) {
    double a = sqrt(5.0) * r / ell;
    return sf2 * (1.0 + a + a * a / 3.0) * exp(-a);
}

static double dist(const double *a, const double *b, int d) {
    double s = 0;
    for (int i = 0; i < d; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

hs_gp *hs_gp_new(int d, int cap) {
    hs_gp *g = calloc(1, sizeof *g);
    if (!g) abort();
    g->d = d;
    g->cap = cap;
    g->X = bo_xmalloc(sizeof(double) * (size_t)cap * d);
    g->y = bo_xmalloc(sizeof(double) * cap);
    g->L = bo_xmalloc(sizeof(double) * (size_t)cap * cap);
    g->alpha = bo_xmalloc(sizeof(double) * cap);
    g->work = bo_xmalloc(sizeof(double) * cap);
    return g;
}

void hs_gp_free(hs_gp *g) {
    if (!g) return;
    free(g->X);
    free(g->y);
    free(g->L);
    free(g->alpha);
    free(g->work);
    free(g);
}

/* Factorises K (from g->X, hyperparameters in g) and solves alpha. Returns log ML or -inf. */
static double factor(hs_gp *g, const double *D /* n x n distances or NULL */) {
    const int n = g->n, cap = g->cap, d = g->d;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            double r = D ? D[(size_t)i * n + j] : dist(g->X + (size_t)i * d, g->X + (size_t)j * d, d);
            g->L[(size_t)i * cap + j] = hs_matern52(r, g->ell, g->sf2) + (i == j ? g->sn2 : 0);
        }
        for (int j = i + 1; j < n; j++) g->L[(size_t)i * cap + j] = 0;
    }
    if (n == 0) return 0;
    if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, g->L, cap) != 0) return -INFINITY;
    memcpy(g->alpha, g->y, sizeof(double) * n);
    if (LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', n, 1, g->L, cap, g->alpha, n) != 0) return -INFINITY;
    double ll = 0;
    for (int i = 0; i < n; i++) ll += -0.5 * g->y[i] * g->alpha[i] - log(g->L[(size_t)i * cap + i]);
    return ll - 0.5 * n * log(2 * M_PI);
}

static void load(hs_gp *g, int n, const double *X, const double *y) {
    g->n = n;
    memcpy(g->X, X, sizeof(double) * (size_t)n * g->d);
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) m += y[i];
    m = n ? m / n : 0;
    for (int i = 0; i < n; i++) v += (y[i] - m) * (y[i] - m);
    v = n ? v / n : 0;
    g->ymean = m;
    g->ystd = v > 1e-300 ? sqrt(v) : 1.0;
    for (int i = 0; i < n; i++) g->y[i] = (y[i] - m) / g->ystd;
}

double hs_gp_fit(hs_gp *g, int n, const double *X, const double *y, double ell, double sf2, double sn2) {
    load(g, n, X, y);
    g->ell = ell;
    g->sf2 = sf2;
    g->sn2 = sn2;
    return factor(g, NULL);
}

void hs_gp_fit_ml(hs_gp *g, int n, const double *X, const double *y) {
    static const double ells[] = {0.05, 0.1, 0.2, 0.35, 0.5, 0.8, 1.2, 2.0};
    static const double noises[] = {1e-6, 1e-4, 1e-2, 1e-1};
    load(g, n, X, y);
    double *D = bo_xmalloc(sizeof(double) * (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) D[(size_t)i * n + j] = dist(g->X + (size_t)i * g->d, g->X + (size_t)j * g->d, g->d);
    double best = -INFINITY, bell = 0.5, bsn = 1e-2;
    g->sf2 = 1.0;
    for (size_t a = 0; a < sizeof ells / sizeof ells[0]; a++)
        for (size_t b = 0; b < sizeof noises / sizeof noises[0]; b++) {
            g->ell = ells[a];
            g->sn2 = noises[b];
            double ll = factor(g, D);
            if (ll > best) {
                best = ll;
                bell = ells[a];
                bsn = noises[b];
            }
        }
    g->ell = bell;
    g->sn2 = bsn;
    double ll = factor(g, D);
    for (int t = 0; t < 8 && !isfinite(ll); t++) { /* not PD: more jitter */
        g->sn2 = g->sn2 * 10 + 1e-6;
        ll = factor(g, D);
    }
    free(D);
}

/* Standardised posterior at x. */
static void predict_std(const hs_gp *g, const double *x, double *mean, double *var) {
    const int n = g->n, d = g->d;
    double *k = g->work;
    double m = 0;
    for (int i = 0; i < n; i++) {
        k[i] = hs_matern52(dist(g->X + (size_t)i * d, x, d), g->ell, g->sf2);
        m += k[i] * g->alpha[i];
    }
    double v = g->sf2;
    if (n > 0) {
        cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, g->L, g->cap, k, 1);
        v -= cblas_ddot(n, k, 1, k, 1);
    }
    *mean = m;
    *var = v > 1e-12 ? v : 1e-12;
}

void hs_gp_predict(const hs_gp *g, const double *x, double *mean, double *var) {
    double m, v;
    predict_std(g, x, &m, &v);
    *mean = g->ymean + g->ystd * m;
    *var = v * g->ystd * g->ystd;
}

int hs_gp_append_believer(hs_gp *g, const double *x) {
    const int n = g->n, d = g->d, cap = g->cap;
    if (n >= cap) return -1;
    double *k = bo_xmalloc(sizeof(double) * (n + 1));
    double m = 0;
    for (int i = 0; i < n; i++) {
        k[i] = hs_matern52(dist(g->X + (size_t)i * d, x, d), g->ell, g->sf2);
        m += k[i] * g->alpha[i];
    }
    if (n > 0) cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, g->L, cap, k, 1);
    double dd = g->sf2 + g->sn2 - (n > 0 ? cblas_ddot(n, k, 1, k, 1) : 0);
    if (!(dd > 1e-14)) {
        free(k);
        return -1;
    }
    for (int j = 0; j < n; j++) g->L[(size_t)n * cap + j] = k[j];
    g->L[(size_t)n * cap + n] = sqrt(dd);
    for (int i = 0; i < n; i++) g->L[(size_t)i * cap + n] = 0;
    memcpy(g->X + (size_t)n * d, x, sizeof(double) * d);
    g->y[n] = m;
    g->n = n + 1;
    memcpy(g->alpha, g->y, sizeof(double) * g->n);
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', g->n, 1, g->L, cap, g->alpha, g->n);
    free(k);
    return 0;
}

double hs_ei(double mean, double sd, double best, double xi) {
    double imp = mean - best - xi;
    if (!(sd > 0)) return imp > 0 ? imp : 0;
    double z = imp / sd;
    double cdf = 0.5 * erfc(-z / sqrt(2.0)), pdf = exp(-0.5 * z * z) / sqrt(2 * M_PI);
    double ei = imp * cdf + sd * pdf;
    return ei > 0 ? ei : 0;
}

/* ---------------- the BO loop ---------------- */

typedef struct seen_set {
    uint64_t *slot;
    size_t cap, n;
} seen_set;

static uint64_t point_hash(const double *x, int d) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < d; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        for (int k = 0; k < 8; k++) {
            h ^= (b >> (8 * k)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h ? h : 1;
}

static bool seen_has(const seen_set *s, uint64_t h) {
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slot[i]) return false;
        if (s->slot[i] == h) return true;
    }
}

static void seen_add(seen_set *s, uint64_t h) {
    if (s->n * 10 >= s->cap * 7) return; /* full: best effort */
    size_t i = h & (s->cap - 1);
    while (s->slot[i] && s->slot[i] != h) i = (i + 1) & (s->cap - 1);
    if (!s->slot[i]) {
        s->slot[i] = h;
        s->n++;
    }
}

typedef struct acq_ctx {
    const hs_gp *g;
    double best, xi;
} acq_ctx;

static double acq_f(unsigned n, const double *u, double *grad, void *data) {
    (void)n;
    (void)grad;
    const acq_ctx *a = data;
    double m, v;
    predict_std(a->g, u, &m, &v);
    return hs_ei(m, sqrt(v), a->best, a->xi);
}

static int bo_cmp_desc(const void *a, const void *b, void *arg) {
    const double *f = arg;
    int i = *(const int *)a, j = *(const int *)b;
    if (f[i] > f[j]) return -1;
    if (f[i] < f[j]) return 1;
    return i - j;
}

int hs_run_bo(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim, q = c->batch;
    int M = p->bo_train < 8 ? 8 : (int)p->bo_train;
    int ninit = p->bo_init > 0 ? (int)p->bo_init : (2 * d > 10 ? 2 * d : 10);
    int refit = p->bo_refit < 1 ? 1 : (int)p->bo_refit;
    int C = p->bo_cand < 4 ? 4 : (int)p->bo_cand;
    int starts = p->bo_starts < 0 ? 0 : (int)p->bo_starts;
    int64_t budget = c->o->budget;
    size_t hcap = (size_t)(budget > 0 ? budget : 1);
    double *HX = bo_xmalloc(sizeof(double) * hcap * d), *HY = bo_xmalloc(sizeof(double) * hcap);
    int64_t nh = 0;
    seen_set seen = {0};
    seen.cap = 1024;
    while (seen.cap < 2 * hcap + 2 * (size_t)q && seen.cap < ((size_t)1 << 22)) seen.cap <<= 1;
    seen.slot = calloc(seen.cap, sizeof(uint64_t));
    hs_gp *g = hs_gp_new(d, M + q);
    double *x = bo_xmalloc(sizeof(double) * (size_t)q * d), *r = bo_xmalloc(sizeof(double) * q);
    double *TX = bo_xmalloc(sizeof(double) * (size_t)M * d), *TY = bo_xmalloc(sizeof(double) * M);
    double *cand = bo_xmalloc(sizeof(double) * (size_t)C * d), *ks = bo_xmalloc(sizeof(double) * (size_t)(M + q) * C);
    double *ei = bo_xmalloc(sizeof(double) * C), *u = bo_xmalloc(sizeof(double) * d), *xr = bo_xmalloc(sizeof(double) * d);
    int *ord = bo_xmalloc(sizeof(int) * (C > M ? C : M)), *hord = bo_xmalloc(sizeof(int) * hcap);
    char *taken = calloc(hcap, 1);
    int *top = bo_xmalloc(sizeof(int) * (size_t)(M / 2 + 1)), ntop = 0;
    if (!seen.slot) abort();
    double ell = 0.5, sn2 = 1e-2;
    int rc = 0;
    nlopt_opt opt = nlopt_create(d >= 2 ? NLOPT_LN_BOBYQA : NLOPT_LN_COBYLA, (unsigned)d);
    nlopt_set_lower_bounds1(opt, 0.0);
    nlopt_set_upper_bounds1(opt, 1.0);
    nlopt_set_maxeval(opt, p->bo_maxeval < 1 ? 1 : (int)p->bo_maxeval);
    nlopt_set_xtol_rel(opt, 1e-4);
    for (int64_t round = 0; hs_left(c) > 0; round++) {
        int nq = hs_left(c) < q ? (int)hs_left(c) : q;
        if (nh < ninit) {
            /* initial design: random unseen points */
            for (int j = 0; j < nq; j++) {
                double *xj = x + (size_t)j * d;
                for (int t = 0; t < 50; t++) {
                    hs_random_point(c, xj);
                    if (!seen_has(&seen, point_hash(xj, d))) break;
                }
                seen_add(&seen, point_hash(xj, d));
            }
        } else {
            /* bounded training set: the best M/2 (kept sorted as points arrive), then the most
             * recent others, up to M */
            int n = 0;
            if (nh <= M) {
                for (int64_t i = 0; i < nh; i++) hord[n++] = (int)i;
            } else {
                for (int i = 0; i < ntop; i++) {
                    hord[n++] = top[i];
                    taken[top[i]] = 1;
                }
                for (int64_t i = nh - 1; i >= 0 && n < M; i--)
                    if (!taken[i]) hord[n++] = (int)i;
                for (int i = 0; i < ntop; i++) taken[top[i]] = 0;
            }
            double ymin = INFINITY;
            for (int i = 0; i < n; i++)
                if (isfinite(HY[hord[i]]) && HY[hord[i]] < ymin) ymin = HY[hord[i]];
            if (!isfinite(ymin)) ymin = 0;
            for (int i = 0; i < n; i++) {
                memcpy(TX + (size_t)i * d, HX + (size_t)hord[i] * d, sizeof(double) * d);
                TY[i] = isfinite(HY[hord[i]]) ? HY[hord[i]] : ymin; /* failed points count as the worst */
            }
            if (round % refit == 0) {
                hs_gp_fit_ml(g, n, TX, TY);
                ell = g->ell;
                sn2 = g->sn2;
            } else {
                double ll = hs_gp_fit(g, n, TX, TY, ell, 1.0, sn2);
                for (int t = 0; t < 8 && !isfinite(ll); t++) ll = hs_gp_fit(g, n, TX, TY, ell, 1.0, sn2 = sn2 * 10 + 1e-6);
            }
            double ybest = -INFINITY;
            int ibest = 0;
            for (int i = 0; i < n; i++)
                if (g->y[i] > ybest) {
                    ybest = g->y[i];
                    ibest = i;
                }
            acq_ctx ac = {g, ybest, p->bo_xi};
            nlopt_set_max_objective(opt, acq_f, &ac);
            for (int j = 0; j < nq; j++) {
                /* screen candidates: half uniform, half around the best training points */
                for (int k = 0; k < C; k++) {
                    double *ck = cand + (size_t)k * d;
                    if (k % 2 == 0) {
                        for (int i = 0; i < d; i++) ck[i] = gsl_rng_uniform(c->rng);
                    } else {
                        int src = k % 4 == 1 ? ibest : (int)gsl_rng_uniform_int(c->rng, (unsigned long)n);
                        for (int i = 0; i < d; i++) {
                            double v = TX[(size_t)src * d + i] + 0.1 * (gsl_rng_uniform(c->rng) * 2 - 1) * 1.5;
                            ck[i] = v < 0 ? 0 : v > 1 ? 1 : v;
                        }
                    }
                }
                const int gn = g->n;
                for (int i = 0; i < gn; i++)
                    for (int k = 0; k < C; k++)
                        ks[(size_t)i * C + k] = hs_matern52(dist(g->X + (size_t)i * d, cand + (size_t)k * d, d), g->ell, g->sf2);
                for (int k = 0; k < C; k++) {
                    double m = 0;
                    for (int i = 0; i < gn; i++) m += ks[(size_t)i * C + k] * g->alpha[i];
                    ei[k] = m; /* mean for now */
                }
                cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, gn, C, 1.0, g->L, g->cap, ks, C);
                for (int k = 0; k < C; k++) {
                    double v = g->sf2;
                    for (int i = 0; i < gn; i++) v -= ks[(size_t)i * C + k] * ks[(size_t)i * C + k];
                    ei[k] = hs_ei(ei[k], sqrt(v > 1e-12 ? v : 1e-12), ybest, p->bo_xi);
                }
                for (int k = 0; k < C; k++) ord[k] = k;
                qsort_r(ord, (size_t)C, sizeof *ord, bo_cmp_desc, ei);
                double bestv = -1;
                for (int t = 0; t < starts && t < C; t++) {
                    memcpy(u, cand + (size_t)ord[t] * d, sizeof(double) * d);
                    double f = 0;
                    nlopt_optimize(opt, u, &f);
                    if (f > bestv) {
                        bestv = f;
                        memcpy(xr, u, sizeof(double) * d);
                    }
                }
                double *xj = x + (size_t)j * d;
                bool ok = false;
                if (starts > 0) {
                    hs_decode(s, xr, xj);
                    ok = !seen_has(&seen, point_hash(xj, d));
                }
                for (int t = 0; t < C && !ok; t++) {
                    hs_decode(s, cand + (size_t)ord[t] * d, xj);
                    ok = !seen_has(&seen, point_hash(xj, d));
                }
                for (int t = 0; t < 50 && !ok; t++) {
                    hs_random_point(c, xj);
                    ok = !seen_has(&seen, point_hash(xj, d));
                }
                seen_add(&seen, point_hash(xj, d));
                hs_encode(s, xj, u);
                if (j + 1 < nq) hs_gp_append_believer(g, u);
            }
        }
        int got = hs_eval(c, nq, x, r);
        if (got < 0) {
            rc = -1;
            break;
        }
        for (int j = 0; j < got && (size_t)nh < hcap; j++, nh++) {
            hs_encode(s, x + (size_t)j * d, HX + (size_t)nh * d);
            HY[nh] = r[j];
            /* insert into the sorted best-M/2 list (ties: the earlier point stays ahead) */
            int pos = ntop;
            while (pos > 0 && HY[top[pos - 1]] < r[j]) pos--;
            if (pos < M / 2) {
                int last = ntop < M / 2 ? ntop : M / 2 - 1;
                memmove(top + pos + 1, top + pos, sizeof(int) * (size_t)(last - pos));
                top[pos] = (int)nh;
                if (ntop < M / 2) ntop++;
            }
        }
        if (got < nq) break;
    }
    nlopt_destroy(opt);
    hs_gp_free(g);
    free(seen.slot);
    free(HX);
    free(HY);
    free(x);
    free(r);
    free(TX);
    free(TY);
    free(cand);
    free(ks);
    free(ei);
    free(u);
    free(xr);
    free(ord);
    free(hord);
    free(taken);
    free(top);
    return rc;
}
