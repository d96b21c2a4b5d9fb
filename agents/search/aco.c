/* aco.c - ant-colony optimisation as ArchGym runs it (its ACO agent drives DeepSwarm, an Ant
 * Colony System with ant_count 16, greediness 0.5, evaporation 0.1). The design space is a
 * layered graph: one layer per parameter, one node per value of that parameter; every ant walks
 * it once and so picks one value per parameter (docs/search.md).
 *  - Pheromone tau[i][k] per parameter i and value k, initially aco_tau0.
 *  - Construction (pseudo-random proportional rule): for each parameter, with probability
 *    aco_greediness the value with the most pheromone, otherwise a value drawn with
 *    probability proportional to its pheromone.
 *  - Local update, right after an ant picked a value (before any scoring, as in ACS):
 *    tau <- (1 - rho) tau + rho tau0, so later ants of the same iteration are pushed elsewhere.
 *  - All ants of an iteration (batch) are scored in ONE objective call.
 *  - Global update with the best design found so far (quality 1):
 *    tau <- (1 - rho) tau + rho * 1 on each of its values.
 * Box elements are discretised into aco_bins levels. */
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

int hs_run_aco(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim, A = c->batch;
    const double rho = p->aco_evaporation, tau0 = p->aco_tau0;
    int bins = p->aco_bins < 2 ? 2 : (int)p->aco_bins;
    int64_t *nv = malloc(sizeof(int64_t) * d);
    size_t *off = malloc(sizeof(size_t) * (d + 1));
    if (!nv || !off) abort();
    off[0] = 0;
    for (int i = 0; i < d; i++) {
        nv[i] = s->card[i] ? s->card[i] : bins;
        off[i + 1] = off[i] + (size_t)nv[i];
    }
    double *tau = malloc(sizeof(double) * off[d]);
    int64_t *choice = malloc(sizeof(int64_t) * (size_t)A * d), *bestc = malloc(sizeof(int64_t) * d);
    double *x = malloc(sizeof(double) * (size_t)A * d), *r = malloc(sizeof(double) * A);
    if (!tau || !choice || !bestc || !x || !r) abort();
    for (size_t k = 0; k < off[d]; k++) tau[k] = tau0;
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
                    for (int64_t v = 0; v < nv[i]; v++) sum += t[v];
                    double z = gsl_rng_uniform(c->rng) * sum;
                    for (k = 0; k < nv[i] - 1; k++) {
                        z -= t[k];
                        if (z < 0) break;
                    }
                }
                t[k] = (1 - rho) * t[k] + rho * tau0; /* local update */
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
        if (isfinite(bestr)) /* global update: the best-so-far ant */
            for (int i = 0; i < d; i++) {
                double *t = tau + off[i] + (size_t)bestc[i];
                *t = (1 - rho) * *t + rho * 1.0;
            }
    }
    free(nv);
    free(off);
    free(tau);
    free(choice);
    free(bestc);
    free(x);
    free(r);
    return rc;
}
