/* heads.h - policy heads: (multi-)categorical with action masks, and diagonal Gaussian with a
 * state-independent log std. Each works on ONE sample; batch loops are the caller's.
 *
 * Multi-categorical: nd dimensions with nvec[d] choices; the logits of one sample are the
 * concatenation of the per-dimension logits (sum nvec long). mask (same length, 1 = allowed,
 * NULL = all allowed) replaces a masked logit by HEAD_MASKED_LOGIT (-1e8) as CleanRL's invalid
 * action masking does, so masked choices get probability exactly 0 (exp underflows) and are
 * never sampled; a dimension whose choices are all masked is treated as unmasked.
 * The distribution is the product of the per-dimension categoricals:
 *   log p(a) = sum_d log softmax(z_d)[a_d],  H = sum_d -sum_j p_dj log p_dj.
 * Gradients w.r.t. the (unmasked) logits: d log p / d z_dj = 1[j = a_d] - p_dj;
 *   d H / d z_dj = -p_dj (log p_dj + H_d); both 0 on masked logits.
 *
 * Gaussian: a = mu + sigma * eps, sigma = exp(log_std), per element;
 *   log p(a) = sum_i -((a_i-mu_i)^2 / (2 sigma_i^2)) - log_std_i - 0.5 log(2 pi)
 *   H = sum_i 0.5 + 0.5 log(2 pi) + log_std_i
 *   d log p / d mu_i = (a_i - mu_i) / sigma_i^2; d log p / d log_std_i = (a_i-mu_i)^2/sigma_i^2 - 1;
 *   d H / d log_std_i = 1. */
#ifndef HWGYM_HEADS_H
#define HWGYM_HEADS_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#define HEAD_MASKED_LOGIT (-1e8)

/* probs/logp out (sum nvec each, may be NULL): the masked softmax per dimension. */
void mcat_probs(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, double *probs, double *logp);
/* log p(action) and entropy; dlogp/dent (sum nvec, may be NULL) get the gradients above. */
void mcat_eval(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, const int64_t *action,
               double *logp, double *entropy, double *dlogp, double *dent);
/* Samples one action per dimension into action (nd). */
void mcat_sample(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, gsl_rng *rng, int64_t *action);
/* Most probable allowed choice per dimension. */
void mcat_argmax(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, int64_t *action);

void gauss_eval(int n, const double *mu, const double *log_std, const double *a, double *logp, double *entropy,
                double *dlogp_dmu, double *dlogp_dlogstd, double *dent_dlogstd);
void gauss_sample(int n, const double *mu, const double *log_std, gsl_rng *rng, double *a);

#endif
