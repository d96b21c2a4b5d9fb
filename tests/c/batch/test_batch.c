/* test_batch.c - issue 18: the lean evaluate_batch and the evaluation cache, at the wire (a real
 * hw_server_run in a thread, libhwgym as the client), plus the cache module's eviction and the
 * trial log's schema-2 migration. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "hwgym_client.h"
#include "hwgym_trials.h"
#include "../common/hwtest.h"
#include "env_lean.h"
#include "registry.h"
#include "hw_codec.h"
#include "reply_slot.h"
#include "batch_block.h"
#include "server.h"
#include "batch_srv.h"


static const char *MCFG = "{\"model\":\"mobilenet_v2\",\"layer\":2}";
static int64_t P[4][10] = {{3, 1, 0, 1, 5, 2, 0, 0, 3, 5}, {3, 1, 0, 1, 5, 2, 0, 0, 3, 5}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                           {9, 9, 9, 9, 9, 9, 9, 9, 9, 99}};

static int metric_index(const hwc_lean *b, const char *name) {
    for (int j = 0; j < b->nmetrics; j++)
        if (!strcmp(b->names[j], name)) return j;
    return -1;
}

Test(lean, matches_full_evaluate_and_reports_sparse_errors) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    json_t *cfg = json_loads(MCFG, 0, NULL);
    hw_array a = {HW_DT_INT64, 2, {4, 10}, P};
    const char *want[] = {"runtime", "energy"};
    hwc_lean b;
    hw_err e;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, want, 2, &b, &e), 0, "%s", e.msg);
    cr_assert_eq(b.n, 4);
    cr_assert_eq(b.nmetrics, 2);
    cr_assert_str_eq(b.names[0], "runtime");
    for (int k = 0; k < 3; k++) {
        json_t *pt = json_array(), *m = NULL;
        for (int j = 0; j < 10; j++) json_array_append_new(pt, json_integer(P[k][j]));
        double r;
        cr_assert_eq(hwc_evaluate(c, NULL, "maestro-v0", cfg, pt, &r, &m, &e), 0, "%s", e.msg);
        cr_assert_eq(b.reward[k], r, "point %d: lean reward %g, evaluate %g", k, b.reward[k], r);
        cr_assert_eq(b.vals[0 * 4 + k], (double)json_integer_value(json_object_get(m, "runtime")));
        cr_assert_float_eq(b.vals[1 * 4 + k], json_real_value(json_object_get(m, "energy")), 1e-6);
        cr_assert_eq(b.feasible[k], json_is_true(json_object_get(m, "feasible")));
        cr_assert_null(b.error[k]);
        cr_assert(!b.cache_hit[k]); /* no cache on this server */
        json_decref(pt);
        json_decref(m);
    }
    cr_assert(isnan(b.reward[3]));
    cr_assert(isnan(b.vals[3]));
    cr_assert_eq(b.nerrors, 1);
    cr_assert(strstr(b.error[3], "BAD_ACTION: points[3]: action element 1 (parallel_dim)"), "%s", b.error[3]);
    hwc_lean_free(&b);
    /* no metrics: reward and feasible only */
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, NULL, 0, &b, &e), 0);
    cr_assert_eq(b.nmetrics, 0);
    hwc_lean_free(&b);
    /* "all": every numeric metric of the family */
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, NULL, -1, &b, &e), 0);
    cr_assert_geq(metric_index(&b, "runtime"), 0);
    cr_assert_geq(metric_index(&b, "num_pes"), 0);
    hwc_lean_free(&b);
    /* an unknown metric of a family with a lean entry: BAD_REQUEST naming it */
    const char *bad[] = {"runtime", "latencyy"};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, bad, 2, &b, &e), -1);
    cr_assert_eq(e.code, HW_E_BAD_REQUEST);
    cr_assert(strstr(e.msg, "metrics[1]") && strstr(e.msg, "latencyy"), "%s", e.msg);
    json_decref(cfg);
    srv_down(&s, c);
}

