/* replay.c - see replay.h. */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

ag_replay *ag_replay_new(int64_t cap, int obs_dim, int nd, int mask_len) {
    ag_replay *r = calloc(1, sizeof *r);
    r->cap = cap < 1 ? 1 : cap;
    r->obs_dim = obs_dim;
    r->nd = nd;
    r->mask_len = mask_len;
    size_t c = (size_t)r->cap;
    r->obs = calloc(c * (size_t)obs_dim + 1, sizeof(double));
    r->next_obs = calloc(c * (size_t)obs_dim + 1, sizeof(double));
    r->rew = calloc(c, sizeof(double));
    r->done = calloc(c, sizeof(double));
    r->act = calloc(c * (size_t)nd + 1, sizeof(int64_t));
    if (mask_len > 0) r->next_mask = malloc(c * (size_t)mask_len);
    return r;
}

void ag_replay_free(ag_replay *r) {
    if (!r) return;
    free(r->obs);
    free(r->next_obs);
    free(r->rew);
    free(r->done);
    free(r->act);
    free(r->next_mask);
    free(r);
}

void ag_replay_add(ag_replay *r, const double *obs, const int64_t *act, double rew, bool terminated,
                   const double *next_obs, const uint8_t *next_mask) {
    size_t i = (size_t)r->pos;
    memcpy(r->obs + i * (size_t)r->obs_dim, obs, sizeof(double) * (size_t)r->obs_dim);
    memcpy(r->next_obs + i * (size_t)r->obs_dim, next_obs, sizeof(double) * (size_t)r->obs_dim);
    memcpy(r->act + i * (size_t)r->nd, act, sizeof(int64_t) * (size_t)r->nd);
    r->rew[i] = rew;
    r->done[i] = terminated ? 1.0 : 0.0;
    if (r->next_mask) {
        if (next_mask) memcpy(r->next_mask + i * (size_t)r->mask_len, next_mask, (size_t)r->mask_len);
        else memset(r->next_mask + i * (size_t)r->mask_len, 1, (size_t)r->mask_len);
    }
    r->pos = (r->pos + 1) % r->cap;
    if (r->size < r->cap) r->size++;
}

void ag_replay_sample(ag_replay *r, gsl_rng *rng, int B, int64_t *idx) {
    for (int b = 0; b < B; b++) idx[b] = ag_rng_int(rng, r->size);
}
