/* router_core.c - the router thread's task core (router_int.h), below router.c and the files
 * that run on the router thread beside it (batch_route.c, stats.c): freeing tasks, sending
 * replies and finishing a request (latency, peer release), the bounded queues and their
 * charges, handing a task to a worker, and finding a request's session. Calls down only (the
 * session table, peers, op names, the latency histograms). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "router_int.h"

/* what a task holds, freed; the record itself stays */
static void task_clear(task *t) {
    for (int i = 0; i < t->nenv; i++) zmq_msg_close(&t->env[i]);
    if (t->decoded) hw_msg_free(&t->msg);
    if (t->has_body) zmq_msg_close(&t->body);
    msgpack_sbuffer_destroy(&t->reply);
    json_decref(t->info_hold);
}

void task_free(task *t) {
    task_clear(t);
    free(t);
}

task *task_new(router *r) {
    task *t = r->spare_task;
    if (t) {
        r->spare_task = NULL;
        memset(t, 0, offsetof(task, env)); /* the frames after it are set as they arrive (task.h) */
        return t;
    }
    if (!(t = calloc(1, sizeof *t))) abort();
    return t;
}

void task_recycle(router *r, task *t) {
    /* the request's decode zone, when fit to be reused (hw_msg_decode_in), is the next one's */
    msgpack_zone *z = t->decoded ? t->msg.up.zone : NULL;
    if (z && !r->spare_zone && z->chunk_size >= HW_MSG_ZONE_REUSE && z->chunk_size <= 4 * HW_MSG_ZONE_REUSE) {
        r->spare_zone = z;
        t->msg.up.zone = NULL;
    }
    task_clear(t);
    if (r->spare_task) free(t);
    else r->spare_task = t;
}

static void free_buf(void *data, void *hint) {
    (void)hint;
    free(data);
}

/* replies up to this size are sent as a copy (zmq_send: one small allocation inside ZeroMQ) and
 * their buffer kept as the router's spare; larger ones go zero-copy, ZeroMQ freeing the buffer */
#define REPLY_COPY_MAX 4096
#define SPARE_MAX ((size_t)64 << 10)

void reply_spare_give(router *r, task *t) {
    if (!r->spare.data || t->reply.data) return;
    t->reply = r->spare;
    t->reply.size = 0;
    msgpack_sbuffer_init(&r->spare);
}

static void send_reply(router *r, task *t) {
    if (!t->nenv || !t->reply.size) return; /* internal task, or nothing to say */
    /* the envelope's frames themselves: a sent frame is moved out (left empty for task_free) */
    for (int i = 0; i < t->nenv; i++)
        if (zmq_msg_send(&t->env[i], r->sock, ZMQ_SNDMORE) < 0) return; /* peer gone */
    t->nenv = 0; /* every envelope frame sent, which leaves none to close (zmq_msg_close(3)) */
    if (t->reply.size <= REPLY_COPY_MAX) {
        zmq_send(r->sock, t->reply.data, t->reply.size, 0);
        if (!r->spare.data && t->reply.alloc <= SPARE_MAX) {
            r->spare = t->reply;
            msgpack_sbuffer_init(&t->reply);
        }
        return;
    }
    zmq_msg_t m;
    zmq_msg_init_data(&m, t->reply.data, t->reply.size, free_buf, NULL);
    t->reply.data = NULL;
    t->reply.size = t->reply.alloc = 0;
    if (zmq_msg_send(&m, r->sock, 0) < 0) zmq_msg_close(&m);
}

void finish(router *r, task *t) {
    double now = t->done > 0 ? t->done : hw_now(); /* an inline op's end (worker.c): no second reading */
    r->now = now;
    if (t->op >= 0 && t->op < OP_COUNT) hw_hist_add(&r->hist[t->op], (now - t->t0) * 1e6);
    else if (t->op < 0) hw_hist_add(&r->hist_bad, (now - t->t0) * 1e6);
    if (t->failed) r->errors++;
    if (t->op == OP_STEP && !t->failed) r->steps++;
    /* a client counts for the polling gate by its work, not by a ping, hello, envs or stats (a
     * readiness probe or a monitor would otherwise stop the polls for a second); before the send,
     * which moves the routing id's frame */
    if (t->op >= OP_MAKE && t->op < OP_COUNT && t->nenv > 0) hw_spin_seen(&r->spin, zmq_msg_data(&t->env[0]), zmq_msg_size(&t->env[0]), now);
    send_reply(r, t);
    peer *p = t->peer; /* held by the task since on_request */
    task_recycle(r, t);
    if (p) {
        p->holds--;
        peers_gc(&r->P, p);
    }
}

