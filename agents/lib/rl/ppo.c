/* ppo.c - see ppo.h. */
#include "ppo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "heads.h"

ppo_cfg ppo_cfg_default(void) {
    ppo_cfg c;
    memset(&c, 0, sizeof c);
    c.num_steps = 128;
    c.minibatch_size = 32;
    c.update_epochs = 4;
    c.hidden = 64;
    c.hidden_layers = 2;
    c.lr = 2.5e-4;
    c.gamma = 0.99;
    c.gae_lambda = 0.95;
    c.clip_coef = 0.2;
    c.ent_coef = 0.01;
    c.vf_coef = 0.5;
    c.max_grad_norm = 0.5;
    c.target_kl = 0;
    c.norm_adv = true;
    c.clip_vloss = true;
    c.anneal_lr = true;
    c.num_updates = 0;
    return c;
}

static nnet_mlp *make_mlp(int in, int out, const ppo_cfg *c) {
    int sizes[NNET_MAX_LAYERS + 1], L = c->hidden_layers + 1;
    if (L > NNET_MAX_LAYERS) L = NNET_MAX_LAYERS;
    sizes[0] = in;
    for (int l = 1; l < L; l++) sizes[l] = c->hidden;
    sizes[L] = out;
    return nnet_new(L, sizes, NNET_TANH);
}

ppo *ppo_new(const ppo_cfg *cfg, int obs_dim, ppo_head head, int nd, const int64_t *nvec, uint64_t seed) {
    ppo *p = calloc(1, sizeof *p);
    p->cfg = *cfg;
    if (p->cfg.num_steps < 1) p->cfg.num_steps = 1;
    if (p->cfg.minibatch_size < 1) p->cfg.minibatch_size = 1;
    if (p->cfg.update_epochs < 1) p->cfg.update_epochs = 1;
    p->head = head;
    p->obs_dim = obs_dim;
    p->nd = nd;
    p->nvec = calloc((size_t)nd, sizeof(int64_t));
    p->nlogits = 0;
    if (head == PPO_MCAT) {
        for (int d = 0; d < nd; d++) {
            p->nvec[d] = nvec[d];
            p->nlogits += (int)nvec[d];
        }
    } else {
        p->nlogits = nd;
    }
    p->rng = ag_rng_new(ag_rng_derive(seed, 101));
    gsl_rng *init = ag_rng_new(ag_rng_derive(seed, 102));
    p->actor = make_mlp(obs_dim, p->nlogits, &p->cfg);
    p->critic = make_mlp(obs_dim, 1, &p->cfg);
    nnet_init_orthogonal(p->actor, init, sqrt(2.0), 0.01);
    nnet_init_orthogonal(p->critic, init, sqrt(2.0), 1.0);
    gsl_rng_free(init);
    p->log_std = calloc((size_t)nd + 1, sizeof(double));
    p->g_log_std = calloc((size_t)nd + 1, sizeof(double));
    p->opt_actor = nnet_adam_new(p->actor->nparams, p->cfg.lr);
    p->opt_critic = nnet_adam_new(p->critic->nparams, p->cfg.lr);
    p->opt_logstd = nnet_adam_new((size_t)nd, p->cfg.lr);
    size_t T = (size_t)p->cfg.num_steps;
    p->b_obs = calloc(T * (size_t)obs_dim + 1, sizeof(double));
    p->b_actf = calloc(T * (size_t)nd + 1, sizeof(double));
    p->b_acti = calloc(T * (size_t)nd + 1, sizeof(int64_t));
    p->b_logp = calloc(T, sizeof(double));
    p->b_val = calloc(T, sizeof(double));
    p->b_rew = calloc(T, sizeof(double));
    p->b_done = calloc(T, sizeof(double));
    p->b_adv = calloc(T, sizeof(double));
    p->b_ret = calloc(T, sizeof(double));
    size_t M = (size_t)p->cfg.minibatch_size;
    p->mb_obs = calloc(M * (size_t)obs_dim + 1, sizeof(double));
    p->mb_dlog = calloc(M * (size_t)p->nlogits + 1, sizeof(double));
    p->mb_dv = calloc(M, sizeof(double));
    p->tmp = calloc(3 * (size_t)p->nlogits + 3, sizeof(double));
    p->idx = calloc(T, sizeof(int));
    return p;
}

void ppo_free(ppo *p) {
    if (!p) return;
    nnet_free(p->actor);
    nnet_free(p->critic);
    nnet_adam_free(p->opt_actor);
    nnet_adam_free(p->opt_critic);
    nnet_adam_free(p->opt_logstd);
    gsl_rng_free(p->rng);
    free(p->nvec);
    free(p->log_std);
    free(p->g_log_std);
    free(p->b_obs);
    free(p->b_actf);
    free(p->b_acti);
    free(p->b_logp);
    free(p->b_val);
    free(p->b_rew);
    free(p->b_done);
    free(p->b_adv);
    free(p->b_ret);
    free(p->b_mask);
    free(p->mb_obs);
    free(p->mb_dlog);
    free(p->mb_dv);
    free(p->tmp);
    free(p->idx);
    free(p);
}

