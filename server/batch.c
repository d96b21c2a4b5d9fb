/* batch.c - see batch.h. */
#include "batch.h"

#include "common/env_limits.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static double rec_get(const unsigned char *p, size_t len, const char *name) {
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
    return 0;
}

static int parse_metrics(lean_batch *b, const msgpack_object *m, const char *env_id, hw_err *err) {
    if (m->type == MSGPACK_OBJECT_STR && m->via.str.size == 3 && !memcmp(m->via.str.ptr, "all", 3)) {
        b->all = true;
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
                char known[1024] = "";
                for (int i = 0; i < b->lean->nmetrics; i++) {
                    if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
                    strncat(known, b->lean->metric_names[i], sizeof known - strlen(known) - 1);
                }
                return hw_fail(err, HW_E_BAD_REQUEST, "metrics[%d]: %s has no numeric metric '%.*s' (known: %s)", j, env_id,
                               (int)s->via.str.size, s->via.str.ptr, known);
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- keys */

/* config: the session's config (sorted JSON is hashed), or NULL for a session-less batch, whose
 * request config is converted by the workers, not here (server/policy.h: the router only routes):
 * then its msgpack bytes as sent are hashed, so equal configs sent with another key order miss
 * the cache, but different configs never share a key. */
static void prefix_digest(EVP_MD_CTX *c, const char *env_id, const hw_env_lean *lean, const json_t *config,
                          const msgpack_object *config_mp, unsigned char out[32]) {
    char *cfg = config ? json_dumps(config, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    msgpack_sbuffer raw;
    msgpack_sbuffer_init(&raw);
    if (!config && config_mp && config_mp->type != MSGPACK_OBJECT_NIL) {
        msgpack_packer pk;
        msgpack_packer_init(&pk, &raw, msgpack_sbuffer_write);
        msgpack_pack_object(&pk, *config_mp);
    }
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    static const char tag[] = "hwgym-cache-v1";
    EVP_DigestUpdate(c, tag, sizeof tag);
    EVP_DigestUpdate(c, env_id, strlen(env_id) + 1);
    const char *ver = lean ? lean->version : "hwgym-" HW_VERSION_STRING;
    EVP_DigestUpdate(c, ver, strlen(ver) + 1);
    if (raw.size) {
        EVP_DigestUpdate(c, "mp:", 3);
        EVP_DigestUpdate(c, raw.data, raw.size);
    } else {
        EVP_DigestUpdate(c, cfg ? cfg : "{}", strlen(cfg ? cfg : "{}") + 1);
    }
    EVP_DigestFinal_ex(c, out, NULL);
    msgpack_sbuffer_destroy(&raw);
    free(cfg);
}

/* A point is normalised element by element: an integral value as 'i' + int64, anything else as
 * 'f' + float64, so [3, 1] and [3.0, 1.0] (or int8 and int64 arrays) share a key. */
static void point_key(EVP_MD_CTX *c, const lean_batch *b, int64_t k, const unsigned char prefix[32], unsigned char *key) {
    unsigned char buf[32 + 9 * 64];
    unsigned char dig[EVP_MAX_MD_SIZE];
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    EVP_DigestUpdate(c, prefix, 32);
    int64_t shape[2] = {b->list || b->grid.ndim == 2 ? b->d : b->grid.shape[1], b->list || b->grid.ndim == 2 ? 0 : b->grid.shape[2]};
    EVP_DigestUpdate(c, shape, sizeof shape);
    size_t n = 0;
    for (int64_t j = 0; j < b->d; j++) {
        double v = pt_elem(b, k, j);
        if (v == floor(v) && fabs(v) < 9e15) {
            int64_t x = (int64_t)v;
            buf[n++] = 'i';
            memcpy(buf + n, &x, 8);
        } else {
            buf[n++] = 'f';
            memcpy(buf + n, &v, 8);
        }
        n += 8;
        if (n + 9 > sizeof buf) {
            EVP_DigestUpdate(c, buf, n);
            n = 0;
        }
    }
    EVP_DigestUpdate(c, buf, n);
    EVP_DigestFinal_ex(c, dig, NULL);
    memcpy(key, dig, HW_CACHE_KEY);
}

/* ---------------------------------------------------------------- results */

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
    for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = rec_get(rec, len, b->names[j]);
    if (b->all) set_rec(b, k, rec, len);
}

static void take_error(lean_batch *b, int64_t k, int code, const char *msg) {
    b->reward[k] = NAN;
    b->ecode[k] = code;
    free(b->emsg[k]);
    b->emsg[k] = strdup(msg ? msg : "");
}

lean_batch *lean_begin(const msgpack_object *root, const char *env_id, const json_t *config, hw_cache *cache, size_t max_elems,
                       void *owner, hw_err *err) {
    lean_batch *b = xcalloc(1, sizeof *b);
    b->owner = owner;
    b->lean = hw_env_lean_find(env_id);
    if (parse_points(b, hw_mp_get(root, "points"), max_elems, err) || parse_metrics(b, hw_mp_get(root, "metrics"), env_id, err)) {
        lean_free(b);
        return NULL;
    }
    if (b->lean && !b->list && b->grid.ndim != 2) {
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
    b->want_rec = cache != NULL || b->all;
    b->reward = xcalloc(n, sizeof(double));
    b->vals = xcalloc(n * (size_t)(b->nreq ? b->nreq : 1), sizeof(double));
    for (size_t i = 0; i < n * (size_t)b->nreq; i++) b->vals[i] = NAN;
    b->feasible = xcalloc(n, 1);
    b->hit = xcalloc(n, 1);
    b->ecode = xcalloc(n, sizeof(int));
    b->emsg = xcalloc(n, sizeof(char *));
    b->rec = xcalloc(n, sizeof(unsigned char *));
    b->reclen = xcalloc(n, sizeof(size_t));
    b->todo = xcalloc(n, sizeof(int64_t));
    if (!cache) {
        for (int64_t k = 0; k < b->n; k++) b->todo[k] = k;
        b->ntodo = b->n;
        return b;
    }
    unsigned char prefix[32];
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md) abort();
    prefix_digest(md, env_id, b->lean, config, hw_mp_get(root, "config"), prefix);
    b->keys = xcalloc(n, HW_CACHE_KEY);
    uint64_t hits = 0, misses = 0, merged = 0;
    for (int64_t k = 0; k < b->n; k++) {
        unsigned char *key = b->keys + (size_t)k * HW_CACHE_KEY;
        point_key(md, b, k, prefix, key);
        hw_cache_val v;
        if (hw_cache_get(cache, key, &v)) {
            take_result(b, k, v.reward, v.feasible, v.rec, v.len);
            b->hit[k] = 1;
            hits++;
        } else if (hw_cache_pending_join(cache, key, b, k)) {
            b->hit[k] = 1; /* answered without a new evaluation */
            b->waiting++;
            merged++;
        } else {
            b->todo[b->ntodo++] = k;
            misses++;
        }
    }
    EVP_MD_CTX_free(md);
    hw_cache_count(cache, hits, misses, merged);
    return b;
}

void lean_free(lean_batch *b) {
    if (!b) return;
    for (int j = 0; j < b->nreq; j++) free(b->names ? b->names[j] : NULL);
    for (int64_t k = 0; k < b->n; k++) {
        if (b->emsg) free(b->emsg[k]);
        if (b->rec) free(b->rec[k]);
    }
    free(b->names);
    free(b->lean_idx);
    free(b->todo);
    free(b->keys);
    free(b->reward);
    free(b->vals);
    free(b->feasible);
    free(b->hit);
    free(b->ecode);
    free(b->emsg);
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
static void eval_generic(lean_batch *b, const hw_env_family *fam, void *env, int64_t k, recbuf *rb) {
    hw_err err;
    if (!fam->evaluate) {
        take_error(b, k, HW_E_NOT_SUPPORTED, "this env has no one-shot evaluate");
        return;
    }
    json_t *pt = json_array();
    if (!b->list && b->grid.ndim == 3) {
        int64_t rows = b->grid.shape[1], cols = b->grid.shape[2];
        for (int64_t i = 0; i < rows; i++) {
            json_t *row = json_array();
            for (int64_t j = 0; j < cols; j++) json_array_append_new(row, num_to_json(pt_elem(b, k, i * cols + j)));
            json_array_append_new(pt, row);
        }
    } else {
        for (int64_t j = 0; j < b->d; j++) json_array_append_new(pt, num_to_json(pt_elem(b, k, j)));
    }
    json_t *m = json_object();
    double r;
    if (fam->evaluate(env, pt, &r, m, &err)) {
        char msg[HW_ERR_MSG + 32];
        snprintf(msg, sizeof msg, "points[%lld]: %s", (long long)k, err.msg);
        take_error(b, k, err.code, msg);
    } else {
        json_t *f = json_object_get(m, "feasible");
        b->reward[k] = r;
        b->feasible[k] = f ? json_is_true(f) : true;
        for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = json_num(json_object_get(m, b->names[j]));
        if (b->want_rec) {
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

void lean_run_slice(lean_batch *b, const hw_env_family *fam, void *env, const hw_err *env_err, int64_t lo, int64_t hi) {
    const hw_space *as = env ? fam->action_space(env) : NULL;
    int64_t numel = as ? hw_space_numel(as) : 0;
    int64_t *ibuf = xcalloc((size_t)numel + 1, sizeof(int64_t));
    double *fbuf = xcalloc((size_t)numel + 1, sizeof(double));
    double *row = b->list ? xcalloc((size_t)b->d + 1, sizeof(double)) : NULL;
    double *lv = b->lean ? xcalloc((size_t)b->lean->nmetrics + 1, sizeof(double)) : NULL;
    size_t esz = b->list ? 0 : hw_dtype_size(b->grid.dtype);
    recbuf rb = {0};
    for (int64_t p = lo; p < hi; p++) {
        int64_t k = b->todo[p];
        if (!env) {
            take_error(b, k, env_err->code, env_err->msg);
            continue;
        }
        if (hw_deadline_passed()) { /* the request's deadline (--request-timeout): the rest is abandoned */
            take_error(b, k, HW_E_TIMEOUT, "the request exceeded the server's time limit (--request-timeout) and was abandoned");
            continue;
        }
        if (!b->lean) {
            eval_generic(b, fam, env, k, &rb);
            continue;
        }
        hw_array a;
        if (b->list) {
            for (int64_t j = 0; j < b->d; j++) row[j] = pt_elem(b, k, j);
            a = (hw_array){HW_DT_FLOAT64, 1, {b->d}, row};
        } else {
            a = (hw_array){b->grid.dtype, 1, {b->d}, (char *)b->grid.data + (size_t)k * (size_t)b->d * esz};
        }
        hw_act act;
        hw_err err;
        if (hw_space_check_action(as, &a, ibuf, fbuf, &act, &err)) {
            char msg[HW_ERR_MSG + 32];
            snprintf(msg, sizeof msg, "points[%lld]: %s", (long long)k, err.msg);
            take_error(b, k, err.code, msg);
            continue;
        }
        double r;
        bool f;
        if (b->lean->eval(env, &act, &r, &f, lv, &err)) {
            take_error(b, k, err.code, err.msg);
            continue;
        }
        b->reward[k] = r;
        b->feasible[k] = f;
        for (int j = 0; j < b->nreq; j++) b->vals[(size_t)j * (size_t)b->n + (size_t)k] = lv[b->lean_idx[j]];
        if (b->want_rec) {
            rb.len = 0;
            for (int i = 0; i < b->lean->nmetrics; i++) rec_add(&rb, b->lean->metric_names[i], lv[i]);
            set_rec(b, k, rb.p, rb.len);
        }
    }
    free(rb.p);
    free(ibuf);
    free(fbuf);
    free(row);
    free(lv);
}

/* ---------------------------------------------------------------- router side */

void lean_slice_back(lean_batch *b, hw_cache *cache, int64_t lo, int64_t hi, void (*resolved)(void *ud, void *owner), void *ud) {
    if (!cache) return;
    for (int64_t p = lo; p < hi; p++) {
        int64_t k = b->todo[p];
        const unsigned char *key = b->keys + (size_t)k * HW_CACHE_KEY;
        if (!b->ecode[k]) hw_cache_put(cache, key, b->reward[k], b->feasible[k], b->rec[k], b->reclen[k]);
        hw_cache_waiter *w = hw_cache_pending_take(cache, key);
        for (hw_cache_waiter *x = w; x; x = x->next) {
            lean_batch *o = x->owner;
            if (b->ecode[k]) take_error(o, x->index, b->ecode[k], b->emsg[k]);
            else take_result(o, x->index, b->reward[k], b->feasible[k], b->rec[k], b->reclen[k]);
            o->waiting--;
            resolved(ud, o->owner);
        }
        hw_cache_waiters_free(w);
    }
}

static void pack_f64(msgpack_packer *pk, const double *v, int64_t n) {
    hw_array a = {HW_DT_FLOAT64, 1, {n}, (void *)v};
    hw_pack_array(pk, &a, 0);
}

static void pack_u8(msgpack_packer *pk, const uint8_t *v, int64_t n) {
    hw_array a = {HW_DT_BOOL, 1, {n}, (void *)v};
    hw_pack_array(pk, &a, 0);
}

/* "all": the union of the records' names, in first-seen order */
static void collect_names(lean_batch *b) {
    int cap = 0;
    for (int64_t k = 0; k < b->n; k++) {
        const unsigned char *p = b->rec[k];
        size_t len = b->reclen[k], i = 0;
        while (p && i < len) {
            size_t l = p[i];
            if (i + 1 + l + 8 > len) break;
            bool seen = false;
            for (int j = 0; j < b->nreq && !seen; j++) seen = strlen(b->names[j]) == l && !memcmp(b->names[j], p + i + 1, l);
            if (!seen && b->nreq < LEAN_MAX_METRICS) {
                if (b->nreq == cap) {
                    cap = cap ? cap * 2 : 16;
                    b->names = realloc(b->names, sizeof(char *) * (size_t)cap);
                    if (!b->names) abort();
                }
                b->names[b->nreq] = strndup((const char *)p + i + 1, l);
                b->nreq++;
            }
            i += 1 + l + 8;
        }
    }
    free(b->vals);
    b->vals = xcalloc((size_t)b->n * (size_t)(b->nreq ? b->nreq : 1), sizeof(double));
    for (int64_t k = 0; k < b->n; k++)
        for (int j = 0; j < b->nreq; j++)
            b->vals[(size_t)j * (size_t)b->n + (size_t)k] = b->rec[k] ? rec_get(b->rec[k], b->reclen[k], b->names[j]) : NAN;
}

void lean_pack_reply(lean_batch *b, msgpack_packer *pk) {
    if (b->all) collect_names(b);
    hw_pack_cstr(pk, "reward");
    pack_f64(pk, b->reward, b->n);
    hw_pack_cstr(pk, "feasible");
    for (int64_t k = 0; k < b->n; k++)
        if (b->ecode[k]) b->feasible[k] = 0;
    pack_u8(pk, b->feasible, b->n);
    hw_pack_cstr(pk, "metrics");
    msgpack_pack_map(pk, (size_t)b->nreq);
    for (int j = 0; j < b->nreq; j++) {
        hw_pack_cstr(pk, b->names[j]);
        pack_f64(pk, b->vals + (size_t)j * (size_t)b->n, b->n);
    }
    hw_pack_cstr(pk, "cache_hit");
    pack_u8(pk, b->hit, b->n);
    int64_t ne = 0;
    for (int64_t k = 0; k < b->n; k++) ne += b->ecode[k] != 0;
    hw_pack_cstr(pk, "errors");
    msgpack_pack_array(pk, (size_t)ne);
    for (int64_t k = 0; k < b->n; k++) {
        if (!b->ecode[k]) continue;
        msgpack_pack_map(pk, 3);
        hw_pack_cstr(pk, "index");
        msgpack_pack_int64(pk, k);
        hw_pack_kv_str(pk, "code", hw_code_name((hw_code)b->ecode[k]));
        hw_pack_kv_str(pk, "message", b->emsg[k]);
    }
}
