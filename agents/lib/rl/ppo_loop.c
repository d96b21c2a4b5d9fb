/* ppo_loop.c - see ppo_loop.h. */
#include "ppo_loop.h"

#include "checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ag_rms *ag_rms_new(int n) {
    ag_rms *r = calloc(1, sizeof *r);
    r->n = n;
    r->count = 1e-4;
    r->mean = calloc((size_t)n + 1, sizeof(double));
    r->var = calloc((size_t)n + 1, sizeof(double));
    for (int i = 0; i < n; i++) r->var[i] = 1.0;
    return r;
}

void ag_rms_free(ag_rms *r) {
    if (!r) return;
    free(r->mean);
    free(r->var);
    free(r);
}

void ag_rms_update(ag_rms *r, const double *x) {
    /* parallel-variance update with a batch of one (gymnasium's RunningMeanStd) */
    double tot = r->count + 1.0;
    for (int i = 0; i < r->n; i++) {
        double d = x[i] - r->mean[i];
        double m = r->mean[i] + d / tot;
        double m2 = r->var[i] * r->count + d * d * r->count / tot;
        r->mean[i] = m;
        r->var[i] = m2 / tot;
    }
    r->count = tot;
}

void ag_rms_apply(const ag_rms *r, const double *x, double *y, double clip) {
    for (int i = 0; i < r->n; i++) {
        double v = (x[i] - r->mean[i]) / sqrt(r->var[i] + 1e-8);
        y[i] = v < -clip ? -clip : v > clip ? clip : v;
    }
}

ppo_train_opts ppo_train_opts_default(void) {
    ppo_train_opts o;
    memset(&o, 0, sizeof o);
    o.cfg = ppo_cfg_default();
    o.obs_norm = AG_OBS_NORM_DEFAULT;
    o.rew_norm = AG_REW_NORM_DEFAULT;
    return o;
}

/* run == NULL: restore from ctl->resume; else write a checkpoint (checkpoint.h). */
static int ppo_loop_ckpt(ag_ckpt_ctl *ctl, ag_run *run, ppo *p, gsl_rng *rng, ag_norm *nz, int64_t *steps,
                         int64_t *episode, double *returns, int *nret, ppo_stats *st, hw_err *err) {
    double sv[9] = {st->pg_loss, st->v_loss,   st->entropy, st->approx_kl, st->old_approx_kl,
                    st->clipfrac, st->explained_var, st->lr, st->grad_norm};
    int64_t cnt[4] = {*steps, *episode, *nret, st->epochs_run};
    if (run) {
        ag_ckpt *c = ag_ckpt_new();
        ppo_ckpt_put(c, "ppo", p);
        ag_ckpt_put_rng(c, "loop.rng", rng);
        ag_norm_ckpt_put(c, "loop.norm", nz);
        ag_ckpt_put_i64(c, "loop.counts", cnt, 4);
        ag_ckpt_put_f64(c, "loop.returns", returns, 10);
        ag_ckpt_put_f64(c, "loop.stats", sv, 9);
        int rc = ag_ckpt_commit(ctl, c, run, *steps, err);
        ag_ckpt_free(c);
        return rc;
    }
    const ag_ckpt *c = ctl->resume;
    if (ppo_ckpt_get(c, "ppo", p, err) || ag_ckpt_get_rng(c, "loop.rng", rng, err) ||
        ag_norm_ckpt_get(c, "loop.norm", nz, err) || ag_ckpt_get_i64(c, "loop.counts", cnt, 4, err) ||
        ag_ckpt_get_f64(c, "loop.returns", returns, 10, err) || ag_ckpt_get_f64(c, "loop.stats", sv, 9, err))
        return -1;
    *steps = cnt[0];
    *episode = cnt[1];
    *nret = (int)cnt[2];
    *st = (ppo_stats){sv[0], sv[1], sv[2], sv[3], sv[4], sv[5], sv[6], sv[7], sv[8], (int)cnt[3]};
    return 0;
}

