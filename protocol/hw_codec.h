/* hw_codec.h - the hwgym message codec on msgpack-c (PROTOCOL.md is the contract).
 * Owns: the bounded pre-decoder check of raw bytes (sizes, depth, declared lengths), decoding
 * into msgpack objects, typed field access with errors naming the field, wire arrays
 * ({"dtype","shape","data":bin}), JSON <-> msgpack conversion, and reply packing helpers. */
#ifndef HW_CODEC_H
#define HW_CODEC_H

#include <jansson.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hw_array.h"
#include "hw_error.h"

#define HW_PROTOCOL_VERSION 1
#define HW_VERSION_STRING "0.1.0"

typedef struct hw_limits {
    size_t max_msg;     /* whole message bytes */
    int max_depth;      /* container nesting */
    size_t max_elems;   /* entries in one array/map */
    size_t max_total;   /* objects in one message */
    size_t max_str;     /* bytes in one string */
    size_t max_bin;     /* bytes in one bin */
} hw_limits;

extern const hw_limits hw_limits_default;

/* Checks that buf holds exactly one msgpack map within the limits, without allocating.
 * Errors: HW_E_LIMIT (a limit, named) or HW_E_BAD_REQUEST (truncated, trailing bytes, ext...). */
int hw_msg_check(const char *buf, size_t len, const hw_limits *lim, hw_err *err);

/* A decoded message. Strings and bins point into the caller's buffer, which must outlive it. */
typedef struct hw_msg {
    msgpack_unpacked up;
    const msgpack_object *root; /* a map */
} hw_msg;

int hw_msg_decode(hw_msg *m, const char *buf, size_t len, const hw_limits *lim, hw_err *err);
/* The same with a zone to reuse (a server's per-request decode): when *reuse is a zone whose first
 * chunk (chunk_size) holds this message's objects, it is cleared and becomes m's zone (*reuse set to
 * NULL); otherwise m gets a new zone of at least HW_MSG_ZONE_REUSE bytes, fit to be reused in turn.
 * The caller takes m's zone back (m->up.zone, then NULL) instead of letting hw_msg_free free it. */
#define HW_MSG_ZONE_REUSE 4096
int hw_msg_decode_in(hw_msg *m, const char *buf, size_t len, const hw_limits *lim, msgpack_zone **reuse, hw_err *err);
void hw_msg_free(hw_msg *m);

/* ---- field access (map must be a MAP object) ---- */
/* the value of `key` (kl bytes) in map, NULL when absent or map is not a map */
const msgpack_object *hw_mp_getn(const msgpack_object *map, const char *key, size_t kl);
/* inline, so a literal key's length is known where it is asked (no strlen per lookup) */
static inline const msgpack_object *hw_mp_get(const msgpack_object *map, const char *key) { return hw_mp_getn(map, key, strlen(key)); }
bool hw_mp_is_str(const msgpack_object *o, const char *s);
bool hw_utf8_valid(const char *s, size_t n);
/* Copies a UTF-8 string field into out (NUL-terminated); absent -> def (NULL def = required). */
int hw_mp_str(const msgpack_object *map, const char *key, const char *def, char *out, size_t cap, hw_err *err);
int hw_mp_int(const msgpack_object *map, const char *key, bool required, int64_t def, int64_t lo, int64_t hi,
              int64_t *out, hw_err *err);
int hw_mp_bool(const msgpack_object *map, const char *key, bool def, bool *out, hw_err *err);
/* A numeric array: the wire form {"dtype","shape","data"}, a msgpack array of numbers (1-D,
 * decoded as int64 when all are integers, else float64), or a scalar number (shape []).
 * Zero-copy for bin data; otherwise storage comes from `zone`. `what` names it in errors. */
int hw_mp_array(const msgpack_object *o, const char *what, msgpack_zone *zone, size_t max_elems, hw_array *out,
                hw_err *err);

/* ---- JSON ---- */
/* msgpack -> JSON. Wire arrays become flat JSON number lists; bin elsewhere is an error;
 * map keys must be UTF-8 strings. */
json_t *hw_mp_to_json(const msgpack_object *o, hw_err *err);
/* The same with a bound on the values created (each scalar, list, map and wire-array element
 * counts one; default hw_limits_default.max_total): HW_E_LIMIT beyond it. Map keys longer
 * than 255 bytes are refused with HW_E_LIMIT (never cut). */
json_t *hw_mp_to_json_max(const msgpack_object *o, size_t max_values, hw_err *err);
/* JSON -> msgpack (integers stay integers; reals are float64). */
void hw_pack_json(msgpack_packer *pk, const json_t *j);

/* ---- packing ---- */
static inline void hw_pack_bool(msgpack_packer *pk, bool b) { b ? msgpack_pack_true(pk) : msgpack_pack_false(pk); }
/* a string of n bytes; one write under 32 bytes (msgpack's fixstr: the bytes msgpack_pack_str packs) */
void hw_pack_strn(msgpack_packer *pk, const char *s, size_t n);
/* inline, so a literal's length is known where it is packed (no strlen per key) */
static inline void hw_pack_cstr(msgpack_packer *pk, const char *s) { hw_pack_strn(pk, s, strlen(s)); }
/* Scalars written as msgpack's bytes at p, for packers that gather a reply's bytes and write
 * them at once; each returns the count written. hw_put_fixstr: a string under 32 bytes as
 * msgpack_pack_str packs it (header 0xa0 | n, then the bytes). hw_put_uint: what msgpack_pack_uint64 (and
 * msgpack_pack_int64, for v >= 0) packs: a positive fixint, else the smallest of uint 8/16/32/64
 * (at most 9 bytes). hw_put_double: msgpack_pack_double's 0xcb and the IEEE 754 bits big-endian
 * (9 bytes). */
