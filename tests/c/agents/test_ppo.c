/* test_ppo.c - GAE by hand, PPO learning diag-v0 in-process, save/load of a trained agent. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_common.h"
#include "ppo.h"
#include "ppo_loop.h"

Test(ppo, gae_by_hand_three_steps) {
    double r[3] = {1, 0, 2}, v[3] = {0.5, 0.4, 0.3}, d[3] = {0, 1, 0}, adv[3], ret[3];
    ppo_gae(3, r, v, d, 0.6, 0.9, 0.8, adv, ret);
    /* t2: 2 + .9*.6 - .3 = 2.24; t1 ends its episode: -0.4; t0: 1 + .9*.4 - .5 + .9*.8*(-0.4) = 0.572 */
    cr_assert_float_eq(adv[2], 2.24, 1e-12);
    cr_assert_float_eq(adv[1], -0.4, 1e-12);
    cr_assert_float_eq(adv[0], 0.572, 1e-12);
    cr_assert_float_eq(ret[0], 1.072, 1e-12);
    cr_assert_float_eq(ret[1], 0.0, 1e-12);
    cr_assert_float_eq(ret[2], 2.54, 1e-12);
    /* lambda 1, gamma 1, no done: advantages are returns-to-go minus values */
    double d0[3] = {0, 0, 0};
    ppo_gae(3, r, v, d0, 0.6, 1.0, 1.0, adv, ret);
    cr_assert_float_eq(ret[0], 1 + 0 + 2 + 0.6, 1e-12);
    cr_assert_float_eq(ret[1], 2.6, 1e-12);
}

static double eval_policy(ppo *p, ag_sess *s, int episodes, int greedy) {
    gsl_rng *rng = ag_rng_new(99);
    double sum = 0;
    hw_err err = {0};
    int64_t a[8];
    for (int e = 0; e < episodes; e++) {
        uint64_t seed = 5000 + (uint64_t)e;
        ag_sess_reset(s, &seed, &err);
        if (greedy) ppo_act_greedy(p, s->obs, NULL, a, NULL);
        else ppo_act(p, s->obs, NULL, rng, a, NULL, NULL, NULL);
        cr_assert_eq(ag_sess_step_i64(s, a, &err), 0, "%s", err.msg);
        sum += s->reward;
    }
    gsl_rng_free(rng);
    return sum / episodes;
}

Test(ppo, learns_diag_to_optimum, .timeout = 80) {
    hw_err err = {0};
    json_t *cfg = json_pack("{s:i, s:i, s:i}", "dims", 2, "choices", 4, "episode_length", 1);
    ag_sess *s = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    cr_assert(s, "%s", err.msg);
    ppo_train_opts o = ppo_train_opts_default();
    o.obs_norm = AG_OBS_NORM_NONE;
    o.rew_norm = AG_REW_NORM_NONE;
    o.cfg.num_steps = 64;
    o.cfg.minibatch_size = 16;
    o.cfg.update_epochs = 4;
    o.cfg.lr = 3e-3;
    o.cfg.ent_coef = 0.0;
    ppo *p = NULL;
    json_t *res = NULL;
    double before;
    {
        ppo_cfg c0 = o.cfg;
        ppo *p0 = ppo_new(&c0, (int)s->obs_dim, PPO_MCAT, 2, (int64_t[]){4, 4}, 1);
        before = eval_policy(p0, s, 200, 0);
        ppo_free(p0);
    }
    cr_assert_eq(ppo_train(s, NULL, &o, 1, 3000, &res, &p, &err), 0, "%s", err.msg);
    double after = eval_policy(p, s, 200, 0), greedy = eval_policy(p, s, 20, 1);
    cr_log_info("diag-v0 mean reward: random policy %.3f, after 3000 steps %.3f (greedy %.3f)", before, after, greedy);
    cr_assert_lt(before, 0.8);
    cr_assert_geq(after, 0.95, "final policy mean reward %.3f < 0.95", after);
    cr_assert_float_eq(greedy, 1.0, 1e-12);
    cr_assert_eq(json_integer_value(json_object_get(res, "updates")), (3000 + 63) / 64);

    /* save/load round trip: a fresh agent loaded from the file acts identically */
    char path[64];
    snprintf(path, sizeof path, "/tmp/hwgym-ppo-%d.bin", (int)getpid());
    cr_assert_eq(ppo_save(p, path, &err), 0, "%s", err.msg);
    ppo *q = ppo_new(&o.cfg, (int)s->obs_dim, PPO_MCAT, 2, (int64_t[]){4, 4}, 77);
    cr_assert_eq(ppo_load(q, path, &err), 0, "%s", err.msg);
    cr_assert_float_eq(eval_policy(q, s, 50, 0), eval_policy(p, s, 50, 0), 1e-15);
    ppo *wrong = ppo_new(&o.cfg, (int)s->obs_dim, PPO_MCAT, 2, (int64_t[]){4, 5}, 77);
    cr_assert_eq(ppo_load(wrong, path, &err), -1);
    cr_assert(strstr(err.msg, "sizes[3] is 8 in the file, 9 in the network"), "%s", err.msg);
    unlink(path);
    ppo_free(wrong);
    ppo_free(q);
    ppo_free(p);
    json_decref(res);
    ag_sess_free(s);
    json_decref(cfg);
}

