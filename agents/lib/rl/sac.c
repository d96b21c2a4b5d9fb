/* sac.c - see sac.h. */
#include "sac.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "heads.h"

sac_cfg sac_cfg_default(void) {
    sac_cfg c;
    memset(&c, 0, sizeof c);
    c.hidden = 64;
    c.policy_lr = 3e-4;
    c.q_lr = 3e-4;
    c.gamma = 0.99;
    c.tau = 0.005;
    c.target_entropy_scale = 0.89;
    c.adam_eps = 1e-4;
    c.batch = 64;
    c.autotune = true;
    c.alpha = 0.2;
    return c;
}

static nnet_mlp *mk(int in, int hid, int out) {
    int sizes[4] = {in, hid, hid, out};
    return nnet_new(3, sizes, NNET_RELU);
}

static nnet_adam *adam(size_t n, double lr, double eps) {
    nnet_adam *a = nnet_adam_new(n, lr);
    a->eps = eps;
    return a;
}

sac *sac_new(const sac_cfg *cfg, int obs_dim, int nd, const int64_t *nvec, uint64_t seed) {
    sac *s = calloc(1, sizeof *s);
    s->cfg = *cfg;
    if (s->cfg.batch < 1) s->cfg.batch = 1;
    s->obs_dim = obs_dim;
    s->nd = nd;
    s->nvec = calloc((size_t)nd, sizeof(int64_t));
    s->off = calloc((size_t)nd, sizeof(int64_t));
    for (int d = 0; d < nd; d++) {
        s->nvec[d] = nvec[d];
        s->off[d] = s->nlogits;
        s->nlogits += (int)nvec[d];
    }
    int h = s->cfg.hidden, L = s->nlogits;
    s->actor = mk(obs_dim, h, L);
    s->q1 = mk(obs_dim, h, L);
    s->q2 = mk(obs_dim, h, L);
    s->q1t = mk(obs_dim, h, L);
    s->q2t = mk(obs_dim, h, L);
    gsl_rng *r = ag_rng_new(ag_rng_derive(seed, 201));
    nnet_init_orthogonal(s->actor, r, sqrt(2.0), 0.01);
    nnet_init_orthogonal(s->q1, r, sqrt(2.0), 1.0);
    nnet_init_orthogonal(s->q2, r, sqrt(2.0), 1.0);
    gsl_rng_free(r);
    memcpy(s->q1t->params, s->q1->params, sizeof(double) * s->q1->nparams);
    memcpy(s->q2t->params, s->q2->params, sizeof(double) * s->q2->nparams);
    s->opt_actor = adam(s->actor->nparams, s->cfg.policy_lr, s->cfg.adam_eps);
    s->opt_q1 = adam(s->q1->nparams, s->cfg.q_lr, s->cfg.adam_eps);
    s->opt_q2 = adam(s->q2->nparams, s->cfg.q_lr, s->cfg.adam_eps);
    s->opt_alpha = adam((size_t)nd, s->cfg.q_lr, s->cfg.adam_eps);
    s->log_alpha = calloc((size_t)nd, sizeof(double));
    s->g_alpha = calloc((size_t)nd, sizeof(double));
    s->target_ent = calloc((size_t)nd, sizeof(double));
    for (int d = 0; d < nd; d++) {
        s->log_alpha[d] = log(s->cfg.alpha);
        s->target_ent[d] = s->cfg.target_entropy_scale * log((double)nvec[d]);
    }
    int B = s->cfg.batch;
    s->X = calloc((size_t)B * (size_t)obs_dim + 1, sizeof(double));
    s->X2 = calloc((size_t)B * (size_t)obs_dim + 1, sizeof(double));
    s->dz = calloc((size_t)B * (size_t)L, sizeof(double));
    s->dq1 = calloc((size_t)B * (size_t)L, sizeof(double));
    s->dq2 = calloc((size_t)B * (size_t)L, sizeof(double));
    s->probs = calloc((size_t)B * (size_t)L, sizeof(double));
    s->logp = calloc((size_t)B * (size_t)L, sizeof(double));
    s->minq = calloc((size_t)B * (size_t)L, sizeof(double));
    s->y = calloc((size_t)B * (size_t)nd, sizeof(double));
    s->idx = calloc((size_t)B, sizeof(int64_t));
    return s;
}

