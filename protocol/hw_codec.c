/* hw_codec.c - see hw_codec.h */
#include "hw_codec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const hw_limits hw_limits_default = {
    .max_msg = 64u << 20,
    .max_depth = 32,
    .max_elems = 1u << 22,
    .max_total = 1u << 22,
    .max_str = 1u << 20,
    .max_bin = 64u << 20,
};

/* the general walk, from a character boundary */
static bool utf8_walk(const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c < 0x80) {
            /* ASCII runs (keys, tokens) eight bytes at a time */
            uint64_t w;
            while (i + 8 <= n && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080ull))) i += 8;
            if (i < n && p[i] < 0x80) i++;
            continue;
        }
        size_t k;
        unsigned min;
        unsigned cp;
        if ((c & 0xe0) == 0xc0) { k = 1; cp = c & 0x1f; min = 0x80; }
        else if ((c & 0xf0) == 0xe0) { k = 2; cp = c & 0x0f; min = 0x800; }
        else if ((c & 0xf8) == 0xf0) { k = 3; cp = c & 0x07; min = 0x10000; }
        else return false;
        if (k >= n - i) return false; /* needs bytes i+1 .. i+k */
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (p[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += k + 1;
    }
    return true;
}

static inline bool utf8_valid(const unsigned char *p, size_t n) {
    /* all ASCII (every key and token of a request): eight bytes at a time, then the tail's bytes
     * or-ed together, with no per-byte branch; the walk only from the first word holding a byte
     * >= 0x80 */
    size_t i = 0;
    uint64_t w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ull) return utf8_walk(p + i, n - i);
    }
    /* the last n - i < 8 bytes: one (overlapping) word when the string has eight, else two
     * overlapping halves or the bytes */
    uint64_t tail = 0;
    if (i == n) return true;
    if (n >= 8) memcpy(&tail, p + n - 8, 8);
    else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        tail = a | b;
    } else
        for (size_t j = 0; j < n; j++) tail |= p[j];
    return !(tail & 0x8080808080808080ull) || utf8_walk(p + i, n - i);
}

/* msg_scan's byte classes: what a leading byte is (kind, low bits) and how many bytes follow it
 * before the value's payload (a scalar's payload, a string's / bin's / container's length field) */
enum { SC_SCALAR, SC_FIXSTR, SC_FIXARR, SC_FIXMAP, SC_STR, SC_BIN, SC_ARR, SC_MAP, SC_C1, SC_EXT };
#define SC(kind, arg) (unsigned char)((kind) | (arg) << 4)
#define SC4(k, a) SC(k, a), SC(k, a), SC(k, a), SC(k, a)
#define SC16(k, a) SC4(k, a), SC4(k, a), SC4(k, a), SC4(k, a)
static const unsigned char scan_class[256] = {
    /* 0x00-0x7f positive fixint */
    SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0),
    SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0),
    SC16(SC_FIXMAP, 0), SC16(SC_FIXARR, 0), SC16(SC_FIXSTR, 0), SC16(SC_FIXSTR, 0), /* 0x80 .. 0xbf */
    SC(SC_SCALAR, 0), SC(SC_C1, 0), SC(SC_SCALAR, 0), SC(SC_SCALAR, 0),              /* nil, 0xc1, false, true */
    SC(SC_BIN, 1), SC(SC_BIN, 2), SC(SC_BIN, 4), SC(SC_EXT, 0),                       /* bin 8/16/32, ext 8 */
    SC(SC_EXT, 0), SC(SC_EXT, 0), SC(SC_SCALAR, 4), SC(SC_SCALAR, 8),                 /* ext 16/32, float 32/64 */
    SC(SC_SCALAR, 1), SC(SC_SCALAR, 2), SC(SC_SCALAR, 4), SC(SC_SCALAR, 8),           /* uint 8..64 */
    SC(SC_SCALAR, 1), SC(SC_SCALAR, 2), SC(SC_SCALAR, 4), SC(SC_SCALAR, 8),           /* int 8..64 */
    SC4(SC_EXT, 0), SC(SC_EXT, 0), SC(SC_STR, 1), SC(SC_STR, 2), SC(SC_STR, 4),       /* fixext 1..16, str 8/16/32 */
    SC(SC_ARR, 2), SC(SC_ARR, 4), SC(SC_MAP, 2), SC(SC_MAP, 4),                       /* array 16/32, map 16/32 */
    SC16(SC_SCALAR, 0), SC16(SC_SCALAR, 0),                                           /* 0xe0-0xff negative fixint */
};

bool hw_utf8_valid(const char *s, size_t n) { return utf8_valid((const unsigned char *)s, n); }

