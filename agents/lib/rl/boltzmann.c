/* boltzmann.c - see boltzmann.h. */
#include "boltzmann.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

bz_mut bz_mut_default(void) {
    bz_mut m = {0.1, 0.1, 0.2};
    return m;
}

bz_chrom *bz_new(int nd, int nc) {
    if (nd < 1 || nc < 1 || nc > 64) return NULL;
    bz_chrom *c = calloc(1, sizeof *c);
    c->nd = nd;
    c->nc = nc;
    c->prior = calloc((size_t)nd * (size_t)nc + 1, sizeof(double));
    c->temp = calloc((size_t)nd + 1, sizeof(double));
    for (int d = 0; d < nd; d++) {
        c->temp[d] = 1.0;
        for (int j = 0; j < nc; j++) c->prior[(size_t)d * nc + j] = 1.0 / nc;
    }
    return c;
}

void bz_free(bz_chrom *c) {
    if (!c) return;
    free(c->prior);
    free(c->temp);
    free(c);
}

void bz_copy(bz_chrom *dst, const bz_chrom *src) {
    memcpy(dst->prior, src->prior, sizeof(double) * (size_t)src->nd * (size_t)src->nc);
    memcpy(dst->temp, src->temp, sizeof(double) * (size_t)src->nd);
}

static void normalise(double *p, int nc) {
    double s = 0;
    for (int j = 0; j < nc; j++) s += p[j];
    if (!(s > 0)) {
        for (int j = 0; j < nc; j++) p[j] = 1.0 / nc;
        return;
    }
    for (int j = 0; j < nc; j++) p[j] /= s;
}

void bz_init_random(bz_chrom *c, gsl_rng *rng) {
    for (int d = 0; d < c->nd; d++) {
        double *p = c->prior + (size_t)d * c->nc;
        for (int j = 0; j < c->nc; j++) p[j] = ag_rng_uniform(rng);
        normalise(p, c->nc);
        c->temp[d] = exp(log(0.05) + ag_rng_uniform(rng) * (log(1.0) - log(0.05)));
    }
}

void bz_probs(const bz_chrom *c, int d, double *p) {
    const double *q = c->prior + (size_t)d * c->nc;
    double T = c->temp[d], mx = -INFINITY, s = 0;
    for (int j = 0; j < c->nc; j++)
        if (q[j] / T > mx) mx = q[j] / T;
    for (int j = 0; j < c->nc; j++) s += p[j] = exp(q[j] / T - mx);
    for (int j = 0; j < c->nc; j++) p[j] /= s;
}

void bz_sample(const bz_chrom *c, gsl_rng *rng, int64_t *action) {
    double p[64];
    for (int d = 0; d < c->nd; d++) {
        bz_probs(c, d, p);
        action[d] = ag_rng_categorical(rng, p, c->nc);
    }
}

void bz_mode(const bz_chrom *c, int64_t *action) {
    for (int d = 0; d < c->nd; d++) {
        const double *q = c->prior + (size_t)d * c->nc;
        int best = 0;
        for (int j = 1; j < c->nc; j++)
            if (q[j] > q[best]) best = j;
        action[d] = best;
    }
}

void bz_mutate(bz_chrom *c, const bz_mut *m, gsl_rng *rng) {
    for (int d = 0; d < c->nd; d++) {
        if (ag_rng_uniform(rng) > m->frac) continue;
        double *p = c->prior + (size_t)d * c->nc;
        for (int j = 0; j < c->nc; j++) {
            p[j] += m->prior_std * ag_rng_normal(rng);
            if (p[j] < 0) p[j] = 0;
        }
        normalise(p, c->nc);
        double t = c->temp[d] * exp(m->temp_std * ag_rng_normal(rng));
        c->temp[d] = t < BZ_TMIN ? BZ_TMIN : t > BZ_TMAX ? BZ_TMAX : t;
    }
}

void bz_crossover(bz_chrom *child, const bz_chrom *a, const bz_chrom *b, gsl_rng *rng) {
    int nd = a->nd, nc = a->nc;
    int cut = nd >= 2 ? 1 + (int)ag_rng_int(rng, nd - 1) : nd;
    memcpy(child->prior, a->prior, sizeof(double) * (size_t)cut * nc);
    memcpy(child->temp, a->temp, sizeof(double) * (size_t)cut);
    memcpy(child->prior + (size_t)cut * nc, b->prior + (size_t)cut * nc, sizeof(double) * (size_t)(nd - cut) * nc);
    memcpy(child->temp + cut, b->temp + cut, sizeof(double) * (size_t)(nd - cut));
}

void bz_seed_from_posterior(bz_chrom *c, const double *posterior) {
    memcpy(c->prior, posterior, sizeof(double) * (size_t)c->nd * (size_t)c->nc);
    for (int d = 0; d < c->nd; d++) normalise(c->prior + (size_t)d * c->nc, c->nc);
}
