/* Packing shortcuts of issue 29. envs/common/info_out.h's packed writers that gather bytes: a list
 * of bytes, a row of ints, a key with its scalar value, lists under constant keys, string items,
 * the map header, and a whole info gathered on the stack
 * (hw_info_gatherer) pack exactly what hw_pack_json packs of the JSON the same calls build, for
 * values on both sides of every msgpack integer width, keys and strings of 31 and 32 bytes, and
 * infos larger than the gathering buffer. server/reply.h's reply_begin_sized: a reply begun with room reserved packs the
 * same bytes as one begun without, in one allocation when the hint covers it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/info_out.h"
#include "harness.h"
#include "hw_codec.h"
#include "reply.h"

/* the same info written through a JSON sink and through a packer: the packed bytes must be those
 * of hw_pack_json(JSON) */
static void same_bytes(void (*write)(hw_info_out *, const void *), size_t nkeys, const void *arg) {
    json_t *j = json_object();
    hw_info_out o = hw_info_json(j);
    write(&o, arg);
    cr_assert_eq(json_object_size(j), nkeys);
    pack_pair pp;
    pack_pair_init(&pp);
    hw_info_out p = hw_info_packer(&pp.pk[0], nkeys);
    write(&p, arg);
    hw_pack_json(&pp.pk[1], j);
    size_t got = pp.sb[0].size, want = pp.sb[1].size;
    cr_assert(pack_pair_same(&pp), "%zu packed bytes against %zu, or different bytes", got, want);
    /* gathered on the stack and written at the end: the same bytes */
    pack_pair_init(&pp);
    hw_info_gather g;
    hw_info_out q = hw_info_gatherer(&g, &pp.pk[0], nkeys);
    write(&q, arg);
    hw_info_gather_flush(&g);
    hw_pack_json(&pp.pk[1], j);
    got = pp.sb[0].size, want = pp.sb[1].size;
    cr_assert(pack_pair_same(&pp), "%zu gathered bytes against %zu, or different bytes", got, want);
    json_decref(j);
}

static const int VALS[] = {0, 1, 31, 32, 127, 128, 200, 255, 256, 1000, 65535, 65536, 1 << 20, 2147483647,
                           -1, -31, -32, -33, -127, -128, -129, -32768, -32769, -2147483647 - 1};
enum { NV = sizeof VALS / sizeof VALS[0] };

static void write_rows(hw_info_out *o, const void *arg) {
    (void)arg;
    hw_info_out rows = hw_info_list(o, "rows", 4);
    hw_info_out r0 = hw_info_item_list(&rows, NV);
    hw_info_item_ints(&r0, VALS, NV);
    hw_info_out r1 = hw_info_item_list(&rows, 0);
    hw_info_item_ints(&r1, VALS, 0);
    int many[100];
    for (int i = 0; i < 100; i++) many[i] = (i * 977) % 70000; /* more than one gathered write */
    hw_info_out r2 = hw_info_item_list(&rows, 100);
    hw_info_item_ints(&r2, many, 100);
    hw_info_out r3 = hw_info_item_list(&rows, 1);
    hw_info_item_ints(&r3, VALS + NV - 1, 1);
}

static void write_bytes(hw_info_out *o, const void *arg) {
    (void)arg;
    uint8_t small[64], big[5] = {0, 127, 128, 255, 3};
    for (int i = 0; i < 64; i++) small[i] = (uint8_t)(i % 8);
    hw_info_list_u8(o, "small", small, 64);
    hw_info_list_u8(o, "big", big, 5);
    hw_info_list_u8(o, "none", small, 0);
    hw_info_str(o, "a_key_of_exactly_31_bytes_long_", "a value of exactly 32 bytes long");
    hw_info_str(o, "a_key_of_exactly_32_bytes_long__", "");
    hw_info_out l = hw_info_list(o, "names", 2);
    hw_info_item_str(&l, "x");
    hw_info_item_str(&l, "a value of exactly 31 bytes lon");
}

/* a key of `len` bytes (2, 31 or 32) ending in the two digits of i */
static void key_of(char *key, char c, int len, int i) {
    memset(key, c, (size_t)len - 2);
    snprintf(key + len - 2, 3, "%02d", i);
}

/* scalars with keys of 2, 31 and 32 bytes (one write, or key and value apart): every integer
 * width, reals, booleans */
