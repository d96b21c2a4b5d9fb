/* batch_route.c - see batch_route.h. Moved from router.c unchanged (the slice-back branch of
 * on_reply is batch_slice_back). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch.h"
#include "batch_route.h"
#include "registry.h"
#include "reply.h"

static void batch_done(router *r, batch *b);
static void lean_reply(router *r, batch *b);

void route_batch(router *r, task *t) {
    hw_err err;
    session *s = lookup(r, t, false, &err);
    if (!s && err.code != HW_OK) {
        reply_error(t, &err);
        return;
    }
    batch *b = calloc(1, sizeof *b);
    if (!b) abort();
    if (s) {
        snprintf(b->env_id, sizeof b->env_id, "%s", s->env_id);
        b->config = json_incref(s->config);
        s->last_active = hw_now();
    } else {
        if (hw_mp_str(t->msg.root, "env", NULL, b->env_id, sizeof b->env_id, &err)) {
            free(b);
            reply_error(t, &err);
            return;
        }
        b->config_mp = hw_mp_get(t->msg.root, "config"); /* converted by the workers */
        if (!hw_registry_find(b->env_id)) {
            hw_fail(&err, HW_E_UNKNOWN_ENV, "unknown env '%s'", b->env_id);
            goto fail;
        }
    }
    /* before lean_begin: it may register this request's points as in flight in the cache */
    if (queue_full(r, t, s)) goto fail_replied;
    const msgpack_object *pts = hw_mp_get(t->msg.root, "points");
    if (hw_mp_get(t->msg.root, "metrics")) { /* lean evaluate_batch (batch.h) */
        int64_t n = pts && pts->type == MSGPACK_OBJECT_ARRAY ? (int64_t)pts->via.array.size : 0;
        const msgpack_object *sh = pts && pts->type == MSGPACK_OBJECT_MAP ? hw_mp_get(pts, "shape") : NULL;
        if (sh && sh->type == MSGPACK_OBJECT_ARRAY && sh->via.array.size > 0 && sh->via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            n = (int64_t)sh->via.array.ptr[0].via.u64;
        if (n > r->o->max_batch) {
            hw_fail(&err, HW_E_LIMIT, "points: %lld points exceed the limit of %d per evaluate_batch", (long long)n, r->o->max_batch);
            goto fail;
        }
        reply_begin(t, LEAN_REPLY_FIELDS); /* the reply's result arrays are the batch's (lean_begin) */
        b->parent = t; /* lean_begin tells the client's own cache hits from others' (batch.c batch_peer) */
        if (!(b->lean = lean_begin(t->msg.root, b->env_id, b->config, r->cache, r->lim.max_elems, b, &t->reply, &err))) goto fail;
        b->n = b->lean->ntodo; /* slices index the points to evaluate */
    } else if (pts && pts->type == MSGPACK_OBJECT_ARRAY) {
        b->list = pts;
        b->n = pts->via.array.size;
    } else if (pts && pts->type == MSGPACK_OBJECT_MAP) {
        if (hw_mp_array(pts, "points", NULL, r->lim.max_elems, &b->grid, &err)) goto fail;
        if (b->grid.ndim != 2) {
            hw_fail(&err, HW_E_BAD_REQUEST, "points: a wire array of points must be 2-D (points x elements)");
            goto fail;
        }
        b->n = b->grid.shape[0];
    } else {
        hw_fail(&err, HW_E_BAD_REQUEST, "field 'points' must be a list of points or a 2-D array");
        goto fail;
    }
    if (!b->lean && b->n > r->o->max_batch) {
        hw_fail(&err, HW_E_LIMIT, "points: %lld points exceed the limit of %d per evaluate_batch", (long long)b->n, r->o->max_batch);
        goto fail;
    }
    if (!b->lean) {
        b->rewards = calloc((size_t)b->n + 1, sizeof(double));
        b->metrics = calloc((size_t)b->n + 1, sizeof(json_t *));
        b->errors = calloc((size_t)b->n + 1, sizeof(json_t *));
        if (!b->rewards || !b->metrics || !b->errors) { /* an error reply, never an abort */
            free(b->rewards);
            free(b->metrics);
            free(b->errors);
            hw_fail(&err, HW_E_LIMIT, "evaluate_batch: out of memory for %lld points", (long long)b->n);
            goto fail;
        }
    }
    r->queued += task_bytes(t);
    b->parent = t;
    t->dispatched = true; /* held by the batch until every slice is back */
    if (b->lean && b->n == 0) { /* every point answered by the cache or in flight elsewhere */
        b->pending = (int)(b->lean->waiting ? 1 : 0);
        if (!b->pending) { /* answered now: on_request sends the reply */
            t->dispatched = false;
            lean_reply(r, b);
        }
        return;
    }
    if (b->lean) b->pending += b->lean->waiting ? 1 : 0; /* one extra count released when the last waiter resolves */
    int slices = b->n < r->nw ? (int)b->n : r->nw;
    if (slices == 0) slices = 1;
    b->pending += slices;
    if (b->lean) lean_set_slices(b->lean, slices);
    for (int k = 0; k < slices; k++) {
        task *sl = calloc(1, sizeof *sl);
        if (!sl) abort();
        sl->op = OP_BATCH_SLICE;
        sl->b = b;
        sl->lo = b->n * k / slices;
        sl->hi = b->n * (k + 1) / slices;
        sl->slice = k;
        sl->t0 = t->t0;
        dispatch(r, sl, (r->rr + k) % r->nw);
    }
    r->rr = (r->rr + 1) % r->nw;
    return;
fail:
    json_decref(b->config);
    free(b);
    reply_error(t, &err);
    return;
fail_replied:
    json_decref(b->config);
    free(b);
}

