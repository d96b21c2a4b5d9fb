/* test_cli_agents.c - hwgym-ppo / hwgym-tdm-ppo / hwgym-sac at the user's boundary: the
 * progress line and JSON summary formats, trial logging, determinism for a seed (through a
 * spawned hwgym-server), and learning on diag-v0. Skips when BUILD/bin lacks the binaries. */
#include <criterion/criterion.h>
#include <math.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "../common/hwtest.h"
#include "../common/hwtest_db.h"

static const char *DIAG = "{\"dims\":2,\"choices\":4,\"episode_length\":1}";

static void need(const char *name, char *path, size_t cap) {
    if (!hwtest_bin(name, path, cap)) cr_skip_test("BUILD/bin/%s is not built", name);
}

static json_t *summary_of(const char *out) {
    cr_assert(out && *out, "no stdout");
    const char *nl = strchr(out, '\n');
    cr_assert(nl && nl[1] == 0, "stdout must be exactly one line: %s", out);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(json_is_object(j), "summary is not a JSON object: %s", out);
    const char *keys[] = {"agent", "env", "run_id", "run_name", "seed", "budget", "samples", "best_reward",
                          "best_action", "best_metrics", "wall_s", "samples_per_s"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) cr_assert(json_object_get(j, keys[i]), "summary lacks %s", keys[i]);
    return j;
}