static inline size_t hw_put_fixstr(unsigned char *p, const char *s, size_t n) { /* n < 32: 0xa0 | n, the bytes */
    p[0] = (unsigned char)(0xa0 | n);
    memcpy(p + 1, s, n);
    return 1 + n;
}
/* the header msgpack_pack_str packs for a string of n bytes (fixstr 0xa0 | n, else str 8/16/32) and
 * the one msgpack_pack_array packs for a list of n items (fixarray 0x90 | n, else array 16/32):
 * at most 5 bytes each. Both end in the same 16/32-bit forms, tag16 then tag16 + 1 (str 0xda/0xdb,
 * array 0xdc/0xdd; map 0xde/0xdf below), written by hw_put_len16_32. */
static inline size_t hw_put_len16_32(unsigned char *p, size_t n, unsigned char tag16) {
    if (n < 65536) {
        p[0] = tag16;
        _msgpack_store16(p + 1, (uint16_t)n);
        return 3;
    }
    p[0] = (unsigned char)(tag16 + 1);
    _msgpack_store32(p + 1, (uint32_t)n);
    return 5;
}
static inline size_t hw_put_str_head(unsigned char *p, size_t n) {
    if (n < 32) return p[0] = (unsigned char)(0xa0 | n), 1;
    if (n < 256) return p[0] = 0xd9, p[1] = (unsigned char)n, 2;
    return hw_put_len16_32(p, n, 0xda);
}
static inline size_t hw_put_list_head(unsigned char *p, size_t n) {
    if (n < 16) return p[0] = (unsigned char)(0x90 | n), 1;
    return hw_put_len16_32(p, n, 0xdc);
}
/* msgpack_pack_map's header for n entries: a fixmap 0x80 | n, else map 16/32 (0xde/0xdf) */
static inline size_t hw_put_map_head(unsigned char *p, size_t n) {
    if (n < 16) return p[0] = (unsigned char)(0x80 | n), 1;
    return hw_put_len16_32(p, n, 0xde);
}
static inline size_t hw_put_uint(unsigned char *p, uint64_t v) {
    if (v < 128) return p[0] = (unsigned char)v, 1;
    if (v < 256) return p[0] = 0xcc, p[1] = (unsigned char)v, 2;
    if (v < 65536) {
        p[0] = 0xcd;
        _msgpack_store16(p + 1, (uint16_t)v);
        return 3;
    }
    if (v <= UINT32_MAX) {
        p[0] = 0xce;
        _msgpack_store32(p + 1, (uint32_t)v);
        return 5;
    }
    p[0] = 0xcf;
    _msgpack_store64(p + 1, v);
    return 9;
}
static inline size_t hw_put_double(unsigned char *p, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    p[0] = 0xcb;
    _msgpack_store64(p + 1, bits);
    return 9;
}
void hw_pack_kv_str(msgpack_packer *pk, const char *k, const char *v);
/* {"dtype","shape","data"}; when lead > 0 the shape gets a leading axis of `lead` (the data
 * then holds lead * numel(a) elements). */
void hw_pack_array(msgpack_packer *pk, const hw_array *a, int64_t lead);
/* hw_pack_array's header alone: {"dtype": dt, "shape": [lead?, shape...], "data": bin of nbytes}
 * up to the bin's length; the caller appends the nbytes of data (e.g. converted in place). */
void hw_pack_array_head(msgpack_packer *pk, hw_dtype dt, int ndim, const int64_t *shape, int64_t lead, size_t nbytes);
/* hw_pack_array_head's bytes written at p (at most HW_ARRAY_HEAD_MAX), for a packer that gathers
 * them with others; 0 (nothing written) when they take the packer's general calls (a negative
 * extent, too many dims, more than 4 GiB) */
#define HW_ARRAY_HEAD_MAX 96
size_t hw_put_array_head(unsigned char *p, hw_dtype dt, int ndim, const int64_t *shape, int64_t lead, size_t nbytes);
/* An observation: a wire array for a single-array obs, a map key -> wire array for Dict. */
void hw_pack_obs(msgpack_packer *pk, const hw_obs *obs);
/* A packer's bytes gathered in a buffer and written at once (fewer writes of a reply's small
 * pieces): hw_gather_room makes room for `need` bytes (writing what is gathered when short of it)
 * and returns where they go; the caller then adds what it put to n. hw_gather_flush writes it.
 * The server's replies gather into one; so do envs' infos (envs/common/info_out.h hw_info_gather). */
typedef struct hw_gather {
    msgpack_packer *pk; /* where the gathered bytes are written */
    size_t n;
    unsigned char b[2048];
} hw_gather;
static inline void hw_gather_flush(hw_gather *g) {
    if (g->n) g->pk->callback(g->pk->data, (const char *)g->b, g->n);
    g->n = 0;
}
static inline unsigned char *hw_gather_room(hw_gather *g, size_t need) {
    if (sizeof g->b - g->n < need) hw_gather_flush(g);
    return g->b + g->n;
}
/* hw_pack_obs's bytes, gathered: keys, map and array headers, and arrays' data up to 256 bytes */
void hw_gather_obs(hw_gather *g, const hw_obs *obs);
/* {"id": <copied>, "ok": false, "error": {"code","message"}} */
void hw_pack_error(msgpack_packer *pk, const msgpack_object *id, hw_code code, const char *msg);

#endif