/* true when the n <= 16 bytes at p + pos are all ASCII (a request's keys, op names, dtypes: the
 * common case), in one or two 8-byte loads that end at the string's end; false sends the caller
 * to utf8_valid (non-ASCII, a longer string, or one ending before byte 8 of the message) */
static inline bool ascii_short(const unsigned char *p, size_t pos, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* the high bit of each of the word's last n bytes (its high ones), n = 0..8 */
    static const uint64_t top[9] = {0, 0x8000000000000000ull, 0x8080000000000000ull, 0x8080800000000000ull, 0x8080808000000000ull,
                                    0x8080808080000000ull, 0x8080808080800000ull, 0x8080808080808000ull, 0x8080808080808080ull};
    if (n - 1 >= 16 || pos + n < 8) return n == 0; /* "" is ASCII; too long or too near the start: the walk */
    uint64_t w, lo = 0;
    memcpy(&w, p + pos + n - 8, 8);
    if (n > 8) memcpy(&lo, p + pos, 8);
    return !((w & top[n > 8 ? 8 : n]) | (lo & top[8]));
#else
    (void)p, (void)pos, (void)n;
    return false;
#endif
}

static uint64_t be(const unsigned char *p, int n) {
    return n == 1 ? p[0] : n == 2 ? (uint64_t)p[0] << 8 | p[1] : (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
}

/* a string's or bin's declared size n at offset pos too big: over its limit (told first, as the
 * walk checks it first), else more than the message holds */
static int size_error(hw_err *err, const char *what, uint64_t n, size_t pos, size_t len, size_t cap) {
    if (n > cap) return hw_fail(err, HW_E_LIMIT, "%s of %llu bytes at offset %zu exceeds the limit of %zu", what, (unsigned long long)n, pos, cap);
    return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: %s declares %llu bytes but %zu remain", what, (unsigned long long)n, len - pos);
}

/* the same for an array's or map's n entries, with `left` bytes after its header */
static int entries_error(hw_err *err, bool map, uint64_t n, size_t left, size_t cap) {
    if (n > cap) return hw_fail(err, HW_E_LIMIT, "%s of %llu entries exceeds the limit of %zu", map ? "map" : "array", (unsigned long long)n, cap);
    return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: %s declares %llu entries but only %zu bytes remain", map ? "map" : "array",
                   (unsigned long long)n, left);
}

/* msg_scan's walk from the root map's first byte. `within`: the message is no longer than
 * max_str, max_bin, max_elems and max_total, which then hold wherever a declared size fits in what
 * remains (one compare, not two: a size over its limit fails the fit too, and size_error /
 * entries_error tell it apart), and the objects need no counting (each takes a byte at least).
 * Inline, so msg_scan compiles it for both: a request, far under every limit, takes the short walk. */
