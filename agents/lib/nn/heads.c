/* heads.c - see heads.h. Uses ag_rng_* (GSL lives in agent_rng.c). */
#include "heads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

/* masked log-softmax of one dimension into lp (n); returns 1 when the mask applies. */
static int seg_logsoftmax(int64_t n, const double *z, const uint8_t *m, double *lp) {
    int use = 0;
    if (m)
        for (int64_t j = 0; j < n; j++)
            if (m[j]) use = 1;
    double mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        double v = use && !m[j] ? HEAD_MASKED_LOGIT : z[j];
        lp[j] = v;
        if (v > mx) mx = v;
    }
    double s = 0;
    for (int64_t j = 0; j < n; j++) s += exp(lp[j] - mx);
    double lse = mx + log(s);
    for (int64_t j = 0; j < n; j++) lp[j] -= lse;
    return use;
}

void mcat_probs(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, double *probs, double *logp) {
    size_t off = 0;
    double buf[512], *lp = buf;
    for (int d = 0; d < nd; d++) {
        int64_t n = nvec[d];
        double *tmp = n <= 512 ? lp : malloc(sizeof(double) * (size_t)n);
        seg_logsoftmax(n, logits + off, mask ? mask + off : NULL, tmp);
        for (int64_t j = 0; j < n; j++) {
            if (logp) logp[off + (size_t)j] = tmp[j];
            if (probs) probs[off + (size_t)j] = exp(tmp[j]);
        }
        if (tmp != lp) free(tmp);
        off += (size_t)n;
    }
}

void mcat_eval(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, const int64_t *action,
               double *logp, double *entropy, double *dlogp, double *dent) {
    size_t off = 0;
    double lpsum = 0, hsum = 0;
    double buf[512];
    for (int d = 0; d < nd; d++) {
        int64_t n = nvec[d];
        double *lp = n <= 512 ? buf : malloc(sizeof(double) * (size_t)n);
        const uint8_t *m = mask ? mask + off : NULL;
        int use = seg_logsoftmax(n, logits + off, m, lp);
        double h = 0;
        for (int64_t j = 0; j < n; j++) {
            if (use && !m[j]) continue;
            double p = exp(lp[j]);
            h -= p * lp[j];
        }
        lpsum += lp[action[d]];
        hsum += h;
        for (int64_t j = 0; j < n; j++) {
            int masked = use && !m[j];
            double p = masked ? 0 : exp(lp[j]);
            if (dlogp) dlogp[off + (size_t)j] = masked ? 0 : (j == action[d] ? 1.0 : 0.0) - p;
            if (dent) dent[off + (size_t)j] = masked ? 0 : -p * (lp[j] + h);
        }
        if (lp != buf) free(lp);
        off += (size_t)n;
    }
    if (logp) *logp = lpsum;
    if (entropy) *entropy = hsum;
}

void mcat_sample(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, gsl_rng *rng, int64_t *action) {
    size_t off = 0;
    double buf[512];
    for (int d = 0; d < nd; d++) {
        int64_t n = nvec[d];
        double *lp = n <= 512 ? buf : malloc(sizeof(double) * (size_t)n);
        const uint8_t *m = mask ? mask + off : NULL;
        int use = seg_logsoftmax(n, logits + off, m, lp);
        for (int64_t j = 0; j < n; j++) lp[j] = use && !m[j] ? 0.0 : exp(lp[j]);
        action[d] = ag_rng_categorical(rng, lp, (int)n);
        if (lp != buf) free(lp);
        off += (size_t)n;
    }
}

void mcat_argmax(int nd, const int64_t *nvec, const double *logits, const uint8_t *mask, int64_t *action) {
    size_t off = 0;
    for (int d = 0; d < nd; d++) {
        int64_t n = nvec[d], best = -1;
        const uint8_t *m = mask ? mask + off : NULL;
        int use = 0;
        if (m)
            for (int64_t j = 0; j < n; j++)
                if (m[j]) use = 1;
        for (int64_t j = 0; j < n; j++) {
            if (use && !m[j]) continue;
            if (best < 0 || logits[off + (size_t)j] > logits[off + (size_t)best]) best = j;
        }
        action[d] = best < 0 ? 0 : best;
        off += (size_t)n;
    }
}

void gauss_eval(int n, const double *mu, const double *log_std, const double *a, double *logp, double *entropy,
                double *dlogp_dmu, double *dlogp_dlogstd, double *dent_dlogstd) {
    const double half_log_2pi = 0.5 * log(2.0 * M_PI);
    double lp = 0, h = 0;
    for (int i = 0; i < n; i++) {
        double s2 = exp(2.0 * log_std[i]), d = a[i] - mu[i];
        lp += -d * d / (2.0 * s2) - log_std[i] - half_log_2pi;
        h += 0.5 + half_log_2pi + log_std[i];
        if (dlogp_dmu) dlogp_dmu[i] = d / s2;
        if (dlogp_dlogstd) dlogp_dlogstd[i] = d * d / s2 - 1.0;
        if (dent_dlogstd) dent_dlogstd[i] = 1.0;
    }
    if (logp) *logp = lp;
    if (entropy) *entropy = h;
}

void gauss_sample(int n, const double *mu, const double *log_std, gsl_rng *rng, double *a) {
    for (int i = 0; i < n; i++) a[i] = mu[i] + exp(log_std[i]) * ag_rng_normal(rng);
}
