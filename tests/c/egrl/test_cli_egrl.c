/* test_cli_egrl.c - hwgym-egrl at its boundary: usage errors, an EGRL run through a real
 * server logging every evaluation as a trial (counts, workers, best = the DB's maximum),
 * determinism across server and in-process runs, the baselines, and --save / --load
 * --eval-only transfer to another workload. Small networks keep it fast under ASan. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "../common/hwtest_db.h"

#define R50 "{\"workload\":\"resnet50\"}"
static const char *SMALL[] = {"--hidden", "8", "--out", "8", "--heads", "2", "--depth", "2", "--critic-hidden", "4",
                              "--batch", "4", "--quiet", NULL};

static void need(char *path, size_t cap) {
    if (!hwtest_bin("hwgym-egrl", path, cap)) cr_skip_test("BUILD/bin/hwgym-egrl is not built");
}

static json_t *run_ok(const char *bin, const char *const *args, int want_rc) {
    const char *prefix[] = {bin, NULL};
    char *out = NULL, *err = NULL;
    int rc = hwtest_run_args(prefix, args, &out, &err);
    cr_assert_eq(rc, want_rc, "exit %d: %s", rc, err);
    json_t *j = NULL;
    if (want_rc == 0) {
        j = json_loads(out, 0, NULL);
        cr_assert(json_is_object(j), "summary: %s", out);
    }
    free(out);
    free(err);
    return j;
}

/* args = a + SMALL */
static const char **with_small(const char **a, int na, const char **buf) {
    int k = 0;
    for (int i = 0; i < na; i++) buf[k++] = a[i];
    for (int i = 0; SMALL[i]; i++) buf[k++] = SMALL[i];
    buf[k] = NULL;
    return buf;
}

Test(egrl_cli, usage_errors) {
    char bin[512];
    need(bin, sizeof bin);
    const char *prefix[] = {bin, NULL};
    char *out = NULL, *err = NULL;
    const char *h[] = {"--help", NULL};
    cr_assert_eq(hwtest_run_args(prefix, h, &out, &err), 0);
    cr_assert(strstr(out, "--mode") || strstr(err, "--mode"));
    free(out), free(err);
    const char *m[] = {"--endpoint", "local", "--mode", "sgd", NULL};
    cr_assert_eq(hwtest_run_args(prefix, m, NULL, &err), 2);
    cr_assert(strstr(err, "--mode"), "%s", err);
    free(err);
    const char *e[] = {"--endpoint", "local", "--decode", "argmax", NULL};
    cr_assert_eq(hwtest_run_args(prefix, e, NULL, &err), 2);
    cr_assert(strstr(err, "--decode works with --eval-only"), "%s", err);
    free(err);
    const char *hh[] = {"--endpoint", "local", "--hidden", "10", "--heads", "4", NULL};
    cr_assert_eq(hwtest_run_args(prefix, hh, NULL, &err), 2);
    cr_assert(strstr(err, "divisible"), "%s", err);
    free(err);
    const char *w[] = {"--endpoint", "local", "--config", "{\"workload\":\"nope\"}", NULL};
    cr_assert_eq(hwtest_run_args(prefix, w, NULL, &err), 1);
    cr_assert(strstr(err, "workload"), "%s", err);
    free(err);
    const char *fx[] = {"--endpoint", "local", "--features", "all", NULL};
    cr_assert_eq(hwtest_run_args(prefix, fx, NULL, &err), 2);
    cr_assert(strstr(err, "--features"), "%s", err);
    free(err);
    const char *d[] = {"--endpoint", "local", "--env", "diag-v0", NULL};
    cr_assert_eq(hwtest_run_args(prefix, d, NULL, &err), 1);
    cr_assert(strstr(err, "placement-v0"), "%s", err);
    free(err);
}

