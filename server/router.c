/* router.c - hwgym-server's main thread (see server.h).
 * Owns: the ROUTER socket, request decoding and validation, each request's client (peers.h),
 * make (per-client caps, reclaiming idle sessions), dispatch to workers (a session's worker,
 * moved off one busy with session-less work), idle-session reaping, and the drain on
 * SIGTERM/SIGINT. The session table is in table.c, evaluate_batch's slicing and the fair queue's
 * pump in batch_route.c, the stats op in stats.c; what they and this file share (tasks, replies,
 * queue accounting, dispatch, session lookup) is in router_core.c, the op names in ops.c:
 * router.c -> batch_route.c, stats.c -> router_core.c -> table.c, peers.c, ops.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "batch.h"
#include "cache.h"
#include "cpus.h"
#include "common/env_limits.h"
#include "policy.h"
#include "registry.h"
#include "reply.h"
#include "server.h"
#include "spin.h"
#include "batch_route.h"
#include "router_int.h"
#include "stats.h"
#include "worker.h"

void hw_server_default_opts(hw_server_opts *o) {
    memset(o, 0, sizeof *o);
    o->workers = 2;
    o->session_ttl_s = 600;
    o->max_sessions = 10000;
    o->max_sessions_per_client = 4096;
    o->max_msg = 64u << 20;
    o->max_envs = 4096;
    o->max_snapshots = 1024;
    o->max_batch = 100000;
    o->cpu = -1;
    o->spin_us = -1;      /* HW_SPIN_DEFAULT_US, or 0 with --cpu */
    o->spin_clients = -1; /* half the CPUs the process may run on */
    o->inline_us = 25;
    o->inline_alone_us = 2000;
    o->request_timeout_s = 60;
    o->drain_timeout_s = 30;
    o->session_mem = (size_t)4 << 30;
    o->server_mem = (size_t)16 << 30;
    o->max_config_values = (size_t)1 << 20;
    o->max_queued = (size_t)512 << 20;
    o->max_queued_session = (size_t)160 << 20;
    o->max_queued_peer = (size_t)256 << 20;
    o->reclaim_idle_s = 1.0;
    o->slice_ms = 50;
    o->max_file = (size_t)64 << 20;
}

/* The worker for a session's op. A single or vector session with nothing in flight may run on
 * any worker (its state moves with the task, as on the inline path), so it leaves a worker busy
 * with session-less work, or with queued tasks when another worker is idle, for the least
 * busy one. Multi-agent sessions stay pinned (their barriers live on the worker). */
static int session_worker(router *r, session *s) {
    int cur = s->worker;
    if (s->inflight || s->dead || s->kind == SK_MULTI || (!r->wsl[cur] && !r->wout[cur])) return cur;
    int best = cur;
    for (int i = 0; i < r->nw; i++)
        if (r->wsl[i] < r->wsl[best] || (r->wsl[i] == r->wsl[best] && r->wout[i] < r->wout[best])) best = i;
    if (best != cur && (r->wsl[best] < r->wsl[cur] || r->wout[best] == 0)) {
        r->wsessions[cur]--;
        r->wsessions[best]++;
        s->worker = best;
    }
    return s->worker;
}

/* ---------------------------------------------------------------- router-side ops */

static void op_hello(router *r, task *t) {
    msgpack_packer pk = reply_begin(t, 6);
    hw_pack_kv_str(&pk, "server", "hwgym-server");
    hw_pack_kv_str(&pk, "version", HW_VERSION_STRING);
    hw_pack_cstr(&pk, "protocol");
    msgpack_pack_int(&pk, HW_PROTOCOL_VERSION);
    hw_pack_cstr(&pk, "protocols");
    msgpack_pack_array(&pk, 1);
    msgpack_pack_int(&pk, HW_PROTOCOL_VERSION);
    hw_pack_cstr(&pk, "envs");
    int n = hw_registry_count();
    msgpack_pack_array(&pk, (size_t)n);
    for (int i = 0; i < n; i++) hw_pack_cstr(&pk, hw_registry_at(i)->id);
    hw_pack_cstr(&pk, "limits");
    json_t *l = json_pack("{s:I, s:i, s:I, s:I, s:I, s:I, s:i, s:i, s:i, s:I}", "max_msg", (json_int_t)r->lim.max_msg, "max_depth",
                          r->lim.max_depth, "max_elems", (json_int_t)r->lim.max_elems, "max_str", (json_int_t)r->lim.max_str,
                          "max_sessions", (json_int_t)r->o->max_sessions, "session_ttl_s", (json_int_t)r->o->session_ttl_s,
                          "max_envs", r->o->max_envs, "max_snapshots", r->o->max_snapshots, "max_batch", r->o->max_batch,
                          "max_sessions_per_client", (json_int_t)r->o->max_sessions_per_client);
    json_object_set_new(l, "request_timeout_s", json_real(r->o->request_timeout_s));
    json_object_set_new(l, "max_config_values", json_integer((json_int_t)r->o->max_config_values));
    json_object_set_new(l, "max_file", json_integer((json_int_t)r->o->max_file));
    json_object_set_new(l, "data_files", json_boolean(r->o->ndata_dirs > 0));
    hw_pack_json(&pk, l);
    json_decref(l);
}

