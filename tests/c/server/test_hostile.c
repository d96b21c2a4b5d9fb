/* At least 1000 malformed or hostile requests; each gets an error reply that names the problem,
 * and afterwards the server still serves a well-formed client. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <string.h>
#include <zmq.h>

#include "harness.h"
#include "hw_codec.h"

static int sent, errors_named;

typedef struct buf {
    msgpack_sbuffer sb;
    msgpack_packer pk;
} buf;

static void b_init(buf *b) {
    msgpack_sbuffer_init(&b->sb);
    msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

/* Sends raw bytes; asserts an error reply whose code is one of `codes` ('|'-separated) and
 * whose message is not empty. */
static void expect_error(void *c, const void *data, size_t n, const char *codes, const char *what) {
    json_t *r = call_raw(c, data, n);
    cr_assert(r, "no reply to %s", what);
    const char *code = err_code(r);
    cr_assert(code, "%s: expected an error, got ok", what);
    cr_assert(strstr(codes, code), "%s: code %s not in %s (%s)", what, code, codes, err_msg(r));
    cr_assert_gt(strlen(err_msg(r)), 8, "%s: message too short", what);
    sent++;
    errors_named++;
    json_decref(r);
}

static void pack_head(buf *b, int nfields, const char *op, const char *tok) {
    msgpack_pack_map(&b->pk, (size_t)nfields + 2 + (tok != NULL));
    hw_pack_kv_str(&b->pk, "op", op);
    hw_pack_cstr(&b->pk, "v");
    msgpack_pack_int(&b->pk, 1);
    if (tok) hw_pack_kv_str(&b->pk, "session", tok);
}

static char TOK[64];

static void make_tok(void *c) {
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":4,\"choices\":8}}");
    snprintf(TOK, sizeof TOK, "%s", json_string_value(json_object_get(r, "session")));
    json_decref(r);
    json_decref(call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\"}", TOK));
}