Test(lean, family_without_lean_entry_and_tables) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    /* dram-v0 has no lean entry: its JSON evaluate() scores (and validates) the point */
    int64_t d[2][10] = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {9, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    hw_array a = {HW_DT_INT64, 2, {2, 10}, d};
    const char *want[] = {"feasible", "nope"};
    hwc_lean b;
    hw_err e;
    json_t *cfg = json_loads("{\"count\":500,\"trace_seed\":1}", 0, NULL);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "dram-v0", cfg, &a, want, 2, &b, &e), 0, "%s", e.msg);
    cr_assert_eq(b.vals[0], 1.0, "a boolean metric is 0/1");
    cr_assert(isnan(b.vals[2]), "a metric the env does not report is NaN");
    cr_assert_not_null(b.error[1], "9 is out of range for PagePolicy");
    cr_assert(strstr(b.error[1], "points[1]"), "%s", b.error[1]);
    hwc_lean_free(&b);
    json_decref(cfg);
    /* diag-v0's lean entry: the same reward as evaluate() */
    json_t *dcfg = json_pack("{s:i}", "dims", 3), *pt = json_pack("[i,i,i]", 1, 2, 3), *m = NULL;
    int64_t dd[1][3] = {{1, 2, 3}};
    hw_array da = {HW_DT_INT64, 2, {1, 3}, dd};
    const char *dist[] = {"distance"};
    double r;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", dcfg, &da, dist, 1, &b, &e), 0, "%s", e.msg);
    cr_assert_eq(hwc_evaluate(c, NULL, "diag-v0", dcfg, pt, &r, &m, &e), 0);
    cr_assert_eq(b.reward[0], r);
    cr_assert_eq(b.vals[0], json_real_value(json_object_get(m, "distance")));
    hwc_lean_free(&b);
    json_decref(dcfg);
    json_decref(pt);
    json_decref(m);
    /* sched-v0 takes a table per point: a 3-D points array */
    int64_t t[1][10][8];
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 8; j++) t[0][i][j] = 1;
    hw_array ta = {HW_DT_INT64, 3, {1, 10, 8}, t};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "sched-v0", NULL, &ta, NULL, -1, &b, &e), 0, "%s", e.msg);
    cr_assert_null(b.error[0], "%s", b.error[0]);
    hwc_lean_free(&b);
    srv_down(&s, c);
}

static json_t *cache_stats(hwc_client *c) {
    json_t *st;
    hw_err e;
    cr_assert_eq(hwc_stats(c, &st, &e), 0);
    json_t *cs = json_incref(json_object_get(st, "cache"));
    json_decref(st);
    cr_assert(cs, "stats has a cache object");
    return cs;
}

static long long stat_i(json_t *cs, const char *k) { return (long long)json_integer_value(json_object_get(cs, k)); }

Test(cache, hits_merges_persists_and_is_shared_by_servers) {
    char dir[64], file[128];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/cache.db", dir);
    srv s;
    hwc_client *c = srv_up(&s, 16, file, 0);
    json_t *cfg = json_loads(MCFG, 0, NULL);
    hw_array a = {HW_DT_INT64, 2, {3, 10}, P};
    hwc_lean b;
    hw_err e;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
    cr_assert(!b.cache_hit[0] && b.cache_hit[1] && !b.cache_hit[2], "the duplicate point 1 is merged with point 0");
    cr_assert_eq(b.reward[1], b.reward[0]);
    double r0 = b.reward[0];
    hwc_lean_free(&b);
    json_t *cs = cache_stats(c);
    cr_assert_eq(stat_i(cs, "misses"), 2);
    cr_assert_eq(stat_i(cs, "merged"), 1);
    cr_assert_eq(stat_i(cs, "entries"), 2);
    json_decref(cs);
    /* the same points as float64 in another session's request: hits (normalised points) */
    double f[3][10];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 10; j++) f[k][j] = (double)P[k][j];
    hw_array fa = {HW_DT_FLOAT64, 2, {3, 10}, f};
    const char *want[] = {"runtime"};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &fa, want, 1, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 3; k++) cr_assert(b.cache_hit[k], "point %d", k);
    cr_assert_eq(b.reward[0], r0);
    cr_assert_gt(b.vals[0], 0, "metrics come from the cached record");
    hwc_lean_free(&b);
    cs = cache_stats(c);
    cr_assert_eq(stat_i(cs, "hits"), 3);
    json_decref(cs);
    /* another config is another key */
    json_t *cfg3 = json_loads("{\"model\":\"mobilenet_v2\",\"layer\":3}", 0, NULL);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg3, &a, NULL, 0, &b, &e), 0);
    cr_assert(!b.cache_hit[0]);
    hwc_lean_free(&b);
    /* a second server on the same file sees the first one's results (served from the file; not
     * flagged as hits: another client evaluated them and --cache-shared is off, issue 28) */
    srv s2;
    hwc_client *c2 = srv_up(&s2, 16, file, 0);
    cr_assert_eq(hwc_evaluate_lean(c2, NULL, "maestro-v0", cfg, &a, NULL, 0, &b, &e), 0);
    for (int k = 0; k < 3; k++) cr_assert(!b.cache_hit[k], "second server, point %d: another client's point flagged", k);
    cr_assert_eq(b.reward[0], r0);
    hwc_lean_free(&b);
    cs = cache_stats(c2);
    cr_assert_eq(stat_i(cs, "disk_hits"), 2);
    json_decref(cs);
    srv_down(&s2, c2);
    srv_down(&s, c);
    /* and a restarted server too */
    c = srv_up(&s, 16, file, 0);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", cfg, &a, NULL, 0, &b, &e), 0);
    cr_assert_eq(b.reward[0], r0);
    hwc_lean_free(&b);
    cs = cache_stats(c);
    cr_assert_eq(stat_i(cs, "disk_hits"), 2, "the restarted server answered from the file");
    json_decref(cs);
    srv_down(&s, c);
    json_decref(cfg);
    json_decref(cfg3);
    hwtest_rmtree(dir);
}