static void op_envs(task *t) {
    msgpack_packer pk = reply_begin(t, 1);
    hw_pack_cstr(&pk, "envs");
    int n = hw_registry_count();
    msgpack_pack_array(&pk, (size_t)n);
    for (int i = 0; i < n; i++) {
        msgpack_pack_map(&pk, 2);
        hw_pack_kv_str(&pk, "id", hw_registry_at(i)->id);
        hw_pack_kv_str(&pk, "summary", hw_registry_at(i)->summary);
    }
}

/* a new session's worker: the one with the least session-less work out, then fewest tasks out,
 * then fewest sessions */
static int least_loaded(router *r) {
    int best = 0;
    for (int i = 1; i < r->nw; i++) {
        int d = r->wsl[i] != r->wsl[best] ? r->wsl[i] - r->wsl[best]
              : r->wout[i] != r->wout[best] ? r->wout[i] - r->wout[best] : r->wsessions[i] - r->wsessions[best];
        if (d < 0) best = i;
    }
    return best;
}

/* takes an idle session out of the table and destroys its envs on its worker (reap, reclaim) */
static void retire(router *r, session *s, double now) {
    table_del(r, s);
    task *t = calloc(1, sizeof *t);
    if (!t) abort();
    t->op = OP_DESTROY;
    t->s = s;
    t->t0 = now;
    dispatch(r, t, s->worker);
}

/* an idle session gives its place to a make; its owner's next request is told why */
static void reclaim(router *r, session *s, char why) {
    if (r->o->verbose)
        fprintf(stderr, "hwgym-server: reclaimed idle session %.8s... of %s (%s full)\n", s->token, s->peer ? s->peer->label : "?",
                why == 'p' ? "its client's --max-sessions-per-client" : "--max-sessions");
    peers_remember(&r->P, s->token, why);
    retire(r, s, hw_now());
    r->reclaimed++;
}

static void route_make(router *r, task *t) {
    hw_err err;
    char env_id[64];
    if (hw_mp_str(t->msg.root, "env", NULL, env_id, sizeof env_id, &err)) {
        reply_error(t, &err);
        return;
    }
    if (!hw_registry_find(env_id)) {
        reply_fail(t, HW_E_UNKNOWN_ENV, "unknown env '%s' (the envs op lists them)", env_id);
        return;
    }
    /* the caps count per peer (peers.h); a peer at its cap, or a full table, gets a place by
     * reclaiming an idle session (the peer's own, or the heaviest holder's) instead of LIMIT */
    peer *p = t->peer;
    double now = hw_now();
    if (p->sessions >= r->o->max_sessions_per_client) {
        session *old = peers_lru_idle(p, now, r->o->reclaim_idle_s);
        if (!old) {
            reply_fail(t, HW_E_LIMIT, "this client (%s) holds %zu sessions (--max-sessions-per-client), none idle for %gs; close some first",
                       p->label, p->sessions, r->o->reclaim_idle_s);
            return;
        }
        reclaim(r, old, 'p');
    }
    if (r->nsessions >= r->o->max_sessions) {
        peer *h = peers_heaviest_idle(&r->P, now, r->o->reclaim_idle_s);
        session *old = h ? peers_lru_idle(h, now, r->o->reclaim_idle_s) : NULL;
        if (!old) {
            reply_fail(t, HW_E_LIMIT, "the server holds %zu sessions (--max-sessions), none idle for %gs; close some first", r->nsessions,
                       r->o->reclaim_idle_s);
            return;
        }
        reclaim(r, old, 't');
    }
    if (r->mem >= r->o->server_mem) {
        reply_fail(t, HW_E_LIMIT, "the server's sessions hold an estimated %zu MiB (--server-mem-mb %zu); close some first", r->mem >> 20,
                   r->o->server_mem >> 20);
        return;
    }
    if (queue_full(r, t, NULL)) return;
    session *s = calloc(1, sizeof *s);
    if (!s) {
        reply_fail(t, HW_E_LIMIT, "out of memory");
        return;
    }
    if (new_token(s->token)) {
        free(s);
        reply_fail(t, HW_E_INTERNAL, "getrandom failed: %s", strerror(errno));
        return;
    }
    snprintf(s->env_id, sizeof s->env_id, "%s", env_id);
    s->config = NULL; /* the worker converts the request's config (op_make) */
    for (int k = 0; k < OP_COUNT; k++) s->cost_us[k] = 1e9;
    s->worker = least_loaded(r);
    peers_session_add(p, s);
    r->wsessions[s->worker]++;
    table_put(r, s);
    t->s = s;
    dispatch(r, t, s->worker);
}

