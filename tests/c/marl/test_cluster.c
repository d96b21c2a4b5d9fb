/* Algorithm 1 (clients/cli/cluster.c, included here: the CLI objects are not in the test
 * libraries): Pearson by hand, average linkage by hand, cuts, assignment JSON round trip, and
 * `hwgym cluster` on a synthetic trial DB with known correlated parameter groups. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../clients/cli/cluster.c"
#include "../common/hwtest.h"
#include "hwgym_trials.h"

TestSuite(cluster, .timeout = 60);

Test(cluster, pearson_by_hand_on_three_params) {
    /* x = 1..4, y = 2x (r = 1), z = [4,1,3,2]: dx = [-1.5,-.5,.5,1.5], dz = [1.5,-1.5,.5,-.5],
     * sum dx dz = -2, sum dx^2 = sum dz^2 = 5 -> r(x,z) = r(y,z) = -0.4 */
    const double d[] = {1, 2, 4, 2, 4, 1, 3, 6, 3, 4, 8, 2};
    double c[9];
    hw_err e;
    cr_assert_eq(hwcl_pearson(d, 4, 3, c, &e), 0);
    cr_assert_float_eq(c[0 * 3 + 1], 1.0, 1e-12);
    cr_assert_float_eq(c[0 * 3 + 2], -0.4, 1e-12);
    cr_assert_float_eq(c[1 * 3 + 2], -0.4, 1e-12);
    cr_assert_float_eq(c[2 * 3 + 0], -0.4, 1e-12);
    for (int i = 0; i < 3; i++) cr_assert_eq(c[i * 3 + i], 1.0);
    double dist[9];
    hwcl_distance(c, 3, dist);
    cr_assert_float_eq(dist[0 * 3 + 1], 0.0, 1e-12);
    cr_assert_float_eq(dist[0 * 3 + 2], 0.6, 1e-12);
}

Test(cluster, constant_column_has_zero_correlation) {
    const double d[] = {1, 5, 2, 2, 5, 4, 3, 5, 6};
    double c[9];
    hw_err e;
    cr_assert_eq(hwcl_pearson(d, 3, 3, c, &e), 0);
    cr_assert_eq(c[0 * 3 + 1], 0.0);
    cr_assert_eq(c[1 * 3 + 2], 0.0);
    cr_assert_eq(c[1 * 3 + 1], 1.0);
    cr_assert_float_eq(c[0 * 3 + 2], 1.0, 1e-12);
    cr_assert_neq(hwcl_pearson(d, 1, 3, c, &e), 0, "one sample must be refused");
}

