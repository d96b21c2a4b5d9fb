/* hwgym_batch.c - libhwgym's lean evaluate_batch (see hwgym_client.h). The reply's wire arrays
 * are read straight from the msgpack message (no JSON). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hwgym_client_int.h"
#include "hwgym_spare.h"

/* The result arrays of a call live in one block (reward first, after a header holding the
 * block's size and `clean`), kept as the spare for the next call when freed (hwgym_spare.h);
 * vals is in the block when the reply names as many metrics as requested, else allocated on its
 * own. clean: the m (points + 1) of the layout whose error[] is known all NULL (hwc_lean_free
 * leaves it so), 0 when unknown: a loop of equal batches does not zero 8 bytes a point per call
 * (0.7 ns a point of diag-v0's 1,000,000, the in-process model's 4). */
enum { RES_HDR = 16 };

static bool in_block(const hwc_lean *b, const void *p) {
    const char *base = (const char *)b->reward - RES_HDR;
    size_t cap;
    memcpy(&cap, base, sizeof cap);
    return (const char *)p >= base && (const char *)p < base + cap;
}

void hwc_lean_free(hwc_lean *b) {
    if (!b) return;
    for (int j = 0; j < b->nmetrics; j++) free(b->names[j]);
    for (size_t k = 0; b->error && b->nerrors && k < b->n; k++) { /* untouched when no point failed */
        free(b->error[k]);
        b->error[k] = NULL;
    }
    free(b->names);
    if (b->reward) {
        if (b->vals && !in_block(b, b->vals)) free(b->vals);
        char *base = (char *)b->reward - RES_HDR;
        size_t cap, clean = b->n + 1; /* error[] is all NULL again */
        memcpy(&cap, base, sizeof cap);
        memcpy(base + sizeof cap, &clean, sizeof clean);
        spare_give(SPARE_RES, base, cap);
    }
    memset(b, 0, sizeof *b);
}

/* out's result arrays for n points, error[] all NULL, with room for nm metrics (nm < 0: "all", vals allocated later) */
static void res_alloc(hwc_lean *out, size_t n, int nm) {
    size_t m = n + 1, nv = nm >= 0 ? (size_t)nm * n + 1 : 0;
    size_t need = RES_HDR + m * sizeof(double) + m * sizeof(char *) + nv * sizeof(double) + 2 * m, cap;
    bool reused;
    char *base = spare_take(SPARE_RES, need, &cap, &reused), *p = base + RES_HDR;
    size_t clean = 0;
    if (reused) memcpy(&clean, base + sizeof cap, sizeof clean);
    memcpy(base, &cap, sizeof cap);
    memset(base + sizeof cap, 0, sizeof clean); /* unknown until freed */
    out->reward = (double *)(void *)p;
    p += m * sizeof(double);
    out->error = (char **)(void *)p;
    if (clean != m) memset(out->error, 0, m * sizeof(char *));
    p += m * sizeof(char *);
    if (nv) {
        out->vals = (double *)(void *)p;
        p += nv * sizeof(double);
    }
    out->feasible = (bool *)(void *)p;
    out->cache_hit = (bool *)(void *)(p + m);
}

/* bytes to bools, 16 at a time (vectorised at -O2) */
static void to_bool(const uint8_t *restrict p, size_t n, bool *restrict out) {
    size_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; j++) out[k + j] = p[k + j] != 0;
    for (; k < n; k++) out[k] = p[k] != 0;
}

static int get_vec(const msgpack_object *o, const char *what, size_t n, double *out, bool *bout, hw_err *err) {
    hw_array a;
    msgpack_zone z;
    msgpack_zone_init(&z, 1024);
    int rc = 0;
    if (!o || hw_mp_array(o, what, &z, n + 1, &a, err)) {
        if (!o) hw_fail(err, HW_E_BAD_REQUEST, "reply.%s: missing", what);
        rc = -1;
    } else if (hw_array_numel(&a) != (int64_t)n) {
        rc = hw_fail(err, HW_E_BAD_REQUEST, "reply.%s: %lld values for %zu points", what, (long long)hw_array_numel(&a), n);
    } else if (out && a.dtype == HW_DT_FLOAT64) {
        memcpy(out, a.data, n * sizeof(double));
    } else if (bout && (a.dtype == HW_DT_BOOL || a.dtype == HW_DT_UINT8)) {
        to_bool(a.data, n, bout);
    } else {
        for (size_t k = 0; k < n; k++) {
            if (out) out[k] = hw_array_get_f64(&a, (int64_t)k);
            if (bout) bout[k] = hw_array_get_i64(&a, (int64_t)k) != 0;
        }
    }
    msgpack_zone_destroy(&z);
    return rc;
}