Test(ppo, gaussian_head_improves_on_box_diag, .timeout = 80) {
    hw_err err = {0};
    json_t *cfg = json_pack("{s:s, s:i, s:i}", "action_space", "box", "dims", 2, "episode_length", 1);
    ag_sess *s = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    cr_assert(s, "%s", err.msg);
    ppo_train_opts o = ppo_train_opts_default();
    o.obs_norm = AG_OBS_NORM_NONE;
    o.rew_norm = AG_REW_NORM_NONE;
    o.cfg.num_steps = 64;
    o.cfg.minibatch_size = 16;
    o.cfg.lr = 3e-3;
    o.cfg.ent_coef = 0;
    ppo *p = NULL;
    cr_assert_eq(ppo_train(s, NULL, &o, 3, 6000, NULL, &p, &err), 0, "%s", err.msg);
    double sum = 0;
    for (int e = 0; e < 20; e++) {
        uint64_t seed = (uint64_t)e;
        ag_sess_reset(s, &seed, &err);
        double a[2];
        ppo_act_greedy(p, s->obs, NULL, NULL, a);
        for (int i = 0; i < 2; i++) a[i] = a[i] < -1 ? -1 : a[i] > 1 ? 1 : a[i];
        ag_sess_step_f64(s, a, &err);
        sum += s->reward;
    }
    cr_log_info("box diag greedy mean reward %.3f, log_std %.3f %.3f", sum / 20, p->log_std[0], p->log_std[1]);
    cr_assert_geq(sum / 20, 0.9);
    ppo_free(p);
    ag_sess_free(s);
    json_decref(cfg);
}

/* The whole PPO minibatch loss (clipped surrogate, clipped value loss, entropy, advantage
 * normalisation) against finite differences, with old log-probs and values perturbed so that
 * both clips are active on some samples. */
static void loss_gradcheck(ppo_head head) {
    ppo_cfg c = ppo_cfg_default();
    c.num_steps = 12;
    c.hidden = 6;
    c.ent_coef = 0.05;
    int64_t nvec[2] = {3, 4};
    ppo *p = ppo_new(&c, 3, head, 2, head == PPO_MCAT ? nvec : NULL, 4);
    gsl_rng *r = ag_rng_new(8);
    /* larger output weights than the 0.01 init so that the policy is not flat */
    for (size_t i = 0; i < p->actor->nparams; i++) p->actor->params[i] += 0.3 * (ag_rng_uniform(r) - 0.5);
    p->log_std[0] = -0.3;
    p->log_std[1] = 0.2;
    int clipped = 0, vclipped = 0;
    for (int t = 0; t < 12; t++) {
        double obs[3] = {ag_rng_uniform(r), ag_rng_uniform(r) - 0.5, ag_rng_uniform(r) * 2};
        uint8_t mask[7] = {1, 1, 1, 1, 1, 1, 1};
        if (t % 3 == 0) mask[4] = 0; /* masked choices stay out of the action */
        int64_t ai[2];
        double af[2], lp, v;
        ppo_act(p, obs, head == PPO_MCAT ? mask : NULL, r, ai, af, &lp, &v);
        double dlp = (t % 4 == 0) ? 0.5 : (t % 4 == 1 ? -0.5 : 0.02 * (ag_rng_uniform(r) - 0.5));
        if (fabs(dlp) > 0.2) clipped++;
        double dv = t % 3 == 1 ? 0.6 : 0.01;
        if (dv > 0.2) vclipped++;
        ppo_store(p, obs, head == PPO_MCAT ? mask : NULL, ai, af, lp - dlp, v - dv, ag_rng_uniform(r) * 2 - 0.5, t % 5 == 4);
    }
    cr_assert(clipped > 0 && vclipped > 0);
    double next[3] = {0.1, 0.2, 0.3};
    ppo_compute_gae(p, next);
    int idx[8] = {0, 2, 3, 5, 6, 7, 9, 10};
    ppo_stats st;
    ppo_minibatch_grad(p, idx, 8, &st);
    cr_assert_gt(st.clipfrac, 0);
    size_t na = p->actor->nparams, nc = p->critic->nparams;
    double *ga = malloc(sizeof(double) * na), *gc = malloc(sizeof(double) * nc), gl[2] = {p->g_log_std[0], p->g_log_std[1]};
    memcpy(ga, p->actor->grads, sizeof(double) * na);
    memcpy(gc, p->critic->grads, sizeof(double) * nc);
    double eps = 1e-6, worst = 0;
    size_t total = na + nc + (head == PPO_GAUSS ? 2 : 0);
    for (size_t i = 0; i < total; i++) {
        double *w = i < na ? &p->actor->params[i] : i < na + nc ? &p->critic->params[i - na] : &p->log_std[i - na - nc];
        double g = i < na ? ga[i] : i < na + nc ? gc[i - na] : gl[i - na - nc];
        double w0 = *w;
        *w = w0 + eps;
        double lp = ppo_minibatch_grad(p, idx, 8, NULL);
        *w = w0 - eps;
        double lm = ppo_minibatch_grad(p, idx, 8, NULL);
        *w = w0;
        double num = (lp - lm) / (2 * eps);
        double e = fabs(num - g) / fmax(1e-6, fabs(num) + fabs(g));
        if (e > worst) worst = e;
        cr_assert(e < 1e-4, "param %zu: numeric %.10g analytic %.10g", i, num, g);
    }
    cr_log_info("PPO loss gradient check (%s): worst relative error %.2e over %zu parameters",
                head == PPO_MCAT ? "multi-categorical" : "Gaussian", worst, total);
    free(ga);
    free(gc);
    gsl_rng_free(r);
    ppo_free(p);
}

Test(ppo, loss_gradient_check_mcat) { loss_gradcheck(PPO_MCAT); }
Test(ppo, loss_gradient_check_gauss) { loss_gradcheck(PPO_GAUSS); }
