/* info_out.c - hw_info_out's writers (info_out.h): each writes one key to the JSON object or
 * packs it, the packed bytes being those hw_pack_json packs of the JSON value (a key and a
 * scalar value in one write to the packer). */
#include "common/info_out.h"

#include <string.h>

#include "hw_codec.h"

/* a packing sink into pk, gathering when pk is a gathering buffer's packer */
static hw_info_out packing(msgpack_packer *pk) {
    return (hw_info_out){NULL, pk, pk->callback == hw_info_gather_write ? (hw_info_gather *)pk->data : NULL};
}

hw_info_out hw_info_packer(msgpack_packer *pk, size_t nkeys) {
    msgpack_pack_map(pk, nkeys);
    return packing(pk);
}

int hw_info_gather_write(void *data, const char *buf, size_t len) {
    hw_info_gather *g = data;
    if (len > sizeof g->out.b) { /* larger than the buffer: straight through, in order */
        hw_info_gather_flush(g);
        return g->out.pk->callback(g->out.pk->data, buf, len);
    }
    memcpy(hw_info_gather_room(g, len), buf, len);
    g->out.n += len;
    return 0;
}

hw_info_out hw_info_gatherer(hw_info_gather *g, msgpack_packer *dst, size_t nkeys) {
    g->out.pk = dst;
    msgpack_packer_init(&g->pk, g, hw_info_gather_write);
    g->out.n = hw_put_map_head(g->out.b, nkeys); /* msgpack_pack_map's header, in place */
    return (hw_info_out){NULL, &g->pk, g};
}

/* Where the next n <= 48 bytes go: straight into a gathering sink's buffer, else into `local`
 * (of n bytes at least);
 * out_done then counts them, or writes local to the packer. */
static char *out_room(msgpack_packer *pk, size_t n, char *local) {
    return pk->callback == hw_info_gather_write ? hw_info_gather_room(pk->data, n) : local;
}

static void out_done(msgpack_packer *pk, const char *p, size_t n) {
    if (pk->callback == hw_info_gather_write) ((hw_info_gather *)pk->data)->out.n += n;
    else pk->callback(pk->data, p, n);
}

/* packs `key` when the sink packs (true), else the caller sets the JSON value */
static bool packed_key(hw_info_out *o, const char *key) {
    if (o->pk) hw_pack_cstr(o->pk, key);
    return o->pk != NULL;
}

/* A key under 32 bytes and its value's bytes (vn <= 9) in one write: the key's fixstr, then the
 * value as msgpack packs it. false for a longer key (the caller packs the two apart). */
static bool pack_kv(msgpack_packer *pk, const char *key, const unsigned char *v, size_t vn) {
    size_t n = strlen(key);
    if (n >= 32) return false;
    char local[1 + 31 + 9], *b = out_room(pk, 1 + n + vn, local);
    hw_put_fixstr((unsigned char *)b, key, n);
    memcpy(b + 1 + n, v, vn);
    out_done(pk, b, 1 + n + vn);
    return true;
}

void hw_info_int(hw_info_out *o, const char *key, int64_t v) {
    unsigned char b[5];
    size_t n = o->pk ? hw_info_small_uint(v, b) : 0;
    if (n && pack_kv(o->pk, key, b, n)) return;
    if (packed_key(o, key)) msgpack_pack_int64(o->pk, v);
    else if (o->obj) json_object_set_new(o->obj, key, json_integer((json_int_t)v));
}

void hw_info_real(hw_info_out *o, const char *key, double v) {
    if (o->pk) {
        unsigned char b[9];
        if (pack_kv(o->pk, key, b, hw_put_double(b, v))) return;
    }
    if (packed_key(o, key)) msgpack_pack_double(o->pk, v);
    else if (o->obj) json_object_set_new(o->obj, key, json_real(v));
}

void hw_info_bool(hw_info_out *o, const char *key, bool v) {
    unsigned char b = v ? 0xc3 : 0xc2; /* msgpack's true, false */
    if (o->pk && pack_kv(o->pk, key, &b, 1)) return;
    if (packed_key(o, key)) v ? msgpack_pack_true(o->pk) : msgpack_pack_false(o->pk);
    else if (o->obj) json_object_set_new(o->obj, key, json_boolean(v));
}

