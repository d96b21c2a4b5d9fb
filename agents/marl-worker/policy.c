/* policy.c - random and PPO policies of a MARL worker (policy.h). */
#include "policy.h"

#include "checkpoint.h"
#include "ag_norm.h"
#include "ppo.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct lin_cfg {
    double lr, clip, ent_coef, vf_coef, gamma, lambda, max_grad_norm;
    int rollout, epochs, minibatch;
    bool anneal;
} lin_cfg;

struct marl_policy {
    bool random;
    ppo *mlp;            /* "ppo": agents/lib PPO (MLP actor/critic); NULL for "ppo-linear" */
    bool mlp_full;       /* the MLP's rollout is full: update at the next act() */
    int hidden;
    int D, O, F; /* dims, obs dim, features (O + 1 bias) */
    int64_t *nvec;
    int64_t total_steps, steps_done;
    int A;        /* sum of nvec */
    int *off;     /* logits offset per dim */
    gsl_rng *rng;
    lin_cfg c;
    /* parameters: policy W [A x F], value u [F]; Adam moments */
    int P;
    double *theta, *m, *v;
    int t_adam, updates;
    /* observation and reward normalisation (agents/lib/nn/ag_norm.h, shared with hwgym-ppo) */
    ag_norm *nz;
    int obs_norm, rew_norm;
    /* rollout */
    int n;
    double *X;      /* rollout x F features */
    int64_t *acts;  /* rollout x D */
    double *logp, *val, *rew;
    bool *done;
    /* scratch */
    double *x, *logits, *probs, *grad;
};

static const char *cfg_keys[] = {"hidden", "lr",    "rollout", "epochs",        "minibatch", "clip",     "ent_coef",
                                 "vf_coef", "gamma", "lambda", "max_grad_norm", "anneal",    "obs_norm", "reward_norm",
                                 NULL};

static int get_num(const json_t *cfg, const char *k, double *out, double lo, double hi, hw_err *err) {
    const json_t *v = json_object_get(cfg, k);
    if (!v) return 0;
    if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi)
        return hw_fail(err, HW_E_BAD_CONFIG, "policy_config.%s: expected a number in [%g, %g]", k, lo, hi);
    *out = json_number_value(v);
    return 0;
}

