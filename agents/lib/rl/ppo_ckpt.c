/* ppo_ckpt.c - the whole state of a PPO agent (ppo.h) and of its training loop (ppo_loop.h)
 * in a checkpoint (checkpoint.h): weights, Adam moments and step counts, the log std, the
 * minibatch RNG, the update count, the rollout buffer (with its masks), the loop's RNG,
 * observation normaliser, step/episode counters and recent returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag_norm.h"
#include "checkpoint.h"
#include "ppo.h"
#include "ppo_loop.h"

static const char *key(char *buf, size_t cap, const char *pre, const char *name) {
    snprintf(buf, cap, "%s.%s", pre, name);
    return buf;
}

void ag_adam_ckpt_put(ag_ckpt *c, const char *pre, const char *name, const nnet_adam *a) {
    char k[160];
    char sub[128];
    snprintf(sub, sizeof sub, "%s.m", name);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, sub), a->m, a->n);
    snprintf(sub, sizeof sub, "%s.v", name);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, sub), a->v, a->n);
    double tl[2] = {(double)a->t, a->lr};
    snprintf(sub, sizeof sub, "%s.t_lr", name);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, sub), tl, 2);
}

int ag_adam_ckpt_get(const ag_ckpt *c, const char *pre, const char *name, nnet_adam *a, hw_err *err) {
    char k[160];
    char sub[128];
    double tl[2];
    snprintf(sub, sizeof sub, "%s.m", name);
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, sub), a->m, a->n, err)) return -1;
    snprintf(sub, sizeof sub, "%s.v", name);
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, sub), a->v, a->n, err)) return -1;
    snprintf(sub, sizeof sub, "%s.t_lr", name);
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, sub), tl, 2, err)) return -1;
    a->t = (long)tl[0];
    a->lr = tl[1];
    return 0;
}

void ppo_ckpt_put(ag_ckpt *c, const char *pre, const struct ppo *p) {
    char k[160];
    size_t T = (size_t)p->cfg.num_steps, n = (size_t)p->n;
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "actor"), p->actor->params, p->actor->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "critic"), p->critic->params, p->critic->nparams);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "log_std"), p->log_std, (size_t)p->nd);
    ag_adam_ckpt_put(c, pre, "adam_actor", p->opt_actor);
    ag_adam_ckpt_put(c, pre, "adam_critic", p->opt_critic);
    ag_adam_ckpt_put(c, pre, "adam_logstd", p->opt_logstd);
    ag_ckpt_put_rng(c, key(k, sizeof k, pre, "rng"), p->rng);
    int64_t cnt[3] = {p->updates, p->n, p->b_mask ? 1 : 0};
    ag_ckpt_put_i64(c, key(k, sizeof k, pre, "counts"), cnt, 3);
    /* the rollout so far (n of T rows) */
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_obs"), p->b_obs, n * (size_t)p->obs_dim);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_actf"), p->b_actf, n * (size_t)p->nd);
    ag_ckpt_put_i64(c, key(k, sizeof k, pre, "b_acti"), p->b_acti, n * (size_t)p->nd);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_logp"), p->b_logp, n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_val"), p->b_val, n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_rew"), p->b_rew, n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "b_done"), p->b_done, n);
    if (p->b_mask) ag_ckpt_put_u8(c, key(k, sizeof k, pre, "b_mask"), p->b_mask, T * (size_t)p->nlogits);
}

int ppo_ckpt_get(const ag_ckpt *c, const char *pre, struct ppo *p, hw_err *err) {
    char k[160];
    size_t T = (size_t)p->cfg.num_steps;
    int64_t cnt[3];
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, "actor"), p->actor->params, p->actor->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "critic"), p->critic->params, p->critic->nparams, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "log_std"), p->log_std, (size_t)p->nd, err) ||
        ag_adam_ckpt_get(c, pre, "adam_actor", p->opt_actor, err) || ag_adam_ckpt_get(c, pre, "adam_critic", p->opt_critic, err) ||
        ag_adam_ckpt_get(c, pre, "adam_logstd", p->opt_logstd, err) || ag_ckpt_get_rng(c, key(k, sizeof k, pre, "rng"), p->rng, err) ||
        ag_ckpt_get_i64(c, key(k, sizeof k, pre, "counts"), cnt, 3, err))
        return -1;
    if (cnt[1] < 0 || (size_t)cnt[1] > T)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: %s rollout of %lld steps, num_steps is %zu", pre,
                       (long long)cnt[1], T);
    p->updates = (long)cnt[0];
    p->n = (int)cnt[1];
    size_t n = (size_t)p->n;
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_obs"), p->b_obs, n * (size_t)p->obs_dim, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_actf"), p->b_actf, n * (size_t)p->nd, err) ||
        ag_ckpt_get_i64(c, key(k, sizeof k, pre, "b_acti"), p->b_acti, n * (size_t)p->nd, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_logp"), p->b_logp, n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_val"), p->b_val, n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_rew"), p->b_rew, n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "b_done"), p->b_done, n, err))
        return -1;
    if (cnt[2]) {
        if (!p->b_mask) p->b_mask = malloc(T * (size_t)p->nlogits);
        if (ag_ckpt_get_u8(c, key(k, sizeof k, pre, "b_mask"), p->b_mask, T * (size_t)p->nlogits, err)) return -1;
    }
    return 0;
}

void ag_rms_ckpt_put(ag_ckpt *c, const char *pre, const struct ag_rms *r) {
    char k[160];
    ag_ckpt_put_real(c, key(k, sizeof k, pre, "count"), r->count);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "mean"), r->mean, (size_t)r->n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "var"), r->var, (size_t)r->n);
}

int ag_rms_ckpt_get(const ag_ckpt *c, const char *pre, struct ag_rms *r, hw_err *err) {
    char k[160];
    if (ag_ckpt_get_real(c, key(k, sizeof k, pre, "count"), &r->count, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "mean"), r->mean, (size_t)r->n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "var"), r->var, (size_t)r->n, err))
        return -1;
    return 0;
}

void ag_norm_ckpt_put(ag_ckpt *c, const char *pre, const struct ag_norm *z) {
    char k[160];
    double sc[5] = {z->count, z->ret, z->rmean, z->rvar, z->rcount};
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "scalars"), sc, 5);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "mean"), z->mean, (size_t)z->n);
    ag_ckpt_put_f64(c, key(k, sizeof k, pre, "var"), z->var, (size_t)z->n);
}

int ag_norm_ckpt_get(const ag_ckpt *c, const char *pre, struct ag_norm *z, hw_err *err) {
    char k[160];
    double sc[5];
    if (ag_ckpt_get_f64(c, key(k, sizeof k, pre, "scalars"), sc, 5, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "mean"), z->mean, (size_t)z->n, err) ||
        ag_ckpt_get_f64(c, key(k, sizeof k, pre, "var"), z->var, (size_t)z->n, err))
        return -1;
    z->count = sc[0];
    z->ret = sc[1];
    z->rmean = sc[2];
    z->rvar = sc[3];
    z->rcount = sc[4];
    return 0;
}