static bool try_inline(router *r, task *t);
static bool fair_idle(router *r);

/* A request that may queue or reach a worker is charged to its client (peers.h): t->peer, held
 * until finish(). An op answered inline queues nothing and is charged nothing, so it skips this
 * (the client's address, looked up in the message's metadata, and a hash of it per request). */
static void charge_to_peer(router *r, task *t) {
    char label[48];
    bool curve = r->o->curve_secret != NULL;
    uint64_t key = peers_key_of(t, curve, NULL, 0); /* the label only for a new peer */
    if (!(t->peer = peers_get(&r->P, key, NULL, false)))
        t->peer = peers_get(&r->P, peers_key_of(t, curve, label, sizeof label), label, true);
    t->peer->holds++; /* until finish() */
}

/* A request's "id", "v", "op", "session" and "action" in one pass over its keys: each the first
 * entry with that key, as hw_mp_get finds it (five lookups scanned the keys five times) */
static void request_fields(const msgpack_object *root, const msgpack_object *f[5]) {
    for (int j = 0; j < 5; j++) f[j] = NULL;
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object *k = &root->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR) continue;
        const char *s = k->via.str.ptr;
        int j = -1;
        switch (k->via.str.size) {
        case 1: j = s[0] == 'v' ? 1 : -1; break;
        case 2: j = !memcmp(s, "id", 2) ? 0 : !memcmp(s, "op", 2) ? 2 : -1; break;
        case 6: j = !memcmp(s, "action", 6) ? 4 : -1; break;
        case 7: j = !memcmp(s, "session", 7) ? 3 : -1; break;
        }
        if (j >= 0 && !f[j]) f[j] = &root->via.map.ptr[i].val;
    }
}