double ppo_value(ppo *p, const double *obs) { return nnet_forward(p->critic, obs, 1)[0]; }

void ppo_act(ppo *p, const double *obs, const uint8_t *mask, gsl_rng *rng, int64_t *act_i, double *act_f, double *logp,
             double *value) {
    const double *z = nnet_forward(p->actor, obs, 1);
    if (p->head == PPO_MCAT) {
        mcat_sample(p->nd, p->nvec, z, mask, rng, act_i);
        if (logp) mcat_eval(p->nd, p->nvec, z, mask, act_i, logp, NULL, NULL, NULL);
    } else {
        gauss_sample(p->nd, z, p->log_std, rng, act_f);
        if (logp) gauss_eval(p->nd, z, p->log_std, act_f, logp, NULL, NULL, NULL, NULL);
    }
    if (value) *value = ppo_value(p, obs);
}

void ppo_act_greedy(ppo *p, const double *obs, const uint8_t *mask, int64_t *act_i, double *act_f) {
    const double *z = nnet_forward(p->actor, obs, 1);
    if (p->head == PPO_MCAT) mcat_argmax(p->nd, p->nvec, z, mask, act_i);
    else memcpy(act_f, z, sizeof(double) * (size_t)p->nd);
}

int ppo_store(ppo *p, const double *obs, const uint8_t *mask, const int64_t *act_i, const double *act_f, double logp,
              double value, double reward, bool done) {
    if (p->n >= p->cfg.num_steps) return 1;
    size_t t = (size_t)p->n;
    memcpy(p->b_obs + t * (size_t)p->obs_dim, obs, sizeof(double) * (size_t)p->obs_dim);
    if (p->head == PPO_MCAT) memcpy(p->b_acti + t * (size_t)p->nd, act_i, sizeof(int64_t) * (size_t)p->nd);
    else memcpy(p->b_actf + t * (size_t)p->nd, act_f, sizeof(double) * (size_t)p->nd);
    if (mask && p->head == PPO_MCAT) {
        if (!p->b_mask) {
            p->b_mask = malloc((size_t)p->cfg.num_steps * (size_t)p->nlogits);
            memset(p->b_mask, 1, (size_t)p->cfg.num_steps * (size_t)p->nlogits);
        }
        memcpy(p->b_mask + t * (size_t)p->nlogits, mask, (size_t)p->nlogits);
    } else if (p->b_mask) {
        memset(p->b_mask + t * (size_t)p->nlogits, 1, (size_t)p->nlogits);
    }
    p->b_logp[t] = logp;
    p->b_val[t] = value;
    p->b_rew[t] = reward;
    p->b_done[t] = done ? 1.0 : 0.0;
    p->n++;
    return p->n >= p->cfg.num_steps;
}

void ppo_gae(int T, const double *rewards, const double *values, const double *done, double next_value, double gamma,
             double lambda, double *adv, double *ret) {
    double last = 0;
    for (int t = T - 1; t >= 0; t--) {
        double nonterminal = 1.0 - done[t];
        double nextv = t == T - 1 ? next_value : values[t + 1];
        double delta = rewards[t] + gamma * nextv * nonterminal - values[t];
        last = delta + gamma * lambda * nonterminal * last;
        adv[t] = last;
    }
    for (int t = 0; t < T; t++) ret[t] = adv[t] + values[t];
}

void ppo_compute_gae(ppo *p, const double *next_obs) {
    double next_value = ppo_value(p, next_obs);
    ppo_gae(p->n, p->b_rew, p->b_val, p->b_done, next_value, p->cfg.gamma, p->cfg.gae_lambda, p->b_adv, p->b_ret);
}