void hw_info_str(hw_info_out *o, const char *key, const char *s) {
    if (packed_key(o, key)) hw_pack_cstr(o->pk, s);
    else if (o->obj) json_object_set_new(o->obj, key, json_string(s));
}

/* the JSON path of a nested value: `child` (new) set under `key`, a sink into it */
static hw_info_out json_child(hw_info_out *o, const char *key, json_t *child) {
    if (!o->obj) {
        json_decref(child);
        return hw_info_json(NULL);
    }
    json_object_set_new(o->obj, key, child);
    return hw_info_json(child);
}

hw_info_out hw_info_map(hw_info_out *o, const char *key, size_t nkeys) {
    if (packed_key(o, key)) return hw_info_packer(o->pk, nkeys);
    return json_child(o, key, o->obj ? json_object() : NULL);
}

/* msgpack_pack_array's header; below 16 items a fixarray (0x90 | n), one byte, written with the
 * out_room/out_done pair (straight into a gathering sink) */
static void pack_array_head(msgpack_packer *pk, size_t n) {
    if (n >= 16) {
        msgpack_pack_array(pk, n);
        return;
    }
    char local[1], *b = out_room(pk, 1, local);
    out_done(pk, b, hw_put_list_head((unsigned char *)b, n));
}

hw_info_out hw_info_list(hw_info_out *o, const char *key, size_t n) {
    if (!packed_key(o, key)) return json_child(o, key, o->obj ? json_array() : NULL);
    pack_array_head(o->pk, n);
    return packing(o->pk);
}

void hw_info_item_int(hw_info_out *l, int64_t v) {
    if (l->pk) msgpack_pack_int64(l->pk, v);
    else if (l->obj) json_array_append_new(l->obj, json_integer((json_int_t)v));
}

bool hw_info_u8_small(const uint8_t *v, size_t n) {
    uint64_t any = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* eight bytes a step: their high bits together */
        memcpy(&w, v + i, 8);
        any |= w;
    }
    for (; i < n; i++) any |= v[i];
    return !(any & 0x8080808080808080ULL);
}

void hw_info_list_u8(hw_info_out *o, const char *key, const uint8_t *v, size_t n) {
    hw_info_out l = hw_info_list(o, key, n);
    if (l.pk && hw_info_u8_small(v, n)) {
        if (n) l.pk->callback(l.pk->data, (const char *)v, n);
        return;
    }
    for (size_t i = 0; i < n; i++) hw_info_item_int(&l, v[i]);
}

void hw_info_item_ints(hw_info_out *l, const int *v, size_t n) {
    if (!l->pk) {
        for (size_t i = 0; i < n; i++) hw_info_item_int(l, v[i]);
        return;
    }
    /* msgpack_pack_int64's bytes for 0..65535 (fixint, uint8, uint16 big-endian), gathered and
     * written at once (straight into a gathering sink); any other value flushes and goes through
     * msgpack_pack_int64 itself */
    enum { CHUNK = 3 * 16 };
    char local[CHUNK];
    unsigned char *b = (unsigned char *)out_room(l->pk, CHUNK, local);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int x = v[i];
        if (k + 3 > CHUNK || x < 0 || x > 65535) {
            if (k) out_done(l->pk, (const char *)b, k);
            k = 0;
            if (x < 0 || x > 65535) msgpack_pack_int64(l->pk, x);
            b = (unsigned char *)out_room(l->pk, CHUNK, local);
            if (x < 0 || x > 65535) continue;
        }
        k += hw_put_uint(b + k, (uint64_t)x);
    }
    if (k) out_done(l->pk, (const char *)b, k);
}

hw_info_out hw_info_item_list(hw_info_out *l, size_t n) {
    if (l->pk) {
        pack_array_head(l->pk, n);
        return *l;
    }
    if (!l->obj) return hw_info_json(NULL);
    json_t *a = json_array();
    json_array_append_new(l->obj, a);
    return hw_info_json(a);
}

void hw_info_item_str(hw_info_out *l, const char *s) {
    size_t n = l->g ? strlen(s) : 32;
    if (n < 32) { /* a fixstr straight into the gathering buffer */
        l->g->out.n += hw_put_fixstr((unsigned char *)hw_info_gather_room(l->g, 1 + n), s, n);
        return;
    }
    if (l->pk) hw_pack_cstr(l->pk, s);
    else if (l->obj) json_array_append_new(l->obj, json_string(s));
}
