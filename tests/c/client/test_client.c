/* libhwgym against a real hwgym-server (BUILD/bin/hwgym-server on an ipc:// endpoint).
 * Skipped when the server binary is not built. Expected values are computed in-process with
 * the same env code (diag-v0), so every check is "the server gives what the env gives". */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "hwgym_client.h"
#include "registry.h"

static hwtest_server srv;
static hwc_client *cl;

static void start(void) {
    int rc = hwtest_server_start(&srv, (const char *const[]){"--workers", "2", NULL});
    if (rc == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(rc, 0, "hwgym-server did not start");
    hw_err err;
    cl = hwc_connect(NULL, srv.endpoint, 10000, &err);
    cr_assert(cl, "%s", err.msg);
}

static void stop(void) {
    hwc_disconnect(cl);
    cl = NULL;
    if (srv.pid) cr_assert_eq(hwtest_server_stop(&srv), 0, "server must exit 0 on SIGTERM");
}

TestSuite(client, .fini = stop, .timeout = 60);

static json_t *J(const char *s) {
    json_t *j = json_loads(s, 0, NULL);
    cr_assert(j, "bad test JSON %s", s);
    return j;
}

/* The same env in-process, for expected values. */
static void *local(const char *cfg, const hw_env_family **f) {
    json_t *c = cfg ? J(cfg) : NULL;
    hw_err err;
    void *e = hw_env_create("diag-v0", c, f, &err);
    json_decref(c);
    cr_assert(e, "%s", err.msg);
    return e;
}

Test(client, hello_ping_envs_stats) {
    start();
    hw_err err;
    json_t *r = NULL;
    cr_assert_eq(hwc_hello(cl, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(json_integer_value(json_object_get(r, "protocol")), 1);
    json_decref(r);
    double t = 0;
    cr_assert_eq(hwc_ping(cl, &t, &err), 0, "%s", err.msg);
    cr_assert_gt(t, 1.5e9, "ping time is unix seconds");
    json_t *envs = NULL;
    cr_assert_eq(hwc_envs(cl, &envs, &err), 0, "%s", err.msg);
    bool diag = false;
    size_t i;
    json_t *v;
    json_array_foreach(envs, i, v) diag |= !strcmp(json_string_value(json_object_get(v, "id")), "diag-v0");
    cr_assert(diag);
    json_decref(envs);
    json_t *st = NULL;
    cr_assert_eq(hwc_stats(cl, &st, &err), 0, "%s", err.msg);
    cr_assert(json_is_integer(json_object_get(st, "sessions")));
    json_decref(st);
}

Test(client, single_session_matches_the_env) {
    start();
    const char *cfg = "{\"dims\":3,\"choices\":5,\"episode_length\":4}";
    const hw_env_family *f;
    void *env = local(cfg, &f);
    json_t *c = J(cfg);
    hwc_session s;
    hw_err err;
    cr_assert_eq(hwc_make(cl, "diag-v0", c, NULL, &s, &err), 0, "%s", err.msg);
    json_decref(c);
    cr_assert_str_eq(s.kind, "single");
    cr_assert_eq(s.num_envs, 1);
    cr_assert_eq(s.act_numel, 3);
    cr_assert_eq(s.obs_numel, 5);
    cr_assert_eq(strlen(s.token), 32, "a 128-bit hex token: %s", s.token);
    int64_t seed = 7;
    uint64_t useed = 7;
    hwc_result r;
    hw_obs lo;
    cr_assert_eq(hwc_reset(cl, &s, &seed, NULL, &r, &err), 0, "%s", err.msg);
    f->reset(env, &useed, NULL, &lo, NULL, NULL);
    cr_assert_eq(r.obs_len, 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(r.obs[i], hw_array_get_f64(&lo.arr[0], i), "reset obs[%d]", i);
    hwc_result_free(&r);
    for (int t = 0; t < 4; t++) {
        int64_t a[3] = {t % 5, (t * 2) % 5, 4};
        cr_assert_eq(hwc_step_i64(cl, &s, a, 3, &r, &err), 0, "%s", err.msg);
        hw_act act = {3, a, NULL};
        hw_step_out o;
        json_t *info = json_object();
        cr_assert_eq(f->step(env, &act, &o, info, NULL), 0);
        cr_assert_eq(r.reward[0], o.reward, "step %d reward bit-identical", t);
        cr_assert_eq(r.terminated[0], o.terminated, "step %d", t);
        cr_assert_eq(r.truncated[0], o.truncated, "step %d", t);
        for (int i = 0; i < 5; i++) cr_assert_eq(r.obs[i], hw_array_get_f64(&o.obs.arr[0], i), "step %d obs[%d]", t, i);
        cr_assert_eq(json_real_value(json_object_get(r.info, "distance")), json_real_value(json_object_get(info, "distance")));
        json_decref(info);
        hwc_result_free(&r);
    }
    cr_assert_eq(hwc_close(cl, &s, &err), 0, "%s", err.msg);
    /* the session is gone */
    int64_t a[3] = {0, 0, 0};
    cr_assert_eq(hwc_step_i64(cl, &s, a, 3, &r, &err), -1);
    cr_assert_eq(err.code, HW_E_UNKNOWN_SESSION, "%s: %s", hw_code_name(err.code), err.msg);
    hwc_session_free(&s);
    f->destroy(env);
}

Test(client, errors_carry_code_and_message) {
    start();
    hw_err err;
    hwc_session s;
    cr_assert_eq(hwc_make(cl, "nosuch-v0", NULL, NULL, &s, &err), -1);
    cr_assert_eq(err.code, HW_E_UNKNOWN_ENV, "%s", err.msg);
    cr_assert(strstr(err.msg, "nosuch-v0"), "%s", err.msg);
    json_t *bad = J("{\"dims\":0}");
    cr_assert_eq(hwc_make(cl, "diag-v0", bad, NULL, &s, &err), -1);
    json_decref(bad);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, "dims"), "%s", err.msg);
    cr_assert_eq(hwc_make(cl, "diag-v0", NULL, NULL, &s, &err), 0, "%s", err.msg);
    int64_t a[4] = {0, 0, 0, 9};
    hwc_result r;
    cr_assert_eq(hwc_step_i64(cl, &s, a, 4, &r, &err), -1);
    cr_assert(err.code == HW_E_BAD_ACTION || err.code == HW_E_BAD_STATE, "%s: %s", hw_code_name(err.code), err.msg);
    cr_assert_eq(hwc_reset(cl, &s, NULL, NULL, &r, &err), 0, "%s", err.msg);
    hwc_result_free(&r);
    cr_assert_eq(hwc_step_i64(cl, &s, a, 4, &r, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_ACTION, "%s: %s", hw_code_name(err.code), err.msg);
    cr_assert(strstr(err.msg, "3"), "names the element: %s", err.msg);
    cr_assert_eq(hwc_step_i64(cl, &s, a, 2, &r, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_ACTION, "wrong shape: %s", err.msg);
    cr_assert_eq(hwc_restore(cl, &s, 12345, &err), -1);
    cr_assert_eq(err.code, HW_E_UNKNOWN_SNAPSHOT, "%s: %s", hw_code_name(err.code), err.msg);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
}

Test(client, snapshot_restore_is_bit_identical) {
    start();
    hw_err err;
    hwc_session s;
    cr_assert_eq(hwc_make(cl, "diag-v0", NULL, NULL, &s, &err), 0, "%s", err.msg);
    int64_t seed = 11;
    hwc_result r, r1, r2;
    cr_assert_eq(hwc_reset(cl, &s, &seed, NULL, &r, &err), 0);
    hwc_result_free(&r);
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {7, 0, 7, 0};
    hwc_step_i64(cl, &s, a, 4, &r, &err);
    hwc_result_free(&r);
    int64_t snap = -1;
    cr_assert_eq(hwc_snapshot(cl, &s, &snap, &err), 0, "%s", err.msg);
    cr_assert_eq(hwc_step_i64(cl, &s, b, 4, &r1, &err), 0);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(hwc_restore(cl, &s, snap, &err), 0, "%s", err.msg);
        cr_assert_eq(hwc_step_i64(cl, &s, b, 4, &r2, &err), 0);
        cr_assert_eq(r1.obs_len, r2.obs_len);
        cr_assert_eq(memcmp(r1.obs, r2.obs, sizeof(double) * r1.obs_len), 0, "restore %d: obs differ", k);
        cr_assert_eq(r1.reward[0], r2.reward[0]);
        hwc_result_free(&r2);
    }
    hwc_result_free(&r1);
    cr_assert_eq(hwc_drop_snapshot(cl, &s, snap, &err), 0, "%s", err.msg);
    cr_assert_eq(hwc_restore(cl, &s, snap, &err), -1);
    cr_assert_eq(err.code, HW_E_UNKNOWN_SNAPSHOT);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
}

Test(client, dict_observation_is_flattened_in_key_order) {
    start();
    const char *cfg = "{\"dims\":2,\"obs\":\"dict\"}";
    const hw_env_family *f;
    void *env = local(cfg, &f);
    json_t *c = J(cfg);
    hwc_session s;
    hw_err err;
    cr_assert_eq(hwc_make(cl, "diag-v0", c, NULL, &s, &err), 0, "%s", err.msg);
    json_decref(c);
    cr_assert_eq(s.obs_numel, 4, "last_action[2] + noise[1] + t[]");
    int64_t seed = 3;
    uint64_t us = 3;
    hwc_result r;
    cr_assert_eq(hwc_reset(cl, &s, &seed, NULL, &r, &err), 0, "%s", err.msg);
    hwc_result_free(&r);
    hw_obs lo;
    f->reset(env, &us, NULL, &lo, NULL, NULL);
    int64_t a[2] = {5, 1};
    cr_assert_eq(hwc_step_i64(cl, &s, a, 2, &r, &err), 0, "%s", err.msg);
    hw_act act = {2, a, NULL};
    hw_step_out o;
    f->step(env, &act, &o, NULL, NULL);
    cr_assert_eq(r.obs_len, 4);
    /* keys sorted: last_action, noise, t */
    cr_assert_eq(r.obs[0], hw_array_get_f64(&o.obs.arr[0], 0));
    cr_assert_eq(r.obs[1], hw_array_get_f64(&o.obs.arr[0], 1));
    cr_assert_eq(r.obs[2], hw_array_get_f64(&o.obs.arr[1], 0));
    cr_assert_eq(r.obs[3], 1.0, "t after one step");
    hwc_result_free(&r);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
    f->destroy(env);
}

Test(client, vector_session_autoresets) {
    start();
    json_t *c = J("{\"dims\":2,\"choices\":4,\"episode_length\":2}");
    hwc_make_opts mo = {.num_envs = 3};
    hwc_session s;
    hw_err err;
    cr_assert_eq(hwc_make(cl, "diag-v0", c, &mo, &s, &err), 0, "%s", err.msg);
    json_decref(c);
    cr_assert_str_eq(s.kind, "vector");
    cr_assert_eq(s.num_envs, 3);
    int64_t seed = 100;
    hwc_result r;
    cr_assert_eq(hwc_reset(cl, &s, &seed, NULL, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.num, 3);
    cr_assert_eq(r.obs_len, 12);
    hwc_result_free(&r);
    int64_t a[6] = {0, 1, 2, 3, 1, 1};
    cr_assert_eq(hwc_step_i64(cl, &s, a, 6, &r, &err), 0, "%s", err.msg);
    cr_assert(!r.truncated[0] && !r.truncated[2]);
    hwc_result_free(&r);
    cr_assert_eq(hwc_step_i64(cl, &s, a, 6, &r, &err), 0, "%s", err.msg);
    for (int i = 0; i < 3; i++) cr_assert(r.truncated[i] && !r.terminated[i], "env %d ends (truncated) after episode_length steps", i);
    hwc_result_free(&r);
    /* next-step autoreset: reward 0, not terminated, t back to 0 */
    cr_assert_eq(hwc_step_i64(cl, &s, a, 6, &r, &err), 0, "%s", err.msg);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(r.reward[i], 0.0, "env %d autoreset step has reward 0", i);
        cr_assert(!r.terminated[i] && !r.truncated[i]);
        cr_assert_eq(r.obs[i * 4 + 3], 0.0, "env %d progress is 0 after its reset", i);
    }
    cr_assert(json_is_array(r.info) && json_array_size(r.info) == 3);
    hwc_result_free(&r);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
}

Test(client, evaluate_and_batch_match_the_env) {
    start();
    const char *cfg = "{\"dims\":3,\"choices\":6,\"target_seed\":4}";
    const hw_env_family *f;
    void *env = local(cfg, &f);
    json_t *c = J(cfg);
    hw_err err;
    json_t *pt = J("[1,5,2]");
    double r = NAN, want;
    json_t *m = NULL;
    cr_assert_eq(hwc_evaluate(cl, NULL, "diag-v0", c, pt, &r, &m, &err), 0, "%s", err.msg);
    f->evaluate(env, pt, &want, NULL, NULL);
    cr_assert_eq(r, want);
    cr_assert(json_is_true(json_object_get(m, "feasible")));
    json_decref(m);
    json_decref(pt);
    json_t *pts = J("[[0,0,0],[5,5,5],[1,2],[2,3,4]]");
    hwc_batch b;
    cr_assert_eq(hwc_evaluate_batch(cl, NULL, "diag-v0", c, pts, &b, &err), 0, "%s", err.msg);
    cr_assert_eq(b.n, 4);
    for (size_t k = 0; k < 4; k++) {
        if (k == 2) {
            cr_assert(isnan(b.reward[k]), "a failed point gets NaN");
            json_t *e = json_array_get(b.errors, k);
            cr_assert_str_eq(json_string_value(json_object_get(e, "code")), "BAD_ACTION");
            continue;
        }
        cr_assert(json_is_null(json_array_get(b.errors, k)));
        f->evaluate(env, json_array_get(pts, k), &want, NULL, NULL);
        cr_assert_eq(b.reward[k], want, "point %zu", k);
    }
    hwc_batch_free(&b);
    json_decref(pts);
    json_decref(c);
    f->destroy(env);
}

/* ---- threads ---- */

typedef struct th {
    hwc_ctx *ctx;
    hwc_client *shared;
    const char *ep;
    int steps, ok;
    char msg[HW_ERR_MSG];
} th;

static void *worker(void *p) {
    th *t = p;
    hw_err err;
    hwc_client *c = t->shared ? t->shared : hwc_connect(t->ctx, t->ep, 10000, &err);
    if (!c) return NULL;
    hwc_session s;
    if (hwc_make(c, "diag-v0", NULL, NULL, &s, &err)) goto out;
    int64_t seed = 1;
    hwc_result r;
    if (hwc_reset(c, &s, &seed, NULL, &r, &err)) goto out;
    hwc_result_free(&r);
    int done = 0;
    for (int i = 0; i < t->steps; i++) {
        int64_t a[4] = {i % 8, 1, 2, 3};
        if (hwc_step_i64(c, &s, a, 4, &r, &err)) break;
        bool end = r.terminated[0] || r.truncated[0];
        hwc_result_free(&r);
        if (end && hwc_reset(c, &s, NULL, NULL, &r, &err) == 0) hwc_result_free(&r);
        done++;
    }
    hwc_close(c, &s, NULL);
    hwc_session_free(&s);
    t->ok = done == t->steps;
out:
    if (!t->ok) snprintf(t->msg, sizeof t->msg, "%s", err.msg);
    if (!t->shared) hwc_disconnect(c);
    return NULL;
}

static void run_threads(bool share_client) {
    hwc_ctx *ctx = hwc_ctx_new();
    hw_err err;
    hwc_client *shared = share_client ? hwc_connect(ctx, srv.endpoint, 10000, &err) : NULL;
    th t[4];
    pthread_t tid[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (th){.ctx = ctx, .shared = shared, .ep = srv.endpoint, .steps = 300};
        pthread_create(&tid[i], NULL, worker, &t[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        cr_assert(t[i].ok, "thread %d: %s", i, t[i].msg);
    }
    hwc_disconnect(shared);
    hwc_ctx_free(ctx);
}

Test(client, threads_share_a_context) {
    start();
    run_threads(false);
}

Test(client, threads_share_a_client) {
    start();
    run_threads(true);
}

/* ---- timeouts ---- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(client, no_server_times_out_with_io) {
    hw_err err;
    hwc_client *c = hwc_connect(NULL, "ipc:///tmp/hwtest-nonexistent-endpoint.sock", 200, &err);
    cr_assert(c, "%s", err.msg);
    double t0 = now_s();
    cr_assert_eq(hwc_ping(c, NULL, &err), -1);
    double dt = now_s() - t0;
    cr_assert_eq(err.code, HW_E_IO);
    cr_assert(strstr(err.msg, "timeout") && strstr(err.msg, "ping"), "%s", err.msg);
    cr_assert(dt >= 0.15 && dt < 2.0, "took %.3f s", dt);
    hwc_disconnect(c);
    cr_assert_null(hwc_connect(NULL, "nonsense://x", 100, &err));
    cr_assert_eq(err.code, HW_E_IO);
    cr_assert(strstr(err.msg, "nonsense://x"), "%s", err.msg);
}

Test(client, late_reply_is_skipped_after_timeout) {
    start();
    hw_err err;
    json_t *c = J("{\"step_us\":400000}");
    hwc_session s;
    cr_assert_eq(hwc_make(cl, "diag-v0", c, NULL, &s, &err), 0, "%s", err.msg);
    json_decref(c);
    hwc_result r;
    cr_assert_eq(hwc_reset(cl, &s, NULL, NULL, &r, &err), 0, "%s", err.msg);
    hwc_result_free(&r);
    hwc_set_timeout(cl, 100);
    int64_t a[4] = {0, 0, 0, 0};
    cr_assert_eq(hwc_step_i64(cl, &s, a, 4, &r, &err), -1);
    cr_assert_eq(err.code, HW_E_IO);
    cr_assert(strstr(err.msg, "step"), "%s", err.msg);
    hwc_set_timeout(cl, 5000);
    /* the step's reply arrives while we wait for the snapshot's: it must not be taken for it */
    int64_t snap = -1;
    cr_assert_eq(hwc_snapshot(cl, &s, &snap, &err), 0, "%s", err.msg);
    cr_assert_geq(snap, 0);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
}

/* ---- multi-agent ---- */

typedef struct ag {
    const char *ep, *token, *name;
    int64_t part[2];
    int n;
    double reward;
    char action[128];
    int ok;
    char msg[HW_ERR_MSG];
} ag;

static void *agent(void *p) {
    ag *g = p;
    hw_err err = {0};
    hwc_client *c = hwc_connect(NULL, g->ep, 10000, &err);
    hwc_session s;
    hwc_result r;
    if (!c || hwc_join(c, g->token, g->name, &s, &err)) goto out;
    int64_t seed = 5;
    if (hwc_reset(c, &s, &seed, NULL, &r, &err)) goto out2;
    hwc_result_free(&r);
    if (hwc_step_i64(c, &s, g->part, (size_t)g->n, &r, &err)) goto out2;
    g->reward = r.reward[0];
    char *a = json_dumps(json_object_get(r.reply, "action"), JSON_COMPACT);
    snprintf(g->action, sizeof g->action, "%s", a ? a : "");
    free(a);
    hwc_result_free(&r);
    g->ok = 1;
out2:
    hwc_session_free(&s);
out:
    if (!g->ok) snprintf(g->msg, sizeof g->msg, "%s", err.msg);
    hwc_disconnect(c);
    return NULL;
}

Test(client, multi_agent_workers_share_one_step) {
    start();
    hw_err err;
    json_t *agents = J("[{\"name\":\"a0\",\"dims\":[0,1]},{\"name\":\"a1\",\"dims\":[2]}]");
    json_t *c = J("{\"dims\":3}");
    hwc_make_opts mo = {.agents = agents, .agent_timeout_ms = 5000};
    hwc_session s;
    cr_assert_eq(hwc_make(cl, "diag-v0", c, &mo, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(s.kind, "multi");
    ag g[2] = {{.ep = srv.endpoint, .token = s.token, .name = "a0", .part = {1, 2}, .n = 2},
               {.ep = srv.endpoint, .token = s.token, .name = "a1", .part = {3}, .n = 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, agent, &g[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) cr_assert(g[i].ok, "agent %d: %s", i, g[i].msg);
    cr_assert_eq(g[0].reward, g[1].reward, "both agents see the same reward");
    /* expected: the env stepped once with the joint action [1,2,3] */
    const hw_env_family *f;
    void *env = local("{\"dims\":3}", &f);
    json_t *pt = J("[1,2,3]");
    double want;
    f->evaluate(env, pt, &want, NULL, NULL);
    cr_assert_eq(g[0].reward, want);
    if (g[0].action[0]) cr_assert_str_eq(g[0].action, "[1,2,3]");
    json_decref(pt);
    f->destroy(env);
    /* unknown agent */
    hwc_session s2;
    cr_assert_eq(hwc_join(cl, s.token, "zz", &s2, &err), -1);
    cr_assert_eq(err.code, HW_E_UNKNOWN_AGENT, "%s: %s", hw_code_name(err.code), err.msg);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
    json_decref(agents);
    json_decref(c);
}

/* Action encodings: a Discrete action as a scalar (single) or a length-N list (vector), a Box
 * action as float64. Rewards are compared with the env run in-process. */
Test(client, discrete_and_box_actions) {
    start();
    hw_err err;
    const char *cfgs[2] = {"{\"action_space\":\"discrete\",\"choices\":6}", "{\"action_space\":\"box\",\"dims\":2}"};
    for (int k = 0; k < 2; k++) {
        const hw_env_family *f;
        void *env = local(cfgs[k], &f);
        json_t *c = J(cfgs[k]);
        hwc_make_opts mo = {.num_envs = 2};
        hwc_session s, v;
        cr_assert_eq(hwc_make(cl, "diag-v0", c, NULL, &s, &err), 0, "%s", err.msg);
        cr_assert_eq(hwc_make(cl, "diag-v0", c, &mo, &v, &err), 0, "%s", err.msg);
        json_decref(c);
        hwc_result r;
        int64_t seed = 1;
        cr_assert_eq(hwc_reset(cl, &s, &seed, NULL, &r, &err), 0, "%s", err.msg);
        hwc_result_free(&r);
        cr_assert_eq(hwc_reset(cl, &v, &seed, NULL, &r, &err), 0, "%s", err.msg);
        hwc_result_free(&r);
        double want;
        if (k == 0) {
            int64_t a = 4, av[2] = {4, 1};
            cr_assert_eq(hwc_step_i64(cl, &s, &a, 1, &r, &err), 0, "discrete single: %s", err.msg);
            json_t *pt = J("[4]");
            f->evaluate(env, pt, &want, NULL, NULL);
            json_decref(pt);
            cr_assert_eq(r.reward[0], want);
            hwc_result_free(&r);
            cr_assert_eq(hwc_step_i64(cl, &v, av, 2, &r, &err), 0, "discrete vector: %s", err.msg);
            cr_assert_eq(r.reward[0], want);
            pt = J("[1]");
            f->evaluate(env, pt, &want, NULL, NULL);
            json_decref(pt);
            cr_assert_eq(r.reward[1], want);
            hwc_result_free(&r);
        } else {
            double a[2] = {0.5, -0.25}, av[4] = {0.5, -0.25, 1.0, 1.0};
            cr_assert_eq(hwc_step_f64(cl, &s, a, 2, &r, &err), 0, "box single: %s", err.msg);
            json_t *pt = J("[0.5,-0.25]");
            f->evaluate(env, pt, &want, NULL, NULL);
            json_decref(pt);
            cr_assert_eq(r.reward[0], want);
            hwc_result_free(&r);
            cr_assert_eq(hwc_step_f64(cl, &v, av, 4, &r, &err), 0, "box vector: %s", err.msg);
            cr_assert_eq(r.reward[0], want);
            hwc_result_free(&r);
            double bad[2] = {2.0, 0};
            cr_assert_eq(hwc_step_f64(cl, &s, bad, 2, &r, &err), -1);
            cr_assert_eq(err.code, HW_E_BAD_ACTION, "%s", err.msg);
        }
        hwc_close(cl, &s, NULL);
        hwc_close(cl, &v, NULL);
        hwc_session_free(&s);
        hwc_session_free(&v);
        f->destroy(env);
    }
}

/* ---- a dead server fails a call within 2 s, not after the call's timeout (hwgym_link.h) ---- */

static void make_diag(const char *cfg, hwc_session *s) {
    hw_err err;
    json_t *c = J(cfg);
    cr_assert_eq(hwc_make(cl, "diag-v0", c, NULL, s, &err), 0, "%s", err.msg);
    json_decref(c);
    hwc_result r;
    cr_assert_eq(hwc_reset(cl, s, NULL, NULL, &r, &err), 0, "%s", err.msg);
    hwc_result_free(&r);
}

static double step_fails(hwc_session *s, const char *want) {
    hw_err err;
    hwc_result r;
    int64_t a[4] = {0, 0, 0, 0};
    double t0 = now_s();
    cr_assert_eq(hwc_step_i64(cl, s, a, 4, &r, &err), -1, "a step on a dead server must fail");
    double dt = now_s() - t0;
    cr_assert_eq(err.code, HW_E_IO);
    cr_assert(strstr(err.msg, want) && strstr(err.msg, "step"), "%s", err.msg);
    return dt;
}

Test(client, killed_server_fails_fast) {
    start(); /* the client's timeout is 10 s */
    hwc_session s;
    make_diag("{}", &s);
    kill(srv.pid, SIGKILL);
    usleep(100000);
    for (int i = 0; i < 2; i++) { /* this call and the next */
        double dt = step_fails(&s, "was lost");
        cr_assert(dt < 2.0, "took %.3f s", dt);
    }
    cr_assert_eq(hwtest_server_stop(&srv), 128 + SIGKILL);
    hwc_session_free(&s);
}

static void *kill_later(void *p) {
    usleep(300000);
    kill(*(pid_t *)p, SIGKILL);
    return NULL;
}

Test(client, server_dying_during_a_call_fails_it) {
    start();
    hwc_session s;
    make_diag("{\"step_us\":1000000}", &s); /* a 1 s step */
    pthread_t th;
    pthread_create(&th, NULL, kill_later, &srv.pid);
    double dt = step_fails(&s, "while waiting for the reply");
    pthread_join(th, NULL);
    cr_assert(dt < 0.9, "took %.3f s (the server died after 0.3 s; the step takes 1 s)", dt);
    cr_assert_eq(hwtest_server_stop(&srv), 128 + SIGKILL);
    hwc_session_free(&s);
}

Test(client, hung_server_misses_heartbeats) {
    start();
    hwc_session s;
    make_diag("{}", &s);
    kill(srv.pid, SIGSTOP);
    double dt = step_fails(&s, "was lost");
    kill(srv.pid, SIGCONT);
    cr_assert(dt < 2.0, "took %.3f s", dt);
    hwc_close(cl, &s, NULL);
    hwc_session_free(&s);
}