Test(hostile, thousand_bad_requests_then_still_serving, .timeout = 120) {
    srv S;
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_msg = 1 << 20;
    srv_start_opts(&S, &o);
    void *c = cli_new(S.ep);
    make_tok(c);
    buf b;

    /* 1. every prefix of valid requests is truncated msgpack */
    const char *valid[] = {"{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":3}}",
                           "{\"op\":\"step\",\"v\":1,\"session\":\"0123456789abcdef0123456789abcdef\",\"action\":[1,2,3,4]}"};
    for (int k = 0; k < 2; k++) {
        json_t *j = json_loads(valid[k], 0, NULL);
        b_init(&b);
        hw_pack_json(&b.pk, j);
        json_decref(j);
        for (size_t n = 1; n < b.sb.size; n++) expect_error(c, b.sb.data, n, "BAD_REQUEST", "truncated msgpack");
        msgpack_sbuffer_destroy(&b.sb);
    }
    /* 2. empty message, non-map tops, ext types, 0xc1 */
    expect_error(c, "", 0, "BAD_REQUEST", "empty message");
    const unsigned char tops[][3] = {{0x01}, {0x91, 0x01}, {0xc0}, {0xa1, 'x'}, {0xd4, 0x01, 0x02}, {0xc1}};
    const size_t topn[] = {1, 2, 1, 2, 3, 1};
    for (int k = 0; k < 6; k++) expect_error(c, tops[k], topn[k], "BAD_REQUEST", "not a map");
    const unsigned char ext[] = {0x81, 0xa1, 'x', 0xd4, 0x01, 0x02};
    expect_error(c, ext, sizeof ext, "BAD_REQUEST", "ext type");
    const unsigned char c1[] = {0x81, 0xa1, 'x', 0xc1};
    expect_error(c, c1, sizeof c1, "BAD_REQUEST", "0xc1");
    /* 3. huge declared lengths: array32/map32/str32/bin32 claiming up to 4G entries */
    const unsigned char kinds[] = {0xdd, 0xdf, 0xdb, 0xc6, 0xdc, 0xde, 0xda, 0xc5};
    for (int k = 0; k < 8; k++) {
        for (int sz = 0; sz < 25; sz++) {
            unsigned char m[16] = {0x81, 0xa1, 'x', kinds[k]};
            uint32_t n = 0xffffffffu >> sz;
            int nb = (kinds[k] == 0xdc || kinds[k] == 0xde || kinds[k] == 0xda || kinds[k] == 0xc5) ? 2 : 4;
            for (int i = 0; i < nb; i++) m[4 + i] = (unsigned char)(n >> (8 * (nb - 1 - i)));
            m[4 + nb] = 0x01;
            expect_error(c, m, 5 + (size_t)nb + 1, "BAD_REQUEST|LIMIT", "huge declared length");
        }
    }
    /* 4. deep nesting */
    for (int depth = 33; depth < 60; depth++) {
        unsigned char m[128] = {0x81, 0xa1, 'x'};
        size_t n = 3;
        for (int i = 0; i < depth; i++) m[n++] = 0x91;
        m[n++] = 0x01;
        expect_error(c, m, n, "LIMIT", "deep nesting");
    }
    /* 5. non-UTF-8 strings: in op, in a key, in the env id, in a nested value */
    const char *bad_utf8[] = {"\xff", "\xc3\x28", "\xe2\x28\xa1", "\xf0\x28\x8c\xbc", "\xed\xa0\x80", "\xc0\xaf", "a\x80"};
    for (int k = 0; k < 7; k++) {
        for (int where = 0; where < 4; where++) {
            b_init(&b);
            size_t L = strlen(bad_utf8[k]);
            msgpack_pack_map(&b.pk, 3);
            hw_pack_cstr(&b.pk, "v");
            msgpack_pack_int(&b.pk, 1);
            hw_pack_cstr(&b.pk, where == 1 ? "x" : "op");
            if (where == 0) {
                msgpack_pack_str(&b.pk, L);
                msgpack_pack_str_body(&b.pk, bad_utf8[k], L);
            } else {
                hw_pack_cstr(&b.pk, "make");
            }
            if (where == 1) {
                msgpack_pack_str(&b.pk, L);
                msgpack_pack_str_body(&b.pk, bad_utf8[k], L);
                msgpack_pack_int(&b.pk, 1);
            } else if (where == 2) {
                hw_pack_cstr(&b.pk, "env");
                msgpack_pack_str(&b.pk, L);
                msgpack_pack_str_body(&b.pk, bad_utf8[k], L);
            } else {
                hw_pack_cstr(&b.pk, "config");
                msgpack_pack_map(&b.pk, 1);
                hw_pack_cstr(&b.pk, "dims");
                msgpack_pack_str(&b.pk, L);
                msgpack_pack_str_body(&b.pk, bad_utf8[k], L);
            }
            expect_error(c, b.sb.data, b.sb.size, "BAD_REQUEST", "non-UTF-8 string");
            msgpack_sbuffer_destroy(&b.sb);
        }
    }
    /* 6. wrong types for every field, unknown ops, unknown sessions */
    const char *wrong[] = {
        "{\"op\":1,\"v\":1}", "{\"op\":\"ping\",\"v\":\"1\"}", "{\"op\":\"ping\",\"v\":-1}", "{\"op\":\"ping\",\"v\":1,\"id\":[1]}",
        "{\"op\":\"make\",\"v\":1}", "{\"op\":\"make\",\"v\":1,\"env\":5}", "{\"op\":\"make\",\"v\":1,\"env\":\"nope-v0\"}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":[1]}", "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":\"x\"}}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"bogus\":1}}", "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"num_envs\":0}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"num_envs\":100000}", "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"num_envs\":\"2\"}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[]}", "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0]}]}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0,1,2,3]},{\"name\":\"a\",\"dims\":[]}]}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0,1,2,9]}]}",
        "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0,1,2,2]}]}",
        "{\"op\":\"reset\",\"v\":1}", "{\"op\":\"reset\",\"v\":1,\"session\":5}",
        "{\"op\":\"step\",\"v\":1,\"session\":\"ffffffffffffffffffffffffffffffff\",\"action\":[1]}",
        "{\"op\":\"join\",\"v\":1,\"session\":\"nope\",\"agent\":\"a\"}", "{\"op\":\"restore\",\"v\":1,\"session\":\"nope\",\"snapshot\":1}",
        "{\"op\":\"evaluate\",\"v\":1,\"env\":\"diag-v0\"}", "{\"op\":\"evaluate\",\"v\":1,\"env\":\"x\",\"point\":[1]}",
        "{\"op\":\"evaluate_batch\",\"v\":1,\"env\":\"diag-v0\",\"points\":5}", "{\"op\":\"evaluate_batch\",\"v\":1,\"env\":\"zz\",\"points\":[]}",
        "{\"op\":\"spaces\",\"v\":1}", "{\"op\":\"close\",\"v\":1,\"session\":\"\"}", "{\"v\":1}", "{\"op\":\"\",\"v\":1}",
    };
    for (size_t k = 0; k < sizeof wrong / sizeof *wrong; k++) {
        json_t *j = json_loads(wrong[k], 0, NULL);
        cr_assert(j, "%s", wrong[k]);
        b_init(&b);
        hw_pack_json(&b.pk, j);
        json_decref(j);
        expect_error(c, b.sb.data, b.sb.size,
                     "BAD_REQUEST|UNSUPPORTED_VERSION|UNKNOWN_OP|UNKNOWN_SESSION|UNKNOWN_ENV|BAD_CONFIG|LIMIT|NOT_SUPPORTED|BAD_ACTION", wrong[k]);
        msgpack_sbuffer_destroy(&b.sb);
    }
    for (int k = 0; k < 100; k++) {
        char op[32];
        snprintf(op, sizeof op, "op_%d", k);
        b_init(&b);
        pack_head(&b, 0, op, NULL);
        expect_error(c, b.sb.data, b.sb.size, "UNKNOWN_OP", "unknown op");
        msgpack_sbuffer_destroy(&b.sb);
        char tok[40];
        snprintf(tok, sizeof tok, "%032x", k * 7919);
        b_init(&b);
        pack_head(&b, 0, k % 2 ? "step" : "reset", tok);
        expect_error(c, b.sb.data, b.sb.size, "UNKNOWN_SESSION", "unknown session");
        msgpack_sbuffer_destroy(&b.sb);
    }
    /* 7. actions out of range, wrong shape, wrong dtype, oversized arrays */
    for (int k = 0; k < 60; k++) {
        b_init(&b);
        pack_head(&b, 1, "step", TOK);
        hw_pack_cstr(&b.pk, "action");
        switch (k % 6) {
        case 0: /* out of range element */
            msgpack_pack_array(&b.pk, 4);
            for (int i = 0; i < 4; i++) msgpack_pack_int(&b.pk, i == k % 4 ? 8 + k : 0);
            break;
        case 1: /* negative */
            msgpack_pack_array(&b.pk, 4);
            for (int i = 0; i < 4; i++) msgpack_pack_int(&b.pk, -1 - k);
            break;
        case 2: /* wrong length */
            msgpack_pack_array(&b.pk, (size_t)(k % 4 == 0 ? 5 : 3));
            for (int i = 0; i < (k % 4 == 0 ? 5 : 3); i++) msgpack_pack_int(&b.pk, 1);
            break;
        case 3: { /* wire array claiming more bytes than it has */
            msgpack_pack_map(&b.pk, 3);
            hw_pack_kv_str(&b.pk, "dtype", "int64");
            hw_pack_cstr(&b.pk, "shape");
            msgpack_pack_array(&b.pk, 1);
            msgpack_pack_int64(&b.pk, 1000000000LL + k);
            hw_pack_cstr(&b.pk, "data");
            msgpack_pack_bin(&b.pk, 32);
            msgpack_pack_bin_body(&b.pk, "0123456789abcdef0123456789abcdef", 32);
            break;
        }
        case 4: { /* unknown dtype / non-integer values */
            msgpack_pack_map(&b.pk, 3);
            hw_pack_kv_str(&b.pk, "dtype", k % 12 == 4 ? "complex128" : "float64");
            hw_pack_cstr(&b.pk, "shape");
            msgpack_pack_array(&b.pk, 1);
            msgpack_pack_int(&b.pk, 4);
            hw_pack_cstr(&b.pk, "data");
            double v[4] = {0.5, 1, 2, 3};
            msgpack_pack_bin(&b.pk, 32);
            msgpack_pack_bin_body(&b.pk, v, 32);
            break;
        }
        default: /* strings instead of numbers */
            msgpack_pack_array(&b.pk, 4);
            for (int i = 0; i < 4; i++) hw_pack_cstr(&b.pk, "one");
            break;
        }
        expect_error(c, b.sb.data, b.sb.size, "BAD_ACTION|BAD_REQUEST|LIMIT", "bad action");
        msgpack_sbuffer_destroy(&b.sb);
    }
    /* 8. oversized message (over --max-msg) and oversized strings */
    {
        size_t big = (1 << 20) + 100;
        char *payload = calloc(big, 1);
        b_init(&b);
        pack_head(&b, 1, "ping", NULL);
        hw_pack_cstr(&b.pk, "pad");
        msgpack_pack_bin(&b.pk, big);
        msgpack_pack_bin_body(&b.pk, payload, big);
        expect_error(c, b.sb.data, b.sb.size, "LIMIT", "oversized message");
        msgpack_sbuffer_destroy(&b.sb);
        free(payload);
    }
    /* 9. random garbage after a map header (deterministic) */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    int garbage = 0;
    while (sent < 1100) {
        unsigned char m[64];
        size_t n = 1 + gsl_rng_uniform_int(rng, 63);
        for (size_t i = 0; i < n; i++) m[i] = (unsigned char)gsl_rng_uniform_int(rng, 256);
        m[0] = (unsigned char)(0x80 | gsl_rng_uniform_int(rng, 16));
        json_t *r = call_raw(c, m, n);
        cr_assert(r, "no reply to random garbage");
        cr_assert(err_code(r), "random garbage accepted");
        json_decref(r);
        sent++;
        garbage++;
    }
    gsl_rng_free(rng);
    cr_assert_geq(sent, 1000);
    cr_log_info("sent %d hostile requests (%d random), all answered with named errors", sent, garbage);
    /* 10. a well-formed client is still served, and the session still steps */
    void *c2 = cli_new(S.ep);
    json_t *r = call(c2, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,2,3,4]}", TOK);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    r = call(c2, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\"}");
    cr_assert_null(err_code(r));
    json_decref(r);
    cli_close(c2);
    cli_close(c);
    cr_assert_eq(srv_stop(&S), 0);
}
