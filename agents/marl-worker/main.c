/* main.c - hwgym-marl-worker: one decentralised agent of a multi-agent session
 * (MARL DNN-mapping / DRAM MARL papers). It joins the session under its agent name, controls
 * only its own action dimensions with its own policy, sees the shared observation and reward,
 * and steps through the server's barriers. Usually started by hwgym-marl (docs/marl.md). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "hwgym_client.h"
#include "hwgym_trials.h"
#include "policy.h"

static const char *usage =
    "usage: hwgym-marl-worker --endpoint EP --session TOKEN --agent NAME --budget N [options]\n"
    "One decentralised MARL agent: joins multi-agent session TOKEN as NAME and steps N env\n"
    "samples (every agent of the session must be given the same N).\n"
    "  --seed S             reset seed of episode e is S+e; the policy seed is derived from S and NAME (0)\n"
    "  --policy P           ppo (agents/lib PPO, MLP) | ppo-linear | random (ppo)\n"
    "  --policy-config JSON PPO hyper-parameters (docs/marl.md)\n"
    "  --db PATH --run ID   log this worker's trials (worker = NAME) into run ID of the trial DB\n"
    "  --timeout-ms T       client timeout per call (60000; larger than the session's agent_timeout_ms)\n"
    "  --checkpoint FILE    checkpoint file (owner = NAME); with --checkpoint-every N the whole\n"
    "                       policy state is saved before the first reset after every N samples\n"
    "  --resume-at S        continue from this agent's checkpoint at S samples (0: start afresh),\n"
    "                       dropping its trials logged after S (hwgym-marl --resume picks S)\n"
    "  --quiet              no progress on stderr\n"
    "Prints a JSON summary on stdout: agent, samples, episodes, best_reward, best_action, updates.\n"
    "Exit status: 0 ok, 1 the run failed (e.g. TIMEOUT: another agent stopped), 2 bad usage.\n";

static uint64_t fnv1a(const char *s, uint64_t seed) {
    uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int bad(const char *fmt, const char *a) {
    fprintf(stderr, "hwgym-marl-worker: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static int parse_ll(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    const char *endpoint = NULL, *token = NULL, *agent = NULL, *policy = "ppo", *pcfg_text = NULL, *dbpath = NULL;
    long long seed = 0, budget = -1, run = 0, timeout_ms = 60000, ck_every = 0, resume_at = -1;
    const char *ck_path = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (i + 1 >= argc) return bad("%s: missing value (or unknown option)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--endpoint")) endpoint = v;
        else if (!strcmp(a, "--session")) token = v;
        else if (!strcmp(a, "--agent")) agent = v;
        else if (!strcmp(a, "--policy")) policy = v;
        else if (!strcmp(a, "--policy-config")) pcfg_text = v;
        else if (!strcmp(a, "--db")) dbpath = v;
        else if (!strcmp(a, "--checkpoint")) ck_path = v;
        else if (!strcmp(a, "--checkpoint-every")) {
            if (parse_ll(v, &ck_every) || ck_every < 0) return bad("--checkpoint-every: '%s' is not a count", v);
        } else if (!strcmp(a, "--resume-at")) {
            if (parse_ll(v, &resume_at) || resume_at < 0) return bad("--resume-at: '%s' is not a sample count", v);
        } else if (!strcmp(a, "--seed")) {
            if (parse_ll(v, &seed)) return bad("--seed: '%s' is not an integer", v);
        } else if (!strcmp(a, "--budget")) {
            if (parse_ll(v, &budget) || budget < 1) return bad("--budget: '%s' is not a positive integer", v);
        } else if (!strcmp(a, "--run")) {
            if (parse_ll(v, &run) || run < 1) return bad("--run: '%s' is not a run id", v);
        } else if (!strcmp(a, "--timeout-ms")) {
            if (parse_ll(v, &timeout_ms) || timeout_ms < 1) return bad("--timeout-ms: '%s' is not a positive integer", v);
        } else
            return bad("unknown option '%s'", a);
    }
    if (!endpoint) return bad("missing %s", "--endpoint");
    if (!token) return bad("missing %s", "--session");
    if (!agent) return bad("missing %s", "--agent");
    if (budget < 1) return bad("missing %s", "--budget");
    if (dbpath && !run) return bad("%s needs --run ID", "--db");
    if ((ck_every > 0 || resume_at >= 0) && !ck_path) return bad("%s", "--checkpoint-every/--resume-at need --checkpoint FILE");

    hw_err err = {0};
    json_t *pcfg = NULL;
    if (pcfg_text) {
        json_error_t je;
        pcfg = pcfg_text[0] == '@' ? json_load_file(pcfg_text + 1, 0, &je) : json_loads(pcfg_text, 0, &je);
        if (!pcfg) {
            fprintf(stderr, "hwgym-marl-worker %s: --policy-config: %s\n", agent, je.text);
            return 2;
        }
    }
    int rc = 1;
    hwc_client *c = NULL;
    hwc_session s = {0};
    hwc_result r = {0};
    marl_policy *pol = NULL;
    hwt_db *db = NULL;
    int64_t *act = NULL, *best_action = NULL;
    json_t *best_joint = NULL;
    const char *phase = "connect";
    long long samples = 0, episode = 0;
    double best = -INFINITY;
    ag_ckpt_ctl ctl = {0};
    int64_t kill_at = ag_test_kill_at();

    c = hwc_connect(NULL, endpoint, (int)timeout_ms, &err);
    if (!c) goto fail;
    phase = "join";
    if (hwc_join(c, token, agent, &s, &err)) goto fail;
    const json_t *nvec = json_object_get(s.action_space, "nvec");
    const char *type = json_string_value(json_object_get(s.action_space, "type"));
    int D = (int)s.act_numel;
    int64_t *nv = calloc((size_t)(D > 0 ? D : 1), sizeof(int64_t));
    for (int d = 0; d < D; d++) {
        if (type && !strcmp(type, "MultiBinary")) nv[d] = 2;
        else if (type && !strcmp(type, "Discrete")) nv[d] = json_integer_value(json_object_get(s.action_space, "n"));
        else nv[d] = json_integer_value(json_array_get(nvec, (size_t)d));
        if (nv[d] < 1) {
            free(nv);
            hw_fail(&err, HW_E_NOT_SUPPORTED, "action space of agent '%s' is not integer (type %s)", agent,
                    type ? type : "?");
            goto fail;
        }
    }
    phase = "policy";
    pol = marl_policy_new(policy, D, nv, (int)s.obs_numel, fnv1a(agent, (uint64_t)seed), pcfg, budget, &err);
    free(nv);
    if (!pol) goto fail;
    if (dbpath) {
        phase = "open --db";
        hwt_opts o = hwt_opts_default();
        db = hwt_open(dbpath, &o, &err);
        if (!db) goto fail;
    }
    act = calloc((size_t)D, sizeof *act);
    if (ck_path) {
        phase = "checkpoint";
        ag_opts ko = {0};
        ko.checkpoint = ck_path;
        ko.checkpoint_every = ck_every;
        ko.resume = resume_at >= 0;
        json_t *ident = json_pack("{s:s, s:O?, s:I, s:I}", "policy", policy, "policy_config", pcfg, "seed",
                                  (json_int_t)seed, "budget", (json_int_t)budget);
        int e = ag_ckpt_ctl_init(&ctl, &ko, agent, ident, resume_at, &err);
        json_decref(ident);
        if (e) goto fail;
        if (ctl.resume) {
            int64_t v[2];
            if (marl_policy_ckpt_get(pol, ctl.resume, &err) || ag_ckpt_get_i64(ctl.resume, "worker.counts", v, 2, &err) ||
                ag_ckpt_get_real(ctl.resume, "worker.best", &best, &err) ||
                !(best_joint = ag_ckpt_get_json(ctl.resume, "worker.best_action", &err)))
                goto fail;
            samples = v[0];
            episode = v[1];
            kill_at = 0; /* the test hook preempts first attempts only */
            if (json_is_null(best_joint)) {
                json_decref(best_joint);
                best_joint = NULL;
            }
        }
        if (db && resume_at >= 0 && ag_trials_truncate(hwt_sqlite(db), run, agent, samples, &err)) goto fail;
        if (!quiet && resume_at >= 0)
            fprintf(stderr, "[%s] resuming at sample %lld (episode %lld)\n", agent, samples, episode);
    }
    double t0 = hwt_now(), last = t0;
    while (samples < budget) {
        if (ag_ckpt_due(&ctl, samples)) {
            phase = "checkpoint";
            if (db && hwt_flush(db, &err)) goto fail;
            ag_ckpt *ck = ag_ckpt_new();
            int64_t v[2] = {samples, episode};
            marl_policy_ckpt_put(pol, ck);
            ag_ckpt_put_i64(ck, "worker.counts", v, 2);
            ag_ckpt_put_real(ck, "worker.best", best);
            ag_ckpt_put_json(ck, "worker.best_action", best_joint);
            int e = ag_ckpt_commit(&ctl, ck, NULL, samples, &err);
            ag_ckpt_free(ck);
            if (e) goto fail;
        }
        int64_t rs = seed + episode;
        phase = "reset";
        hwc_result_free(&r);
        if (hwc_reset(c, &s, &rs, NULL, &r, &err)) goto fail;
        for (long long step = 0; samples < budget; step++) {
            marl_policy_act(pol, r.obs, act);
            phase = "step";
            hwc_result rr = {0};
            if (hwc_step_i64(c, &s, act, (size_t)D, &rr, &err)) goto fail;
            hwc_result_free(&r);
            r = rr;
            double rew = r.reward[0];
            bool done = r.terminated[0] || r.truncated[0];
            marl_policy_observe(pol, rew, done);
            const json_t *joint = json_object_get(r.reply, "action");
            if (rew > best) {
                best = rew;
                json_decref(best_joint);
                best_joint = joint ? json_deep_copy(joint) : NULL;
            }
            if (db) {
                json_t *obs = json_array();
                for (size_t k = 0; k < r.obs_len; k++) json_array_append_new(obs, json_real(r.obs[k]));
                json_t *own = NULL;
                if (!joint) {
                    own = json_array();
                    for (int d = 0; d < D; d++) json_array_append_new(own, json_integer(act[d]));
                }
                hwt_trial t = {.run_id = run,
                               .worker = agent,
                               .episode = episode,
                               .step = step,
                               .kind = HWT_STEP,
                               .has_reset_seed = true,
                               .reset_seed = rs,
                               .action = joint ? joint : own,
                               .observation = obs,
                               .has_reward = true,
                               .reward = rew,
                               .terminated = r.terminated[0],
                               .truncated = r.truncated[0],
                               .metrics = json_is_object(r.info) ? r.info : NULL,
                               .feasible = -1};
                int lr = hwt_add_trial(db, &t, &err);
                json_decref(obs);
                json_decref(own);
                phase = "log";
                if (lr) goto fail;
            }
            samples++;
            if (kill_at > 0 && samples == kill_at) raise(SIGKILL); /* test hook: a preemption */
            double now = hwt_now();
            if (!quiet && now - last > (ag_progress_interval() > 2.0 ? ag_progress_interval() : 2.0)) {
                last = now;
                fprintf(stderr, "[%s] samples %lld/%lld  best %.6g  rate %.0f/s\n", agent, samples, budget, best,
                        samples / (now - t0));
            }
            if (done) break;
        }
        episode++;
    }
    if (db && hwt_close(db, &err)) {
        db = NULL;
        phase = "close --db";
        goto fail;
    }
    db = NULL;
    {
        json_t *sum = json_pack("{s:s, s:I, s:I, s:f, s:f, s:i, s:s}", "agent", agent, "samples", (json_int_t)samples,
                                "episodes", (json_int_t)episode, "best_reward", best, "wall_s", hwt_now() - t0,
                                "updates", marl_policy_updates(pol), "policy", policy);
        json_object_set(sum, "best_action", best_joint ? best_joint : json_null());
        char *txt = json_dumps(sum, JSON_COMPACT | JSON_REAL_PRECISION(17));
        printf("%s\n", txt);
        free(txt);
        json_decref(sum);
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "hwgym-marl-worker %s: %s after %lld samples: %s: %s\n", agent, phase, samples,
            hw_code_name(err.code), err.msg);
    rc = 1;
out:
    if (db) hwt_close(db, NULL);
    hwc_result_free(&r);
    hwc_session_free(&s);
    if (c) hwc_disconnect(c);
    marl_policy_free(pol);
    free(act);
    free(best_action);
    json_decref(best_joint);
    json_decref(pcfg);
    ag_ckpt_ctl_free(&ctl);
    return rc;
}