static void write_scalars(hw_info_out *o, const void *arg) {
    (void)arg;
    static const int lens[3] = {2, 31, 32};
    static const int64_t big[] = {INT64_C(4294967295), INT64_C(4294967296), INT64_MAX, INT64_MIN, -INT64_C(2147483649)};
    static const double reals[3] = {-0.0, 1e300, 3.25};
    char key[40];
    hw_info_out ints = hw_info_map(o, "ints", 3 * (NV + 5));
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < NV + 5; i++) {
            key_of(key, 'i', lens[k], i);
            hw_info_int(&ints, key, i < NV ? VALS[i] : big[i - NV]);
        }
    for (int k = 0; k < 3; k++) {
        key_of(key, 'r', lens[k], k);
        hw_info_real(o, key, reals[k]);
        key_of(key, 'b', lens[k], 10 + k);
        hw_info_bool(o, key, k == 1);
    }
}

Test(info_out, int_rows_pack_what_the_json_path_packs) { same_bytes(write_rows, 1, NULL); }

Test(info_out, scalars_pack_what_the_json_path_packs) { same_bytes(write_scalars, 7, NULL); }

/* more than a gathering buffer holds: many keys (it fills and is written mid-way) and one list
 * larger than the buffer (written straight through, in order) */
static void write_large(hw_info_out *o, const void *arg) {
    (void)arg;
    static uint8_t big[5000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i % 100);
    hw_info_out m = hw_info_map(o, "many", 400);
    for (int i = 0; i < 400; i++) {
        char key[16];
        snprintf(key, sizeof key, "key%d", i);
        hw_info_real(&m, key, i * 0.5);
    }
    hw_info_list_u8(o, "big", big, sizeof big);
    hw_info_str(o, "after", "the end");
}

Test(info_out, larger_than_the_gathering_buffer_packs_the_same) { same_bytes(write_large, 3, NULL); }

/* the constant-key writers (HW_KEY): keys of 1, 31 and 32 bytes, strings across the fixstr, str8
 * and str16 headers (and hw_info_strn_k's 1024-byte limit), every integer width, a nested map */
static void write_k(hw_info_out *o, const void *arg) {
    (void)arg;
    static char s31[32], s32[33], s255[256], s256[257], s1023[1024], s1024[1025];
    memset(s31, 'a', 31), memset(s32, 'b', 32), memset(s255, 'c', 255), memset(s256, 'd', 256);
    memset(s1023, 'e', 1023), memset(s1024, 'f', 1024);
    hw_info_str_k(o, HW_KEY("s"), "");
    hw_info_str_k(o, HW_KEY("a_key_of_exactly_31_bytes_long_"), s31);
    hw_info_str_k(o, HW_KEY("a_key_of_exactly_32_bytes_long__"), s32);
    hw_info_str_k(o, HW_KEY("s255"), s255);
    hw_info_str_k(o, HW_KEY("s256"), s256);
    hw_info_strn_k(o, HW_KEY("s1023"), s1023, 1023);
    hw_info_strn_k(o, HW_KEY("s1024"), s1024, 1024);
    hw_info_strn_k(o, HW_KEY("n31"), s31, 31);
    hw_info_bool_k(o, HW_KEY("t"), true);
    hw_info_bool_k(o, HW_KEY("b_key_of_exactly_32_bytes_long__"), false);
    hw_info_real_k(o, HW_KEY("r"), -1.5e-300);
    hw_info_real_k(o, HW_KEY("r_key_of_exactly_32_bytes_long__"), 2.0);
    hw_info_out m = hw_info_map_k(o, HW_KEY("ints"), NV + 1);
    for (int i = 0; i < NV; i++) {
        char key[4] = {'i', (char)('0' + i / 10), (char)('0' + i % 10), 0};
        hw_info_int_k(&m, key, 3, VALS[i]);
    }
    hw_info_int_k(&m, HW_KEY("i_key_of_exactly_32_bytes_long__"), INT64_MIN);
    hw_info_out m2 = hw_info_map_k(o, HW_KEY("m_key_of_exactly_32_bytes_long__"), 1);
    hw_info_int_k(&m2, HW_KEY("big"), INT64_C(1) << 40);
}

Test(info_out, constant_key_writers_pack_what_the_json_path_packs) { same_bytes(write_k, 14, NULL); }

Test(info_out, byte_lists_and_strings_pack_what_the_json_path_packs) { same_bytes(write_bytes, 6, NULL); }

/* the constant-key lists (hw_info_list_k, hw_info_list_u8_k) and string items gathered in place
 * (hw_info_item_str): lists of 0, 15 and 16 items, byte lists of 0, 15, 16, 55, 1024 and 1025
 * bytes and with a byte of 128 or more, keys of 31 and 32 bytes */
