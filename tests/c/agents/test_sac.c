/* test_sac.c - discrete SAC pieces: the policy-loss gradient by finite differences, the replay
 * ring, and the target entropy. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "replay.h"
#include "sac.h"

Test(sac, actor_loss_gradient_check) {
    sac_cfg c = sac_cfg_default();
    c.hidden = 5;
    c.batch = 6;
    int64_t nvec[2] = {3, 2};
    sac *s = sac_new(&c, 4, 2, nvec, 3);
    gsl_rng *r = ag_rng_new(4);
    for (size_t i = 0; i < s->actor->nparams; i++) s->actor->params[i] += 0.4 * (ag_rng_uniform(r) - 0.5);
    s->log_alpha[0] = log(0.3);
    s->log_alpha[1] = log(0.05);
    double X[24];
    for (int i = 0; i < 24; i++) X[i] = ag_rng_uniform(r) * 2 - 1;
    double H;
    sac_actor_loss_grad(s, X, 6, &H);
    cr_assert(H > 0 && H <= log(3.0) + log(2.0) + 1e-12);
    size_t n = s->actor->nparams;
    double *g = malloc(sizeof(double) * n);
    memcpy(g, s->actor->grads, sizeof(double) * n);
    double eps = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double w0 = s->actor->params[i];
        s->actor->params[i] = w0 + eps;
        double lp = sac_actor_loss_grad(s, X, 6, NULL);
        s->actor->params[i] = w0 - eps;
        double lm = sac_actor_loss_grad(s, X, 6, NULL);
        s->actor->params[i] = w0;
        double num = (lp - lm) / (2 * eps);
        cr_assert(fabs(num - g[i]) <= 1e-6 * fmax(1.0, fabs(num)), "param %zu: numeric %.10g analytic %.10g", i, num, g[i]);
    }
    /* temperature gradient: d/dlog(alpha_d) of mean -alpha_d (target_d - H_d) */
    sac_actor_loss_grad(s, X, 6, NULL);
    cr_assert_float_eq(s->target_ent[0], 0.89 * log(3.0), 1e-12);
    cr_assert_float_eq(s->target_ent[1], 0.89 * log(2.0), 1e-12);
    free(g);
    gsl_rng_free(r);
    sac_free(s);
}

Test(sac, replay_ring) {
    ag_replay *rb = ag_replay_new(3, 1, 1, 2);
    for (int i = 0; i < 5; i++) {
        double o = i, no = i + 0.5;
        int64_t a = i;
        uint8_t m[2] = {1, (uint8_t)(i % 2)};
        ag_replay_add(rb, &o, &a, 10.0 * i, i == 4, &no, m);
    }
    cr_assert_eq(rb->size, 3);
    /* slots hold transitions 3, 4, 2 (the oldest two were overwritten) */
    cr_assert_eq(rb->act[0], 3);
    cr_assert_eq(rb->act[1], 4);
    cr_assert_eq(rb->act[2], 2);
    cr_assert_eq(rb->rew[1], 40.0);
    cr_assert_eq(rb->done[1], 1.0);
    cr_assert_eq(rb->next_obs[2], 2.5);
    cr_assert_eq(rb->next_mask[0 * 2 + 1], 1);
    cr_assert_eq(rb->next_mask[2 * 2 + 1], 0);
    gsl_rng *r = ag_rng_new(1);
    int64_t idx[300];
    int seen[3] = {0};
    ag_replay_sample(rb, r, 300, idx);
    for (int i = 0; i < 300; i++) {
        cr_assert(idx[i] >= 0 && idx[i] < 3);
        seen[idx[i]]++;
    }
    cr_assert(seen[0] > 50 && seen[1] > 50 && seen[2] > 50);
    gsl_rng_free(r);
    ag_replay_free(rb);
}