static inline __attribute__((always_inline)) int scan_walk(const unsigned char *p, size_t len, const hw_limits *lim, hw_err *err, size_t *zone_bytes,
                                                          const bool within) {
    /* `left`: the objects still to come at this level (first the root alone); `outer`: the same of
     * each enclosing level, `depth` of them (the containers open) */
    uint64_t outer[72], left = 1;
    int maxd = lim->max_depth < 64 ? lim->max_depth : 64;
    int depth = 0;
    size_t pos = 0, total = 0, zb = 0;
    for (;;) {
        if (left == 0) {
            if (depth == 0) break;
            left = outer[--depth];
            continue;
        }
        left--;
        if (pos >= len) return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: message ends at byte %zu inside a container", pos);
        if (!within && ++total > lim->max_total) return hw_fail(err, HW_E_LIMIT, "more than %zu objects in one message", lim->max_total);
        unsigned b = p[pos++], c = scan_class[b], arg = c >> 4;
        uint64_t n;
        bool map;
        /* the kinds most objects of a request are (keys, small values) before the switch */
        if (c == SC_FIXSTR) {
            n = b & 0x1f;
            goto str;
        }
        if (c == SC_SCALAR) continue; /* a fixint, nil, false or true: the byte alone */
        switch (c & 15) {
        case SC_SCALAR:
            if (len - pos < arg) return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: number cut at byte %zu", pos);
            pos += arg;
            continue;
        case SC_FIXSTR: n = b & 0x1f; goto str;
        case SC_STR:
            if (len - pos < arg) return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: length field cut at byte %zu", pos);
            n = be(p + pos, (int)arg);
            pos += arg;
        str:
            if ((!within && n > lim->max_str) || n > len - pos) return size_error(err, "string", n, pos, len, lim->max_str);
            if (!ascii_short(p, pos, (size_t)n) && !utf8_valid(p + pos, (size_t)n)) return hw_fail(err, HW_E_BAD_REQUEST, "string at offset %zu is not valid UTF-8", pos);
            pos += (size_t)n;
            continue;
        case SC_BIN:
            if (len - pos < arg) return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: length field cut at byte %zu", pos);
            n = be(p + pos, (int)arg);
            pos += arg;
            if ((!within && n > lim->max_bin) || n > len - pos) return size_error(err, "bin", n, pos, len, lim->max_bin);
            pos += (size_t)n;
            continue;
        case SC_FIXARR: n = b & 0x0f, map = false; break;
        case SC_FIXMAP: n = b & 0x0f, map = true; break;
        case SC_ARR:
        case SC_MAP:
            if (len - pos < arg) return hw_fail(err, HW_E_BAD_REQUEST, "truncated msgpack: length field cut at byte %zu", pos);
            n = be(p + pos, (int)arg);
            pos += arg;
            map = (c & 15) == SC_MAP;
            break;
        case SC_C1: return hw_fail(err, HW_E_BAD_REQUEST, "invalid msgpack byte 0xc1 at offset %zu", pos - 1);
        default: return hw_fail(err, HW_E_BAD_REQUEST, "msgpack ext types are not supported (byte 0x%02x at offset %zu)", b, pos - 1);
        }
        /* an array or a map of n entries */
        uint64_t items = map ? 2 * n : n;
        if ((!within && n > lim->max_elems) || items > len - pos) return entries_error(err, map, n, len - pos, lim->max_elems);
        if (depth + 1 > maxd) return hw_fail(err, HW_E_LIMIT, "nesting deeper than %d levels", maxd);
        if (items) {
            outer[depth++] = left;
            left = items;
        }
        zb += (size_t)n * (map ? sizeof(msgpack_object_kv) : sizeof(msgpack_object));
    }
    *zone_bytes += zb;
    if (pos != len) return hw_fail(err, HW_E_BAD_REQUEST, "%zu trailing bytes after the message map", len - pos);
    return 0;
}

/* hw_msg_check's walk; *zone_bytes gets the bytes msgpack-c's unpacker takes from its zone for
 * this message (one object per array element, one key/value pair per map entry). One table
 * lookup per leading byte (scan_class), then the checks of its kind (scan_walk). */
static int msg_scan(const char *buf, size_t len, const hw_limits *lim, hw_err *err, size_t *zone_bytes) {
    if (!lim) lim = &hw_limits_default;
    const unsigned char *p = (const unsigned char *)buf;
    if (len > lim->max_msg) return hw_fail(err, HW_E_LIMIT, "message of %zu bytes exceeds the limit of %zu", len, lim->max_msg);
    if (len == 0) return hw_fail(err, HW_E_BAD_REQUEST, "empty message: expected a msgpack map");
    unsigned b0 = p[0];
    if (!((b0 >= 0x80 && b0 <= 0x8f) || b0 == 0xde || b0 == 0xdf))
        return hw_fail(err, HW_E_BAD_REQUEST, "message is not a msgpack map (first byte 0x%02x)", b0);
    if (len <= lim->max_str && len <= lim->max_bin && len <= lim->max_elems && len <= lim->max_total)
        return scan_walk(p, len, lim, err, zone_bytes, true);
    return scan_walk(p, len, lim, err, zone_bytes, false);
}

int hw_msg_check(const char *buf, size_t len, const hw_limits *lim, hw_err *err) {
    size_t zone_bytes = 0;
    return msg_scan(buf, len, lim, err, &zone_bytes);
}

int hw_msg_decode(hw_msg *m, const char *buf, size_t len, const hw_limits *lim, hw_err *err) { return hw_msg_decode_in(m, buf, len, lim, NULL, err); }

int hw_msg_decode_in(hw_msg *m, const char *buf, size_t len, const hw_limits *lim, msgpack_zone **reuse, hw_err *err) {
    msgpack_unpacked_init(&m->up);
    m->root = NULL;
    size_t zone_bytes = 0;
    if (msg_scan(buf, len, lim, err, &zone_bytes)) return -1;
    /* a zone of the size the scan counted (msgpack_unpack_next's zone takes 8 KiB a message,
     * a slow malloc for a 150-byte request); msgpack_unpacked_destroy frees it as before. A
     * caller's zone whose first chunk holds it is cleared and taken instead (no malloc/free) */
    size_t need = zone_bytes + 64;
    if (reuse && *reuse && (*reuse)->chunk_size >= need) {
        msgpack_zone_clear(*reuse);
        m->up.zone = *reuse;
        *reuse = NULL;
    } else
        m->up.zone = msgpack_zone_new(reuse && need < HW_MSG_ZONE_REUSE ? HW_MSG_ZONE_REUSE : need);
    if (!m->up.zone) return hw_fail(err, HW_E_LIMIT, "out of memory decoding a message of %zu bytes", len);
    size_t off = 0;
    msgpack_unpack_return rc = msgpack_unpack(buf, len, &off, m->up.zone, &m->up.data);
    if (rc != MSGPACK_UNPACK_SUCCESS || m->up.data.type != MSGPACK_OBJECT_MAP)
        return hw_fail(err, HW_E_BAD_REQUEST, "could not decode the msgpack map (code %d)", (int)rc);
    m->root = &m->up.data;
    return 0;
}

