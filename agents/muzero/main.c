/* hwgym-muzero - the MMap-MuZero agent (paper section 4.3, Appendix C) on mmap-v0, with its
 * ablations and baselines in one binary (--mode). docs/muzero.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mz_agent.h"

int64_t mz_es_generations(const mz_agent *A);

static const char *const MODES[] = {"muzero", "prod", "search", "learn", "es", "random", NULL};

int main(int argc, char **argv) {
    mz_agent A;
    memset(&A, 0, sizeof A);
    ag_ckpt_ctl ctl = {0};
    mz_opts *o = &A.o;
    o->mcts = mcts_cfg_default();
    o->train = mz_train_cfg_default();
    const char *mode = "muzero";
    int64_t games = 8, sims = o->mcts.sims, batch = 128, replay = 20000, rsims = 25, train_every = 8, K = o->train.K,
            td = o->train.td_steps, decay = 400000, rollout = 16, embed = 32, hidden = 64, rhidden = 128,
            support = 15, gm = 3, maxg = 0, greedy = -1, log_games = 10;
    double reanalyse = 0.5, t0 = 1.0, t1 = 0.2, tl = 0, cpul = 0, lr = o->train.lr, wd = o->train.weight_decay,
           gamma = o->train.gamma, gscale = o->train.grad_scale, c1 = o->mcts.c1, c2 = o->mcts.c2,
           alpha = o->mcts.dir_alpha, frac = o->mcts.dir_frac, floor_ = -1, sigma = 0.5, eslr = 0.5,
           root_mix = o->mcts.root_mix, sil = 0.25, hprior = -1;
    const char *qnorm = "node", *vtarget = "td", *model = "learned";
    bool gumbel = false, no_demo = false, no_backup = false, no_fit = false, f32 = false;
    const char *save = NULL, *worker = NULL, *curve = NULL;
    ag_optdef extra[] = {
        {"mode", AG_OPT_STRING, &mode, "muzero | prod (agent vs heuristic, keep the better) | search (MCTS over the true game, no learning) | learn (no MCTS) | es | random (muzero)"},
        {"games", AG_OPT_INT, &games, "games in flight, one batched network call per simulation step for all (8; es: the population)"},
        {"no-fit-games", AG_OPT_FLAG, &no_fit, "keep all --games in flight to the end; by default games are retired (never game 0) when the measured cost per env step says the budget left (--budget, --cpu-limit or --time-limit) cannot complete them all, so that large programs complete games (es: never)"},
        {"simulations", AG_OPT_INT, &sims, "MCTS simulations per move (400)"},
        {"gumbel", AG_OPT_FLAG, &gumbel, "Gumbel root with sequential halving instead of PUCT + Dirichlet noise at the root"},
        {"gumbel-m", AG_OPT_INT, &gm, "actions sampled at the Gumbel root (3)"},
        {"c1", AG_OPT_DOUBLE, &c1, "PUCT c1 (1.25)"},
        {"c2", AG_OPT_DOUBLE, &c2, "PUCT c2 (19652)"},
        {"dirichlet-alpha", AG_OPT_DOUBLE, &alpha, "root noise alpha (0.03)"},
        {"noise-fraction", AG_OPT_DOUBLE, &frac, "root noise fraction (0.25)"},
        {"minmax-floor", AG_OPT_DOUBLE, &floor_, "floor on the min-max value range, scaled units (-1: auto: 1 with the heuristic prior, else 100 / buffers = the heuristic's mean reward per buffer)"},
        {"q-norm", AG_OPT_STRING, &qnorm, "Q normalisation in the search: node (per node over parent and siblings, unvisited children completed with the parent's value; Gumbel: mctx's completed Q) | tree (tree-wide min-max, unvisited 0: the previous behaviour) (node)"},
        {"root-mix", AG_OPT_DOUBLE, &root_mix, "uniform mix into the root prior over legal actions, a floor against collapse (0)"},
        {"heuristic-prior", AG_OPT_DOUBLE, &hprior, "muzero/prod: weight W of the heuristic's move (mm_policy_heuristic at the game's state, from an in-process copy of the program) mixed into the search's root prior, P <- (1 - W) P + W onehot, for acting (not Reanalyse); in [0, 1) (0: off, the paper's MuZero; -1: auto, 0.5 in muzero/prod, else 0)"},
        {"model", AG_OPT_STRING, &model, "muzero/prod: the search's model: learned (MuZero: dynamics, reward and value networks) | true (AlphaZero mode: the true game stepped in in-process sessions, exact rewards and legal moves, the learned prior and value; no Reanalyse; every session without the memory map) (learned)"},
        {"self-imitation", AG_OPT_DOUBLE, &sil, "fraction of each training batch from a small replay of the heuristic's and the agent's best game, one-hot on their moves, Monte Carlo values (0.25; 0: off)"},
        {"greedy-games", AG_OPT_INT, &greedy, "games in flight played greedily as evaluation games: no root noise, argmax move (-1: 1 when --games > 1, else 0)"},
        {"value-target", AG_OPT_STRING, &vtarget, "value targets: td (TD-n from stored root values) | mc (Monte Carlo return-to-go of the finished game; TD-n until it finishes) | adv, adv-mc (td, mc as the advantage over the heuristic: the value network learns the target minus the heuristic's return-to-go from the same buffer, and the searches add it back) (td)"},
        {"log-games", AG_OPT_INT, &log_games, "complete games per window of the collapse watch (Copy/NoCopy/Drop shares, prior entropy) (10)"},
        {"temp-init", AG_OPT_DOUBLE, &t0, "initial action temperature (1.0)"},
        {"temp-final", AG_OPT_DOUBLE, &t1, "final action temperature (0.2)"},
        {"temp-decay-steps", AG_OPT_INT, &decay, "env steps of the linear temperature decay (400000)"},
        {"discount", AG_OPT_DOUBLE, &gamma, "discount (0.9999)"},
        {"batch", AG_OPT_INT, &batch, "training batch (128; the paper: 512)"},
        {"lr", AG_OPT_DOUBLE, &lr, "Adam learning rate (2e-4)"},
        {"weight-decay", AG_OPT_DOUBLE, &wd, "L2 weight decay (1e-4)"},
        {"unroll", AG_OPT_INT, &K, "unroll steps K (5)"},
        {"td-steps", AG_OPT_INT, &td, "n of the TD-n value targets (10)"},
        {"dynamics-grad-scale", AG_OPT_DOUBLE, &gscale, "gradient scale into the dynamics function (0.5)"},
        {"replay", AG_OPT_INT, &replay, "replay size in positions (20000)"},
        {"reanalyse", AG_OPT_DOUBLE, &reanalyse, "fraction of each batch with targets from Reanalyse (0.5)"},
        {"reanalyse-simulations", AG_OPT_INT, &rsims, "MCTS simulations of a Reanalyse search (25)"},
        {"train-every", AG_OPT_INT, &train_every, "env steps per training step (8)"},
        {"embed", AG_OPT_INT, &embed, "embedding size (32)"},
        {"hidden", AG_OPT_INT, &hidden, "dynamics/prediction hidden units, 2 layers (64)"},
        {"repr-hidden", AG_OPT_INT, &rhidden, "representation hidden units, 2 layers (128)"},
        {"support", AG_OPT_INT, &support, "value/reward support half-width S, 2S+1 bins (15)"},
        {"no-demo", AG_OPT_FLAG, &no_demo, "do not seed the replay with the heuristic's game"},
        {"float32", AG_OPT_FLAG, &f32, "networks in single precision: inference (acting, Reanalyse) from a float mirror of the weights re-synced after each training step, and the training step's GEMMs (mixed precision: parameters, gradients and Adam stay float64) (bench_gemm: the GEMMs run ~2x faster)"},
        {"no-backup", AG_OPT_FLAG, &no_backup, "no Drop-backup: a lost game ends with return 0"},
        {"rollout", AG_OPT_INT, &rollout, "search mode: random rollout depth at a leaf (16)"},
        {"max-games", AG_OPT_INT, &maxg, "stop after this many complete games as well (0: only --budget)"},
        {"time-limit", AG_OPT_DOUBLE, &tl, "stop after this many seconds as well (0: only --budget)"},
        {"cpu-limit", AG_OPT_DOUBLE, &cpul, "stop after this many CPU seconds of this process as well (0: none): equal budgets on a shared machine; --curve's seconds are then CPU seconds"},
        {"es-sigma", AG_OPT_DOUBLE, &sigma, "ES noise scale (0.5)"},
        {"es-lr", AG_OPT_DOUBLE, &eslr, "ES step size (0.5)"},
        {"curve", AG_OPT_STRING, &curve, "write every complete game (seconds, env_steps, return, best) to this CSV"},
        {"save", AG_OPT_STRING, &save, "write the trained networks to this file"},
        {"worker", AG_OPT_STRING, &worker, "worker label of the logged trials (\"0\")"},
        {NULL, 0, NULL, NULL}};
    ag_opts ao;
    int code;
    if (ag_parse_args(argc, argv, "hwgym-muzero",
                      "MMap-MuZero on mmap-v0: learned-model MCTS with batched leaves, Drop-backup, Reanalyse;\n"
                      "ablations (search, learn) and baselines (es, random) via --mode.\n"
                      "--budget counts env steps; every step is a trial; best_reward is the best complete game's return.",
                      extra, &ao, &code))
        return code;
    if (ao.env && strcmp(ao.env, "mmap-v0")) {
        fprintf(stderr, "hwgym-muzero: --env: only mmap-v0 is supported, not '%s'\n", ao.env);
        ag_opts_free(&ao);
        return 2;
    }
    if (!ao.env) ao.env = "mmap-v0";
    int m = -1;
    for (int i = 0; MODES[i]; i++)
        if (!strcmp(mode, MODES[i])) m = i;
    const char *bad = NULL;
    if (hprior == -1) hprior = m == MODE_MUZERO || m == MODE_PROD ? 0.5 : 0; /* auto (docs/muzero.md: why) */
    if (m < 0) bad = "--mode: expected muzero, prod, search, learn, es or random";
    else if (games < 1 || games > 1024) bad = "--games: must be in [1, 1024]";
    else if (sims < 1) bad = "--simulations: must be >= 1";
    else if (batch < 1 || batch > 4096) bad = "--batch: must be in [1, 4096]";
    else if (replay < 16) bad = "--replay: must be >= 16";
    else if (K < 1 || K > 16) bad = "--unroll: must be in [1, 16]";
    else if (td < 1) bad = "--td-steps: must be >= 1";
    else if (reanalyse < 0 || reanalyse > 1) bad = "--reanalyse: must be in [0, 1]";
    else if (embed < 1 || hidden < 1 || rhidden < 1 || support < 1 || support > 100) bad = "--embed/--hidden/--repr-hidden/--support: out of range";
    else if (train_every < 1 || rsims < 1) bad = "--train-every/--reanalyse-simulations: must be >= 1";
    else if (tl < 0 || cpul < 0) bad = "--time-limit/--cpu-limit: must be >= 0";
    else if (strcmp(qnorm, "node") && strcmp(qnorm, "tree")) bad = "--q-norm: expected node or tree";
    else if (strcmp(vtarget, "td") && strcmp(vtarget, "mc") && strcmp(vtarget, "adv") && strcmp(vtarget, "adv-mc"))
        bad = "--value-target: expected td, mc, adv or adv-mc";
    else if (root_mix < 0 || root_mix > 1) bad = "--root-mix: must be in [0, 1]";
    else if (sil < 0 || sil > 1) bad = "--self-imitation: must be in [0, 1]";
    else if (!(hprior >= 0 && hprior < 1)) bad = "--heuristic-prior: must be in [0, 1) (or -1: auto)";
    else if (hprior > 0 && m != MODE_MUZERO && m != MODE_PROD) bad = "--heuristic-prior: only with --mode muzero or prod (the searches that take a prior)";
    else if (greedy < -1 || greedy > games) bad = "--greedy-games: must be in [-1, --games]";
    else if (log_games < 1) bad = "--log-games: must be >= 1";
    else if (strcmp(model, "learned") && strcmp(model, "true")) bad = "--model: expected learned or true";
    if (bad) {
        fprintf(stderr, "hwgym-muzero: %s\n", bad);
        ag_opts_free(&ao);
        return 2;
    }
    o->mode = (mz_mode)m;
    o->games = (int)games;
    o->fit_games = !no_fit;
    if (o->mode == MODE_ES) o->games = (int)(games < 2 ? 2 : games + (games & 1));
    o->mcts.sims = (int)sims;
    o->mcts.gumbel = gumbel;
    o->mcts.gumbel_m = (int)gm;
    o->mcts.c1 = c1;
    o->mcts.c2 = c2;
    o->mcts.dir_alpha = alpha;
    o->mcts.dir_frac = frac;
    if (floor_ < 0 && hprior > 0) floor_ = 1; /* the prior's companion (docs/results/mmap.md, dev set) */
    o->mcts.minmax_floor = floor_; /* < 0: set from the program in mz_agent_init */
    o->mcts.qmode = strcmp(qnorm, "tree") ? MCTS_Q_NODE : MCTS_Q_TREE;
    o->mcts.root_mix = root_mix;
    o->greedy_games = (int)(greedy >= 0 ? greedy : games > 1 ? 1 : 0);
    o->log_games = (int)log_games;
    o->sil = sil;
    o->heur_prior = hprior;
    o->model_true = !strcmp(model, "true") && (o->mode == MODE_MUZERO || o->mode == MODE_PROD);
    o->train.value_target = strcmp(vtarget, "mc") && strcmp(vtarget, "adv-mc") ? MZ_VT_TD : MZ_VT_MC;
    bool advantage = !strncmp(vtarget, "adv", 3);
    o->mcts.gamma = gamma;
    o->train.K = (int)K;
    o->train.td_steps = (int)td;
    o->train.gamma = gamma;
    o->train.grad_scale = gscale;
    o->train.lr = lr;
    o->train.weight_decay = wd;
    o->batch = (int)batch;
    o->replay = (int)replay;
    o->reanalyse = reanalyse;
    o->reanalyse_sims = (int)rsims;
    o->train_every = (int)train_every;
    o->temp0 = t0;
    o->temp1 = t1;
    o->temp_decay = decay;
    o->demo = !no_demo;
    o->f32 = f32;
    o->backup = !no_backup;
    o->rollout = (int)rollout;
    o->time_limit = tl;
    o->cpu_limit = cpul;
    o->max_games = maxg;
    o->es_sigma = sigma;
    o->es_lr = eslr;
    o->net = mz_net_cfg_default(0);
    o->net.E = (int)embed;
    o->net.H = (int)hidden;
    o->net.Hr = (int)rhidden;
    o->net.S = (int)support;
    o->save = save;
    o->worker = worker;
    o->curve = curve;
    A.ao = &ao;
    A.quiet = ao.quiet;
    ao.quiet = true; /* the agent prints its own progress line (best complete game, not best step) */
    A.G = o->games;
    A.rng = ag_rng_new(ao.seed);
    hw_err err = {0};
    int rc = 1;
    json_t *acfg = ag_opts_to_json(&ao, extra);
    if (ag_ckpt_ctl_init(&ctl, &ao, "main", acfg, -1, &err)) goto out;
    if (ag_ckpt_on(&ctl)) A.ctl = &ctl;
    A.run = ag_run_resume(&ao, "hwgym-muzero", acfg, ctl.resume, worker ? worker : "0", &err);
    if (!A.run) goto out;
    if (mz_agent_init(&A, &err)) goto out;
    bool learning = o->mode == MODE_MUZERO || o->mode == MODE_PROD || o->mode == MODE_LEARN;
    if (learning) {
        if (mz_setup_learning(&A, &err) || (advantage && mz_value_baseline(&A, &err)) || mz_heur_setup(&A, &err)) goto out;
        A.decide = o->mode == MODE_LEARN ? mz_decide_learn : o->model_true ? mz_decide_az : mz_decide_muzero;
        if (o->demo && !ctl.resume && mz_play_demo(&A, &err)) goto out;
        if (mz_elite_setup(&A, &err)) goto out;
    } else if (o->mode == MODE_SEARCH) {
        if (mz_setup_search(&A, &err)) goto out;
        A.decide = mz_decide_search;
    } else if (o->mode == MODE_ES) {
        if (mz_setup_es(&A, &err)) goto out;
    } else {
        A.decide = mz_decide_random;
    }
    if (ctl.resume && mz_ckpt_restore(&A, &err)) goto out;
    if (mz_agent_play(&A, &err)) goto out;
    if (save && A.net && mz_net_save(A.net, save, &err)) goto out;
    rc = 0;