Test(cache, memory_bound_evicts_least_recently_used) {
    size_t budget = 4 * (sizeof(void *) * 8 + 64 + 32); /* a few small entries */
    hw_err e;
    hw_cache *c = hw_cache_open(NULL, budget, &e);
    cr_assert(c);
    unsigned char k[40][HW_CACHE_KEY];
    unsigned char rec[32] = {0};
    for (int i = 0; i < 40; i++) {
        memset(k[i], 0, HW_CACHE_KEY);
        k[i][0] = (unsigned char)i;
        k[i][9] = 7;
        hw_cache_put(c, k[i], HW_CACHE_PEER_UNKNOWN, i, true, rec, sizeof rec);
        hw_cache_val v;
        cr_assert(hw_cache_get(c, k[0], &v), "key 0 is used after every put, so it stays (LRU)");
    }
    hw_cache_val v;
    cr_assert(!hw_cache_get(c, k[1], &v), "an old, unused entry was evicted");
    cr_assert(hw_cache_get(c, k[39], &v) && v.reward == 39);
    json_t *st = hw_cache_stats(c);
    cr_assert_gt(json_integer_value(json_object_get(st, "evictions")), 0);
    cr_assert_leq(json_integer_value(json_object_get(st, "bytes")), (json_int_t)budget);
    json_decref(st);
    hw_cache_close(c);
}

