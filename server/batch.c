/* batch.c - see batch.h. */
#include "batch.h"

#include "batch_block.h"
#include "cache_key.h"
#include "peers.h"
#include "reply.h"
#include "reply_slot.h"
#include "worker.h"
#include "common/env_limits.h"

#include <math.h>
#include <stdio.h>
#include <zmq.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

/* ---------------------------------------------------------------- metric records */

typedef struct recbuf {
    unsigned char *p;
    size_t len, cap;
} recbuf;

static void rec_add(recbuf *r, const char *name, double v) {
    size_t nl = strlen(name);
    if (nl > 255) return;
    if (r->len + nl + 9 > r->cap) {
        r->cap = (r->len + nl + 9) * 2 + 64;
        r->p = realloc(r->p, r->cap);
        if (!r->p) abort();
    }
    r->p[r->len++] = (unsigned char)nl;
    memcpy(r->p + r->len, name, nl);
    r->len += nl;
    memcpy(r->p + r->len, &v, 8);
    r->len += 8;
}

/* value of `name` in a record; NaN when absent */
double lean_rec_get(const unsigned char *p, size_t len, const char *name) {
    size_t nl = strlen(name), i = 0;
    while (i < len) {
        size_t l = p[i];
        if (i + 1 + l + 8 > len) break;
        if (l == nl && !memcmp(p + i + 1, name, l)) {
            double v;
            memcpy(&v, p + i + 1 + l, 8);
            return v;
        }
        i += 1 + l + 8;
    }
    return NAN;
}

/* ---------------------------------------------------------------- points */

static double pt_elem(const lean_batch *b, int64_t k, int64_t j) {
    if (!b->list) return hw_array_get_f64(&b->grid, k * b->d + j);
    const msgpack_object *o = &b->list->via.array.ptr[k].via.array.ptr[j];
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double)o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double)o->via.i64;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return o->via.f64;
    case MSGPACK_OBJECT_BOOLEAN: return o->via.boolean;
    default: return NAN;
    }
}

static int parse_points(lean_batch *b, const msgpack_object *pts, size_t max_elems, hw_err *err) {
    if (pts && pts->type == MSGPACK_OBJECT_MAP) {
        if (hw_mp_array(pts, "points", NULL, max_elems, &b->grid, err)) return -1;
        if (b->grid.ndim != 2 && b->grid.ndim != 3)
            return hw_fail(err, HW_E_BAD_REQUEST, "points: a wire array of points must be 2-D (points x elements) or 3-D (points x rows x columns)");
        b->n = b->grid.shape[0];
        b->d = b->grid.shape[1] * (b->grid.ndim == 3 ? b->grid.shape[2] : 1);
        b->rows = b->grid.shape[1];
        b->cols = b->grid.ndim == 3 ? b->grid.shape[2] : 0;
        return 0;
    }
    if (!pts || pts->type != MSGPACK_OBJECT_ARRAY)
        return hw_fail(err, HW_E_BAD_REQUEST, "points: a lean evaluate_batch takes a 2-D wire array or a list of number lists");
    b->list = pts;
    b->n = pts->via.array.size;
    for (int64_t k = 0; k < b->n; k++) {
        const msgpack_object *p = &pts->via.array.ptr[k];
        if (p->type != MSGPACK_OBJECT_ARRAY)
            return hw_fail(err, HW_E_BAD_REQUEST, "points[%lld]: expected a list of numbers (lean evaluate_batch)", (long long)k);
        if (k == 0) b->d = p->via.array.size;
        else if ((int64_t)p->via.array.size != b->d)
            return hw_fail(err, HW_E_BAD_REQUEST, "points[%lld]: %u elements, points[0] has %lld", (long long)k, p->via.array.size,
                           (long long)b->d);
        for (uint32_t j = 0; j < p->via.array.size; j++) {
            msgpack_object_type t = p->via.array.ptr[j].type;
            if (t != MSGPACK_OBJECT_POSITIVE_INTEGER && t != MSGPACK_OBJECT_NEGATIVE_INTEGER && t != MSGPACK_OBJECT_FLOAT32 &&
                t != MSGPACK_OBJECT_FLOAT64 && t != MSGPACK_OBJECT_BOOLEAN)
                return hw_fail(err, HW_E_BAD_REQUEST, "points[%lld][%u]: expected a number", (long long)k, j);
        }
    }
    b->rows = b->d;
    b->cols = 0;
    return 0;
}

static void known_names(const hw_env_lean *l, char *out, size_t cap) {
    out[0] = 0;
    for (int i = 0; i < l->nmetrics; i++) {
        if (i) strncat(out, ", ", cap - strlen(out) - 1);
        strncat(out, l->metric_names[i], cap - strlen(out) - 1);
    }
}

