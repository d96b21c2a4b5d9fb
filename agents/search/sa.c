/* sa.c - simulated annealing (see docs/search.md "sa").
 * --batch B runs B independent chains in lockstep: each step proposes one neighbour per chain
 * and scores the B proposals in ONE objective call (B = 1, the default, is one classic chain).
 * A chain starts at a uniformly random point. A neighbour changes k elements, k uniform in
 * [1, sa_moves]: a categorical element takes another of its values uniformly; a Box element
 * moves by N(0, (sa_step * (high - low))^2), clamped. Metropolis acceptance: a proposal no
 * worse than the chain's current point is taken; a worse one with probability
 * exp((r_new - r_cur) / T). The temperature falls geometrically from T0 to T1 over the chain's
 * steps (ceil(budget / B)); with sa_relative = 1 (default) T0 and T1 are fractions of the
 * magnitude of the first finite reward the run sees, so one setting serves envs whose rewards
 * are speedups (~1) or costs (~1e9). A failed point (NaN) is never accepted. */
#include "agent_common.h"
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

double hs_sa_temperature(double t0, double t1, int64_t step, int64_t steps) {
    if (steps <= 1) return t0;
    double f = (double)step / (double)(steps - 1);
    if (f > 1) f = 1;
    return t0 * pow(t1 / t0, f);
}

int hs_sa_accept(double r_new, double r_cur, double temp, double u) {
    if (r_new == -INFINITY) return 0;
    if (r_cur == -INFINITY || r_new >= r_cur) return 1;
    if (temp <= 0) return 0;
    return u < exp((r_new - r_cur) / temp);
}

static void neighbour(hs_ctx *c, const double *from, double *to) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim;
    memcpy(to, from, sizeof(double) * (size_t)d);
    int kmax = (int)p->sa_moves;
    if (kmax > d) kmax = d;
    if (kmax < 1) kmax = 1;
    int k = 1 + (int)gsl_rng_uniform_int(c->rng, (unsigned long)kmax);
    for (int j = 0; j < k; j++) {
        int i = (int)gsl_rng_uniform_int(c->rng, (unsigned long)d);
        if (s->card[i] > 1) {
            int64_t v = (int64_t)gsl_rng_uniform_int(c->rng, (unsigned long)(s->card[i] - 1));
            if (v >= (int64_t)from[i]) v++;
            to[i] = (double)v;
        } else if (s->card[i] == 0) {
            double x = to[i] + ag_rng_normal(c->rng) * p->sa_step * (s->high[i] - s->low[i]);
            to[i] = x < s->low[i] ? s->low[i] : x > s->high[i] ? s->high[i] : x;
        }
    }
}

int hs_run_sa(hs_ctx *c) {
    const hs_params *p = &c->o->p;
    const int d = c->s->dim, B = c->batch;
    const int64_t steps = (c->o->budget + B - 1) / B;
    double *cur = calloc((size_t)B * d, sizeof(double)), *prop = calloc((size_t)B * d, sizeof(double));
    double *rcur = calloc((size_t)B, sizeof(double)), *r = calloc((size_t)B, sizeof(double));
    if (!cur || !prop || !rcur || !r) abort();
    double scale = p->sa_relative > 0 ? NAN : 1.0;
    int rc = 0;
    /* step 0: the chains' random starting points */
    for (int j = 0; j < B; j++) hs_random_point(c, cur + (size_t)j * d);
    int got = hs_eval(c, B, cur, rcur);
    if (got < 0) rc = -1;
    for (int j = got > 0 ? got : 0; j < B; j++) rcur[j] = -INFINITY;
    for (int64_t step = 1; rc == 0 && hs_left(c) > 0; step++) {
        if (isnan(scale))
            for (int j = 0; j < B; j++)
                if (isfinite(rcur[j])) {
                    scale = fabs(rcur[j]) > 0 ? fabs(rcur[j]) : 1.0;
                    break;
                }
        double s = isnan(scale) ? 1.0 : scale;
        double temp = s * hs_sa_temperature(p->sa_t0, p->sa_t1, step, steps);
        int n = hs_left(c) < B ? (int)hs_left(c) : B;
        for (int j = 0; j < n; j++) neighbour(c, cur + (size_t)j * d, prop + (size_t)j * d);
        got = hs_eval(c, n, prop, r);
        if (got < 0) {
            rc = -1;
            break;
        }
        for (int j = 0; j < got; j++) {
            double u = gsl_rng_uniform(c->rng);
            if (hs_sa_accept(r[j], rcur[j], temp, u)) {
                memcpy(cur + (size_t)j * d, prop + (size_t)j * d, sizeof(double) * (size_t)d);
                rcur[j] = r[j];
            }
        }
    }
    free(cur);
    free(prop);
    free(rcur);
    free(r);
    return rc;
}
