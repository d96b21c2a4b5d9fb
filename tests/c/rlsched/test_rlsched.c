/* test_rlsched.c - hwgym-rlsched: the paper's PPO loss (Smooth-L1 critic + L2 penalty) against
 * finite differences, the entropy schedule, masking, learning, network mode, determinism, the
 * trial log and the command line (a real binary, in process and through a real server). */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "../common/hwtest.h"
#include "ppo.h"
#include "rlsched.h"

/* A small ResNet-50 layer keeps every brute-force step cheap. */
#define SMALL_LAYER "{\"accelerator\":\"eyeriss_v1\",\"layer\":{\"C\":32,\"K\":64,\"R\":3,\"S\":3,\"P\":14,\"Q\":14}}"

/* The whole minibatch loss with the RL-Scheduling critic (Smooth-L1 + L2 on the critic's weights)
 * against central differences; value targets are spread so that both Huber branches occur. */
Test(rlsched, ppo_loss_smooth_l1_l2_gradient_check) {
    ppo_cfg c = ppo_cfg_default();
    c.num_steps = 10;
    c.hidden = 5;
    c.ent_coef = 0.07;
    c.vloss = PPO_VLOSS_SMOOTH_L1;
    c.critic_l2 = 0.01;
    int64_t nvec[1] = {6};
    ppo *p = ppo_new(&c, 4, PPO_MCAT, 1, nvec, 3);
    gsl_rng *r = ag_rng_new(5);
    for (size_t i = 0; i < p->actor->nparams; i++) p->actor->params[i] += 0.3 * (ag_rng_uniform(r) - 0.5);
    int small = 0, large = 0;
    for (int t = 0; t < 10; t++) {
        double obs[4] = {ag_rng_uniform(r), ag_rng_uniform(r) - 0.5, ag_rng_uniform(r) * 2, -ag_rng_uniform(r)};
        uint8_t mask[6] = {1, 1, 0, 1, 1, 1};
        int64_t a;
        double lp, v;
        ppo_act(p, obs, mask, r, &a, NULL, &lp, &v);
        cr_assert_neq(a, 2, "a masked action was sampled");
        double rew = t % 2 ? 3.0 : 0.05 * ag_rng_uniform(r); /* |v - R| above and below 1 */
        ppo_store(p, obs, mask, &a, NULL, lp - 0.3 * (t % 3 - 1), v, rew, t == 6);
    }
    double next[4] = {0.1, 0.2, 0.3, 0.4};
    ppo_compute_gae(p, next);
    for (int t = 0; t < 10; t++) {
        double v = ppo_value(p, p->b_obs + (size_t)t * 4);
        if (fabs(v - p->b_ret[t]) < 1) small++;
        else large++;
    }
    cr_assert(small > 0 && large > 0, "both Huber branches (%d small, %d large)", small, large);
    int idx[7] = {0, 1, 3, 4, 6, 8, 9};
    ppo_minibatch_grad(p, idx, 7, NULL);
    size_t na = p->actor->nparams, nc = p->critic->nparams;
    double *ga = malloc(sizeof(double) * na), *gc = malloc(sizeof(double) * nc);
    memcpy(ga, p->actor->grads, sizeof(double) * na);
    memcpy(gc, p->critic->grads, sizeof(double) * nc);
    double eps = 1e-6, worst = 0;
    for (size_t i = 0; i < na + nc; i++) {
        double *w = i < na ? &p->actor->params[i] : &p->critic->params[i - na];
        double g = i < na ? ga[i] : gc[i - na], w0 = *w;
        *w = w0 + eps;
        double lp = ppo_minibatch_grad(p, idx, 7, NULL);
        *w = w0 - eps;
        double lm = ppo_minibatch_grad(p, idx, 7, NULL);
        *w = w0;
        double num = (lp - lm) / (2 * eps), e = fabs(num - g) / fmax(1e-6, fabs(num) + fabs(g));
        if (e > worst) worst = e;
        cr_assert(e < 1e-4, "param %zu: numeric %.10g analytic %.10g", i, num, g);
    }
    cr_log_info("RL-Scheduling PPO loss gradient check: worst relative error %.2e", worst);
    free(ga);
    free(gc);
    gsl_rng_free(r);
    ppo_free(p);
}

