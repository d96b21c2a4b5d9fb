/* cache_key.h - what an evaluation-cache key is (docs/cache.md, "What is a key").
 * Owns: the canonical form of an env config (the same bytes for a config given as JSON - a
 * session's - or as the msgpack of a session-less request, in any key order), the per-batch
 * prefix digest (env id, model version, canonical config) and the per-point key: SHA-256 over
 * the first 16 bytes of the prefix digest, the point's shape and its elements in a compact
 * normalised encoding (integral values as zigzag varints, others as a marker and a float64), so
 * a small design point is one SHA-256 block. Keys are the first HW_CACHE_KEY bytes.
 * Thread use: a hw_keyer is used by one thread (the router's). */
#ifndef HW_CACHE_KEY_H
#define HW_CACHE_KEY_H

#include <jansson.h>
#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"

typedef struct hw_keyer hw_keyer;

hw_keyer *hw_keyer_new(void);
void hw_keyer_free(hw_keyer *k);

/* The prefix digest of a batch: env id, model version, and the config - `cfg` (JSON) when not
 * NULL, else `cfg_mp` (msgpack; NULL or nil = none, like `{}`). Equal configs in any key order
 * give the same digest, whichever form they come in; integers and reals stay distinct.
 * Returns -1 for a config nested deeper than 64 levels (the batch then bypasses the cache). */
int hw_key_prefix(hw_keyer *k, const char *env_id, const char *version, const json_t *cfg, const msgpack_object *cfg_mp,
                  unsigned char out[32]);

/* SHA-256 of a then b (b may be NULL with nb 0). */
void hw_key_digest(hw_keyer *k, const void *a, size_t na, const void *b, size_t nb, unsigned char out[32]);

/* Encoding of one point's elements into buf (hw_key_elem_*: at most HW_KEY_ELEM_MAX bytes each),
 * then its key. */
#define HW_KEY_ELEM_MAX 10
size_t hw_key_elem_i64(unsigned char *buf, int64_t v);
size_t hw_key_elem_f64(unsigned char *buf, double v);
void hw_key_point(hw_keyer *k, const unsigned char prefix[32], int64_t rows, int64_t cols, const unsigned char *elems, size_t len,
                  unsigned char key[HW_CACHE_KEY]);

#endif
