/* info_out.h - one writer for an env's info object, two destinations (issue 29).
 * Owns: hw_info_out, a sink an env writes its info keys into, either a JSON object (the env API's
 * `info` argument, env.h) or a msgpack packer (the optional info_pack op, which the server calls
 * to pack a step's info straight into the reply, without a JSON tree). An env that writes its keys
 * through this sink once gets both paths from the same code, so they cannot drift apart: packed,
 * the bytes are exactly what hw_pack_json (protocol/hw_codec.h) packs of the JSON object, keys in
 * the same order, integers as msgpack_pack_int64, reals as msgpack_pack_double.
 * The packed form needs each map's key count before its keys (msgpack map header): the caller
 * counts them; tests/c/server/test_info_pack.c fails when a count or a value differs.
 * Also owned here, for the step path: a gathering sink (hw_info_gatherer: the info packed on the
 * caller's stack and written to the reply at once; every sink made from it carries it in .g, so
 * the writers find it with one load) and constant-key writers (hw_info_*_k with HW_KEY: scalars,
 * strings of known length, lists and byte lists) that append straight into it;
 * tests/c/server/test_info_out.c checks their bytes. */
#ifndef HW_INFO_OUT_H
#define HW_INFO_OUT_H

#include <jansson.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hw_codec.h"

struct hw_info_gather;

typedef struct hw_info_out {
    json_t *obj;              /* JSON destination (borrowed), or NULL */
    msgpack_packer *pk;       /* packed destination, or NULL */
    struct hw_info_gather *g; /* the gathering buffer pk packs into, or NULL (hw_info_gathering) */
} hw_info_out;

/* A sink into the JSON object `obj` (NULL: a sink that drops every key). */
static inline hw_info_out hw_info_json(json_t *obj) { return (hw_info_out){obj, NULL, NULL}; }
/* A sink into `pk`; packs the header of a map of `nkeys` keys, which must then all be written. */
hw_info_out hw_info_packer(msgpack_packer *pk, size_t nkeys);

/* Gathering: the info packed into a buffer on the caller's stack (g.pk packs into it) and written
 * to the reply in one write by hw_info_gather_flush, which the caller calls once it has written
 * every key (or whenever the buffer is full). The reply's sbuffer takes a call and a capacity check
 * per write, and an info is tens of writes. The bytes are the same as packing into the reply
 * directly. The buffer is protocol/hw_codec.h's hw_gather (out.pk: the reply), as the server's. */
typedef struct hw_info_gather {
    msgpack_packer pk; /* packs into out (hw_info_gather_write) */
    hw_gather out;
} hw_info_gather;
/* msgpack_pack_int64's bytes of 0 <= v < 2^32 written to b (a positive fixint, else the smallest
 * of uint8, uint16, uint32: tag, then big-endian); 0 for any other value (msgpack packs those). */
static inline size_t hw_info_small_uint(int64_t v, unsigned char *b) {
    return v < 0 || v > UINT32_MAX ? 0 : hw_put_uint(b, (uint64_t)v);
}

/* A sink gathering into g for dst; packs the header of a map of `nkeys` keys. */
hw_info_out hw_info_gatherer(hw_info_gather *g, msgpack_packer *dst, size_t nkeys);
static inline void hw_info_gather_flush(hw_info_gather *g) { hw_gather_flush(&g->out); }
/* room for n <= sizeof g->out.b more bytes (flushed first when there is not); the caller then adds
 * n to g->out.n */
static inline char *hw_info_gather_room(hw_info_gather *g, size_t n) { return (char *)hw_gather_room(&g->out, n); }
static inline bool hw_info_on(const hw_info_out *o) { return o->obj || o->pk; }

/* the gathering packer's callback (info_out.c) */
int hw_info_gather_write(void *data, const char *buf, size_t len);
/* the gathering buffer o packs into (its maps and lists too), or NULL: set when the sink is made
 * (one load where a constant-key writer asks) */
static inline hw_info_gather *hw_info_gathering(const hw_info_out *o) { return o->g; }

void hw_info_int(hw_info_out *o, const char *key, int64_t v);
void hw_info_real(hw_info_out *o, const char *key, double v);
void hw_info_bool(hw_info_out *o, const char *key, bool v);
/* `s` must be valid UTF-8 (the JSON path checks it; an env's own names and texts are ASCII) */
void hw_info_str(hw_info_out *o, const char *key, const char *s);
/* A nested object of `nkeys` keys under `key`; write its keys into the returned sink. */
hw_info_out hw_info_map(hw_info_out *o, const char *key, size_t nkeys);
/* A list of `n` items under `key`; append exactly n items to the returned sink. */
hw_info_out hw_info_list(hw_info_out *o, const char *key, size_t n);
void hw_info_item_int(hw_info_out *list, int64_t v);
/* A list of `n` integers under `key`, each the byte v[i] (a mask, memory indices). Packed, a value
 * below 128 is one byte (msgpack's positive fixint, what msgpack_pack_int64 packs of it), so a list
 * of such values is its header and the bytes themselves, written at once. */
