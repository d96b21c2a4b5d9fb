/* Issue 29, the server's fixed cost a round trip: a reply's header is packed in fewer writes, its
 * buffer is reused (the router keeps a sent small reply's buffer as a spare for the next inline
 * op: router_core.c), small replies are sent as a copy and large ones zero-copy, and envelope
 * frames are moved rather than copied. None of it may change a byte on the wire:
 * - reply_begin's header is msgpack's own packing of {"id": <echo>, "ok": true, ...} for every
 *   field count (fixmap and map16) and id kind, into a fresh buffer or one holding an older,
 *   longer reply;
 * - over the wire, requests of very different reply sizes interleaved on one server (a 17.8 kB
 *   mmap-v0 step sent zero-copy, maestro-v0's ~500 B, diag-v0's ~135 B, errors, spaces, pings),
 *   every reply of an inline server is the same bytes as a worker server's (fresh buffers) and
 *   decodes as exactly one map: no byte of a longer earlier reply leaks into a shorter later one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "harness.h"
#include "hw_codec.h"
#include "reply.h"
#include "worker_int.h"

/* msgpack-c's packing of the header, call by call (the bytes reply_begin had before) */
static void reference_header(msgpack_sbuffer *sb, size_t nfields, const msgpack_object *id) {
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, nfields + 2);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "id", 2);
    if (id) msgpack_pack_object(&pk, *id);
    else msgpack_pack_nil(&pk);
    msgpack_pack_str(&pk, 2);
    msgpack_pack_str_body(&pk, "ok", 2);
    msgpack_pack_true(&pk);
}

Test(reply, header_bytes_are_msgpacks_for_every_field_count_id_and_buffer) {
    /* integer ids at each width boundary of msgpack_pack_uint64 (one write with the header) */
    static const uint64_t uints[] = {5, (uint64_t)1 << 40, 0, 127, 128, 255, 256, 65535, 65536, 4294967295u, 4294967296u, UINT64_MAX};
    enum { NU = sizeof uints / sizeof *uints, NID = NU + 3 };
    msgpack_object ids[NID];
    memset(ids, 0, sizeof ids);
    for (int k = 0; k < NU; k++) ids[k].type = MSGPACK_OBJECT_POSITIVE_INTEGER, ids[k].via.u64 = uints[k];
    ids[NU].type = MSGPACK_OBJECT_NEGATIVE_INTEGER, ids[NU].via.i64 = -3;
    ids[NU + 1].type = MSGPACK_OBJECT_STR, ids[NU + 1].via.str.ptr = "request-7", ids[NU + 1].via.str.size = 9;
    ids[NU + 2].type = MSGPACK_OBJECT_STR, ids[NU + 2].via.str.ptr = NULL, ids[NU + 2].via.str.size = 0;
    int checked = 0;
    for (size_t nf = 0; nf <= 40; nf++)
        for (int k = -1; k < NID; k++)
            for (int state = 0; state < 4; state++) {
                task t;
                memset(&t, 0, sizeof t);
                t.id = k < 0 ? NULL : &ids[k];
                size_t hint = 0;
                if (state >= 1) { /* a buffer holding an older, longer reply (the spare) */
                    t.reply.alloc = state == 3 ? 64 : 20000;
                    t.reply.data = malloc(t.reply.alloc);
                    memset(t.reply.data, 0xee, t.reply.alloc);
                    t.reply.size = state == 3 ? 60 : 15000;
                }
                if (state == 2) hint = 30000; /* more than it holds: replaced */
                msgpack_packer pk = reply_begin_sized(&t, nf, hint);
                hw_pack_cstr(&pk, "x");
                msgpack_pack_int(&pk, 1);
                msgpack_sbuffer ref;
                msgpack_sbuffer_init(&ref);
                reference_header(&ref, nf, t.id);
                msgpack_packer rp;
                msgpack_packer_init(&rp, &ref, msgpack_sbuffer_write);
                hw_pack_cstr(&rp, "x");
                msgpack_pack_int(&rp, 1);
                cr_assert_eq(t.reply.size, ref.size, "%zu fields, id %d, buffer %d: %zu bytes against %zu", nf, k, state, t.reply.size, ref.size);
                cr_assert(!memcmp(t.reply.data, ref.data, ref.size), "%zu fields, id %d, buffer %d: different bytes", nf, k, state);
                cr_assert_not(t.failed);
                if (state == 2) cr_assert_geq(t.reply.alloc, hint, "the hint's room");
                msgpack_sbuffer_destroy(&ref);
                msgpack_sbuffer_destroy(&t.reply);
                checked++;
            }
    cr_assert_eq(checked, 41 * (NID + 1) * 4);
}