void hw_msg_free(hw_msg *m) { msgpack_unpacked_destroy(&m->up); }

const msgpack_object *hw_mp_getn(const msgpack_object *map, const char *key, size_t kl) {
    if (!map || map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size != kl) continue;
        /* a request's keys are short: compared here, not in a memcmp call each */
        size_t j = 0;
        while (j < kl && k->via.str.ptr[j] == key[j]) j++;
        if (j == kl) return &map->via.map.ptr[i].val;
    }
    return NULL;
}

bool hw_mp_is_str(const msgpack_object *o, const char *s) {
    size_t n = strlen(s);
    return o && o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && (n == 0 || memcmp(o->via.str.ptr, s, n) == 0);
}

static const char *type_name(const msgpack_object *o) {
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "bool";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "float";
    case MSGPACK_OBJECT_STR: return "string";
    case MSGPACK_OBJECT_ARRAY: return "array";
    case MSGPACK_OBJECT_MAP: return "map";
    case MSGPACK_OBJECT_BIN: return "bin";
    default: return "ext";
    }
}

int hw_mp_str(const msgpack_object *map, const char *key, const char *def, char *out, size_t cap, hw_err *err) {
    const msgpack_object *o = hw_mp_get(map, key);
    if (!o || o->type == MSGPACK_OBJECT_NIL) {
        if (!def) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' is required (a string)", key);
        snprintf(out, cap, "%s", def);
        return 0;
    }
    if (o->type != MSGPACK_OBJECT_STR) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' must be a string, got %s", key, type_name(o));
    if (o->via.str.size >= cap) return hw_fail(err, HW_E_LIMIT, "field '%s' is longer than %zu bytes", key, cap - 1);
    if (!hw_utf8_valid(o->via.str.ptr, o->via.str.size)) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' is not valid UTF-8", key);
    if (o->via.str.size && memchr(o->via.str.ptr, 0, o->via.str.size)) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' contains a NUL byte", key);
    if (o->via.str.size) memcpy(out, o->via.str.ptr, o->via.str.size); /* ptr is NULL for "" */
    out[o->via.str.size] = 0;
    return 0;
}

int hw_mp_int(const msgpack_object *map, const char *key, bool required, int64_t def, int64_t lo, int64_t hi, int64_t *out, hw_err *err) {
    const msgpack_object *o = hw_mp_get(map, key);
    if (!o || o->type == MSGPACK_OBJECT_NIL) {
        if (required) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' is required (an integer)", key);
        *out = def;
        return 0;
    }
    int64_t v;
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (o->via.u64 > (uint64_t)INT64_MAX) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s': %llu is too large", key, (unsigned long long)o->via.u64);
        v = (int64_t)o->via.u64;
    } else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        v = o->via.i64;
    } else {
        return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' must be an integer, got %s", key, type_name(o));
    }
    if (v < lo || v > hi) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s': %lld out of range [%lld, %lld]", key, (long long)v, (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

int hw_mp_bool(const msgpack_object *map, const char *key, bool def, bool *out, hw_err *err) {
    const msgpack_object *o = hw_mp_get(map, key);
    if (!o || o->type == MSGPACK_OBJECT_NIL) {
        *out = def;
        return 0;
    }
    if (o->type != MSGPACK_OBJECT_BOOLEAN) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' must be a bool, got %s", key, type_name(o));
    *out = o->via.boolean;
    return 0;
}

static bool is_num(const msgpack_object *o) {
    return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER || o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ||
           o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_BOOLEAN;
}
static bool is_int(const msgpack_object *o) {
    return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER || o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER || o->type == MSGPACK_OBJECT_BOOLEAN;
}
static int64_t as_i64(const msgpack_object *o) {
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return o->via.u64 > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return o->via.i64;
    case MSGPACK_OBJECT_BOOLEAN: return o->via.boolean;
    default: return (int64_t)o->via.f64;
    }
}
static double as_f64(const msgpack_object *o) {
    switch (o->type) {
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return o->via.f64;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double)o->via.u64;
    default: return (double)as_i64(o);
    }
}

