/* hwgym-rlsched - the RL-Scheduling agent: PPO with action masking picks which 2 or 3 rows of
 * the scheduling table sched-v0 brute-forces next (docs/rlsched.md). The loop is in
 * agents/lib/rl/rlsched.c; this is the command line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "rlsched.h"

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* What the policy does apart from what the search does (docs/rlsched.md "Reading the summary"):
 * greedy_total (one deterministic pass, the table each layer ends with), best_seen_total (the
 * best table per layer over all training steps: search), steps (training brute-force steps),
 * greedy_steps, learning, and the learning curve and per-episode totals. */
static void summary_controls(json_t *res, const rls_result *tr, const rls_result *gr, const char *objective,
                             bool learning, bool eval_only) {
    json_object_set_new(res, "greedy_total", gr->episodes ? num_or_null(rls_result_total(gr, objective)) : json_null());
    json_object_set_new(res, "best_seen_total", eval_only ? json_null() : num_or_null(rls_result_total(tr, objective)));
    json_object_set_new(res, "steps", json_integer(tr->steps));
    json_object_set_new(res, "greedy_steps", json_integer(gr->steps));
    json_object_set_new(res, "learning", json_boolean(learning));
    json_t *ep = json_array(), *cv = json_array();
    for (int64_t i = 0; i < tr->n_ep_totals; i++) json_array_append_new(ep, num_or_null(tr->ep_totals[i]));
    for (int64_t i = 0; i < tr->n_curve; i++)
        json_array_append_new(cv, json_pack("{s:I,s:o}", "episode", (json_int_t)tr->curve[i].episode, "greedy_total",
                                            num_or_null(tr->curve[i].greedy_total)));
    json_object_set_new(res, "episode_totals", ep);
    json_object_set_new(res, "curve", cv);
}