/* pack_step_out gathers "obs", a single array's header and (up to 256 bytes) its data, reward,
 * terminated and truncated into one write: msgpack-c's bytes for them (float 64, true/false) at
 * signed zeros, infinities, NaN, tiny and huge values, for observations of 0, 3, 32 (256 bytes) and
 * 33 int64s, a Dict, a one-key Dict, and a reset (obs alone) */
Test(reply, step_out_bytes_are_msgpacks) {
    static const double rewards[] = {0.0, -0.0, 1.0, -1.5, 1e-310, 1.7976931348623157e308, -3.25e-7, 0.1};
    double special[] = {1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0};
    static const int64_t lens[] = {3, 0, 32, 33};
    int64_t v[40];
    for (int i = 0; i < 40; i++) v[i] = i * 977 - 300;
    for (int shape = 0; shape < 7; shape++)
    for (int i = 0; i < 11; i++)
        for (int f = 0; f < 4; f++) {
            hw_step_out out;
            memset(&out, 0, sizeof out);
            out.obs.n = 1;
            out.obs.arr[0] = (hw_array){HW_DT_INT64, 1, {shape < 4 ? lens[shape] : 3}, shape == 1 ? NULL : v};
            if (shape == 4 || shape == 5) { /* a Dict (two keys), a Dict of one key */
                out.obs.keys[0] = "a";
                out.obs.arr[1] = (hw_array){HW_DT_FLOAT64, 2, {2, 2}, v};
                out.obs.keys[1] = "bb";
                out.obs.n = shape == 4 ? 2 : 1;
            }
            bool step = shape != 6;
            out.reward = i < 8 ? rewards[i] : special[i - 8];
            out.terminated = f & 1;
            out.truncated = f & 2;
            pack_pair pp;
            pack_pair_init(&pp);
            msgpack_packer *pb = &pp.pk[1];
            pack_step_out(&pp.pk[0], &out, step);
            hw_pack_cstr(pb, "obs");
            hw_pack_obs(pb, &out.obs);
            if (!step) {
                cr_assert(pack_pair_same(&pp), "reset, obs shape %d: different bytes", shape);
                continue;
            }
            msgpack_pack_str(pb, 6);
            msgpack_pack_str_body(pb, "reward", 6);
            msgpack_pack_double(pb, out.reward);
            msgpack_pack_str(pb, 10);
            msgpack_pack_str_body(pb, "terminated", 10);
            if (out.terminated) msgpack_pack_true(pb);
            else msgpack_pack_false(pb);
            msgpack_pack_str(pb, 9);
            msgpack_pack_str_body(pb, "truncated", 9);
            if (out.truncated) msgpack_pack_true(pb);
            else msgpack_pack_false(pb);
            cr_assert(pack_pair_same(&pp), "obs shape %d, reward %g, flags %d: different bytes", shape, out.reward, f);
        }
}

/* ---- over the wire: an inline server against a worker server, request for request */

enum { INL = 0, WRK, NS };
static srv S[NS];
static void *C[NS];

/* one request (`tok` per server replaces "session" when given) on both servers: the replies must
 * be the same bytes and exactly one msgpack map; returns the inline server's reply's size */
static size_t both(char tok[NS][64], const char *text, const char *what) {
    bytes r[NS];
    for (int k = 0; k < NS; k++) {
        json_t *req = json_loads(text, 0, NULL);
        cr_assert_not_null(req, "bad test request %s", text);
        if (tok) json_object_set_new(req, "session", json_string(tok[k]));
        send_packed(C[k], req);
        json_decref(req);
        r[k] = recv_bytes(C[k]);
    }
    hw_msg m;
    hw_err err;
    cr_assert_eq(hw_msg_decode(&m, r[INL].data, r[INL].n, NULL, &err), 0, "%s: the inline reply (%zu B) is not one map: %s", what, r[INL].n, err.msg);
    hw_msg_free(&m);
    cr_assert(r[INL].n == r[WRK].n && !memcmp(r[INL].data, r[WRK].data, r[INL].n), "%s: the inline reply (%zu B) differs from the worker's (%zu B)",
              what, r[INL].n, r[WRK].n);
    size_t n = r[INL].n;
    for (int k = 0; k < NS; k++) free(r[k].data);
    return n;
}