/* Decodes and routes one request. Replies at once when the router can answer. */
static void on_request(router *r, task *t, bool draining) {
    hw_err err;
    size_t len = zmq_msg_size(&t->body);
    r->requests++;
    memcpy(r->prev_tok, r->cur_tok, sizeof r->prev_tok);
    r->cur_tok[0] = 0;
    t->op = -1;
    if (len > r->o->max_msg) {
        reply_fail(t, HW_E_LIMIT, "message of %zu bytes exceeds the limit of %zu (--max-msg)", len, r->o->max_msg);
        goto answer;
    }
    if (hw_msg_decode_in(&t->msg, zmq_msg_data(&t->body), len, &r->lim, &r->spare_zone, &err)) {
        t->decoded = true;
        reply_error(t, &err);
        goto answer;
    }
    t->decoded = true;
    const msgpack_object *f[5];
    request_fields(t->msg.root, f);
    t->session_o = f[3];
    t->action_o = f[4];
    const msgpack_object *id = f[0];
    if (id && (id->type == MSGPACK_OBJECT_POSITIVE_INTEGER || id->type == MSGPACK_OBJECT_NEGATIVE_INTEGER || id->type == MSGPACK_OBJECT_STR))
        t->id = id;
    else if (id && id->type != MSGPACK_OBJECT_NIL) {
        reply_fail(t, HW_E_BAD_REQUEST, "field 'id' must be an integer or a string");
        goto answer;
    }
    const msgpack_object *v = f[1];
    if (!v) {
        reply_fail(t, HW_E_BAD_REQUEST, "field 'v' (protocol version) is required; this server speaks %d", HW_PROTOCOL_VERSION);
        goto answer;
    }
    if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v->via.u64 != HW_PROTOCOL_VERSION) {
        if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER || v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            reply_fail(t, HW_E_UNSUPPORTED_VERSION, "protocol version %lld is not supported; this server speaks %d",
                       v->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? (long long)v->via.u64 : (long long)v->via.i64, HW_PROTOCOL_VERSION);
        else reply_fail(t, HW_E_UNSUPPORTED_VERSION, "field 'v' must be the integer protocol version (%d)", HW_PROTOCOL_VERSION);
        goto answer;
    }
    const msgpack_object *op = f[2];
    if (!op || op->type != MSGPACK_OBJECT_STR) {
        reply_fail(t, HW_E_BAD_REQUEST, "field 'op' is required (a string)");
        goto answer;
    }
    int o = hw_op_lookup(op->via.str.ptr, op->via.str.size);
    if (o < 0) {
        reply_fail(t, HW_E_UNKNOWN_OP, "unknown op '%.*s'", (int)(op->via.str.size > 40 ? 40 : op->via.str.size), op->via.str.size ? op->via.str.ptr : "");
        goto answer;
    }
    t->op = o;
    if (draining && o != OP_PING && o != OP_HELLO && o != OP_STATS && o != OP_ENVS) {
        reply_fail(t, HW_E_SHUTTING_DOWN, "server is shutting down");
        goto answer;
    }
    switch (o) {
    case OP_HELLO: op_hello(r, t); goto answer;
    case OP_PING: {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        msgpack_packer pk = reply_begin(t, 1);
        hw_pack_cstr(&pk, "time");
        msgpack_pack_double(&pk, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
        goto answer;
    }
    case OP_ENVS: op_envs(t); goto answer;
    case OP_STATS: op_stats(r, t); goto answer;
    default: break;
    }
    switch (o) {
    case OP_MAKE:
        charge_to_peer(r, t);
        route_make(r, t);
        break;
    case OP_EVALUATE_BATCH:
        charge_to_peer(r, t);
        route_batch(r, t);
        break;
    case OP_SPACES:
    case OP_EVALUATE: {
        session *s = lookup(r, t, false, &err);
        if (!s && err.code != HW_OK) {
            reply_error(t, &err);
            break;
        }
        t->s = s;
        if (s && try_inline(r, t)) return;
        charge_to_peer(r, t);
        if (queue_full(r, t, s)) break;
        if (s) dispatch(r, t, session_worker(r, s));
        else { /* session-less: waits in its client's fair queue (fair_pump) */
            charge(r, t);
            peers_push(&r->P, t);
        }
        break;
    }
    default: {
        session *s = lookup(r, t, true, &err);
        if (!s) {
            reply_error(t, &err);
            break;
        }
        t->s = s;
        if (try_inline(r, t)) return;
        charge_to_peer(r, t);
        if (queue_full(r, t, s)) break;
        dispatch(r, t, session_worker(r, s));
        break;
    }
    }
    if (t->dispatched) return; /* a worker owns it now */
answer:
    finish(r, t);
}

/* Session bookkeeping once an op has run (at a worker or inline), then the reply. */
static void after_op(router *r, task *t) {
    session *s = t->s;
    if (s) {
        peers_session_touch(s, t->done > 0 ? t->done : hw_now()); /* keeps its client's list in order of use */
        if ((t->op == OP_MAKE || t->op == OP_CLOSE || t->op == OP_DESTROY) && s->dead) table_del(r, s);
        if (t->op == OP_MAKE && !s->dead && s->in_table && !s->mem_counted) {
            r->mem += s->mem_est;
            s->mem_counted = true;
        }
        if (s->dead && s->inflight == 0 && !s->in_table) {
            session_free(s);
            t->s = NULL;
        }
    }
    finish(r, t);
}

static void on_reply(router *r, task *t) {
    r->inflight--;
    r->wout[t->at]--;
    if (t->fair) {
        r->wsl[t->at]--;
        peer *p = t->op == OP_BATCH_SLICE ? t->b->parent->peer : t->peer;
        if (p) p->running--;
    }
    if (t->op == OP_BATCH_SLICE) { /* batch_route.c */
        batch_slice_back(r, t);
        return;
    }
    if (t->s) t->s->inflight--;
    discharge(r, t);
    after_op(r, t);
}

