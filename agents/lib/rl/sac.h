/* sac.h - Soft Actor-Critic for discrete actions (Christodoulou 2019; CleanRL's sac_atari.py),
 * extended to MultiDiscrete actions by treating each action dimension d as its own categorical
 * policy pi_d(.|s) with its own twin soft Q-heads Q1_d(s,.), Q2_d(s,.) (one output per choice;
 * all dimensions share the networks' hidden layers and the reward), and its own temperature
 * alpha_d tuned towards the target entropy target_entropy_scale * log(n_d) (CleanRL: 0.89).
 *
 * One update on a batch of B transitions (all means over the batch):
 *   V_d(s')  = sum_j pi_d(j|s') (min(Q1t_d, Q2t_d)(s',j) - alpha_d log pi_d(j|s'))
 *   y_d      = r + gamma (1 - terminated) V_d(s')
 *   L_Q      = sum_d mean (Q1_d(s,a_d) - y_d)^2 + (Q2_d(s,a_d) - y_d)^2
 *   L_pi     = sum_d mean sum_j pi_d(j|s) (alpha_d log pi_d(j|s) - min(Q1_d, Q2_d)(s,j))
 *   L_alpha  = sum_d mean -alpha_d (target_d - H_d(s))      (gradient on log alpha_d)
 *   targets: Qt <- tau Q + (1 - tau) Qt after every update.
 * Masks (next-state masks from the replay buffer, current masks when acting) restrict pi. */
#ifndef HWGYM_SAC_H
#define HWGYM_SAC_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "nn.h"
#include "replay.h"

typedef struct sac_cfg {
    int hidden;                  /* 64 (two ReLU layers) */
    double policy_lr, q_lr;      /* 3e-4 each */
    double gamma, tau;           /* 0.99, 0.005 */
    double target_entropy_scale; /* 0.89 */
    double adam_eps;             /* 1e-4 (CleanRL sac_atari) */
    int batch;                   /* 64 */
    bool autotune;               /* true; else alpha fixed at `alpha` */
    double alpha;                /* 0.2 initial / fixed */
} sac_cfg;

sac_cfg sac_cfg_default(void);

typedef struct sac_stats {
    double q_loss, pi_loss, alpha_loss, alpha_mean, entropy;
} sac_stats;

typedef struct sac {
    sac_cfg cfg;
    int obs_dim, nd, nlogits;
    int64_t *nvec, *off;
    nnet_mlp *actor, *q1, *q2, *q1t, *q2t;
    nnet_adam *opt_actor, *opt_q1, *opt_q2, *opt_alpha;
    double *log_alpha, *g_alpha, *target_ent;
    /* scratch (batch) */
    int cap;
    double *X, *X2, *dz, *dq1, *dq2, *probs, *logp, *y, *minq;
    int64_t *idx;
} sac;

sac *sac_new(const sac_cfg *cfg, int obs_dim, int nd, const int64_t *nvec, uint64_t seed);
void sac_free(sac *s);
void sac_act(sac *s, const double *obs, const uint8_t *mask, gsl_rng *rng, int64_t *action);
void sac_act_greedy(sac *s, const double *obs, const uint8_t *mask, int64_t *action);
/* One gradient step on a batch sampled from rb. norm (may be NULL) maps raw obs to network
 * input in place: norm(ctx, x) on each row. */
void sac_update(sac *s, ag_replay *rb, gsl_rng *rng, void (*norm)(void *ctx, double *x), void *ctx, sac_stats *st);

/* The policy loss L_pi on B rows of network input X (with the current critics), its gradient
 * left in actor->grads (zeroed first) and the temperature gradient in g_alpha; *entropy (may be
 * NULL) gets the mean summed entropy. Used by sac_update; exposed for tests. */
double sac_actor_loss_grad(sac *s, const double *X, int B, double *entropy);

#endif
