/* Server ops at the wire boundary: handshake, make/reset/step, vector autoreset, snapshots,
 * evaluate/evaluate_batch, spaces, stats. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <zmq.h>

#include "harness.h"
#include "hw_codec.h"

static srv S;
static void *C;
static void up(void) {
    srv_start(&S, 2, 600);
    C = cli_new(S.ep);
}
static void down(void) {
    cli_close(C);
    cr_assert_eq(srv_stop(&S), 0);
}

static char *make_session(const char *cfg_and_more) {
    json_t *r = call(C, "{\"op\":\"make\",\"v\":1,\"id\":1,\"env\":\"diag-v0\"%s}", cfg_and_more);
    cr_assert_null(err_code(r), "make failed: %s", err_msg(r));
    char *tok = strdup(json_string_value(json_object_get(r, "session")));
    json_decref(r);
    return tok;
}

TestSuite(ops, .init = up, .fini = down, .timeout = 60);

Test(ops, hello_and_version_handshake) {
    json_t *r = call(C, "{\"op\":\"hello\",\"v\":1,\"id\":7}");
    cr_assert_null(err_code(r));
    cr_assert_eq(json_integer_value(json_object_get(r, "id")), 7);
    cr_assert_eq(json_integer_value(json_object_get(r, "protocol")), 1);
    json_decref(r);
    r = call(C, "{\"op\":\"hello\",\"v\":2,\"id\":\"x\"}");
    cr_assert_str_eq(err_code(r), "UNSUPPORTED_VERSION");
    cr_assert(strstr(err_msg(r), "version 2"), "%s", err_msg(r));
    cr_assert_str_eq(json_string_value(json_object_get(r, "id")), "x");
    json_decref(r);
    r = call(C, "{\"op\":\"ping\"}");
    cr_assert_str_eq(err_code(r), "BAD_REQUEST");
    cr_assert(strstr(err_msg(r), "'v'"));
    json_decref(r);
}

Test(ops, token_is_unguessable_hex) {
    char *a = make_session(""), *b = make_session("");
    cr_assert_eq(strlen(a), 32);
    cr_assert_neq(strcmp(a, b), 0);
    for (int i = 0; i < 32; i++) cr_assert(strchr("0123456789abcdef", a[i]));
    free(a);
    free(b);
}

Test(ops, step_before_reset_and_episode) {
    char *tok = make_session(",\"config\":{\"dims\":2,\"choices\":4,\"episode_length\":2}");
    json_t *r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_STATE");
    json_decref(r);
    r = call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":3}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert_eq(json_array_size(json_object_get(r, "obs")), 4);
    json_decref(r);
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,3]}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert(json_is_false(json_object_get(r, "terminated")));
    cr_assert(json_is_false(json_object_get(r, "truncated")));
    json_decref(r);
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,3]}", tok);
    /* diag-v0's horizon is a time limit: the episode ends truncated, not terminated */
    cr_assert(json_is_false(json_object_get(r, "terminated")));
    cr_assert(json_is_true(json_object_get(r, "truncated")));
    json_decref(r);
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,4]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_ACTION");
    cr_assert(strstr(err_msg(r), "element 1 (p1): 4 out of range [0, 3]"), "%s", err_msg(r));
    json_decref(r);
    free(tok);
}

Test(ops, vector_autoreset_next_step) {
    char *tok = make_session(",\"num_envs\":3,\"config\":{\"dims\":2,\"episode_length\":2}");
    json_t *r = call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":[5,6,7]}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert_eq(json_array_size(json_object_get(r, "obs")), 3 * 4);
    cr_assert_eq(json_array_size(json_object_get(r, "info")), 3);
    json_decref(r);
    r = call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":[5,null,7]}", tok);
    cr_assert_null(err_code(r), "nil entries keep that env's stream: %s", err_msg(r));
    json_decref(r);
    json_decref(call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":[5,6,7]}", tok));
    const char *act = "[[1,1],[2,2],[3,3]]";
    for (int t = 0; t < 2; t++) json_decref(call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":%s}", tok, act));
    /* all three truncated at t=2: the next step resets them and ignores the action */
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":%s}", tok, act);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_t *rw = json_object_get(r, "reward"), *te = json_object_get(r, "terminated");
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(json_real_value(json_array_get(rw, i)), 0.0);
        cr_assert_eq(json_integer_value(json_array_get(te, i)), 0);
        cr_assert(json_is_true(json_object_get(json_array_get(json_object_get(r, "info"), i), "autoreset")));
    }
    json_decref(r);
    /* and the one after is a normal step again */
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":%s}", tok, act);
    cr_assert_gt(json_real_value(json_array_get(json_object_get(r, "reward"), 0)), 0.0);
    json_decref(r);
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[[1,1],[2,2]]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_ACTION");
    json_decref(r);
    free(tok);
}