Test(trials, schema1_file_migrates_and_search_logs_cache_hits) {
    char dir[64], db[128], ep[200];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    /* a version-1 file: the schema of before (no cache_hit), one run */
    sqlite3 *q;
    cr_assert_eq(sqlite3_open(db, &q), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(q,
                              "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, agent_config TEXT, env TEXT NOT NULL,"
                              " env_config TEXT, seed INTEGER, host TEXT, version TEXT, endpoint TEXT, started_at REAL NOT NULL, ended_at REAL);"
                              "CREATE TABLE trials (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, worker TEXT NOT NULL DEFAULT '0',"
                              " episode INTEGER NOT NULL, step INTEGER NOT NULL, kind TEXT NOT NULL DEFAULT 'step', reset_seed INTEGER,"
                              " action TEXT NOT NULL, observation TEXT, reward REAL, terminated INTEGER, truncated INTEGER, metrics TEXT,"
                              " feasible INTEGER, time REAL NOT NULL);"
                              "INSERT INTO runs (agent, env, started_at) VALUES ('old', 'diag-v0', 0);"
                              "INSERT INTO trials (run_id, episode, step, action, time) VALUES (1, 0, 0, '[1]', 0);"
                              "PRAGMA user_version = 1;",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(q);
    srv s;
    hwc_client *c = srv_up(&s, 16, NULL, 0);
    snprintf(ep, sizeof ep, "%s", s.ep);
    char bin[4200];
    cr_assert(hwtest_bin("hwgym-search", bin, sizeof bin));
    const char *argv[] = {bin, "--endpoint", ep, "--env", "maestro-v0", "--config", MCFG, "--algo", "ga", "--budget", "600",
                          "--seed", "3", "--db", db, "--quiet", NULL};
    char *out = NULL;
    cr_assert_eq(hwtest_run(argv, &out, NULL), 0);
    json_t *sum = json_loads(out, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(sum, "samples")), 600, "samples are counted whether hit or not");
    json_decref(sum);
    free(out);
    srv_down(&s, c);
    cr_assert_eq(sqlite3_open(db, &q), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(q, "SELECT (SELECT user_version FROM pragma_user_version), "
                                       "(SELECT count(*) FROM trials WHERE run_id = 2), "
                                       "(SELECT count(*) FROM trials WHERE run_id = 2 AND cache_hit = 1), "
                                       "(SELECT count(*) FROM trials WHERE run_id = 1 AND cache_hit IS NULL)",
                                    -1, &st, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(q));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int(st, 0), HWT_SCHEMA_VERSION);
    cr_assert_eq(sqlite3_column_int(st, 1), 600);
    cr_assert_gt(sqlite3_column_int(st, 2), 0, "a GA revisits points: some trials are cache hits");
    cr_assert_eq(sqlite3_column_int(st, 3), 1, "the old trial is kept, cache_hit NULL");
    sqlite3_finalize(st);
    sqlite3_close(q);
    hwtest_rmtree(dir);
}

/* the lean reward and a metric of point k against the JSON evaluate of the same point */
static void same_as_evaluate(hwc_client *c, const char *env, json_t *cfg, const hwc_lean *b, int k, json_t *pt, const char *metric) {
    json_t *m = NULL;
    double r;
    hw_err e;
    cr_assert_eq(hwc_evaluate(c, NULL, env, cfg, pt, &r, &m, &e), 0, "%s", e.msg);
    cr_assert_eq(b->reward[k], r, "%s point %d: lean reward %g, evaluate %g", env, k, b->reward[k], r);
    cr_assert_eq(b->feasible[k], json_is_true(json_object_get(m, "feasible")), "%s point %d", env, k);
    int j = metric_index(b, metric);
    cr_assert_geq(j, 0);
    json_t *v = json_object_get(m, metric);
    if (v) cr_assert_eq(b->vals[(size_t)j * b->n + (size_t)k], json_is_boolean(v) ? json_is_true(v) : json_number_value(v), "%s.%s", env, metric);
    else cr_assert(isnan(b->vals[(size_t)j * b->n + (size_t)k]), "%s.%s of an infeasible point", env, metric);
    json_decref(m);
}

Test(lean, sched_and_placement_entries_match_evaluate) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    hwc_lean b;
    hw_err e;
    /* sched-v0: the all-in-DRAM table (valid), a table breaking a column's product (infeasible),
     * and one with a zero factor (the point's error) */
    int64_t t[3][10][8];
    static const int64_t dims[8] = {1, 128, 1, 128, 3, 3, 28, 28};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 10; i++)
            for (int j = 0; j < 8; j++) t[k][i][j] = i == 9 ? dims[j] : 1;
    t[1][0][1] = 2;
    t[2][3][3] = 0;
    hw_array ta = {HW_DT_INT64, 3, {3, 10, 8}, t};
    const char *sm[] = {"energy_pj", "cycles"};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "sched-v0", NULL, &ta, sm, 2, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 2; k++) {
        json_t *pt = json_array();
        for (int i = 0; i < 10; i++) {
            json_t *row = json_array();
            for (int j = 0; j < 8; j++) json_array_append_new(row, json_integer(t[k][i][j]));
            json_array_append_new(pt, row);
        }
        same_as_evaluate(c, "sched-v0", NULL, &b, k, pt, "energy_pj");
        json_decref(pt);
    }
    cr_assert(b.feasible[0] && !b.feasible[1]);
    cr_assert(b.error[2] && strstr(b.error[2], "points[2]: table[3][3] (LB.K): expected a positive integer"), "%s", b.error[2]);
    hwc_lean_free(&b);
    /* placement-v0: random memory choices */
    json_t *pcfg = json_pack("{s:s}", "workload", "resnet50");
    hwc_session ps;
    cr_assert_eq(hwc_make(c, "placement-v0", pcfg, NULL, &ps, &e), 0, "%s", e.msg);
    int64_t nt = ps.act_numel;
    int64_t *pp = calloc((size_t)(2 * nt), sizeof(int64_t));
    for (int64_t i = 0; i < 2 * nt; i++) pp[i] = (i * 7 + i / 3) % 3;
    hw_array pa = {HW_DT_INT64, 2, {2, nt}, pp};
    const char *pm[] = {"latency_us", "valid", "eps"};
    cr_assert_eq(hwc_evaluate_lean(c, ps.token, NULL, NULL, &pa, pm, 3, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 2; k++) {
        json_t *pt = json_array();
        for (int64_t i = 0; i < nt; i++) json_array_append_new(pt, json_integer(pp[k * nt + i]));
        same_as_evaluate(c, "placement-v0", pcfg, &b, k, pt, "latency_us");
        same_as_evaluate(c, "placement-v0", pcfg, &b, k, pt, "eps");
        json_decref(pt);
    }
    hwc_lean_free(&b);
    hwc_session_free(&ps);
    free(pp);
    json_decref(pcfg);
    srv_down(&s, c);
}

