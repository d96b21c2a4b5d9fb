/* info_out.h - one writer for an env's info object, two destinations (issue 29).
 * Owns: hw_info_out, a sink an env writes its info keys into, either a JSON object (the env API's
 * `info` argument, env.h) or a msgpack packer (the optional info_pack op, which the server calls
 * to pack a step's info straight into the reply, without a JSON tree). An env that writes its keys
 * through this sink once gets both paths from the same code, so they cannot drift apart: packed,
 * the bytes are exactly what hw_pack_json (protocol/hw_codec.h) packs of the JSON object, keys in
 * the same order, integers as msgpack_pack_int64, reals as msgpack_pack_double.
 * The packed form needs each map's key count before its keys (msgpack map header): the caller
 * counts them; tests/c/server/test_info_pack.c fails when a count or a value differs. */
#ifndef HW_INFO_OUT_H
#define HW_INFO_OUT_H

#include <jansson.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct hw_info_out {
    json_t *obj;        /* JSON destination (borrowed), or NULL */
    msgpack_packer *pk; /* packed destination, or NULL */
} hw_info_out;

/* A sink into the JSON object `obj` (NULL: a sink that drops every key). */
static inline hw_info_out hw_info_json(json_t *obj) { return (hw_info_out){obj, NULL}; }
/* A sink into `pk`; packs the header of a map of `nkeys` keys, which must then all be written. */
hw_info_out hw_info_packer(msgpack_packer *pk, size_t nkeys);
static inline bool hw_info_on(const hw_info_out *o) { return o->obj || o->pk; }

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
/* A list of `n` items as the next item of `list` (a table's row); append n items to the result. */
hw_info_out hw_info_item_list(hw_info_out *list, size_t n);
void hw_info_item_str(hw_info_out *list, const char *s);

#endif
