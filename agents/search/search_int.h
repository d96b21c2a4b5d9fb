/* search_int.h - what the algorithms of hwgym-search share (not a public API). */
#ifndef HW_SEARCH_INT_H
#define HW_SEARCH_INT_H

#include <gsl/gsl_rng.h>
#include <math.h>

#include "search.h"

typedef struct hs_ctx {
    const hs_opts *o;
    const hs_space *s;
    hs_objective *obj;
    gsl_rng *rng;
    int batch;
    hs_result *res;
    hw_err *err;
    json_t **mbuf; /* batch metrics scratch */
} hs_ctx;

/* Points the budget still allows. */
static inline int64_t hs_left(const hs_ctx *c) { return c->o->budget - c->res->samples; }
/* Scores the first min(n, budget left) rows of x in ONE objective call (n <= batch).
 * r[i] gets the reward, with NaN (failed point) replaced by -INFINITY. Returns how many were
 * scored (0 when the budget is spent), or -1 on an objective failure. */
int hs_eval(hs_ctx *c, int n, const double *x, double *r);
/* A uniformly random point. */
void hs_random_point(hs_ctx *c, double *x);
/* Selection value of a reward (NaN -> -inf). */
static inline double hs_fit(double r) { return isnan(r) ? -INFINITY : r; }

int hs_run_random(hs_ctx *c);
int hs_run_ga(hs_ctx *c);
int hs_run_gamma(hs_ctx *c);
int hs_run_bo(hs_ctx *c);
int hs_run_es(hs_ctx *c);
int hs_run_aco(hs_ctx *c);
int hs_run_sa(hs_ctx *c);

/* ---- simulated annealing (sa.c; exposed for tests) ---- */
/* Geometric schedule: t0 at step 0, t1 at step steps-1 (t0 when steps <= 1). */
double hs_sa_temperature(double t0, double t1, int64_t step, int64_t steps);
/* Metropolis: 1 when r_new >= r_cur (or r_cur is -inf), else u < exp((r_new - r_cur) / temp);
 * never for r_new = -inf. u is a uniform draw in [0, 1). */
int hs_sa_accept(double r_new, double r_cur, double temp, double u);

/* ---- GAMMA operators (exposed for tests) ---- */
typedef struct hs_gamma_map {
    int dim;
    int norder, ntile, npar;
    int *order;     /* genes whose name contains "order" and whose labels are permutations */
    int *tile;      /* genes whose name contains "tile" */
    int *par;       /* genes whose name contains "parallel" */
    char *dimch;    /* per gene: the dimension letter of a tile gene ("l2_tile_K" -> 'K'), or 0 */
    int *level;     /* per gene: 1 for "l1_" genes, 2 for "l2_" genes, 0 otherwise */
    int plen;       /* permutation length of the order genes' labels */
} hs_gamma_map;

hs_gamma_map *hs_gamma_map_new(const hs_space *s);
void hs_gamma_map_free(hs_gamma_map *m);
/* Each operator edits child in place and keeps every gene within its card. */
void hs_gamma_mutate(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double rate, double *g);
void hs_gamma_crossover(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, const double *a, const double *b,
                        double *child);
void hs_gamma_reorder(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double *g);
void hs_gamma_growth(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double *g);

/* ---- GP (exposed for tests) ---- */
typedef struct hs_gp {
    int d, n, cap;
    double ell, sf2, sn2;   /* length scale, signal variance, noise variance */
    double ymean, ystd;     /* standardisation of the targets */
    double *X;              /* n x d (cap rows) */
    double *y;              /* standardised targets */
    double *L;              /* Cholesky factor (lower, n x n, leading dim cap) */
    double *alpha;          /* K^-1 y */
    double *work;
} hs_gp;

double hs_matern52(double r, double ell, double sf2);
hs_gp *hs_gp_new(int d, int cap);
void hs_gp_free(hs_gp *g);
/* Fits on n points (raw targets y, standardised inside) with fixed hyperparameters.
 * Returns the log marginal likelihood, or -INFINITY when K is not positive definite. */
double hs_gp_fit(hs_gp *g, int n, const double *X, const double *y, double ell, double sf2, double sn2);
/* Chooses ell and sn2 by marginal likelihood over a small grid, then fits. */
void hs_gp_fit_ml(hs_gp *g, int n, const double *X, const double *y);
/* Posterior mean and variance (in raw target units) at x. */
void hs_gp_predict(const hs_gp *g, const double *x, double *mean, double *var);
/* Appends a fantasy observation (kriging believer: y = posterior mean) with an O(n^2) Cholesky
 * update, so the next proposal of a batch avoids this one. Returns 0, -1 when full/not PD. */
int hs_gp_append_believer(hs_gp *g, const double *x);
/* Expected improvement of mean/sd over best (maximisation) with exploration xi. */
double hs_ei(double mean, double sd, double best, double xi);

#endif
