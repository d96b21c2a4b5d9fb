/* hwgym-tdm-ppo - time-division-multiplexed PPO (the DRAM MARL paper's Figure 4a): one agent
 * emits ONE parameter per timestep and the reward arrives when the design is complete.
 *
 * Two modes (docs/agents.md):
 *  - native: the env has its own TDM form (dram-v0 with config {"action_space":"tdm"}: a
 *    Discrete action per step, reward on the step that completes a design). The agent steps the
 *    env directly; --budget counts env steps (10 per dram design) and every step is a trial.
 *  - wrapper (any other env with an integer action space of D elements): the agent makes D
 *    micro-steps per design. Micro-step k sees [one-hot(k) (D), the values chosen so far scaled
 *    to [0,1] (-1 = not chosen yet) (D), the env's last observation (normalised)], picks value k
 *    from a Discrete(max choices) head masked to parameter k's choices, and gets reward 0; after
 *    micro-step D-1 the agent sends the whole design as ONE env step and that step's reward is
 *    the micro-step's reward. --budget counts designs (env steps); each is one trial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "ppo.h"
#include "ppo_loop.h"

typedef struct tdm {
    ag_sess *s;
    ag_run *run;
    ppo *p;
    gsl_rng *rng;
    ag_norm *nz;
    uint64_t seed;
    int64_t budget;
    const char *worker;
    ag_ckpt_ctl *ckpt; /* NULL: checkpoints off */
} tdm;

/* Counters of a mode's loop: [0] the samples (trials: env steps or designs), [1] episodes,
 * [2] the other counter (native: steps with a nonzero reward; wrapper: micro-steps).
 * run == NULL: restore everything from the checkpoint; else write one (before an episode's
 * reset: no env state in flight; the wrapper's design is empty there). */
static int tdm_ckpt(tdm *t, ag_run *run, int64_t cnt[3], hw_err *err) {
    if (run) {
        ag_ckpt *c = ag_ckpt_new();
        ppo_ckpt_put(c, "ppo", t->p);
        ag_ckpt_put_rng(c, "loop.rng", t->rng);
        ag_norm_ckpt_put(c, "loop.norm", t->nz);
        ag_ckpt_put_i64(c, "loop.counts", cnt, 3);
        int rc = ag_ckpt_commit(t->ckpt, c, run, cnt[0], err);
        ag_ckpt_free(c);
        return rc;
    }
    const ag_ckpt *c = t->ckpt->resume;
    return ppo_ckpt_get(c, "ppo", t->p, err) || ag_ckpt_get_rng(c, "loop.rng", t->rng, err) ||
                   ag_norm_ckpt_get(c, "loop.norm", t->nz, err) || ag_ckpt_get_i64(c, "loop.counts", cnt, 3, err)
               ? -1
               : 0;
}

/* At the top of an episode: restore (first call of a resumed run) or checkpoint when due. */
static int tdm_ckpt_point(tdm *t, bool *restored, int64_t cnt[3], hw_err *err) {
    if (!t->ckpt) return 0;
    if (!*restored) {
        *restored = true;
        if (t->ckpt->resume) return tdm_ckpt(t, NULL, cnt, err);
    }
    return ag_ckpt_due(t->ckpt, cnt[0]) ? tdm_ckpt(t, t->run, cnt, err) : 0;
}