static void write_lists_k(hw_info_out *o, const void *arg) {
    (void)arg;
    static uint8_t u[3000];
    for (int i = 0; i < 3000; i++) u[i] = (uint8_t)(i % 128);
    uint8_t hi[20] = {1, 2, 3, 4, 5, 6, 200}, hi2[19] = {[18] = 128}; /* in an 8-byte word's top half; in the tail */
    hw_info_out l0 = hw_info_list_k(o, HW_KEY("l0"), 0);
    (void)l0;
    hw_info_out l15 = hw_info_list_k(o, HW_KEY("l15"), 15);
    for (int i = 0; i < 15; i++) hw_info_item_int(&l15, i * 20 - 40);
    hw_info_out l16 = hw_info_list_k(o, HW_KEY("l16"), 16);
    for (int i = 0; i < 16; i++) hw_info_item_str(&l16, i % 2 ? "x" : "yy");
    hw_info_out l32 = hw_info_list_k(o, HW_KEY("l_key_of_exactly_32_bytes_long__"), 3);
    hw_info_item_int(&l32, 1);
    hw_info_item_str(&l32, "an item of exactly 31 bytes lon");
    hw_info_item_str(&l32, "an item of exactly 32 bytes long");
    static const size_t ns[6] = {0, 15, 16, 55, 1024, 1025};
    for (int k = 0; k < 6; k++) {
        char key[8];
        snprintf(key, sizeof key, "u%zu", ns[k]);
        hw_info_list_u8_k(o, key, strlen(key), u, ns[k]);
    }
    hw_info_list_u8_k(o, HW_KEY("hi"), hi, sizeof hi);
    hw_info_list_u8_k(o, HW_KEY("hi2"), hi2, sizeof hi2);
    hw_info_list_u8_k(o, HW_KEY("u_key_of_exactly_31_bytes_long_"), u, 40);
    hw_info_list_u8_k(o, HW_KEY("u_key_of_exactly_32_bytes_long__"), u, 40);
}

Test(info_out, constant_key_lists_pack_what_the_json_path_packs) { same_bytes(write_lists_k, 14, NULL); }

static void pack_big_reply(task *t, size_t hint, bool fits) {
    msgpack_packer pk = reply_begin_sized(t, 1, hint);
    size_t alloc0 = t->reply.alloc;
    hw_pack_cstr(&pk, "blob");
    char blob[20000];
    for (size_t i = 0; i < sizeof blob; i++) blob[i] = (char)(i * 7);
    msgpack_pack_bin(&pk, sizeof blob);
    msgpack_pack_bin_body(&pk, blob, sizeof blob);
    if (fits) cr_assert_eq(t->reply.alloc, alloc0, "a reply within its hint was reallocated");
}

Test(info_out, sized_reply_packs_the_same_bytes) {
    task a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    msgpack_sbuffer_init(&a.reply);
    msgpack_sbuffer_init(&b.reply);
    msgpack_sbuffer_init(&c.reply);
    pack_big_reply(&a, 0, false);
    pack_big_reply(&b, 22000, true);
    pack_big_reply(&c, (size_t)1 << 40, false); /* out of reason: ignored */
    cr_assert_eq(b.reply.alloc, 22000);
    cr_assert_eq(a.reply.size, b.reply.size);
    cr_assert_eq(memcmp(a.reply.data, b.reply.data, a.reply.size), 0);
    cr_assert_eq(c.reply.size, a.reply.size);
    cr_assert_eq(memcmp(a.reply.data, c.reply.data, a.reply.size), 0);
    msgpack_sbuffer_destroy(&a.reply);
    msgpack_sbuffer_destroy(&b.reply);
    msgpack_sbuffer_destroy(&c.reply);
}

/* a gathering sink's map header (written in place by hw_info_gatherer) is msgpack_pack_map's, for
 * the fixmap, map16 and map32 sizes on both sides of each limit */
Test(info_out, gathered_map_headers_are_msgpacks) {
    static const size_t ns[] = {0, 1, 15, 16, 255, 256, 65535, 65536, 70000, 0xffffffffu};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        pack_pair pp;
        pack_pair_init(&pp);
        hw_info_gather g;
        hw_info_out o = hw_info_gatherer(&g, &pp.pk[0], ns[i]);
        cr_assert_eq(hw_info_gathering(&o), &g);
        hw_info_gather_flush(&g);
        msgpack_pack_map(&pp.pk[1], ns[i]);
        cr_assert(pack_pair_same(&pp), "%zu keys: the header differs", ns[i]);
    }
}