/* packs a lean batch's reply into its parent task and frees the batch */
static void lean_reply(router *r, batch *b) {
    msgpack_packer lp;
    if (b->lean->inreply) msgpack_packer_init(&lp, &b->parent->reply, msgpack_sbuffer_write); /* header and results in place */
    else lp = reply_begin(b->parent, LEAN_REPLY_FIELDS);
    lean_pack_reply(b->lean, &lp, &b->parent->reply);
    lean_free(b->lean);
    if (r->cache) hw_cache_flush(r->cache);
    json_decref(b->config);
    free(b);
}

/* frees a JSON batch: the results it still holds, its config and itself */
static void batch_free(batch *b) {
    for (int64_t k = 0; k < b->n; k++) {
        json_decref(b->metrics[k]);
        json_decref(b->errors[k]);
    }
    free(b->rewards);
    free(b->metrics);
    free(b->errors);
    json_decref(b->config);
    free(b);
}

/* "key": [value or nil for each of the n results] */
static void pack_json_list(msgpack_packer *pk, const char *key, json_t *const *v, int64_t n) {
    hw_pack_cstr(pk, key);
    msgpack_pack_array(pk, (size_t)n);
    for (int64_t k = 0; k < n; k++) {
        if (v[k]) hw_pack_json(pk, v[k]);
        else msgpack_pack_nil(pk);
    }
}

static void batch_done(router *r, batch *b) {
    task *t = b->parent;
    r->queued -= task_bytes(t);
    if (b->lean) {
        lean_reply(r, b);
        finish(r, t);
        return;
    }
    if (b->timed_out) {
        batch_free(b);
        reply_fail(t, HW_E_TIMEOUT, "evaluate_batch: the request exceeded the server's time limit (--request-timeout %gs) and was abandoned",
                   r->o->request_timeout_s);
        finish(r, t);
        return;
    }
    msgpack_packer pk = reply_begin(t, 3);
    hw_array ra = {HW_DT_FLOAT64, 1, {b->n}, b->rewards};
    hw_pack_cstr(&pk, "reward");
    hw_pack_array(&pk, &ra, 0);
    pack_json_list(&pk, "metrics", b->metrics, b->n);
    pack_json_list(&pk, "errors", b->errors, b->n);
    batch_free(b);
    finish(r, t);
}

/* a point of a lean batch that waited for an identical in-flight point has its result */
static void lean_resolved(void *ud, void *owner) {
    batch *b = owner;
    if (b->lean->waiting == 0 && --b->pending == 0) batch_done(ud, b);
}

/* a slice is back from its worker */
void batch_slice_back(router *r, task *t) {
    batch *b = t->b;
    if (t->failed) b->timed_out = true;
    if (b->lean) lean_slice_back(b->lean, r->cache, t->slice, t->lo, t->hi, lean_resolved, r);
    task_free(t);
    if (--b->pending == 0) batch_done(r, b);
}
