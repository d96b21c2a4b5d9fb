/* Findings 4-5 of issue 17 at the wire: knobs that scale work and memory are capped (and the
 * operator can move the caps), make checks a per-session memory budget, a request past its
 * deadline is abandoned with TIMEOUT, SIGTERM's drain has a deadline, configs have a bound on
 * their size, and the bytes queued per session are bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <msgpack.h>
#include <zmq.h>

#include "hw_codec.h"
#include "hwgym_client.h"
#include "policy.h"
#include "sec.h"


Test(limits, knob_caps_and_operator_overrides, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    cr_assert_eq(hw_policy_add_env_limit(&o, "dram-v0.count=500"), 0);
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    json_t *r = sec_make(c, "dram-v0", "{\"count\":501}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    cr_assert(strstr(err_msg(r), "count"), "names the knob: %s", err_msg(r));
    json_decref(r);
    r = sec_make(c, "dram-v0", "{\"count\":500}");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
    /* the defaults: dram count 10^7 (163 MB per env) and sched samples 10^7 are refused at once */
    sec_start(&S, NULL, NULL);
    c = cli_new(S.ep);
    r = sec_make(c, "dram-v0", "{\"count\":10000000}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"evaluate\",\"v\":1,\"env\":\"sched-v0\",\"point\":{\"baseline\":\"random-pruned\",\"samples\":10000000}}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    json_decref(r);
    r = sec_make(c, "diag-v0", "{\"step_us\":10000000}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

Test(limits, session_memory_budget_at_make, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.session_mem = (size_t)8 << 20;
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    /* 4096 envs x 10^5 requests: refused before 4095 of them are built */
    double t0 = sec_now();
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"dram-v0\",\"num_envs\":4096,\"config\":{\"count\":100000}}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    cr_assert(strstr(err_msg(r), "memory"), "%s", err_msg(r));
    cr_assert_lt(sec_now() - t0, 5.0);
    json_decref(r);
    r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"dram-v0\",\"num_envs\":2,\"config\":{\"count\":1000}}");
    cr_assert_null(err_code(r), "a small vector session fits: %s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
    /* the server-wide budget holds for the sum: a make that would take the sessions' estimate
     * past it is refused (not only once the total has reached it), until a session is closed */
    hw_server_default_opts(&o);
    o.server_mem = (size_t)5 << 20; /* one session of ~3.3 MiB fits, two do not; a session alone above the budget is refused (test_memest.c) */
    sec_start(&S, NULL, &o);
    c = cli_new(S.ep);
    r = sec_make(c, "dram-v0", "{\"count\":100000}");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    char tok[64];
    snprintf(tok, sizeof tok, "%s", json_string_value(json_object_get(r, "session")));
    json_decref(r);
    r = sec_make(c, "dram-v0", "{\"count\":100000}");
    cr_assert_str_eq(sec_code(r), "LIMIT", "the second session would cross the budget: %s", err_msg(r));
    cr_assert(strstr(err_msg(r), "--server-mem-mb"), "%s", err_msg(r));
    json_decref(r);
    json_decref(call(c, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok));
    r = sec_make(c, "dram-v0", "{\"count\":100000}");
    cr_assert_null(err_code(r), "after a close: %s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

/* issue 28 finding 2: a lean evaluate_batch on diag-v0 past the deadline answers each abandoned
 * point with a written message (TIMEOUT, UTF-8, no stack bytes), and the client hears it at once */
static void lean_batch_past_the_deadline(const srv *S) {
    hw_err e;
    hwc_client *c = hwc_connect(NULL, S->ep, 20000, &e);
    cr_assert(c);
    json_t *cfg = json_pack("{s:i, s:i}", "step_us", 100000, "dims", 4);
    int64_t pts[16 * 4] = {0};
    hw_array a = {HW_DT_INT64, 2, {16, 4}, pts};
    hwc_lean b;
    double t0 = sec_now();
    int rc = hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, NULL, 0, &b, &e);
    double dt = sec_now() - t0;
    cr_assert_lt(dt, 5.0, "the client waited %.1f s for a reply the server sent at 0.3 s", dt);
    if (rc == 0) { /* per-point errors: every message is the deadline's, in UTF-8 */
        cr_assert_gt(b.nerrors, 0, "16 points of 100 ms under a 0.3 s deadline all succeeded");
        size_t seen = 0;
        for (size_t k = 0; k < b.n; k++) {
            if (!b.error || !b.error[k]) continue;
            seen++;
            const char *m = b.error[k];
            cr_assert(hw_utf8_valid(m, strlen(m)), "points[%zu]: message is not UTF-8", k);
            cr_assert(strstr(m, "time limit") || strstr(m, "deadline") || strstr(m, "step_us"), "points[%zu]: not a written message: '%s'", k, m);
        }
        cr_assert_gt(seen, 0);
        hwc_lean_free(&b);
    } else {
        cr_assert_str_eq(hw_code_name(e.code), "TIMEOUT", "%s", e.msg);
    }
    json_decref(cfg);
    hwc_disconnect(c);
}

Test(limits, request_deadline_gives_timeout, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.request_timeout_s = 0.3;
    o.workers = 2;
    cr_assert_eq(hw_policy_add_env_limit(&o, "diag-v0.step_us=10000000"), 0);
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    char tok[64];
    sec_session(c, "diag-v0", "{\"step_us\":5000000}", tok);
    double t0 = sec_now();
    json_t *r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok);
    cr_assert_str_eq(sec_code(r), "TIMEOUT", "%s", err_msg(r));
    cr_assert_lt(sec_now() - t0, 3.0, "the 5 s step was abandoned");
    json_decref(r);
    /* evaluate_batch: many costly points, one TIMEOUT for the request */
    t0 = sec_now();
    r = call(c, "{\"op\":\"evaluate_batch\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"step_us\":100000},\"points\":"
                "[[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],"
                "[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]}");
    cr_assert_str_eq(sec_code(r), "TIMEOUT", "%s", err_msg(r));
    cr_assert_lt(sec_now() - t0, 3.0);
    json_decref(r);
    lean_batch_past_the_deadline(&S);
    /* the server is healthy afterwards */
    r = call(c, "{\"op\":\"evaluate\",\"v\":1,\"env\":\"diag-v0\",\"point\":[0,0,0,0]}");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

Test(limits, sigterm_drain_has_a_deadline, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.request_timeout_s = 0; /* never: only the drain deadline stops the step */
    o.drain_timeout_s = 0.3;
    cr_assert_eq(hw_policy_add_env_limit(&o, "diag-v0.step_us=10000000"), 0);
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    char tok[64];
    sec_session(c, "diag-v0", "{\"step_us\":8000000}", tok);
    send_json(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok);
    usleep(100000);
    double t0 = sec_now();
    S.stop = 1; /* what SIGTERM does */
    json_t *r = recv_reply(c);
    cr_assert(r, "the step in flight is answered");
    cr_assert_str_eq(sec_code(r), "TIMEOUT", "%s", err_msg(r));
    json_decref(r);
    cr_assert_eq(sec_stop(&S), 0);
    cr_assert_lt(sec_now() - t0, 4.0, "drain took %.1f s", sec_now() - t0);
    cli_close(c);
}

Test(limits, config_size_is_bounded, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_config_values = 1000;
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    /* a wire array under a config key: 5000 elements */
    char *big = malloc(5000 * 2 + 200);
    strcpy(big, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"junk\":[");
    for (int i = 0; i < 5000; i++) strcat(big, i ? ",0" : "0");
    strcat(big, "]}}");
    json_t *r = call(c, "%s", big);
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    json_decref(r);
    free(big);
    /* a key cut at 255 bytes in the middle of a UTF-8 character is refused, not dropped */
    char key[400] = "";
    for (int i = 0; i < 128; i++) strcat(key, "\xc3\xa9"); /* 256 bytes of 'é': byte 255 splits one */
    r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"%s\":1}}", key);
    cr_assert_str_eq(sec_code(r), "LIMIT", "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

Test(limits, router_answers_while_a_worker_converts_a_big_config, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_config_values = (size_t)4 << 20;
    o.workers = 1;
    srv S;
    sec_start(&S, NULL, &o);
    void *a = cli_new(S.ep), *b = cli_new(S.ep);
    /* 1 M values of config as a wire array: converted on the worker, not on the I/O thread */
    size_t n = 1u << 20;
    int slow = 45000;
    zmq_setsockopt(a, ZMQ_RCVTIMEO, &slow, sizeof slow); /* the conversion takes seconds under ASan */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    msgpack_pack_str(&pk, 2), msgpack_pack_str_body(&pk, "op", 2), msgpack_pack_str(&pk, 4), msgpack_pack_str_body(&pk, "make", 4);
    msgpack_pack_str(&pk, 1), msgpack_pack_str_body(&pk, "v", 1), msgpack_pack_int(&pk, 1);
    msgpack_pack_str(&pk, 3), msgpack_pack_str_body(&pk, "env", 3), msgpack_pack_str(&pk, 7), msgpack_pack_str_body(&pk, "diag-v0", 7);
    msgpack_pack_str(&pk, 6), msgpack_pack_str_body(&pk, "config", 6);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_str(&pk, 4), msgpack_pack_str_body(&pk, "junk", 4);
    msgpack_pack_map(&pk, 3);
    msgpack_pack_str(&pk, 5), msgpack_pack_str_body(&pk, "dtype", 5), msgpack_pack_str(&pk, 5), msgpack_pack_str_body(&pk, "uint8", 5);
    msgpack_pack_str(&pk, 5), msgpack_pack_str_body(&pk, "shape", 5), msgpack_pack_array(&pk, 1), msgpack_pack_uint64(&pk, n);
    msgpack_pack_str(&pk, 4), msgpack_pack_str_body(&pk, "data", 4);
    char *zeros = calloc(n, 1);
    msgpack_pack_bin(&pk, n), msgpack_pack_bin_body(&pk, zeros, n);
    free(zeros);
    zmq_send(a, sb.data, sb.size, 0);
    msgpack_sbuffer_destroy(&sb);
    usleep(20000);
    json_t *r = call(b, "{\"op\":\"ping\",\"v\":1}");
    cr_assert(r);
    cr_assert_null(err_code(r));
    json_decref(r);
    /* the ping came back first; the make is answered (diag rejects the unknown key) */
    zmq_pollitem_t it = {a, 0, ZMQ_POLLIN, 0};
    r = recv_reply(a);
    cr_assert(r);
    cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s", err_msg(r));
    json_decref(r);
    (void)it;
    cli_close(a);
    cli_close(b);
    sec_stop(&S);
}

Test(limits, queued_bytes_per_session_are_bounded, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_queued_session = 200000;
    o.inline_us = 0;
    srv S;
    sec_start(&S, NULL, &o);
    void *c = cli_new(S.ep);
    char tok[64];
    sec_session(c, "diag-v0", "{\"step_us\":400000}", tok);
    /* 8 steps of ~60 KB each while the first one runs: the later ones are refused with LIMIT */
    char *pad = malloc(60001);
    memset(pad, 'x', 60000);
    pad[60000] = 0;
    for (int i = 0; i < 8; i++)
        send_json(c, "{\"op\":\"step\",\"v\":1,\"id\":%d,\"session\":\"%s\",\"action\":[0,0,0,0],\"pad\":\"%s\"}", i, tok, pad);
    free(pad);
    int limits = 0, oks = 0;
    for (int i = 0; i < 8; i++) {
        json_t *r = recv_reply(c);
        cr_assert(r, "reply %d", i);
        if (err_code(r) && !strcmp(err_code(r), "LIMIT")) limits++;
        else if (!err_code(r)) oks++;
        json_decref(r);
    }
    cr_assert_gt(limits, 0, "no request was refused");
    cr_assert_gt(oks, 0, "every request was refused");
    cli_close(c);
    sec_stop(&S);
}