void sac_free(sac *s) {
    if (!s) return;
    nnet_free(s->actor);
    nnet_free(s->q1);
    nnet_free(s->q2);
    nnet_free(s->q1t);
    nnet_free(s->q2t);
    nnet_adam_free(s->opt_actor);
    nnet_adam_free(s->opt_q1);
    nnet_adam_free(s->opt_q2);
    nnet_adam_free(s->opt_alpha);
    free(s->nvec);
    free(s->off);
    free(s->log_alpha);
    free(s->g_alpha);
    free(s->target_ent);
    free(s->X);
    free(s->X2);
    free(s->dz);
    free(s->dq1);
    free(s->dq2);
    free(s->probs);
    free(s->logp);
    free(s->minq);
    free(s->y);
    free(s->idx);
    free(s);
}

void sac_act(sac *s, const double *obs, const uint8_t *mask, gsl_rng *rng, int64_t *action) {
    mcat_sample(s->nd, s->nvec, nnet_forward(s->actor, obs, 1), mask, rng, action);
}

void sac_act_greedy(sac *s, const double *obs, const uint8_t *mask, int64_t *action) {
    mcat_argmax(s->nd, s->nvec, nnet_forward(s->actor, obs, 1), mask, action);
}

static void q_step(sac *s, nnet_mlp *q, nnet_adam *opt, const ag_replay *rb, int B, double *dq, double *loss) {
    int L = s->nlogits;
    const double *Q = nnet_forward(q, s->X, B);
    memset(dq, 0, sizeof(double) * (size_t)B * (size_t)L);
    for (int b = 0; b < B; b++) {
        const int64_t *a = rb->act + (size_t)s->idx[b] * (size_t)s->nd;
        for (int d = 0; d < s->nd; d++) {
            size_t k = (size_t)b * (size_t)L + (size_t)(s->off[d] + a[d]);
            double e = Q[k] - s->y[(size_t)b * (size_t)s->nd + (size_t)d];
            *loss += e * e / B;
            dq[k] = 2.0 * e / B;
        }
    }
    nnet_zero_grad(q);
    nnet_backward(q, dq, NULL);
    nnet_adam_step(opt, q->params, q->grads);
}

double sac_actor_loss_grad(sac *s, const double *X, int B, double *entropy) {
    int L = s->nlogits, nd = s->nd;
    const double *Q1 = nnet_forward(s->q1, X, B);
    for (size_t i = 0; i < (size_t)B * (size_t)L; i++) s->minq[i] = Q1[i];
    const double *Q2 = nnet_forward(s->q2, X, B);
    for (size_t i = 0; i < (size_t)B * (size_t)L; i++)
        if (Q2[i] < s->minq[i]) s->minq[i] = Q2[i];
    const double *Z = nnet_forward(s->actor, X, B);
    memset(s->g_alpha, 0, sizeof(double) * (size_t)nd);
    double loss = 0, ent = 0;
    for (int b = 0; b < B; b++) {
        size_t row = (size_t)b * (size_t)L;
        mcat_probs(nd, s->nvec, Z + row, NULL, s->probs + row, s->logp + row);
        for (int d = 0; d < nd; d++) {
            double al = exp(s->log_alpha[d]), Ld = 0, H = 0;
            for (int64_t j = 0; j < s->nvec[d]; j++) {
                size_t k = row + (size_t)(s->off[d] + j);
                Ld += s->probs[k] * (al * s->logp[k] - s->minq[k]);
                H -= s->probs[k] * s->logp[k];
            }
            /* dL/dz_j = p_j (f_j - L): the sum over p_a * dlogp_a/dz_j term vanishes */
            for (int64_t j = 0; j < s->nvec[d]; j++) {
                size_t k = row + (size_t)(s->off[d] + j);
                s->dz[k] = s->probs[k] * ((al * s->logp[k] - s->minq[k]) - Ld) / B;
            }
            loss += Ld / B;
            ent += H / B;
            s->g_alpha[d] += -al * (s->target_ent[d] - H) / B;
        }
    }
    nnet_zero_grad(s->actor);
    nnet_backward(s->actor, s->dz, NULL);
    if (entropy) *entropy = ent;
    return loss;
}