Test(lean, big_batch_in_pipelined_chunks) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    enum { N = 140000 }; /* above libhwgym's 50,000-point chunk: three requests of 46,667 in flight */
    int64_t *p = malloc(sizeof(int64_t) * N * 2);
    for (int k = 0; k < N; k++) p[2 * k] = k % 8, p[2 * k + 1] = (k / 8) % 8;
    p[2 * 133000 + 1] = 9; /* out of range, in the second chunk */
    hw_array a = {HW_DT_INT64, 2, {N, 2}, p};
    json_t *cfg = json_pack("{s:i}", "dims", 2);
    const char *dist[] = {"distance"};
    hwc_lean b;
    hw_err e;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, dist, 1, &b, &e), 0, "%s", e.msg);
    cr_assert_eq(b.n, N);
    cr_assert_eq(b.nerrors, 1);
    cr_assert(b.error[133000] && strstr(b.error[133000], "BAD_ACTION: points[133000]: action element 1"), "the caller's index, not the chunk's: %s", b.error[133000]);
    static const int ks[] = {0, 46666, 46667, 93333, 93334, 139999};
    for (int i = 0; i < 6; i++) {
        json_t *pt = json_pack("[I,I]", (json_int_t)p[2 * ks[i]], (json_int_t)p[2 * ks[i] + 1]);
        same_as_evaluate(c, "diag-v0", cfg, &b, ks[i], pt, "distance");
        json_decref(pt);
    }
    hwc_lean_free(&b);
    json_decref(cfg);
    free(p);
    srv_down(&s, c);
}

Test(cache, one_key_for_a_config_in_any_key_order_or_form) {
    srv s;
    hwc_client *c = srv_up(&s, 16, NULL, 0);
    hw_array a = {HW_DT_INT64, 2, {3, 10}, P};
    hwc_lean b;
    hw_err e;
    json_t *c1 = json_loads("{\"model\":\"mobilenet_v2\",\"layer\":2}", 0, NULL), *c2 = json_loads("{\"layer\":2,\"model\":\"mobilenet_v2\"}", 0, NULL);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", c1, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
    cr_assert(!b.cache_hit[0]);
    hwc_lean_free(&b);
    /* session-less, the keys in another order: the same config */
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "maestro-v0", c2, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 3; k++) cr_assert(b.cache_hit[k], "point %d", k);
    hwc_lean_free(&b);
    /* a session made with that config: its JSON config hashes like the request's msgpack */
    hwc_session ss;
    cr_assert_eq(hwc_make(c, "maestro-v0", c2, NULL, &ss, &e), 0, "%s", e.msg);
    cr_assert_eq(hwc_evaluate_lean(c, ss.token, NULL, NULL, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 3; k++) cr_assert(b.cache_hit[k], "session, point %d", k);
    hwc_lean_free(&b);
    hwc_session_free(&ss);
    /* a config that differs only in an integer's type is another key */
    json_t *c3 = json_loads("{\"model\":\"mobilenet_v2\",\"layer\":2.0}", 0, NULL);
    if (hwc_evaluate_lean(c, NULL, "maestro-v0", c3, &a, NULL, 0, &b, &e) == 0) {
        cr_assert(!b.cache_hit[0]);
        hwc_lean_free(&b);
    }
    json_decref(c1);
    json_decref(c2);
    json_decref(c3);
    srv_down(&s, c);
}