/* The L2 term is exactly lambda * sum of the critic's squared weights (biases excluded). */
Test(rlsched, critic_l2_penalty_value) {
    ppo_cfg c = ppo_cfg_default();
    c.num_steps = 2;
    c.hidden = 3;
    c.vloss = PPO_VLOSS_SMOOTH_L1;
    int64_t nvec[1] = {2};
    ppo *p = ppo_new(&c, 2, PPO_MCAT, 1, nvec, 1);
    double obs[2] = {0.5, -0.5};
    int64_t a = 1;
    ppo_store(p, obs, NULL, &a, NULL, -0.7, 0.0, 1.0, true);
    ppo_store(p, obs, NULL, &a, NULL, -0.7, 0.0, 1.0, true);
    ppo_compute_gae(p, obs);
    int idx[2] = {0, 1};
    double base = ppo_minibatch_grad(p, idx, 2, NULL);
    p->cfg.critic_l2 = 0.25;
    double with = ppo_minibatch_grad(p, idx, 2, NULL);
    double w2 = 0;
    for (int l = 0; l < p->critic->nlayers; l++)
        for (size_t i = 0; i < (size_t)p->critic->sizes[l] * (size_t)p->critic->sizes[l + 1]; i++)
            w2 += p->critic->params[p->critic->woff[l] + i] * p->critic->params[p->critic->woff[l] + i];
    cr_assert_float_eq(with - base, 0.25 * w2, 1e-9);
    ppo_free(p);
}

static ag_sess *small_sess(const char *cfg_text) {
    hw_err err = {0};
    json_t *cfg = json_loads(cfg_text, 0, NULL);
    ag_sess *s = ag_sess_make("local", "sched-v0", cfg, NULL, 0, &err);
    json_decref(cfg);
    cr_assert(s, "%s", err.msg);
    return s;
}

/* stdout of the binary; its stderr in *errout when errout is not NULL (else logged on failure) */
static char *run_agent_err(const char *const *args, int *status, char **errout) {
    char bin[512];
    cr_assert(hwtest_bin("hwgym-rlsched", bin, sizeof bin), "hwgym-rlsched is not built");
    const char *prefix[] = {bin, NULL};
    char *out = NULL, *err = NULL;
    *status = hwtest_run_args(prefix, args, &out, &err);
    if (*status && !errout) cr_log_info("stderr: %s", err ? err : "");
    if (errout) *errout = err;
    else free(err);
    return out;
}

static char *run_agent(const char *const *args, int *status) { return run_agent_err(args, status, NULL); }

/* opens the trial DB at path and prepares sql on it */
static sqlite3_stmt *db_query(const char *path, const char *sql, sqlite3 **h) {
    sqlite3_stmt *q = NULL;
    cr_assert_eq(sqlite3_open(path, h), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(*h, sql, -1, &q, NULL), SQLITE_OK, "%s", sqlite3_errmsg(*h));
    return q;
}

static json_t *summary_without_times(const char *out) {
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(j, "summary is JSON: %s", out);
    json_object_del(j, "wall_s");
    json_object_del(j, "samples_per_s");
    json_object_del(j, "run_id");
    return j;
}

