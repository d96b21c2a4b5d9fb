/* Findings 6-8 of issue 17 at the wire: every error reply is valid UTF-8 (recv_reply decodes
 * strictly and fails the test otherwise), a float above 2^63 in an integer action is a clean
 * BAD_ACTION, stats has a snapshots count, file errors are never the client-side IO code, a
 * non-loopback bind without CURVE warns at start, and the session cap counts CURVE keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "hw_codec.h"
#include "hwgym_client.h"
#include "sec.h"

/* a byte-exact check on the raw reply, independent of the harness decoder */
static void assert_utf8_reply(json_t *r, const char *what) {
    cr_assert(r, "%s: no reply", what);
    const char *m = err_msg(r);
    cr_assert(hw_utf8_valid(m, strlen(m)), "%s: message is not UTF-8", what);
}

Test(wire, error_messages_are_valid_utf8_on_every_path, .timeout = 60) {
    srv S;
    sec_start(&S, NULL, NULL);
    void *c = cli_new(S.ep);
    /* multibyte text placed where error messages quote and cut it */
    char e40[200] = "", e300[1000] = "";
    for (int i = 0; i < 41; i++) strcat(e40, "\xc3\xa9");
    for (int i = 0; i < 300; i++) strcat(e300, "\xe2\x82\xac");
    const char *reqs[] = {
        "{\"op\":\"%s\",\"v\":1}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"%s\"}",
        "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0]}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"model\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"layer\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"hardware\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"objective\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"dram-v0\",\"config\":{\"workload\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"dram-v0\",\"config\":{\"memspec_file\":\"%s.json\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"mmap-v0\",\"config\":{\"problem\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"sched-v0\",\"config\":{\"accelerator\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"placement-v0\",\"config\":{\"workload\":\"%s\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"%s\":1}}",
        "{\"op\":\"evaluate\",\"v\":1,\"env\":\"mmap-v0\",\"point\":{\"actions\":\"0%s\"}}",
        "{\"op\":\"evaluate\",\"v\":1,\"env\":\"maestro-v0\",\"point\":{\"directives\":\"%s\"}}",
        "{\"op\":\"evaluate\",\"v\":1,\"env\":\"sched-v0\",\"point\":{\"baseline\":\"%s\"}}",
        "{\"op\":\"evaluate\",\"v\":1,\"env\":\"placement-v0\",\"point\":\"%s\"}",
        "{\"op\":\"evaluate_batch\",\"v\":1,\"env\":\"%s\",\"points\":[[0]]}",
        "{\"op\":\"join\",\"v\":1,\"session\":\"%s\",\"agent\":\"x\"}",
    };
    const char *fills[] = {"\xc3\xa9", e40, e300};
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
        for (size_t k = 0; k < 3; k++) {
            char *q;
            cr_assert(asprintf(&q, reqs[i], fills[k]) > 0);
            json_t *r = call(c, "%s", q);
            cr_assert(err_code(r), "%s was accepted", reqs[i]);
            assert_utf8_reply(r, reqs[i]);
            json_decref(r);
            free(q);
        }
    /* the mmap evaluate of finding 6: BAD_ACTION, not a decode failure in the client */
    json_t *r = call(c, "{\"op\":\"evaluate\",\"v\":1,\"env\":\"mmap-v0\",\"config\":{\"problem\":\"alexnet_train_batch_32\"},"
                        "\"point\":{\"actions\":\"0\xc3\xa9\"}}");
    cr_assert_str_eq(sec_code(r), "BAD_ACTION", "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

Test(wire, float_above_2_63_in_an_integer_action, .timeout = 60) {
    srv S;
    sec_start(&S, NULL, NULL);
    void *c = cli_new(S.ep);
    char tok[64];
    sec_session(c, "diag-v0", "{}", tok);
    const char *vals[] = {"1e19", "-1e19", "9223372036854775808.0", "1.8446744073709552e19", "1e300"};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        json_t *r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[%s,0,0,0]}", tok, vals[i]);
        cr_assert_str_eq(sec_code(r), "BAD_ACTION", "%s: %s", vals[i], err_msg(r));
        json_decref(r);
    }
    cli_close(c);
    sec_stop(&S);
}

Test(wire, stats_counts_snapshots, .timeout = 60) {
    srv S;
    sec_start(&S, NULL, NULL);
    void *c = cli_new(S.ep);
    char tok[64];
    sec_session(c, "diag-v0", "{}", tok);
    json_decref(call(c, "{\"op\":\"snapshot\",\"v\":1,\"session\":\"%s\"}", tok));
    json_decref(call(c, "{\"op\":\"snapshot\",\"v\":1,\"session\":\"%s\"}", tok));
    json_t *r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "snapshots")), 2, "stats: snapshots");
    json_decref(r);
    json_decref(call(c, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok));
    r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "snapshots")), 0);
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