static int run_native(tdm *t, json_t *res, hw_err *err) {
    ag_sess *s = t->s;
    int od = (int)s->obs_dim;
    int64_t n = hw_space_choices(s->act_space, 0), off = s->act_space->start;
    double *obs = calloc((size_t)od + 1, sizeof(double));
    uint8_t *maskbuf = malloc((size_t)n + 1); /* s->mask is freed by the next step */
    int64_t steps = 0, episode = 0, designs = 0;
    ppo_stats st;
    int rc = 0;
    bool restored = false;
    for (;;) {
        int64_t cnt[3] = {steps, episode, designs};
        if (tdm_ckpt_point(t, &restored, cnt, err)) {
            rc = -1;
            break;
        }
        steps = cnt[0];
        episode = cnt[1];
        designs = cnt[2];
        if (steps >= t->budget) break;
        uint64_t rs = ag_rng_derive(t->seed, 1 + (uint64_t)episode) & ((1ULL << 53) - 1);
        if (ag_sess_reset(s, &rs, err)) {
            rc = -1;
            break;
        }
        ag_norm_obs(t->nz, s->obs, obs, true);
        for (int64_t k = 0; steps < t->budget; k++) {
            const uint8_t *mask = NULL;
            if (s->mask && s->mask_len == n) {
                memcpy(maskbuf, s->mask, (size_t)n);
                mask = maskbuf;
            }
            int64_t a, ae;
            double logp, v;
            ppo_act(t->p, obs, mask, t->rng, &a, NULL, &logp, &v);
            ae = a + off;
            if (ag_sess_step_i64(s, &ae, err)) {
                rc = -1;
                break;
            }
            steps++;
            if (s->reward != 0) designs++;
            bool done = s->terminated || s->truncated;
            if (t->run) {
                json_t *aj = json_integer(ae), *oj = ag_json_f64(s->obs, od);
                if (ag_run_step(t->run, t->worker, episode, k, (int64_t)rs, aj, oj, s->reward, s->terminated, s->truncated,
                                s->info, err))
                    rc = -1;
                json_decref(aj);
                json_decref(oj);
            }
            int full = ppo_store(t->p, obs, mask, &a, NULL, logp, v, ag_norm_reward(t->nz, s->reward, done), done);
            ag_norm_obs(t->nz, s->obs, obs, true);
            if (full || steps >= t->budget) ppo_update(t->p, obs, &st);
            if (rc || done) break;
        }
        episode++;
        if (rc) break;
    }
    json_object_set_new(res, "mode", json_string("native"));
    json_object_set_new(res, "episodes", json_integer(episode));
    json_object_set_new(res, "env_steps", json_integer(steps));
    json_object_set_new(res, "nonzero_reward_steps", json_integer(designs));
    free(obs);
    free(maskbuf);
    return rc;
}

static void wrapper_obs(int D, int64_t k, const int64_t *design, const int64_t *nvec, const double *envobs, int od,
                        double *out) {
    for (int i = 0; i < D; i++) out[i] = i == k ? 1.0 : 0.0;
    for (int i = 0; i < D; i++) out[D + i] = i < k ? (nvec[i] > 1 ? (double)design[i] / (double)(nvec[i] - 1) : 0.0) : -1.0;
    memcpy(out + 2 * D, envobs, sizeof(double) * (size_t)od);
}

