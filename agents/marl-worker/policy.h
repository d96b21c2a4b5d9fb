/* policy.h - pluggable policies of one decentralised MARL worker (hwgym-marl-worker).
 * A policy acts on the shared observation with a multi-categorical action over the worker's
 * own action dimensions (nvec from the join reply) and learns from the shared reward.
 *   random  uniform over each dimension (no learning): the end-to-end baseline
 *   ppo     agents/lib's PPO (ppo.h: 64-64 tanh MLP actor and critic, CleanRL details) with a
 *           multi-categorical head over the worker's dims
 *   ppo-linear  PPO (clipped surrogate, GAE, advantage normalisation per minibatch, clipped value
 *           loss, entropy bonus, epochs over shuffled minibatches, Adam eps 1e-5, gradient-norm
 *           clipping) with a linear-softmax multi-categorical head and a linear value function
 *           on running-normalised observations (see docs/marl.md, "Policy").
 * Deterministic for a seed (gsl_rng mt19937). No globals. */
#ifndef MARL_POLICY_H
#define MARL_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"

typedef struct marl_policy marl_policy;

/* kind "random", "ppo" or "ppo-linear"; cfg (may be NULL) overrides the PPO hyper-parameters:
 * {"lr","rollout","epochs","minibatch","clip","ent_coef","vf_coef","gamma","lambda",
 *  "max_grad_norm","anneal","hidden"}. Unknown keys fail with an error naming them. */
marl_policy *marl_policy_new(const char *kind, int ndims, const int64_t *nvec, int obs_dim, uint64_t seed,
                             const json_t *cfg, int64_t total_steps, hw_err *err);
void marl_policy_free(marl_policy *p);
/* Samples an action for obs (obs_dim values). */
void marl_policy_act(marl_policy *p, const double *obs, int64_t *action);
/* Records the result of the last action; updates when the rollout is full. `done` = the
 * episode ended (terminated or truncated) with this step. */
void marl_policy_observe(marl_policy *p, double reward, bool done);
/* Number of PPO updates so far. */
int marl_policy_updates(const marl_policy *p);

/* Checkpoints (agents/lib/run/checkpoint.h): the policy's whole state (RNG, counters, normalisers,
 * weights, Adam moments, the rollout). get needs a policy made with the same kind/config/dims. */
struct ag_ckpt;
void marl_policy_ckpt_put(const marl_policy *p, struct ag_ckpt *c);
int marl_policy_ckpt_get(marl_policy *p, const struct ag_ckpt *c, hw_err *err);

#endif