/* The server's start-up log with `extra` binds beside the harness's ipc one, read once it answers
 * a ping (it warns before it binds), then the server is stopped; malloc'd. */
static char *startup_log(const char *bind) {
    hwtest_server s;
    const char *extra[] = {"--bind", bind, NULL};
    int rc = hwtest_server_start(&s, extra);
    if (rc == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(rc, 0, "hwgym-server --bind %s did not start", bind);
    char path[128];
    snprintf(path, sizeof path, "%s/server.log", s.dir);
    FILE *f = fopen(path, "r");
    cr_assert(f, "no %s", path);
    char *log = calloc(1, 8192);
    size_t n = fread(log, 1, 8191, f);
    log[n] = 0;
    fclose(f);
    cr_assert_eq(hwtest_server_stop(&s), 0, "hwgym-server --bind %s: exit status after SIGTERM", bind);
    return log;
}

Test(wire, open_bind_without_curve_warns, .timeout = 60) {
    char *log = startup_log("tcp://0.0.0.0:*");
    cr_assert(strstr(log, "WARNING") && strstr(log, "CURVE is off"), "no warning for a non-loopback bind without CURVE: %s", log);
    free(log);
    log = startup_log("tcp://127.0.0.1:*");
    cr_assert_null(strstr(log, "WARNING"), "a loopback bind does not warn: %s", log);
    free(log);
    char bin[4096], cmd[4400];
    built_bin("hwgym-server", bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "%s --data-dir /nonexistent-hwgym 2>&1 | grep -q -- --data-dir", bin);
    cr_assert_eq(system(cmd), 0, "a missing --data-dir is a start-up error");
    snprintf(cmd, sizeof cmd, "%s --env-limit bogus 2>&1 | grep -q ENV.KNOB", bin);
    cr_assert_eq(system(cmd), 0);
}

Test(wire, float_to_int64_saturates_without_undefined_behaviour) {
    double v[4] = {1e19, -1e19, 0x1p63, NAN};
    hw_array a = {HW_DT_FLOAT64, 1, {4}, v};
    cr_assert_eq(hw_array_get_i64(&a, 0), INT64_MAX);
    cr_assert_eq(hw_array_get_i64(&a, 1), INT64_MIN);
    cr_assert_eq(hw_array_get_i64(&a, 2), INT64_MAX);
    cr_assert_eq(hw_array_get_i64(&a, 3), 0);
}

static void keygen(const char *bin, char pub[41], char sec[41]) {
    const char *argv[] = {bin, "--curve-keygen", NULL};
    char *out = NULL;
    cr_assert_eq(hwtest_run(argv, &out, NULL), 0, "%s --curve-keygen failed", bin);
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL); /* the first line */
    cr_assert(j, "--curve-keygen: %s", out);
    snprintf(pub, 41, "%s", json_string_value(json_object_get(j, "public")));
    snprintf(sec, 41, "%s", json_string_value(json_object_get(j, "secret")));
    json_decref(j);
    free(out);
}