/* The client is alone: nothing is out at a worker or queued for one, no request is waiting on the
 * socket, and the previous request was this session's own. An op over --inline-us but under
 * --inline-alone-us then runs inline too (dram-v0's whole-trace step: two thread hand-offs saved),
 * since no one waits behind it; another client's request delays it by one such op at most, after
 * which that client's turn breaks the run (prev_tok). */
static bool client_alone(router *r, const session *s, int op) {
    if (!(r->o->inline_us > 0) || !(r->o->inline_alone_us > 0) || !(s->cost_us[op] < r->o->inline_alone_us) || r->inflight || !fair_idle(r) ||
        strcmp(r->prev_tok, s->token))
        return false;
    int ev = 0;
    size_t sz = sizeof ev;
    return zmq_getsockopt(r->sock, ZMQ_EVENTS, &ev, &sz) == 0 && !(ev & ZMQ_POLLIN);
}

/* The inline fast path: an op of a single or vector session whose worker holds no task for it,
 * and whose measured cost for that op is below --inline-us (the first of each op always goes to
 * the worker, which measures it), runs right here on the router thread. This
 * saves two thread hand-offs per request; the session stays pinned to its worker for anything
 * expensive or queued, and ops still run one at a time in arrival order. Ops over --inline-us run
 * here too while their client is alone (client_alone). Every session op passes here first, so it
 * also records the request's session token (cur_tok) that client_alone compares with. */
static bool try_inline(router *r, task *t) {
    session *s = t->s;
    if (!s) return false;
    memcpy(r->cur_tok, s->token, sizeof r->cur_tok);
    if (s->inflight || s->dead || s->kind == SK_MULTI) return false;
    if (t->op != OP_STEP && t->op != OP_RESET && t->op != OP_SPACES && t->op != OP_EVALUATE && t->op != OP_SNAPSHOT &&
        t->op != OP_RESTORE && t->op != OP_DROP_SNAPSHOT)
        return false;
    bool cheap = session_inline_ok(s, t->op, r->o->inline_us);
    if (!cheap && !client_alone(r, s, t->op)) return false;
    r->inlined++;
    r->inlined_alone += !cheap;
    t->inline_alone = !cheap;
    t->inline_run = true;
    reply_spare_give(r, t);
    worker_handle_inline(&r->w[s->worker], t);
    after_op(r, t);
    return true;
}

/* no session-less work queued or at a worker */
static bool fair_idle(router *r) {
    if (r->P.nqueued) return false;
    for (int i = 0; i < r->nw; i++)
        if (r->wsl[i]) return false;
    return true;
}

static void reap(router *r, double now) {
    for (size_t i = 0; i < r->nbuckets; i++) {
        table_ent *e = r->buckets[i];
        while (e) {
            table_ent *n = e->next;
            session *s = e->s;
            if (s->inflight == 0 && now - s->last_active > r->o->session_ttl_s) {
                retire(r, s, now);
                r->reaped++;
                if (r->o->verbose) fprintf(stderr, "hwgym-server: reaped idle session %.8s...\n", s->token);
            }
            e = n;
        }
    }
}

/* Receives one multipart message from the ROUTER socket into a new task (NULL: nothing, or
 * nothing within the socket's ZMQ_RCVTIMEO when `wait`). */
static task *recv_request(router *r, bool wait) {
    task *t = task_new(r);
    /* frames are received in place: the first TASK_MAX_ENVELOPE into t->env, the next into t->body
     * (beyond that each replaces it: the last frame is kept as the body) */
    int n = 0;
    int more = 1;
    bool overflow = false;
    while (more) {
        zmq_msg_t extra, *m = n < TASK_MAX_ENVELOPE ? &t->env[n] : n == TASK_MAX_ENVELOPE ? &t->body : &extra;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, r->sock, n == 0 && !wait ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(m);
            if (n == 0) {
                task_recycle(r, t);
                return NULL;
            }
            break;
        }
        more = zmq_msg_more(m);
        if (n <= TASK_MAX_ENVELOPE) n++;
        else {
            overflow = true;
            zmq_msg_close(&t->body);
            t->body = extra;
        }
    }
    t->t0 = hw_now();
    if (n < 2) { /* no routing id + body: cannot answer */
        zmq_msg_close(&t->env[0]);
        task_recycle(r, t);
        return NULL;
    }
    if (n <= TASK_MAX_ENVELOPE) t->body = t->env[n - 1]; /* the last frame is the body */
    t->nenv = n - 1;
    t->has_body = true;
    if (overflow) {
        t->op = -1;
        reply_fail(t, HW_E_BAD_REQUEST, "too many frames: send one msgpack map per message");
    }
    return t;
}

