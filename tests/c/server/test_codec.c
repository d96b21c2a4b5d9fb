/* The request decoder's fast paths (protocol/hw_codec.c), as units: hw_utf8_valid's ASCII runs
 * (eight bytes at a time) give the same answer at every position and length, and
 * hw_msg_decode's zone, sized by the scan, decodes every shape as msgpack-c's own unpacker does;
 * and the packing and checking shortcuts of issue 29 (one-write strings and array headers, keys
 * compared in place, dtype names as words, int64 actions) give msgpack-c's bytes and the general
 * check's answers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hw_codec.h"
#include "hw_space.h"
#include "task.h"

/* ASCII around a sequence does not change whether the string is valid: every string here is
 * exactly as valid as the one sequence it holds, wherever the eight-byte runs fall */
Test(codec, utf8_ascii_runs_do_not_change_the_answer) {
    static const char *const seqs[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\x80", "z"};
    static const bool ok[] = {true, true, true, false, false, false, false, false, true};
    unsigned char buf[64];
    int checked = 0;
    for (size_t k = 0; k < sizeof seqs / sizeof *seqs; k++)
        cr_assert_eq(hw_utf8_valid(seqs[k], strlen(seqs[k])), ok[k], "sequence %zu alone", k);
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof seqs / sizeof *seqs; k++) {
                size_t m = strlen(seqs[k]);
                memset(buf, 'a' + (int)(len % 26), sizeof buf);
                memcpy(buf + at, seqs[k], m); /* the sequence at `at`, ASCII around it */
                size_t n = at + m > len ? at + m : len;
                cr_assert_eq(hw_utf8_valid((const char *)buf, n), ok[k], "len %zu, sequence %zu at %zu", n, k, at);
                /* a multi-byte sequence cut by the end of the string */
                if (m > 1) cr_assert_not(hw_utf8_valid((const char *)buf, at + 1), "cut sequence %zu at %zu", k, at);
                checked++;
            }
    cr_assert_gt(checked, 7000);
    cr_assert(hw_utf8_valid("", 0));
    cr_assert(hw_utf8_valid("0123456789abcdef0123456789abcdef", 32));
}

/* decodes `sb` with hw_msg_decode (with hw_msg_decode_in and the zone in *reuse when reuse is
 * given, the zone then taken back as a server does) and with msgpack_unpack_next; the objects
 * must be equal */
static void same_as_msgpack_in(const msgpack_sbuffer *sb, msgpack_zone **reuse, const char *what) {
    hw_msg m;
    hw_err err;
    cr_assert_eq(reuse ? hw_msg_decode_in(&m, sb->data, sb->size, NULL, reuse, &err) : hw_msg_decode(&m, sb->data, sb->size, NULL, &err), 0, "%s: %s",
                 what, err.msg);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    cr_assert_eq(msgpack_unpack_next(&up, sb->data, sb->size, &off), MSGPACK_UNPACK_SUCCESS);
    cr_assert(msgpack_object_equal(*m.root, up.data), "%s: decoded differently", what);
    msgpack_unpacked_destroy(&up);
    if (reuse && !*reuse) { /* the zone back, for the next message */
        *reuse = m.up.zone;
        m.up.zone = NULL;
    }
    hw_msg_free(&m);
}

/* every shape of message: empty, short and long lists, maps in arrays in maps, nested empties */
static void decode_shapes(msgpack_zone **z) {
    for (int shape = 0; shape < 6; shape++) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        msgpack_packer pk;
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        int n = shape == 0 ? 0 : shape == 1 ? 3 : shape == 2 ? 1000 : shape == 3 ? 20000 : 40;
        msgpack_pack_map(&pk, 3);
        hw_pack_kv_str(&pk, "op", "step");
        hw_pack_cstr(&pk, "list");
        msgpack_pack_array(&pk, (size_t)n);
        for (int i = 0; i < n; i++) {
            if (shape == 4) { /* maps in arrays in maps */
                msgpack_pack_map(&pk, 2);
                hw_pack_kv_str(&pk, "k", "v\xc3\xa9");
                hw_pack_cstr(&pk, "a");
                msgpack_pack_array(&pk, (size_t)i);
                for (int j = 0; j < i; j++) msgpack_pack_double(&pk, j * 0.5);
            } else if (shape == 5) {
                msgpack_pack_array(&pk, 1);
                msgpack_pack_array(&pk, 1);
                msgpack_pack_map(&pk, 0);
            } else
                msgpack_pack_int64(&pk, (int64_t)i * 7919 - 5000);
        }
        hw_pack_cstr(&pk, "bin");
        msgpack_pack_bin(&pk, 5);
        msgpack_pack_bin_body(&pk, "\0\1\2\3\4", 5);
        char what[32];
        snprintf(what, sizeof what, "shape %d", shape);
        same_as_msgpack_in(&sb, z, what);
        msgpack_sbuffer_destroy(&sb);
    }
}