marl_policy *marl_policy_new(const char *kind, int ndims, const int64_t *nvec, int obs_dim, uint64_t seed,
                             const json_t *cfg, int64_t total_steps, hw_err *err) {
    bool random = !strcmp(kind, "random"), linear = !strcmp(kind, "ppo-linear");
    if (!random && !linear && strcmp(kind, "ppo")) {
        hw_fail(err, HW_E_BAD_CONFIG, "--policy: '%s' is not random, ppo or ppo-linear", kind);
        return NULL;
    }
    if (ndims <= 0 || obs_dim < 0) {
        hw_fail(err, HW_E_BAD_CONFIG, "policy: %d action dims", ndims);
        return NULL;
    }
    lin_cfg c = {.lr = 0.03, .clip = 0.2, .ent_coef = 0.01, .vf_coef = 0.5, .gamma = 0.99, .lambda = 0.95,
                 .max_grad_norm = 0.5, .rollout = 128, .epochs = 4, .minibatch = 32, .anneal = true};
    int hidden = 64, obs_norm = AG_OBS_NORM_DEFAULT, rew_norm = AG_REW_NORM_DEFAULT;
    if (!linear) c.lr = 2.5e-3;
    if (cfg) {
        if (!json_is_object(cfg)) {
            hw_fail(err, HW_E_BAD_CONFIG, "policy_config: expected an object");
            return NULL;
        }
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)cfg, k, v) {
            bool ok = false;
            for (int i = 0; cfg_keys[i]; i++) ok |= !strcmp(k, cfg_keys[i]);
            if (!ok) {
                hw_fail(err, HW_E_BAD_CONFIG, "policy_config.%s: unknown key", k);
                return NULL;
            }
        }
        double r = c.rollout, e = c.epochs, mb = c.minibatch, hd = 64;
        if (get_num(cfg, "lr", &c.lr, 0, 10, err) || get_num(cfg, "clip", &c.clip, 0, 10, err) ||
            get_num(cfg, "ent_coef", &c.ent_coef, 0, 10, err) || get_num(cfg, "vf_coef", &c.vf_coef, 0, 100, err) ||
            get_num(cfg, "gamma", &c.gamma, 0, 1, err) || get_num(cfg, "lambda", &c.lambda, 0, 1, err) ||
            get_num(cfg, "max_grad_norm", &c.max_grad_norm, 0, 1e9, err) ||
            get_num(cfg, "rollout", &r, 1, 1 << 20, err) || get_num(cfg, "epochs", &e, 1, 1000, err) ||
            get_num(cfg, "minibatch", &mb, 1, 1 << 20, err) || get_num(cfg, "hidden", &hd, 1, 4096, err))
            return NULL;
        hidden = (int)hd;
        c.rollout = (int)r;
        c.epochs = (int)e;
        c.minibatch = (int)mb;
        const json_t *on = json_object_get(cfg, "obs_norm"), *rn = json_object_get(cfg, "reward_norm");
        if ((on && !json_is_string(on)) || (rn && !json_is_string(rn))) {
            hw_fail(err, HW_E_BAD_CONFIG, "policy_config.%s: expected a string", on && !json_is_string(on) ? "obs_norm" : "reward_norm");
            return NULL;
        }
        if (ag_norm_parse(json_string_value(on), ag_obs_norm_names, "policy_config.obs_norm", &obs_norm, err) ||
            ag_norm_parse(json_string_value(rn), ag_rew_norm_names, "policy_config.reward_norm", &rew_norm, err))
            return NULL;
        const json_t *an = json_object_get(cfg, "anneal");
        if (an) {
            if (!json_is_boolean(an)) {
                hw_fail(err, HW_E_BAD_CONFIG, "policy_config.anneal: expected true or false");
                return NULL;
            }
            c.anneal = json_is_true(an);
        }
    }
    marl_policy *p = calloc(1, sizeof *p);
    p->random = random;
    p->c = c;
    p->D = ndims;
    p->O = obs_dim;
    p->F = obs_dim + 1;
    p->total_steps = total_steps > 0 ? total_steps : 1;
    p->nvec = malloc((size_t)ndims * sizeof *p->nvec);
    memcpy(p->nvec, nvec, (size_t)ndims * sizeof *nvec);
    p->off = malloc((size_t)(ndims + 1) * sizeof *p->off);
    p->A = 0;
    for (int d = 0; d < ndims; d++) {
        p->off[d] = p->A;
        p->A += (int)nvec[d];
    }
    p->off[ndims] = p->A;
    p->rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(p->rng, (unsigned long)seed);
    if (random) return p;
    p->P = p->A * p->F + p->F;
    p->theta = calloc((size_t)p->P, sizeof(double));
    p->m = calloc((size_t)p->P, sizeof(double));
    p->v = calloc((size_t)p->P, sizeof(double));
    /* small random policy weights (biases zero: uniform start), zero value weights */
    for (int a = 0; a < p->A; a++)
        for (int f = 0; f < p->O; f++) p->theta[a * p->F + f] = gsl_ran_gaussian(p->rng, 0.01);
    p->nz = ag_norm_new(p->O, (ag_obs_norm_mode)obs_norm, (ag_rew_norm_mode)rew_norm, c.gamma);
    p->hidden = hidden;
    if (!linear) {
        ppo_cfg pc = ppo_cfg_default();
        pc.num_steps = c.rollout;
        pc.minibatch_size = c.minibatch;
        pc.update_epochs = c.epochs;
        pc.hidden = hidden;
        pc.lr = c.lr;
        pc.gamma = c.gamma;
        pc.gae_lambda = c.lambda;
        pc.clip_coef = c.clip;
        pc.ent_coef = c.ent_coef;
        pc.vf_coef = c.vf_coef;
        pc.max_grad_norm = c.max_grad_norm;
        pc.anneal_lr = c.anneal;
        pc.num_updates = (long)((p->total_steps + c.rollout - 1) / c.rollout);
        p->mlp = ppo_new(&pc, p->O > 0 ? p->O : 1, PPO_MCAT, ndims, nvec, seed ^ 0x5DEECE66DULL);
        if (!p->mlp) {
            hw_fail(err, HW_E_INTERNAL, "policy: cannot create the PPO networks");
            marl_policy_free(p);
            return NULL;
        }
    }
    int R = c.rollout;
    p->X = malloc((size_t)R * p->F * sizeof(double));
    p->acts = malloc((size_t)R * ndims * sizeof(int64_t));
    p->logp = malloc((size_t)R * sizeof(double));
    p->val = malloc((size_t)R * sizeof(double));
    p->rew = malloc((size_t)R * sizeof(double));
    p->done = malloc((size_t)R * sizeof(bool));
    p->x = malloc((size_t)p->F * sizeof(double));
    p->logits = malloc((size_t)p->A * sizeof(double));
    p->probs = malloc((size_t)p->A * sizeof(double));
    p->grad = malloc((size_t)p->P * sizeof(double));
    return p;
}