Test(egrl_cli, egrl_through_server_logs_every_evaluation_and_is_deterministic, .timeout = 120) {
    char bin[512], dir[64], db[128];
    need(bin, sizeof bin);
    hwtest_server srv;
    int src = hwtest_server_start(&srv, NULL);
    if (src == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(src, 0);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/e.db", dir);
    /* population 6 (2 Boltzmann at 0.34) + 1 PG rollout = 7 evaluations per generation */
    const char *eps[3] = {srv.endpoint, "local", srv.endpoint}, *seeds[3] = {"3", "3", "4"};
    for (int r = 0; r < 3; r++) {
        const char *a[] = {"--endpoint", eps[r], "--config", R50, "--budget", "35", "--seed", seeds[r], "--pop", "6",
                           "--boltzmann-frac", "0.34", "--db", db};
        const char *buf[64];
        json_t *j = run_ok(bin, with_small(a, 14, buf), 0);
        cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 35);
        cr_assert_eq(json_integer_value(json_object_get(j, "evaluate_calls")), 5, "one evaluate_batch per generation");
        cr_assert_eq(json_integer_value(json_object_get(j, "generations")), 5);
        cr_assert_eq(json_integer_value(json_object_get(j, "population")), 6);
        cr_assert_eq(json_integer_value(json_object_get(j, "boltzmann")), 2);
        cr_assert_eq(json_integer_value(json_object_get(j, "updates")), 4 * 7, "one update per evaluation of the four generations before the last");
        cr_assert_str_eq(json_string_value(json_object_get(j, "mode")), "egrl");
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT max(reward) FROM trials WHERE run_id = %d", r + 1);
        cr_assert_float_eq(json_real_value(json_object_get(j, "best_reward")), hwtest_db_double(db, sql), 1e-12);
        /* best_speedup: the best valid speedup, never above best_reward when that is positive */
        double bs = json_real_value(json_object_get(j, "best_speedup")), br = json_real_value(json_object_get(j, "best_reward"));
        cr_assert(bs >= 0 && (br <= 0 || fabs(bs - br) < 1e-12), "best_speedup %g best_reward %g", bs, br);
        json_decref(j);
    }
    cr_assert_eq(hwtest_server_stop(&srv), 0);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM trials WHERE run_id = 1 AND kind = 'eval'"), 35);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM trials WHERE run_id = 1 AND worker = 'pg0'"), 5);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM trials WHERE run_id = 1 AND worker LIKE 'bz%'"), 10);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM trials WHERE run_id = 1 AND worker LIKE 'gnn%'"), 20);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(DISTINCT episode) FROM trials WHERE run_id = 1"), 5);
    const char *same = "SELECT count(*) FROM trials a JOIN trials b ON a.id - (SELECT min(id) FROM trials WHERE run_id = 1) = "
                       "b.id - (SELECT min(id) FROM trials WHERE run_id = %d) WHERE a.run_id = 1 AND b.run_id = %d "
                       "AND a.action = b.action AND a.reward = b.reward AND a.worker = b.worker";
    char sql[512];
    snprintf(sql, sizeof sql, same, 2, 2);
    cr_assert_eq(hwtest_db_double(db, sql), 35, "same seed, server and in-process: the same 35 trials");
    snprintf(sql, sizeof sql, same, 3, 3);
    cr_assert_lt(hwtest_db_double(db, sql), 35, "another seed gives other trials");
    hwtest_rmtree(dir);
}