size_t task_bytes(const task *t) { return t->has_body ? zmq_msg_size((zmq_msg_t *)&t->body) : 0; }

/* Bounded queues: refuses (LIMIT) a request whose bytes would push the bytes held by queued
 * requests of its session or of the whole server over the operator's limits. */
bool queue_full(router *r, task *t, session *s) {
    size_t n = task_bytes(t);
    if (r->queued + n > r->o->max_queued) {
        reply_fail(t, HW_E_LIMIT, "the server holds %zu bytes of queued requests (--max-queued-mb); retry later", r->queued);
        return true;
    }
    if (s && t->op != OP_CLOSE && s->queued + n > r->o->max_queued_session) { /* close always gets through */
        reply_fail(t, HW_E_LIMIT, "this session holds %zu bytes of queued requests (--max-queued-session-mb); wait for replies", s->queued);
        return true;
    }
    if (t->peer && t->op != OP_CLOSE && t->peer->queued + n > r->o->max_queued_peer) {
        reply_fail(t, HW_E_LIMIT, "this client (%s) holds %zu bytes of queued requests (--max-queued-peer-mb); wait for replies",
                   t->peer->label, t->peer->queued);
        return true;
    }
    return false;
}

void charge(router *r, task *t) {
    size_t n = task_bytes(t);
    r->queued += n;
    if (t->s) {
        t->s->queued += n;
        peers_session_touch(t->s, hw_now());
    }
    if (t->peer) t->peer->queued += n;
    t->dispatched = true;
}

void discharge(router *r, task *t) {
    size_t n = task_bytes(t);
    r->queued -= n;
    if (t->s) t->s->queued -= n;
    if (t->peer) t->peer->queued -= n;
}

static bool is_fair(const task *t) {
    return t->op == OP_BATCH_SLICE || (!t->s && (t->op == OP_EVALUATE || t->op == OP_SPACES));
}

void send_task(router *r, task *t, int wi) {
    if (t->s) t->s->inflight++;
    r->inflight++;
    r->wout[wi]++;
    t->fair = is_fair(t);
    if (t->fair) {
        r->wsl[wi]++;
        peer *p = t->op == OP_BATCH_SLICE ? t->b->parent->peer : t->peer;
        if (p) p->running++;
    }
    t->at = wi;
    t->dispatched = true;
    t->next = NULL;
    while (zmq_send(r->push[wi], &t, sizeof t, 0) < 0 && errno == EINTR) {
    }
}

void dispatch(router *r, task *t, int wi) {
    charge(r, t);
    send_task(r, t, wi);
}

session *lookup(router *r, task *t, bool required, hw_err *err) {
    char tok[80];
    const msgpack_object *o = t->session_o;
    if (!o || o->type == MSGPACK_OBJECT_NIL) {
        if (required) hw_fail(err, HW_E_BAD_REQUEST, "field 'session' is required for %s", hw_op_name_of(t->op));
        else hw_err_clear(err);
        return NULL;
    }
    /* a known session's token, looked up in place (the string was checked as UTF-8 by the decoder;
     * a token holds no NUL); anything else takes the checked copy, for its error message */
    session *s = o->type == MSGPACK_OBJECT_STR && o->via.str.size ? table_getn(r, o->via.str.ptr, o->via.str.size) : NULL;
    if (s) return s;
    if (hw_mp_str(t->msg.root, "session", NULL, tok, sizeof tok, err)) return NULL;
    s = table_get(r, tok);
    char why = s ? 0 : peers_reclaimed(&r->P, tok);
    if (why)
        hw_fail(err, HW_E_UNKNOWN_SESSION,
                "session '%.40s' was reclaimed while idle: %s, and it was the least recently used idle session of %s; make a new one",
                tok, why == 'p' ? "its client reached --max-sessions-per-client" : "the server's session table was full (--max-sessions)",
                why == 'p' ? "that client" : "the client holding the most sessions");
    else if (!s) hw_fail(err, HW_E_UNKNOWN_SESSION, "unknown session '%.40s' (closed, reaped after the TTL, or never made)", tok);
    return s;
}
