/* batch_route.c - see batch_route.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch.h"
#include "batch_route.h"
#include "registry.h"
#include "reply.h"

static void batch_done(router *r, batch *b);
static void maybe_done(router *r, batch *b);
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
        peers_session_touch(s, hw_now());
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
        if (!(b->lean = lean_begin(t->msg.root, b->env_id, b->config, r->cache, r->lim.max_elems, b, t->peer->key,
                                      peers_client_of(t, r->o->curve_secret != NULL), &t->reply, &err)))
            goto fail;
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
    charge(r, t); /* held by the batch until every slice is back */
    b->parent = t;
    t->b = b; /* the fair queue holds the parent for its batch */
    if (b->lean && b->n == 0) { /* every point answered by the cache or in flight elsewhere */
        b->pending = (int)(b->lean->waiting ? 1 : 0);
        if (!b->pending) { /* answered now: on_request sends the reply */
            discharge(r, t);
            t->dispatched = false;
            lean_reply(r, b);
        }
        return;
    }
    if (b->lean) b->pending += b->lean->waiting ? 1 : 0; /* one extra count released when the last waiter resolves */
    /* slices are cut as workers come free (fair_pump), at most max_slices of them: each has a
     * point at least, and the last nw + 1 have no time budget, so every range left fits */
    b->cost_s = -1;
    /* the client's last batch of this env and config tells the cost to start from */
    b->work = peers_work_key(b->env_id, s ? s->token : NULL, s ? NULL : b->config_mp); /* also for big batches: no probe slice */
    peers_cost_get(t->peer, b->work, &b->cost_s, &b->setup_s);
    b->max_slices = (b->n < 4096 ? (int)b->n : 4096) + r->nw + 1;
    if (b->lean) lean_set_slices(b->lean, b->max_slices);
    b->queued = true;
    peers_push(&r->P, t);
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
    discharge(r, t);
    if (b->measured) peers_cost_put(t->peer, b->work, b->cost_s, b->setup_s);
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
    if (b->lean->waiting == 0) {
        b->pending--;
        maybe_done(ud, b);
    }
}

/* a slice is back from its worker: its points are in; the points its budget left go back to
 * the fair queue; the batch's cost per point is updated */
void batch_slice_back(router *r, task *t) {
    batch *b = t->b;
    if (t->failed) b->timed_out = true;
    if (b->lean) lean_slice_back(b->lean, r->cache, t->slice, t->lo, t->stop, lean_resolved, r);
    if (t->setup_s > b->setup_s) b->setup_s = t->setup_s;
    if (t->stop > t->lo) { /* the first measure replaces a remembered cost; later ones average in */
        double c = t->run_s / (double)(t->stop - t->lo);
        b->cost_s = !b->measured ? c : 0.5 * b->cost_s + 0.5 * c;
        b->measured = true;
    }
    if (t->stop < t->hi && !(b->timed_out && !b->lean)) {
        batch_range *g = malloc(sizeof *g);
        if (!g) abort();
        g->lo = t->stop;
        g->hi = t->hi;
        g->next = b->rem;
        b->rem = g;
        if (!b->queued) {
            b->queued = true;
            peers_push(&r->P, b->parent);
        }
    }
    task_free(t);
    b->pending--;
    maybe_done(r, b);
}

/* the batch is done when no slice is out, no point is left to cut and no merged point waits */
static void maybe_done(router *r, batch *b) {
    if (b->pending == 0 && !b->queued && !b->rem && b->next >= b->n) batch_done(r, b);
}

/* points per slice: about two budgets' worth at the measured cost (one point until measured),
 * at most an even share of the batch per worker; the budget stops a slice that runs long */
static int64_t slice_size(router *r, const batch *b) {
    int64_t share = (b->n + r->nw - 1) / r->nw, size = 1;
    if (b->cost_s >= 0) {
        double want = 2e-3 * r->o->slice_ms / (b->cost_s > 1e-9 ? b->cost_s : 1e-9);
        size = want >= (double)share ? share : (int64_t)want;
    }
    return size < 1 ? 1 : size;
}

/* Cuts the batch's next slice and hands it to worker w; the batch goes back to the end of its
 * client's queue while points are left. */
static void cut_slice(router *r, batch *b, int w) {
    b->queued = false;
    if (b->timed_out && !b->lean) { /* the reply is TIMEOUT: nothing more to run */
        while (b->rem) {
            batch_range *g = b->rem;
            b->rem = g->next;
            free(g);
        }
        b->next = b->n;
        maybe_done(r, b);
        return;
    }
    task *sl = calloc(1, sizeof *sl);
    if (!sl) abort();
    bool last = b->cut >= b->max_slices - r->nw - 1; /* no budget: the range is done in one go */
    if (b->rem) {
        batch_range *g = b->rem;
        b->rem = g->next;
        sl->lo = g->lo;
        sl->hi = g->hi;
        free(g);
    } else {
        sl->lo = b->next;
        sl->hi = last ? b->n : b->next + slice_size(r, b);
        if (sl->hi > b->n) sl->hi = b->n;
        b->next = sl->hi;
    }
    sl->op = OP_BATCH_SLICE;
    sl->b = b;
    sl->slice = b->cut++;
    if (b->lean) lean_slice_cut(b->lean, sl->slice); /* its error list, before a worker writes it */
    sl->t0 = b->parent->t0;
    sl->budget_s = last || r->o->slice_ms <= 0 ? 0 : r->o->slice_ms * 1e-3;
    /* a lean slice's first chunk: half a budget's worth at the known cost, at most 4096 points
     * (a point much slower than the batch's cost so far overruns the budget by at most that) */
    double half = 0.5e-3 * r->o->slice_ms / (b->cost_s > 1e-9 ? b->cost_s : 1e-9);
    sl->chunk = b->cost_s < 0 ? 1 : half >= 4096 ? 4096 : half < 1 ? 1 : (int64_t)half;
    b->pending++;
    send_task(r, sl, w);
    if (b->rem || b->next < b->n) {
        b->queued = true;
        peers_push(&r->P, b->parent);
    }
}

/* work may take the last worker free of session-less work only when it is known to be short:
 * a batch whose points, and whose env's construction on a worker, were measured below the
 * slice time */
static bool fair_short(const task *t, void *ud) {
    const router *r = ud;
    const batch *b = t->b;
    return t->op == OP_EVALUATE_BATCH && b->cost_s >= 0 && b->cost_s * 1e3 <= r->o->slice_ms && b->setup_s * 1e3 <= r->o->slice_ms;
}

static bool fair_any(const task *t, void *ud) {
    (void)t;
    (void)ud;
    return true;
}

/* the worker with no session-less task and the fewest tasks out, or -1 */
static int free_worker(const router *r, int *busy) {
    int best = -1;
    *busy = 0;
    for (int i = 0; i < r->nw; i++) {
        if (r->wsl[i]) (*busy)++;
        else if (best < 0 || r->wout[i] < r->wout[best]) best = i;
    }
    return best;
}

void fair_pump(router *r) {
    int busy, w;
    while (r->P.nqueued && (w = free_worker(r, &busy)) >= 0) {
        /* one worker stays free of long session-less work (unless there is only one), so a
         * session's op or a make never waits behind another client's slow points */
        bool reserve = r->nw > 1 && busy >= r->nw - 1;
        task *t = peers_pick(&r->P, reserve ? fair_short : fair_any, r);
        if (!t) return;
        if (t->op == OP_EVALUATE_BATCH) cut_slice(r, t->b, w);
        else send_task(r, t, w);
    }
}