/* room for `extra` more bytes in sb, in one allocation (msgpack's own growth doubles from 8 KiB,
 * copying the request at every step) */
static void sb_reserve(msgpack_sbuffer *sb, size_t extra) {
    if (sb->alloc - sb->size >= extra) return;
    size_t cap = sb->size + extra;
    char *p;
    if (cap >= SPARE_MIN) { /* a big request: sent without a copy, its buffer given back by send_req's free_sent */
        p = spare_take(SPARE_REQ, cap, &cap, NULL);
        if (sb->size) memcpy(p, sb->data, sb->size);
        free(sb->data);
    } else if (!(p = realloc(sb->data, cap))) {
        abort();
    }
    sb->data = p;
    sb->alloc = cap;
}

/* n int64 values narrowed to `to` (all of them fit), written at dst. Blocks of 16 with a fixed
 * trip count and restrict pointers: GCC vectorises them at -O2. */
static void narrow(const int64_t *restrict p, int64_t n, hw_dtype to, char *restrict dst) {
    int64_t i = 0;
    if (to == HW_DT_INT8) {
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++) dst[i + j] = (char)(int8_t)p[i + j];
        for (; i < n; i++) dst[i] = (char)(int8_t)p[i];
    } else if (to == HW_DT_INT16) {
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++) { int16_t x = (int16_t)p[i + j]; memcpy(dst + 2 * (i + j), &x, 2); }
        for (; i < n; i++) { int16_t x = (int16_t)p[i]; memcpy(dst + 2 * i, &x, 2); }
    } else {
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++) { int32_t x = (int32_t)p[i + j]; memcpy(dst + 4 * (i + j), &x, 4); }
        for (; i < n; i++) { int32_t x = (int32_t)p[i]; memcpy(dst + 4 * i, &x, 4); }
    }
}

/* the narrowest integer dtype holding all n values: v fits w bits iff (v + 2^(w-1)) >> w is 0
 * as unsigned, so OR-ing those shifts over the values needs no compare (vectorisable) */
static hw_dtype narrowest(const int64_t *restrict p, int64_t n) {
    uint64_t v8[16] = {0}, v16[16] = {0}, v32[16] = {0}; /* one lane each: no reduction in the hot loop */
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) {
            uint64_t u = (uint64_t)p[i + j];
            v8[j] |= (u + 0x80u) >> 8;
            v16[j] |= (u + 0x8000u) >> 16;
            v32[j] |= (u + 0x80000000u) >> 32;
        }
    for (int j = 0; i < n; i++, j++) {
        uint64_t u = (uint64_t)p[i];
        v8[j] |= (u + 0x80u) >> 8;
        v16[j] |= (u + 0x8000u) >> 16;
        v32[j] |= (u + 0x80000000u) >> 32;
    }
    uint64_t a8 = 0, a16 = 0, a32 = 0;
    for (int j = 0; j < 16; j++) a8 |= v8[j], a16 |= v16[j], a32 |= v32[j];
    return !a8 ? HW_DT_INT8 : !a16 ? HW_DT_INT16 : !a32 ? HW_DT_INT32 : HW_DT_INT64;
}

/* n int64 values narrowed to int8 at dst in one pass; false when one does not fit (then dst
 * holds garbage and the caller packs a wider dtype). Most action spaces fit: one read of the
 * points instead of a range pass and a copy pass. v fits iff (v + 128) >> 8 is 0 as unsigned;
 * with SSE2 (every x86-64), 16 values a step: the flags OR-ed in one register, the low halves
 * gathered and packed to bytes (a value that fits passes the saturating packs unchanged). */
static bool narrow8(const int64_t *restrict p, int64_t n, char *restrict dst) {
    int64_t i = 0;
    uint64_t a8 = 0;
#ifdef __SSE2__
    __m128i acc = _mm_setzero_si128(), bias = _mm_set1_epi64x(0x80);
    for (; i + 16 <= n; i += 16) {
        __m128i v[8], w[4];
        for (int j = 0; j < 8; j++) {
            v[j] = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 2 * j));
            acc = _mm_or_si128(acc, _mm_srli_epi64(_mm_add_epi64(v[j], bias), 8));
        }
        for (int j = 0; j < 4; j++)
            w[j] = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(v[2 * j]), _mm_castsi128_ps(v[2 * j + 1]), _MM_SHUFFLE(2, 0, 2, 0)));
        __m128i b = _mm_packs_epi16(_mm_packs_epi32(w[0], w[1]), _mm_packs_epi32(w[2], w[3]));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), b);
        if ((i & 1023) == 0 && _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) != 0xffff)
            return false; /* give up early on points that need a wider dtype (sched-v0's tables) */
    }
    a8 = _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) != 0xffff;