static int parse_metrics(lean_batch *b, const msgpack_object *m, const char *env_id, hw_err *err) {
    if (m->type == MSGPACK_OBJECT_STR && m->via.str.size == 3 && !memcmp(m->via.str.ptr, "all", 3)) {
        if (!b->lean) {
            b->all = true;
            return 0;
        }
        b->nreq = b->lean->nmetrics; /* a lean family's "all": its fixed list */
        b->names = xcalloc((size_t)b->nreq, sizeof(char *));
        b->lean_idx = xcalloc((size_t)b->nreq, sizeof(int));
        for (int j = 0; j < b->nreq; j++) {
            b->names[j] = strdup(b->lean->metric_names[j]);
            if (!b->names[j]) abort();
            b->lean_idx[j] = j;
        }
        return 0;
    }
    if (m->type == MSGPACK_OBJECT_NIL) return 0;
    if (m->type != MSGPACK_OBJECT_ARRAY)
        return hw_fail(err, HW_E_BAD_REQUEST, "metrics: expected a list of metric names or \"all\"");
    if (m->via.array.size > LEAN_MAX_METRICS)
        return hw_fail(err, HW_E_LIMIT, "metrics: %u names exceed the limit of %d", m->via.array.size, LEAN_MAX_METRICS);
    b->nreq = (int)m->via.array.size;
    b->names = xcalloc((size_t)b->nreq, sizeof(char *));
    b->lean_idx = xcalloc((size_t)b->nreq, sizeof(int));
    for (int j = 0; j < b->nreq; j++) {
        const msgpack_object *s = &m->via.array.ptr[j];
        if (s->type != MSGPACK_OBJECT_STR || s->via.str.size == 0 || s->via.str.size > 255 || !hw_utf8_valid(s->via.str.ptr, s->via.str.size))
            return hw_fail(err, HW_E_BAD_REQUEST, "metrics[%d]: expected a metric name (1-255 bytes of UTF-8)", j);
        b->names[j] = strndup(s->via.str.ptr, s->via.str.size);
        if (!b->names[j]) abort();
        b->lean_idx[j] = -1;
        if (b->lean) {
            b->lean_idx[j] = hw_env_lean_metric(b->lean, s->via.str.ptr, s->via.str.size);
            if (b->lean_idx[j] < 0) {
                char known[1024];
                known_names(b->lean, known, sizeof known);
                return hw_fail(err, HW_E_BAD_REQUEST, "metrics[%d]: %s has no numeric metric '%.*s' (known: %s)", j, env_id,
                               (int)s->via.str.size, s->via.str.ptr, known);
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- results and errors */

static inline int64_t todo_at(const lean_batch *b, int64_t p) { return b->todo ? b->todo[p] : p; }

static void set_rec(lean_batch *b, int64_t k, const unsigned char *rec, size_t len) {
    free(b->rec[k]);
    b->rec[k] = malloc(len ? len : 1);
    if (!b->rec[k]) abort();
    if (len) memcpy(b->rec[k], rec, len);
    b->reclen[k] = len;
}

/* point k of b from a cached or merged result */
static void take_result(lean_batch *b, int64_t k, double reward, bool feasible, const unsigned char *rec, size_t len) {
    b->reward[k] = reward;
    b->feasible[k] = feasible;
    for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = lean_rec_get(rec, len, b->names[j]);
    if (b->all) set_rec(b, k, rec, len);
}

/* point k failed: its error goes to list E (the owner's: a slice's, or the router's) */
static void add_err(lean_batch *b, lean_errs *E, int64_t k, int code, const char *msg) {
    if (E->n == E->cap) {
        E->cap = E->cap ? E->cap * 2 : 8;
        E->v = realloc(E->v, E->cap * sizeof *E->v);
        if (!E->v) abort();
    }
    E->v[E->n].k = k;
    E->v[E->n].code = code > 0 && code < HW_CODE_COUNT ? code : HW_E_INTERNAL;
    char clean[HW_ERR_MSG + 32];
    reply_msg_copy(clean, sizeof clean, msg, "the env failed on this point without a message");
    E->v[E->n].msg = strdup(clean);
    if (!E->v[E->n].msg) abort();
    E->n++;
    b->reward[k] = NAN;
    b->feasible[k] = 0;
    for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = NAN;
}

static void add_errf(lean_batch *b, lean_errs *E, int64_t k, int code, const char *msg) {
    char m[HW_ERR_MSG + 32];
    snprintf(m, sizeof m, "points[%lld]: %s", (long long)k, msg);
    add_err(b, E, k, code, m);
}

static void errs_free(lean_errs *E) {
    for (size_t i = 0; i < E->n; i++) free(E->v[i].msg);
    free(E->v);
    memset(E, 0, sizeof *E);
}

/* ---------------------------------------------------------------- router: begin */

static void encode_point(const lean_batch *b, int64_t k, unsigned char *buf, size_t *len) {
    size_t n = 0;
    bool integer = !b->list && b->grid.dtype != HW_DT_FLOAT32 && b->grid.dtype != HW_DT_FLOAT64;
    for (int64_t j = 0; j < b->d; j++)
        n += integer ? hw_key_elem_i64(buf + n, hw_array_get_i64(&b->grid, k * b->d + j)) : hw_key_elem_f64(buf + n, pt_elem(b, k, j));
    *len = n;
}

/* The in-flight table's key for point key `key` of b: the cache key with b's client mixed in,
 * so identical points merge only within one client (batch.h). */
static const unsigned char *pending_key(const lean_batch *b, const unsigned char *key, unsigned char out[HW_CACHE_KEY]) {
    memcpy(out, key, HW_CACHE_KEY);
    for (int i = 0; i < 8 && i < HW_CACHE_KEY; i++) out[i] ^= (unsigned char)(b->peer >> (8 * i));
    return out;
}

static void lookup_points(lean_batch *b, const char *env_id, const json_t *config, const msgpack_object *config_mp, hw_cache *cache) {
    hw_keyer *ky = hw_cache_keyer(cache);
    unsigned char prefix[32];
    const char *ver = b->lean ? b->lean->version : "hwgym-" HW_VERSION_STRING;
    size_t n = (size_t)b->n;
    /* the key covers the config and the content of every data file it names (cache_files.h) */
    if (hw_key_prefix(ky, env_id, ver, config, config_mp, prefix) || hw_cache_key_files(cache, config, config_mp, prefix)) {
        b->ntodo = b->n; /* not cacheable: evaluate every point */
        return;
    }
    bool shared = hw_cache_shared(cache);
    uint64_t client = b->client, evaluator = 0;
    b->cached = true;
    b->ntodo = 0;
    b->todo = xcalloc(n, sizeof(int64_t));
    b->keys = xcalloc(n, HW_CACHE_KEY);
    b->hit = xcalloc(n, 1);
    if (b->lean) b->lv = xcalloc(n * (size_t)b->lean->nmetrics, sizeof(double));
    else if (!b->rec) {
        b->rec = xcalloc(n, sizeof(unsigned char *));
        b->reclen = xcalloc(n, sizeof(size_t));
    }
    unsigned char *enc = xcalloc((size_t)b->d * HW_KEY_ELEM_MAX + 1, 1), pk[HW_CACHE_KEY];
    uint64_t hits = 0, misses = 0, merged = 0;
    for (int64_t k = 0; k < b->n; k++) {
        unsigned char *key = b->keys + (size_t)k * HW_CACHE_KEY;
        size_t len;
        encode_point(b, k, enc, &len);
        hw_key_point(ky, prefix, b->rows, b->cols, enc, len, key);
        hw_cache_val v;
        if (hw_cache_get(cache, key, &v)) {
            take_result(b, k, v.reward, v.feasible, v.rec, v.len);
            b->hit[k] = shared || v.peer == client; /* no membership oracle on other clients' points */
            hits++;
        } else if (hw_cache_pending_join(cache, pending_key(b, key, pk), b, k, client, &evaluator)) {
            b->hit[k] = shared || evaluator == client; /* answered without a new evaluation */
            b->waiting++;
            merged++;
        } else {
            b->todo[b->ntodo++] = k;
            misses++;
        }
    }
    free(enc);
    hw_cache_count(cache, hits, misses, merged);
}

/* ---------------------------------------------------------------- reply slots */

/* The reply's "reward" and "feasible" fields are laid out now, after the {"id","ok"} header, and
 * become the batch's result arrays: the workers write the results straight into the reply. The
 * rest of the reply is appended when the batch is done (lean_pack_reply). */
static void reply_slots(lean_batch *b, msgpack_sbuffer *sb) {
    size_t need = sb->size + (size_t)b->n * (10 + 8 * (size_t)b->nreq) + 64 * (size_t)b->nreq + 512;
    if (sb->alloc < need) {
        char *p = realloc(sb->data, need);
        if (!p) abort();
        sb->data = p;
        sb->alloc = need;
    }
    b->reward = reply_slot(sb, "reward", HW_DT_FLOAT64, b->n);
    b->feasible = reply_slot(sb, "feasible", HW_DT_BOOL, b->n);
    b->inreply = true;
}

lean_batch *lean_begin(const msgpack_object *root, const char *env_id, const json_t *config, hw_cache *cache, size_t max_elems,
                       void *owner, uint64_t peer, uint64_t client, msgpack_sbuffer *reply, hw_err *err) {
    lean_batch *b = xcalloc(1, sizeof *b);
    b->owner = owner;
    b->peer = peer;
    b->client = client;
    b->lean = hw_env_lean_find(env_id);
    if (parse_points(b, hw_mp_get(root, "points"), max_elems, err) || parse_metrics(b, hw_mp_get(root, "metrics"), env_id, err)) {
        lean_free(b);
        return NULL;
    }
    if (b->lean && b->lean->raw_ndim) { /* the family's own point form (sched-v0: a table) */
        int64_t want = b->lean->raw_shape[0] * (b->lean->raw_ndim == 2 ? b->lean->raw_shape[1] : 1);
        bool ok = b->d == want && (b->list || b->grid.ndim == 2 || (b->grid.shape[1] == b->lean->raw_shape[0] && b->lean->raw_ndim == 2));
        if (!ok) {
            hw_fail(err, HW_E_BAD_REQUEST, "points: %s takes points of %lld x %lld integers (a %lld-D points array: points x %lld x %lld)",
                    env_id, (long long)b->lean->raw_shape[0], (long long)b->lean->raw_shape[1], (long long)b->lean->raw_ndim + 1,
                    (long long)b->lean->raw_shape[0], (long long)b->lean->raw_shape[1]);
            lean_free(b);
            return NULL;
        }
    } else if (b->lean && !b->list && b->grid.ndim != 2) {
        hw_fail(err, HW_E_BAD_REQUEST, "points: %s takes a 2-D points array (points x action elements)", env_id);
        lean_free(b);
        return NULL;
    }
    if (b->d > 64 * 1024) {
        hw_fail(err, HW_E_LIMIT, "points: %lld elements per point exceed the limit of 65536", (long long)b->d);
        lean_free(b);
        return NULL;
    }
    size_t n = (size_t)b->n;
    /* every point's entries are written once (evaluated, failed, a hit or merged): no zeroing */
    if (reply && !b->all) { /* reward and feasible live in the reply itself */
        reply_slots(b, reply);
    } else {
        b->reward = xmalloc(n * sizeof(double));
        b->feasible = xmalloc(n);
    }
    b->vals = b->nreq ? xmalloc(n * (size_t)b->nreq * sizeof(double)) : NULL;
    if (b->all) {
        b->rec = xcalloc(n, sizeof(unsigned char *));
        b->reclen = xcalloc(n, sizeof(size_t));
    }
    b->ntodo = b->n;
    if (cache) lookup_points(b, env_id, config, config ? NULL : hw_mp_get(root, "config"), cache);
    return b;
}

void lean_set_slices(lean_batch *b, int n) {
    b->nslices = n;
    b->serr = xcalloc((size_t)(n + LEAN_SLICE_BLOCK - 1) / LEAN_SLICE_BLOCK, sizeof *b->serr);
}

void lean_slice_cut(lean_batch *b, int slice) {
    lean_errs **blk = &b->serr[slice / LEAN_SLICE_BLOCK];
    if (!*blk) *blk = xcalloc(LEAN_SLICE_BLOCK, sizeof **blk);
}

/* slice s's error list (made by lean_slice_cut) */
static lean_errs *slice_errs(const lean_batch *b, int s) { return &b->serr[s / LEAN_SLICE_BLOCK][s % LEAN_SLICE_BLOCK]; }

void lean_free(lean_batch *b) {
    if (!b) return;
    for (int j = 0; j < b->nreq; j++) free(b->names ? b->names[j] : NULL);
    for (int64_t k = 0; b->rec && k < b->n; k++) free(b->rec[k]);
    for (int s = 0; b->serr && s < b->nslices; s += LEAN_SLICE_BLOCK) {
        lean_errs *blk = b->serr[s / LEAN_SLICE_BLOCK];
        for (int i = 0; blk && i < LEAN_SLICE_BLOCK; i++) errs_free(&blk[i]);
        free(blk);
    }
    errs_free(&b->rerr);
    free(b->serr);
    free(b->names);
    free(b->lean_idx);
    free(b->todo);
    free(b->keys);
    if (!b->inreply) {
        free(b->reward);
        free(b->feasible);
    }
    free(b->vals);
    free(b->hit);
    free(b->lv);
    free(b->rec);
    free(b->reclen);
    free(b);
}

/* ---------------------------------------------------------------- worker side */

static double json_num(const json_t *v) {
    if (json_is_number(v)) return json_number_value(v);
    if (json_is_boolean(v)) return json_is_true(v);
    return NAN;
}

static json_t *num_to_json(double v) {
    return v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v);
}

/* A family without a lean entry: the point as JSON (a list, or a list of rows for a 3-D
 * points array) to its evaluate(), which validates it; numbers taken from the metrics. */
static void eval_generic(lean_batch *b, lean_errs *E, const hw_env_family *fam, void *env, int64_t k, recbuf *rb) {
    hw_err err = {HW_E_INTERNAL, ""};
    if (!fam->evaluate) {
        add_err(b, E, k, HW_E_NOT_SUPPORTED, "this env has no one-shot evaluate");
        return;
    }
    json_t *pt = json_array();
    if (b->cols) {
        for (int64_t i = 0; i < b->rows; i++) {
            json_t *row = json_array();
            for (int64_t j = 0; j < b->cols; j++) json_array_append_new(row, num_to_json(pt_elem(b, k, i * b->cols + j)));
            json_array_append_new(pt, row);
        }
    } else {
        for (int64_t j = 0; j < b->d; j++) json_array_append_new(pt, num_to_json(pt_elem(b, k, j)));
    }
    json_t *m = json_object();
    double r;
    if (fam->evaluate(env, pt, &r, m, &err)) {
        add_errf(b, E, k, err.code, err.msg);
    } else {
        json_t *f = json_object_get(m, "feasible");
        b->reward[k] = r;
        b->feasible[k] = f ? json_is_true(f) : true;
        for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = json_num(json_object_get(m, b->names[j]));
        if (b->rec) {
            rb->len = 0;
            const char *key;
            json_t *v;
            json_object_foreach(m, key, v) if (json_is_number(v) || json_is_boolean(v)) rec_add(rb, key, json_num(v));
            set_rec(b, k, rb->p, rb->len);
        }
    }
    json_decref(pt);
    json_decref(m);
}

/* The per-slice state of the lean path, built once for all the chunks of a slice
 * (lean_run_open): where a point's integers go, and the action space's bounds when the point is
 * an action of an integer space read from an integer wire array (then a point is copied and
 * range-checked in one tight loop; anything else, and any point that fails, goes through
 * hw_space_check_action for its exact error); the family's prepared context. */
struct lean_run {
    const hw_space *as;
    int64_t *ibuf, *lo, *hi;
    double *fbuf, *lvbuf;
    int64_t *blo;    /* eval_many blocks: lo and hi - lo of each element of a block of points */
    uint64_t *bspan;
    int8_t *blo8, *bhi8; /* the same bounds as int8 (NULL when one does not fit), for int8 points */
    bool fast;       /* integer wire array, integer space (or raw points) */
    bool many;       /* blocks of LEAN_BLOCK points through the family's eval_many */
    size_t esz;
    int64_t *blk;    /* a block's points (widened or gathered) and results */
    double *rw, *lvb;
    uint8_t *fe;
    void *ctx;       /* the family's prepare(env) */
};

static bool integer_grid(const lean_batch *b) {
    return !b->list && b->grid.dtype != HW_DT_FLOAT32 && b->grid.dtype != HW_DT_FLOAT64;
}

static void load_ints(const lean_batch *b, const lean_run *R, int64_t k) {
    lean_widen(b->grid.dtype, (const char *)b->grid.data + (size_t)k * (size_t)b->d * R->esz, (size_t)b->d, R->ibuf);
}

/* point k as an action (validated) or as raw integers; -1 with the point's error recorded */
static int load_point(lean_batch *b, lean_errs *E, lean_run *R, int64_t k, hw_act *act) {
    const hw_env_lean *L = b->lean;
    if (R->fast) {
        load_ints(b, R, k);
        *act = (hw_act){(size_t)b->d, R->ibuf, NULL};
        if (L->raw_ndim) return 0;
        bool ok = true;
        for (int64_t j = 0; j < b->d; j++) ok &= R->ibuf[j] >= R->lo[j] && R->ibuf[j] <= R->hi[j];
        if (ok) return 0;
    }
    if (L->raw_ndim) { /* floats or a list: integral values only */
        for (int64_t j = 0; j < b->d; j++) {
            double v = pt_elem(b, k, j);
            if (v != floor(v) || !(fabs(v) < 9e15)) {
                char m[96];
                snprintf(m, sizeof m, "element %lld: %g is not an integer", (long long)j, v);
                add_errf(b, E, k, HW_E_BAD_ACTION, m);
                return -1;
            }
            R->ibuf[j] = (int64_t)v;
        }
        *act = (hw_act){(size_t)b->d, R->ibuf, NULL};
        return 0;
    }
    hw_array a;
    if (b->list) {
        for (int64_t j = 0; j < b->d; j++) R->fbuf[j] = pt_elem(b, k, j);
        a = (hw_array){HW_DT_FLOAT64, 1, {b->d}, R->fbuf};
    } else {
        a = (hw_array){b->grid.dtype, 1, {b->d}, (char *)b->grid.data + (size_t)k * (size_t)b->d * R->esz};
    }
    hw_err err = {HW_E_INTERNAL, ""};
    int64_t *ib = R->ibuf + b->d + 1; /* hw_space_check_action's own buffers (the list's floats are in fbuf) */
    double *fb = R->fbuf + b->d + 1;
    if (hw_space_check_action(R->as, &a, ib, fb, act, &err)) {
        add_errf(b, E, k, err.code, err.msg);
        return -1;
    }
    return 0;
}

enum { LEAN_BLOCK = 256 }; /* points per eval_many call; the request deadline is read once per block */

/* A block of points todo[p0..p0+m) in one eval_many call of the family (env_lean.h; eval_many8 on
 * int8 points, read in place): loaded in one pass, range-checked in one pass, results written in
 * place (or scattered to the points' slots when the todo list is not the identity). -1 (nothing written): a point is out of range or the
 * family declined; the caller then scores the block point by point, which names each error. */
static int run_block(lean_batch *b, lean_run *R, void *env, void *ctx, int64_t p0, int64_t m, int64_t *blk, double *rw, uint8_t *fe,
                     double *lvb) {
    const hw_env_lean *L = b->lean;
    int64_t d = b->d, nm = L->nmetrics;
    size_t row = (size_t)d * R->esz;
    bool direct = !b->todo && !b->lv; /* results straight into the batch's result arrays */
    bool want_lv = b->lv || b->nreq;
    double *r = direct ? b->reward + p0 : rw;
    uint8_t *f = direct ? b->feasible + p0 : fe;
    if (R->blo8 && b->grid.dtype == HW_DT_INT8 && L->eval_many8) { /* int8 points as they came: nothing widened */
        const int8_t *x = (const int8_t *)b->grid.data + (size_t)p0 * row;
        if (b->todo) { /* the block's points gathered (the cache answered the others) */
            for (int64_t i = 0; i < m; i++) memcpy((char *)blk + i * d, (const char *)b->grid.data + (size_t)b->todo[p0 + i] * row, row);
            x = (const int8_t *)(const void *)blk;
        }
        if (!lean_in_range8(x, R->blo8, R->bhi8, m * d) || L->eval_many8(env, ctx, x, m, d, r, f, want_lv ? lvb : NULL)) return -1;
    } else {
        if (!b->todo) lean_widen(b->grid.dtype, (const char *)b->grid.data + (size_t)p0 * row, (size_t)(m * d), blk);
        else
            for (int64_t i = 0; i < m; i++) lean_widen(b->grid.dtype, (const char *)b->grid.data + (size_t)b->todo[p0 + i] * row, (size_t)d, blk + i * d);
        if (!b->todo && R->blo8 && b->grid.dtype == HW_DT_INT8) { /* checked on the wire bytes */
            if (!lean_in_range8((const int8_t *)b->grid.data + (size_t)p0 * (size_t)d, R->blo8, R->bhi8, m * d)) return -1;
        } else if (!lean_in_range(blk, R->blo, R->bspan, m * d)) {
            return -1;
        }
        if (L->eval_many(env, ctx, blk, m, d, r, f, want_lv ? lvb : NULL)) return -1;
    }
    if (direct) { /* the requested metrics, one tight loop each */
        for (int j = 0; j < b->nreq; j++) {
            double *dst = b->vals + (size_t)j * (size_t)b->n + (size_t)p0;
            int li = b->lean_idx[j];
            for (int64_t i = 0; i < m; i++) dst[i] = lvb[i * nm + li];
        }
        return 0;
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t k = todo_at(b, p0 + i);
        b->reward[k] = rw[i];
        b->feasible[k] = fe[i];
        if (b->lv) memcpy(b->lv + (size_t)k * (size_t)nm, lvb + i * nm, (size_t)nm * sizeof(double));
        for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = lvb[i * nm + b->lean_idx[j]];
    }
    return 0;
}

/* n entries of x, each the element j % d of its first d: the first d copied forward */
static void repeat_fill(void *x, size_t esz, int64_t d, int64_t n) {
    for (int64_t have = d; have < n; have *= 2)
        memcpy((char *)x + (size_t)have * esz, x, (size_t)(have <= n - have ? have : n - have) * esz);
}

lean_run *lean_run_open(const lean_batch *b, const hw_env_family *fam, void *env) {
    const hw_env_lean *L = b->lean;
    if (!L || !env) return NULL;
    lean_run *R = xcalloc(1, sizeof *R);
    R->as = L->raw_ndim ? NULL : fam->action_space(env);
    int64_t numel = R->as ? hw_space_numel(R->as) : b->d, d = b->d;
    size_t cap = (size_t)(d > numel ? d : numel) + 1;
    R->ibuf = xcalloc(2 * cap, sizeof(int64_t));
    R->fbuf = xcalloc(2 * cap, sizeof(double));
    R->lvbuf = xcalloc((size_t)L->nmetrics + 1, sizeof(double));
    R->esz = b->list ? 0 : hw_dtype_size(b->grid.dtype);
    R->fast = integer_grid(b) && (L->raw_ndim || (numel == d && hw_space_is_integer(R->as)));
    if (R->fast && !L->raw_ndim) {
        R->lo = xcalloc((size_t)d, sizeof(int64_t));
        R->hi = xcalloc((size_t)d, sizeof(int64_t));
        for (int64_t j = 0; j < d; j++) {
            R->lo[j] = R->as->type == HW_SPACE_DISCRETE ? R->as->start : 0;
            R->hi[j] = R->lo[j] + hw_space_choices(R->as, j) - 1;
        }
    }
    /* blocks of LEAN_BLOCK points in one eval_many call when the family has one */
    R->many = R->fast && !L->raw_ndim && L->eval_many && d > 0 && d <= 4096; /* blocks of at most 8 MiB */
    if (R->many) {
        int64_t nb = LEAN_BLOCK * d;
        R->blk = xmalloc((size_t)nb * sizeof(int64_t));
        R->blo = xmalloc((size_t)nb * sizeof(int64_t));
        R->bspan = xmalloc((size_t)nb * sizeof(uint64_t));
        bool fit8 = true;
        for (int64_t j = 0; j < d; j++) {
            R->blo[j] = R->lo[j];
            R->bspan[j] = (uint64_t)(R->hi[j] - R->lo[j]);
            fit8 &= R->lo[j] >= INT8_MIN && R->hi[j] <= INT8_MAX;
        }
        repeat_fill(R->blo, sizeof(int64_t), d, nb);
        repeat_fill(R->bspan, sizeof(uint64_t), d, nb);
        if (fit8) {
            R->blo8 = xmalloc((size_t)nb);
            R->bhi8 = xmalloc((size_t)nb);
            for (int64_t j = 0; j < d; j++) R->blo8[j] = (int8_t)R->lo[j], R->bhi8[j] = (int8_t)R->hi[j];
            repeat_fill(R->blo8, 1, d, nb);
            repeat_fill(R->bhi8, 1, d, nb);
        }
        R->rw = xmalloc(LEAN_BLOCK * sizeof(double));
        R->fe = xmalloc(LEAN_BLOCK);
        R->lvb = xmalloc((size_t)LEAN_BLOCK * (size_t)(L->nmetrics + 1) * sizeof(double));
    }
    R->ctx = L->prepare ? L->prepare(env) : NULL;
    return R;
}

void lean_run_close(const lean_batch *b, lean_run *R) {
    if (!R) return;
    if (b->lean->release) b->lean->release(R->ctx);
    free(R->blk);
    free(R->rw);
    free(R->fe);
    free(R->lvb);
    free(R->lvbuf);
    free(R->ibuf);
    free(R->fbuf);
    free(R->lo);
    free(R->hi);
    free(R->blo);
    free(R->bspan);
    free(R->blo8);
    free(R->bhi8);
    free(R);
}

static void run_lean(lean_batch *b, lean_errs *E, lean_run *R, void *env, int64_t lo, int64_t hi) {
    const hw_env_lean *L = b->lean;
    for (int64_t p0 = lo; p0 < hi; p0 += LEAN_BLOCK) {
        int64_t p1 = hi - p0 < LEAN_BLOCK ? hi : p0 + LEAN_BLOCK;
        if (hw_deadline_passed()) { /* the request's deadline (--request-timeout): the rest is abandoned */
            for (int64_t p = p0; p < hi; p++)
                add_err(b, E, todo_at(b, p), HW_E_TIMEOUT, "the request exceeded the server's time limit (--request-timeout) and was abandoned");
            break;
        }
        if (R->many && run_block(b, R, env, R->ctx, p0, p1 - p0, R->blk, R->rw, R->fe, R->lvb) == 0) continue;
        for (int64_t p = p0; p < p1; p++) {
            int64_t k = todo_at(b, p);
            hw_act act;
            if (load_point(b, E, R, k, &act)) continue;
            double r, *lv = b->lv ? b->lv + (size_t)k * (size_t)L->nmetrics : R->lvbuf;
            bool f;
            hw_err err = {HW_E_INTERNAL, ""}; /* an env that fails without a message sends no stack bytes */
            if (L->eval(env, R->ctx, &act, &r, &f, lv, &err)) {
                add_errf(b, E, k, err.code, err.msg);
                continue;
            }
            b->reward[k] = r;
            b->feasible[k] = f;
            for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = lv[b->lean_idx[j]];
        }
    }
}

void lean_run_slice(lean_batch *b, int slice, lean_run *R, const hw_env_family *fam, void *env, const hw_err *env_err, int64_t lo,
                    int64_t hi) {
    lean_errs *E = slice_errs(b, slice);
    if (!env) {
        for (int64_t p = lo; p < hi; p++) add_err(b, E, todo_at(b, p), env_err->code, env_err->msg);
        return;
    }
    if (b->lean) {
        run_lean(b, E, R, env, lo, hi);
        return;
    }
    recbuf rb = {0};
    for (int64_t p = lo; p < hi; p++) {
        int64_t k = todo_at(b, p);
        if (hw_deadline_passed()) { /* the request's deadline (--request-timeout): the rest is abandoned */
            add_err(b, E, k, HW_E_TIMEOUT, "the request exceeded the server's time limit (--request-timeout) and was abandoned");
            continue;
        }
        eval_generic(b, E, fam, env, k, &rb);
    }
    free(rb.p);
}

/* ---------------------------------------------------------------- router side */

/* the metric record of an evaluated point k of b (lean: built from its metric row into rb) */
static void point_rec(lean_batch *b, int64_t k, recbuf *rb, const unsigned char **rec, size_t *len) {
    if (!b->lean) {
        *rec = b->rec[k];
        *len = b->reclen[k];
        return;
    }
    rb->len = 0;
    const double *lv = b->lv + (size_t)k * (size_t)b->lean->nmetrics;
    for (int i = 0; i < b->lean->nmetrics; i++) rec_add(rb, b->lean->metric_names[i], lv[i]);
    *rec = rb->p;
    *len = rb->len;
}

/* A merged point (index k of o) gets the error of the point it waited for under its own index;
 * the other request's deadline is not its failure: it is told so, to retry. */
static void merged_err(lean_batch *o, int64_t k, const lean_err *e) {
    const char *m = e->msg;
    if (!strncmp(m, "points[", 7) && strstr(m, "]: ")) m = strstr(m, "]: ") + 3; /* the other request's index */
    if (e->code == HW_E_TIMEOUT)
        add_errf(o, &o->rerr, k, HW_E_TIMEOUT, "an identical point in flight for another request of this client was abandoned at that "
                                              "request's deadline (--request-timeout); send it again");
    else add_errf(o, &o->rerr, k, e->code, m);
}

void lean_slice_back(lean_batch *b, hw_cache *cache, int slice, int64_t lo, int64_t hi, void (*resolved)(void *ud, void *owner),
                     void *ud) {
    if (!cache || !b->cached) return;
    const lean_errs *E = slice_errs(b, slice);
    unsigned char pk[HW_CACHE_KEY];
    size_t ei = 0; /* the slice's errors are in todo order, as are its points */
    recbuf rb = {0};
    for (int64_t p = lo; p < hi; p++) {
        int64_t k = todo_at(b, p);
        const lean_err *e = ei < E->n && E->v[ei].k == k ? &E->v[ei++] : NULL;
        const unsigned char *key = b->keys + (size_t)k * HW_CACHE_KEY;
        const unsigned char *rec = NULL;
        size_t len = 0;
        if (!e) {
            point_rec(b, k, &rb, &rec, &len);
            hw_cache_put(cache, key, b->client, b->reward[k], b->feasible[k], rec, len);
        }
        hw_cache_waiter *w = hw_cache_pending_take(cache, pending_key(b, key, pk));
        for (hw_cache_waiter *x = w; x; x = x->next) {
            lean_batch *o = x->owner;
            if (e) merged_err(o, x->index, e);
            else take_result(o, x->index, b->reward[k], b->feasible[k], rec, len);
            o->waiting--;
            resolved(ud, o->owner);
        }
        hw_cache_waiters_free(w);
    }
    free(rb.p);
}