/* The wait for the next request when nothing is out at a worker. Right after a request was
 * answered (`answered`, at `now`), the router may first poll its socket for up to --spin-us (spin.h
 * decides: not while more clients are stepping than the CPUs allow, nor while backing off): a
 * client stepping in a loop is back within it, and its request is taken without the thread having
 * slept, so without the wake-up that the blocking receive costs (tens of µs on a VM whose idle
 * vCPUs halt; bench/README.md, issue 29). */
static task *recv_waiting(router *r, bool answered, double now) {
    if (answered && hw_spin_should(&r->spin, now)) {
        const double end = now + r->spin.us * 1e-6;
        int ev = 0;
        size_t sz = sizeof ev;
        do { /* ZMQ_EVENTS processes the socket's pending commands: a request that arrived is seen */
            if (zmq_getsockopt(r->sock, ZMQ_EVENTS, &ev, &sz) == 0 && (ev & ZMQ_POLLIN)) {
                task *t = recv_request(r, false);
                if (t) {
                    hw_spin_result(&r->spin, true);
                    return t;
                }
            }
        } while (hw_now() < end);
        hw_spin_result(&r->spin, false);
    }
    return recv_request(r, true);
}

/* One wait while tasks are out at workers (or session-less work is queued): polls the ROUTER
 * socket and the workers' replies, then takes what is ready of both. Counts the workers that
 * stopped in *stopped; -1 when the poll itself failed. */
