/* hwgym-sac - Soft Actor-Critic for discrete (Discrete/MultiDiscrete/MultiBinary) actions:
 * per-dimension categorical policy, twin soft Q heads with soft target updates, automatic
 * temperature towards 0.89 log(n) per dimension, a uniform replay buffer (sac.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "heads.h"
#include "ppo_loop.h"
#include "replay.h"
#include "sac.h"

/* The loop's state besides the learner's (checkpoint.h). */
typedef struct sac_loop {
    int64_t steps, episode, updates;
    sac_stats st;
} sac_loop;

/* run == NULL: restore everything from ctl->resume; else write a checkpoint. Taken before an
 * episode's reset, so no env state is in flight. */
static int sac_ckpt(ag_ckpt_ctl *ctl, ag_run *run, sac *sa, ag_replay *rb, ag_rms *rms, gsl_rng *rng, gsl_rng *srng,
                    sac_loop *L, hw_err *err) {
    int64_t cnt[3] = {L->steps, L->episode, L->updates};
    double sv[5] = {L->st.q_loss, L->st.pi_loss, L->st.alpha_loss, L->st.alpha_mean, L->st.entropy};
    if (run) {
        ag_ckpt *c = ag_ckpt_new();
        sac_ckpt_put(c, "sac", sa);
        ag_replay_ckpt_put(c, "replay", rb);
        if (rms) ag_rms_ckpt_put(c, "obs_rms", rms);
        ag_ckpt_put_rng(c, "loop.rng", rng);
        ag_ckpt_put_rng(c, "loop.sample_rng", srng);
        ag_ckpt_put_i64(c, "loop.counts", cnt, 3);
        ag_ckpt_put_f64(c, "loop.stats", sv, 5);
        int rc = ag_ckpt_commit(ctl, c, run, L->steps, err);
        ag_ckpt_free(c);
        return rc;
    }
    const ag_ckpt *c = ctl->resume;
    if (sac_ckpt_get(c, "sac", sa, err) || ag_replay_ckpt_get(c, "replay", rb, err) ||
        (rms && ag_rms_ckpt_get(c, "obs_rms", rms, err)) || ag_ckpt_get_rng(c, "loop.rng", rng, err) ||
        ag_ckpt_get_rng(c, "loop.sample_rng", srng, err) || ag_ckpt_get_i64(c, "loop.counts", cnt, 3, err) ||
        ag_ckpt_get_f64(c, "loop.stats", sv, 5, err))
        return -1;
    L->steps = cnt[0];
    L->episode = cnt[1];
    L->updates = cnt[2];
    L->st = (sac_stats){sv[0], sv[1], sv[2], sv[3], sv[4]};
    return 0;
}

static void norm_cb(void *ctx, double *x) {
    ag_rms *r = ctx;
    double tmp[512];
    double *t = r->n <= 512 ? tmp : malloc(sizeof(double) * (size_t)r->n);
    ag_rms_apply(r, x, t, 10.0);
    memcpy(x, t, sizeof(double) * (size_t)r->n);
    if (t != tmp) free(t);
}

