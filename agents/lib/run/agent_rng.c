/* agent_rng.c - GSL random helpers (agent_common.h). This file includes gsl_randist.h, so it
 * must never include OpenBLAS's cblas.h (the two CBLAS headers clash). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "agent_common.h"

uint64_t ag_rng_derive(uint64_t seed, uint64_t k) {
    /* splitmix64 of (seed, k) */
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (k + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

gsl_rng *ag_rng_new(uint64_t seed) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    /* mt19937 takes an unsigned long seed; 0 means the default seed 4357 in GSL, so fold it. */
    gsl_rng_set(r, (unsigned long)(ag_rng_derive(seed, 0) & 0xffffffffUL) | 1UL);
    return r;
}

double ag_rng_uniform(gsl_rng *r) { return gsl_rng_uniform_pos(r); }

int64_t ag_rng_int(gsl_rng *r, int64_t n) {
    if (n <= 1) return 0;
    if (n <= 0xffffffffLL) return (int64_t)gsl_rng_uniform_int(r, (unsigned long)n);
    return (int64_t)(gsl_rng_uniform(r) * (double)n) % n;
}

double ag_rng_normal(gsl_rng *r) { return gsl_ran_gaussian_ziggurat(r, 1.0); }

int ag_rng_categorical(gsl_rng *r, const double *probs, int n) {
    double u = gsl_rng_uniform(r), c = 0;
    int last = -1;
    for (int i = 0; i < n; i++) {
        if (probs[i] <= 0) continue;
        last = i;
        c += probs[i];
        if (u < c) return i;
    }
    return last >= 0 ? last : 0;
}

void ag_rng_shuffle(gsl_rng *r, int *idx, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gsl_rng_uniform_int(r, (unsigned long)i + 1);
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}
