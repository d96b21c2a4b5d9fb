/* Preemption and resume (docs/cluster.md): each agent is run once uninterrupted, and once
 * killed with SIGKILL after a sample chosen by a seeded RNG (HWGYM_TEST_KILL_AT: the process
 * raises SIGKILL on itself, so unflushed trials are lost as in a real preemption) and resumed
 * with the same command line (--resume). The resumed run must have exactly the budget's trials,
 * the same trial sequence (worker, episode, step, action, reward, in log order per worker) and
 * the same best as the uninterrupted one. hwgym-search's six algorithms, hwgym-ppo, hwgym-sac,
 * hwgym-tdm-ppo (both modes) and hwgym-rlsched run in-process (--endpoint local); hwgym-marl
 * against a real server. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "../common/hwtest_db.h"
#include "agent_common.h"

static char tmp[64];

static void mk(void) { hwtest_tmpdir(tmp, sizeof tmp); }
static void rm(void) { hwtest_rmtree(tmp); }

TestSuite(resume, .init = mk, .fini = rm, .timeout = 120);

static double best_of(const char *out) {
    json_error_t je;
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, &je);
    cr_assert(j, "summary is not JSON: %s", out);
    double b = json_number_value(json_object_get(j, "best_reward"));
    cr_assert(json_is_number(json_object_get(j, "best_reward")), "no best_reward: %s", out);
    json_decref(j);
    return b;
}

/* One killed-and-resumed attempt into its own DB (tag-part-i.db), compared with the
 * uninterrupted run's DB `full`. */
static void kill_one(const char *const *prefix, const char *tag, const char *full, double best_full, int idx,
                     long long budget, long long kill, const char *every, int killed_status) {
    char part[256];
    snprintf(part, sizeof part, "%s/%s-part-%d.db", tmp, tag, idx);
    char *out = NULL, *err = NULL;
    int rc;
    char k[32];
    snprintf(k, sizeof k, "%lld", kill);
    setenv("HWGYM_TEST_KILL_AT", k, 1);
    rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--checkpoint-every", every, "--resume", NULL}, &out, &err);
    unsetenv("HWGYM_TEST_KILL_AT");
    cr_assert_eq(rc, killed_status, "%s: the attempt to be killed at sample %lld exited %d: %s", tag, kill, rc, err);
    free(out);
    free(err);
    long long n_part;
    free(hwtest_db_trials(part, &n_part));
    cr_assert_lt(n_part, budget, "%s: the killed attempt logged %lld of %lld trials", tag, n_part, budget);

    rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--checkpoint-every", every, "--resume", NULL}, &out, &err);
    cr_assert_eq(rc, 0, "%s resumed: exit %d: %s", tag, rc, err);
    cr_assert(strstr(err, "resum"), "%s: the second attempt did not say it resumed: %s", tag, err);
    double best_res = best_of(out);
    free(out);
    free(err);

    long long n_full, n_res;
    char *a = hwtest_db_trials(full, &n_full), *b = hwtest_db_trials(part, &n_res);
    cr_assert_eq(n_full, n_res, "%s: %lld trials uninterrupted, %lld after resume", tag, n_full, n_res);
    if (strcmp(a, b)) {
        size_t i = 0;
        while (a[i] && a[i] == b[i]) i++;
        size_t s = i > 200 ? i - 200 : 0;
        cr_assert_fail("%s: trial sequences differ (killed at %lld) near:\n%.400s\n---\n%.400s", tag, kill, a + s, b + s);
    }
    cr_assert_eq(best_full, best_res, "%s: best %.17g uninterrupted, %.17g resumed", tag, best_full, best_res);
    free(a);
    free(b);
}

/* Runs prefix + args + --db FULL; then, per kill point, prefix + args + --db KILLED
 * --checkpoint-every every --resume with HWGYM_TEST_KILL_AT=kill (must die by SIGKILL), then the
 * same again (must finish), and compares. killed_status: the killed attempt's exit status (137 for one process; a launcher
 * whose workers were killed exits 1). */
static void kill_and_resume_n(const char *const *prefix, const char *tag, long long budget, const long long *kills,
                              int nkills, const char *every, int killed_status) {
    char full[256];
    snprintf(full, sizeof full, "%s/%s-full.db", tmp, tag);
    char *out = NULL, *err = NULL;
    int rc = hwtest_run_args(prefix, (const char *[]){"--db", full, NULL}, &out, &err);
    cr_assert_eq(rc, 0, "%s uninterrupted: exit %d: %s", tag, rc, err);
    double best_full = best_of(out);
    free(out);
    free(err);
    for (int i = 0; i < nkills; i++) kill_one(prefix, tag, full, best_full, i, budget, kills[i], every, killed_status);
}