out:
    if (!A.run && rc && err.msg[0]) fprintf(stderr, "hwgym-muzero: %s: %s\n", hw_code_name(err.code), err.msg);
    if (A.run) {
        json_t *x = json_object();
        bool have = isfinite(A.best);
        double agent_best = have ? A.best : NAN;
        double agent_lat = have ? json_number_value(json_object_get(A.best_metrics, "program_latency")) : NAN;
        json_object_set_new(x, "mode", json_string(MODES[o->mode]));
        json_object_set_new(x, "model", json_string(o->model_true ? "true" : "learned"));
        json_object_set_new(x, "env_steps", json_integer(A.env_steps));
        json_object_set_new(x, "cpu_s", json_real(mz_cpu_now() - A.cpu0));
        json_object_set_new(x, "demo_steps", json_integer(A.demo_steps));
        json_object_set_new(x, "games_completed", json_integer(A.games_done));
        json_object_set_new(x, "games_in_flight", json_integer(A.G));
        json_object_set_new(x, "games_retired", json_integer(A.retired));
        json_object_set_new(x, "losses_restored", json_integer(A.restores));
        json_object_set_new(x, "steps_rewound", json_integer(A.rewound));
        json_object_set_new(x, "simulations_per_move", json_integer(o->mcts.sims));
        json_object_set_new(x, "simulations", json_integer(A.sims));
        json_object_set_new(x, "train_steps", json_integer(A.train_steps));
        json_object_set_new(x, "num_buffers", json_integer(A.nbuf));
        json_object_set_new(x, "heuristic_return", json_real(A.heur_return));
        json_object_set_new(x, "heuristic_latency", json_real(A.heur_latency));
        json_object_set_new(x, "best_over_heuristic", have && A.heur_return > 0 ? json_real(agent_best / A.heur_return) : json_null());
        json_object_set_new(x, "minmax_floor", json_real(o->mcts.minmax_floor));
        json_object_set_new(x, "heuristic_prior", json_real(o->heur_prior));
        json_object_set_new(x, "float32", json_boolean(o->f32));
        {
            double nc = (double)(A.choice_all[0] + A.choice_all[1] + A.choice_all[2]);
            json_t *w = json_pack("{sfsfsf}", "copy", nc > 0 ? (double)A.choice_all[0] / nc : 0.0, "nocopy",
                                  nc > 0 ? (double)A.choice_all[1] / nc : 0.0, "drop", nc > 0 ? (double)A.choice_all[2] / nc : 0.0);
            json_object_set_new(x, "choices", w);
            json_t *ws = A.windows ? json_incref(A.windows) : json_array();
            if (A.window_games > 0) json_array_append_new(ws, mz_window_json(&A));
            json_object_set_new(x, "collapse_watch", ws);
        }
        json_object_set_new(x, "agent_return", have ? json_real(agent_best) : json_null());
        json_object_set_new(x, "agent_latency", have ? json_real(agent_lat) : json_null());
        /* MuZero-prod: the better mapping of the two by program latency (the production metric) */
        bool agent_wins = have && agent_lat < A.heur_latency;
        json_object_set_new(x, "prod_source", json_string(agent_wins ? "agent" : "heuristic"));
        json_object_set_new(x, "prod_latency", json_real(agent_wins ? agent_lat : A.heur_latency));
        json_object_set_new(x, "prod_speedup_over_heuristic", json_real(agent_wins ? A.heur_latency / agent_lat : 1.0));
        if (A.train_steps > 0) {
            json_t *l = json_pack("{sfsfsf}", "policy", A.last_loss[0], "value", A.last_loss[1], "reward", A.last_loss[2]);
            json_object_set_new(x, "last_loss", l);
        }
        if (o->mode == MODE_ES) json_object_set_new(x, "es_generations", json_integer(mz_es_generations(&A)));
        /* best_reward: the best complete game's return (prod: the better of agent and heuristic) */
        if (o->mode == MODE_PROD && !agent_wins) {
            json_object_set_new(x, "best_reward", json_real(A.heur_return));
            json_object_set_new(x, "best_action", json_string(A.heur_actions ? A.heur_actions : ""));
            json_object_set_new(x, "best_metrics", json_pack("{sssfsf}", "source", "heuristic", "program_latency", A.heur_latency, "return", A.heur_return));
        } else {
            json_object_set_new(x, "best_reward", have ? json_real(agent_best) : json_null());
            json_object_set_new(x, "best_action", have ? json_string(A.best_actions) : json_null());
            json_object_set_new(x, "best_metrics", have ? json_incref(A.best_metrics) : json_null());
        }
        rc = ag_run_finish(&A.run, x, rc != 0, &err, "hwgym-muzero");
        json_decref(x);
    }
    if (A.o.mode == MODE_SEARCH) mz_free_search(&A);
    else if (A.o.mode == MODE_ES) mz_free_es(&A);
    else if (A.net) mz_free_learning(&A);
    mz_elite_free(&A);
    mz_heur_free(&A);
    mz_agent_free(&A);
    if (A.rng) gsl_rng_free(A.rng);
    json_decref(acfg);
    ag_ckpt_ctl_free(&ctl);
    ag_opts_free(&ao);
    return rc;
}
