/* The `hwgym` command at the user's boundary: runs BUILD/bin/hwgym and checks stdout (JSON),
 * stderr (errors naming the argument) and exit status. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "hwgym_trials.h"

static char bin[4096];
static char dir[64];

static void setup(void) {
    cr_assert(hwtest_bin("hwgym", bin, sizeof bin), "BUILD/bin/hwgym not found (%s): build it with the test", bin);
    hwtest_tmpdir(dir, sizeof dir);
}
static void teardown(void) { hwtest_rmtree(dir); }

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 60);

/* Runs hwgym with a NULL-terminated argument list; returns the status; out/err malloc'd. */
static int run_hw(char **out, char **err, const char *const *args) {
    const char *prefix[] = {bin, NULL};
    return hwtest_run_args(prefix, args, out, err);
}
#define HW(o, e, ...) run_hw(o, e, (const char *[]){__VA_ARGS__, NULL})

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert(j, "stdout is not JSON (%s): %s", je.text, s);
    return j;
}

Test(cli, envs_lists_diag) {
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "envs"), 0, "%s", e);
    json_t *j = parse(o);
    cr_assert(json_is_array(j));
    bool found = false;
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v) if (!strcmp(json_string_value(json_object_get(v, "id")), "diag-v0")) {
        found = true;
        cr_assert(strstr(json_string_value(json_object_get(v, "summary")), "diagnostic"));
    }
    cr_assert(found);
    json_decref(j);
    free(o);
    free(e);
}

Test(cli, spaces_follow_the_config) {
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "spaces", "diag-v0", "--json", "--config", "{\"dims\":2,\"choices\":3}"), 0, "%s", e);
    json_t *j = parse(o);
    json_t *as = json_object_get(j, "action_space");
    cr_assert_str_eq(json_string_value(json_object_get(as, "type")), "MultiDiscrete");
    json_t *nv = json_object_get(as, "nvec");
    cr_assert_eq(json_array_size(nv), 2);
    cr_assert_eq(json_integer_value(json_array_get(nv, 1)), 3);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(as, "names"), 1)), "p1");
    json_t *os = json_object_get(j, "observation_space");
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(os, "shape"), 0)), 4, "box obs has dims + 2 elements");
    json_decref(j);
    free(o);
    free(e);
}

/* without --json: a summary a person reads, a line per parameter run or Dict key, no bound
 * printed once per element (placement-v0's 57x19 Box used to print 1,083 copies of 1.797e308) */
Test(cli, spaces_summary_is_compact) {
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "spaces", "placement-v0"), 0, "%s", e);
    int lines = 0;
    for (const char *p = o; *p; p++) lines += *p == '\n';
    cr_assert_lt(lines, 15, "%s", o);
    cr_assert(strstr(o, "MultiDiscrete, 114 parameters") && strstr(o, "3 choices: DRAM, LLC, SRAM"), "%s", o);
    cr_assert(strstr(o, "node_features: Box(57x19) float32, low 0, high inf"), "%s", o);
    cr_assert(!strstr(o, "1.797") && !strchr(o, '{'), "%s", o);
    free(o);
    free(e);
    cr_assert_eq(HW(&o, &e, "spaces", "diag-v0", "--config", "{\"dims\":2,\"choices\":3}"), 0, "%s", e);
    cr_assert(strstr(o, "p0 ") && strstr(o, "p1 ") && strstr(o, "3 choices: v0, v1, v2"), "%s", o);
    free(o);
    free(e);
}

Test(cli, spaces_config_from_file) {
    char path[128];
    snprintf(path, sizeof path, "%s/cfg.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"action_space\": \"box\", \"dims\": 5}\n", f);
    fclose(f);
    char at[140];
    snprintf(at, sizeof at, "@%s", path);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "spaces", "diag-v0", "--config", at, "--json"), 0, "%s", e);
    json_t *j = parse(o);
    json_t *as = json_object_get(j, "action_space");
    cr_assert_str_eq(json_string_value(json_object_get(as, "type")), "Box");
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(as, "shape"), 0)), 5);
    json_decref(j);
    free(o);
    free(e);
}

/* diag-v0 reward = 1 - mean |a_i - target_i| / (choices - 1); distance = 1 - reward. The
 * target is unknown here, but reward + distance = 1 and the best of all points is exactly 1. */
