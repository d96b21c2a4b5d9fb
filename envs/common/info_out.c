/* info_out.c - hw_info_out's writers (info_out.h): each writes one key to the JSON object or
 * packs it, the packed bytes being those hw_pack_json packs of the JSON value. */
#include "common/info_out.h"

#include <string.h>

static void pack_key(msgpack_packer *pk, const char *key) {
    size_t n = strlen(key);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, key, n);
}

hw_info_out hw_info_packer(msgpack_packer *pk, size_t nkeys) {
    msgpack_pack_map(pk, nkeys);
    return (hw_info_out){NULL, pk};
}

void hw_info_int(hw_info_out *o, const char *key, int64_t v) {
    if (o->pk) {
        pack_key(o->pk, key);
        msgpack_pack_int64(o->pk, v);
    } else if (o->obj)
        json_object_set_new(o->obj, key, json_integer((json_int_t)v));
}

void hw_info_real(hw_info_out *o, const char *key, double v) {
    if (o->pk) {
        pack_key(o->pk, key);
        msgpack_pack_double(o->pk, v);
    } else if (o->obj)
        json_object_set_new(o->obj, key, json_real(v));
}

void hw_info_bool(hw_info_out *o, const char *key, bool v) {
    if (o->pk) {
        pack_key(o->pk, key);
        v ? msgpack_pack_true(o->pk) : msgpack_pack_false(o->pk);
    } else if (o->obj)
        json_object_set_new(o->obj, key, json_boolean(v));
}

void hw_info_str(hw_info_out *o, const char *key, const char *s) {
    if (o->pk) {
        pack_key(o->pk, key);
        size_t n = strlen(s);
        msgpack_pack_str(o->pk, n);
        msgpack_pack_str_body(o->pk, s, n);
    } else if (o->obj)
        json_object_set_new(o->obj, key, json_string(s));
}

hw_info_out hw_info_map(hw_info_out *o, const char *key, size_t nkeys) {
    if (o->pk) {
        pack_key(o->pk, key);
        return hw_info_packer(o->pk, nkeys);
    }
    if (!o->obj) return hw_info_json(NULL);
    json_t *m = json_object();
    json_object_set_new(o->obj, key, m);
    return hw_info_json(m);
}

void hw_info_ints(hw_info_out *o, const char *key, const int64_t *v, size_t n) {
    if (o->pk) {
        pack_key(o->pk, key);
        msgpack_pack_array(o->pk, n);
        for (size_t i = 0; i < n; i++) msgpack_pack_int64(o->pk, v[i]);
    } else if (o->obj) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer((json_int_t)v[i]));
        json_object_set_new(o->obj, key, a);
    }
}