static int run_wrapper(tdm *t, const int64_t *nvec, int K, json_t *res, hw_err *err) {
    ag_sess *s = t->s;
    int D = (int)s->act_dim, od = (int)s->obs_dim, xd = 2 * D + od;
    double *envobs = calloc((size_t)od + 1, sizeof(double)), *x = calloc((size_t)xd, sizeof(double));
    int64_t *design = calloc((size_t)D, sizeof(int64_t));
    uint8_t *mask = malloc((size_t)K);
    int64_t designs = 0, episode = 0, micro = 0;
    ppo_stats st;
    int rc = 0;
    bool restored = false;
    for (;;) {
        int64_t cnt[3] = {designs, episode, micro};
        if (tdm_ckpt_point(t, &restored, cnt, err)) {
            rc = -1;
            break;
        }
        designs = cnt[0];
        episode = cnt[1];
        micro = cnt[2];
        if (designs >= t->budget) break;
        uint64_t rs = ag_rng_derive(t->seed, 1 + (uint64_t)episode) & ((1ULL << 53) - 1);
        if (ag_sess_reset(s, &rs, err)) {
            rc = -1;
            break;
        }
        ag_norm_obs(t->nz, s->obs, envobs, true);
        for (int64_t step = 0; designs < t->budget; step++) {
            bool done = false;
            double r = 0;
            for (int k = 0; k < D; k++) {
                wrapper_obs(D, k, design, nvec, envobs, od, x);
                for (int j = 0; j < K; j++) mask[j] = j < nvec[k];
                /* an env mask (flat, sum of choices) further restricts parameter k */
                if (s->mask) {
                    int64_t base = 0;
                    for (int i = 0; i < k; i++) base += nvec[i];
                    for (int j = 0; j < nvec[k] && base + j < s->mask_len; j++) mask[j] = mask[j] && s->mask[base + j];
                }
                int64_t a;
                double logp, v;
                ppo_act(t->p, x, mask, t->rng, &a, NULL, &logp, &v);
                design[k] = a;
                micro++;
                if (k < D - 1) {
                    ppo_store(t->p, x, mask, &a, NULL, logp, v, ag_norm_reward(t->nz, 0.0, false), false);
                    if (t->p->n >= t->p->cfg.num_steps) {
                        wrapper_obs(D, k + 1, design, nvec, envobs, od, x);
                        ppo_update(t->p, x, &st);
                    }
                    continue;
                }
                if (ag_sess_step_i64(s, design, err)) {
                    rc = -1;
                    break;
                }
                designs++;
                r = isfinite(s->reward) ? s->reward : 0;
                done = s->terminated || s->truncated;
                if (t->run) {
                    json_t *aj = ag_json_i64(design, D), *oj = ag_json_f64(s->obs, od);
                    if (ag_run_step(t->run, t->worker, episode, step, (int64_t)rs, aj, oj, s->reward, s->terminated,
                                    s->truncated, s->info, err))
                        rc = -1;
                    json_decref(aj);
                    json_decref(oj);
                }
                ppo_store(t->p, x, mask, &a, NULL, logp, v, ag_norm_reward(t->nz, r, done), done);
                ag_norm_obs(t->nz, s->obs, envobs, true);
                memset(design, 0, sizeof(int64_t) * (size_t)D);
                if (t->p->n >= t->p->cfg.num_steps || designs >= t->budget) {
                    wrapper_obs(D, 0, design, nvec, envobs, od, x);
                    ppo_update(t->p, x, &st);
                }
            }
            if (rc || done) break;
        }
        episode++;
        if (rc) break;
    }
    json_object_set_new(res, "mode", json_string("wrapper"));
    json_object_set_new(res, "episodes", json_integer(episode));
    json_object_set_new(res, "micro_steps", json_integer(micro));
    free(envobs);
    free(x);
    free(design);
    free(mask);
    return rc;
}