Test(cli, eval_prints_reward_and_metrics) {
    double best = -1;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char act[32];
            snprintf(act, sizeof act, "[%d,%d]", a, b);
            char *o, *e;
            cr_assert_eq(HW(&o, &e, "eval", "diag-v0", "--config", "{\"dims\":2,\"choices\":3}", "--action", act), 0, "%s", e);
            json_t *j = parse(o);
            double r = json_number_value(json_object_get(j, "reward"));
            json_t *m = json_object_get(j, "metrics");
            cr_assert_float_eq(r + json_number_value(json_object_get(m, "distance")), 1.0, 1e-12);
            cr_assert(json_is_true(json_object_get(m, "feasible")));
            cr_assert_str_eq(json_string_value(json_object_get(j, "env")), "diag-v0");
            if (r > best) best = r;
            json_decref(j);
            free(o);
            free(e);
        }
    cr_assert_float_eq(best, 1.0, 1e-12);
}

Test(cli, help_everywhere) {
    const char *cmds[] = {"envs", "spaces", "eval", "replay", "export"};
    for (int i = 0; i < 5; i++) {
        char *o;
        cr_assert_eq(HW(&o, NULL, cmds[i], "--help"), 0, "%s --help", cmds[i]);
        char want[64];
        snprintf(want, sizeof want, "usage: hwgym %s", cmds[i]);
        cr_assert(strstr(o, want), "%s --help printed: %s", cmds[i], o);
        free(o);
    }
    char *o;
    cr_assert_eq(HW(&o, NULL, "--help"), 0);
    for (int i = 0; i < 5; i++) cr_assert(strstr(o, cmds[i]), "top-level help lacks %s", cmds[i]);
    free(o);
}

static void bad(int want_status, const char *needle, const char *a0, const char *a1, const char *a2, const char *a3,
                const char *a4, const char *a5) {
    char *o, *e;
    int st = run_hw(&o, &e, (const char *[]){a0, a1, a2, a3, a4, a5, NULL});
    cr_assert_eq(st, want_status, "%s %s: status %d, stderr: %s", a0, a1 ? a1 : "", st, e);
    cr_assert(strstr(e, needle), "%s %s: stderr should name '%s': %s", a0, a1 ? a1 : "", needle, e);
    cr_assert_str_eq(o, "", "nothing on stdout after an error: %s", o);
    free(o);
    free(e);
}

Test(cli, bad_arguments_are_named) {
    bad(2, "nosuch", "nosuch", NULL, NULL, NULL, NULL, NULL);
    bad(2, "--frob", "eval", "diag-v0", "--frob", "1", NULL, NULL);
    bad(2, "--action", "eval", "diag-v0", NULL, NULL, NULL, NULL);
    bad(2, "--action", "eval", "diag-v0", "--action", "[1,2", NULL, NULL);
    bad(2, "config.bogus", "eval", "diag-v0", "--config", "{\"bogus\":1}", "--action", "[0,0,0,0]");
    bad(2, "--config", "eval", "diag-v0", "--config", "[1]", "--action", "[0,0,0,0]");
    bad(2, "expected 4", "eval", "diag-v0", "--action", "[0,0]", NULL, NULL);
    bad(2, "out of range", "eval", "diag-v0", "--action", "[0,0,0,99]", NULL, NULL);
    bad(2, "nope-v0", "spaces", "nope-v0", NULL, NULL, NULL, NULL);
    bad(2, "--config", "spaces", "diag-v0", "--config", "@/nonexistent/cfg.json", NULL, NULL);
    bad(2, "missing", "spaces", NULL, NULL, NULL, NULL, NULL);
    bad(2, "--endpoint", "replay", "x.db", NULL, NULL, NULL, NULL);
    bad(2, "--format", "export", "x.db", NULL, NULL, NULL, NULL);
    bad(2, "--format", "export", "x.db", "--format", "xml", NULL, NULL);
    bad(2, "--run", "export", "x.db", "--format", "csv", "--run", "abc");
    bad(1, "/nonexistent/t.db", "export", "/nonexistent/t.db", "--format", "csv", NULL, NULL);
    bad(2, "needs a value", "eval", "diag-v0", "--action", NULL, NULL, NULL);
    bad(2, "extra", "envs", "extra", NULL, NULL, NULL, NULL);
}