/* diag-v0 scores blocks of points in one eval_many call on the server (env_lean.h): every reward
 * and distance must be bit for bit what the per-point lean entry gives in process, including the
 * points sharing a block with an out-of-range point (that block is scored point by point, which
 * names the bad point), and with the cache on (the points left to evaluate are then gathered
 * from the batch's todo list). */
static void diag_per_point(const int64_t *p, int n, int d, const char *cfgs, double *rw, double *dist) {
    hw_err e;
    json_t *cfg = json_loads(cfgs, 0, NULL);
    const hw_env_family *fam;
    void *env = hw_env_create("diag-v0", cfg, &fam, &e);
    cr_assert(env, "%s", e.msg);
    const hw_env_lean *L = hw_env_lean_find("diag-v0");
    cr_assert(L && L->eval_many, "diag-v0 has a vectorised lean entry");
    for (int k = 0; k < n; k++) {
        hw_act act = {(size_t)d, (int64_t *)p + (size_t)k * (size_t)d, NULL};
        bool f;
        rw[k] = dist[k] = NAN;
        if (p[k * d] < 0 || p[k * d] > 63) continue; /* the test's one bad point */
        cr_assert_eq(L->eval(env, NULL, &act, &rw[k], &f, &dist[k], &e), 0);
        cr_assert(f);
    }
    fam->destroy(env);
    json_decref(cfg);
}

static void check_diag(const hwc_lean *b, const double *rw, const double *dist, int n, int bad) {
    cr_assert_eq(b->n, (size_t)n);
    cr_assert_eq(b->nerrors, bad >= 0 ? 1u : 0u);
    for (int k = 0; k < n; k++) {
        if (k == bad) {
            cr_assert(b->error[k] && strstr(b->error[k], "action element 0") && strstr(b->error[k], "64 out of range"), "%s", b->error[k]);
            cr_assert(isnan(b->reward[k]));
            continue;
        }
        cr_assert_null(b->error[k], "point %d: %s", k, b->error[k]);
        cr_assert(b->reward[k] == rw[k] && b->vals[k] == dist[k], "point %d: server %.17g / %.17g, per point %.17g / %.17g", k, b->reward[k],
                  b->vals[k], rw[k], dist[k]);
        cr_assert(b->feasible[k]);
    }
}

Test(lean, diag_blocks_match_per_point_eval) {
    enum { N = 1100, D = 5 }; /* 2 slices of 550: blocks of 256, 256 and 38 points */
    static const char *CFG = "{\"dims\":5,\"choices\":64,\"target_seed\":3}";
    int64_t *p = malloc(sizeof(int64_t) * N * D);
    unsigned seed = 7;
    for (int i = 0; i < N * D; i++) p[i] = rand_r(&seed) % 64;
    p[300 * D] = 64; /* out of range: its block (points 256..511 of the first slice) goes point by point */
    double *rw = malloc(sizeof(double) * N), *dist = malloc(sizeof(double) * N);
    diag_per_point(p, N, D, CFG, rw, dist);
    json_t *cfg = json_loads(CFG, 0, NULL);
    const char *want[] = {"distance"};
    hwc_lean b;
    hw_err e;
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    hw_array a = {HW_DT_INT64, 2, {N, D}, p};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, want, 1, &b, &e), 0, "%s", e.msg);
    check_diag(&b, rw, dist, N, 300);
    for (int k = 0; k < N; k++) cr_assert(!b.cache_hit[k]);
    hwc_lean_free(&b);
    srv_down(&s, c);
    /* with the cache: the first 400 points first, then all of them (400 hits, the rest gathered) */
    c = srv_up(&s, 16, NULL, 0);
    hw_array head = {HW_DT_INT64, 2, {400, D}, p};
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &head, want, 1, &b, &e), 0, "%s", e.msg);
    hwc_lean_free(&b);
    p[300 * D] = 1; /* now valid (and not cached): every point evaluates */
    diag_per_point(p, N, D, CFG, rw, dist);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, want, 1, &b, &e), 0, "%s", e.msg);
    for (int k = 0; k < N; k++) /* 300 was an error the first time: not a hit */
        cr_assert_eq(b.cache_hit[k], k < 400 && k != 300, "point %d", k);
    check_diag(&b, rw, dist, N, -1);
    hwc_lean_free(&b);
    srv_down(&s, c);
    json_decref(cfg);
    free(p);
    free(rw);
    free(dist);
}