Test(egrl_cli, baselines_and_transfer, .timeout = 120) {
    char bin[512], dir[64], db[128], pol[128];
    need(bin, sizeof bin);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/b.db", dir);
    snprintf(pol, sizeof pol, "%s/pol.gnn", dir);
    /* greedy-dp: 9 choices of node 0 in one batch, then node 1 on top of the best */
    const char *dp[] = {"--endpoint", "local", "--config", R50, "--mode", "greedy-dp", "--budget", "18", "--db", db, "--quiet", NULL};
    json_t *j = run_ok(bin, dp, 0);
    cr_assert_eq(json_integer_value(json_object_get(j, "evaluate_calls")), 2);
    json_decref(j);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(DISTINCT json_extract(action, '$[0]') * 3 + json_extract(action, '$[1]')) FROM trials "
                       "WHERE run_id = 1 AND id <= 9"), 9);
    cr_assert_eq(hwtest_db_double(db, "SELECT count(*) FROM trials WHERE run_id = 1 AND id <= 9 AND json_extract(action, '$[5]') != 0"), 0,
                 "the other nodes stay all-DRAM during node 0");
    /* ea and pg */
    const char *ea[] = {"--endpoint", "local", "--config", R50, "--mode", "ea", "--budget", "20", "--pop", "5"};
    const char *buf[64];
    j = run_ok(bin, with_small(ea, 10, buf), 0);
    cr_assert_eq(json_integer_value(json_object_get(j, "evaluate_calls")), 4);
    cr_assert_null(json_object_get(j, "updates"));
    json_decref(j);
    const char *pg[] = {"--endpoint", "local", "--config", R50, "--mode", "pg", "--budget", "10", "--save", pol};
    j = run_ok(bin, with_small(pg, 10, buf), 0);
    cr_assert_eq(json_integer_value(json_object_get(j, "updates")), 6, "one update per evaluation from the 4th (a batch) to the 9th");
    json_decref(j);
    /* the saved policy scores on ResNet-101 without training: one evaluation */
    const char *ev[] = {"--endpoint", "local", "--config", "{\"workload\":\"resnet101\"}", "--load", pol, "--eval-only",
                        "--quiet", NULL};
    j = run_ok(bin, ev, 0);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 1);
    cr_assert_str_eq(json_string_value(json_object_get(j, "mode")), "eval-only");
    cr_assert_eq(json_array_size(json_object_get(j, "best_action")), 2 * 108);
    json_decref(j);
    /* egrl --save then --load continues from the file */
    const char *eg[] = {"--endpoint", "local", "--config", R50, "--budget", "14", "--pop", "6", "--save", pol};
    json_decref(run_ok(bin, with_small(eg, 10, buf), 0));
    FILE *f = fopen(pol, "rb");
    char magic[5] = {0};
    cr_assert(f && fread(magic, 1, 4, f) == 4);
    fclose(f);
    cr_assert_str_eq(magic, "HWGN");
    const char *bad[] = {"--endpoint", "local", "--load", db, "--eval-only", "--quiet", NULL};
    char *err = NULL;
    const char *prefix[] = {bin, NULL};
    cr_assert_eq(hwtest_run_args(prefix, bad, NULL, &err), 1);
    cr_assert(strstr(err, "magic"), "%s", err);
    free(err);
    hwtest_rmtree(dir);
}

static json_t *eval_only(const char *bin, const char *cfg, const char *pol, const char *decode, const char *seed) {
    const char *a[32];
    int k = 0;
    const char *head[] = {"--endpoint", "local", "--config", cfg, "--eval-only", "--seed", seed};
    for (int i = 0; i < 7; i++) a[k++] = head[i];
    if (pol) a[k++] = "--load", a[k++] = pol;
    if (decode) a[k++] = "--decode", a[k++] = decode;
    for (int i = 0; SMALL[i]; i++) a[k++] = SMALL[i]; /* the untrained GNN's architecture (a --load file has its own) */
    a[k] = NULL;
    return run_ok(bin, a, 0);
}

static double metric(const json_t *j, const char *key) {
    return json_number_value(json_object_get(json_object_get(j, "best_metrics"), key));
}

/* --eval-only decodes to fit the chip by default (--decode capacity): a small policy trained
 * briefly on ResNet-50 (nnp-i chip) gives, on the larger ResNet-101 and BERT, maps that need no
 * rectification (eps 0, speedup > 0), and on ResNet-50 itself and on the default chip too. Its
 * argmax (--decode argmax) overflows BERT (speedup 0, eps > 0); where the argmax fits, the
 * decoded map is the argmax map itself. */