Test(cli, optional_subcommands_say_not_built_or_run) {
    char *e;
    int st = HW(NULL, &e, "render");
    cr_assert_eq(st, 2);
    cr_assert(strstr(e, "--env"), "%s", e);
    free(e);
    st = HW(NULL, &e, "render", "--env", "diag-v0");
    cr_assert_eq(st, 2);
    cr_assert(strstr(e, "diag-v0"), "%s", e);
    free(e);
}

/* ---- export ---- */

static void make_db(const char *path) {
    hw_err err;
    hwt_db *db = hwt_open(path, NULL, &err);
    cr_assert(db, "%s", err.msg);
    json_t *cfg = json_pack("{si}", "dims", 2);
    hwt_run r = {.agent = "test, with comma", .env = "diag-v0", .env_config = cfg};
    int64_t run1 = hwt_begin_run(db, &r, &err);
    int64_t run2 = hwt_begin_run(db, &r, &err);
    json_decref(cfg);
    for (int i = 0; i < 3; i++) {
        json_t *a = json_pack("[ii]", i, 1);
        json_t *o = json_pack("[ff]", 0.5, 0.25);
        json_t *m = json_pack("{sfss}", "distance", 0.125, "note", "a \"quoted\", text");
        hwt_trial t = {.run_id = run1, .worker = "w0", .episode = 0, .step = i, .has_reset_seed = true, .reset_seed = 3,
                       .action = a, .observation = o, .has_reward = true, .reward = 0.1 * i, .terminated = i == 2,
                       .truncated = 0, .metrics = m, .feasible = -1, .time = 1000 + i};
        cr_assert_eq(hwt_add_trial(db, &t, &err), 0);
        json_decref(a);
        json_decref(o);
        json_decref(m);
    }
    json_t *a = json_pack("[ii]", 1, 1);
    hwt_trial t = {.run_id = run2, .episode = 0, .kind = HWT_EVAL, .action = a, .has_reward = true, .reward = NAN,
                   .terminated = -1, .truncated = -1, .feasible = 0, .time = 2000};
    cr_assert_eq(hwt_add_trial(db, &t, &err), 0);
    json_decref(a);
    cr_assert_eq(hwt_close(db, &err), 0);
}

Test(cli, export_jsonl_round_trips_values) {
    char db[128], out[128];
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(out, sizeof out, "%s/out.jsonl", dir);
    make_db(db);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "export", db, "--format", "jsonl"), 0, "%s", e);
    int lines = 0;
    for (char *p = o; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 4);
    json_t *first = json_loadb(o, strchr(o, '\n') - o, 0, NULL);
    cr_assert(first);
    cr_assert_str_eq(json_string_value(json_object_get(first, "env")), "diag-v0");
    cr_assert_str_eq(json_string_value(json_object_get(first, "worker")), "w0");
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(first, "action"), 0)), 0);
    cr_assert_float_eq(json_number_value(json_array_get(json_object_get(first, "observation"), 1)), 0.25, 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(first, "metrics"), "note")), "a \"quoted\", text");
    cr_assert(json_is_false(json_object_get(first, "terminated")));
    cr_assert_eq(json_integer_value(json_object_get(first, "reset_seed")), 3);
    json_decref(first);
    cr_assert(strstr(o, "\"kind\":\"eval\""), "%s", o);
    cr_assert(strstr(o, "\"reward\":null"), "NaN reward exports as null: %s", o);
    free(o);
    free(e);
    /* --run and --out */
    cr_assert_eq(HW(&o, &e, "export", db, "--format", "jsonl", "--run", "2", "--out", out), 0, "%s", e);
    cr_assert_str_eq(o, "");
    cr_assert(strstr(e, "1 trials"), "%s", e);
    free(o);
    free(e);
    FILE *f = fopen(out, "r");
    char line[4096];
    cr_assert(fgets(line, sizeof line, f));
    cr_assert(strstr(line, "\"run_id\":2"), "%s", line);
    cr_assert_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_eq(HW(NULL, &e, "export", db, "--format", "csv", "--run", "9"), 1);
    cr_assert(strstr(e, "no run 9"), "%s", e);
    free(e);
}