/* c2 = max(0.02, 0.1 * 0.995^e) at episode e; ten episodes end at 0.1 * 0.995^9. */
Test(rlsched, entropy_coefficient_decays_to_its_floor) {
    ag_sess *s = small_sess(SMALL_LAYER);
    rls_cfg c = rls_cfg_default();
    c.episodes = 10;
    hw_err err = {0};
    ppo *p = rls_ppo_new(s, &c, 1, &err);
    rls_result res = {0};
    cr_assert_eq(rls_train(s, NULL, p, &c, "energy", 1, 1000000, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.episodes, 10);
    cr_assert_float_eq(res.ent_coef, 0.1 * pow(0.995, 9), 1e-12);
    rls_result_free(&res);
    c.ent_start = 0.0205; /* 0.0205 * 0.995^e < 0.02 from e = 5 on: the floor holds */
    cr_assert_eq(rls_train(s, NULL, p, &c, "energy", 1, 16 * 10, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.episodes, 10);
    cr_assert_float_eq(res.ent_coef, 0.02, 1e-15);
    rls_result_free(&res);
    ppo_free(p);
    ag_sess_free(s);
}

/* Training improves the schedules the policy reaches: on a ResNet-50 layer on Eyeriss v1, trained
 * on the log reward, the mean final energy of the last 100 of 300 training episodes is below that
 * of the first 100 (the untrained policy plays almost uniformly), and the best table seen beats the
 * bottom-up baseline. */
static double final_energy_mean(const char *db, int from, int to) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *q;
    cr_assert_eq(sqlite3_prepare_v2(h,
                                    "SELECT avg(json_extract(metrics,'$.energy_pj')) FROM trials WHERE worker='0' "
                                    "AND step=15 AND episode>=? AND episode<?",
                                    -1, &q, NULL),
                 SQLITE_OK);
    sqlite3_bind_int(q, 1, from);
    sqlite3_bind_int(q, 2, to);
    cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
    double m = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(h);
    return m;
}

Test(rlsched, training_improves_the_schedules_reached, .timeout = 240) {
    const char *cfg = "{\"accelerator\":\"eyeriss_v1\",\"model\":\"resnet50\",\"layer\":\"layer2.0.conv2\"}";
    char dir[64], db[128];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/l.db", dir);
    const char *args[] = {"--endpoint", "local", "--config", cfg, "--episodes", "300", "--budget", "1000000",
                          "--seed", "1", "--reward", "log", "--quiet", "--no-greedy", "--db", db, NULL};
    int st;
    char *out = run_agent(args, &st);
    cr_assert_eq(st, 0);
    double first = final_energy_mean(db, 0, 100), last = final_energy_mean(db, 200, 300);
    json_t *j = json_loads(out, 0, NULL);
    double best = json_real_value(json_object_get(json_object_get(j, "best_seen"), "total_energy_pj"));
    /* the bottom-up baseline on the same layer, through the env's evaluate */
    hw_err err = {0};
    json_t *cj = json_loads(cfg, 0, NULL), *pt = json_pack("{ss}", "baseline", "bottom-up"), *m = NULL;
    ag_sess *s = ag_sess_make("local", "sched-v0", cj, NULL, 0, &err);
    cr_assert(s, "%s", err.msg);
    double r;
    cr_assert_eq(ag_sess_evaluate(s, pt, &r, &m, &err), 0, "%s", err.msg);
    double bu = json_real_value(json_object_get(m, "energy_pj"));
    cr_log_info("mean final energy: first 100 episodes %.4g, last 100 %.4g; best seen %.4g; bottom-up %.4g", first,
                last, best, bu);
    cr_assert_lt(last, first);
    cr_assert_lt(best, bu);
    json_decref(m);
    json_decref(pt);
    json_decref(cj);
    json_decref(j);
    ag_sess_free(s);
    free(out);
    hwtest_rmtree(dir);
}

/* Network mode: one best table per layer of the model; totals are the sums. */
Test(rlsched, network_mode_covers_every_layer, .timeout = 120) {
    ag_sess *s = small_sess("{\"accelerator\":\"eyeriss_v1\",\"model\":\"mobilenet_v3\",\"mode\":\"network\","
                            "\"steps_per_layer\":4}");
    rls_cfg c = rls_cfg_default();
    c.episodes = 1;
    hw_err err = {0};
    ppo *p = rls_ppo_new(s, &c, 1, &err);
    rls_result res = {0};
    cr_assert_eq(rls_train(s, NULL, p, &c, "energy", 1, INT64_MAX, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.nlayers, 64, "mobilenet_v3 has 64 conv/fc layers in the zoo, got %d", res.nlayers);
    json_t *j = rls_result_json(&res);
    double sum = 0;
    for (int i = 0; i < res.nlayers; i++) {
        cr_assert(res.best[i].seen, "layer %d", i);
        sum += res.best[i].energy_pj;
    }
    cr_assert_float_eq(json_real_value(json_object_get(j, "total_energy_pj")), sum, sum * 1e-12);
    cr_assert_eq(json_integer_value(json_object_get(j, "layers_seen")), 64);
    json_decref(j);
    rls_result_free(&res);
    ppo_free(p);
    ag_sess_free(s);
}

Test(rlsched, refuses_a_non_discrete_env) {
    hw_err err = {0};
    json_t *cfg = json_pack("{si}", "dims", 3);
    ag_sess *s = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    json_decref(cfg);
    cr_assert(s);
    rls_cfg c = rls_cfg_default();
    cr_assert_null(rls_ppo_new(s, &c, 1, &err));
    cr_assert(strstr(err.msg, "Discrete") && strstr(err.msg, "diag-v0"), "%s", err.msg);
    ag_sess_free(s);
}

/* The binary: same seed, same summary; every step is a trial with no masked action taken; the
 * logged trials match the summary's sample count. */
Test(rlsched, binary_is_deterministic_and_logs_every_step, .timeout = 120) {
    char dir[64], db[128];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    const char *a1[] = {"--endpoint", "local", "--config", SMALL_LAYER, "--episodes", "6", "--budget", "100000",
                        "--seed", "9", "--quiet", "--db", db, NULL};
    const char *a2[] = {"--endpoint", "local", "--config", SMALL_LAYER, "--episodes", "6", "--budget", "100000",
                        "--seed", "9", "--quiet", NULL};
    int st1, st2;
    char *o1 = run_agent(a1, &st1), *o2 = run_agent(a2, &st2);
    cr_assert_eq(st1, 0);
    cr_assert_eq(st2, 0);
    json_t *j1 = summary_without_times(o1), *j2 = summary_without_times(o2);
    char *s1 = json_dumps(j1, JSON_SORT_KEYS), *s2 = json_dumps(j2, JSON_SORT_KEYS);
    cr_assert_str_eq(s1, s2);
    int64_t samples = json_integer_value(json_object_get(j1, "samples"));
    cr_assert_eq(samples, 6 * 16 + 16, "6 training episodes and one greedy episode of 16 steps");
    sqlite3 *h;
    sqlite3_stmt *q = db_query(db,
                               "SELECT count(*), sum(json_extract(metrics,'$.invalid_action')), "
                               "sum(worker='greedy') FROM trials",
                               &h);
    cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int64(q, 0), samples);
    cr_assert_eq(sqlite3_column_int64(q, 1), 0, "a masked action was taken");
    cr_assert_eq(sqlite3_column_int64(q, 2), 16);
    sqlite3_finalize(q);
    sqlite3_close(h);
    free(s1);
    free(s2);
    json_decref(j1);
    json_decref(j2);
    free(o1);
    free(o2);
    hwtest_rmtree(dir);
}

static void server_up(hwtest_server *srv) {
    int rc = hwtest_server_start(srv, NULL);
    if (rc == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(rc, 0);
}

/* Through a real server, with --save then --load --eval-only on another layer. */
Test(rlsched, server_run_save_and_eval_only, .timeout = 120) {
    hwtest_server srv;
    server_up(&srv);
    char dir[64], wfile[128];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(wfile, sizeof wfile, "%s/w.bin", dir);
    const char *a1[] = {"--endpoint", srv.endpoint, "--config", SMALL_LAYER, "--episodes", "3", "--budget", "100000",
                        "--quiet", "--save", wfile, NULL};
    int st;
    char *o = run_agent(a1, &st);
    cr_assert_eq(st, 0);
    json_t *j = json_loads(o, 0, NULL);
    cr_assert(json_object_get(j, "greedy") && json_object_get(j, "best_seen"));
    cr_assert_str_eq(json_string_value(json_object_get(j, "env")), "sched-v0");
    json_decref(j);
    free(o);
    const char *a2[] = {"--endpoint", srv.endpoint, "--config",
                        "{\"accelerator\":\"simba\",\"layer\":{\"C\":16,\"K\":32,\"R\":1,\"S\":1,\"P\":7,\"Q\":7}}",
                        "--load", wfile, "--eval-only", "--quiet", NULL};
    o = run_agent(a2, &st);
    cr_assert_eq(st, 0);
    j = json_loads(o, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 16);
    cr_assert_null(json_object_get(j, "best_seen"));
    cr_assert_gt(json_real_value(json_object_get(json_object_get(j, "greedy"), "total_energy_pj")), 0);
    json_decref(j);
    free(o);
    const char *a3[] = {"--eval-only", NULL};
    o = run_agent(a3, &st);
    cr_assert_eq(st, 2, "--eval-only without --load is a usage error");
    free(o);
    hwtest_rmtree(dir);
    cr_assert_eq(hwtest_server_stop(&srv), 0);
}

/* The CoSA-like baseline (envs/sched/sched_cosa.c): on every accelerator and a spread of ResNet-50
 * and MobileNet-v3 layers it returns a table that passes sched_check, whose columns multiply to
 * the layer, and that is no worse than the all-in-DRAM start under the energy objective. */
#include "sched/sched.h"
Test(rlsched, cosa_baseline_gives_valid_tables) {
    const char *accs[] = {"eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba"};
    const char *models[] = {"resnet50", "mobilenet_v3"};
    int checked = 0, better = 0;
    for (int a = 0; a < 4; a++) {
        sched_accel acc;
        hw_err err = {0};
        json_t *nm = json_string(accs[a]);
        cr_assert_eq(sched_accel_resolve(nm, "accelerator", &acc, &err), 0, "%s", err.msg);
        json_decref(nm);
        for (int m = 0; m < 2; m++) {
            sched_layer *ls = NULL;
            int n = sched_model_layers(models[m], &ls, &err);
            cr_assert_gt(n, 0, "%s", err.msg);
            for (int i = 0; i < n; i += 9) {
                sched_table t, t0;
                sched_cost c, c0;
                cr_assert_eq(sched_cosa(&acc, &ls[i], SOBJ_ENERGY, &t, &c, &err), 0, "%s", err.msg);
                cr_assert_eq(sched_check(&acc, &ls[i], &t, &err), 0, "%s %s layer %d: %s", accs[a], models[m], i,
                             err.msg);
                for (int d = 0; d < SCHED_NDIM; d++) {
                    long p = 1;
                    for (int r = 0; r < SCHED_NROW; r++) p *= t.f[r][d];
                    cr_assert_eq(p, ls[i].d[d]);
                }
                sched_table_init(&ls[i], &t0);
                sched_cost_eval(&acc, &ls[i], &t0, &c0);
                if (c.energy_pj < c0.energy_pj) better++;
                checked++;
            }
            free(ls);
        }
    }
    cr_log_info("cosa: %d tables valid, %d below the all-in-DRAM energy", checked, better);
    cr_assert_gt(better, checked / 2);
}

/* The summary separates the policy from the search (issue 26): greedy_total is the greedy pass's
 * own end state (the env's network total at its last step, no best-seen), best_seen_total is at
 * most every training episode's end total, steps counts the training steps alone, and the
 * learning curve ends at the final greedy pass. --no-learn is the same run with no update: its
 * summary equals that of --actor-lr 0 --critic-lr 0 but for "learning" and "updates", and its
 * curve is flat. */
static json_t *summary_of(const char *const *args) {
    int st;
    char *o = run_agent(args, &st);
    cr_assert_eq(st, 0);
    json_t *j = summary_without_times(o);
    free(o);
    return j;
}

static double jnum(const json_t *j, const char *k) {
    const json_t *v = json_object_get(j, k);
    cr_assert(json_is_number(v), "summary field %s is a number", k);
    return json_number_value(v);
}

Test(rlsched, summary_reports_greedy_best_seen_and_the_untrained_control, .timeout = 300) {
    const char *net = "{\"accelerator\":\"eyeriss_v1\",\"mode\":\"network\",\"steps_per_layer\":3,"
                      "\"objective\":\"cycles\",\"layers\":[{\"C\":16,\"K\":32,\"R\":3,\"S\":3,\"P\":14,\"Q\":14},"
                      "{\"C\":32,\"K\":32,\"P\":7,\"Q\":7},{\"C\":8,\"K\":16,\"R\":3,\"S\":3,\"P\":28,\"Q\":28,"
                      "\"stride\":2}]}";
    char dir[64], db[128];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/c.db", dir);
    const char *a[] = {"--endpoint", "local", "--config", net, "--episodes", "4", "--eval-every", "2",
                       "--seed", "5", "--quiet", "--num-steps", "8", "--db", db, NULL};
    json_t *j = summary_of(a);
    cr_assert_str_eq(json_string_value(json_object_get(j, "objective")), "cycles");
    cr_assert_eq(jnum(j, "steps"), 4 * 3 * 3, "training steps: 4 episodes x 3 layers x 3");
    cr_assert_eq(jnum(j, "greedy_steps"), 3 * 3);
    cr_assert(json_is_true(json_object_get(j, "learning")));
    double g = jnum(j, "greedy_total"), b = jnum(j, "best_seen_total");
    cr_assert_float_eq(g, jnum(json_object_get(j, "greedy"), "total_cycles"), g * 1e-12);
    /* the greedy pass's total is the env's own network total at the pass's last step */
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *q;
    cr_assert_eq(sqlite3_prepare_v2(h,
                                    "SELECT json_extract(metrics,'$.network_cycles') FROM trials WHERE "
                                    "worker='greedy' ORDER BY step DESC LIMIT 1",
                                    -1, &q, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(h));
    cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
    double env_total = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(h);
    cr_assert_float_eq(g, env_total, env_total * 1e-9, "greedy %.6g, env %.6g", g, env_total);
    const json_t *ep = json_object_get(j, "episode_totals"), *cv = json_object_get(j, "curve");
    cr_assert_eq(json_array_size(ep), 4);
    for (size_t i = 0; i < 4; i++) cr_assert_leq(b, json_real_value(json_array_get(ep, i)) * (1 + 1e-12));
    cr_assert_eq(json_array_size(cv), 3, "curve at episodes 0, 2, 4");
    cr_assert_eq(jnum(json_array_get(cv, 2), "episode"), 4);
    cr_assert_float_eq(jnum(json_array_get(cv, 2), "greedy_total"), g, g * 1e-12);

    const char *nl[] = {"--endpoint", "local", "--config", net, "--episodes", "4", "--eval-every", "2",
                        "--seed", "5", "--quiet", "--num-steps", "8", "--no-learn", NULL};
    const char *lr0[] = {"--endpoint", "local", "--config", net, "--episodes", "4", "--eval-every", "2",
                         "--seed", "5", "--quiet", "--num-steps", "8", "--actor-lr", "0", "--critic-lr", "0", NULL};
    json_t *u = summary_of(nl), *z = summary_of(lr0);
    cr_assert(json_is_false(json_object_get(u, "learning")));
    cr_assert_eq(jnum(u, "updates"), 0);
    cr_assert_gt(jnum(z, "updates"), 0);
    const json_t *ucv = json_object_get(u, "curve");
    for (size_t i = 0; i < json_array_size(ucv); i++)
        cr_assert_eq(jnum(json_array_get(ucv, i), "greedy_total"), jnum(u, "greedy_total"), "untrained curve is flat");
    for (json_t *x = u; x; x = x == u ? z : NULL) {
        json_object_del(x, "learning");
        json_object_del(x, "updates");
        json_object_del(x, "config");
        json_object_del(x, "agent_config");
    }
    char *su = json_dumps(u, JSON_SORT_KEYS), *sz = json_dumps(z, JSON_SORT_KEYS);
    cr_assert_str_eq(su, sz, "--no-learn differs from learning rates of 0");
    free(su);
    free(sz);
    json_decref(u);
    json_decref(z);
    json_decref(j);
    int st;
    const char *bad[] = {"--endpoint", "local", "--config", SMALL_LAYER, "--eval-every", "-1", NULL};
    free(run_agent(bad, &st));
    cr_assert_eq(st, 2, "--eval-every -1 is a usage error");
    hwtest_rmtree(dir);
}

/* The learning curve's point after e episodes is exactly the greedy pass a run trained for e
 * episodes ends with (docs/results/rlsched.md's dev curves and scripts/rlsched-dev.sh rely on it):
 * the entropy schedule depends on the episode index alone, a greedy pass draws no random number
 * and leaves no state in the env or the learner. With --num-steps 8 the updates fall inside
 * episodes, so a rollout left over at episode 2 is carried on by the longer run. */
Test(rlsched, a_curve_point_is_the_greedy_pass_of_the_shorter_run, .timeout = 300) {
    const char *net = "{\"accelerator\":\"simba\",\"mode\":\"network\",\"steps_per_layer\":3,"
                      "\"layers\":[{\"C\":16,\"K\":32,\"R\":3,\"S\":3,\"P\":14,\"Q\":14},"
                      "{\"C\":32,\"K\":32,\"P\":7,\"Q\":7},{\"C\":8,\"K\":16,\"R\":3,\"S\":3,\"P\":28,\"Q\":28,"
                      "\"stride\":2}]}";
    const char *lng[] = {"--endpoint", "local", "--config", net, "--episodes", "5", "--eval-every", "1",
                         "--seed", "3", "--quiet", "--num-steps", "8", "--minibatch", "4", NULL};
    json_t *l = summary_of(lng);
    const json_t *cv = json_object_get(l, "curve");
    cr_assert_eq(json_array_size(cv), 6, "curve at episodes 0..5");
    int differ = 0;
    for (int e = 0; e <= 3; e += 3) {
        char n[16];
        snprintf(n, sizeof n, "%d", e);
        const char *sh[] = {"--endpoint", "local", "--config", net, "--episodes", n, "--seed", "3", "--quiet",
                            "--num-steps", "8", "--minibatch", "4", NULL};
        json_t *s = summary_of(sh);
        const json_t *pt = json_array_get(cv, (size_t)e);
        cr_assert_eq(jnum(pt, "episode"), e);
        cr_assert_eq(jnum(pt, "greedy_total"), jnum(s, "greedy_total"),
                     "curve point at episode %d (%.17g) != greedy pass of a %d-episode run (%.17g)", e,
                     jnum(pt, "greedy_total"), e, jnum(s, "greedy_total"));
        /* and the training before it was the same: every sampled episode ended alike */
        const json_t *se = json_object_get(s, "episode_totals"), *le = json_object_get(l, "episode_totals");
        cr_assert_eq(json_array_size(se), (size_t)e);
        for (size_t i = 0; i < (size_t)e; i++)
            cr_assert_eq(json_real_value(json_array_get(se, i)), json_real_value(json_array_get(le, i)),
                         "training episode %zu ended differently in the %d-episode run", i, e);
        json_decref(s);
    }
    /* the policy moved: not every point equals the untrained one (else the check above is empty) */
    for (size_t i = 1; i < json_array_size(cv); i++)
        differ += jnum(json_array_get(cv, i), "greedy_total") != jnum(json_array_get(cv, 0), "greedy_total");
    cr_assert_gt(differ, 0, "training changed the greedy pass at some point of the curve");
    json_decref(l);
}

/* --workers N (docs/rlsched.md "Episode workers"): 1 is the sequential loop, bit for bit; 2 plays
 * the requested episodes in rounds, the same for the same seed whatever the threads' timing, and
 * differently from 1 (its own random streams); every step is a trial, episodes in order. Odd
 * episode count: the last round has one worker. --num-steps 8 puts updates inside rounds. */
#define WK_ARGS(db)                                                                                                  \
    "--endpoint", "local", "--config", SMALL_LAYER, "--episodes", "5", "--budget", "100000", "--seed", "4",         \
        "--quiet", "--num-steps", "8", "--minibatch", "4", "--eval-every", "2", "--db", db
static char *dumps_key(const json_t *j, const char *k) { return json_dumps(json_object_get(j, k), JSON_ENCODE_ANY); }

Test(rlsched, workers_one_is_the_default_and_two_are_deterministic, .timeout = 300) {
    char dir[64], db[4][128];
    hwtest_tmpdir(dir, sizeof dir);
    for (int i = 0; i < 4; i++) snprintf(db[i], sizeof db[i], "%s/w%d.db", dir, i);
    const char *d[] = {WK_ARGS(db[0]), NULL};
    const char *w1[] = {WK_ARGS(db[1]), "--workers", "1", NULL};
    const char *w2a[] = {WK_ARGS(db[2]), "--workers", "2", NULL};
    const char *w2b[] = {WK_ARGS(db[3]), "--workers", "2", NULL};
    json_t *jd = summary_of(d), *j1 = summary_of(w1), *ja = summary_of(w2a), *jb = summary_of(w2b);
    char *sd = json_dumps(jd, JSON_SORT_KEYS), *s1 = json_dumps(j1, JSON_SORT_KEYS);
    char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);
    cr_assert_str_eq(s1, sd, "--workers 1 differs from the default");
    cr_assert_str_eq(sa, sb, "--workers 2 is not deterministic for one seed");
    cr_assert_eq(jnum(ja, "episodes"), 5);
    cr_assert_eq(jnum(ja, "steps"), 5 * 16);
    cr_assert_eq(jnum(ja, "updates"), 5 * 16 / 8);
    cr_assert_eq(json_array_size(json_object_get(ja, "episode_totals")), 5);
    const json_t *cv = json_object_get(ja, "curve");
    cr_assert_eq(json_array_size(cv), 3, "curve points at the rounds starting at episodes 0, 2, 4");
    for (size_t i = 0; i < 3; i++) cr_assert_eq(jnum(json_array_get(cv, i), "episode"), 2 * (double)i);
    char *t1 = dumps_key(j1, "episode_totals"), *t2 = dumps_key(ja, "episode_totals");
    cr_assert_str_neq(t1, t2, "--workers 2 played the very episodes of --workers 1 (its own streams?)");
    /* one trial per step, 16 per episode, logged in episode order (the learner's worker order) */
    sqlite3 *h;
    sqlite3_stmt *q = db_query(db[2],
                               "SELECT episode, count(*), min(id), max(id), sum(step) FROM trials WHERE "
                               "worker='0' GROUP BY episode ORDER BY episode",
                               &h);
    int64_t prev_max = 0, n = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        cr_assert_eq(sqlite3_column_int64(q, 0), n);
        cr_assert_eq(sqlite3_column_int64(q, 1), 16, "episode %lld", (long long)n);
        cr_assert_gt(sqlite3_column_int64(q, 2), prev_max, "episode %lld logged before the previous one", (long long)n);
        cr_assert_eq(sqlite3_column_int64(q, 4), 15 * 16 / 2);
        prev_max = sqlite3_column_int64(q, 3);
        n++;
    }
    cr_assert_eq(n, 5);
    sqlite3_finalize(q);
    sqlite3_close(h);
    char *strs[] = {t1, t2, sd, s1, sa, sb};
    json_t *sums[] = {jd, j1, ja, jb};
    for (size_t i = 0; i < 6; i++) free(strs[i]);
    for (size_t i = 0; i < 4; i++) json_decref(sums[i]);
    hwtest_rmtree(dir);
}

/* Each worker makes its own session on the server; the run equals the in-process one. */
Test(rlsched, workers_through_a_server_match_in_process, .timeout = 180) {
    hwtest_server srv;
    server_up(&srv);
    const char *a[] = {"--endpoint", srv.endpoint, "--config", SMALL_LAYER, "--episodes", "4", "--budget", "100000",
                       "--seed", "2", "--quiet", "--workers", "3", NULL};
    const char *l[] = {"--endpoint", "local", "--config", SMALL_LAYER, "--episodes", "4", "--budget", "100000",
                       "--seed", "2", "--quiet", "--workers", "3", NULL};
    json_t *js = summary_of(a), *jl = summary_of(l);
    const char *keys[] = {"episode_totals", "greedy_total", "best_seen_total", "steps", "updates", "best_seen"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char *x = dumps_key(js, keys[i]), *y = dumps_key(jl, keys[i]);
        cr_assert(x && y, "%s present", keys[i]);
        cr_assert_str_eq(x, y, "%s differs between the server and in process", keys[i]);
        free(x);
        free(y);
    }
    cr_assert_eq(jnum(js, "steps"), 4 * 16);
    json_decref(js);
    json_decref(jl);
    cr_assert_eq(hwtest_server_stop(&srv), 0);
}

/* A bad --workers is a usage error naming the option. */
Test(rlsched, workers_option_is_checked) {
    const char *bad[][5] = {{"0"}, {"65"}, {"two"}, {"2", "--norm-obs"},
                            {"2", "--checkpoint-every", "10", "--checkpoint", "/nonexistent/w.ckpt"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *a[] = {"--endpoint", "local", "--config", SMALL_LAYER, "--episodes", "1", "--quiet", "--workers",
                           bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4], NULL};
        int st;
        char *err = NULL, *o = run_agent_err(a, &st, &err);
        cr_assert_eq(st, 2, "--workers %s %s: status %d", bad[i][0], bad[i][1] ? bad[i][1] : "", st);
        cr_assert(err && strstr(err, "--workers"), "the error names --workers: %s", err ? err : "");
        free(err);
        free(o);
    }
}
