/* replay.h - a uniform replay buffer (ring) of transitions with integer actions:
 * obs, action (nd int64), reward, terminated (bootstrap cut), next_obs, and optionally the
 * action mask of next_obs (mask_len bytes; 0: none). Used by SAC. */
#ifndef HWGYM_REPLAY_H
#define HWGYM_REPLAY_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct ag_replay {
    int64_t cap, size, pos;
    int obs_dim, nd, mask_len;
    double *obs, *next_obs, *rew, *done;
    int64_t *act;
    uint8_t *next_mask;
} ag_replay;

ag_replay *ag_replay_new(int64_t cap, int obs_dim, int nd, int mask_len);
void ag_replay_free(ag_replay *r);
/* next_mask may be NULL (all allowed). Overwrites the oldest when full. */
void ag_replay_add(ag_replay *r, const double *obs, const int64_t *act, double rew, bool terminated,
                   const double *next_obs, const uint8_t *next_mask);
/* B indices drawn uniformly (with replacement) from the stored transitions. */
void ag_replay_sample(ag_replay *r, gsl_rng *rng, int B, int64_t *idx);

#endif
