/* hwgym-ppo - single-agent PPO over all action dimensions jointly (a multi-categorical head
 * for integer action spaces, a Gaussian head for Box). docs/agents.md. */
#include <stdio.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "ppo_loop.h"

int main(int argc, char **argv) {
    ppo_train_opts t = ppo_train_opts_default();
    int64_t num_steps = 128, minibatch = 32, epochs = 4, hidden = 64;
    double lr = t.cfg.lr, ent = t.cfg.ent_coef, vf = t.cfg.vf_coef, clip = t.cfg.clip_coef, gamma = t.cfg.gamma,
           lam = t.cfg.gae_lambda, mgn = t.cfg.max_grad_norm, tkl = 0;
    bool no_norm_obs = false, no_anneal = false;
    const char *save = NULL, *worker = NULL, *obs_norm = "log-running", *rew_norm = "return-std";
    ag_optdef extra[] = {
        {"num-steps", AG_OPT_INT, &num_steps, "rollout length per update (128)"},
        {"minibatch", AG_OPT_INT, &minibatch, "minibatch size (32)"},
        {"epochs", AG_OPT_INT, &epochs, "epochs per update (4)"},
        {"hidden", AG_OPT_INT, &hidden, "units per hidden layer, 2 tanh layers (64)"},
        {"lr", AG_OPT_DOUBLE, &lr, "Adam learning rate (2.5e-4), annealed linearly to 0"},
        {"ent-coef", AG_OPT_DOUBLE, &ent, "entropy bonus coefficient (0.01)"},
        {"vf-coef", AG_OPT_DOUBLE, &vf, "value loss coefficient (0.5)"},
        {"clip", AG_OPT_DOUBLE, &clip, "surrogate and value clip (0.2)"},
        {"gamma", AG_OPT_DOUBLE, &gamma, "discount (0.99)"},
        {"gae-lambda", AG_OPT_DOUBLE, &lam, "GAE lambda (0.95)"},
        {"max-grad-norm", AG_OPT_DOUBLE, &mgn, "global gradient-norm clip (0.5)"},
        {"target-kl", AG_OPT_DOUBLE, &tkl, "stop the epochs when approx KL exceeds this (0: off)"},
        {"obs-norm", AG_OPT_STRING, &obs_norm, "observation normalisation: log-running (default), running, none (ag_norm.h; same as every PPO-family agent)"},
        {"reward-norm", AG_OPT_STRING, &rew_norm, "reward normalisation: return-std (default), none"},
        {"no-norm-obs", AG_OPT_FLAG, &no_norm_obs, "same as --obs-norm none"},
        {"no-anneal-lr", AG_OPT_FLAG, &no_anneal, "keep the learning rate constant"},
        {"save", AG_OPT_STRING, &save, "write the trained weights to this file"},
        {"worker", AG_OPT_STRING, &worker, "worker label of the logged trials (\"0\")"},
        {NULL, 0, NULL, NULL}};
    ag_opts o;
    int code;
    if (ag_parse_args(argc, argv, "hwgym-ppo",
                      "Single-agent PPO (CleanRL-style) over all action dimensions jointly.\n"
                      "--budget counts env steps.",
                      extra, &o, &code))
        return code;
    if (!o.env) {
        fprintf(stderr, "hwgym-ppo: --env is required\n");
        ag_opts_free(&o);
        return 2;
    }
    t.cfg.num_steps = (int)num_steps;
    t.cfg.minibatch_size = (int)minibatch;
    t.cfg.update_epochs = (int)epochs;
    t.cfg.hidden = (int)hidden;
    t.cfg.lr = lr;
    t.cfg.ent_coef = ent;
    t.cfg.vf_coef = vf;
    t.cfg.clip_coef = clip;
    t.cfg.gamma = gamma;
    t.cfg.gae_lambda = lam;
    t.cfg.max_grad_norm = mgn;
    t.cfg.target_kl = tkl;
    t.cfg.anneal_lr = !no_anneal;
    hw_err perr = {0};
    if (ag_norm_parse(no_norm_obs ? "none" : obs_norm, ag_obs_norm_names, "--obs-norm", &t.obs_norm, &perr) ||
        ag_norm_parse(rew_norm, ag_rew_norm_names, "--reward-norm", &t.rew_norm, &perr)) {
        fprintf(stderr, "hwgym-ppo: %s\n", perr.msg);
        ag_opts_free(&o);
        return 2;
    }
    t.save_path = save;
    t.worker = worker;
    hw_err err = {0};
    int rc = 1;
    json_t *acfg = ag_opts_to_json(&o, extra), *res = NULL;
    ag_sess *s = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);
    ag_run *run = NULL;
    ag_ckpt_ctl ctl = {0};
    if (!s) goto out;
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    t.ckpt = ag_ckpt_on(&ctl) ? &ctl : NULL;
    run = ag_run_resume(&o, "hwgym-ppo", acfg, ctl.resume, worker ? worker : "0", &err);
    if (!run) goto out;
    int trc = ppo_train(s, run, &t, o.seed, o.budget, &res, NULL, &err);
    rc = ag_run_finish(&run, res, trc != 0, &err, "hwgym-ppo");
    err.msg[0] = 0; /* printed */
out:
    if (rc && err.msg[0]) fprintf(stderr, "hwgym-ppo: %s: %s\n", hw_code_name(err.code), err.msg);
    json_decref(res);
    json_decref(acfg);
    ag_ckpt_ctl_free(&ctl);
    ag_sess_free(s);
    ag_opts_free(&o);
    return rc;
}