void hw_info_list_u8(hw_info_out *o, const char *key, const uint8_t *v, size_t n);
/* n integers appended to `list` (a row of a table), packed in one write where they are small. */
void hw_info_item_ints(hw_info_out *list, const int *v, size_t n);

/* The same writers for a key whose length is a constant, written HW_KEY("name"): inlined where
 * called, so into a gathering sink a key is a few moves and its value a few more; any other sink
 * (or a key of 32 bytes or more) goes through the writers above. The bytes are theirs. */
#define HW_KEY(k) k, sizeof k - 1
#define HW_INFO_INLINE static inline __attribute__((always_inline))

/* a fixstr key into g; returns where its value goes, with room for vn more bytes */
HW_INFO_INLINE unsigned char *hw_info_gather_key(hw_info_gather *g, const char *key, size_t kn, size_t vn) {
    unsigned char *q = (unsigned char *)hw_info_gather_room(g, 1 + kn + vn);
    size_t h = hw_put_fixstr(q, key, kn);
    g->out.n += h;
    return q + h;
}

HW_INFO_INLINE void hw_info_int_k(hw_info_out *o, const char *key, size_t kn, int64_t v) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32) {
        hw_info_int(o, key, v);
        return;
    }
    size_t n = hw_info_small_uint(v, hw_info_gather_key(g, key, kn, 5));
    if (n) g->out.n += n;
    else msgpack_pack_int64(&g->pk, v);
}

HW_INFO_INLINE void hw_info_real_k(hw_info_out *o, const char *key, size_t kn, double v) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32) {
        hw_info_real(o, key, v);
        return;
    }
    g->out.n += hw_put_double(hw_info_gather_key(g, key, kn, 9), v);
}

HW_INFO_INLINE void hw_info_bool_k(hw_info_out *o, const char *key, size_t kn, bool v) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32) {
        hw_info_bool(o, key, v);
        return;
    }
    *hw_info_gather_key(g, key, kn, 1) = v ? 0xc3 : 0xc2;
    g->out.n += 1;
}

/* hw_info_str_k of a string whose length n the caller knows (s[n] is its terminating 0): into a
 * gathering sink, a string below 1024 bytes is its header (fixstr, str8 or str16, as
 * msgpack_pack_str packs it) and its bytes, without strlen */
HW_INFO_INLINE void hw_info_strn_k(hw_info_out *o, const char *key, size_t kn, const char *s, size_t n) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32 || n >= 1024) {
        hw_info_str(o, key, s);
        return;
    }
    unsigned char *q = hw_info_gather_key(g, key, kn, 3 + n);
    size_t h = hw_put_str_head(q, n);
    memcpy(q + h, s, n);
    g->out.n += h + n;
}

HW_INFO_INLINE void hw_info_str_k(hw_info_out *o, const char *key, size_t kn, const char *s) {
    hw_info_strn_k(o, key, kn, s, hw_info_gathering(o) ? strlen(s) : 0);
}

HW_INFO_INLINE hw_info_out hw_info_map_k(hw_info_out *o, const char *key, size_t kn, size_t nkeys) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32) return hw_info_map(o, key, nkeys);
    hw_info_gather_key(g, key, kn, 0);
    msgpack_pack_map(&g->pk, nkeys);
    return *o;
}
/* A list of `n` items under a constant key (hw_info_list's bytes); append n items to the result. */
HW_INFO_INLINE hw_info_out hw_info_list_k(hw_info_out *o, const char *key, size_t kn, size_t n) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32 || n >= 16) return hw_info_list(o, key, n);
    g->out.n += hw_put_list_head(hw_info_gather_key(g, key, kn, 1), n); /* a fixarray */
    return *o;
}

/* every one of the n bytes is below 128 (a positive fixint each, packed) */
bool hw_info_u8_small(const uint8_t *v, size_t n);

/* hw_info_list_u8 under a constant key: into a gathering sink, a list of up to 1024 bytes below
 * 128 is the key, the list's header and the bytes, in one move each */
HW_INFO_INLINE void hw_info_list_u8_k(hw_info_out *o, const char *key, size_t kn, const uint8_t *v, size_t n) {
    hw_info_gather *g = hw_info_gathering(o);
    if (!g || kn >= 32 || n > 1024 || !hw_info_u8_small(v, n)) {
        hw_info_list_u8(o, key, v, n);
        return;
    }
    unsigned char *q = hw_info_gather_key(g, key, kn, 3 + n);
    size_t h = hw_put_list_head(q, n); /* a fixarray, else array16 */
    memcpy(q + h, v, n);
    g->out.n += h + n;
}

/* A list of `n` items as the next item of `list` (a table's row); append n items to the result. */
hw_info_out hw_info_item_list(hw_info_out *list, size_t n);
void hw_info_item_str(hw_info_out *list, const char *s);

#endif