int main(int argc, char **argv) {
    sac_cfg c = sac_cfg_default();
    int64_t hidden = c.hidden, batch = c.batch, buffer = 100000, starts = 256, every = 1;
    double plr = c.policy_lr, qlr = c.q_lr, gamma = c.gamma, tau = c.tau, tes = c.target_entropy_scale, alpha = c.alpha,
           rscale = 1.0;
    bool no_autotune = false, no_norm_obs = false;
    const char *worker = NULL;
    ag_optdef extra[] = {{"hidden", AG_OPT_INT, &hidden, "units per hidden layer, 2 ReLU layers (64)"},
                         {"batch", AG_OPT_INT, &batch, "minibatch size (64)"},
                         {"buffer", AG_OPT_INT, &buffer, "replay buffer capacity (100000)"},
                         {"learning-starts", AG_OPT_INT, &starts, "random actions for this many steps first (256)"},
                         {"update-every", AG_OPT_INT, &every, "one gradient step every N env steps (1)"},
                         {"policy-lr", AG_OPT_DOUBLE, &plr, "actor learning rate (3e-4)"},
                         {"q-lr", AG_OPT_DOUBLE, &qlr, "critic and temperature learning rate (3e-4)"},
                         {"gamma", AG_OPT_DOUBLE, &gamma, "discount (0.99)"},
                         {"tau", AG_OPT_DOUBLE, &tau, "soft target update rate (0.005)"},
                         {"target-entropy-scale", AG_OPT_DOUBLE, &tes, "target entropy = scale * log(n) (0.89)"},
                         {"alpha", AG_OPT_DOUBLE, &alpha, "initial (or fixed) temperature (0.2)"},
                         {"no-autotune", AG_OPT_FLAG, &no_autotune, "keep alpha fixed"},
                         {"reward-scale", AG_OPT_DOUBLE, &rscale, "multiply rewards by this before learning (1)"},
                         {"no-norm-obs", AG_OPT_FLAG, &no_norm_obs, "do not normalise observations"},
                         {"worker", AG_OPT_STRING, &worker, "worker label of the logged trials"},
                         {NULL, 0, NULL, NULL}};
    ag_opts o;
    int code;
    if (ag_parse_args(argc, argv, "hwgym-sac", "Discrete SAC (twin Q, automatic temperature). --budget counts env steps.",
                      extra, &o, &code))
        return code;
    if (!o.env) {
        fprintf(stderr, "hwgym-sac: --env is required\n");
        ag_opts_free(&o);
        return 2;
    }
    c.hidden = (int)hidden;
    c.batch = (int)batch;
    c.policy_lr = plr;
    c.q_lr = qlr;
    c.gamma = gamma;
    c.tau = tau;
    c.target_entropy_scale = tes;
    c.alpha = alpha;
    c.autotune = !no_autotune;
    hw_err err = {0};
    int rc = 1, lrc = 0;
    json_t *acfg = ag_opts_to_json(&o, extra), *res = json_object();
    ag_run *run = NULL;
    sac *sa = NULL;
    ag_replay *rb = NULL;
    ag_rms *rms = NULL;
    gsl_rng *rng = ag_rng_new(ag_rng_derive(o.seed, 7)), *srng = ag_rng_new(ag_rng_derive(o.seed, 8));
    int64_t *nvec = NULL, *a = NULL, *ae = NULL;
    double *x = NULL, *prev = NULL;
    uint8_t *mbuf = NULL;
    double *zeros = NULL;
    ag_ckpt_ctl ctl = {0};
    ag_sess *s = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);
    if (!s) goto out;
    if (!hw_space_is_integer(s->act_space)) {
        hw_fail(&err, HW_E_NOT_SUPPORTED, "hwgym-sac needs a discrete action space, %s has %s", o.env,
                hw_space_type_name(s->act_space->type));
        goto out;
    }
    int nd = (int)s->act_dim, od = (int)s->obs_dim;
    int64_t offset = s->act_space->type == HW_SPACE_DISCRETE ? s->act_space->start : 0;
    nvec = calloc((size_t)nd, sizeof(int64_t));
    ag_sess_choices(s, nvec);
    int L = 0;
    for (int d = 0; d < nd; d++) L += (int)nvec[d];
    sa = sac_new(&c, od, nd, nvec, o.seed);
    rb = ag_replay_new(buffer, od, nd, L);
    rms = no_norm_obs ? NULL : ag_rms_new(od);
    a = calloc((size_t)nd, sizeof(int64_t));
    ae = calloc((size_t)nd, sizeof(int64_t));
    x = calloc((size_t)od + 1, sizeof(double));
    prev = calloc((size_t)od + 1, sizeof(double));
    mbuf = malloc((size_t)L);
    zeros = calloc((size_t)L, sizeof(double));
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    run = ag_run_resume(&o, "hwgym-sac", acfg, ctl.resume, worker ? worker : "0", &err);
    if (!run) goto out;
    sac_loop lp;
    memset(&lp, 0, sizeof lp);
    if (ctl.resume && sac_ckpt(&ctl, NULL, sa, rb, rms, rng, srng, &lp, &err)) lrc = -1;
    while (lp.steps < o.budget && !lrc) {
        if (ag_ckpt_due(&ctl, lp.steps) && sac_ckpt(&ctl, run, sa, rb, rms, rng, srng, &lp, &err)) {
            lrc = -1;
            break;
        }
        int64_t episode = lp.episode;
        uint64_t rs = ag_rng_derive(o.seed, 1 + (uint64_t)episode) & ((1ULL << 53) - 1);
        if (ag_sess_reset(s, &rs, &err)) {
            lrc = -1;
            break;
        }
        if (rms) ag_rms_update(rms, s->obs);
        for (int64_t t = 0; lp.steps < o.budget; t++) {
            const uint8_t *mask = s->mask && s->mask_len == L ? s->mask : NULL;
            memcpy(prev, s->obs, sizeof(double) * (size_t)od);
            if (lp.steps < starts) {
                mcat_sample(nd, nvec, zeros, mask, rng, a); /* uniform over the allowed choices */
            } else {
                memcpy(x, s->obs, sizeof(double) * (size_t)od);
                if (rms) norm_cb(rms, x);
                sac_act(sa, x, mask, rng, a);
            }
            for (int d = 0; d < nd; d++) ae[d] = a[d] + offset;
            if (ag_sess_step_i64(s, ae, &err)) {
                lrc = -1;
                break;
            }
            lp.steps++;
            json_t *aj = ag_json_i64(ae, nd), *oj = ag_json_f64(s->obs, od);
            if (ag_run_step(run, worker, episode, t, (int64_t)rs, aj, oj, s->reward, s->terminated, s->truncated, s->info,
                            &err))
                lrc = -1;
            json_decref(aj);
            json_decref(oj);
            const uint8_t *nm = s->mask && s->mask_len == L ? s->mask : NULL;
            if (nm) memcpy(mbuf, nm, (size_t)L);
            ag_replay_add(rb, prev, a, rscale * (isfinite(s->reward) ? s->reward : 0), s->terminated, s->obs,
                          nm ? mbuf : NULL);
            if (rms) ag_rms_update(rms, s->obs);
            if (lp.steps >= starts && rb->size >= c.batch && lp.steps % (every > 0 ? every : 1) == 0) {
                sac_update(sa, rb, srng, rms ? norm_cb : NULL, rms, &lp.st);
                lp.updates++;
            }
            if (lrc || s->terminated || s->truncated) break;
        }
        lp.episode++;
    }
    json_object_set_new(res, "updates", json_integer(lp.updates));
    json_object_set_new(res, "episodes", json_integer(lp.episode));
    json_object_set_new(res, "final", json_pack("{s:f,s:f,s:f,s:f}", "q_loss", lp.st.q_loss, "pi_loss", lp.st.pi_loss,
                                                "alpha", lp.st.alpha_mean, "entropy", lp.st.entropy));
    rc = ag_run_finish(&run, res, lrc != 0, &err, "hwgym-sac");
    err.msg[0] = 0; /* printed */
out:
    if (rc && err.msg[0]) fprintf(stderr, "hwgym-sac: %s: %s\n", hw_code_name(err.code), err.msg);
    json_decref(res);
    json_decref(acfg);
    sac_free(sa);
    ag_replay_free(rb);
    ag_rms_free(rms);
    gsl_rng_free(rng);
    gsl_rng_free(srng);
    free(nvec);
    free(a);
    free(ae);
    free(x);
    free(prev);
    free(mbuf);
    free(zeros);
    ag_ckpt_ctl_free(&ctl);
    ag_sess_free(s);
    ag_opts_free(&o);
    return rc;
}
