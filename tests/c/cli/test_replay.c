/* `hwgym replay` and the --endpoint modes of the CLI against a real hwgym-server (skipped when
 * BUILD/bin/hwgym-server is not built). A run is recorded with libhwgym + the trial log, then
 * replayed through the CLI binary. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "hwgym_client.h"
#include "hwgym_trials.h"

static char bin[4096];
static hwtest_server srv;
static char db[160];

static void start(void) {
    cr_assert(hwtest_bin("hwgym", bin, sizeof bin), "BUILD/bin/hwgym not found");
    int rc = hwtest_server_start(&srv, NULL);
    if (rc == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(rc, 0, "hwgym-server did not start");
    snprintf(db, sizeof db, "%s/trials.db", srv.dir);
}

static void stop(void) {
    if (srv.pid) hwtest_server_stop(&srv);
}

TestSuite(replay, .fini = stop, .timeout = 60);

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

/* Records a run: 2 workers x 2 episodes x 3 steps (12 step trials) + 4 eval trials. */
static int64_t record(const char *cfgtext, int64_t seed_base) {
    hw_err err;
    hwc_client *c = hwc_connect(NULL, srv.endpoint, 10000, &err);
    cr_assert(c, "%s", err.msg);
    hwt_db *t = hwt_open(db, NULL, &err);
    cr_assert(t, "%s", err.msg);
    json_t *cfg = json_loads(cfgtext, 0, NULL);
    hwt_run run = {.agent = "test-recorder", .env = "diag-v0", .env_config = cfg, .endpoint = srv.endpoint};
    int64_t run_id = hwt_begin_run(t, &run, &err);
    cr_assert_gt(run_id, 0);
    const char *workers[2] = {"w0", "w1"};
    for (int w = 0; w < 2; w++)
        for (int ep = 0; ep < 2; ep++) {
            hwc_session s;
            cr_assert_eq(hwc_make(c, "diag-v0", cfg, NULL, &s, &err), 0, "%s", err.msg);
            int64_t seed = seed_base + w * 10 + ep;
            hwc_result r;
            cr_assert_eq(hwc_reset(c, &s, &seed, NULL, &r, &err), 0, "%s", err.msg);
            hwc_result_free(&r);
            for (int k = 0; k < 3; k++) {
                int64_t a[3] = {(w + k) % 5, (ep + 2 * k) % 5, k};
                cr_assert_eq(hwc_step_i64(c, &s, a, 3, &r, &err), 0, "%s", err.msg);
                json_t *act = json_pack("[III]", a[0], a[1], a[2]);
                json_t *obs = json_array();
                for (size_t i = 0; i < r.obs_len; i++) json_array_append_new(obs, json_real(r.obs[i]));
                hwt_trial tr = {.run_id = run_id, .worker = workers[w], .episode = ep, .step = k, .has_reset_seed = true,
                                .reset_seed = seed, .action = act, .observation = obs, .has_reward = true,
                                .reward = r.reward[0], .terminated = r.terminated[0], .truncated = r.truncated[0],
                                .metrics = r.info, .feasible = -1};
                cr_assert_eq(hwt_add_trial(t, &tr, &err), 0, "%s", err.msg);
                json_decref(act);
                json_decref(obs);
                hwc_result_free(&r);
            }
            hwc_close(c, &s, NULL);
            hwc_session_free(&s);
        }
    for (int k = 0; k < 4; k++) {
        json_t *pt = json_pack("[iii]", k, 4 - k, 2);
        double rw;
        json_t *m;
        cr_assert_eq(hwc_evaluate(c, NULL, "diag-v0", cfg, pt, &rw, &m, &err), 0, "%s", err.msg);
        hwt_trial tr = {.run_id = run_id, .worker = "eval", .episode = 0, .kind = HWT_EVAL, .action = pt, .has_reward = true,
                        .reward = rw, .terminated = -1, .truncated = -1, .metrics = m, .feasible = -1};
        cr_assert_eq(hwt_add_trial(t, &tr, &err), 0);
        json_decref(pt);
        json_decref(m);
    }
    cr_assert_eq(hwt_end_run(t, run_id, &err), 0);
    cr_assert_eq(hwt_close(t, &err), 0);
    json_decref(cfg);
    hwc_disconnect(c);
    return run_id;
}

static void sql(const char *q) {
    sqlite3 *s;
    cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(s, q, NULL, NULL, NULL), SQLITE_OK, "%s: %s", q, sqlite3_errmsg(s));
    sqlite3_close(s);
}

static const char *CFG = "{\"dims\":3,\"choices\":5,\"episode_length\":3}";

Test(replay, a_faithful_run_matches_entirely) {
    start();
    int64_t run = record(CFG, 100);
    char *o, *e;
    int st = HW(&o, &e, "replay", db, "--endpoint", srv.endpoint);
    cr_assert_eq(st, 0, "status %d, stdout %s, stderr %s", st, o, e);
    json_t *j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "run")), run);
    cr_assert_eq(json_integer_value(json_object_get(j, "trials")), 16);
    cr_assert_eq(json_integer_value(json_object_get(j, "matching")), 16);
    cr_assert_eq(json_array_size(json_object_get(j, "mismatches")), 0);
    cr_assert(strstr(e, "16 trials"), "progress on stderr: %s", e);
    json_decref(j);
    free(o);
    free(e);
}

static bool has_mismatch(json_t *mm, int64_t trial, const char *field) {
    size_t i;
    json_t *v;
    json_array_foreach(mm, i, v) if (json_integer_value(json_object_get(v, "trial")) == trial &&
                                     !strcmp(json_string_value(json_object_get(v, "field")), field)) return true;
    return false;
}