void sac_update(sac *s, ag_replay *rb, gsl_rng *rng, void (*norm)(void *ctx, double *x), void *ctx, sac_stats *st) {
    int B = s->cfg.batch, L = s->nlogits, od = s->obs_dim, nd = s->nd;
    sac_stats z;
    memset(&z, 0, sizeof z);
    ag_replay_sample(rb, rng, B, s->idx);
    for (int b = 0; b < B; b++) {
        memcpy(s->X + (size_t)b * (size_t)od, rb->obs + (size_t)s->idx[b] * (size_t)od, sizeof(double) * (size_t)od);
        memcpy(s->X2 + (size_t)b * (size_t)od, rb->next_obs + (size_t)s->idx[b] * (size_t)od, sizeof(double) * (size_t)od);
        if (norm) {
            norm(ctx, s->X + (size_t)b * (size_t)od);
            norm(ctx, s->X2 + (size_t)b * (size_t)od);
        }
    }
    /* targets */
    const double *Zn = nnet_forward(s->actor, s->X2, B);
    for (int b = 0; b < B; b++) {
        const uint8_t *m = rb->next_mask ? rb->next_mask + (size_t)s->idx[b] * (size_t)rb->mask_len : NULL;
        if (m && rb->mask_len != L) m = NULL;
        mcat_probs(nd, s->nvec, Zn + (size_t)b * (size_t)L, m, s->probs + (size_t)b * (size_t)L, s->logp + (size_t)b * (size_t)L);
    }
    const double *Q1t = nnet_forward(s->q1t, s->X2, B);
    for (size_t i = 0; i < (size_t)B * (size_t)L; i++) s->minq[i] = Q1t[i];
    const double *Q2t = nnet_forward(s->q2t, s->X2, B);
    for (size_t i = 0; i < (size_t)B * (size_t)L; i++)
        if (Q2t[i] < s->minq[i]) s->minq[i] = Q2t[i];
    for (int b = 0; b < B; b++) {
        size_t t = (size_t)s->idx[b];
        for (int d = 0; d < nd; d++) {
            double al = exp(s->log_alpha[d]), v = 0;
            for (int64_t j = 0; j < s->nvec[d]; j++) {
                size_t k = (size_t)b * (size_t)L + (size_t)(s->off[d] + j);
                if (s->probs[k] > 0) v += s->probs[k] * (s->minq[k] - al * s->logp[k]);
            }
            s->y[(size_t)b * (size_t)nd + (size_t)d] = rb->rew[t] + s->cfg.gamma * (1.0 - rb->done[t]) * v;
        }
    }
    q_step(s, s->q1, s->opt_q1, rb, B, s->dq1, &z.q_loss);
    q_step(s, s->q2, s->opt_q2, rb, B, s->dq2, &z.q_loss);
    /* policy */
    double H = 0;
    z.pi_loss = sac_actor_loss_grad(s, s->X, B, &H);
    z.entropy = H;
    for (int d = 0; d < nd; d++) z.alpha_loss += s->g_alpha[d];
    nnet_adam_step(s->opt_actor, s->actor->params, s->actor->grads);
    if (s->cfg.autotune) nnet_adam_step(s->opt_alpha, s->log_alpha, s->g_alpha);
    /* soft target update */
    double tau = s->cfg.tau;
    for (size_t i = 0; i < s->q1->nparams; i++) {
        s->q1t->params[i] = tau * s->q1->params[i] + (1 - tau) * s->q1t->params[i];
        s->q2t->params[i] = tau * s->q2->params[i] + (1 - tau) * s->q2t->params[i];
    }
    for (int d = 0; d < nd; d++) z.alpha_mean += exp(s->log_alpha[d]) / nd;
    if (st) *st = z;
}
