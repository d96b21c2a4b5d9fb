/* ag_norm.h - observation and reward normalisation shared by every PPO-family agent
 * (hwgym-ppo, hwgym-tdm-ppo, hwgym-marl-worker), so that comparing them compares algorithms,
 * not preprocessing (issue 11). One implementation, one set of option names and defaults:
 *
 *   obs:    "log-running" (default)  z = sign(o)·log1p(|o|), then (z - mean) / sqrt(var + 1e-8)
 *                                    with running mean/var, clipped to [-5, 5]
 *           "running"                the same without the log compression
 *           "none"                   the raw observation (non-finite values become 0)
 *   reward: "return-std" (default)   r / std(discounted return), running (gym's NormalizeReward),
 *                                    clipped to [-10, 10]; 0 for the very first sample
 *           "none"                   the raw reward (non-finite becomes 0)
 * Logged trials always carry the raw reward and observation; only what the learner sees changes.
 * Command line: --obs-norm NAME --reward-norm NAME (ag_norm_optdefs); MARL: policy_config keys
 * "obs_norm" and "reward_norm". */
#ifndef HWGYM_AG_NORM_H
#define HWGYM_AG_NORM_H

#include <stdbool.h>

#include "hw_error.h"

typedef enum { AG_OBS_NORM_NONE = 0, AG_OBS_NORM_RUNNING, AG_OBS_NORM_LOG_RUNNING } ag_obs_norm_mode;
typedef enum { AG_REW_NORM_NONE = 0, AG_REW_NORM_RETURN_STD } ag_rew_norm_mode;
#define AG_OBS_NORM_DEFAULT AG_OBS_NORM_LOG_RUNNING
#define AG_REW_NORM_DEFAULT AG_REW_NORM_RETURN_STD
extern const char *const ag_obs_norm_names[]; /* "none", "running", "log-running", NULL */
extern const char *const ag_rew_norm_names[]; /* "none", "return-std", NULL */

typedef struct ag_norm {
    int n;
    ag_obs_norm_mode om;
    ag_rew_norm_mode rm;
    double gamma;
    double *mean, *var, count;        /* observation statistics */
    double ret, rmean, rvar, rcount;  /* discounted-return statistics */
} ag_norm;

ag_norm *ag_norm_new(int n, ag_obs_norm_mode om, ag_rew_norm_mode rm, double gamma);
void ag_norm_free(ag_norm *z);
/* out[n] = the normalised obs; update: add obs to the running statistics first. */
void ag_norm_obs(ag_norm *z, const double *obs, double *out, bool update);
/* The reward the learner sees; done ends the discounted return. */
double ag_norm_reward(ag_norm *z, double r, bool done);
/* Parses a mode name ("what" names the option in the error). NULL name keeps *out. */
int ag_norm_parse(const char *name, const char *const *names, const char *what, int *out, hw_err *err);

#endif
