/* aco.c - ant-colony optimisation as ArchGym uses it for design-space exploration: the design
 * space is a layered graph, one layer per parameter and one node per value of that parameter,
 * and every ant walks it once, choosing one value per parameter (see docs/search.md).
 *  - Pheromone tau[i][k] per parameter i and value k, initially 1.
 *  - An ant picks, per parameter, with probability aco_greediness the value with the most
 *    pheromone (exploitation), otherwise a value drawn with probability ~ tau^aco_alpha.
 *  - All ants of an iteration (batch) are scored in ONE objective call.
 *  - Evaporation tau <- (1 - rho) tau, then the best aco_elite_frac of the ants deposit
 *    rank-weighted pheromone (best ant 1, decreasing linearly) on the values they chose, and the
 *    best-so-far design deposits 1 as well; tau is kept >= aco_tau_min (MMAS-style floor).
 * Box elements are discretised into aco_bins levels. */
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

static int aco_cmp_desc(const void *a, const void *b, void *arg) {
    const double *f = arg;
    int i = *(const int *)a, j = *(const int *)b;
    if (f[i] > f[j]) return -1;
    if (f[i] < f[j]) return 1;
    return i - j;
}

int hs_run_aco(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim, A = c->batch;
    int bins = p->aco_bins < 2 ? 2 : (int)p->aco_bins;
    int64_t *nv = malloc(sizeof(int64_t) * d);
    size_t *off = malloc(sizeof(size_t) * (d + 1));
    if (!nv || !off) abort();
    off[0] = 0;
    for (int i = 0; i < d; i++) {
        nv[i] = s->card[i] ? s->card[i] : bins;
        off[i + 1] = off[i] + (size_t)nv[i];
    }
    double *tau = malloc(sizeof(double) * off[d]), *prob = malloc(sizeof(double) * off[d]);
    int64_t *choice = malloc(sizeof(int64_t) * (size_t)A * d), *bestc = malloc(sizeof(int64_t) * d);
    double *x = malloc(sizeof(double) * (size_t)A * d), *r = malloc(sizeof(double) * A);
    int *ord = malloc(sizeof(int) * A);
    if (!tau || !prob || !choice || !bestc || !x || !r || !ord) abort();
    for (size_t k = 0; k < off[d]; k++) tau[k] = 1.0;
    double bestr = -INFINITY;
    int rc = 0;
    while (hs_left(c) > 0) {
        for (int a = 0; a < A; a++) {
            for (int i = 0; i < d; i++) {
                double *t = tau + off[i];
                int64_t k = 0;
                if (gsl_rng_uniform(c->rng) < p->aco_greediness) {
                    for (int64_t v = 1; v < nv[i]; v++)
                        if (t[v] > t[k]) k = v;
                } else {
                    double sum = 0;
                    for (int64_t v = 0; v < nv[i]; v++) sum += (prob[off[i] + v] = pow(t[v], p->aco_alpha));
                    double z = gsl_rng_uniform(c->rng) * sum;
                    for (k = 0; k < nv[i] - 1; k++) {
                        z -= prob[off[i] + k];
                        if (z < 0) break;
                    }
                }
                choice[(size_t)a * d + i] = k;
                x[(size_t)a * d + i] = s->card[i] ? (double)k
                                                  : s->low[i] + ((double)k + 0.5) / bins * (s->high[i] - s->low[i]);
            }
            r[a] = -INFINITY;
        }
        int got = hs_eval(c, A, x, r);
        if (got < 0) {
            rc = -1;
            break;
        }
        for (int a = 0; a < got; a++)
            if (r[a] > bestr) {
                bestr = r[a];
                memcpy(bestc, choice + (size_t)a * d, sizeof(int64_t) * d);
            }
        for (size_t k = 0; k < off[d]; k++) tau[k] *= 1.0 - p->aco_evaporation;
        for (int a = 0; a < A; a++) ord[a] = a;
        qsort_r(ord, (size_t)got, sizeof *ord, aco_cmp_desc, r);
        int ne = (int)(p->aco_elite_frac * got + 0.5);
        if (ne < 1) ne = 1;
        if (ne > got) ne = got;
        for (int e = 0; e < ne; e++) {
            if (!isfinite(r[ord[e]])) break;
            double w = 1.0 - (double)e / ne;
            for (int i = 0; i < d; i++) tau[off[i] + (size_t)choice[(size_t)ord[e] * d + i]] += w;
        }
        if (isfinite(bestr))
            for (int i = 0; i < d; i++) tau[off[i] + (size_t)bestc[i]] += 1.0;
        for (size_t k = 0; k < off[d]; k++)
            if (tau[k] < p->aco_tau_min) tau[k] = p->aco_tau_min;
    }
    free(nv);
    free(off);
    free(tau);
    free(prob);
    free(choice);
    free(bestc);
    free(x);
    free(r);
    free(ord);
    return rc;
}