int ppo_train(ag_sess *s, ag_run *run, const ppo_train_opts *o, uint64_t seed, int64_t budget, json_t **result,
              ppo **out_ppo, hw_err *err) {
    if (result) *result = NULL;
    if (out_ppo) *out_ppo = NULL;
    const hw_space *as = s->act_space;
    bool box = as->type == HW_SPACE_BOX;
    if (!box && !hw_space_is_integer(as))
        return hw_fail(err, HW_E_NOT_SUPPORTED, "ppo: action space %s is not supported", hw_space_type_name(as->type));
    int nd = (int)s->act_dim, od = (int)s->obs_dim;
    int64_t *nvec = calloc((size_t)nd + 1, sizeof(int64_t));
    if (!box) ag_sess_choices(s, nvec);
    int64_t offset = as->type == HW_SPACE_DISCRETE ? as->start : 0;
    ppo_cfg cfg = o->cfg;
    if (cfg.anneal_lr && cfg.num_updates <= 0) cfg.num_updates = (long)((budget + cfg.num_steps - 1) / cfg.num_steps);
    ppo *p = ppo_new(&cfg, od, box ? PPO_GAUSS : PPO_MCAT, nd, box ? NULL : nvec, seed);
    gsl_rng *rng = ag_rng_new(ag_rng_derive(seed, 7));
    ag_norm *nz = ag_norm_new(od, (ag_obs_norm_mode)o->obs_norm, (ag_rew_norm_mode)o->rew_norm, cfg.gamma);
    double *obs = calloc((size_t)od + 1, sizeof(double));
    int64_t *ai = calloc((size_t)nd + 1, sizeof(int64_t)), *ae = calloc((size_t)nd + 1, sizeof(int64_t));
    double *af = calloc((size_t)nd + 1, sizeof(double)), *afc = calloc((size_t)nd + 1, sizeof(double));
    /* the session frees s->mask at the next step: keep our own copy for ppo_store() */
    uint8_t *maskbuf = malloc((size_t)p->nlogits + 1);
    int rc = 0;
    int64_t steps = 0, episode = 0;
    double returns[10] = {0};
    int nret = 0;
    ppo_stats st;
    memset(&st, 0, sizeof st);
    if (o->ckpt && o->ckpt->resume && ppo_loop_ckpt(o->ckpt, NULL, p, rng, nz, &steps, &episode, returns, &nret, &st, err))
        rc = -1;
    while (steps < budget && !rc) {
        if (ag_ckpt_due(o->ckpt, steps) &&
            ppo_loop_ckpt(o->ckpt, run, p, rng, nz, &steps, &episode, returns, &nret, &st, err)) {
            rc = -1;
            break;
        }
        uint64_t rs = ag_rng_derive(seed, 1 + (uint64_t)episode) & ((1ULL << 53) - 1);
        if (ag_sess_reset(s, &rs, err)) {
            rc = -1;
            break;
        }
        ag_norm_obs(nz, s->obs, obs, true);
        double ret = 0;
        for (int64_t t = 0; steps < budget; t++) {
            const uint8_t *mask = NULL;
            if (!box && s->mask && s->mask_len == p->nlogits) {
                memcpy(maskbuf, s->mask, (size_t)p->nlogits);
                mask = maskbuf;
            }
            double logp, v;
            ppo_act(p, obs, mask, rng, ai, af, &logp, &v);
            int srv;
            json_t *aj;
            if (box) {
                for (int i = 0; i < nd; i++) {
                    double lo = as->low ? as->low[i] : -INFINITY, hi = as->high ? as->high[i] : INFINITY;
                    afc[i] = af[i] < lo ? lo : af[i] > hi ? hi : af[i];
                }
                srv = ag_sess_step_f64(s, afc, err);
                aj = ag_json_f64(afc, nd);
            } else {
                for (int i = 0; i < nd; i++) ae[i] = ai[i] + offset;
                srv = ag_sess_step_i64(s, ae, err);
                aj = ag_json_i64(ae, nd);
            }
            if (srv) {
                json_decref(aj);
                rc = -1;
                break;
            }
            steps++;
            bool done = s->terminated || s->truncated;
            double r = s->reward;
            ret += r;
            if (run) {
                json_t *oj = ag_json_f64(s->obs, od);
                if (ag_run_step(run, o->worker, episode, t, (int64_t)rs, aj, oj, r, s->terminated, s->truncated, s->info, err))
                    rc = -1;
                json_decref(oj);
            }
            json_decref(aj);
            int full = ppo_store(p, obs, mask, ai, af, logp, v, ag_norm_reward(nz, r, done), done);
            ag_norm_obs(nz, s->obs, obs, true);
            if (full || steps >= budget) ppo_update(p, obs, &st);
            if (rc || done) break;
        }
        if (!rc) {
            returns[nret % 10] = ret;
            nret++;
        }
        episode++;
    }
    if (!rc && o->save_path && ppo_save(p, o->save_path, err)) rc = -1;
    if (result) {
        double m = 0;
        int k = nret < 10 ? nret : 10;
        for (int i = 0; i < k; i++) m += returns[i];
        json_t *j = json_object();
        json_object_set_new(j, "updates", json_integer(p->updates));
        json_object_set_new(j, "episodes", json_integer(episode));
        json_object_set_new(j, "mean_return_last10", k ? json_real(m / k) : json_null());
        json_object_set_new(j, "final", json_pack("{s:f,s:f,s:f,s:f,s:f}", "pg_loss", st.pg_loss, "v_loss", st.v_loss,
                                                  "entropy", st.entropy, "approx_kl", st.approx_kl, "lr", st.lr));
        *result = j;
    }
    if (out_ppo) *out_ppo = p;
    else ppo_free(p);
    gsl_rng_free(rng);
    ag_norm_free(nz);
    free(obs);
    free(ai);
    free(ae);
    free(af);
    free(afc);
    free(maskbuf);
    free(nvec);
    return rc;
}
