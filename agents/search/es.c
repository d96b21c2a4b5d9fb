/* es.c - evolution strategy in the style of Salimans et al. 2017 (see docs/search.md).
 * theta is a vector in the [0,1] encoding (hs_encode). Each generation draws batch/2 Gaussian
 * directions eps_j and scores the antithetic pairs theta +- sigma*eps_j (decoded: categorical
 * elements rounded to the nearest choice) in ONE objective call. Fitnesses are shaped by
 * centred ranks in [-0.5, 0.5], the gradient estimate is
 *   g = 1/(n*sigma) * sum_j (F(+j) - F(-j)) eps_j,
 * and theta takes an Adam ascent step (beta1 0.9, beta2 0.999) with learning rate es_lr,
 * then is clipped to [0,1]. */
#include "agent_common.h"
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

static int cmp_idx(const void *a, const void *b, void *arg) {
    const double *f = arg;
    int i = *(const int *)a, j = *(const int *)b;
    if (f[i] < f[j]) return -1;
    if (f[i] > f[j]) return 1;
    return i - j;
}

int hs_run_es(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim;
    const int half = c->batch / 2, n = 2 * half;
    double *theta = calloc((size_t)d, sizeof(double)), *eps = malloc(sizeof(double) * (size_t)half * d);
    double *x = malloc(sizeof(double) * (size_t)n * d), *u = malloc(sizeof(double) * d);
    double *r = malloc(sizeof(double) * n), *shaped = malloc(sizeof(double) * n);
    double *grad = malloc(sizeof(double) * d), *m1 = calloc((size_t)d, sizeof(double)), *m2 = calloc((size_t)d, sizeof(double));
    int *ord = malloc(sizeof(int) * n);
    if (!theta || !eps || !x || !u || !r || !shaped || !grad || !m1 || !m2 || !ord) abort();
    for (int i = 0; i < d; i++) theta[i] = p->es_init_random > 0 ? gsl_rng_uniform(c->rng) : 0.5;
    const double b1 = 0.9, b2 = 0.999;
    int rc = 0;
    for (int64_t t = 1; hs_left(c) > 0; t++) {
        for (int j = 0; j < half; j++)
            for (int i = 0; i < d; i++) eps[(size_t)j * d + i] = ag_rng_normal(c->rng);
        for (int j = 0; j < half; j++)
            for (int sgn = 0; sgn < 2; sgn++) {
                for (int i = 0; i < d; i++) u[i] = theta[i] + (sgn ? -1 : 1) * p->es_sigma * eps[(size_t)j * d + i];
                hs_decode(s, u, x + (size_t)(2 * j + sgn) * d);
            }
        for (int k = 0; k < n; k++) r[k] = -INFINITY;
        int got = hs_eval(c, n, x, r);
        if (got < 0) {
            rc = -1;
            break;
        }
        if (got < n) break; /* budget spent mid-generation: no update from a partial one */
        /* centred ranks: the worst gets -0.5, the best +0.5 */
        for (int k = 0; k < n; k++) ord[k] = k;
        qsort_r(ord, (size_t)n, sizeof *ord, cmp_idx, r);
        for (int k = 0; k < n; k++) shaped[ord[k]] = n > 1 ? (double)k / (n - 1) - 0.5 : 0;
        memset(grad, 0, sizeof(double) * d);
        for (int j = 0; j < half; j++) {
            double w = shaped[2 * j] - shaped[2 * j + 1];
            for (int i = 0; i < d; i++) grad[i] += w * eps[(size_t)j * d + i];
        }
        for (int i = 0; i < d; i++) {
            double g = grad[i] / (n * p->es_sigma);
            m1[i] = b1 * m1[i] + (1 - b1) * g;
            m2[i] = b2 * m2[i] + (1 - b2) * g * g;
            double mh = m1[i] / (1 - pow(b1, (double)t)), vh = m2[i] / (1 - pow(b2, (double)t));
            theta[i] += p->es_lr * mh / (sqrt(vh) + 1e-8);
            if (theta[i] < 0) theta[i] = 0;
            if (theta[i] > 1) theta[i] = 1;
        }
    }
    free(theta);
    free(eps);
    free(x);
    free(u);
    free(r);
    free(shaped);
    free(grad);
    free(m1);
    free(m2);
    free(ord);
    return rc;
}