Test(codec, sized_zone_decodes_every_shape_as_msgpack_does) { decode_shapes(NULL); }

/* one reused zone through big and small messages alternately (hw_msg_decode_in): each decodes as
 * msgpack-c does, nothing of a bigger earlier message in a smaller later one */
Test(codec, reused_zone_decodes_every_shape_as_msgpack_does) {
    msgpack_zone *z = NULL;
    for (int pass = 0; pass < 3; pass++) decode_shapes(&z);
    cr_assert_not_null(z, "the zone came back");
    cr_assert_geq(z->chunk_size, HW_MSG_ZONE_REUSE);
    msgpack_zone_free(z);
}

/* hw_pack_cstr writes a short string in one write (header byte and bytes together): the bytes
 * are msgpack_pack_str's at every length, across the fixstr / str8 / str16 boundaries */
Test(codec, pack_cstr_bytes_are_msgpack_str) {
    static char s[300];
    for (size_t n = 0; n < sizeof s - 1; n++) {
        memset(s, 0, sizeof s);
        for (size_t i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + n) % 26);
        pack_pair pp;
        pack_pair_init(&pp);
        hw_pack_cstr(&pp.pk[0], s);
        msgpack_pack_str(&pp.pk[1], n);
        msgpack_pack_str_body(&pp.pk[1], s, n);
        cr_assert(pack_pair_same(&pp), "length %zu: different bytes", n);
    }
}

/* hw_put_str_head / hw_put_list_head / hw_put_map_head write msgpack_pack_str's /
 * msgpack_pack_array's / msgpack_pack_map's bytes at every width boundary (fix, 8, 16, 32 bits) */
Test(codec, str_list_and_map_heads_are_msgpacks) {
    static const size_t ns[] = {0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536, 70000, 4294967295u};
    static const char *const kinds[] = {"str", "list", "map"};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        for (int kind = 0; kind < 3; kind++) {
            unsigned char b[8];
            size_t h = kind == 0 ? hw_put_str_head(b, ns[k]) : kind == 1 ? hw_put_list_head(b, ns[k]) : hw_put_map_head(b, ns[k]);
            msgpack_sbuffer sb;
            msgpack_sbuffer_init(&sb);
            msgpack_packer pk;
            msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
            if (kind == 0) msgpack_pack_str(&pk, ns[k]);
            else if (kind == 1) msgpack_pack_array(&pk, ns[k]);
            else msgpack_pack_map(&pk, ns[k]);
            cr_assert(sb.size == h && !memcmp(sb.data, b, h), "%s head of %zu: %zu bytes, msgpack %zu", kinds[kind], ns[k], h, sb.size);
            msgpack_sbuffer_destroy(&sb);
        }
    }
}

/* hw_mp_get (inline, the key's length taken where it is asked): keys of one length that differ
 * in their first byte or only later, the empty key, a key that is a prefix of another */
Test(codec, mp_get_finds_each_key_and_only_it) {
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    static const char *const keys[] = {"op", "id", "ox", "", "session", "sessions", "v"};
    enum { NK = sizeof keys / sizeof *keys };
    msgpack_pack_map(&pk, NK);
    for (int i = 0; i < NK; i++) {
        hw_pack_cstr(&pk, keys[i]);
        msgpack_pack_int(&pk, i);
    }
    hw_msg m;
    hw_err err;
    cr_assert_eq(hw_msg_decode(&m, sb.data, sb.size, NULL, &err), 0, "%s", err.msg);
    for (int i = 0; i < NK; i++) {
        const msgpack_object *v = hw_mp_get(m.root, keys[i]);
        cr_assert_not_null(v, "'%s' not found", keys[i]);
        cr_assert_eq(v->via.u64, (uint64_t)i, "'%s' found the value of another key", keys[i]);
        cr_assert_eq(hw_mp_getn(m.root, keys[i], strlen(keys[i])), v);
    }
    cr_assert_null(hw_mp_get(m.root, "o"));
    cr_assert_null(hw_mp_get(m.root, "sess"));
    cr_assert_null(hw_mp_get(m.root, "ip"));
    cr_assert_null(hw_mp_get(hw_mp_get(m.root, "v"), "v"), "a non-map has no keys");
    hw_msg_free(&m);
    msgpack_sbuffer_destroy(&sb);
}