static void make_both(const char *env, const char *config, char tok[NS][64]) {
    for (int k = 0; k < NS; k++) {
        json_t *r = call(C[k], "{\"op\":\"make\",\"v\":1,\"env\":\"%s\",\"config\":%s}", env, config);
        cr_assert_null(err_code(r), "%s: %s", env, err_msg(r));
        snprintf(tok[k], 64, "%s", json_string_value(json_object_get(r, "session")));
        json_decref(r);
    }
}

Test(reply, interleaved_sizes_answer_the_worker_servers_bytes, .timeout = 120) {
    for (int k = 0; k < NS; k++) {
        hw_server_opts o;
        hw_server_default_opts(&o);
        o.workers = 2;
        o.inline_us = k == INL ? 1e6 : 0; /* INL: every measured op inline; WRK: none */
        srv_start_opts(&S[k], &o);
        C[k] = cli_new(S[k].ep);
    }
    char big[NS][64], mid[NS][64], small[NS][64];
    make_both("mmap-v0", "{}", big);
    make_both("maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"episode_length\":1000}", mid);
    make_both("diag-v0", "{\"dims\":4,\"episode_length\":1000}", small);
    both(big, "{\"op\":\"reset\",\"v\":1,\"seed\":3}", "mmap-v0 reset");
    both(mid, "{\"op\":\"reset\",\"v\":1,\"seed\":3}", "maestro-v0 reset");
    both(small, "{\"op\":\"reset\",\"v\":1,\"seed\":3}", "diag-v0 reset");
    size_t seen_big = 0, seen_mid = 0, seen_small = SIZE_MAX;
    for (int i = 0; i < 40; i++) {
        char req[256], what[96];
        /* mmap-v0's action: a Discrete choice (its first slot, always legal) */
        snprintf(req, sizeof req, "{\"op\":\"step\",\"v\":1,\"id\":%d,\"action\":0}", i);
        snprintf(what, sizeof what, "round %d: mmap-v0 step", i);
        size_t nb = both(big, req, what);
        if (nb > seen_big) seen_big = nb;
        snprintf(req, sizeof req, "{\"op\":\"step\",\"v\":1,\"id\":\"s%d\",\"action\":[%d,%d,%d,%d,%d,%d,%d,%d,%d,%d]}", i, i % 3, i % 5, i % 2,
                 i % 4, i % 3, i % 2, i % 5, i % 3, i % 2, i % 4);
        snprintf(what, sizeof what, "round %d: maestro-v0 step", i);
        size_t nm = both(mid, req, what);
        if (nm > seen_mid) seen_mid = nm;
        snprintf(req, sizeof req, "{\"op\":\"step\",\"v\":1,%s\"action\":[%d,%d,%d,%d]}", i % 2 ? "\"id\":-5," : "", i % 5, (i / 2) % 5, (i * 3) % 5,
                 4 - i % 5);
        snprintf(what, sizeof what, "round %d: diag-v0 step", i);
        size_t ns = both(small, req, what);
        if (ns < seen_small) seen_small = ns;
        if (i % 7 == 3) { /* an error reply, a spaces reply, a ping between the steps */
            both(small, "{\"op\":\"step\",\"v\":1,\"id\":1,\"action\":[9,9]}", "a bad action");
            both(mid, "{\"op\":\"spaces\",\"v\":1}", "maestro-v0 spaces");
            for (int k = 0; k < NS; k++) { /* ping's time differs: its size must not */
                json_t *r = call(C[k], "{\"op\":\"ping\",\"v\":1,\"id\":1}");
                cr_assert_null(err_code(r));
                json_decref(r);
            }
        }
    }
    /* the sizes the test is about: zero-copy (> 4 KiB), then shorter replies in reused buffers */
    cr_assert_gt(seen_big, 4096, "mmap-v0's step reply is %zu B", seen_big);
    cr_assert_gt(seen_mid, seen_small + 200, "maestro-v0 %zu B, diag-v0 %zu B", seen_mid, seen_small);
    json_t *st = call(C[INL], "{\"op\":\"stats\",\"v\":1}");
    cr_assert_geq(json_integer_value(json_object_get(st, "inline_ops")), 100, "the inline server ran its steps inline");
    json_decref(st);
    st = call(C[WRK], "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(st, "inline_ops")), 0, "the worker server ran nothing inline");
    json_decref(st);
    for (int k = 0; k < NS; k++) {
        cli_close(C[k]);
        cr_assert_eq(srv_stop(&S[k]), 0);
    }
}