#endif
    for (; i < n; i++) {
        a8 |= ((uint64_t)p[i] + 0x80u) >> 8;
        dst[i] = (char)(int8_t)p[i];
    }
    return a8 == 0;
}

/* n int64 values narrowed to uint8 at dst in one pass (non-negative values up to 255, e.g.
 * sched-v0's loop factors of 128); false when one does not fit (dst then holds garbage). v fits
 * iff v >> 8 is 0 as unsigned; the flags OR-ed into 16 lanes: vectorisable. */
static bool narrow_u8(const int64_t *restrict p, int64_t n, char *restrict dst) {
    uint64_t acc[16] = {0}, a = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) {
            acc[j] |= (uint64_t)p[i + j] >> 8;
            dst[i + j] = (char)(uint8_t)p[i + j];
        }
    for (; i < n; i++) {
        a |= (uint64_t)p[i] >> 8;
        dst[i] = (char)(uint8_t)p[i];
    }
    for (int j = 0; j < 16; j++) a |= acc[j];
    return a == 0;
}

/* n int64 values narrowed to int16 at dst in one pass (the values that do not fit int8, e.g.
 * sched-v0's loop factors); false when one does not fit int16 (dst then holds garbage). The
 * flags OR-ed into 16 lanes, as in narrowest(): vectorisable, one read of the points. */
static bool narrow16(const int64_t *restrict p, int64_t n, char *restrict dst) {
    uint64_t acc[16] = {0}, a = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) {
            acc[j] |= ((uint64_t)p[i + j] + 0x8000u) >> 16;
            int16_t x = (int16_t)p[i + j];
            memcpy(dst + 2 * (i + j), &x, 2);
        }
    for (; i < n; i++) {
        a |= ((uint64_t)p[i] + 0x8000u) >> 16;
        int16_t x = (int16_t)p[i];
        memcpy(dst + 2 * i, &x, 2);
    }
    for (int j = 0; j < 16; j++) a |= acc[j];
    return a == 0;
}

/* Points as a wire array. Integer points are sent in the narrowest integer dtype that holds
 * them (int8 for most action spaces; uint8 for non-negative values up to 255, e.g. sched-v0's
 * tables of loop factors; else int16, int32): a fraction of the bytes to copy and send, converted
 * straight into the request's buffer, reserved once with `tail` bytes to spare for the fields
 * that follow. */
static void pack_points(msgpack_packer *pk, msgpack_sbuffer *sb, const hw_array *a, size_t tail) {
    int64_t n = hw_array_numel(a);
    hw_dtype dt = a->dtype;
    if (dt == HW_DT_INT64 || dt == HW_DT_INT32 || dt == HW_DT_INT16) {
        bool i64 = dt == HW_DT_INT64 && ((uintptr_t)a->data & 7) == 0; /* the common case: vectorisable passes */
        if (i64) { /* int8 optimistically, in one pass; rewound when a value does not fit */
            size_t mark = sb->size;
            sb_reserve(sb, (size_t)n + 96 + 10 * (size_t)a->ndim + tail);
            hw_pack_array_head(pk, HW_DT_INT8, a->ndim, a->shape, 0, (size_t)n);
            if (narrow8(a->data, n, sb->data + sb->size)) {
                sb->size += (size_t)n;
                return;
            }
            sb->size = mark; /* then uint8 and int16, in one pass each */
            hw_pack_array_head(pk, HW_DT_UINT8, a->ndim, a->shape, 0, (size_t)n);
            if (narrow_u8(a->data, n, sb->data + sb->size)) {
                sb->size += (size_t)n;
                return;
            }
            sb->size = mark;
            sb_reserve(sb, 2 * (size_t)n + 96 + 10 * (size_t)a->ndim + tail);
            hw_pack_array_head(pk, HW_DT_INT16, a->ndim, a->shape, 0, 2 * (size_t)n);
            if (narrow16(a->data, n, sb->data + sb->size)) {
                sb->size += 2 * (size_t)n;
                return;
            }
            sb->size = mark;
        }
        hw_dtype to;
        if (i64) {
            to = narrowest(a->data, n);
        } else {
            int64_t lo = 0, hi = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t v = hw_array_get_i64(a, i);
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            to = lo >= INT8_MIN && hi <= INT8_MAX ? HW_DT_INT8 : lo >= INT16_MIN && hi <= INT16_MAX ? HW_DT_INT16
               : lo >= INT32_MIN && hi <= INT32_MAX ? HW_DT_INT32 : HW_DT_INT64;
        }
        if (to != dt) {
            size_t es = hw_dtype_size(to);
            sb_reserve(sb, (size_t)n * es + 96 + 10 * (size_t)a->ndim + tail);
            hw_pack_array_head(pk, to, a->ndim, a->shape, 0, (size_t)n * es);
            char *dst = sb->data + sb->size;
            if (i64) {
                narrow(a->data, n, to, dst);
            } else {
                int64_t tmp[1024];
                for (int64_t i = 0; i < n; i += 1024) {
                    int64_t m = n - i < 1024 ? n - i : 1024;
                    for (int64_t j = 0; j < m; j++) tmp[j] = hw_array_get_i64(a, i + j);
                    narrow(tmp, m, to, dst + (size_t)i * es);
                }
            }
            sb->size += (size_t)n * es;
            return;
        }
    }
    sb_reserve(sb, (size_t)n * hw_dtype_size(dt) + 96 + 10 * (size_t)a->ndim + tail);
    hw_pack_array(pk, a, 0);
}