static int list_array(const msgpack_object *o, const char *what, msgpack_zone *zone, size_t max_elems, hw_array *out, hw_err *err) {
    uint32_t n = o->via.array.size;
    int two_d = n > 0 && o->via.array.ptr[0].type == MSGPACK_OBJECT_ARRAY;
    uint32_t m = two_d ? o->via.array.ptr[0].via.array.size : 1;
    if ((uint64_t)n * m > max_elems) return hw_fail(err, HW_E_LIMIT, "%s: %llu elements exceed the limit of %zu", what, (unsigned long long)n * m, max_elems);
    bool all_int = true;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *row = &o->via.array.ptr[i];
        if (two_d) {
            if (row->type != MSGPACK_OBJECT_ARRAY || row->via.array.size != m)
                return hw_fail(err, HW_E_BAD_ACTION, "%s: ragged nested list at row %u", what, i);
            for (uint32_t j = 0; j < m; j++) {
                if (!is_num(&row->via.array.ptr[j])) return hw_fail(err, HW_E_BAD_ACTION, "%s[%u][%u]: expected a number, got %s", what, i, j, type_name(&row->via.array.ptr[j]));
                all_int &= is_int(&row->via.array.ptr[j]);
            }
        } else {
            if (!is_num(row)) return hw_fail(err, HW_E_BAD_ACTION, "%s[%u]: expected a number, got %s", what, i, type_name(row));
            all_int &= is_int(row);
        }
    }
    out->dtype = all_int ? HW_DT_INT64 : HW_DT_FLOAT64;
    out->ndim = two_d ? 2 : 1;
    out->shape[0] = n;
    out->shape[1] = m;
    size_t cnt = (size_t)n * m;
    out->data = msgpack_zone_malloc(zone, cnt * 8 + 8);
    if (!out->data) return hw_fail(err, HW_E_LIMIT, "%s: out of memory", what);
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *row = &o->via.array.ptr[i];
        for (uint32_t j = 0; j < m; j++, k++) {
            const msgpack_object *x = two_d ? &row->via.array.ptr[j] : row;
            if (all_int) ((int64_t *)out->data)[k] = as_i64(x);
            else ((double *)out->data)[k] = as_f64(x);
        }
    }
    return 0;
}

/* a wire array's "dtype", "shape" and "data" in one pass over its keys: each the first entry with
 * that key, as hw_mp_get finds it */
static void array_fields(const msgpack_object *map, const msgpack_object *f[3]) {
    f[0] = f[1] = f[2] = NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR) continue;
        const char *s = k->via.str.ptr;
        int j = k->via.str.size == 5 ? (!memcmp(s, "dtype", 5) ? 0 : !memcmp(s, "shape", 5) ? 1 : -1)
              : k->via.str.size == 4 && !memcmp(s, "data", 4) ? 2 : -1;
        if (j >= 0 && !f[j]) f[j] = &map->via.map.ptr[i].val;
    }
}

