/* main.c - the hwgym-egrl command line: options, set-up, --eval-only transfer, --save, the
 * JSON summary (see egrl.h, docs/egrl.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egrl.h"

static const char *const mode_names[] = {"egrl", "ea", "pg", "greedy-dp"};

static int usage(ag_opts *o, const char *msg) {
    fprintf(stderr, "hwgym-egrl: %s\n", msg);
    ag_opts_free(o);
    return 2;
}

/* --eval-only: one map from the policy (the --load file, or without it the untrained GNN of
 * this seed, the control), decoded to fit the chip (capacity) or as the argmax, scored once */
static int eval_only(eg_ctx *c, gnn_net *n, bool capacity) {
    gnn_net *fresh = NULL;
    if (!n) {
        n = fresh = gnn_new(&c->p.pol);
        gnn_init(fresh, c->rng);
    }
    int64_t *a = malloc(sizeof(int64_t) * (size_t)c->D);
    if (capacity) {
        double *post = malloc(sizeof(double) * (size_t)c->D * (size_t)c->nmem);
        eg_gnn_posterior(c, n, post);
        eg_decode(c, post, a);
        free(post);
    } else {
        eg_gnn_act(c, n, a);
    }
    const char *w = fresh ? "untrained" : "loaded";
    double r;
    int rc = eg_evaluate(c, 1, a, &w, &r) < 0 ? -1 : 0;
    free(a);
    gnn_free(fresh);
    return rc;
}

static int save_policy(eg_ctx *c, const char *path, hw_err *err) {
    const double *src = c->p.mode == EG_PG || !c->best_gnn ? (c->pg ? c->pg->actor->params : NULL) : c->best_gnn;
    if (!src) return hw_fail(err, HW_E_BAD_CONFIG, "--save %s: the population has no GNN policy (--boltzmann-frac 1)", path);
    gnn_net *n = gnn_new(&c->p.pol);
    memcpy(n->params, src, sizeof(double) * n->nparams);
    FILE *f = fopen(path, "wb");
    int rc = -1;
    if (!f) hw_fail(err, HW_E_BAD_CONFIG, "--save %s: cannot open for writing", path);
    else {
        rc = gnn_save(n, f, err);
        if (fclose(f) && !rc) rc = hw_fail(err, HW_E_INTERNAL, "--save %s: write failed", path);
    }
    gnn_free(n);
    return rc;
}

