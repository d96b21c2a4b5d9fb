/* cache_key.c - see cache_key.h. */
#include "cache_key.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct hw_keyer {
    EVP_MD *md;      /* fetched once: EVP_DigestInit_ex2 then costs no lookup per point */
    EVP_MD_CTX *ctx;
};

hw_keyer *hw_keyer_new(void) {
    hw_keyer *k = calloc(1, sizeof *k);
    if (!k || !(k->md = EVP_MD_fetch(NULL, "SHA256", NULL)) || !(k->ctx = EVP_MD_CTX_new())) abort();
    return k;
}

void hw_keyer_free(hw_keyer *k) {
    if (!k) return;
    EVP_MD_CTX_free(k->ctx);
    EVP_MD_free(k->md);
    free(k);
}

/* ---------------------------------------------------------------- canonical config */

typedef struct cbuf {
    unsigned char *p;
    size_t len, cap;
} cbuf;

static void put(cbuf *b, const void *x, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, x, n);
    b->len += n;
}

static void put_tag_u32(cbuf *b, char tag, uint32_t n) {
    unsigned char h[5] = {(unsigned char)tag, (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
    put(b, h, 5);
}

static void put_tag_64(cbuf *b, char tag, const void *v8) {
    put(b, &tag, 1);
    put(b, v8, 8);
}

/* map entries: each entry's encoded key and value, sorted by the key's encoding (a string key is
 * 's' + big-endian length + bytes, so strings sort by length, then bytes, in both forms) */
typedef struct ent {
    size_t koff, klen, off, len;
    const unsigned char *base;
} ent;

static int ent_cmp(const void *a, const void *b) {
    const ent *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->base + x->koff, y->base + y->koff, n);
    return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

static void put_sorted(cbuf *out, cbuf *tmp, ent *e, size_t n) {
    for (size_t i = 0; i < n; i++) e[i].base = tmp->p;
    qsort(e, n, sizeof *e, ent_cmp);
    for (size_t i = 0; i < n; i++) put(out, tmp->p + e[i].off, e[i].len);
}

#define MAX_DEPTH 64

static int enc_json(cbuf *b, const json_t *j, int depth) {
    if (depth > MAX_DEPTH) return -1;
    switch (json_typeof(j)) {
    case JSON_NULL: put(b, "n", 1); return 0;
    case JSON_TRUE: put(b, "T", 1); return 0;
    case JSON_FALSE: put(b, "F", 1); return 0;
    case JSON_INTEGER: {
        int64_t v = (int64_t)json_integer_value(j);
        put_tag_64(b, 'i', &v);
        return 0;
    }
    case JSON_REAL: {
        double v = json_real_value(j);
        put_tag_64(b, 'd', &v);
        return 0;
    }
    case JSON_STRING:
        put_tag_u32(b, 's', (uint32_t)json_string_length(j));
        put(b, json_string_value(j), json_string_length(j));
        return 0;
    case JSON_ARRAY:
        put_tag_u32(b, 'a', (uint32_t)json_array_size(j));
        for (size_t i = 0; i < json_array_size(j); i++)
            if (enc_json(b, json_array_get(j, i), depth + 1)) return -1;
        return 0;
    case JSON_OBJECT: {
        size_t n = json_object_size(j), i = 0;
        put_tag_u32(b, 'm', (uint32_t)n);
        ent *e = calloc(n + 1, sizeof *e);
        cbuf tmp = {0};
        const char *key;
        size_t kl;
        json_t *v;
        int rc = 0;
        if (!e) abort();
        json_object_keylen_foreach((json_t *)j, key, kl, v) {
            e[i].off = e[i].koff = tmp.len;
            put_tag_u32(&tmp, 's', (uint32_t)kl);
            put(&tmp, key, kl);
            e[i].klen = tmp.len - e[i].koff;
            if (enc_json(&tmp, v, depth + 1)) rc = -1;
            e[i].len = tmp.len - e[i].off;
            i++;
        }
        if (!rc) put_sorted(b, &tmp, e, i);
        free(tmp.p);
        free(e);
        return rc;
    }
    }
    return -1;
}

static int enc_mp(cbuf *b, const msgpack_object *o, int depth) {
    if (depth > MAX_DEPTH) return -1;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: put(b, "n", 1); return 0;
    case MSGPACK_OBJECT_BOOLEAN: put(b, o->via.boolean ? "T" : "F", 1); return 0;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (o->via.u64 > (uint64_t)INT64_MAX) put_tag_64(b, 'u', &o->via.u64);
        else put_tag_64(b, 'i', &o->via.i64);
        return 0;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: put_tag_64(b, 'i', &o->via.i64); return 0;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: put_tag_64(b, 'd', &o->via.f64); return 0;
    case MSGPACK_OBJECT_STR:
        put_tag_u32(b, 's', o->via.str.size);
        put(b, o->via.str.ptr, o->via.str.size);
        return 0;
    case MSGPACK_OBJECT_BIN:
        put_tag_u32(b, 'b', o->via.bin.size);
        put(b, o->via.bin.ptr, o->via.bin.size);
        return 0;
    case MSGPACK_OBJECT_EXT:
        put_tag_u32(b, 'x', o->via.ext.size);
        put(b, &o->via.ext.type, 1);
        put(b, o->via.ext.ptr, o->via.ext.size);
        return 0;
    case MSGPACK_OBJECT_ARRAY:
        put_tag_u32(b, 'a', o->via.array.size);
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (enc_mp(b, &o->via.array.ptr[i], depth + 1)) return -1;
        return 0;
    case MSGPACK_OBJECT_MAP: {
        uint32_t n = o->via.map.size;
        put_tag_u32(b, 'm', n);
        ent *e = calloc((size_t)n + 1, sizeof *e);
        cbuf tmp = {0};
        int rc = 0;
        if (!e) abort();
        for (uint32_t i = 0; i < n && !rc; i++) {
            e[i].off = e[i].koff = tmp.len;
            rc = enc_mp(&tmp, &o->via.map.ptr[i].key, depth + 1);
            e[i].klen = tmp.len - e[i].koff;
            if (!rc) rc = enc_mp(&tmp, &o->via.map.ptr[i].val, depth + 1);
            e[i].len = tmp.len - e[i].off;
        }
        if (!rc) put_sorted(b, &tmp, e, n);
        free(tmp.p);
        free(e);
        return rc;
    }
    }
    return -1;
}

int hw_key_prefix(hw_keyer *k, const char *env_id, const char *version, const json_t *cfg, const msgpack_object *cfg_mp,
                  unsigned char out[32]) {
    cbuf b = {0};
    static const char tag[] = "hwgym-cache-v2";
    put(&b, tag, sizeof tag);
    put(&b, env_id, strlen(env_id) + 1);
    put(&b, version, strlen(version) + 1);
    int rc = 0;
    if (cfg) rc = enc_json(&b, cfg, 0);
    else if (cfg_mp && cfg_mp->type != MSGPACK_OBJECT_NIL) rc = enc_mp(&b, cfg_mp, 0);
    else put_tag_u32(&b, 'm', 0); /* no config = {} */
    if (rc) { /* deeper than any real config: not cached */
        free(b.p);
        return -1;
    }
    EVP_DigestInit_ex2(k->ctx, k->md, NULL);
    EVP_DigestUpdate(k->ctx, b.p, b.len);
    EVP_DigestFinal_ex(k->ctx, out, NULL);
    free(b.p);
    return 0;
}

void hw_key_digest(hw_keyer *k, const void *a, size_t na, const void *b, size_t nb, unsigned char out[32]) {
    EVP_DigestInit_ex2(k->ctx, k->md, NULL);
    EVP_DigestUpdate(k->ctx, a, na);
    if (nb) EVP_DigestUpdate(k->ctx, b, nb);
    EVP_DigestFinal_ex(k->ctx, out, NULL);
}

/* ---------------------------------------------------------------- points */

static size_t varint(unsigned char *buf, uint64_t x) {
    size_t n = 0;
    while (x >= 0x80) {
        buf[n++] = (unsigned char)(x | 0x80);
        x >>= 7;
    }
    buf[n++] = (unsigned char)x;
    return n;
}

/* an integer: the varint of its zigzag form shifted left once (the first byte is even) */
size_t hw_key_elem_i64(unsigned char *buf, int64_t v) {
    uint64_t zz = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    if (zz >> 62) { /* would not fit after the shift: a float-style record of the exact integer */
        buf[0] = 0x03;
        memcpy(buf + 1, &v, 8);
        return 9;
    }
    return varint(buf, zz << 1);
}

/* an integral value in (-2^53, 2^53) as that integer; anything else as 0x01 + float64 (the first
 * byte is odd, so no integer shares it) */
size_t hw_key_elem_f64(unsigned char *buf, double v) {
    if (v == floor(v) && fabs(v) < 9007199254740992.0) return hw_key_elem_i64(buf, (int64_t)v);
    buf[0] = 0x01;
    memcpy(buf + 1, &v, 8);
    return 9;
}

void hw_key_point(hw_keyer *k, const unsigned char prefix[32], int64_t rows, int64_t cols, const unsigned char *elems, size_t len,
                  unsigned char key[HW_CACHE_KEY]) {
    unsigned char head[16 + 2 * HW_KEY_ELEM_MAX], dig[EVP_MAX_MD_SIZE];
    memcpy(head, prefix, 16);
    size_t h = 16 + varint(head + 16, (uint64_t)rows);
    h += varint(head + h, (uint64_t)cols);
    EVP_DigestInit_ex2(k->ctx, k->md, NULL);
    EVP_DigestUpdate(k->ctx, head, h);
    EVP_DigestUpdate(k->ctx, elems, len);
    EVP_DigestFinal_ex(k->ctx, dig, NULL);
    memcpy(key, dig, HW_CACHE_KEY);
}