Test(cluster, average_linkage_by_hand) {
    /* 4 items: d(0,1)=0.1, d(2,3)=0.2, d(0,2)=0.5, d(0,3)=0.7, d(1,2)=0.6, d(1,3)=0.8.
     * merge 1: {0,1} at 0.1; merge 2: {2,3} at 0.2; merge 3: average of the 4 cross
     * distances (0.5+0.7+0.6+0.8)/4 = 0.65. */
    const double D[] = {0, .1, .5, .7, .1, 0, .6, .8, .5, .6, 0, .2, .7, .8, .2, 0};
    hwcl_merge m[3];
    hw_err e;
    cr_assert_eq(hwcl_linkage(D, 4, m, &e), 0);
    cr_assert(m[0].a == 0 && m[0].b == 1);
    cr_assert_float_eq(m[0].dist, 0.1, 1e-12);
    cr_assert(m[1].a == 2 && m[1].b == 3);
    cr_assert_float_eq(m[1].dist, 0.2, 1e-12);
    cr_assert(m[2].a == 4 && m[2].b == 5, "root joins nodes 4 and 5, got %d %d", m[2].a, m[2].b);
    cr_assert_float_eq(m[2].dist, 0.65, 1e-12);
    cr_assert_eq(m[2].size, 4);
    int lab[4];
    cr_assert_eq(hwcl_cut(m, 4, 2, 0, lab), 2);
    cr_assert(lab[0] == 0 && lab[1] == 0 && lab[2] == 1 && lab[3] == 1);
    cr_assert_eq(hwcl_cut(m, 4, 4, 0, lab), 4);
    cr_assert(lab[0] == 0 && lab[1] == 1 && lab[2] == 2 && lab[3] == 3);
    cr_assert_eq(hwcl_cut(m, 4, 1, 0, lab), 1);
    cr_assert_eq(hwcl_cut(m, 4, 0, 0.15, lab), 3, "threshold 0.15 applies only the first merge");
    cr_assert(lab[0] == 0 && lab[1] == 0 && lab[2] == 1 && lab[3] == 2);
    double h = hwcl_cut_height(m, 4, 2);
    cr_assert(h > 0.2 && h < 0.65);
    int order[4];
    hwcl_leaf_order(m, 4, order);
    cr_assert(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
    /* UPGMA weighting: 3 items where {0,1} merge, then d({0,1},2) = (d02 + d12)/2 */
    const double D3[] = {0, .1, .4, .1, 0, .8, .4, .8, 0};
    hwcl_merge m3[2];
    cr_assert_eq(hwcl_linkage(D3, 3, m3, &e), 0);
    cr_assert_float_eq(m3[1].dist, 0.6, 1e-12);
}

Test(cluster, assignment_json_round_trip_and_errors) {
    const char *names[] = {"a", "b", "c", "d", "e"};
    int lab[5] = {0, 1, 0, 2, 1};
    json_t *j = hwcl_assignment_json(lab, 5, 3, names);
    char *txt = json_dumps(j, JSON_COMPACT);
    cr_assert_str_eq(txt, "{\"agents\":[{\"name\":\"a0\",\"dims\":[0,2],\"params\":[\"a\",\"c\"]},{\"name\":\"a1\","
                          "\"dims\":[1,4],\"params\":[\"b\",\"e\"]},{\"name\":\"a2\",\"dims\":[3],\"params\":[\"d\"]}]}");
    free(txt);
    hw_err e;
    json_t *p = hwcl_assignment_parse(j, 5, &e);
    cr_assert(p, "%s", e.msg);
    cr_assert_eq(json_array_size(p), 3);
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(json_array_get(p, 1), "dims"), 1)), 4);
    json_decref(p);
    cr_assert_null(hwcl_assignment_parse(j, 6, &e), "element 5 is unassigned");
    cr_assert(strstr(e.msg, "action element 5"), "%s", e.msg);
    json_decref(j);
    json_t *dup = json_loads("{\"agents\":[{\"name\":\"x\",\"dims\":[0,1]},{\"name\":\"y\",\"dims\":[1]}]}", 0, NULL);
    cr_assert_null(hwcl_assignment_parse(dup, 2, &e));
    cr_assert(strstr(e.msg, "agents[1].dims[0]"), "%s", e.msg);
    json_decref(dup);
    json_t *nm = json_loads("{\"agents\":[{\"name\":\"x\",\"dims\":[0]},{\"name\":\"x\",\"dims\":[1]}]}", 0, NULL);
    cr_assert_null(hwcl_assignment_parse(nm, 2, &e));
    cr_assert(strstr(e.msg, "agents[1].name"), "%s", e.msg);
    json_decref(nm);
}

/* A run of diag-v0 (dims 6, choices 8) whose actions have two correlated groups {0,1,2} and
 * {3,4} and an independent parameter 5; the reward favours nothing in particular. */
static void synth_db(const char *path, int64_t *run) {
    hw_err e;
    hwt_db *db = hwt_open(path, NULL, &e);
    cr_assert(db, "%s", e.msg);
    json_t *cfg = json_pack("{s:i}", "dims", 6);
    hwt_run r = {.agent = "synthetic", .env = "diag-v0", .env_config = cfg};
    *run = hwt_begin_run(db, &r, &e);
    cr_assert_gt(*run, 0, "%s", e.msg);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 7);
    for (int t = 0; t < 2000; t++) {
        int u = (int)gsl_rng_uniform_int(g, 8), v = (int)gsl_rng_uniform_int(g, 8);
        int a[6];
        for (int k = 0; k < 3; k++) a[k] = gsl_rng_uniform(g) < 0.85 ? u : (int)gsl_rng_uniform_int(g, 8);
        for (int k = 3; k < 5; k++) a[k] = gsl_rng_uniform(g) < 0.85 ? v : (int)gsl_rng_uniform_int(g, 8);
        a[5] = (int)gsl_rng_uniform_int(g, 8);
        json_t *act = json_pack("[iiiiii]", a[0], a[1], a[2], a[3], a[4], a[5]);
        hwt_trial tr = {.run_id = *run, .episode = t / 16, .step = t % 16, .action = act, .has_reward = true,
                        .reward = gsl_rng_uniform(g), .terminated = -1, .truncated = -1, .feasible = -1};
        cr_assert_eq(hwt_add_trial(db, &tr, &e), 0, "%s", e.msg);
        json_decref(act);
    }
    gsl_rng_free(g);
    json_decref(cfg);
    cr_assert_eq(hwt_end_run(db, *run, &e), 0);
    cr_assert_eq(hwt_close(db, &e), 0);
}

