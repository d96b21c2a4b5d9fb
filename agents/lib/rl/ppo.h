/* ppo.h - PPO with a clipped surrogate, at CleanRL's level of detail (ppo.py / ppo_continuous_action.py):
 *  - separate actor and critic MLPs (hidden 64-64 tanh by default), orthogonal init with gain
 *    sqrt(2) on hidden layers, 0.01 on the policy output and 1.0 on the value output;
 *  - a rollout buffer of num_steps transitions; GAE(gamma 0.99, lambda 0.95) computed with the
 *    bootstrap value of the observation after the last step; returns = advantages + values;
 *  - update_epochs passes over the buffer in shuffled minibatches; per minibatch: advantage
 *    normalisation (mean, unbiased std + 1e-8), clipped surrogate (clip 0.2), clipped value loss
 *    0.5*max((v-R)^2, (v_old + clip(v - v_old, -0.2, 0.2) - R)^2), entropy bonus, total loss
 *    pg - ent_coef*H + vf_coef*V; one Adam step (eps 1e-5) over all parameters after global
 *    gradient-norm clipping (0.5); optional early stop at target_kl;
 *  - the learning rate anneals linearly to 0 over num_updates (anneal_lr).
 * Options for RL-Scheduling (off by default): a separate critic learning rate (lr_critic), a
 * Smooth-L1 (Huber, delta 1) value loss instead of the (clipped) squared error (vloss), and an
 * L2 penalty on the critic's weights, not its biases (critic_l2); ent_coef may be changed by the
 * caller between updates (a decaying entropy coefficient).
 * Action heads: PPO_MCAT (MultiDiscrete/Discrete with optional masks) or PPO_GAUSS (Box, a
 * state-independent log std initialised to 0). Termination and truncation are both treated as
 * "done" (as CleanRL does).
 *
 * Use:  ppo *p = ppo_new(&cfg, obs_dim, PPO_MCAT, nd, nvec, seed);
 *       loop: ppo_act(p, obs, mask, act_i, act_f, &logp, &v); env step;
 *             if (ppo_store(p, obs, mask, act_i, act_f, logp, v, reward, done)) ppo_update(p, next_obs, &stats);
 *   (ppo_store returns 1 when the buffer is full; ppo_update uses the CURRENT next observation
 *    for the bootstrap, treating done of the last stored step as the episode's end.) */
#ifndef HWGYM_PPO_H
#define HWGYM_PPO_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"
#include "nn.h"

typedef enum ppo_head { PPO_MCAT = 0, PPO_GAUSS = 1 } ppo_head;

typedef struct ppo_cfg {
    int num_steps;       /* rollout length (default 128) */
    int minibatch_size;  /* default 32 (num_steps / 4) */
    int update_epochs;   /* default 4 */
    int hidden;          /* units per hidden layer (64) */
    int hidden_layers;   /* 2 */
    double lr;           /* 2.5e-4 */
    double gamma, gae_lambda, clip_coef, ent_coef, vf_coef, max_grad_norm, target_kl; /* .99 .95 .2 .01 .5 .5 0=off */
    bool norm_adv, clip_vloss, anneal_lr; /* true true true */
    long num_updates;    /* for anneal_lr: total updates planned (0: no annealing) */
    /* RL-Scheduling's critic (paper section 3.2, eq. 3): defaults keep CleanRL's behaviour. */
    double lr_critic;    /* critic learning rate (0: same as lr) */
    int vloss;           /* PPO_VLOSS_MSE (CleanRL, clipped when clip_vloss) or PPO_VLOSS_SMOOTH_L1 */
    double critic_l2;    /* lambda of an L2 penalty lambda*||W||^2 on the critic's weights (0: off) */
} ppo_cfg;

enum { PPO_VLOSS_MSE = 0, PPO_VLOSS_SMOOTH_L1 = 1 };

ppo_cfg ppo_cfg_default(void);

typedef struct ppo_stats {
    double pg_loss, v_loss, entropy, approx_kl, old_approx_kl, clipfrac, explained_var, lr, grad_norm;
    int epochs_run;
} ppo_stats;

typedef struct ppo {
    ppo_cfg cfg;
    ppo_head head;
    int obs_dim, nd, nlogits; /* nd: action elements; nlogits: sum nvec (MCAT) or nd (GAUSS) */
    int64_t *nvec;
    nnet_mlp *actor, *critic;
    double *log_std, *g_log_std;
    nnet_adam *opt_actor, *opt_critic, *opt_logstd;
    gsl_rng *rng; /* minibatch shuffling */
    long updates;
    /* rollout buffer */
    int n, mask_len;
    double *b_obs, *b_actf, *b_logp, *b_val, *b_rew, *b_done, *b_adv, *b_ret;
    int64_t *b_acti;
    uint8_t *b_mask; /* num_steps x nlogits, or NULL until a mask is stored */
    /* scratch */
    double *mb_obs, *mb_dlog, *mb_dv, *tmp;
    int *idx;
} ppo;

/* nvec: nd choices (MCAT) or NULL (GAUSS: nd = action elements). */
ppo *ppo_new(const ppo_cfg *cfg, int obs_dim, ppo_head head, int nd, const int64_t *nvec, uint64_t seed);
void ppo_free(ppo *p);
/* Samples an action for one observation (act_i for MCAT, act_f for GAUSS, the other may be
 * NULL) with rng; gives its log-prob and the value estimate. mask: nlogits or NULL. */
void ppo_act(ppo *p, const double *obs, const uint8_t *mask, gsl_rng *rng, int64_t *act_i, double *act_f, double *logp,
             double *value);
/* Deterministic action: argmax / mean. */
void ppo_act_greedy(ppo *p, const double *obs, const uint8_t *mask, int64_t *act_i, double *act_f);
double ppo_value(ppo *p, const double *obs);
/* Appends one transition; returns 1 when the buffer holds num_steps transitions. */
int ppo_store(ppo *p, const double *obs, const uint8_t *mask, const int64_t *act_i, const double *act_f, double logp,
              double value, double reward, bool done);
/* GAE + the PPO epochs on the buffer (n transitions; may be less than num_steps at the end of
 * a budget), then empties it. next_obs: observation after the last stored step. */
int ppo_update(ppo *p, const double *next_obs, ppo_stats *st);

/* The pieces of ppo_update, exposed for tests and custom loops: GAE on the buffer (adv/ret),
 * and the loss of one minibatch (indices into the buffer) with its gradients left in
 * actor->grads, critic->grads and g_log_std (zeroed first). Returns
 * pg_loss - ent_coef*entropy + vf_coef*v_loss; st (may be NULL) gets the parts. */
void ppo_compute_gae(ppo *p, const double *next_obs);
double ppo_minibatch_grad(ppo *p, const int *idx, int B, ppo_stats *st);

/* GAE(gamma, lambda) on T steps: done[t] = the episode ended with step t; next_value: value of
 * the observation after step T-1. Writes adv and ret (= adv + values). */
void ppo_gae(int T, const double *rewards, const double *values, const double *done, double next_value, double gamma,
             double lambda, double *adv, double *ret);

/* Saves/loads actor, critic (and log std for GAUSS) in nn.h's format. */
int ppo_save(ppo *p, const char *path, hw_err *err);
int ppo_load(ppo *p, const char *path, hw_err *err);

#endif