void marl_policy_free(marl_policy *p) {
    if (!p) return;
    if (p->mlp) ppo_free(p->mlp);
    free(p->nvec);
    free(p->off);
    gsl_rng_free(p->rng);
    free(p->theta);
    free(p->m);
    free(p->v);
    ag_norm_free(p->nz);
    free(p->X);
    free(p->acts);
    free(p->logp);
    free(p->val);
    free(p->rew);
    free(p->done);
    free(p->x);
    free(p->logits);
    free(p->probs);
    free(p->grad);
    free(p);
}

int marl_policy_updates(const marl_policy *p) { return p->mlp ? (int)p->mlp->updates : p->updates; }

/* features: the normalised observation (ag_norm.h; default log-compressed, running) + bias */
static void features(marl_policy *p, const double *obs, bool update_stats) {
    ag_norm_obs(p->nz, obs, p->x, update_stats);
    p->x[p->O] = 1.0;
}

static void forward(const marl_policy *p, const double *x, double *logits, double *probs) {
    for (int a = 0; a < p->A; a++) {
        double s = 0;
        const double *w = p->theta + (size_t)a * p->F;
        for (int f = 0; f < p->F; f++) s += w[f] * x[f];
        logits[a] = s;
    }
    for (int d = 0; d < p->D; d++) {
        int o = p->off[d], k = (int)p->nvec[d];
        double mx = -INFINITY;
        for (int i = 0; i < k; i++) mx = fmax(mx, logits[o + i]);
        double z = 0;
        for (int i = 0; i < k; i++) z += (probs[o + i] = exp(logits[o + i] - mx));
        for (int i = 0; i < k; i++) probs[o + i] /= z;
    }
}

static double value(const marl_policy *p, const double *x) {
    const double *u = p->theta + (size_t)p->A * p->F;
    double s = 0;
    for (int f = 0; f < p->F; f++) s += u[f] * x[f];
    return s;
}

static double logprob(const marl_policy *p, const double *probs, const int64_t *a) {
    double lp = 0;
    for (int d = 0; d < p->D; d++) lp += log(fmax(probs[p->off[d] + a[d]], 1e-300));
    return lp;
}