Test(cluster, cli_recovers_known_groups) {
    char bin[4096], dir[64], db[128], out[160], svg[160], runs[32];
    cr_assert(hwtest_bin("hwgym", bin, sizeof bin), "BUILD/bin/hwgym not found");
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(out, sizeof out, "%s/a.json", dir);
    snprintf(svg, sizeof svg, "%s/f.svg", dir);
    int64_t run;
    synth_db(db, &run);
    snprintf(runs, sizeof runs, "%lld", (long long)run);
    const char *argv[] = {bin, "cluster", db, "--run", runs, "--budget", "3", "--out", out, "--svg", svg, NULL};
    char *o = NULL, *er = NULL;
    int st = hwtest_run(argv, &o, &er);
    cr_assert_eq(st, 0, "hwgym cluster failed: %s", er);
    /* dendrogram on stderr names the parameters of diag-v0 */
    cr_assert(strstr(er, "dendrogram") && strstr(er, "6 parameters -> 3 agents"), "%s", er);
    json_t *j = json_loads(o, 0, NULL);
    cr_assert(j, "stdout is not JSON: %s", o);
    json_t *ag = json_object_get(j, "agents");
    cr_assert_eq(json_array_size(ag), 3, "%s", o);
    char *groups = json_dumps(ag, JSON_COMPACT);
    cr_assert(strstr(groups, "\"dims\":[0,1,2]") && strstr(groups, "\"dims\":[3,4]") && strstr(groups, "\"dims\":[5]"),
              "groups not recovered: %s", groups);
    free(groups);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 300, "top 15%% of 2000");
    cr_assert_str_eq(json_string_value(json_object_get(j, "linkage")), "average");
    /* --out wrote the same assignment; --svg wrote a figure with a heatmap cell per pair */
    json_t *f = json_load_file(out, 0, NULL);
    cr_assert(f && json_equal(json_object_get(f, "agents"), ag));
    FILE *fs = fopen(svg, "r");
    cr_assert(fs);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fs);
    buf[n] = 0;
    fclose(fs);
    cr_assert(strstr(buf, "<svg") && strstr(buf, "</svg>"));
    int cells = 0;
    for (char *p = buf; (p = strstr(p, "stroke=\"#ccc\"")); p++) cells++;
    cr_assert_eq(cells, 36);
    json_decref(f);
    json_decref(j);
    free(o);
    free(er);
    /* budget 6 = fully decentralised; a threshold of 1 = single agent */
    const char *argv2[] = {bin, "cluster", db, "--run", runs, "--budget", "6", NULL};
    cr_assert_eq(hwtest_run(argv2, &o, NULL), 0);
    j = json_loads(o, 0, NULL);
    cr_assert_eq(json_array_size(json_object_get(j, "agents")), 6);
    json_decref(j);
    free(o);
    const char *argv3[] = {bin, "cluster", db, "--run", runs, "--threshold", "1.0", NULL};
    cr_assert_eq(hwtest_run(argv3, &o, NULL), 0);
    j = json_loads(o, 0, NULL);
    cr_assert_eq(json_array_size(json_object_get(j, "agents")), 1);
    json_decref(j);
    free(o);
    /* errors name the argument */
    const char *argv4[] = {bin, "cluster", db, "--run", "99", "--budget", "2", NULL};
    cr_assert_eq(hwtest_run(argv4, NULL, &er), 1);
    cr_assert(strstr(er, "no run 99"), "%s", er);
    free(er);
    const char *argv5[] = {bin, "cluster", db, "--run", runs, NULL};
    cr_assert_eq(hwtest_run(argv5, NULL, &er), 2);
    cr_assert(strstr(er, "--budget"), "%s", er);
    free(er);
    hwtest_rmtree(dir);
}