static void kill_and_resume(const char *const *prefix, const char *tag, long long budget, long long kill,
                            const char *every, int killed_status) {
    kill_and_resume_n(prefix, tag, budget, &kill, 1, every, killed_status);
}

/* the kill point: a seeded RNG over (lo, hi) */
static long long pick(unsigned seed, long long lo, long long hi) {
    srand(seed);
    return lo + rand() % (hi - lo);
}

static void search_case(const char *algo, const char *budget, const char *every, unsigned seed) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-search", bin, sizeof bin));
    const char *prefix[] = {bin,        "--endpoint", "local",  "--env",  "maestro-v0",
                            "--config", "{\"model\":\"mobilenet_v2\",\"layer\":2}",
                            "--algo",   algo,         "--seed", "7",      "--budget",
                            budget,     "--quiet",    NULL};
    long long b = atoll(budget);
    kill_and_resume(prefix, algo, b, pick(seed, b / 5, b - b / 10), every, 137);
}

Test(resume, search_random) { search_case("random", "600", "100", 1); }
Test(resume, search_ga) { search_case("ga", "600", "100", 2); }
Test(resume, search_gamma) { search_case("gamma", "600", "100", 3); }
Test(resume, search_bo) { search_case("bo", "80", "16", 4); }
Test(resume, search_es) { search_case("es", "600", "100", 5); }
Test(resume, search_aco) { search_case("aco", "400", "64", 6); }

Test(resume, ppo) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-ppo", bin, sizeof bin));
    const char *prefix[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--seed", "3", "--budget", "1200",
                            "--num-steps", "64", "--quiet", NULL};
    kill_and_resume(prefix, "ppo", 1200, pick(11, 200, 1100), "150", 137);
}

Test(resume, sac) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-sac", bin, sizeof bin));
    const char *prefix[] = {bin,      "--endpoint", "local", "--env",   "diag-v0",          "--seed", "3",
                            "--budget", "300",      "--hidden", "16",   "--batch",          "16",     "--learning-starts",
                            "40",     "--quiet",    NULL};
    kill_and_resume(prefix, "sac", 300, pick(13, 60, 280), "50", 137);
}

/* wrapper mode (an agent-side design of D micro-steps) on diag-v0 */
Test(resume, tdm_ppo_wrapper) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-tdm-ppo", bin, sizeof bin));
    const char *prefix[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--seed", "3", "--budget", "200",
                            "--num-steps", "32", "--quiet", NULL};
    kill_and_resume(prefix, "tdm-wrapper", 200, pick(14, 40, 190), "30", 137);
}

/* native mode: dram-v0's own TDM action space, 10 steps per design */
Test(resume, tdm_ppo_native) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-tdm-ppo", bin, sizeof bin));
    const char *prefix[] = {bin, "--endpoint", "local", "--env", "dram-v0", "--config", "{\"action_space\":\"tdm\"}",
                            "--seed", "5", "--budget", "120", "--num-steps", "32", "--quiet", NULL};
    kill_and_resume(prefix, "tdm-native", 120, pick(15, 25, 115), "20", 137);
}

/* 5 training episodes of 16 steps on a small layer, then the greedy episode (16 steps): one kill
 * lands in training (the checkpointed state continues), one in the greedy episode (its trials are
 * dropped and it is played again after the rest of training). */
#define RLS_LAYER "{\"accelerator\":\"eyeriss_v1\",\"layer\":{\"C\":16,\"K\":16,\"R\":1,\"S\":1,\"P\":7,\"Q\":7}}"
Test(resume, rlsched) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-rlsched", bin, sizeof bin));
    const char *prefix[] = {bin, "--endpoint", "local", "--config", RLS_LAYER, "--seed", "3", "--episodes", "5",
                            "--budget", "100000", "--num-steps", "16", "--minibatch", "8", "--quiet", NULL};
    long long kills[2] = {pick(16, 10, 80), pick(17, 81, 95)};
    kill_and_resume_n(prefix, "rlsched", 96, kills, 2, "20", 137);
    /* --eval-only (no training): the run id is checkpointed at sample 0, a killed evaluation
     * resumes into the same run and plays the greedy episode again */
    char w[256];
    snprintf(w, sizeof w, "%s/rls.weights", tmp);
    const char *save[] = {bin, "--endpoint", "local", "--config", RLS_LAYER, "--seed", "3", "--episodes", "1",
                          "--no-greedy", "--quiet", "--save", w, NULL};
    cr_assert_eq(hwtest_run(save, NULL, NULL), 0);
    const char *ev[] = {bin, "--endpoint", "local", "--config", RLS_LAYER, "--seed", "3", "--load", w,
                        "--eval-only", "--quiet", NULL};
    kill_and_resume(ev, "rlsched-eval", 16, pick(18, 2, 15), "5", 137);
}