int main(int argc, char **argv) {
    rls_cfg c = rls_cfg_default();
    int64_t episodes = 200, num_steps = c.ppo.num_steps, minibatch = c.ppo.minibatch_size,
            epochs = c.ppo.update_epochs, hidden = c.ppo.hidden;
    double lr = c.ppo.lr, lr_critic = c.ppo.lr_critic, gamma = c.ppo.gamma, lam = c.ppo.gae_lambda,
           clip = c.ppo.clip_coef, c1 = c.ppo.vf_coef, l2 = c.ppo.critic_l2, ent0 = c.ent_start,
           ent1 = c.ent_final, decay = c.ent_decay, mgn = c.ppo.max_grad_norm;
    bool norm_obs = false, mse = false, eval_only = false, no_greedy = false, no_learn = false;
    int64_t eval_every = 0, workers = 1;
    const char *save = NULL, *load = NULL, *worker = NULL, *reward = "env";
    ag_optdef extra[] = {
        {"episodes", AG_OPT_INT, &episodes, "training episodes (200; the paper trains up to 3000)"},
        {"actor-lr", AG_OPT_DOUBLE, &lr, "actor Adam learning rate (3e-4)"},
        {"critic-lr", AG_OPT_DOUBLE, &lr_critic, "critic Adam learning rate (1e-3)"},
        {"gamma", AG_OPT_DOUBLE, &gamma, "discount (0.99)"},
        {"gae-lambda", AG_OPT_DOUBLE, &lam, "GAE lambda (0.95)"},
        {"clip", AG_OPT_DOUBLE, &clip, "PPO clip epsilon (0.2)"},
        {"c1", AG_OPT_DOUBLE, &c1, "value loss coefficient (0.5)"},
        {"l2", AG_OPT_DOUBLE, &l2, "L2 penalty on the critic's weights (0.01)"},
        {"ent-start", AG_OPT_DOUBLE, &ent0, "entropy coefficient c2 at episode 0 (0.1)"},
        {"ent-final", AG_OPT_DOUBLE, &ent1, "floor of c2 (0.02)"},
        {"ent-decay", AG_OPT_DOUBLE, &decay, "c2 decay factor per episode (0.995)"},
        {"num-steps", AG_OPT_INT, &num_steps, "rollout length per PPO update (64)"},
        {"minibatch", AG_OPT_INT, &minibatch, "minibatch size (16)"},
        {"epochs", AG_OPT_INT, &epochs, "epochs per update (4)"},
        {"hidden", AG_OPT_INT, &hidden, "units per hidden layer, 2 tanh layers (64)"},
        {"max-grad-norm", AG_OPT_DOUBLE, &mgn, "global gradient-norm clip (0.5)"},
        {"reward", AG_OPT_STRING, &reward, "what PPO learns from: env (the env's reward), log (log M_before/M_after), quality ((M_0-M)/M_0) (env)"},
        {"norm-obs", AG_OPT_FLAG, &norm_obs, "normalise observations by a running mean/std (off: sched-v0's are in [0,1])"},
        {"mse-critic", AG_OPT_FLAG, &mse, "CleanRL's clipped squared-error critic loss instead of Smooth-L1"},
        {"no-greedy", AG_OPT_FLAG, &no_greedy, "skip the greedy evaluation episode after training"},
        {"no-learn", AG_OPT_FLAG, &no_learn,
         "the untrained control: the same episodes and steps, actions sampled from the initial masked policy, "
         "no PPO update"},
        {"eval-every", AG_OPT_INT, &eval_every,
         "learning curve: a greedy pass before training and after every N training episodes (0: off); "
         "the summary's \"curve\" lists them (not counted in steps)"},
        {"save", AG_OPT_STRING, &save, "write the trained actor and critic to this file"},
        {"load", AG_OPT_STRING, &load, "start from weights written by --save"},
        {"eval-only", AG_OPT_FLAG, &eval_only, "with --load: one greedy episode, no training"},
        {"workers", AG_OPT_INT, &workers,
         "episode workers, 1..64 (1). N > 1 trains in rounds: a round is one episode per worker, each on its "
         "own env session with its own random stream, all sampled from the policy as it was at the round's start; "
         "the learner then takes the N episodes in worker order (trials, best tables, PPO updates every "
         "--num-steps transitions). Results differ from N = 1 but are the same for a given (seed, N). "
         "Not with --norm-obs or checkpoints"},
        {"worker", AG_OPT_STRING, &worker, "worker label of the logged training trials (\"0\")"},
        {NULL, 0, NULL, NULL}};
    ag_opts o;
    int code;
    if (ag_parse_args(argc, argv, "hwgym-rlsched",
                      "RL-Scheduling (Xu 2025): PPO with action masking chooses which rows of the scheduling\n"
                      "table sched-v0 brute-forces next. Stops after --episodes or --budget env steps, whichever\n"
                      "comes first, then plays one greedy episode. The summary lists the best table found per\n"
                      "layer and the network totals. --env defaults to sched-v0.",
                      extra, &o, &code))
        return code;
    if (!o.env) o.env = "sched-v0";
    const char *env = o.env;
    if (eval_every < 0) {
        fprintf(stderr, "hwgym-rlsched: --eval-every must be >= 0 (0: no learning curve), got %lld\n",
                (long long)eval_every);
        ag_opts_free(&o);
        return 2;
    }
    if (episodes < 0 || num_steps < 1 || minibatch < 1 || epochs < 1 || hidden < 1 || hidden > 4096) {
        fprintf(stderr, "hwgym-rlsched: --episodes must be >= 0, --num-steps/--minibatch/--epochs >= 1, "
                        "--hidden in 1..4096\n");
        ag_opts_free(&o);
        return 2;
    }
    if (workers < 1 || workers > 64) {
        fprintf(stderr, "hwgym-rlsched: --workers must be in 1..64, got %lld\n", (long long)workers);
        ag_opts_free(&o);
        return 2;
    }
    if (workers > 1 && (norm_obs || o.checkpoint_every > 0 || o.resume)) {
        fprintf(stderr, "hwgym-rlsched: --workers > 1 does not work with --norm-obs, --checkpoint-every or "
                        "--resume (one running normaliser; no per-round checkpoint yet)\n");
        ag_opts_free(&o);
        return 2;
    }
    if (eval_only && !load) {
        fprintf(stderr, "hwgym-rlsched: --eval-only needs --load FILE\n");
        ag_opts_free(&o);
        return 2;
    }
    if (!strcmp(reward, "env")) c.reward = RLS_REWARD_ENV;
    else if (!strcmp(reward, "log")) c.reward = RLS_REWARD_LOG;
    else if (!strcmp(reward, "quality")) c.reward = RLS_REWARD_QUALITY;
    else {
        fprintf(stderr, "hwgym-rlsched: --reward: expected env, log or quality, got '%s'\n", reward);
        ag_opts_free(&o);
        return 2;
    }
    c.episodes = episodes;
    c.ppo.lr = lr;
    c.ppo.lr_critic = lr_critic;
    c.ppo.gamma = gamma;
    c.ppo.gae_lambda = lam;
    c.ppo.clip_coef = clip;
    c.ppo.vf_coef = c1;
    c.ppo.critic_l2 = l2;
    c.ppo.vloss = mse ? PPO_VLOSS_MSE : PPO_VLOSS_SMOOTH_L1;
    c.ppo.num_steps = (int)num_steps;
    c.ppo.minibatch_size = (int)minibatch;
    c.ppo.update_epochs = (int)epochs;
    c.ppo.hidden = (int)hidden;
    c.ppo.max_grad_norm = mgn;
    c.ent_start = ent0;
    c.ent_final = ent1;
    c.ent_decay = decay;
    c.norm_obs = norm_obs;
    c.worker = worker;
    c.learn = !no_learn;
    c.eval_every = eval_every;
    c.workers = eval_only ? 1 : (int)workers;

    hw_err err = {0};
    int rc = 1;
    json_t *acfg = ag_opts_to_json(&o, extra), *res = NULL;
    rls_result tr = {0}, gr = {0};
    ppo *p = NULL;
    ag_run *run = NULL;
    ag_ckpt_ctl ctl = {0};
    const char *objective = rls_objective(o.config);
    ag_sess *s = ag_sess_make(o.endpoint, env, o.config, NULL, 0, &err), *ws[64] = {0};
    if (!s) goto out;
    ws[0] = s;
    for (int w = 1; w < c.workers; w++)
        if (!(ws[w] = ag_sess_make(o.endpoint, env, o.config, NULL, 0, &err))) goto out;
    c.sess = ws;
    if (!(p = rls_ppo_new(s, &c, o.seed, &err))) goto out;
    if (load && ppo_load(p, load, &err)) goto out;
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    c.ckpt = &ctl;
    if (!(run = ag_run_resume(&o, "hwgym-rlsched", acfg, ctl.resume, worker ? worker : "0", &err))) goto out;
    /* the greedy episode follows training, after every checkpoint: a resumed run plays it again */
    if (ctl.resume && ag_run_drop_worker(run, "greedy", &err)) goto out;
    if (eval_only && ag_ckpt_on(&ctl) && !ctl.resume) {
        /* no training, so no checkpoint of its own: one at sample 0 keeps the run id, so that a
           killed evaluation resumes into the same run */
        ag_ckpt *k = ag_ckpt_new();
        int e = ag_ckpt_commit(&ctl, k, run, 0, &err);
        ag_ckpt_free(k);
        if (e) goto out;
    }
    int frc = 0;
    if (!eval_only) frc = rls_train(s, run, p, &c, objective, o.seed, o.budget, &tr, &err);
    if (!frc && (eval_only || !no_greedy)) frc = rls_eval(s, run, p, objective, o.seed, INT64_MAX, &gr, &err);
    if (!frc && save) frc = ppo_save(p, save, &err);
    res = json_pack("{s:s,s:s,s:I,s:I,s:I,s:f}", "objective", objective, "mode",
                    json_is_string(json_object_get(o.config, "mode")) ? json_string_value(json_object_get(o.config, "mode"))
                                                                     : "layer",
                    "episodes", (json_int_t)tr.episodes, "train_steps", (json_int_t)tr.steps, "updates",
                    (json_int_t)tr.updates, "ent_coef", tr.ent_coef);
    if (!eval_only) json_object_set_new(res, "best_seen", rls_result_json(&tr));
    if (gr.episodes) json_object_set_new(res, "greedy", rls_result_json(&gr));
    summary_controls(res, &tr, &gr, objective, !no_learn, eval_only);
    rc = ag_run_finish(&run, res, frc != 0, &err, "hwgym-rlsched");
    err.msg[0] = 0; /* printed */
out:
    if (rc && err.msg[0]) fprintf(stderr, "hwgym-rlsched: %s: %s\n", hw_code_name(err.code), err.msg);
    json_decref(res);
    json_decref(acfg);
    rls_result_free(&tr);
    rls_result_free(&gr);
    ppo_free(p);
    ag_ckpt_ctl_free(&ctl);
    for (int w = 1; w < c.workers; w++) ag_sess_free(ws[w]);
    ag_sess_free(s);
    ag_opts_free(&o);
    return rc;
}
