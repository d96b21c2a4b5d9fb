/* boltzmann.h - the EGRL paper's Boltzmann chromosome (section 4, Appendix E): a stateless
 * policy over nd action elements with nc choices each, parameterised by a prior (nc
 * probabilities) and a temperature per element. Owns the chromosome, its sampling, Gaussian
 * mutation, single-point crossover and seeding from another policy's posterior.
 *
 *   p_j = exp(P_j / T) / sum_k exp(P_k / T)      (Boltzmann softmax of the prior)
 *
 * A low T follows the prior's mode, a high T explores towards uniform. For placement-v0,
 * element 2i is node i's weights and 2i+1 its activation, so "per node and sub-action".
 * Constants (docs/egrl.md): priors start uniform-random and normalised, temperatures
 * log-uniform in [0.05, 1]; temperatures are kept in [BZ_TMIN, BZ_TMAX]. */
#ifndef HWGYM_BOLTZMANN_H
#define HWGYM_BOLTZMANN_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#define BZ_TMIN 0.01
#define BZ_TMAX 10.0

typedef struct bz_chrom {
    int nd, nc;
    double *prior; /* nd x nc, each row non-negative and summing to 1 */
    double *temp;  /* nd */
} bz_chrom;

typedef struct bz_mut {
    double frac;       /* fraction of elements mutated (0.1) */
    double prior_std;  /* Gaussian std added to a mutated element's priors (0.1) */
    double temp_std;   /* std of the Gaussian added to log T of a mutated element (0.2) */
} bz_mut;

bz_mut bz_mut_default(void);
bz_chrom *bz_new(int nd, int nc); /* NULL unless nd >= 1 and 1 <= nc <= 64 */
void bz_free(bz_chrom *c);
void bz_copy(bz_chrom *dst, const bz_chrom *src);
void bz_init_random(bz_chrom *c, gsl_rng *rng);
/* The Boltzmann probabilities of element d (nc values). */
void bz_probs(const bz_chrom *c, int d, double *p);
void bz_sample(const bz_chrom *c, gsl_rng *rng, int64_t *action);
/* Most probable choice per element (the prior's mode). */
void bz_mode(const bz_chrom *c, int64_t *action);
/* Each element with probability m->frac: prior += N(0, prior_std) (clamped at 0, renormalised),
 * log T += N(0, temp_std) (clamped to [BZ_TMIN, BZ_TMAX]). */
void bz_mutate(bz_chrom *c, const bz_mut *m, gsl_rng *rng);
/* Single-point crossover: child elements [0, cut) from a, [cut, nd) from b, cut uniform in
 * [1, nd-1] (nd >= 2). child may alias neither parent. */
void bz_crossover(bz_chrom *child, const bz_chrom *a, const bz_chrom *b, gsl_rng *rng);
/* Algorithm 2, line 18: the priors become a posterior (nd x nc probabilities, e.g. a GNN's
 * softmax per node and sub-action); temperatures are kept. */
void bz_seed_from_posterior(bz_chrom *c, const double *posterior);

#endif