int hw_mp_array(const msgpack_object *o, const char *what, msgpack_zone *zone, size_t max_elems, hw_array *out, hw_err *err) {
    memset(out, 0, sizeof *out);
    if (!o) return hw_fail(err, HW_E_BAD_REQUEST, "field '%s' is required", what);
    if (is_num(o)) {
        out->ndim = 0;
        out->data = msgpack_zone_malloc(zone, 8);
        if (!out->data) return hw_fail(err, HW_E_LIMIT, "%s: out of memory", what);
        if (is_int(o)) {
            out->dtype = HW_DT_INT64;
            *(int64_t *)out->data = as_i64(o);
        } else {
            out->dtype = HW_DT_FLOAT64;
            *(double *)out->data = as_f64(o);
        }
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_ARRAY) return list_array(o, what, zone, max_elems, out, err);
    if (o->type != MSGPACK_OBJECT_MAP) return hw_fail(err, HW_E_BAD_REQUEST, "%s: expected an array {dtype, shape, data}, a list or a number; got %s", what, type_name(o));
    char dt[16];
    hw_err e2;
    const msgpack_object *f[3];
    array_fields(o, f);
    /* a dtype's name matched in place (hw_dtype_from_namen: a name holding a NUL matches none);
     * anything else through hw_mp_str's checks */
    const msgpack_object *dto = f[0];
    int d = dto && dto->type == MSGPACK_OBJECT_STR ? hw_dtype_from_namen(dto->via.str.ptr, dto->via.str.size) : -1;
    if (d < 0 && hw_mp_str(o, "dtype", NULL, dt, sizeof dt, &e2)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.dtype: %s", what, e2.msg);
    if (d < 0) d = hw_dtype_from_name(dt);
    if (d < 0) return hw_fail(err, HW_E_BAD_REQUEST, "%s.dtype: unknown dtype '%s' (float32, float64, int8, int16, int32, int64, uint8, bool)", what, dt);
    const char *dtn = hw_dtype_name((hw_dtype)d); /* the name as sent */
    const msgpack_object *sh = f[1];
    if (!sh || sh->type != MSGPACK_OBJECT_ARRAY) return hw_fail(err, HW_E_BAD_REQUEST, "%s.shape: expected a list of integers", what);
    if (sh->via.array.size > HW_MAX_DIMS) return hw_fail(err, HW_E_LIMIT, "%s.shape: %u dims exceed the limit of %d", what, sh->via.array.size, HW_MAX_DIMS);
    uint64_t numel = 1;
    out->dtype = (hw_dtype)d;
    out->ndim = (int)sh->via.array.size;
    for (int i = 0; i < out->ndim; i++) {
        const msgpack_object *x = &sh->via.array.ptr[i];
        if (x->type != MSGPACK_OBJECT_POSITIVE_INTEGER || x->via.u64 > max_elems)
            return hw_fail(err, x->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? HW_E_LIMIT : HW_E_BAD_REQUEST, "%s.shape[%d]: expected an integer in [0, %zu]", what, i, max_elems);
        out->shape[i] = (int64_t)x->via.u64;
        numel *= x->via.u64;
        if (numel > max_elems) return hw_fail(err, HW_E_LIMIT, "%s: %llu elements exceed the limit of %zu", what, (unsigned long long)numel, max_elems);
    }
    const msgpack_object *data = f[2];
    if (!data || data->type != MSGPACK_OBJECT_BIN) return hw_fail(err, HW_E_BAD_REQUEST, "%s.data: expected bin bytes", what);
    size_t want = (size_t)numel * hw_dtype_size(out->dtype);
    if (data->via.bin.size != want)
        return hw_fail(err, HW_E_BAD_REQUEST, "%s.data: %u bytes, but dtype %s and shape give %zu", what, data->via.bin.size, dtn, want);
    out->data = (void *)data->via.bin.ptr;
    return 0;
}

/* ---- JSON ---- */

static bool is_wire_array(const msgpack_object *o) {
    const msgpack_object *d = hw_mp_get(o, "data");
    return d && d->type == MSGPACK_OBJECT_BIN && hw_mp_get(o, "dtype") && hw_mp_get(o, "shape");
}

static json_t *to_json(const msgpack_object *o, size_t *left, hw_err *err) {
    if (*left == 0) return hw_fail(err, HW_E_LIMIT, "more JSON values than the limit allows"), NULL;
    --*left;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return json_null();
    case MSGPACK_OBJECT_BOOLEAN: return json_boolean(o->via.boolean);
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        return o->via.u64 > (uint64_t)INT64_MAX ? json_real((double)o->via.u64) : json_integer((json_int_t)o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer(o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        if (!isfinite(o->via.f64)) return hw_fail(err, HW_E_BAD_REQUEST, "non-finite number where JSON is expected"), NULL;
        return json_real(o->via.f64);
    case MSGPACK_OBJECT_STR:
        if (!hw_utf8_valid(o->via.str.ptr, o->via.str.size)) return hw_fail(err, HW_E_BAD_REQUEST, "string is not valid UTF-8"), NULL;
        return json_stringn(o->via.str.size ? o->via.str.ptr : "", o->via.str.size); /* "" has ptr NULL */
    case MSGPACK_OBJECT_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            json_t *x = to_json(&o->via.array.ptr[i], left, err);
            if (!x) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, x);
        }
        return a;
    }
    case MSGPACK_OBJECT_MAP: {
        if (is_wire_array(o)) {
            hw_array arr;
            if (hw_mp_array(o, "array", NULL, *left, &arr, err)) return NULL;
            json_t *a = json_array();
            int64_t n = hw_array_numel(&arr);
            *left -= (size_t)n;
            bool fl = arr.dtype == HW_DT_FLOAT32 || arr.dtype == HW_DT_FLOAT64;
            for (int64_t i = 0; i < n; i++) {
                if (fl) {
                    double v = hw_array_get_f64(&arr, i);
                    json_array_append_new(a, isfinite(v) ? json_real(v) : json_null());
                } else {
                    json_array_append_new(a, json_integer(hw_array_get_i64(&arr, i)));
                }
            }
            return a;
        }
        json_t *m = json_object();
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key;
            /* msgpack-c leaves ptr NULL for empty strings: never hand that to memchr/memcpy */
            if (k->type != MSGPACK_OBJECT_STR || !hw_utf8_valid(k->via.str.ptr, k->via.str.size) ||
                (k->via.str.size && memchr(k->via.str.ptr, 0, k->via.str.size))) {
                json_decref(m);
                return hw_fail(err, HW_E_BAD_REQUEST, "map keys must be UTF-8 strings"), NULL;
            }
            json_t *x = to_json(&o->via.map.ptr[i].val, left, err);
            if (!x) {
                json_decref(m);
                return NULL;
            }
            char key[256];
            size_t kl = k->via.str.size;
            if (kl > sizeof key - 1) { /* never cut a key (it could end inside a UTF-8 character) */
                json_decref(x);
                json_decref(m);
                return hw_fail(err, HW_E_LIMIT, "map key of %zu bytes exceeds the limit of %zu", kl, sizeof key - 1), NULL;
            }
            if (kl) memcpy(key, k->via.str.ptr, kl);
            key[kl] = 0;
            json_object_set_new(m, key, x);
        }
        return m;
    }
    case MSGPACK_OBJECT_BIN: return hw_fail(err, HW_E_BAD_REQUEST, "unexpected bin value where JSON is expected"), NULL;
    default: return hw_fail(err, HW_E_BAD_REQUEST, "unsupported msgpack type"), NULL;
    }
}