Test(cli, export_csv_quotes_json_columns) {
    char db[128];
    snprintf(db, sizeof db, "%s/t.db", dir);
    make_db(db);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "export", db, "--format", "csv", "--run", "1"), 0, "%s", e);
    cr_assert(!strncmp(o, "id,run_id,env,worker,episode,step,kind,reset_seed,action,observation,reward,terminated,truncated,"
                          "metrics,feasible,time\n",
                       117),
              "%s", o);
    const char *row2 = strchr(o, '\n') + 1;
    cr_assert(!strncmp(row2, "1,1,diag-v0,w0,0,0,step,3,\"[0,1]\",\"[0.5,0.25]\",0,0,0,"
                             "\"{\"\"distance\"\":0.125,\"\"note\"\":\"\"a \\\"\"quoted\\\"\", text\"\"}\",,1000\n",
                       strlen("1,1,diag-v0,w0,0,0,step,3,\"[0,1]\",\"[0.5,0.25]\",0,0,0,"
                              "\"{\"\"distance\"\":0.125,\"\"note\"\":\"\"a \\\"\"quoted\\\"\", text\"\"}\",,1000\n")),
              "%s", row2);
    int lines = 0;
    for (char *p = o; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 4, "header + 3 trials of run 1");
    cr_assert(strstr(o, "\n3,1,diag-v0,w0,0,2,step,3,\"[2,1]\",\"[0.5,0.25]\",0.20000000000000001,1,0,"), "%s", o);
    free(o);
    free(e);
}

Test(cli, report_best_design_and_convergence) {
    char db[128], svg[128];
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(svg, sizeof svg, "%s/curve.svg", dir);
    make_db(db);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "report", db, "--svg", svg), 0, "%s", e);
    json_t *j = parse(o);
    json_t *r1 = json_array_get(json_object_get(j, "runs"), 0), *r2 = json_array_get(json_object_get(j, "runs"), 1);
    cr_assert_eq(json_integer_value(json_object_get(r1, "trials")), 3);
    /* rewards 0, 0.1, 0.2: the best is the third trial, reached (within 5%) at trial 3 */
    cr_assert_float_eq(json_real_value(json_object_get(r1, "best_reward")), 0.2, 1e-12);
    cr_assert_eq(json_integer_value(json_object_get(r1, "best_trial")), 3);
    cr_assert_eq(json_integer_value(json_object_get(r1, "trials_to_within")), 3);
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(r1, "best_action"), 0)), 2);
    cr_assert_float_eq(json_real_value(json_object_get(json_object_get(r1, "best_metrics"), "distance")), 0.125, 0);
    /* a run whose only reward is NaN has no best */
    cr_assert_null(json_object_get(r2, "best_reward"));
    cr_assert(json_is_null(json_object_get(r2, "best_action")));
    json_decref(j);
    free(o);
    free(e);
    FILE *f = fopen(svg, "r");
    cr_assert(f, "the SVG was written");
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_assert(strstr(buf, "<svg") && strstr(buf, "<polyline"), "%s", buf);
    cr_assert_eq(HW(NULL, &e, "report", db, "--run", "7"), 1);
    cr_assert(strstr(e, "no run 7"), "%s", e);
    free(e);
    cr_assert_eq(HW(NULL, &e, "report", db, "--within", "2"), 2);
    cr_assert(strstr(e, "--within"), "%s", e);
    free(e);
}

/* A long evaluate (sched-v0 "mode":"network" scores every layer) says it is working on stderr
 * instead of staying silent; stdout keeps its one JSON line; a quick eval prints nothing. */
Test(cli, long_eval_prints_progress) {
    char *o, *e;
    setenv("HWGYM_PROGRESS_S", "0.05", 1);
    int rc = HW(&o, &e, "eval", "sched-v0", "--config", "{\"accelerator\":\"eyeriss_v1\",\"model\":\"vgg16\",\"mode\":\"network\"}",
                "--action", "{\"baseline\":\"bottom-up\"}");
    unsetenv("HWGYM_PROGRESS_S");
    cr_assert_eq(rc, 0, "%s", e);
    cr_assert(strstr(e, "hwgym eval: scoring one design point of sched-v0 (vgg16, network): ") && strstr(e, " s so far\n"), "%s", e);
    cr_assert(strstr(e, ": done in "), "%s", e);
    json_t *j = parse(o);
    cr_assert(json_object_get(j, "reward"));
    json_decref(j);
    free(o);
    free(e);
    cr_assert_eq(HW(&o, &e, "eval", "diag-v0", "--action", "[0,0,0,0]"), 0, "%s", e);
    cr_assert_str_eq(e, "", "a quick eval prints nothing on stderr");
    free(o);
    free(e);
}