/* hw_pack_array_head packs its header in one write: the bytes of msgpack-c's calls (map, the
 * dtype's name, every shape entry as msgpack_pack_int64 packs it, the bin's length) for every
 * dtype, at the integer and bin width boundaries, with and without a leading axis */
Test(codec, array_head_bytes_are_msgpacks) {
    static const int64_t vals[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295ll, 4294967296ll, 7};
    static const size_t nbs[] = {0, 255, 256, 65535, 65536, 1u << 20};
    enum { NV = sizeof vals / sizeof *vals, NB = sizeof nbs / sizeof *nbs };
    int checked = 0;
    for (int dt = 0; dt < HW_DT_COUNT; dt++)
        for (int ndim = 0; ndim <= HW_MAX_DIMS; ndim++)
            for (int v = 0; v < NV; v++)
                for (int lead = 0; lead < 3; lead++) {
                    int64_t shape[HW_MAX_DIMS];
                    for (int d = 0; d < ndim; d++) shape[d] = vals[(v + d) % NV];
                    int64_t ld = lead == 0 ? 0 : lead == 1 ? 3 : vals[(v + 3) % NV] + 1;
                    size_t nb = nbs[(v + dt + ndim) % NB];
                    pack_pair pp;
                    pack_pair_init(&pp);
                    msgpack_packer *pb = &pp.pk[1];
                    hw_pack_array_head(&pp.pk[0], (hw_dtype)dt, ndim, shape, ld, nb);
                    msgpack_pack_map(pb, 3);
                    msgpack_pack_str(pb, 5);
                    msgpack_pack_str_body(pb, "dtype", 5);
                    const char *name = hw_dtype_name((hw_dtype)dt);
                    msgpack_pack_str(pb, strlen(name));
                    msgpack_pack_str_body(pb, name, strlen(name));
                    msgpack_pack_str(pb, 5);
                    msgpack_pack_str_body(pb, "shape", 5);
                    msgpack_pack_array(pb, (size_t)ndim + (ld > 0));
                    if (ld > 0) msgpack_pack_int64(pb, ld);
                    for (int d = 0; d < ndim; d++) msgpack_pack_int64(pb, shape[d]);
                    msgpack_pack_str(pb, 4);
                    msgpack_pack_str_body(pb, "data", 4);
                    msgpack_pack_bin(pb, nb);
                    cr_assert(pack_pair_same(&pp), "dtype %d, ndim %d, value %lld, lead %lld, bin %zu: different bytes", dt, ndim, (long long)vals[v],
                              (long long)ld, nb);
                    checked++;
                }
    cr_assert_eq(checked, HW_DT_COUNT * (HW_MAX_DIMS + 1) * NV * 3);
}

/* hw_dtype_from_name compares names as 8-byte words: each name finds its dtype, and prefixes,
 * extensions, the empty name and names of 8 or more bytes find none */