Test(agents_cli, help_and_usage_errors) {
    char bin[512];
    const char *names[] = {"hwgym-ppo", "hwgym-tdm-ppo", "hwgym-sac"};
    for (int i = 0; i < 3; i++) {
        need(names[i], bin, sizeof bin);
        char *out = NULL, *err = NULL;
        const char *h[] = {bin, "--help", NULL};
        cr_assert_eq(hwtest_run(h, &out, &err), 0);
        cr_assert(strstr(out, "--endpoint") && strstr(out, "--budget") && strstr(out, "--db"), "%s", out);
        free(out);
        free(err);
        const char *bad[] = {bin, "--env", "diag-v0", "--bogus", "1", NULL};
        cr_assert_eq(hwtest_run(bad, NULL, &err), 2);
        cr_assert(strstr(err, "unknown option --bogus"), "%s", err);
        free(err);
        const char *noenv[] = {bin, "--endpoint", "local", NULL};
        cr_assert_eq(hwtest_run(noenv, NULL, &err), 2);
        free(err);
        const char *badcfg[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--config", "{\"dims\":\"x\"}", "--quiet", NULL};
        cr_assert_eq(hwtest_run(badcfg, NULL, &err), 1);
        cr_assert(strstr(err, "dims"), "error must name the field: %s", err);
        free(err);
    }
}

Test(agents_cli, progress_and_summary_format, .timeout = 80) {
    char bin[512], dir[64], db[128];
    need("hwgym-ppo", bin, sizeof bin);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    /* step_us slows diag so that the 0.5 s progress throttle fires a few times */
    const char *argv[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--config",
                          "{\"dims\":2,\"choices\":4,\"episode_length\":4,\"step_us\":1500}", "--budget", "800",
                          "--seed", "3", "--db", db, "--run-name", "fmt", NULL};
    char *out = NULL, *err = NULL;
    setenv("HWGYM_PROGRESS_S", "0.5", 1); /* a terminal's interval (a pipe's is 10 s) */
    cr_assert_eq(hwtest_run(argv, &out, &err), 0, "%s", err);
    unsetenv("HWGYM_PROGRESS_S");
    json_t *j = summary_of(out);
    cr_assert_str_eq(json_string_value(json_object_get(j, "agent")), "hwgym-ppo");
    cr_assert_str_eq(json_string_value(json_object_get(j, "run_name")), "fmt");
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 800);
    cr_assert_eq(json_integer_value(json_object_get(j, "run_id")), 1);
    cr_assert_eq(json_array_size(json_object_get(j, "best_action")), 2);
    cr_assert(json_real_value(json_object_get(j, "samples_per_s")) > 0);
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "^\\[hwgym-ppo\\] samples [0-9]+/800 \\([0-9.]+%\\)  best [-0-9.e]+  rate [0-9.]+/s  eta [0-9.]+s$",
                         REG_EXTENDED | REG_NOSUB),
                 0);
    int lines = 0;
    char *save = NULL, *last = NULL;
    for (char *l = strtok_r(err, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        cr_assert_eq(regexec(&re, l, 0, NULL, 0), 0, "bad progress line: '%s'", l);
        lines++;
        last = l;
    }
    regfree(&re);
    cr_assert_geq(lines, 2, "expected throttled progress lines and a final one, got %d", lines);
    cr_assert(strstr(last, "samples 800/800 (100.0%)"), "%s", last);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE run_id = 1");
    cr_assert_eq(hwtest_db_double(db, sql), 800);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM runs WHERE agent = 'hwgym-ppo' AND ended_at IS NOT NULL"), 1);
    /* the best reward in the summary is the DB's maximum */
    cr_assert_float_eq(json_real_value(json_object_get(j, "best_reward")), hwtest_db_double(db, "SELECT max(reward) FROM trials"),
                       1e-12);
    json_decref(j);
    free(out);
    free(err);
    /* --quiet: nothing on stderr */
    const char *q[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--budget", "50", "--quiet", NULL};
    cr_assert_eq(hwtest_run(q, &out, &err), 0);
    cr_assert_str_eq(err, "");
    free(out);
    free(err);
    hwtest_rmtree(dir);
}

Test(agents_cli, ppo_deterministic_through_server, .timeout = 85) {
    char bin[512], dir[64], db[128];
    need("hwgym-ppo", bin, sizeof bin);
    hwtest_server srv;
    int src = hwtest_server_start(&srv, NULL);
    if (src == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(src, 0);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/d.db", dir);
    const char *seeds[3] = {"5", "5", "6"};
    for (int r = 0; r < 3; r++) {
        const char *argv[] = {bin, "--endpoint", srv.endpoint, "--env", "diag-v0", "--config", DIAG, "--budget", "300",
                              "--seed", seeds[r], "--num-steps", "64", "--minibatch", "16", "--lr", "3e-3",
                              "--db", db, "--quiet", NULL};
        char *out = NULL, *err = NULL;
        cr_assert_eq(hwtest_run(argv, &out, &err), 0, "%s", err);
        json_t *j = summary_of(out);
        cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 300);
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_eq(hwtest_server_stop(&srv), 0);
    const char *same = "SELECT count(*) FROM trials a JOIN trials b ON a.episode = b.episode AND a.step = b.step "
                       "WHERE a.run_id = 1 AND b.run_id = %d AND a.action = b.action AND a.reward = b.reward "
                       "AND a.observation = b.observation AND a.reset_seed = b.reset_seed";
    char sql[512];
    snprintf(sql, sizeof sql, same, 2);
    cr_assert_eq(hwtest_db_double(db, sql), 300, "same seed must give the same 300 trials");
    snprintf(sql, sizeof sql, same, 3);
    cr_assert_lt(hwtest_db_double(db, sql), 300, "another seed must give other trials");
    hwtest_rmtree(dir);
}

/* mean reward of the last n trials of run 1 */
static double tail_mean(const char *db, int n) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT avg(reward) FROM (SELECT reward FROM trials WHERE run_id = 1 ORDER BY id DESC LIMIT %d)", n);
    return hwtest_db_double(db, sql);
}

static double run_and_tail(const char *name, const char *const *args, int nargs, int tail) {
    char bin[512], dir[64], db[128];
    need(name, bin, sizeof bin);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/l.db", dir);
    const char *argv[32];
    int k = 0;
    argv[k++] = bin;
    for (int i = 0; i < nargs; i++) argv[k++] = args[i];
    argv[k++] = "--db";
    argv[k++] = db;
    argv[k++] = "--quiet";
    argv[k] = NULL;
    char *out = NULL, *err = NULL;
    cr_assert_eq(hwtest_run(argv, &out, &err), 0, "%s", err);
    json_t *j = summary_of(out);
    cr_assert_float_eq(json_real_value(json_object_get(j, "best_reward")), 1.0, 1e-12);
    json_decref(j);
    free(out);
    free(err);
    double m = tail_mean(db, tail);
    hwtest_rmtree(dir);
    return m;
}

Test(agents_cli, tdm_ppo_wrapper_learns_diag, .timeout = 80) {
    const char *a[] = {"--endpoint", "local", "--env", "diag-v0", "--config", "{\"dims\":3,\"choices\":4,\"episode_length\":1}",
                       "--budget", "2500", "--seed", "1", "--lr", "3e-3"};
    double m = run_and_tail("hwgym-tdm-ppo", a, 12, 200);
    cr_log_info("hwgym-tdm-ppo on diag-v0 (3 dims): mean reward of the last 200 designs %.3f", m);
    cr_assert_geq(m, 0.95);
}

Test(agents_cli, sac_learns_diag, .timeout = 80) {
    const char *a[] = {"--endpoint", "local", "--env", "diag-v0", "--config", DIAG, "--budget", "2000", "--seed", "1",
                       "--gamma", "0", "--target-entropy-scale", "0.2"};
    double m = run_and_tail("hwgym-sac", a, 14, 200);
    cr_log_info("hwgym-sac on diag-v0: mean reward of the last 200 steps %.3f (random: 0.5)", m);
    cr_assert_geq(m, 0.85);
}

Test(agents_cli, tdm_ppo_native_dram_form, .timeout = 80) {
    char bin[512];
    need("hwgym-tdm-ppo", bin, sizeof bin);
    const char *argv[] = {bin, "--endpoint", "local", "--env", "dram-v0", "--config",
                          "{\"action_space\":\"tdm\",\"count\":500}", "--budget", "40", "--quiet", NULL};
    char *out = NULL, *err = NULL;
    int rc = hwtest_run(argv, &out, &err);
    if (rc == 1 && strstr(err, "UNKNOWN_ENV")) cr_skip_test("dram-v0 not in this build");
    cr_assert_eq(rc, 0, "%s", err);
    json_t *j = summary_of(out);
    cr_assert_str_eq(json_string_value(json_object_get(j, "mode")), "native");
    cr_assert_eq(json_integer_value(json_object_get(j, "env_steps")), 40);
    /* 40 steps = 4 complete designs, each rewarded once */
    cr_assert_eq(json_integer_value(json_object_get(j, "nonzero_reward_steps")), 4);
    json_decref(j);
    free(out);
    free(err);
}

/* Progress lines into a log (stderr not a terminal): at most one every 10 s plus the final
 * one, not two a second; HWGYM_PROGRESS_S sets the interval (here 0.1 s: several lines). */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int progress_lines(const char *err) {
    int n = 0;
    for (const char *p = err; p && (p = strstr(p, "[hwgym-search --algo random] samples")); p++) n++;
    return n;
}

Test(agents_cli, progress_every_10s_into_a_log, .timeout = 120) {
    char bin[512];
    need("hwgym-search", bin, sizeof bin);
    const char *pre[] = {bin, NULL};
    const char *args[] = {"--endpoint", "local", "--env", "dram-v0", "--algo", "random", "--budget", "900", "--seed", "1", NULL};
    char *out = NULL, *err = NULL;
    unsetenv("HWGYM_PROGRESS_S");
    double t0 = now_s();
    cr_assert_eq(hwtest_run_args(pre, args, &out, &err), 0, "%s", err);
    double el = now_s() - t0;
    cr_assert_gt(el, 0.6, "the run must outlast several 0.5 s ticks (%.2f s)", el);
    int n = progress_lines(err);
    cr_assert_leq(n, 1 + (int)(el / 10.0), "%d progress lines in %.1f s into a pipe:\n%s", n, el, err);
    free(out), free(err);
    setenv("HWGYM_PROGRESS_S", "0.1", 1);
    cr_assert_eq(hwtest_run_args(pre, args, &out, &err), 0, "%s", err);
    unsetenv("HWGYM_PROGRESS_S");
    cr_assert_geq(progress_lines(err), 3, "HWGYM_PROGRESS_S=0.1 gives a line every 0.1 s:\n%s", err);
    free(out), free(err);
}