Test(ops, snapshot_restore_bit_identical) {
    char *tok = make_session(",\"config\":{\"dims\":3,\"episode_length\":100}");
    json_decref(call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":11}", tok));
    json_decref(call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,2,3]}", tok));
    json_t *snap = call(C, "{\"op\":\"snapshot\",\"v\":1,\"session\":\"%s\"}", tok);
    json_int_t id = json_integer_value(json_object_get(snap, "snapshot"));
    json_decref(snap);
    char *first[5];
    for (int k = 0; k < 5; k++) {
        json_t *r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[%d,1,0]}", tok, k);
        json_object_del(r, "id");
        first[k] = json_dumps(r, JSON_SORT_KEYS);
        json_decref(r);
    }
    for (int rep = 0; rep < 2; rep++) {
        json_t *r = call(C, "{\"op\":\"restore\",\"v\":1,\"session\":\"%s\",\"snapshot\":%lld}", tok, (long long)id);
        cr_assert_null(err_code(r), "%s", err_msg(r));
        json_decref(r);
        for (int k = 0; k < 5; k++) {
            r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[%d,1,0]}", tok, k);
            json_object_del(r, "id");
            char *again = json_dumps(r, JSON_SORT_KEYS);
            cr_assert_str_eq(again, first[k]);
            free(again);
            json_decref(r);
        }
    }
    for (int k = 0; k < 5; k++) free(first[k]);
    json_t *r = call(C, "{\"op\":\"drop_snapshot\",\"v\":1,\"session\":\"%s\",\"snapshot\":%lld}", tok, (long long)id);
    cr_assert_null(err_code(r));
    json_decref(r);
    r = call(C, "{\"op\":\"restore\",\"v\":1,\"session\":\"%s\",\"snapshot\":%lld}", tok, (long long)id);
    cr_assert_str_eq(err_code(r), "UNKNOWN_SNAPSHOT");
    json_decref(r);
    free(tok);
}

Test(ops, evaluate_and_batch_across_workers) {
    json_t *r = call(C, "{\"op\":\"evaluate\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":2,\"choices\":3},\"point\":[0,0]}");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    double single = json_real_value(json_object_get(r, "reward"));
    json_decref(r);
    char pts[4096] = "[";
    for (int k = 0; k < 9; k++) {
        char one[32];
        snprintf(one, sizeof one, "%s[%d,%d]", k ? "," : "", k / 3, k % 3);
        strcat(pts, one);
    }
    strcat(pts, ",[5,5]]");
    r = call(C, "{\"op\":\"evaluate_batch\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":2,\"choices\":3},\"points\":%s}", pts);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_t *rw = json_object_get(r, "reward"), *errs = json_object_get(r, "errors");
    cr_assert_eq(json_array_size(rw), 10);
    cr_assert_eq(json_real_value(json_array_get(rw, 0)), single);
    int ones = 0;
    for (int k = 0; k < 9; k++) {
        cr_assert(json_is_null(json_array_get(errs, k)));
        if (json_real_value(json_array_get(rw, k)) == 1.0) ones++;
    }
    cr_assert_eq(ones, 1, "exactly one point hits the target");
    cr_assert(json_is_null(json_array_get(rw, 9)), "a failed point has NaN (null in JSON)");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(errs, 9), "code")), "BAD_ACTION");
    json_decref(r);
}

Test(ops, spaces_and_envs_and_stats) {
    json_t *r = call(C, "{\"op\":\"spaces\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"action_space\":\"box\",\"obs\":\"dict\"}}");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "action_space"), "type")), "Box");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "observation_space"), "type")), "Dict");
    json_decref(r);
    r = call(C, "{\"op\":\"spaces\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"choices\":1}}");
    cr_assert_str_eq(err_code(r), "BAD_CONFIG");
    cr_assert(strstr(err_msg(r), "config.choices"), "%s", err_msg(r));
    json_decref(r);
    r = call(C, "{\"op\":\"envs\",\"v\":1}");
    cr_assert_geq(json_array_size(json_object_get(r, "envs")), 1);
    json_decref(r);
    char *tok = make_session("");
    json_decref(call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\"}", tok));
    for (int i = 0; i < 20; i++) json_decref(call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok));
    r = call(C, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 1);
    cr_assert_geq(json_integer_value(json_object_get(r, "steps")), 16);
    json_t *st = json_object_get(json_object_get(r, "ops"), "step");
    cr_assert_eq(json_integer_value(json_object_get(st, "count")), 20);
    double p50 = json_real_value(json_object_get(st, "p50_us")), p99 = json_real_value(json_object_get(st, "p99_us"));
    cr_assert(p50 > 0 && p99 >= p50, "p50 %g p99 %g", p50, p99);
    json_decref(r);
    free(tok);
}

Test(ops, box_and_dict_and_bin_actions) {
    char *tok = make_session(",\"config\":{\"action_space\":\"box\",\"dims\":2,\"obs\":\"dict\"}");
    json_decref(call(C, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\"}", tok));
    /* a float32 wire array action, packed by hand */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    hw_pack_kv_str(&pk, "op", "step");
    hw_pack_cstr(&pk, "v");
    msgpack_pack_int(&pk, 1);
    hw_pack_kv_str(&pk, "session", tok);
    hw_pack_cstr(&pk, "action");
    float a[2] = {0.5f, -1.0f};
    hw_array arr = {HW_DT_FLOAT32, 1, {2}, a};
    hw_pack_array(&pk, &arr, 0);
    json_t *r = call_raw(C, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_t *obs = json_object_get(r, "obs");
    cr_assert(json_is_object(obs));
    cr_assert_eq(json_array_size(json_object_get(obs, "last_action")), 2);
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(obs, "t"), 0)), 1);
    json_decref(r);
    r = call(C, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0.5,1.5]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_ACTION");
    json_decref(r);
    free(tok);
}

Test(ops, close_then_unknown_session) {
    char *tok = make_session("");
    json_t *r = call(C, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok);
    cr_assert_null(err_code(r));
    json_decref(r);
    r = call(C, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok);
    cr_assert_str_eq(err_code(r), "UNKNOWN_SESSION");
    json_decref(r);
    free(tok);
}