int main(int argc, char **argv) {
    ppo_cfg c = ppo_cfg_default();
    int64_t num_steps = 128, minibatch = 32, epochs = 4, hidden = 64;
    double lr = c.lr, ent = c.ent_coef, gamma = c.gamma, lam = c.gae_lambda;
    bool no_norm_obs = false;
    const char *worker = NULL, *obs_norm = "log-running", *rew_norm = "return-std";
    ag_optdef extra[] = {{"num-steps", AG_OPT_INT, &num_steps, "rollout length in (micro-)steps (128)"},
                         {"minibatch", AG_OPT_INT, &minibatch, "minibatch size (32)"},
                         {"epochs", AG_OPT_INT, &epochs, "epochs per update (4)"},
                         {"hidden", AG_OPT_INT, &hidden, "units per hidden layer (64)"},
                         {"lr", AG_OPT_DOUBLE, &lr, "learning rate (2.5e-4, annealed)"},
                         {"ent-coef", AG_OPT_DOUBLE, &ent, "entropy coefficient (0.01)"},
                         {"gamma", AG_OPT_DOUBLE, &gamma, "discount per (micro-)step (0.99)"},
                         {"gae-lambda", AG_OPT_DOUBLE, &lam, "GAE lambda (0.95)"},
                         {"obs-norm", AG_OPT_STRING, &obs_norm, "env observation normalisation: log-running (default), running, none (ag_norm.h)"},
                         {"reward-norm", AG_OPT_STRING, &rew_norm, "reward normalisation: return-std (default), none"},
                         {"no-norm-obs", AG_OPT_FLAG, &no_norm_obs, "same as --obs-norm none"},
                         {"worker", AG_OPT_STRING, &worker, "worker label of the logged trials"},
                         {NULL, 0, NULL, NULL}};
    ag_opts o;
    int code;
    if (ag_parse_args(argc, argv, "hwgym-tdm-ppo",
                      "TDM-PPO: one parameter per timestep, reward when the design is complete.\n"
                      "Native mode when the env config has \"action_space\":\"tdm\" (dram-v0): --budget counts env\n"
                      "steps; otherwise an agent-side wrapper: --budget counts designs.",
                      extra, &o, &code))
        return code;
    if (!o.env) {
        fprintf(stderr, "hwgym-tdm-ppo: --env is required\n");
        ag_opts_free(&o);
        return 2;
    }
    c.num_steps = (int)num_steps;
    c.minibatch_size = (int)minibatch;
    c.update_epochs = (int)epochs;
    c.hidden = (int)hidden;
    c.lr = lr;
    c.ent_coef = ent;
    c.gamma = gamma;
    c.gae_lambda = lam;
    int om = AG_OBS_NORM_DEFAULT, rm = AG_REW_NORM_DEFAULT;
    hw_err err = {0};
    if (ag_norm_parse(no_norm_obs ? "none" : obs_norm, ag_obs_norm_names, "--obs-norm", &om, &err) ||
        ag_norm_parse(rew_norm, ag_rew_norm_names, "--reward-norm", &rm, &err)) {
        fprintf(stderr, "hwgym-tdm-ppo: %s\n", err.msg);
        ag_opts_free(&o);
        return 2;
    }
    int rc = 1;
    json_t *acfg = ag_opts_to_json(&o, extra), *res = json_object();
    tdm t = {0};
    t.seed = o.seed;
    t.budget = o.budget;
    t.worker = worker;
    t.rng = ag_rng_new(ag_rng_derive(o.seed, 7));
    int64_t *nvec = NULL;
    ag_ckpt_ctl ctl = {0};
    t.s = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);
    if (!t.s) goto out;
    const hw_space *as = t.s->act_space;
    if (!hw_space_is_integer(as)) {
        hw_fail(&err, HW_E_NOT_SUPPORTED, "tdm-ppo needs an integer action space, %s has %s", o.env,
                hw_space_type_name(as->type));
        goto out;
    }
    const char *form = json_string_value(json_object_get(o.config, "action_space"));
    bool native = form && !strcmp(form, "tdm") && as->type == HW_SPACE_DISCRETE;
    int od = (int)t.s->obs_dim, D = (int)t.s->act_dim;
    nvec = calloc((size_t)D + 1, sizeof(int64_t));
    ag_sess_choices(t.s, nvec);
    int K = 1;
    for (int i = 0; i < D; i++)
        if (nvec[i] > K) K = (int)nvec[i];
    if (native) {
        c.num_updates = (long)((o.budget + c.num_steps - 1) / c.num_steps);
        t.p = ppo_new(&c, od, PPO_MCAT, 1, nvec, o.seed);
    } else {
        c.num_updates = (long)((o.budget * D + c.num_steps - 1) / c.num_steps);
        int64_t kv = K;
        t.p = ppo_new(&c, 2 * D + od, PPO_MCAT, 1, &kv, o.seed);
    }
    t.nz = ag_norm_new(od, (ag_obs_norm_mode)om, (ag_rew_norm_mode)rm, c.gamma);
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    t.ckpt = ag_ckpt_on(&ctl) ? &ctl : NULL;
    t.run = ag_run_resume(&o, "hwgym-tdm-ppo", acfg, ctl.resume, worker ? worker : "0", &err);
    if (!t.run) goto out;
    int lrc = native ? run_native(&t, res, &err) : run_wrapper(&t, nvec, K, res, &err);
    json_object_set_new(res, "updates", json_integer(t.p->updates));
    rc = ag_run_finish(&t.run, res, lrc != 0, &err, "hwgym-tdm-ppo");
    err.msg[0] = 0; /* printed */
out:
    if (rc && err.msg[0]) fprintf(stderr, "hwgym-tdm-ppo: %s: %s\n", hw_code_name(err.code), err.msg);
    json_decref(res);
    json_decref(acfg);
    ppo_free(t.p);
    ag_norm_free(t.nz);
    gsl_rng_free(t.rng);
    ag_ckpt_ctl_free(&ctl);
    ag_sess_free(t.s);
    free(nvec);
    ag_opts_free(&o);
    return rc;
}
