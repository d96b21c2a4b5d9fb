/* lb_stats.h - the leaderboard's statistics (hwgym leaderboard; docs/leaderboard.md).
 * Owns: normalised scores, the interquartile mean (IQM), stratified-bootstrap confidence
 * intervals, performance profiles and the probability of improvement, with the definitions of
 * Agarwal et al. 2021, "Deep RL at the Edge of the Statistical Precipice" (rliable):
 *   - IQM: the mean of the middle 50% of all runs' scores pooled over tasks (scipy's
 *     trim_mean(x, 0.25): drop floor(n/4) from each end of the sorted scores);
 *   - stratified bootstrap: each replicate resamples the runs of every task (stratum) with
 *     replacement, keeping each task's run count; percentile interval of the replicates;
 *   - performance profile: the fraction of runs whose score is strictly above tau;
 *   - probability of improvement P(X > Y): per task the Mann-Whitney U statistic over all run
 *     pairs divided by n*m (a tie counts 1/2), averaged over the tasks both agents ran;
 *     its interval resamples the runs of X and of Y independently within each task.
 * Random numbers come from GSL (gsl_rng_mt19937); sorting and quantiles from GSL.
 * A "set" is one agent's scores: ntask tasks, task t having n[t] runs with scores s[t][0..n[t]). */
#ifndef LB_STATS_H
#define LB_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct lbs_set {
    size_t ntask;
    const size_t *n;          /* runs per task */
    const double *const *s;   /* s[t][i]: score of run i of task t */
} lbs_set;

typedef struct lbs_ci {
    double point, lo, hi;     /* the statistic and its (1 - alpha) percentile interval */
} lbs_ci;

/* (raw - lo) / (hi - lo): 0 = lo (random search at the budget), 1 = hi (the best known design).
 * When hi <= lo (nothing better than random is known) the score is 0 for raw <= lo, else 1.
 * When hi - lo is within 1e-9 of their size (random's mean is the best known score but for
 * rounding: the env leaves no room at that budget) it is 0 for raw >= lo (less the same
 * tolerance), else -1. */
double lbs_normalise(double raw, double lo, double hi);

/* Interquartile mean of x[0..n) (x is not modified). NAN when n == 0. */
double lbs_iqm(const double *x, size_t n);
/* IQM of all runs of the set pooled. NAN when it has no runs. */
double lbs_set_iqm(const lbs_set *s);
/* Fraction of the set's runs with score > tau (NAN when it has no runs). */
double lbs_profile(const lbs_set *s, double tau);
/* P(X > Y) averaged over the tasks where both have runs (NAN when there is none). */
double lbs_poi(const lbs_set *x, const lbs_set *y);

/* Stratified-bootstrap intervals: `reps` replicates from GSL's mt19937 seeded with `seed`;
 * alpha = 0.05 gives a 95% interval. Deterministic for a given seed. Return 0, or -1 when the
 * set is empty / out of memory (out is then NAN). */
int lbs_iqm_ci(const lbs_set *s, size_t reps, uint64_t seed, double alpha, lbs_ci *out);
int lbs_profile_ci(const lbs_set *s, double tau, size_t reps, uint64_t seed, double alpha, lbs_ci *out);
int lbs_poi_ci(const lbs_set *x, const lbs_set *y, size_t reps, uint64_t seed, double alpha, lbs_ci *out);

#endif