static void update(marl_policy *p, double last_value) {
    const lin_cfg *c = &p->c;
    int R = p->n;
    double *adv = malloc((size_t)R * sizeof(double)), *ret = malloc((size_t)R * sizeof(double));
    int *idx = malloc((size_t)R * sizeof(int));
    double gae = 0;
    for (int t = R - 1; t >= 0; t--) {
        double nv = t == R - 1 ? last_value : p->val[t + 1];
        double nonterm = p->done[t] ? 0.0 : 1.0;
        double delta = p->rew[t] + c->gamma * nv * nonterm - p->val[t];
        gae = delta + c->gamma * c->lambda * nonterm * gae;
        adv[t] = gae;
        ret[t] = gae + p->val[t];
    }
    double frac = c->anneal ? 1.0 - (double)p->steps_done / (double)p->total_steps : 1.0;
    double lr = c->lr * (frac > 0.05 ? frac : 0.05);
    for (int i = 0; i < R; i++) idx[i] = i;
    const double *u = NULL;
    (void)u;
    for (int ep = 0; ep < c->epochs; ep++) {
        for (int i = R - 1; i > 0; i--) { /* Fisher-Yates with the policy's RNG */
            int j = (int)gsl_rng_uniform_int(p->rng, (unsigned long)(i + 1));
            int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        for (int s0 = 0; s0 < R; s0 += c->minibatch) {
            int mb = R - s0 < c->minibatch ? R - s0 : c->minibatch;
            double am = 0, as = 0;
            for (int k = 0; k < mb; k++) am += adv[idx[s0 + k]];
            am /= mb;
            for (int k = 0; k < mb; k++) as += (adv[idx[s0 + k]] - am) * (adv[idx[s0 + k]] - am);
            as = mb > 1 ? sqrt(as / (mb - 1)) : 1.0;
            memset(p->grad, 0, (size_t)p->P * sizeof(double));
            double *gu = p->grad + (size_t)p->A * p->F;
            for (int k = 0; k < mb; k++) {
                int t = idx[s0 + k];
                const double *x = p->X + (size_t)t * p->F;
                const int64_t *a = p->acts + (size_t)t * p->D;
                forward(p, x, p->logits, p->probs);
                double lp = logprob(p, p->probs, a);
                double A = (adv[t] - am) / (as + 1e-8);
                double ratio = exp(lp - p->logp[t]);
                bool active = (A >= 0 && ratio <= 1 + c->clip) || (A < 0 && ratio >= 1 - c->clip);
                double dlp = active ? -ratio * A / mb : 0.0; /* d loss / d logp */
                for (int d = 0; d < p->D; d++) {
                    int o = p->off[d], n = (int)p->nvec[d];
                    double H = 0;
                    for (int i = 0; i < n; i++) H -= p->probs[o + i] * log(fmax(p->probs[o + i], 1e-300));
                    for (int i = 0; i < n; i++) {
                        double pi = p->probs[o + i];
                        double g = dlp * ((i == a[d]) - pi);
                        /* -ent_coef * dH/dz, dH/dz_i = -p_i (log p_i + H) */
                        g += c->ent_coef * pi * (log(fmax(pi, 1e-300)) + H) / mb;
                        if (g == 0) continue;
                        double *w = p->grad + (size_t)(o + i) * p->F;
                        for (int f = 0; f < p->F; f++) w[f] += g * x[f];
                    }
                }
                /* clipped value loss (CleanRL): 0.5 max((v-R)^2, (v_clip-R)^2) */
                double v = value(p, x), vold = p->val[t];
                double vc = vold + fmax(-c->clip, fmin(c->clip, v - vold));
                double l1 = (v - ret[t]) * (v - ret[t]), l2 = (vc - ret[t]) * (vc - ret[t]);
                double dv = l1 >= l2 ? (v - ret[t]) : ((fabs(v - vold) < c->clip) ? (vc - ret[t]) : 0.0);
                dv *= c->vf_coef / mb;
                for (int f = 0; f < p->F; f++) gu[f] += dv * x[f];
            }
            double norm = 0;
            for (int i = 0; i < p->P; i++) norm += p->grad[i] * p->grad[i];
            norm = sqrt(norm);
            double scale = norm > c->max_grad_norm ? c->max_grad_norm / norm : 1.0;
            p->t_adam++;
            double b1 = 0.9, b2 = 0.999, eps = 1e-5;
            double bc1 = 1 - pow(b1, p->t_adam), bc2 = 1 - pow(b2, p->t_adam);
            for (int i = 0; i < p->P; i++) {
                double g = p->grad[i] * scale;
                p->m[i] = b1 * p->m[i] + (1 - b1) * g;
                p->v[i] = b2 * p->v[i] + (1 - b2) * g * g;
                p->theta[i] -= lr * (p->m[i] / bc1) / (sqrt(p->v[i] / bc2) + eps);
            }
        }
    }
    p->updates++;
    p->n = 0;
    free(adv);
    free(ret);
    free(idx);
}

void marl_policy_act(marl_policy *p, const double *obs, int64_t *action) {
    if (p->random) {
        for (int d = 0; d < p->D; d++) action[d] = (int64_t)gsl_rng_uniform_int(p->rng, (unsigned long)p->nvec[d]);
        return;
    }
    features(p, obs, true);
    if (p->mlp) {
        if (p->mlp_full) {
            ppo_stats st;
            ppo_update(p->mlp, p->x, &st);
            p->mlp_full = false;
        }
        double lp, v;
        ppo_act(p->mlp, p->x, NULL, p->rng, action, NULL, &lp, &v);
        memcpy(p->X, p->x, (size_t)p->F * sizeof(double));
        memcpy(p->acts, action, (size_t)p->D * sizeof(int64_t));
        p->logp[0] = lp;
        p->val[0] = v;
        return;
    }
    if (p->n == p->c.rollout) update(p, value(p, p->x));
    forward(p, p->x, p->logits, p->probs);
    for (int d = 0; d < p->D; d++) {
        double u = gsl_rng_uniform(p->rng), acc = 0;
        int o = p->off[d], n = (int)p->nvec[d], pick = n - 1;
        for (int i = 0; i < n; i++) {
            acc += p->probs[o + i];
            if (u < acc) {
                pick = i;
                break;
            }
        }
        action[d] = pick;
    }
    int t = p->n;
    memcpy(p->X + (size_t)t * p->F, p->x, (size_t)p->F * sizeof(double));
    memcpy(p->acts + (size_t)t * p->D, action, (size_t)p->D * sizeof(int64_t));
    p->logp[t] = logprob(p, p->probs, action);
    p->val[t] = value(p, p->x);
}

void marl_policy_observe(marl_policy *p, double reward, bool done) {
    p->steps_done++;
    if (p->random) return;
    /* reward scaling (ag_norm.h; default: by the running std of the discounted return) */
    double sr = ag_norm_reward(p->nz, reward, done);
    if (p->mlp) {
        if (ppo_store(p->mlp, p->X, NULL, p->acts, NULL, p->logp[0], p->val[0], sr, done)) p->mlp_full = true;
        return;
    }
    int t = p->n;
    p->rew[t] = sr;
    p->done[t] = done;
    p->n++;
}

/* ---------------------------------------------------------------- checkpoints (checkpoint.h) */
void marl_policy_ckpt_put(const marl_policy *p, ag_ckpt *c) {
    ag_ckpt_put_rng(c, "policy.rng", p->rng);
    int64_t cnt[5] = {p->steps_done, p->t_adam, p->updates, p->n, p->mlp_full};
    ag_ckpt_put_i64(c, "policy.counts", cnt, 5);
    if (p->random) return;
    ag_norm_ckpt_put(c, "policy.norm", p->nz);
    if (p->mlp) {
        ppo_ckpt_put(c, "policy.ppo", p->mlp);
        /* the pending transition (act() fills row 0, observe() stores it) */
        ag_ckpt_put_f64(c, "policy.x0", p->X, (size_t)p->F);
        ag_ckpt_put_i64(c, "policy.a0", p->acts, (size_t)p->D);
        double lv[2] = {p->logp[0], p->val[0]};
        ag_ckpt_put_f64(c, "policy.lv0", lv, 2);
        return;
    }
    size_t n = (size_t)p->n;
    ag_ckpt_put_f64(c, "policy.theta", p->theta, (size_t)p->P);
    ag_ckpt_put_f64(c, "policy.adam_m", p->m, (size_t)p->P);
    ag_ckpt_put_f64(c, "policy.adam_v", p->v, (size_t)p->P);
    ag_ckpt_put_f64(c, "policy.X", p->X, n * (size_t)p->F);
    ag_ckpt_put_i64(c, "policy.acts", p->acts, n * (size_t)p->D);
    ag_ckpt_put_f64(c, "policy.logp", p->logp, n);
    ag_ckpt_put_f64(c, "policy.val", p->val, n);
    ag_ckpt_put_f64(c, "policy.rew", p->rew, n);
    uint8_t *d = malloc(n + 1);
    for (size_t i = 0; i < n; i++) d[i] = p->done[i];
    ag_ckpt_put_u8(c, "policy.done", d, n);
    free(d);
}

int marl_policy_ckpt_get(marl_policy *p, const ag_ckpt *c, hw_err *err) {
    int64_t cnt[5];
    if (ag_ckpt_get_rng(c, "policy.rng", p->rng, err) || ag_ckpt_get_i64(c, "policy.counts", cnt, 5, err)) return -1;
    p->steps_done = cnt[0];
    p->t_adam = (int)cnt[1];
    p->updates = (int)cnt[2];
    p->mlp_full = cnt[4] != 0;
    if (p->random) return 0;
    if (cnt[3] < 0 || cnt[3] > p->c.rollout)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: rollout of %lld steps, the policy's is %d", (long long)cnt[3],
                       p->c.rollout);
    p->n = (int)cnt[3];
    if (ag_norm_ckpt_get(c, "policy.norm", p->nz, err)) return -1;
    if (p->mlp) {
        double lv[2];
        if (ppo_ckpt_get(c, "policy.ppo", p->mlp, err) || ag_ckpt_get_f64(c, "policy.x0", p->X, (size_t)p->F, err) ||
            ag_ckpt_get_i64(c, "policy.a0", p->acts, (size_t)p->D, err) || ag_ckpt_get_f64(c, "policy.lv0", lv, 2, err))
            return -1;
        p->logp[0] = lv[0];
        p->val[0] = lv[1];
        return 0;
    }
    size_t n = (size_t)p->n;
    uint8_t *d = malloc(n + 1);
    int rc = 0;
    if (ag_ckpt_get_f64(c, "policy.theta", p->theta, (size_t)p->P, err) ||
        ag_ckpt_get_f64(c, "policy.adam_m", p->m, (size_t)p->P, err) ||
        ag_ckpt_get_f64(c, "policy.adam_v", p->v, (size_t)p->P, err) ||
        ag_ckpt_get_f64(c, "policy.X", p->X, n * (size_t)p->F, err) ||
        ag_ckpt_get_i64(c, "policy.acts", p->acts, n * (size_t)p->D, err) ||
        ag_ckpt_get_f64(c, "policy.logp", p->logp, n, err) || ag_ckpt_get_f64(c, "policy.val", p->val, n, err) ||
        ag_ckpt_get_f64(c, "policy.rew", p->rew, n, err) || ag_ckpt_get_u8(c, "policy.done", d, n, err))
        rc = -1;
    for (size_t i = 0; !rc && i < n; i++) p->done[i] = d[i] != 0;
    free(d);
    return rc;
}