int main(int argc, char **argv) {
    const char *mode = "egrl", *save = NULL, *load = NULL, *curve = NULL, *decode = NULL, *features = "table1";
    int64_t pop = 20, tour = 3, rollouts = 1, hidden = 128, out = 128, heads = 4, depth = 4, chidden = 32, cdepth = 4,
            batch = 24, buffer = 100000;
    double bzf = 0.2, elite = 0.2, mutp = 0.9, cxp = 0.3, lr = 1e-3, alpha = 0.05, tau = 1e-3, rscale = 5, pgnoise = 1.0,
           mutf = 0.1, muts = 0.1, gamma = 0.99, upe = 1.0;
    bool eval = false;
    ag_optdef extra[] = {
        {"mode", AG_OPT_STRING, &mode, "egrl | ea | pg | greedy-dp (default egrl)"},
        {"pop", AG_OPT_INT, &pop, "EA population size (20)"},
        {"boltzmann-frac", AG_OPT_DOUBLE, &bzf, "fraction of the population that are Boltzmann chromosomes (0.2)"},
        {"elite-frac", AG_OPT_DOUBLE, &elite, "elite fraction, shielded from mutation (0.2)"},
        {"tournament", AG_OPT_INT, &tour, "tournament size (3)"},
        {"mut-prob", AG_OPT_DOUBLE, &mutp, "probability that an offspring is mutated (0.9)"},
        {"cx-prob", AG_OPT_DOUBLE, &cxp, "probability of crossover / seeding with an elite (0.3)"},
        {"mut-frac", AG_OPT_DOUBLE, &mutf, "fraction of a weight tensor's entries mutated (0.1)"},
        {"mut-strength", AG_OPT_DOUBLE, &muts, "relative std of a weight mutation (0.1)"},
        {"pg-rollouts", AG_OPT_INT, &rollouts, "noisy PG-learner evaluations per generation (1)"},
        {"pg-noise", AG_OPT_DOUBLE, &pgnoise, "std of the Gaussian on the PG learner's logits when exploring (1.0)"},
        {"hidden", AG_OPT_INT, &hidden, "GNN hidden size (128)"},
        {"out", AG_OPT_INT, &out, "GNN output size (128)"},
        {"heads", AG_OPT_INT, &heads, "GNN attention heads (4)"},
        {"depth", AG_OPT_INT, &depth, "GNN U-Net depth (4)"},
        {"critic-hidden", AG_OPT_INT, &chidden, "critic GNN hidden and output size (32)"},
        {"critic-depth", AG_OPT_INT, &cdepth, "critic GNN depth (4)"},
        {"batch", AG_OPT_INT, &batch, "SAC batch (24)"},
        {"updates-per-eval", AG_OPT_DOUBLE, &upe, "SAC gradient steps per evaluation (1, Table 2)"},
        {"buffer", AG_OPT_INT, &buffer, "shared replay capacity (100000)"},
        {"lr", AG_OPT_DOUBLE, &lr, "actor and critic learning rate (1e-3)"},
        {"alpha", AG_OPT_DOUBLE, &alpha, "entropy coefficient (0.05)"},
        {"tau", AG_OPT_DOUBLE, &tau, "target network rate (1e-3)"},
        {"gamma", AG_OPT_DOUBLE, &gamma, "discount (0.99)"},
        {"reward-scale", AG_OPT_DOUBLE, &rscale, "reward multiplier for the learner (5)"},
        {"save", AG_OPT_STRING, &save, "write the best GNN policy to FILE at the end"},
        {"load", AG_OPT_STRING, &load, "GNN policy to start from (with --eval-only: score it once)"},
        {"eval-only", AG_OPT_FLAG, &eval, "score the --load policy (none: the untrained GNN of --seed) once, without training"},
        {"decode", AG_OPT_STRING, &decode, "capacity | argmax: --eval-only's map is the posterior decoded to fit the chip (default) or its argmax"},
        {"features", AG_OPT_STRING, &features, "table1 | capacity: the GNN's node inputs, Table 1's columns alone or with the chip-relative sizes (docs/egrl.md)"},
        {"curve", AG_OPT_STRING, &curve, "CSV of every evaluation: sample,gen,worker,reward,speedup,best_speedup"},
        {NULL, 0, NULL, NULL}};
    ag_opts o;
    int ec;
    if (ag_parse_args(argc, argv, "hwgym-egrl",
                      "EGRL (GNN + Boltzmann population with a SAC-discrete learner) and its baselines on placement-v0", extra,
                      &o, &ec))
        return ec;
    if (!o.env) o.env = "placement-v0";
    eg_ctx c;
    memset(&c, 0, sizeof c);
    int m = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(mode, mode_names[k])) m = k;
    if (m < 0) return usage(&o, "--mode: expected egrl, ea, pg or greedy-dp");
    if (pop < 2 || pop > 10000) return usage(&o, "--pop: expected 2 .. 10000");
    if (!(bzf >= 0 && bzf <= 1)) return usage(&o, "--boltzmann-frac: expected 0 .. 1");
    if (!(elite > 0 && elite < 1)) return usage(&o, "--elite-frac: expected (0, 1)");
    if (tour < 1 || rollouts < 0 || rollouts > 64 || batch < 1 || buffer < 1) return usage(&o, "--tournament, --pg-rollouts (0..64), --batch, --buffer: out of range");
    if (decode && !eval) return usage(&o, "--decode works with --eval-only");
    if (!decode) decode = "capacity";
    if (strcmp(decode, "argmax") && strcmp(decode, "capacity")) return usage(&o, "--decode: expected capacity (the default) or argmax");
    const bool cap_decode = eval && !strcmp(decode, "capacity");
    if (strcmp(features, "table1") && strcmp(features, "capacity")) return usage(&o, "--features: expected table1 or capacity");
    const bool cap_feat = !strcmp(features, "capacity");
    if (!(upe >= 0 && upe <= 64)) return usage(&o, "--updates-per-eval: expected 0 .. 64");
    eg_params *p = &c.p;
    p->mode = (eg_mode)m;
    p->pop = pop;
    p->pg_rollouts = m == EG_EGRL ? rollouts : rollouts > 0 ? rollouts : 1;
    p->bz_frac = bzf;
    p->elite_frac = elite;
    p->mut_prob = mutp;
    p->cx_prob = cxp;
    p->tournament = tour;
    p->mut_frac = mutf;
    p->mut_strength = muts;
    p->super_prob = 0.05;
    p->super_strength = 10;
    p->reset_prob = 0.05;
    p->weight_limit = 1e6;
    p->bz = bz_mut_default();
    p->pg_noise = pgnoise;
    p->updates_per_eval = upe;
    p->pol = (gnn_cfg){1, (int)hidden, (int)out, (int)heads, (int)depth, 1, 0.5};
    p->sac = sacd_cfg_default();
    p->sac.critic = (gnn_cfg){1, (int)chidden, (int)chidden, (int)heads, (int)cdepth, 1, 0.5};
    p->sac.actor_lr = p->sac.critic_lr = lr;
    p->sac.alpha = alpha;
    p->sac.tau = tau;
    p->sac.gamma = gamma;
    p->sac.reward_scale = rscale;
    p->sac.batch = (int)batch;
    p->sac.buffer = buffer;
    hw_err err = {0};
    if (gnn_cfg_check(&p->pol, &err) || gnn_cfg_check(&p->sac.critic, &err)) return usage(&o, err.msg);
    c.o = &o;
    c.rng = ag_rng_new(ag_rng_derive(o.seed, 1));
    c.best_gnn_fit = -INFINITY;
    c.curve_best = 0;
    int rc = 1;
    json_t *acfg = NULL;
    gnn_net *loaded = NULL;
    ag_ckpt_ctl ctl = {0};
    c.sess = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);
    if (!c.sess || eg_workload(&c, &err) || (cap_feat && eg_capacity_features(&c, &err)) ||
        (cap_decode && eg_decode_init(&c, &err)))
        goto out;
    p->pol.in = c.F;
    p->pol.n_out = 2 * c.nmem;
    if (load) {
        FILE *f = fopen(load, "rb");
        if (!f) {
            hw_fail(&err, HW_E_BAD_CONFIG, "--load %s: cannot open", load);
            goto out;
        }
        loaded = gnn_load(f, &err);
        fclose(f);
        if (!loaded) goto out;
        if (loaded->cfg.in != c.F || loaded->cfg.n_out != 2 * c.nmem) {
            hw_fail(&err, HW_E_BAD_CONFIG, "--load %s: policy has %d inputs / %d outputs, this workload needs %d / %d (--features must be "
                    "the training run's)", load,
                    loaded->cfg.in, loaded->cfg.n_out, c.F, 2 * c.nmem);
            goto out;
        }
        p->pol = loaded->cfg; /* the file's architecture wins */
    }
    acfg = ag_opts_to_json(&o, extra);
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    if (ag_ckpt_on(&ctl) && !eval) c.ctl = &ctl;
    if (curve) {
        c.curve = ctl.resume ? fopen(curve, "r+") : NULL; /* resumed: cut back to the checkpoint's length below */
        if (!c.curve) {
            c.curve = fopen(curve, "w");
            if (c.curve) fprintf(c.curve, "sample,gen,worker,reward,speedup,best_speedup\n");
        }
        if (!c.curve) {
            hw_fail(&err, HW_E_BAD_CONFIG, "--curve %s: cannot open for writing", curve);
            goto out;
        }
    }
    char agent[64];
    snprintf(agent, sizeof agent, "hwgym-egrl --mode %s%s", eval ? "eval-only" : mode_names[m], "");
    c.run = ag_run_resume(&o, agent, acfg, c.ctl ? ctl.resume : NULL, "*", &err);
    if (!c.run) goto out;
    int src = 0;
    if (eval) src = eval_only(&c, loaded, cap_decode);
    else {
        if (m == EG_EGRL || m == EG_PG) {
            p->sac.actor = p->pol;
            c.pg = sacd_new(&p->sac, c.g, c.feat, c.F, 2, c.nmem, o.seed, &err);
            if (!c.pg) {
                src = -1;
                c.err = err;
            } else if (loaded) memcpy(c.pg->actor->params, loaded->params, sizeof(double) * loaded->nparams);
        }
        if (!src && (m == EG_EGRL || m == EG_EA)) {
            eg_pop_init(&c);
            if (loaded) memcpy(c.pop[0].net->params, loaded->params, sizeof(double) * loaded->nparams);
        }
        if (!src && eg_ckpt_restore(&c, &c.err)) src = -1;
        if (!src && (m == EG_EGRL || m == EG_EA)) src = eg_run_population(&c);
        else if (!src && m == EG_PG) src = eg_run_pg(&c);
        else if (!src) src = eg_run_dp(&c);
    }
    if (src) err = c.err;
    if (!src && save && !eval && m != EG_DP && save_policy(&c, save, &err)) src = -1;
    json_t *ex = json_object();
    json_object_set_new(ex, "mode", json_string(eval ? "eval-only" : mode_names[m]));
    json_object_set_new(ex, "workload_nodes", json_integer(c.N));
    json_object_set_new(ex, "generations", json_integer(c.gens));
    json_object_set_new(ex, "evaluate_calls", json_integer(c.calls));
    json_object_set_new(ex, "valid_fraction", json_real(c.evals ? (double)c.valid / (double)c.evals : 0));
    json_object_set_new(ex, "best_speedup", json_real(c.curve_best));
    if (eval) {
        json_object_set_new(ex, "policy", json_string(loaded ? "loaded" : "untrained"));
        json_object_set_new(ex, "decode", json_string(decode));
    }
    if (m == EG_EGRL || m == EG_EA) {
        json_object_set_new(ex, "population", json_integer(c.npop));
        json_object_set_new(ex, "boltzmann", json_integer(c.nbz));
        json_object_set_new(ex, "best_gnn_reward", isfinite(c.best_gnn_fit) ? json_real(c.best_gnn_fit) : json_null());
    }
    if (c.pg && !eval) {
        json_object_set_new(ex, "updates", json_integer(c.updates));
        json_object_set_new(ex, "final", json_pack("{sfsfsfsf}", "q_loss", c.last.q_loss, "pi_loss", c.last.pi_loss, "entropy",
                                                   c.last.entropy, "q_pi", c.last.q_pi));
    }
    rc = ag_run_finish(&c.run, ex, src != 0, &err, "hwgym-egrl");
    json_decref(ex);
    goto done;
out:
    fprintf(stderr, "hwgym-egrl: %s\n", err.msg);
done:
    if (c.curve) fclose(c.curve);
    json_decref(acfg);
    gnn_free(loaded);
    eg_pop_free(&c);
    sacd_free(c.pg);
    gnn_graph_free(c.g);
    free(c.feat);
    free(c.best_gnn);
    free(c.dp_cur);
    free(c.dec_bytes);
    free(c.dec_last);
    ag_ckpt_ctl_free(&ctl);
    ag_sess_free(c.sess);
    gsl_rng_free(c.rng);
    ag_opts_free(&o);
    return rc;
}