Test(resume, marl) {
    char bin[4096];
    cr_assert(hwtest_bin("hwgym-marl", bin, sizeof bin));
    hwtest_server srv;
    int rc = hwtest_server_start(&srv, NULL);
    if (rc == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(rc, 0, "hwgym-server did not start");
    const char *prefix[] = {bin,         "--endpoint", srv.endpoint, "--env",     "maestro-v0",
                            "--config",  "{\"model\":\"mobilenet_v2\",\"layer\":2}",
                            "--seed",    "4",          "--budget",   "600",       "--policy-config",
                            "{\"rollout\":64}", "--agent-timeout-ms", "5000", "--quiet", NULL};
    kill_and_resume(prefix, "marl", 600, pick(12, 150, 550), "100", 1);
    hwtest_server_stop(&srv);
}

/* A checkpoint written by one configuration is refused by another, naming the key. */
Test(resume, config_mismatch_is_refused) {
    char bin[4096], db[256];
    cr_assert(hwtest_bin("hwgym-search", bin, sizeof bin));
    snprintf(db, sizeof db, "%s/m.db", tmp);
    const char *p1[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--algo", "ga", "--seed", "1", "--budget",
                        "200", "--quiet", "--db", db, "--checkpoint-every", "64", NULL};
    cr_assert_eq(hwtest_run(p1, NULL, NULL), 0);
    const char *p2[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--algo", "ga", "--seed", "2", "--budget",
                        "200", "--quiet", "--db", db, "--resume", NULL};
    char *err = NULL;
    cr_assert_eq(hwtest_run(p2, NULL, &err), 1);
    cr_assert(strstr(err, "seed"), "the error does not name the seed: %s", err);
    free(err);
    /* a fresh run (no --resume) into the same file drops the old run's checkpoints */
    const char *p1b[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--algo", "ga", "--seed", "2", "--budget",
                         "100", "--quiet", "--db", db, "--checkpoint-every", "64", NULL};
    cr_assert_eq(hwtest_run(p1b, NULL, NULL), 0);
    char ck[300];
    snprintf(ck, sizeof ck, "%s.ckpt", db);
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(ck, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT COUNT(*), SUM(config LIKE '%\"seed\":1}') FROM ckpt", -1, &st, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_gt(sqlite3_column_int(st, 0), 0, "no checkpoint of the second run");
    cr_assert_eq(sqlite3_column_int(st, 1), 0, "checkpoints of the first run (seed 1) are still there");
    sqlite3_finalize(st);
    sqlite3_close(h);
    const char *p3[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--resume", "--quiet", NULL};
    cr_assert_eq(hwtest_run(p3, NULL, &err), 2);
    cr_assert(strstr(err, "--resume needs --checkpoint"), "%s", err);
    free(err);
}

/* An agent that never wires checkpoints (ag_ckpt_ctl_init) refuses --checkpoint-every and
 * --resume at ag_run_begin instead of silently not checkpointing. In-process: this test's
 * process never called ag_ckpt_ctl_init. */
Test(resume, agent_without_checkpoints_refuses_the_options) {
    char db[256];
    snprintf(db, sizeof db, "%s/n.db", tmp);
    for (int k = 0; k < 2; k++) {
        ag_opts o;
        memset(&o, 0, sizeof o);
        o.env = "diag-v0";
        o.endpoint = "local";
        o.budget = 10;
        o.db = db;
        if (k) o.resume = true;
        else o.checkpoint_every = 5;
        hw_err err = {0};
        cr_assert_null(ag_run_begin(&o, "hwgym-x", NULL, &err), "%s", k ? "--resume" : "--checkpoint-every");
        cr_assert(strstr(err.msg, "hwgym-x does not checkpoint"), "%s", err.msg);
    }
}
