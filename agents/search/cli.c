/* cli.c - the hwgym-search command line (see docs/search.md). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "search.h"

typedef struct obs_ud {
    ag_run *run;
    const hs_space *space;
    int fail;
    hw_err err;
    int64_t skip; /* samples replayed from a checkpoint: already in the trial DB */
} obs_ud;

static void observe(void *ud, int64_t index, const double *x, double reward, const json_t *metrics) {
    obs_ud *u = ud;
    if (u->fail || index < u->skip) return;
    json_t *pt = hs_point_json(u->space, x);
    if (ag_run_eval(u->run, "0", index, pt, reward, metrics, &u->err)) u->fail = 1;
    json_decref(pt);
}

/* A search needs an env whose action is a whole design point (its evaluate() scores one action).
 * Sequential games (sched-v0: one table row per step, mmap-v0: one buffer per step) have an
 * evaluate() over whole episodes instead: probe a few points of the action space and refuse with
 * the env's own reason when one is not a design point. Probes are not logged or counted. */
static int probe_design_space(ag_sess *sess, const hs_space *space, hw_err *err) {
    int n = space->scalar && space->card[0] > 0 ? (int)(space->card[0] < 16 ? space->card[0] : 16) : 2;
    double *x = calloc((size_t)space->dim + 1, sizeof(double));
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        for (int i = 0; i < space->dim; i++) {
            double lo = space->low[i], hi = space->high[i];
            x[i] = space->scalar ? (double)k : k == 0 ? lo : space->card[i] > 0 ? (double)((int64_t)((lo + hi) / 2)) : (lo + hi) / 2;
        }
        json_t *pt = hs_point_json(space, x), *m = NULL;
        double r;
        hw_err e = {0};
        if (ag_sess_evaluate(sess, pt, &r, &m, &e)) {
            char *ps = json_dumps(pt, JSON_ENCODE_ANY | JSON_COMPACT);
            hw_fail(err, HW_E_NOT_SUPPORTED,
                    "%s: an action of its action space is not a design point the env can score (evaluate(%s): %s); "
                    "it is a sequential env (one action per step): use a step-based agent (hwgym-ppo, hwgym-sac, "
                    "hwgym-tdm-ppo) instead",
                    sess->env, ps ? ps : "?", e.msg[0] ? e.msg : hw_code_name(e.code));
            free(ps);
            rc = -1;
        }
        json_decref(pt);
        json_decref(m);
    }
    free(x);
    return rc;
}

