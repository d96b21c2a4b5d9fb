/* hwgym_eval.c - libhwgym's one-shot evaluations (see hwgym_client.h): evaluate and the JSON
 * evaluate_batch, over the request/reply core of hwgym_client.c (the lean batch is in
 * hwgym_batch.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw_codec.h"
#include "hwgym_client.h"
#include "hwgym_client_int.h"

void pack_target(req *q, const char *token, const char *env, const json_t *config) {
    if (token) hw_pack_kv_str(&q->pk, "session", token);
    if (env) hw_pack_kv_str(&q->pk, "env", env);
    if (config) {
        hw_pack_cstr(&q->pk, "config");
        hw_pack_json(&q->pk, config);
    }
}

int hwc_evaluate(hwc_client *c, const char *token, const char *env, const json_t *config, const json_t *point,
                 double *reward, json_t **metrics, hw_err *err) {
    if (!point) return hw_fail(err, HW_E_BAD_ACTION, "point: missing");
    req q;
    req_begin(&q, "evaluate", 1 + (token != NULL) + (env != NULL) + (config != NULL));
    pack_target(&q, token, env, config);
    hw_pack_cstr(&q.pk, "point");
    hw_pack_json(&q.pk, point);
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    double rw = NAN;
    if (get_nums(r.m.root, "reward", 1, r.m.up.zone, &rw, err)) {
        rep_free(&r);
        return -1;
    }
    if (reward) *reward = rw;
    if (metrics) {
        const msgpack_object *m = hw_mp_get(r.m.root, "metrics");
        *metrics = m ? hw_mp_to_json(m, err) : json_object();
        if (!*metrics) {
            hw_err_prefix(err, "reply.metrics");
            rep_free(&r);
            return -1;
        }
    }
    rep_free(&r);
    return 0;
}

int hwc_evaluate_batch(hwc_client *c, const char *token, const char *env, const json_t *config, const json_t *points,
                       hwc_batch *b, hw_err *err) {
    memset(b, 0, sizeof *b);
    if (!json_is_array(points)) return hw_fail(err, HW_E_BAD_ACTION, "points: expected a list of points");
    size_t n = json_array_size(points);
    req q;
    req_begin(&q, "evaluate_batch", 1 + (token != NULL) + (env != NULL) + (config != NULL));
    pack_target(&q, token, env, config);
    hw_pack_cstr(&q.pk, "points");
    hw_pack_json(&q.pk, points);
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    b->n = n;
    b->reward = malloc(sizeof(double) * (n ? n : 1));
    if (!b->reward) abort();
    for (size_t i = 0; i < n; i++) b->reward[i] = NAN;
    if (get_nums(r.m.root, "reward", (int)n, r.m.up.zone, b->reward, err)) goto fail;
    b->reply = rep_json(&r, err);
    if (!b->reply) goto fail;
    b->metrics = json_object_get(b->reply, "metrics");
    b->errors = json_object_get(b->reply, "errors");
    /* wire NaN became null in JSON; keep the doubles authoritative */
    rep_free(&r);
    return 0;
fail:
    rep_free(&r);
    hwc_batch_free(b);
    return -1;
}

void hwc_batch_free(hwc_batch *b) {
    if (!b) return;
    free(b->reward);
    json_decref(b->reply);
    memset(b, 0, sizeof *b);
}