/* a scratch dir with a new server keypair: the secret in dir/server.key (secf), the public key in spub */
static void server_key(const char *bin, char dir[27], char secf[128], char spub[41]) {
    char ssec[41];
    keygen(bin, spub, ssec);
    snprintf(dir, 27, "/tmp/hwgym-seccurve-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(secf, 128, "%s/server.key", dir);
    FILE *f = fopen(secf, "w");
    fprintf(f, "%s\n", ssec);
    fclose(f);
}

static int make_with_key(const char *ep, const char *server, const char *pub, const char *sec, hw_err *err) {
    setenv("HWGYM_CURVE_SERVERKEY", server, 1);
    setenv("HWGYM_CURVE_PUBLICKEY", pub, 1);
    setenv("HWGYM_CURVE_SECRETKEY", sec, 1);
    hwc_client *c = hwc_connect(NULL, ep, 5000, err);
    cr_assert(c, "%s", err->msg);
    hwc_session s;
    int rc = hwc_make(c, "diag-v0", NULL, NULL, &s, err);
    if (rc == 0) hwc_session_free(&s); /* the session stays open on the server */
    hwc_disconnect(c);
    return rc;
}

/* With CURVE the per-client session cap counts client keys: a reconnect (new routing id) with
 * the same key does not get round it; another key has its own count. */
Test(wire, session_cap_is_per_curve_key, .timeout = 60) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char spub[41], apub[41], asec[41], bpub[41], bsec[41], dir[27], secf[128];
    server_key(bin, dir, secf, spub);
    keygen(bin, apub, asec);
    keygen(bin, bpub, bsec);
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.curve_secret = secf;
    o.max_sessions_per_client = 1;
    srv S;
    S.o = o;
    /* srv_start_opts pings without CURVE, which this server refuses: start it by hand */
    snprintf(S.ep, sizeof S.ep, "ipc://%s/s.sock", dir);
    S.o.binds[0] = S.ep;
    S.o.nbinds = 1;
    S.stop = 0;
    extern void *sec_run(void *);
    pthread_create(&S.th, NULL, sec_run, &S);
    hw_err err;
    int rc = -1;
    for (int i = 0; i < 100 && rc != 0; i++) {
        rc = make_with_key(S.ep, spub, apub, asec, &err);
        if (rc) usleep(20000);
    }
    cr_assert_eq(rc, 0, "first session of key A: %s", err.msg);
    cr_assert_neq(make_with_key(S.ep, spub, apub, asec, &err), 0, "a reconnect with key A got round the cap");
    cr_assert_eq(err.code, HW_E_LIMIT, "%s", err.msg);
    cr_assert_eq(make_with_key(S.ep, spub, bpub, bsec, &err), 0, "key B has its own count: %s", err.msg);
    unsetenv("HWGYM_CURVE_SERVERKEY");
    unsetenv("HWGYM_CURVE_PUBLICKEY");
    unsetenv("HWGYM_CURVE_SECRETKEY");
    cr_assert_eq(srv_stop(&S), 0);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* found by fuzz_decode: msgpack-c gives "" a NULL pointer, which reached memchr/memcpy (UB) and
 * made an empty string value fail to convert with no message */
Test(wire, empty_strings_in_configs, .timeout = 60) {
    srv S;
    sec_start(&S, NULL, NULL);
    void *c = cli_new(S.ep);
    json_t *r = sec_make(c, "diag-v0", "{\"\":1}");
    cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s", err_msg(r));
    json_decref(r);
    r = sec_make(c, "diag-v0", "{\"action_space\":\"\"}");
    cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s", err_msg(r));
    cr_assert(strstr(err_msg(r), "action_space"), "names the field: %s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"\",\"v\":1}");
    cr_assert_str_eq(sec_code(r), "UNKNOWN_OP", "%s", err_msg(r));
    json_decref(r);
    cli_close(c);
    sec_stop(&S);
}

/* issue 28 finding 7: --curve-secret without --curve-allow authenticated nobody yet silenced the
 * open-bind warning. It now refuses to start unless --curve-allow-any, which still warns. */
Test(wire, curve_secret_needs_an_allow_list_or_allow_any, .timeout = 60) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char spub[41], dir[27], secf[128];
    server_key(bin, dir, secf, spub);
    char cmd[4800];
    snprintf(cmd, sizeof cmd, "timeout -s TERM 10 %s --bind ipc://%s/a.sock --curve-secret %s >%s/a.log 2>&1", bin, dir, secf, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--curve-secret alone: exit status %d, expected 2", st);
    snprintf(cmd, sizeof cmd, "grep -q -- '--curve-allow-any' %s/a.log && grep -q 'authenticates nobody' %s/a.log", dir, dir);
    cr_assert_eq(system(cmd), 0, "the refusal names the way out");
    /* with --curve-allow-any on an open bind: starts, and warns (stopped by SIGTERM after 1 s) */
    snprintf(cmd, sizeof cmd, "timeout -s TERM 1 %s --bind 'tcp://0.0.0.0:*' --curve-secret %s --curve-allow-any >%s/b.log 2>&1", bin, secf, dir);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 124), "--curve-allow-any: exit status %d", st);
    snprintf(cmd, sizeof cmd, "grep -q 'WARNING.*curve-allow-any accepts any client keypair' %s/b.log", dir);
    cr_assert_eq(system(cmd), 0, "no warning for an open bind with --curve-allow-any");
    /* on loopback it starts without the warning */
    snprintf(cmd, sizeof cmd, "timeout -s TERM 1 %s --bind ipc://%s/c.sock --curve-secret %s --curve-allow-any >%s/c.log 2>&1; ! grep -q WARNING %s/c.log", bin, dir, secf, dir, dir);
    cr_assert_eq(system(cmd), 0, "a loopback bind with --curve-allow-any warned");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