double ppo_minibatch_grad(ppo *p, const int *mb, int B, ppo_stats *s) {
    double *dlogp = p->tmp, *dent = p->tmp + p->nlogits;
    double *dmu = p->tmp, *dls = p->tmp + p->nlogits, *dhs = p->tmp + 2 * p->nlogits;
    double clip = p->cfg.clip_coef;
    for (int k = 0; k < B; k++)
        memcpy(p->mb_obs + (size_t)k * (size_t)p->obs_dim, p->b_obs + (size_t)mb[k] * (size_t)p->obs_dim,
               sizeof(double) * (size_t)p->obs_dim);
    /* advantage normalisation over the minibatch */
    double am = 0, av = 0;
    for (int k = 0; k < B; k++) am += p->b_adv[mb[k]];
    am /= B;
    for (int k = 0; k < B; k++) av += (p->b_adv[mb[k]] - am) * (p->b_adv[mb[k]] - am);
    double asd = B > 1 ? sqrt(av / (B - 1)) : 0;
    const double *Z = nnet_forward(p->actor, p->mb_obs, B);
    const double *V = nnet_forward(p->critic, p->mb_obs, B);
    nnet_zero_grad(p->actor);
    nnet_zero_grad(p->critic);
    memset(p->g_log_std, 0, sizeof(double) * (size_t)p->nd);
    double pg = 0, vl = 0, ent = 0, kl = 0, okl = 0, cf = 0;
    for (int k = 0; k < B; k++) {
        int t = mb[k];
        const double *z = Z + (size_t)k * (size_t)p->nlogits;
        double lp, h;
        if (p->head == PPO_MCAT) {
            const uint8_t *m = p->b_mask ? p->b_mask + (size_t)t * (size_t)p->nlogits : NULL;
            mcat_eval(p->nd, p->nvec, z, m, p->b_acti + (size_t)t * (size_t)p->nd, &lp, &h, dlogp, dent);
        } else {
            gauss_eval(p->nd, z, p->log_std, p->b_actf + (size_t)t * (size_t)p->nd, &lp, &h, dmu, dls, dhs);
        }
        double adv = p->b_adv[t];
        if (p->cfg.norm_adv) adv = (adv - am) / (asd + 1e-8);
        double logratio = lp - p->b_logp[t], ratio = exp(logratio);
        okl += -logratio;
        kl += (ratio - 1.0) - logratio;
        if (fabs(ratio - 1.0) > clip) cf += 1;
        double l1 = -adv * ratio;
        double rc = ratio < 1 - clip ? 1 - clip : ratio > 1 + clip ? 1 + clip : ratio;
        double l2 = -adv * rc;
        double dl_dlogp; /* d(pg term)/d logp for this sample, before /B */
        if (l1 >= l2) {
            pg += l1;
            dl_dlogp = -adv * ratio;
        } else {
            pg += l2;
            dl_dlogp = 0; /* the clipped branch is constant in logp */
        }
        ent += h;
        /* value loss */
        double v = V[k], R = p->b_ret[t], vold = p->b_val[t], dv;
        if (p->cfg.vloss == PPO_VLOSS_SMOOTH_L1) {
            double e = v - R, ae = fabs(e);
            vl += ae < 1.0 ? 0.5 * e * e : ae - 0.5;
            dv = ae < 1.0 ? e : (e > 0 ? 1.0 : -1.0);
        } else if (p->cfg.clip_vloss) {
            double diff = v - vold;
            double dc = diff < -clip ? -clip : diff > clip ? clip : diff;
            double vc = vold + dc;
            double lu = (v - R) * (v - R), lc = (vc - R) * (vc - R);
            if (lu >= lc) {
                vl += 0.5 * lu;
                dv = v - R;
            } else {
                vl += 0.5 * lc;
                dv = fabs(diff) < clip ? vc - R : 0;
            }
        } else {
            vl += 0.5 * (v - R) * (v - R);
            dv = v - R;
        }
        p->mb_dv[k] = p->cfg.vf_coef * dv / B;
        double *dz = p->mb_dlog + (size_t)k * (size_t)p->nlogits;
        if (p->head == PPO_MCAT) {
            for (int j = 0; j < p->nlogits; j++) dz[j] = (dl_dlogp * dlogp[j] - p->cfg.ent_coef * dent[j]) / B;
        } else {
            for (int j = 0; j < p->nd; j++) {
                dz[j] = dl_dlogp * dmu[j] / B;
                p->g_log_std[j] += (dl_dlogp * dls[j] - p->cfg.ent_coef * dhs[j]) / B;
            }
        }
    }
    nnet_backward(p->actor, p->mb_dlog, NULL);
    nnet_backward(p->critic, p->mb_dv, NULL);
    double l2 = 0;
    if (p->cfg.critic_l2 > 0) {
        nnet_mlp *c = p->critic;
        for (int l = 0; l < c->nlayers; l++) {
            size_t nw = (size_t)c->sizes[l] * (size_t)c->sizes[l + 1];
            for (size_t i = 0; i < nw; i++) {
                double w = c->params[c->woff[l] + i];
                l2 += w * w;
                c->grads[c->woff[l] + i] += 2.0 * p->cfg.critic_l2 * w;
            }
        }
        l2 *= p->cfg.critic_l2;
    }
    if (s) {
        s->pg_loss = pg / B;
        s->v_loss = vl / B;
        s->entropy = ent / B;
        s->approx_kl = kl / B;
        s->old_approx_kl = okl / B;
        s->clipfrac = cf / B;
    }
    return pg / B - p->cfg.ent_coef * ent / B + p->cfg.vf_coef * vl / B + l2;
}