json_t *hw_mp_to_json_max(const msgpack_object *o, size_t max_values, hw_err *err) {
    size_t left = max_values;
    json_t *j = to_json(o, &left, err);
    if (!j && err && err->code == HW_E_LIMIT && strstr(err->msg, "more JSON values"))
        hw_fail(err, HW_E_LIMIT, "more than %zu JSON values (numbers, strings, list and map entries)", max_values);
    return j;
}

json_t *hw_mp_to_json(const msgpack_object *o, hw_err *err) { return hw_mp_to_json_max(o, hw_limits_default.max_total, err); }

void hw_pack_strn(msgpack_packer *pk, const char *s, size_t n) {
    if (n < 32) { /* a fixstr (header byte 0xa0 | length, as msgpack_pack_str packs it): one write */
        unsigned char b[32];
        pk->callback(pk->data, (const char *)b, hw_put_fixstr(b, s, n));
        return;
    }
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

void hw_pack_kv_str(msgpack_packer *pk, const char *k, const char *v) {
    hw_pack_cstr(pk, k);
    hw_pack_cstr(pk, v);
}

void hw_pack_json(msgpack_packer *pk, const json_t *j) {
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        msgpack_pack_map(pk, json_object_size(j));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v) {
            hw_pack_cstr(pk, k);
            hw_pack_json(pk, v);
        }
        break;
    }
    case JSON_ARRAY: {
        msgpack_pack_array(pk, json_array_size(j));
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) hw_pack_json(pk, v);
        break;
    }
    case JSON_STRING: {
        size_t n = json_string_length(j);
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, json_string_value(j), n);
        break;
    }
    case JSON_INTEGER: msgpack_pack_int64(pk, json_integer_value(j)); break;
    case JSON_REAL: msgpack_pack_double(pk, json_real_value(j)); break;
    case JSON_TRUE: msgpack_pack_true(pk); break;
    case JSON_FALSE: msgpack_pack_false(pk); break;
    default: msgpack_pack_nil(pk); break;
    }
}

size_t hw_put_array_head(unsigned char *b, hw_dtype dt, int ndim, const int64_t *shape, int64_t lead, size_t nbytes) {
    int nd = ndim + (lead > 0);
    const char *name = hw_dtype_name(dt);
    size_t nl = strlen(name);
    bool fast = nd < 16 && ndim <= HW_MAX_DIMS && nbytes <= UINT32_MAX && nl < 16;
    for (int d = 0; fast && d < ndim; d++) fast = shape[d] >= 0;
    if (!fast) return 0;
    unsigned char *p = b;
    *p++ = 0x83;
    p += hw_put_fixstr(p, "dtype", 5);
    p += hw_put_fixstr(p, name, nl);
    p += hw_put_fixstr(p, "shape", 5);
    p += hw_put_list_head(p, (size_t)nd);
    if (lead > 0) p += hw_put_uint(p, (uint64_t)lead);
    for (int d = 0; d < ndim; d++) p += hw_put_uint(p, (uint64_t)shape[d]);
    p += hw_put_fixstr(p, "data", 4);
    int lb = nbytes < 256 ? 1 : nbytes < 65536 ? 2 : 4; /* msgpack_pack_bin: bin 8/16/32 */
    *p++ = lb == 1 ? 0xc4 : lb == 2 ? 0xc5 : 0xc6;
    for (int i = lb - 1; i >= 0; i--) p[i] = (unsigned char)(nbytes >> (8 * (lb - 1 - i)));
    p += lb;
    return (size_t)(p - b);
}