int hs_main(int argc, char **argv) {
    const char *algo = "random", *optstr = NULL;
    int64_t batch = 0;
    ag_optdef extra[] = {
        {"algo", AG_OPT_STRING, &algo, "random|ga|gamma|bo|es|aco|sa (default random)"},
        {"batch", AG_OPT_INT, &batch, "points per evaluate_batch: population, ants, BO's q, SA's chains (default: 64; bo 8; aco 16; sa 1)"},
        {"opt", AG_OPT_STRING, &optstr, "hyperparameters, KEY=VALUE[,KEY=VALUE...] (docs/search.md; e.g. ga_elite=4)"},
        {NULL, 0, NULL, NULL}};
    ag_opts o;
    int ec;
    if (ag_parse_args(argc, argv, "hwgym-search", "black-box search baselines over an env's action space (one evaluate_batch per generation)",
                      extra, &o, &ec))
        return ec;
    /* BO's matrices are small (<= 264): OpenBLAS threads only add overhead (and compete with
     * the server's workers on the same host). */
    openblas_set_num_threads(1);
    hw_err err = {0};
    int rc = 1;
    ag_sess *sess = NULL;
    hs_space *space = NULL;
    ag_run *run = NULL;
    json_t *acfg = NULL;
    ag_ckpt_ctl ctl = {0};
    hs_ckpt_obj ck = {0};
    hs_opts so = {0};
    hs_params_default(&so.p);
    int a = hs_algo_from_name(algo);
    if (a < 0) {
        fprintf(stderr, "hwgym-search: --algo %s: unknown (random, ga, gamma, bo, es, aco, sa)\n", algo);
        ag_opts_free(&o);
        return 2;
    }
    if (!o.env) {
        fprintf(stderr, "hwgym-search: --env is required\n");
        ag_opts_free(&o);
        return 2;
    }
    if (batch < 0 || batch > 100000) {
        fprintf(stderr, "hwgym-search: --batch %lld: expected 0 .. 100000\n", (long long)batch);
        ag_opts_free(&o);
        return 2;
    }
    if (optstr) {
        char *copy = strdup(optstr), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if (hs_params_set(&so.p, tok, &err)) {
                fprintf(stderr, "hwgym-search: %s\n", err.msg);
                free(copy);
                ag_opts_free(&o);
                return 2;
            }
        free(copy);
    }
    so.algo = (hs_algo)a;
    so.seed = o.seed;
    so.budget = o.budget;
    so.batch = batch > 0 ? (int)batch : hs_default_batch(so.algo);
    sess = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);
    if (!sess) goto out;
    if (!strcmp(o.env, "sched-v0")) {
        /* sched-v0's action is one row choice of a sequential game; its design point is a whole
         * scheduling table, searched as a genome of prime-factor placements (sched_genome.c) */
        space = hs_sched_genome_space(o.config, &err);
        if (!space) goto out;
    } else {
        space = hs_space_from_hw(sess->act_space, &err);
        if (!space) goto out;
        if (probe_design_space(sess, space, &err)) goto out;
    }
    acfg = ag_opts_to_json(&o, extra);
    json_object_set_new(acfg, "batch", json_integer(so.batch));
    json_object_set_new(acfg, "hyperparameters", hs_params_json(&so.p, so.algo));
    char agent[64];
    snprintf(agent, sizeof agent, "hwgym-search --algo %s", hs_algo_name(so.algo));
    if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, -1, &err)) goto out;
    run = ag_run_resume(&o, agent, acfg, ctl.resume, "0", &err);
    if (!run) goto out;
    hs_sess_obj so_obj = {sess, space};
    if (hs_ckpt_obj_init(&ck, hs_sess_objective(&so_obj), space, &ctl, run, &err)) goto out;
    obs_ud ud = {run, space, 0, {0}, ck.replay_n};
    so.observer = observe;
    so.observer_ud = &ud;
    hs_objective obj = hs_ckpt_objective(&ck);
    hs_result res;
    int src = hs_run(&so, space, &obj, &res, &err);
    if (ud.fail) {
        err = ud.err;
        src = -1;
    }
    if (src == 0 && res.best_index < 0 && res.calls > 0) {
        hw_fail(&err, HW_E_NOT_SUPPORTED, "%s: no point of the run could be scored (every evaluate failed)", sess->env);
        src = -1;
    }
    json_t *ex = json_object();
    json_object_set_new(ex, "algo", json_string(hs_algo_name(so.algo)));
    json_object_set_new(ex, "batch", json_integer(so.batch));
    json_object_set_new(ex, "evaluate_calls", json_integer(res.calls));
    json_object_set_new(ex, "best_index", json_integer(res.best_index));
    json_object_set_new(ex, "best_point", res.best_index >= 0 ? hs_point_decoded(space, res.best_x) : json_null());
    if (!src && res.best_index >= 0 && !sess->local) {
        /* the lean evaluate_batch logs numeric metrics only: the summary's best_metrics are those
         * of one full evaluate of the best point (e.g. maestro-v0's directives); not a sample */
        json_t *bp = hs_point_json(space, res.best_x), *fm = NULL;
        double rr;
        hw_err e3 = {0};
        if (ag_sess_evaluate(sess, bp, &rr, &fm, &e3) == 0 && json_is_object(fm)) json_object_set_new(ex, "best_metrics", fm);
        else json_decref(fm);
        json_decref(bp);
    }
    rc = ag_run_finish(&run, ex, src != 0, &err, "hwgym-search");
    json_decref(ex);
    hs_result_free(&res);
    goto done;
out:
    fprintf(stderr, "hwgym-search: %s\n", err.msg);
done:
    if (run) ag_run_end(run, NULL, &err);
    hs_ckpt_obj_free(&ck);
    ag_ckpt_ctl_free(&ctl);
    json_decref(acfg);
    hs_space_free(space);
    ag_sess_free(sess);
    ag_opts_free(&o);
    return rc;
}