/* libhwgym narrows integer points to int8 / int16 / int32 on the wire: values must arrive unchanged
 * (the server's range error quotes them back) */
Test(lean, narrow_dtypes_carry_values_exactly) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    json_t *cfg = json_pack("{s:i}", "dims", 2);
    /* int8's, uint8's and int16's edges each way: int8 points, uint8 ones (128-255, none
     * negative), int16 ones (each narrowed in one pass), and wider ones (the int16 pass gives up,
     * the narrowest dtype is found) */
    static const int64_t vals[] = {-200, 300, 70000, -3000000000LL, -100, -128, 127, 128, 255, 256, -129, 32767, -32768, 32768, -32769};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        for (int np = 2; np <= 20; np += 18) { /* 4 elements, and 40 (a vectorised block of 16 and more) */
            int64_t p[20][2];
            for (int k = 0; k < np; k++) p[k][0] = k % 4, p[k][1] = (k + 1) % 4;
            p[np - 1][1] = vals[i];
            hw_array a = {HW_DT_INT64, 2, {np, 2}, p};
            hwc_lean b;
            hw_err e;
            cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
            cr_assert_eq(b.nerrors, 1);
            cr_assert_null(b.error[0]);
            char want[64];
            snprintf(want, sizeof want, "%lld out of range", (long long)vals[i]);
            cr_assert(b.error[np - 1] && strstr(b.error[np - 1], want), "%s (want '%s')", b.error[np - 1], want);
            hwc_lean_free(&b);
        }
    json_decref(cfg);
    srv_down(&s, c);
}

/* reply_slot lays out a wire array whose data starts 8-aligned, whatever precedes it, in msgpack
 * that decodes to the same {dtype, shape, data} as the shortest encoding */
Test(lean, reply_slot_is_aligned_and_decodes) {
    static const int64_t ns[] = {0, 1, 127, 128, 255, 256, 8191, 8192, 65535, 65536, 100000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int pre = 0; pre < 16; pre++)
            for (int f = 0; f < 2; f++) {
                hw_dtype dt = f ? HW_DT_BOOL : HW_DT_FLOAT64;
                int64_t n = ns[i];
                msgpack_sbuffer sb;
                msgpack_sbuffer_init(&sb);
                msgpack_packer pk;
                msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
                msgpack_pack_map(&pk, 2);
                hw_pack_cstr(&pk, "p");
                msgpack_pack_str(&pk, (size_t)pre);
                msgpack_pack_str_body(&pk, "0123456789abcdef", (size_t)pre);
                size_t need = sb.size + (size_t)n * 8 + 128;
                sb.data = realloc(sb.data, need);
                sb.alloc = need;
                char *slot = reply_slot(&sb, "x", dt, n);
                cr_assert_eq((uintptr_t)slot % 8, 0, "n %lld, prefix %d: data at offset %zu", (long long)n, pre, (size_t)(slot - sb.data));
                memset(slot, 1, (size_t)n * hw_dtype_size(dt));
                cr_assert_eq(slot + (size_t)n * hw_dtype_size(dt), sb.data + sb.size, "the slot ends the buffer");
                hw_msg m;
                hw_err e;
                cr_assert_eq(hw_msg_decode(&m, sb.data, sb.size, NULL, &e), 0, "%s", e.msg);
                msgpack_zone z;
                msgpack_zone_init(&z, 256);
                hw_array a;
                cr_assert_eq(hw_mp_array(hw_mp_get(m.root, "x"), "x", &z, 1u << 20, &a, &e), 0, "n %lld prefix %d: %s", (long long)n, pre, e.msg);
                cr_assert(a.dtype == dt && a.ndim == 1 && a.shape[0] == n && (n == 0 || a.data == (void *)slot), "n %lld prefix %d: dtype %d ndim %d shape %lld data %p slot %p", (long long)n, pre, (int)a.dtype, a.ndim, (long long)a.shape[0], a.data, (void *)slot);
                msgpack_zone_destroy(&z);
                hw_msg_free(&m);
                msgpack_sbuffer_destroy(&sb);
            }
}

