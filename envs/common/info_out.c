/* info_out.c - hw_info_out's writers (info_out.h): each writes one key to the JSON object or
 * packs it, the packed bytes being those hw_pack_json packs of the JSON value. */
#include "common/info_out.h"

#include <string.h>

static void pack_str(msgpack_packer *pk, const char *s) {
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}
#define pack_key pack_str

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
        pack_str(o->pk, s);
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

hw_info_out hw_info_list(hw_info_out *o, const char *key, size_t n) {
    if (o->pk) {
        pack_key(o->pk, key);
        msgpack_pack_array(o->pk, n);
        return (hw_info_out){NULL, o->pk};
    }
    if (!o->obj) return hw_info_json(NULL);
    json_t *a = json_array();
    json_object_set_new(o->obj, key, a);
    return hw_info_json(a);
}

void hw_info_item_int(hw_info_out *l, int64_t v) {
    if (l->pk) msgpack_pack_int64(l->pk, v);
    else if (l->obj) json_array_append_new(l->obj, json_integer((json_int_t)v));
}

void hw_info_item_str(hw_info_out *l, const char *s) {
    if (l->pk) pack_str(l->pk, s);
    else if (l->obj)
        json_array_append_new(l->obj, json_string(s));
}