/* One lean call, or several pipelined ones over chunks of the points (a view each, no copy). */
typedef struct lean_call {
    const char *token, *env;
    const json_t *config;
    const hw_array *points;
    const char *const *metrics;
    int nmetrics;
    size_t chunk, nchunk;
    hwc_lean *out;
    bool named;  /* out->names/vals set by the first reply */
} lean_call;

static void lean_make(void *ud, int i, req *q) {
    lean_call *L = ud;
    hw_array a = *L->points;
    size_t k0 = (size_t)i * L->chunk, per = (size_t)(hw_array_numel(&a) / (a.shape[0] ? a.shape[0] : 1));
    a.shape[0] = (int64_t)((size_t)a.shape[0] - k0 < L->chunk ? (size_t)a.shape[0] - k0 : L->chunk);
    a.data = (char *)a.data + k0 * per * hw_dtype_size(a.dtype);
    req_begin(q, "evaluate_batch", 2 + (L->token != NULL) + (L->env != NULL) + (L->config != NULL));
    pack_target(q, L->token, L->env, L->config);
    size_t tail = 64;
    for (int j = 0; j < L->nmetrics; j++) tail += strlen(L->metrics[j]) + 8;
    hw_pack_cstr(&q->pk, "points");
    pack_points(&q->pk, &q->sb, &a, tail);
    hw_pack_cstr(&q->pk, "metrics");
    if (L->nmetrics < 0) hw_pack_cstr(&q->pk, "all");
    else {
        msgpack_pack_array(&q->pk, (size_t)L->nmetrics);
        for (int j = 0; j < L->nmetrics; j++) hw_pack_cstr(&q->pk, L->metrics[j]);
    }
}