Test(codec, dtype_names_round_trip_and_nothing_else_matches) {
    for (int dt = 0; dt < HW_DT_COUNT; dt++) cr_assert_eq(hw_dtype_from_name(hw_dtype_name((hw_dtype)dt)), dt, "%s", hw_dtype_name((hw_dtype)dt));
    static const char *const bad[] = {"", "int", "int6", "int640", "float", "float32x", "float320", "bool\x01", "uint88", "Int64", "float64 ", "floaty64"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_assert_eq(hw_dtype_from_name(bad[i]), -1, "'%s' matched", bad[i]);
    cr_assert_eq(hw_dtype_from_name(NULL), -1);
}

/* hw_space_check_action's int64 fast path accepts and converts exactly what the general check
 * does (the same action as int32 goes the general way): every value around each element's bounds,
 * for MultiDiscrete, Discrete with a start, MultiBinary; a bad element's error names it */
Test(codec, int64_actions_check_as_other_dtypes_do) {
    int64_t nvec[3] = {3, 1, 5};
    hw_space *sp[3] = {hw_space_multidiscrete(3, nvec), hw_space_discrete(4), hw_space_multibinary(3)};
    sp[1]->start = -2;
    int checked = 0;
    for (int k = 0; k < 3; k++) {
        int64_t n = hw_space_numel(sp[k]);
        for (int64_t v = -4; v <= 6; v++)
            for (int64_t at = 0; at < n; at++) {
                int64_t a64[3];
                int32_t a32[3];
                for (int64_t i = 0; i < n; i++) a64[i] = i == at ? v : (sp[k]->type == HW_SPACE_DISCRETE ? sp[k]->start : 0), a32[i] = (int32_t)a64[i];
                hw_array x64 = {HW_DT_INT64, 1, {n}, a64}, x32 = {HW_DT_INT32, 1, {n}, a32};
                int64_t ib64[3] = {-9, -9, -9}, ib32[3] = {-9, -9, -9};
                double fb[3];
                hw_act o64, o32;
                hw_err e64, e32;
                int r64 = hw_space_check_action(sp[k], &x64, ib64, fb, &o64, &e64), r32 = hw_space_check_action(sp[k], &x32, ib32, fb, &o32, &e32);
                cr_assert_eq(r64, r32, "space %d, value %lld at %lld: int64 %d, int32 %d", k, (long long)v, (long long)at, r64, r32);
                if (r64 == 0) cr_assert(!memcmp(ib64, ib32, sizeof ib64) && o64.n == (size_t)n && o64.i == ib64, "space %d, value %lld: converted differently", k, (long long)v);
                else cr_assert_str_eq(e64.msg, e32.msg);
                checked += r64 == 0;
            }
    }
    cr_assert_gt(checked, 10);
    for (int k = 0; k < 3; k++) hw_space_free(sp[k]);
}

/* a wire array's dtype, matched in place when it is a short name: every dtype decodes, and a NUL
 * inside, a non-string, an unknown or empty name still get hw_mp_str's and the unknown-dtype errors */
Test(codec, wire_array_dtype_in_place_and_its_errors) {
    static const struct {
        const char *dt;
        size_t n;
        bool str;
        const char *want; /* NULL: decodes */
    } cases[] = {
        {"int64", 5, true, NULL}, {"float32", 7, true, NULL}, {"bool", 4, true, NULL}, {"uint8", 5, true, NULL},
        {"int64\0", 6, true, "NUL"}, {"in\0t64", 6, true, "NUL"}, {"complex128", 10, true, "unknown dtype"}, {"", 0, true, "unknown dtype ''"},
        {"int", 3, true, "unknown dtype 'int'"}, {NULL, 0, false, "must be a string"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        msgpack_sbuffer sb = {0}; /* as msgpack_sbuffer_init leaves it */
        msgpack_packer pk = {.data = &sb, .callback = msgpack_sbuffer_write};
        msgpack_pack_map(&pk, 3);
        hw_pack_cstr(&pk, "dtype");
        if (cases[c].str) {
            msgpack_pack_str(&pk, cases[c].n);
            msgpack_pack_str_body(&pk, cases[c].dt, cases[c].n);
        } else
            msgpack_pack_int(&pk, 5);
        hw_pack_cstr(&pk, "shape");
        msgpack_pack_array(&pk, 1);
        msgpack_pack_int(&pk, 1);
        hw_pack_cstr(&pk, "data");
        int d = cases[c].want ? 0 : hw_dtype_from_name(cases[c].dt);
        size_t nb = d >= 0 ? hw_dtype_size((hw_dtype)d) : 1;
        msgpack_pack_bin(&pk, nb);
        msgpack_pack_bin_body(&pk, "\1\0\0\0\0\0\0\0", nb);
        hw_msg m;
        hw_err err;
        cr_assert_eq(hw_msg_decode(&m, sb.data, sb.size, NULL, &err), 0, "case %zu: %s", c, err.msg);
        hw_array a;
        int rc = hw_mp_array(m.root, "action", m.up.zone, 16, &a, &err);
        if (!cases[c].want) cr_assert(rc == 0 && (int)a.dtype == d, "case %zu (%s): %s", c, cases[c].dt, err.msg);
        else cr_assert(rc != 0 && strstr(err.msg, cases[c].want) && strstr(err.msg, "action.dtype"), "case %zu: got '%s'", c, rc ? err.msg : "no error");
        hw_msg_free(&m);
        msgpack_sbuffer_destroy(&sb);
    }
}

/* hw_op_lookup tells ops apart by length and first byte, then compares the one candidate: every
 * op name finds its op, and a name differing in any byte, cut short, extended, empty or an
 * internal op's name finds none */
Test(codec, op_names_round_trip_and_nothing_else_matches) {
    for (int op = 0; op < OP_COUNT; op++) {
        const char *n = hw_op_name_of(op);
        size_t len = strlen(n);
        cr_assert_eq(hw_op_lookup(n, len), op, "%s", n);
        char b[32];
        for (size_t i = 0; i < len; i++) { /* one byte changed */
            memcpy(b, n, len);
            b[i] = b[i] == 'x' ? 'y' : 'x';
            cr_assert_eq(hw_op_lookup(b, len), -1, "'%.*s' matched", (int)len, b);
        }
        cr_assert_eq(hw_op_lookup(n, len - 1), -1, "%s cut short", n);
        memcpy(b, n, len);
        b[len] = 's';
        cr_assert_eq(hw_op_lookup(b, len + 1), -1, "%s extended", n);
    }
    cr_assert_eq(hw_op_lookup("", 0), -1);
    cr_assert_eq(hw_op_lookup("destroy", 7), -1);
    cr_assert_eq(hw_op_lookup("batch_slice", 11), -1);
    cr_assert_eq(hw_op_lookup("stop", 4), -1);
}

/* the scan's short-string shortcut (one or two words ending at the string's end) gives the general
 * check's answer and message: every string of 0..40 bytes holding one sequence (valid or not) at
 * every position, as a key at the message's start (fewer than 8 bytes before its end) and as a value */
Test(codec, scan_strings_of_every_length_and_position) {
    static const char *const seqs[] = {"\xc3\xa9", "\xe2\x82\xac", "\xff", "\xc0\xaf", "\xe2\x82", "\x80", "z"};
    unsigned char s[48], m[64];
    int checked = 0;
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof seqs / sizeof *seqs; k++)
                for (int as_key = 0; as_key < 2; as_key++) {
                    size_t q = strlen(seqs[k]), n = at + q > len ? at + q : len;
                    if (n > 40) continue;
                    memset(s, 'a' + (int)(len % 26), sizeof s);
                    memcpy(s + at, seqs[k], q);
                    size_t h = 0;
                    m[h++] = 0x81;
                    if (!as_key) m[h++] = 0xa1, m[h++] = 'k';
                    size_t off = h + (n < 32 ? 1 : 2); /* where the string's bytes start */
                    if (n < 32) m[h++] = (unsigned char)(0xa0 | n);
                    else m[h++] = 0xd9, m[h++] = (unsigned char)n;
                    memcpy(m + h, s, n), h += n;
                    if (as_key) m[h++] = 0x01;
                    hw_err err;
                    int rc = hw_msg_check((const char *)m, h, NULL, &err);
                    bool ok = hw_utf8_valid((const char *)s, n);
                    cr_assert_eq(rc == 0, ok, "len %zu, sequence %zu at %zu, key %d", n, k, at, as_key);
                    if (!ok) {
                        char want[80];
                        snprintf(want, sizeof want, "string at offset %zu is not valid UTF-8", off);
                        cr_assert_str_eq(err.msg, want);
                    }
                    checked++;
                }
    cr_assert_gt(checked, 10000);
}

/* a wire array's keys in one pass: the first entry of each key counts (as hw_mp_get finds it),
 * whatever the order, with other keys and non-string keys around them */
Test(codec, wire_array_first_key_counts_in_any_order) {
    for (int order = 0; order < 3; order++) {
        msgpack_sbuffer sb = {0};
        msgpack_packer pk = {.data = &sb, .callback = msgpack_sbuffer_write};
        msgpack_pack_map(&pk, 7);
        msgpack_pack_int(&pk, 7); /* a non-string key */
        msgpack_pack_int(&pk, 1);
        for (int k = 0; k < 3; k++) {
            int which = (k + order) % 3;
            if (which == 0) hw_pack_kv_str(&pk, "dtype", "int8");
            else if (which == 1) {
                hw_pack_cstr(&pk, "shape");
                msgpack_pack_array(&pk, 1);
                msgpack_pack_int(&pk, 2);
            } else {
                hw_pack_cstr(&pk, "data");
                msgpack_pack_bin(&pk, 2);
                msgpack_pack_bin_body(&pk, "\x05\x06", 2);
            }
        }
        hw_pack_kv_str(&pk, "dtype", "float64"); /* later duplicates do not count */
        hw_pack_cstr(&pk, "shape");
        msgpack_pack_array(&pk, 0);
        hw_pack_kv_str(&pk, "datum", "x");
        hw_msg m;
        hw_err err;
        cr_assert_eq(hw_msg_decode(&m, sb.data, sb.size, NULL, &err), 0, "%s", err.msg);
        hw_array a;
        cr_assert_eq(hw_mp_array(m.root, "action", m.up.zone, 16, &a, &err), 0, "order %d: %s", order, err.msg);
        cr_assert(a.dtype == HW_DT_INT8 && a.ndim == 1 && a.shape[0] == 2 && ((const char *)a.data)[1] == 6, "order %d", order);
        hw_msg_free(&m);
        msgpack_sbuffer_destroy(&sb);
    }
}

/* the router finds a request's id, v, op, session and action in one pass over its keys: with a key
 * given twice the first counts (as hw_mp_get finds it), in any order, beside unknown and
 * non-string keys; a session op answered inline (no peer looked up) still works */
static size_t raw_req(char *b, const char *const *kv, int n) {
    msgpack_sbuffer sb = {0};
    msgpack_packer pk = {.data = &sb, .callback = msgpack_sbuffer_write};
    msgpack_pack_map(&pk, (size_t)n + 1);
    msgpack_pack_int(&pk, 9); /* a non-string key first */
    msgpack_pack_int(&pk, 9);
    for (int i = 0; i < n; i++) {
        hw_pack_cstr(&pk, kv[2 * i]);
        const char *v = kv[2 * i + 1];
        if (v[0] == '#') msgpack_pack_int(&pk, atoi(v + 1));
        else hw_pack_cstr(&pk, v);
    }
    memcpy(b, sb.data, sb.size);
    size_t len = sb.size;
    msgpack_sbuffer_destroy(&sb);
    return len;
}

Test(codec, request_fields_first_key_counts) {
    srv S;
    srv_start(&S, 1, 60);
    void *c = cli_new(S.ep);
    char b[512];
    static const char *const ping_hello[] = {"op", "ping", "x", "y", "v", "#1", "op", "hello", "id", "#7", "id", "#8"};
    json_t *r = call_raw(c, b, raw_req(b, ping_hello, 6));
    cr_assert(r && !err_code(r) && json_object_get(r, "time") && json_integer_value(json_object_get(r, "id")) == 7, "the first op and id count");
    json_decref(r);
    static const char *const v21[] = {"v", "#2", "v", "#1", "op", "ping"};
    r = call_raw(c, b, raw_req(b, v21, 3));
    cr_assert(r && err_code(r) && !strcmp(err_code(r), "UNSUPPORTED_VERSION"), "the first v counts: %s", r ? err_msg(r) : "no reply");
    json_decref(r);
    static const char *const noop[] = {"v", "#1", "opx", "ping", "o", "ping"};
    r = call_raw(c, b, raw_req(b, noop, 3));
    cr_assert(r && err_code(r) && strstr(err_msg(r), "field 'op' is required"), "no op: %s", r ? err_msg(r) : "no reply");
    json_decref(r);
    r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":3}}");
    cr_assert(r && !err_code(r), "%s", r ? err_msg(r) : "no reply");
    char tok[64];
    snprintf(tok, sizeof tok, "%s", json_string_value(json_object_get(r, "session")));
    json_decref(r);
    for (int k = 0; k < 3; k++) { /* reset, then steps: inline after the first of each op */
        const char *const reset[] = {"session", tok, "op", "reset", "session", "nonsense", "v", "#1"};
        r = call_raw(c, b, raw_req(b, reset, 4));
        cr_assert(r && !err_code(r) && json_object_get(r, "obs"), "reset %d: %s", k, r ? err_msg(r) : "no reply");
        json_decref(r);
    }
    json_decref(call(c, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok));
    cli_close(c);
    cr_assert_eq(srv_stop(&S), 0);
}