static int serve_polled(router *r, long timeout, bool draining, int *stopped) {
    zmq_pollitem_t items[2] = {{r->sock, 0, ZMQ_POLLIN, 0}, {r->replies, 0, ZMQ_POLLIN, 0}};
    int rc = zmq_poll(items, 2, timeout);
    if (rc < 0) {
        if (zmq_errno() == EINTR) return 0;
        fprintf(stderr, "hwgym-server: poll: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    if (items[1].revents & ZMQ_POLLIN) {
        task *t;
        while (zmq_recv(r->replies, &t, sizeof t, ZMQ_DONTWAIT) == sizeof t) {
            if (t->op == OP_STOP) {
                r->inflight--;
                r->wout[t->at]--;
                (*stopped)++;
                task_free(t);
                continue;
            }
            on_reply(r, t);
        }
    }
    if (r->P.nqueued) fair_pump(r);
    if (items[0].revents & ZMQ_POLLIN) {
        for (int k = 0; k < 256; k++) {
            task *t = recv_request(r, false);
            if (!t) break;
            if (t->reply.size) finish(r, t);
            else on_request(r, t, draining);
        }
        if (r->P.nqueued) fair_pump(r);
    }
    return 0;
}

int hw_server_run(const hw_server_opts *o, volatile sig_atomic_t *stop) {
    router R;
    router *r = &R;
    memset(r, 0, sizeof R);
    r->o = o;
    hw_deadline_reset_all();
    hw_policy_warn_binds(o);
    r->lim = hw_limits_default;
    r->lim.max_msg = o->max_msg;
    r->lim.max_bin = o->max_msg;
    r->nw = o->workers;
    r->start = hw_now();
    r->rcvtimeo = -2;
    /* polling (spin.h): by default 200 µs while at most one client per two CPUs steps; not with
     * --cpu, where the router would poll on the one CPU its I/O thread needs to deliver the request */
    hw_spin_init(&r->spin, o->spin_us >= 0 ? o->spin_us : o->cpu >= 0 ? 0 : HW_SPIN_DEFAULT_US,
                 o->spin_clients >= 0 ? o->spin_clients : hw_cpu_count() / 2);
    if (o->cache_mb > 0 || o->cache_path) {
        hw_err cerr;
        double mb = o->cache_mb > 0 ? o->cache_mb : 256;
        if (!(r->cache = hw_cache_open_server(o, (size_t)(mb * 1048576.0), &cerr))) {
            fprintf(stderr, "hwgym-server: %s\n", cerr.msg);
            return 2;
        }
    }
    r->nbuckets = 1024;
    r->buckets = calloc(r->nbuckets, sizeof *r->buckets);
    r->wsessions = calloc(3 * (size_t)r->nw, sizeof(int)); /* then wout, wsl */
    r->w = calloc((size_t)r->nw, sizeof(worker));
    r->push = calloc((size_t)r->nw, sizeof(void *));
    if (!r->buckets || !r->wsessions || !r->w || !r->push) abort();
    r->wout = r->wsessions + r->nw;
    r->wsl = r->wout + r->nw;

    hw_auth *auth = NULL;
    if (o->curve_secret && !(auth = hw_auth_load(o->curve_secret, o->curve_allow))) {
        free(r->buckets);
        free(r->wsessions);
        free(r->w);
        free(r->push);
        return 2;
    }
    r->zctx = zmq_ctx_new();
    if (o->cpu >= 0 && hw_cpu_io(r->zctx, o->cpu) != 0) /* before the first socket starts the I/O thread */
        fprintf(stderr, "hwgym-server: --cpu %d: cannot place ZeroMQ's I/O thread: %s\n", o->cpu, zmq_strerror(zmq_errno()));
    r->sock = zmq_socket(r->zctx, ZMQ_ROUTER);
    if (auth && hw_auth_apply(auth, r->zctx, r->sock) != 0) {
        zmq_close(r->sock);
        zmq_ctx_term(r->zctx);
        hw_auth_free(auth);
        free(r->buckets);
        free(r->wsessions);
        free(r->w);
        free(r->push);
        return 2;
    }
    int64_t maxmsg = (int64_t)o->max_msg + (1 << 20);
    zmq_setsockopt(r->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    int linger = 2000, hwm = 100000;
    zmq_setsockopt(r->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(r->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(r->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    char bound[HW_MAX_BINDS][256];
    for (int i = 0; i < o->nbinds; i++) {
        bound[i][0] = 0;
        if (zmq_bind(r->sock, o->binds[i]) == 0) {
            size_t blen = sizeof bound[i];
            if (zmq_getsockopt(r->sock, ZMQ_LAST_ENDPOINT, bound[i], &blen) != 0) bound[i][0] = 0;
        } else {
            fprintf(stderr, "hwgym-server: cannot bind %s: %s\n", o->binds[i], zmq_strerror(zmq_errno()));
            zmq_close(r->sock);
            zmq_ctx_term(r->zctx);
            hw_auth_free(auth);
            free(r->buckets);
            free(r->wsessions);
            free(r->w);
            free(r->push);
            return 2;
        }
    }
    r->replies = zmq_socket(r->zctx, ZMQ_PULL);
    int zero = 0;
    zmq_setsockopt(r->replies, ZMQ_RCVHWM, &zero, sizeof zero);
    zmq_bind(r->replies, "inproc://hwgym-replies");
    for (int i = 0; i < r->nw; i++) {
        r->w[i].mem_used = &r->mem_used;
        if (worker_start(&r->w[i], i, r->zctx, o) != 0) {
            fprintf(stderr, "hwgym-server: cannot start worker %d\n", i);
            return 2;
        }
        char ep[64];
        snprintf(ep, sizeof ep, "inproc://hwgym-worker-%d", i);
        r->push[i] = zmq_socket(r->zctx, ZMQ_PUSH);
        zmq_setsockopt(r->push[i], ZMQ_SNDHWM, &zero, sizeof zero);
        zmq_connect(r->push[i], ep);
        if (o->cpu >= 0 && hw_cpu_worker(r->w[i].th, o->cpu) != 0)
            fprintf(stderr, "hwgym-server: --cpu %d: cannot move worker %d off that CPU\n", o->cpu, i);
    }
    /* last: threads started from here on (none) would inherit the one CPU */
    if (o->cpu >= 0 && hw_cpu_router(o->cpu) != 0) fprintf(stderr, "hwgym-server: --cpu %d: cannot place the router thread\n", o->cpu);
    /* always, -v or not: what a user needs to connect (the endpoints as bound: a tcp port 0 or
     * a wildcard shows the port and address the system picked) */
    fprintf(stderr, "hwgym-server %s: %d workers, %d envs, ", HW_VERSION_STRING, r->nw, hw_registry_count());
    if (o->cpu >= 0) fprintf(stderr, "router and I/O thread on CPU %d, ", o->cpu);
    if (r->spin.us && r->spin.max_clients)
        fprintf(stderr, "polling %d us after each reply while at most %d client%s step, ", r->spin.us, r->spin.max_clients,
                r->spin.max_clients == 1 ? "" : "s");
    fprintf(stderr, "listening on");
    for (int i = 0; i < o->nbinds; i++) fprintf(stderr, " %s", bound[i][0] ? bound[i] : o->binds[i]);
    fprintf(stderr, "\n");

    bool draining = false, cancelled = false, answered = false; /* answered: the last turn answered a request */
    double drain_deadline = 0;
    int stopped = 0;
    bool stops_sent = false;
    double reap_every = o->session_ttl_s / 4;
    if (reap_every > 1.0) reap_every = 1.0;
    if (reap_every < 0.01) reap_every = 0.01;
    double now = hw_now(), next_reap = now + reap_every;
    for (;;) {
        if (draining && !cancelled && hw_now() >= drain_deadline) {
            /* the drain deadline: every env loop that checks the request deadline gives up now */
            cancelled = true;
            hw_deadline_cancel_all();
            fprintf(stderr, "hwgym-server: drain deadline (%gs) passed with %lld tasks in flight: cancelling them\n", o->drain_timeout_s,
                    (long long)r->inflight);
        }
        if (cancelled && o->hard_exit && hw_now() >= drain_deadline + 5) {
            fprintf(stderr, "hwgym-server: %lld tasks still running 5 s after the drain deadline: exiting without them\n",
                    (long long)r->inflight);
            _exit(3);
        }
        if (*stop && !draining) {
            draining = true;
            drain_deadline = hw_now() + o->drain_timeout_s;
            if (o->verbose) fprintf(stderr, "hwgym-server: draining %lld tasks in flight\n", (long long)r->inflight);
        }
        if (draining && !stops_sent && fair_idle(r)) { /* the queued session-less work is done: stop the workers */
            stops_sent = true;
            for (int i = 0; i < r->nw; i++) {
                task *t = calloc(1, sizeof *t);
                if (!t) abort();
                t->op = OP_STOP;
                dispatch(r, t, i);
            }
        }
        if (draining && stopped == r->nw && r->inflight == 0) break;
        /* `now` is the end of the last iteration (below): no wait since */
        long timeout = (long)((next_reap - now) * 1000.0);
        if (timeout < 0) timeout = 0;
        if (timeout > 100) timeout = 100;
        r->now = 0; /* set again by a request answered in this turn (finish) */
        if (!r->inflight && !r->P.nqueued) {
            /* Nothing is out at a worker, so no reply can come: wait on the ROUTER socket alone,
             * in a blocking receive bounded by the same timeout. This is the raw echo's own wait;
             * zmq_poll over both sockets plus a non-blocking receive cost about eight more
             * system calls per request (each socket's mailbox checked before and after the poll). */
            int to = (int)timeout;
            if (to != r->rcvtimeo) { /* mostly the 100 ms cap: set once, not per request */
                zmq_setsockopt(r->sock, ZMQ_RCVTIMEO, &to, sizeof to);
                r->rcvtimeo = to;
            }
            task *t = recv_waiting(r, answered, now);
            if (t) {
                if (t->reply.size) finish(r, t);
                else on_request(r, t, draining);
                if (r->P.nqueued) fair_pump(r);
            }
        } else if (serve_polled(r, timeout, draining, &stopped) < 0)
            *stop = 1;
        answered = r->now > 0;
        now = answered ? r->now : hw_now(); /* a request just answered read the clock already */
        if (!draining && now >= next_reap) {
            reap(r, now);
            next_reap = now + reap_every;
        }
    }
    for (int i = 0; i < r->nw; i++) worker_join(&r->w[i]);
    /* workers are gone: free what is left */
    for (size_t i = 0; i < r->nbuckets; i++) {
        table_ent *e = r->buckets[i];
        while (e) {
            table_ent *n = e->next;
            if (!e->s->dead) session_destroy_envs(e->s);
            session_free(e->s);
            free(e);
            e = n;
        }
    }
    peers_free_all(&r->P);
    for (int i = 0; i < r->nw; i++) zmq_close(r->push[i]);
    zmq_close(r->replies);
    zmq_close(r->sock);
    zmq_ctx_term(r->zctx);
    hw_auth_free(auth);
    hw_cache_close(r->cache);
    msgpack_sbuffer_destroy(&r->spare);
    free(r->spare_task);
    if (r->spare_zone) msgpack_zone_free(r->spare_zone);
    free(r->buckets);
    free(r->wsessions);
    free(r->w);
    free(r->push);
    if (o->verbose) fprintf(stderr, "hwgym-server: stopped cleanly\n");
    return 0;
}