void hw_pack_array_head(msgpack_packer *pk, hw_dtype dt, int ndim, const int64_t *shape, int64_t lead, size_t nbytes) {
    unsigned char b[HW_ARRAY_HEAD_MAX];
    size_t n = hw_put_array_head(b, dt, ndim, shape, lead, nbytes);
    if (n) { /* the same bytes as the packer's calls below, in one write */
        pk->callback(pk->data, (const char *)b, n);
        return;
    }
    int nd = ndim + (lead > 0);
    const char *name = hw_dtype_name(dt);
    msgpack_pack_map(pk, 3);
    hw_pack_kv_str(pk, "dtype", name);
    hw_pack_cstr(pk, "shape");
    msgpack_pack_array(pk, (size_t)nd);
    if (lead > 0) msgpack_pack_int64(pk, lead);
    for (int d = 0; d < ndim; d++) msgpack_pack_int64(pk, shape[d]);
    hw_pack_cstr(pk, "data");
    msgpack_pack_bin(pk, nbytes);
}

void hw_pack_array(msgpack_packer *pk, const hw_array *a, int64_t lead) {
    size_t nb = hw_array_nbytes(a) * (size_t)(lead > 0 ? lead : 1);
    hw_pack_array_head(pk, a->dtype, a->ndim, a->shape, lead, nb);
    msgpack_pack_bin_body(pk, a->data, nb);
}

void hw_pack_obs(msgpack_packer *pk, const hw_obs *obs) {
    hw_gather g; /* not zeroed: 2 KiB */
    g.pk = pk;
    g.n = 0;
    hw_gather_obs(&g, obs);
    hw_gather_flush(&g);
}

/* hw_pack_array(pk, a, 0)'s bytes, gathered */
static void gather_array(hw_gather *g, const hw_array *a) {
    size_t nb = hw_array_nbytes(a);
    unsigned char *p = hw_gather_room(g, HW_ARRAY_HEAD_MAX + 256);
    size_t h = hw_put_array_head(p, a->dtype, a->ndim, a->shape, 0, nb);
    if (!h) { /* the packer's general calls */
        hw_gather_flush(g);
        hw_pack_array(g->pk, a, 0);
        return;
    }
    g->n += h;
    if (nb <= 256) {
        if (nb) memcpy(p + h, a->data, nb);
        g->n += nb;
        return;
    }
    hw_gather_flush(g);
    msgpack_pack_bin_body(g->pk, a->data, nb);
}

void hw_gather_obs(hw_gather *g, const hw_obs *obs) {
    if (obs->n == 1 && !obs->keys[0]) {
        gather_array(g, &obs->arr[0]);
        return;
    }
    if (obs->n < 0) { /* msgpack_pack_map's own (a negative count is its size_t) */
        hw_gather_flush(g);
        msgpack_pack_map(g->pk, (size_t)obs->n);
    } else
        g->n += hw_put_map_head(hw_gather_room(g, 5), (size_t)obs->n);
    for (int i = 0; i < obs->n; i++) {
        const char *k = obs->keys[i] ? obs->keys[i] : "";
        size_t kl = strlen(k);
        if (kl < 32) {
            unsigned char *p = hw_gather_room(g, 32);
            g->n += hw_put_fixstr(p, k, kl);
        } else {
            hw_gather_flush(g);
            hw_pack_strn(g->pk, k, kl);
        }
        gather_array(g, &obs->arr[i]);
    }
}

static void pack_object(msgpack_packer *pk, const msgpack_object *o) { msgpack_pack_object(pk, *o); }

void hw_pack_error(msgpack_packer *pk, const msgpack_object *id, hw_code code, const char *msg) {
    msgpack_pack_map(pk, 3);
    hw_pack_cstr(pk, "id");
    if (id && (id->type == MSGPACK_OBJECT_POSITIVE_INTEGER || id->type == MSGPACK_OBJECT_NEGATIVE_INTEGER || id->type == MSGPACK_OBJECT_STR))
        pack_object(pk, id);
    else
        msgpack_pack_nil(pk);
    hw_pack_cstr(pk, "ok");
    msgpack_pack_false(pk);
    hw_pack_cstr(pk, "error");
    msgpack_pack_map(pk, 2);
    hw_pack_kv_str(pk, "code", hw_code_name(code));
    hw_pack_kv_str(pk, "message", msg ? msg : "");
}
