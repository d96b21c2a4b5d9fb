/* hwgym_batch.c - libhwgym's lean evaluate_batch (see hwgym_client.h). The reply's wire arrays
 * are read straight from the msgpack message (no JSON). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwgym_client_int.h"

void hwc_lean_free(hwc_lean *b) {
    if (!b) return;
    for (int j = 0; j < b->nmetrics; j++) free(b->names[j]);
    for (size_t k = 0; b->error && k < b->n; k++) free(b->error[k]);
    free(b->names);
    free(b->reward);
    free(b->vals);
    free(b->feasible);
    free(b->cache_hit);
    free(b->error);
    memset(b, 0, sizeof *b);
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
    } else {
        for (size_t k = 0; k < n; k++) {
            if (out) out[k] = hw_array_get_f64(&a, (int64_t)k);
            if (bout) bout[k] = hw_array_get_i64(&a, (int64_t)k) != 0;
        }
    }
    msgpack_zone_destroy(&z);
    return rc;
}

int hwc_evaluate_lean(hwc_client *c, const char *token, const char *env, const json_t *config, const hw_array *points,
                      const char *const *metrics, int nmetrics, hwc_lean *out, hw_err *err) {
    memset(out, 0, sizeof *out);
    if (!points || (points->ndim != 2 && points->ndim != 3))
        return hw_fail(err, HW_E_BAD_ACTION, "points: expected a 2-D array (points x elements) or 3-D (points x rows x columns)");
    size_t n = (size_t)points->shape[0];
    req q;
    req_begin(&q, "evaluate_batch", 2 + (token != NULL) + (env != NULL) + (config != NULL));
    pack_target(&q, token, env, config);
    hw_pack_cstr(&q.pk, "points");
    hw_pack_array(&q.pk, points, 0);
    hw_pack_cstr(&q.pk, "metrics");
    if (nmetrics < 0) hw_pack_cstr(&q.pk, "all");
    else {
        msgpack_pack_array(&q.pk, (size_t)nmetrics);
        for (int j = 0; j < nmetrics; j++) hw_pack_cstr(&q.pk, metrics[j]);
    }
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    const msgpack_object *root = r.m.root;
    out->n = n;
    out->reward = calloc(n + 1, sizeof(double));
    out->feasible = calloc(n + 1, sizeof(bool));
    out->cache_hit = calloc(n + 1, sizeof(bool));
    out->error = calloc(n + 1, sizeof(char *));
    if (!out->reward || !out->feasible || !out->cache_hit || !out->error) abort();
    if (get_vec(hw_mp_get(root, "reward"), "reward", n, out->reward, NULL, err) ||
        get_vec(hw_mp_get(root, "feasible"), "feasible", n, NULL, out->feasible, err) ||
        get_vec(hw_mp_get(root, "cache_hit"), "cache_hit", n, NULL, out->cache_hit, err))
        goto fail;
    const msgpack_object *m = hw_mp_get(root, "metrics");
    if (!m || m->type != MSGPACK_OBJECT_MAP) {
        hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: expected a map");
        goto fail;
    }
    out->nmetrics = (int)m->via.map.size;
    out->names = calloc((size_t)out->nmetrics + 1, sizeof(char *));
    out->vals = calloc(n * (size_t)out->nmetrics + 1, sizeof(double));
    if (!out->names || !out->vals) abort();
    for (int j = 0; j < out->nmetrics; j++) {
        const msgpack_object_kv *kv = &m->via.map.ptr[j];
        if (kv->key.type != MSGPACK_OBJECT_STR) {
            hw_fail(err, HW_E_BAD_REQUEST, "reply.metrics: keys must be strings");
            goto fail;
        }
        out->names[j] = strndup(kv->key.via.str.ptr, kv->key.via.str.size);
        if (get_vec(&kv->val, out->names[j], n, out->vals + (size_t)j * n, NULL, err)) goto fail;
    }
    const msgpack_object *e = hw_mp_get(root, "errors");
    if (e && e->type == MSGPACK_OBJECT_ARRAY)
        for (uint32_t i = 0; i < e->via.array.size; i++) {
            const msgpack_object *x = &e->via.array.ptr[i];
            int64_t k;
            char code[64], msg[HW_ERR_MSG];
            if (x->type != MSGPACK_OBJECT_MAP || hw_mp_int(x, "index", true, 0, 0, (int64_t)n - 1, &k, NULL) ||
                hw_mp_str(x, "code", "INTERNAL", code, sizeof code, NULL) || hw_mp_str(x, "message", "", msg, sizeof msg, NULL))
                continue;
            size_t len = strlen(code) + strlen(msg) + 3;
            free(out->error[k]);
            out->error[k] = malloc(len);
            if (!out->error[k]) abort();
            snprintf(out->error[k], len, "%s: %s", code, msg);
            out->reward[k] = NAN;
            out->nerrors++;
        }
    rep_free(&r);
    return 0;
fail:
    hw_err_prefix(err, "evaluate_batch");
    rep_free(&r);
    hwc_lean_free(out);
    return -1;
}