int ppo_update(ppo *p, const double *next_obs, ppo_stats *st) {
    ppo_stats s;
    memset(&s, 0, sizeof s);
    int T = p->n;
    if (T == 0) {
        if (st) *st = s;
        return 0;
    }
    p->updates++;
    double lr = p->cfg.lr;
    if (p->cfg.anneal_lr && p->cfg.num_updates > 0) {
        lr = nnet_linear_lr(p->cfg.lr, p->updates, p->cfg.num_updates);
        if (lr < 0) lr = 0;
    }
    p->opt_actor->lr = p->opt_logstd->lr = lr;
    p->opt_critic->lr = p->cfg.lr_critic > 0 && p->cfg.lr > 0 ? lr * (p->cfg.lr_critic / p->cfg.lr) : lr;
    ppo_compute_gae(p, next_obs);
    int M = p->cfg.minibatch_size < T ? p->cfg.minibatch_size : T;
    for (int i = 0; i < T; i++) p->idx[i] = i;
    int nmb = 0;
    double clipfrac = 0, gn = 0;
    ppo_stats m;
    memset(&m, 0, sizeof m);
    for (int ep = 0; ep < p->cfg.update_epochs; ep++) {
        ag_rng_shuffle(p->rng, p->idx, T);
        for (int start = 0; start < T; start += M) {
            int B = T - start < M ? T - start : M;
            ppo_minibatch_grad(p, p->idx + start, B, &m);
            double *gs[3] = {p->actor->grads, p->critic->grads, p->g_log_std};
            size_t ls[3] = {p->actor->nparams, p->critic->nparams, p->head == PPO_GAUSS ? (size_t)p->nd : 0};
            gn = nnet_clip_grad_norm(gs, ls, 3, p->cfg.max_grad_norm);
            nnet_adam_step(p->opt_actor, p->actor->params, p->actor->grads);
            nnet_adam_step(p->opt_critic, p->critic->params, p->critic->grads);
            if (p->head == PPO_GAUSS) nnet_adam_step(p->opt_logstd, p->log_std, p->g_log_std);
            clipfrac += m.clipfrac;
            nmb++;
        }
        s.epochs_run = ep + 1;
        if (p->cfg.target_kl > 0 && m.approx_kl > p->cfg.target_kl) break;
    }
    /* CleanRL reports the last minibatch's losses and the mean clip fraction */
    int epochs_run = s.epochs_run;
    s = m;
    s.epochs_run = epochs_run;
    s.clipfrac = nmb ? clipfrac / nmb : 0;
    s.grad_norm = gn;
    s.lr = lr;
    /* explained variance of the old values */
    double my = 0, vy = 0, vr = 0, mr = 0;
    for (int t = 0; t < T; t++) my += p->b_ret[t];
    my /= T;
    for (int t = 0; t < T; t++) {
        vy += (p->b_ret[t] - my) * (p->b_ret[t] - my);
        mr += p->b_ret[t] - p->b_val[t];
    }
    mr /= T;
    for (int t = 0; t < T; t++) {
        double r = p->b_ret[t] - p->b_val[t] - mr;
        vr += r * r;
    }
    s.explained_var = vy > 0 ? 1.0 - vr / vy : NAN;
    p->n = 0;
    if (st) *st = s;
    return 0;
}

int ppo_save(ppo *p, const char *path, hw_err *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return hw_fail(err, HW_E_IO, "cannot write %s", path);
    int rc = nnet_save(p->actor, f, err);
    if (!rc) rc = nnet_save(p->critic, f, err);
    if (!rc && p->head == PPO_GAUSS) {
        /* the log std as a 0-layer-like record: a 1-layer net 0 -> nd whose bias is log_std */
        int sizes[2] = {0, p->nd};
        nnet_mlp *ls = nnet_new(1, sizes, NNET_TANH);
        memcpy(ls->params + ls->boff[0], p->log_std, sizeof(double) * (size_t)p->nd);
        rc = nnet_save(ls, f, err);
        nnet_free(ls);
    }
    if (fclose(f) && !rc) rc = hw_fail(err, HW_E_IO, "cannot write %s", path);
    return rc;
}

int ppo_load(ppo *p, const char *path, hw_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return hw_fail(err, HW_E_IO, "cannot read %s", path);
    int rc = nnet_load(p->actor, f, err);
    if (!rc) rc = nnet_load(p->critic, f, err);
    if (!rc && p->head == PPO_GAUSS) {
        int sizes[2] = {0, p->nd};
        nnet_mlp *ls = nnet_new(1, sizes, NNET_TANH);
        rc = nnet_load(ls, f, err);
        if (!rc) memcpy(p->log_std, ls->params + ls->boff[0], sizeof(double) * (size_t)p->nd);
        nnet_free(ls);
    }
    fclose(f);
    if (rc) hw_err_prefix(err, path);
    return rc;
}