/* the reply of chunk i: points k0 .. k0 + m of out */
static int lean_take(void *ud, int i, rep *r, hw_err *err) {
    lean_call *L = ud;
    hwc_lean *out = L->out;
    size_t n = out->n, k0 = (size_t)i * L->chunk, m = n - k0 < L->chunk ? n - k0 : L->chunk;
    const msgpack_object *root = r->m.root;
    if (get_vec(hw_mp_get(root, "reward"), "reward", m, out->reward + k0, NULL, err) ||
        get_vec(hw_mp_get(root, "feasible"), "feasible", m, NULL, out->feasible + k0, err) ||
        get_vec(hw_mp_get(root, "cache_hit"), "cache_hit", m, NULL, out->cache_hit + k0, err))
        return -1;
    const msgpack_object *mt = hw_mp_get(root, "metrics");
    if (!mt || mt->type != MSGPACK_OBJECT_MAP) return hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: expected a map");
    if (!L->named) {
        L->named = true;
        out->nmetrics = (int)mt->via.map.size;
        out->names = calloc((size_t)out->nmetrics + 1, sizeof(char *));
        if (out->nmetrics != L->nmetrics || !out->vals) out->vals = malloc((n * (size_t)out->nmetrics + 1) * sizeof(double)); /* else in the block */
        if (!out->names || !out->vals) abort();
        for (int j = 0; j < out->nmetrics; j++) {
            const msgpack_object_kv *kv = &mt->via.map.ptr[j];
            if (kv->key.type != MSGPACK_OBJECT_STR) return hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: keys must be strings");
            out->names[j] = strndup(kv->key.via.str.ptr, kv->key.via.str.size);
        }
    }
    if ((int)mt->via.map.size != out->nmetrics) return hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: the chunks name different metrics");
    for (int j = 0; j < out->nmetrics; j++) {
        const msgpack_object_kv *kv = &mt->via.map.ptr[j];
        if (kv->key.type != MSGPACK_OBJECT_STR || strlen(out->names[j]) != kv->key.via.str.size ||
            memcmp(out->names[j], kv->key.via.str.ptr, kv->key.via.str.size))
            return hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: the chunks name different metrics");
        if (get_vec(&kv->val, out->names[j], m, out->vals + (size_t)j * n + k0, NULL, err)) return -1;
    }
    const msgpack_object *e = hw_mp_get(root, "errors");
    if (e && e->type == MSGPACK_OBJECT_ARRAY)
        for (uint32_t x = 0; x < e->via.array.size; x++) {
            const msgpack_object *o = &e->via.array.ptr[x];
            int64_t k;
            char code[64], msg[HW_ERR_MSG];
            if (o->type != MSGPACK_OBJECT_MAP || hw_mp_int(o, "index", true, 0, 0, (int64_t)m - 1, &k, NULL) ||
                hw_mp_str(o, "code", "INTERNAL", code, sizeof code, NULL) || hw_mp_str(o, "message", "", msg, sizeof msg, NULL))
                continue;
            k += (int64_t)k0;
            if (out->error[k]) continue;
            /* the server names the index in its chunk: name the caller's */
            const char *rest = msg;
            char *end;
            if (!strncmp(msg, "points[", 7) && strtoll(msg + 7, &end, 10) >= 0 && *end == ']') rest = end + 1;
            size_t len = strlen(code) + strlen(rest) + 48;
            out->error[k] = malloc(len);
            if (!out->error[k]) abort();
            if (rest != msg) snprintf(out->error[k], len, "%s: points[%lld]%s", code, (long long)k, rest);
            else snprintf(out->error[k], len, "%s: %s", code, msg);
            out->reward[k] = NAN;
            out->nerrors++;
        }
    return 0;
}

/* Batches above this many points go as pipelined chunks of equal size (up to LEAN_WINDOW in
 * flight), so that the client's packing and decoding, the transfers and the server's scoring of
 * different chunks overlap. On 2 cores with diag-v0 (100,000 points, ~1 ns a point on the
 * server): 70-71M points/s as one request, 91-97M as two of 50,000, 83-94M as three, 85-87M as
 * four (a request's fixed costs, ~150 us of server CPU, then weigh more). Only with named metrics: a
 * family without a lean entry may name different "all" metrics per chunk. */
#define LEAN_CHUNK ((size_t)50000)
#define LEAN_WINDOW 4

int hwc_evaluate_lean(hwc_client *c, const char *token, const char *env, const json_t *config, const hw_array *points,
                      const char *const *metrics, int nmetrics, hwc_lean *out, hw_err *err) {
    memset(out, 0, sizeof *out);
    if (!points || (points->ndim != 2 && points->ndim != 3))
        return hw_fail(err, HW_E_BAD_ACTION, "points: expected a 2-D array (points x elements) or 3-D (points x rows x columns)");
    size_t n = (size_t)points->shape[0];
    lean_call L = {token, env, config, points, metrics, nmetrics, n ? n : 1, 1, out, false};
    if (nmetrics >= 0 && n > LEAN_CHUNK) { /* chunks of equal size: 120,000 points go as 3 x 40,000 */
        L.nchunk = (n + LEAN_CHUNK - 1) / LEAN_CHUNK;
        L.chunk = (n + L.nchunk - 1) / L.nchunk;
    }
    out->n = n;
    res_alloc(out, n, nmetrics);
    if (exchange_pipe(c, (int)L.nchunk, LEAN_WINDOW, lean_make, lean_take, &L, err)) { /* the server's error as it is */
        hwc_lean_free(out);
        return -1;
    }
    if (!L.named) { /* no points: an empty reply */
        out->names = calloc(1, sizeof(char *));
        if (!out->vals) out->vals = calloc(1, sizeof(double));
        if (!out->names || !out->vals) abort();
    }
    return 0;
}