Test(egrl_cli, capacity_decoding_transfers_valid_maps, .timeout = 240) {
    char bin[512], dir[64], pol[128];
    need(bin, sizeof bin);
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(pol, sizeof pol, "%s/pol.gnn", dir);
    const char *buf[64];
    const char *eg[] = {"--endpoint", "local", "--config", "{\"workload\":\"resnet50\",\"hw\":\"nnp-i\"}", "--budget", "12",
                        "--pop", "4", "--save", pol};
    json_decref(run_ok(bin, with_small(eg, 10, buf), 0));
    const char *wl[] = {"{\"workload\":\"resnet101\",\"hw\":\"nnp-i\"}", "{\"workload\":\"bert_base\",\"hw\":\"nnp-i\"}",
                        "{\"workload\":\"resnet50\"}", "{\"workload\":\"resnet50\",\"hw\":\"nnp-i\"}"};
    int overflowed = 0, fitted = 0;
    for (int k = 0; k < 4; k++) {
        json_t *j = eval_only(bin, wl[k], pol, NULL, "1");
        cr_assert_str_eq(json_string_value(json_object_get(j, "decode")), "capacity");
        cr_assert_str_eq(json_string_value(json_object_get(j, "policy")), "loaded");
        cr_assert_eq(metric(j, "eps"), 0.0, "%s: eps %g", wl[k], metric(j, "eps"));
        cr_assert_gt(json_number_value(json_object_get(j, "best_speedup")), 0.0, "%s", wl[k]);
        json_t *g = eval_only(bin, wl[k], pol, "argmax", "1");
        cr_assert_str_eq(json_string_value(json_object_get(g, "decode")), "argmax");
        if (metric(g, "eps") > 0) {
            overflowed++;
            cr_assert_eq(json_number_value(json_object_get(g, "best_speedup")), 0.0, "%s: an overflowing map scores 0", wl[k]);
            cr_assert_not(json_equal(json_object_get(j, "best_action"), json_object_get(g, "best_action")), "%s", wl[k]);
        } else {
            fitted++;
            cr_assert(json_equal(json_object_get(j, "best_action"), json_object_get(g, "best_action")),
                      "%s: the argmax fits, so decoding keeps every choice", wl[k]);
        }
        json_decref(j);
        json_decref(g);
    }
    cr_assert(overflowed >= 1 && fitted >= 1, "both cases seen: %d overflowed, %d fitted", overflowed, fitted);
    const char *bad2[] = {"--endpoint", "local", "--load", pol, "--eval-only", "--decode", "raw", "--quiet", NULL};
    char *err = NULL;
    const char *prefix[] = {bin, NULL};
    cr_assert_eq(hwtest_run_args(prefix, bad2, NULL, &err), 2);
    cr_assert(strstr(err, "--decode: expected capacity (the default) or argmax"), "%s", err);
    free(err);
    hwtest_rmtree(dir);
}

/* --eval-only without --load scores the untrained GNN of --seed (Figure 5's control): one
 * evaluation, the same map for the same seed, another for another seed, decoded to fit. */
Test(egrl_cli, eval_only_without_load_is_the_untrained_control, .timeout = 120) {
    char bin[512];
    need(bin, sizeof bin);
    const char *cfg = "{\"workload\":\"bert_base\",\"hw\":\"nnp-i\"}";
    json_t *a = eval_only(bin, cfg, NULL, NULL, "1"), *b = eval_only(bin, cfg, NULL, NULL, "1"),
           *c = eval_only(bin, cfg, NULL, NULL, "2");
    cr_assert_str_eq(json_string_value(json_object_get(a, "policy")), "untrained");
    cr_assert_str_eq(json_string_value(json_object_get(a, "mode")), "eval-only");
    cr_assert_eq(json_integer_value(json_object_get(a, "samples")), 1);
    cr_assert_eq(metric(a, "eps"), 0.0);
    cr_assert_gt(json_number_value(json_object_get(a, "best_speedup")), 0.0);
    cr_assert(json_equal(json_object_get(a, "best_action"), json_object_get(b, "best_action")), "same seed, same map");
    cr_assert_not(json_equal(json_object_get(a, "best_action"), json_object_get(c, "best_action")), "another seed, another map");
    json_decref(a);
    json_decref(b);
    json_decref(c);
}
