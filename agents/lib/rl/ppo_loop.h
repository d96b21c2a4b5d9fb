/* ppo_loop.h - the PPO training loop over an agent session (used by hwgym-ppo, hwgym-tdm-ppo's
 * env-native mode and the tests), plus running observation normalisation.
 *
 * ppo_train(): runs episodes on `s` until `budget` env steps: reset with seed
 * ag_rng_derive(seed, 1 + episode) & (2^53-1) (JSON-safe, logged with every trial), sample an action
 * (masked by info "action_mask" when its length matches the logits), step, log the trial in `run`
 * (may be NULL), store, update when the rollout is full and at the end of the budget. Box actions
 * are clipped to the space bounds before stepping (the unclipped sample is what PPO learns from).
 * Observations and rewards go through ag_norm.h (obs_norm / rew_norm; defaults log-running and
 * return-std, the same as hwgym-marl-worker's); the trials keep the raw values. The result
 * object (new) has "updates", "episodes", "mean_return_last10", "final" (last update's losses). */
#ifndef HWGYM_PPO_LOOP_H
#define HWGYM_PPO_LOOP_H

#include <jansson.h>

#include "ag_norm.h"
#include "agent_common.h"
#include "ppo.h"

typedef struct ag_rms {
    int n;
    double count;
    double *mean, *var;
} ag_rms;

ag_rms *ag_rms_new(int n);
void ag_rms_free(ag_rms *r);
void ag_rms_update(ag_rms *r, const double *x);
/* y = clip((x - mean) / sqrt(var + 1e-8), -clip, clip) */
void ag_rms_apply(const ag_rms *r, const double *x, double *y, double clip);

typedef struct ppo_train_opts {
    ppo_cfg cfg;
    int obs_norm;           /* ag_obs_norm_mode, default AG_OBS_NORM_DEFAULT */
    int rew_norm;           /* ag_rew_norm_mode, default AG_REW_NORM_DEFAULT */
    const char *worker;     /* trial worker label (NULL: "0") */
    const char *save_path;  /* save the final weights here (NULL: no) */
    struct ag_ckpt_ctl *ckpt; /* checkpoints before an episode's reset / resume (checkpoint.h); NULL: off */
} ppo_train_opts;

ppo_train_opts ppo_train_opts_default(void);
/* Returns 0, or -1 with err set (env or DB failure). *result (may be NULL) gets the object above.
 * *out_ppo (may be NULL) receives the trained agent (caller frees with ppo_free), else it is freed. */
int ppo_train(ag_sess *s, ag_run *run, const ppo_train_opts *o, uint64_t seed, int64_t budget, json_t **result,
              ppo **out_ppo, hw_err *err);

#endif
