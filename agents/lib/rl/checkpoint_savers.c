/* checkpoint_savers.c - the state of agents/lib's replay buffer (replay.h) and discrete SAC
 * (sac.h) in a checkpoint (checkpoint.h); PPO's, the normalisers' and Adam's are in ppo_ckpt.c. */
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "nn.h"
#include "replay.h"
#include "sac.h"

static const char *key(char *buf, size_t cap, const char *pre, const char *name) {
    snprintf(buf, cap, "%s.%s", pre, name);
    return buf;
}

void ag_replay_ckpt_put(ag_ckpt *c, const char *pre, const ag_replay *r) {
    char k[160];
    size_t n = (size_t)r->size, od = (size_t)r->obs_dim;
    int64_t shape[6] = {r->cap, r->size, r->pos, r->obs_dim, r->nd, r->mask_len};
    ag_ckpt_put_i64(c, key(k, sizeof k, pre, "shape"), shape, 6);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "obs"), r->obs, n * od);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "next_obs"), r->next_obs, n * od);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "rew"), r->rew, n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "done"), r->done, n);
    ag_ckpt_put_i64(c, key(k, sizeof k, pre, "act"), r->act, n * (size_t)r->nd);
    if (r->next_mask) ag_ckpt_put_u8(c, key(k, sizeof k, pre, "next_mask"), r->next_mask, n * (size_t)r->mask_len);
}

int ag_replay_ckpt_get(const ag_ckpt *c, const char *pre, ag_replay *r, hw_err *err) {
    char k[160];
    int64_t sh[6];
    if (ag_ckpt_get_i64(c, key(k, sizeof k, pre, "shape"), sh, 6, err)) return -1;
    if (sh[0] != r->cap || sh[3] != r->obs_dim || sh[4] != r->nd || sh[5] != r->mask_len || sh[1] < 0 ||
        sh[1] > r->cap || sh[2] < 0 || sh[2] >= r->cap)
        return hw_fail(err, HW_E_BAD_CONFIG,
                       "checkpoint: %s: a replay buffer of capacity %lld (obs %lld, action %lld, mask %lld), this run's "
                       "is %lld (%d, %d, %d)",
                       pre, (long long)sh[0], (long long)sh[3], (long long)sh[4], (long long)sh[5], (long long)r->cap,
                       r->obs_dim, r->nd, r->mask_len);
    size_t n = (size_t)sh[1], od = (size_t)r->obs_dim;
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, "obs"), r->obs, n * od, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "next_obs"), r->next_obs, n * od, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "rew"), r->rew, n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "done"), r->done, n, err) ||
        ag_ckpt_get_i64(c, key(k, sizeof k, pre, "act"), r->act, n * (size_t)r->nd, err) ||
        (r->next_mask && ag_ckpt_get_u8(c, key(k, sizeof k, pre, "next_mask"), r->next_mask, n * (size_t)r->mask_len, err)))
        return -1;
    r->size = sh[1];
    r->pos = sh[2];
    return 0;
}

void sac_ckpt_put(ag_ckpt *c, const char *pre, const sac *s) {
    char k[160];
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "actor"), s->actor->params, s->actor->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "q1"), s->q1->params, s->q1->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "q2"), s->q2->params, s->q2->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "q1t"), s->q1t->params, s->q1t->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "q2t"), s->q2t->params, s->q2t->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "log_alpha"), s->log_alpha, (size_t)s->nd);
    ag_adam_ckpt_put(c, pre, "adam_actor", s->opt_actor);
    ag_adam_ckpt_put(c, pre, "adam_q1", s->opt_q1);
    ag_adam_ckpt_put(c, pre, "adam_q2", s->opt_q2);
    ag_adam_ckpt_put(c, pre, "adam_alpha", s->opt_alpha);
}

int sac_ckpt_get(const ag_ckpt *c, const char *pre, sac *s, hw_err *err) {
    char k[160];
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, "actor"), s->actor->params, s->actor->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "q1"), s->q1->params, s->q1->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "q2"), s->q2->params, s->q2->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "q1t"), s->q1t->params, s->q1t->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "q2t"), s->q2t->params, s->q2t->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "log_alpha"), s->log_alpha, (size_t)s->nd, err) ||
        ag_adam_ckpt_get(c, pre, "adam_actor", s->opt_actor, err) || ag_adam_ckpt_get(c, pre, "adam_q1", s->opt_q1, err) ||
        ag_adam_ckpt_get(c, pre, "adam_q2", s->opt_q2, err) || ag_adam_ckpt_get(c, pre, "adam_alpha", s->opt_alpha, err))
        return -1;
    return 0;
}
