/* Several endpoints (agent_common.h, "Several servers"): an agent given "EP1,EP2" makes its
 * session on both servers, splits every evaluate_batch between them (same results as one
 * server) and steps on the server picked by HWGYM_SPREAD_INDEX / SLURM_ARRAY_TASK_ID. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "hwgym_client.h"

static hwtest_server s1, s2;

static void up(void) {
    int rc = hwtest_server_start(&s1, NULL);
    if (rc == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(rc, 0);
    cr_assert_eq(hwtest_server_start(&s2, NULL), 0);
}
static void down(void) {
    if (s1.pid) hwtest_server_stop(&s1);
    if (s2.pid) hwtest_server_stop(&s2);
}

TestSuite(spread, .init = up, .fini = down, .timeout = 60);

static long long op_count(const char *ep, const char *op) {
    hw_err err = {0};
    hwc_client *c = hwc_connect(NULL, ep, 5000, &err);
    cr_assert(c, "%s", err.msg);
    json_t *st = NULL;
    cr_assert_eq(hwc_stats(c, &st, &err), 0, "%s", err.msg);
    long long n = json_integer_value(json_object_get(json_object_get(json_object_get(st, "ops"), op), "count"));
    json_decref(st);
    hwc_disconnect(c);
    return n;
}

static json_t *summary(const char *out) {
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
    cr_assert(j, "not JSON: %s", out);
    return j;
}

Test(spread, evaluate_batch_over_two_servers) {
    char bin[4096], both[400];
    cr_assert(hwtest_bin("hwgym-search", bin, sizeof bin));
    snprintf(both, sizeof both, "%s,%s", s1.endpoint, s2.endpoint);
    const char *cfg = "{\"model\":\"mobilenet_v2\",\"layer\":2}";
    const char *one[] = {bin, "--endpoint", s1.endpoint, "--env", "maestro-v0", "--config", cfg, "--algo", "ga",
                         "--seed", "5", "--budget", "256", "--quiet", NULL};
    const char *two[] = {bin, "--endpoint", both, "--env", "maestro-v0", "--config", cfg, "--algo", "ga",
                         "--seed", "5", "--budget", "256", "--quiet", NULL};
    char *o1 = NULL, *o2 = NULL, *e = NULL;
    cr_assert_eq(hwtest_run(one, &o1, &e), 0, "%s", e);
    free(e);
    long long b1_before = op_count(s1.endpoint, "evaluate_batch"), b2_before = op_count(s2.endpoint, "evaluate_batch");
    cr_assert_eq(b2_before, 0);
    cr_assert_eq(hwtest_run(two, &o2, &e), 0, "%s", e);
    free(e);
    long long b1 = op_count(s1.endpoint, "evaluate_batch") - b1_before, b2 = op_count(s2.endpoint, "evaluate_batch");
    /* every generation of 64 is split in two chunks of 32, one per server */
    cr_assert(b2 >= 4 && b1 == b2, "server 1 got %lld batches, server 2 %lld (before: %lld)", b1, b2, b1_before);
    json_t *j1 = summary(o1), *j2 = summary(o2);
    cr_assert(json_equal(json_object_get(j1, "best_reward"), json_object_get(j2, "best_reward")));
    cr_assert(json_equal(json_object_get(j1, "best_action"), json_object_get(j2, "best_action")));
    json_decref(j1);
    json_decref(j2);
    free(o1);
    free(o2);
}

Test(spread, steps_go_to_the_picked_server) {
    char bin[4096], both[400];
    cr_assert(hwtest_bin("hwgym-ppo", bin, sizeof bin));
    snprintf(both, sizeof both, "%s,%s", s1.endpoint, s2.endpoint);
    const char *argv[] = {bin, "--endpoint", both, "--env", "diag-v0", "--seed", "1", "--budget", "50", "--quiet", NULL};
    setenv("HWGYM_SPREAD_INDEX", "1", 1);
    char *e = NULL;
    int rc = hwtest_run(argv, NULL, &e);
    unsetenv("HWGYM_SPREAD_INDEX");
    cr_assert_eq(rc, 0, "%s", e);
    free(e);
    cr_assert_eq(op_count(s1.endpoint, "step"), 0);
    cr_assert_eq(op_count(s2.endpoint, "step"), 50);
}

Test(spread, a_bad_item_is_named) {
    char bin[4096], bad[400];
    cr_assert(hwtest_bin("hwgym-search", bin, sizeof bin));
    snprintf(bad, sizeof bad, "%s,,", s1.endpoint);
    const char *argv[] = {bin, "--endpoint", bad, "--env", "diag-v0", "--budget", "8", "--quiet", NULL};
    char *e = NULL;
    cr_assert_eq(hwtest_run(argv, NULL, &e), 1);
    cr_assert(strstr(e, "item 2"), "%s", e);
    free(e);
}

/* A multi-agent session lives on one server (its agents meet at one barrier): hwgym-marl given
 * both endpoints puts each run's session on one of them, by --seed when no spread index is set
 * (HWGYM_SPREAD_INDEX, SLURM_ARRAY_TASK_ID), so independent runs spread over the servers. */
static void marl_run(const char *bin, const char *eps, const char *seed) {
    const char *argv[] = {bin,        "--endpoint", eps,      "--env",    "diag-v0", "--config", "{\"dims\":2}",
                          "--policy", "random",     "--seed", seed,       "--budget", "30",      "--quiet", NULL};
    char *e = NULL;
    int rc = hwtest_run(argv, NULL, &e);
    cr_assert_eq(rc, 0, "hwgym-marl --seed %s: exit %d: %s", seed, rc, e);
    free(e);
}

Test(spread, marl_runs_spread_one_session_per_server) {
    char bin[4096], both[400];
    cr_assert(hwtest_bin("hwgym-marl", bin, sizeof bin));
    snprintf(both, sizeof both, "%s,%s", s1.endpoint, s2.endpoint);
    unsetenv("HWGYM_SPREAD_INDEX");
    unsetenv("SLURM_ARRAY_TASK_ID");
    marl_run(bin, both, "4"); /* 4 mod 2: the first server */
    cr_assert_eq(op_count(s1.endpoint, "join"), 2, "both agents join on server 1");
    cr_assert_eq(op_count(s1.endpoint, "step"), 2 * 30);
    cr_assert_eq(op_count(s2.endpoint, "make"), 0, "server 2 got a session of the seed-4 run");
    marl_run(bin, both, "7"); /* the second */
    cr_assert_eq(op_count(s2.endpoint, "join"), 2);
    cr_assert_eq(op_count(s2.endpoint, "step"), 2 * 30);
    cr_assert_eq(op_count(s1.endpoint, "step"), 2 * 30, "the seed-7 run stepped on server 1");
    /* an explicit spread index wins over the seed */
    setenv("HWGYM_SPREAD_INDEX", "0", 1);
    marl_run(bin, both, "7");
    unsetenv("HWGYM_SPREAD_INDEX");
    cr_assert_eq(op_count(s1.endpoint, "step"), 4 * 30);
    cr_assert_eq(op_count(s2.endpoint, "step"), 2 * 30);
}