/* lean_widen (the server's load of integer points, read in place from the request) gives every
 * value exactly, whatever the data's alignment in the message and the count (blocks of 16 and a
 * tail), for each integer dtype */
Test(lean, widen_is_exact_at_any_alignment) {
    static const hw_dtype dts[] = {HW_DT_INT8, HW_DT_UINT8, HW_DT_INT16, HW_DT_INT32, HW_DT_INT64, HW_DT_BOOL};
    static const int64_t vals[] = {0, 1, -1, 127, -128, 255, 32767, -32768, 65535, 2147483647LL, -2147483647LL - 1, 4000000000LL};
    char buf[8 * 40 + 16];
    int64_t want[40], got[40];
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int off = 0; off < 8; off++)
            for (size_t cnt = 0; cnt <= 40; cnt += 13) {
                hw_dtype dt = dts[t];
                size_t es = hw_dtype_size(dt);
                for (size_t j = 0; j < cnt; j++) {
                    int64_t v = vals[(j * 7 + t) % (sizeof vals / sizeof vals[0])];
                    switch (dt) {
                    case HW_DT_INT8: { int8_t x = (int8_t)v; memcpy(buf + off + j * es, &x, es); want[j] = x; break; }
                    case HW_DT_UINT8: { uint8_t x = (uint8_t)v; memcpy(buf + off + j * es, &x, es); want[j] = x; break; }
                    case HW_DT_INT16: { int16_t x = (int16_t)v; memcpy(buf + off + j * es, &x, es); want[j] = x; break; }
                    case HW_DT_INT32: { int32_t x = (int32_t)v; memcpy(buf + off + j * es, &x, es); want[j] = x; break; }
                    case HW_DT_BOOL: { uint8_t x = (uint8_t)(v & 3); memcpy(buf + off + j * es, &x, es); want[j] = x != 0; break; }
                    default: memcpy(buf + off + j * es, &v, es); want[j] = v; break;
                    }
                }
                memset(got, 0x5a, sizeof got);
                lean_widen(dt, buf + off, cnt, got);
                for (size_t j = 0; j < cnt; j++)
                    cr_assert_eq(got[j], want[j], "%s at offset %d, %zu values: [%zu] %lld, want %lld", hw_dtype_name(dt), off, cnt, j,
                                 (long long)got[j], (long long)want[j]);
            }
}

/* libhwgym reuses the result block of equal batches without zeroing error[] again (it is left
 * all NULL when a result is freed): a batch after one with failed points has no stale errors,
 * and its own failures land at their indices only */
Test(lean, reused_result_block_has_no_stale_errors) {
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 0);
    json_t *cfg = json_pack("{s:i}", "dims", 2);
    enum { N = 70000 }; /* over SPARE_MIN: the result block is kept for the next call */
    int64_t (*p)[2] = malloc(sizeof(int64_t[2]) * N);
    const int64_t bad[] = {5, -1, 69999, -1, 123}; /* -1: no failed point in that call */
    for (int call = 0; call < 5; call++) {
        for (int k = 0; k < N; k++) p[k][0] = k % 4, p[k][1] = (k + 1) % 4;
        if (bad[call] >= 0) p[bad[call]][1] = 99;
        hw_array a = {HW_DT_INT64, 2, {N, 2}, p};
        hwc_lean b;
        hw_err e;
        cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
        cr_assert_eq(b.nerrors, bad[call] >= 0 ? 1u : 0u, "call %d: %zu errors", call, b.nerrors);
        for (int k = 0; k < N; k++) {
            if (k == bad[call]) cr_assert(b.error[k] && strstr(b.error[k], "99 out of range"), "call %d: %s", call, b.error[k]);
            else cr_assert_null(b.error[k], "call %d: a stale error at %d: %s", call, k, b.error[k]);
            cr_assert_eq(isnan(b.reward[k]), k == bad[call]);
        }
        hwc_lean_free(&b);
    }
    free(p);
    json_decref(cfg);
    srv_down(&s, c);
}