Test(replay, tampered_trials_are_reported) {
    start();
    record(CFG, 100);
    /* trial 2 = w0 ep0 step1; trial 8 = w1 ep0 step1; trial 11 = w1 ep1 step 1; 14 = an eval */
    sql("UPDATE trials SET reward = reward + 0.5 WHERE id = 2");
    sql("UPDATE trials SET observation = '[0,0,0,0,0]' WHERE id = 8");
    sql("UPDATE trials SET metrics = json_set(metrics, '$.distance', 7) WHERE id = 11");
    sql("UPDATE trials SET reward = 0.123 WHERE id = 14");
    char *o, *e;
    int st = HW(&o, &e, "replay", db, "--endpoint", srv.endpoint);
    cr_assert_eq(st, 1, "mismatches give status 1: %s %s", o, e);
    json_t *j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "trials")), 16);
    cr_assert_eq(json_integer_value(json_object_get(j, "matching")), 12);
    json_t *mm = json_object_get(j, "mismatches");
    cr_assert_eq(json_array_size(mm), 4, "%s", o);
    cr_assert(has_mismatch(mm, 2, "reward"), "%s", o);
    cr_assert(has_mismatch(mm, 8, "observation"), "%s", o);
    cr_assert(has_mismatch(mm, 11, "metrics"), "%s", o);
    cr_assert(has_mismatch(mm, 14, "reward"), "%s", o);
    json_t *first = json_array_get(mm, 0);
    cr_assert(json_object_get(first, "logged") && json_object_get(first, "replayed") && json_object_get(first, "worker"));
    json_decref(j);
    free(o);
    free(e);
    /* a changed action changes what follows; a tolerance does not hide a real difference */
    st = HW(&o, &e, "replay", db, "--endpoint", srv.endpoint, "--tol", "1e-9", "--max-mismatches", "1");
    cr_assert_eq(st, 1);
    j = parse(o);
    cr_assert_eq(json_array_size(json_object_get(j, "mismatches")), 1, "--max-mismatches caps the list");
    cr_assert_eq(json_integer_value(json_object_get(j, "matching")), 12);
    json_decref(j);
    free(o);
    free(e);
}

Test(replay, run_selection_and_missing_steps) {
    start();
    int64_t r1 = record(CFG, 100);
    int64_t r2 = record("{\"dims\":3,\"choices\":5,\"episode_length\":3,\"target_seed\":9}", 500);
    cr_assert_eq(r2, r1 + 1);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "replay", db, "--endpoint", srv.endpoint), 0, "%s", e);
    json_t *j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "run")), r2, "default: the most recent run");
    json_decref(j);
    free(o);
    free(e);
    char rs[16];
    snprintf(rs, sizeof rs, "%lld", (long long)r1);
    /* drop step 0 of one episode of run 1: its later steps cannot be reproduced */
    sql("DELETE FROM trials WHERE id = 4");
    cr_assert_eq(HW(&o, &e, "replay", db, "--endpoint", srv.endpoint, "--run", rs), 1);
    j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "run")), r1);
    cr_assert_eq(json_integer_value(json_object_get(j, "trials")), 15);
    cr_assert_eq(json_integer_value(json_object_get(j, "matching")), 13);
    cr_assert(has_mismatch(json_object_get(j, "mismatches"), 5, "missing_step"), "%s", o);
    json_decref(j);
    free(o);
    free(e);
    cr_assert_eq(HW(&o, &e, "replay", db, "--endpoint", srv.endpoint, "--run", "99"), 1);
    cr_assert(strstr(e, "no run 99"), "%s", e);
    free(o);
    free(e);
}

Test(replay, unreachable_server_is_an_error) {
    start();
    record(CFG, 1);
    char *o, *e;
    int st = HW(&o, &e, "replay", db, "--endpoint", "ipc:///tmp/hwtest-no-such-server.sock", "--timeout", "300");
    cr_assert_eq(st, 1);
    cr_assert(strstr(e, "no-such-server"), "names the endpoint: %s", e);
    free(o);
    free(e);
}

/* ---- --endpoint modes give the same JSON as the in-process modes ---- */

static char *out_of(const char *const *args) {
    char *o, *e;
    int st = run_hw(&o, &e, args);
    cr_assert_eq(st, 0, "%s %s: %s", args[0], args[1] ? args[1] : "", e);
    free(e);
    return o;
}

Test(replay, endpoint_modes_equal_local_modes) {
    start();
    const char *cfg = "{\"dims\":2,\"choices\":7,\"target_seed\":3}";
    char *a = out_of((const char *[]){"eval", "diag-v0", "--config", cfg, "--action", "[2,6]", NULL});
    char *b = out_of((const char *[]){"eval", "diag-v0", "--config", cfg, "--action", "[2,6]", "--endpoint", srv.endpoint, NULL});
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    a = out_of((const char *[]){"spaces", "diag-v0", "--json", "--config", cfg, NULL});
    b = out_of((const char *[]){"spaces", "diag-v0", "--json", "--config", cfg, "--endpoint", srv.endpoint, NULL});
    json_t *ja = parse(a), *jb = parse(b);
    cr_assert(json_equal(ja, jb), "local %s\nserver %s", a, b);
    json_decref(ja);
    json_decref(jb);
    free(a);
    free(b);
    b = out_of((const char *[]){"envs", "--endpoint", srv.endpoint, NULL});
    cr_assert(strstr(b, "\"diag-v0\""), "%s", b);
    free(b);
    char *o, *e;
    cr_assert_eq(HW(&o, &e, "eval", "diag-v0", "--action", "[0,0,0,42]", "--endpoint", srv.endpoint), 2);
    cr_assert(strstr(e, "BAD_ACTION") && strstr(e, "42"), "%s", e);
    free(o);
    free(e);
}
