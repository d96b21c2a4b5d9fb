/* router_int.h - router internals shared by the files that run on the router thread (router.c,
 * batch_route.c, stats.c); not used by the workers. Owns: the router record and the session
 * table's entry types; declarations of router_core.c's task helpers, table.c's session table and
 * the fair pump. */
#ifndef HW_ROUTER_INT_H
#define HW_ROUTER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "hw_codec.h"
#include "peers.h"
#include "server.h"
#include "spin.h"
#include "stats.h"
#include "worker.h"

/* ---------------------------------------------------------------- session table */

typedef struct table_ent {
    session *s;
    struct table_ent *next;
} table_ent;

typedef struct router {
    const hw_server_opts *o;
    hw_limits lim;
    void *zctx, *sock, *replies;
    void **push;
    worker *w;
    int nw;
    int *wsessions;           /* sessions assigned per worker */
    table_ent **buckets;
    size_t nbuckets, nsessions;
    int64_t inflight;         /* tasks out at workers */
    size_t queued;            /* request bytes held by tasks out at workers (--max-queued-mb) */
    size_t mem;               /* estimated bytes held by all sessions' envs (--server-mem-mb) */
    atomic_llong mem_used;    /* the same, reserved by the workers at make: the budget's real check */
    double start;
    uint64_t requests, errors, reaped, steps;
    hw_hist hist[OP_COUNT];
    hw_hist hist_bad;         /* requests rejected before an op was known */
    peers P;                  /* clients: per-peer sessions, queued bytes, the fair queue (peers.h) */
    int *wout;                /* tasks out at each worker */
    int *wsl;                 /* session-less (fair) tasks out at each worker: at most one */
    uint64_t inlined;         /* ops run on the router thread (the inline fast path) */
    uint64_t inlined_alone;   /* of which over --inline-us, run because their client was alone */
    hw_spin spin;             /* whether to poll for the next request before sleeping (--spin-us; spin.h) */
    char prev_tok[33];        /* the session token of the previous request ("" if it had none) */
    char cur_tok[33];         /* ... and of the request being handled */
    uint64_t reclaimed;       /* idle sessions reclaimed for a make (a full table or a peer at its cap) */
    hw_cache *cache;          /* evaluation cache (--cache-mb > 0), or NULL */
    task *spare_task;         /* a finished request's task record, for the next (task_new) */
    msgpack_zone *spare_zone; /* and its decode zone (hw_msg_decode_in) */
    msgpack_sbuffer spare;    /* a sent reply's buffer, kept for the next inline op's (reply_spare_give) */
    int rcvtimeo;             /* the ROUTER socket's ZMQ_RCVTIMEO as last set (-2: not yet) */
    double now;               /* the clock as finish() last read it (0: not since the main loop cleared it) */
    session *last_found;      /* the session table_getn found last, while it is in the table (table.c) */
} router;

/* the session table (table.c) */
session *table_get(router *r, const char *tok);
/* the same for a token of n bytes, not NUL-terminated (a request's string, in place) */
session *table_getn(router *r, const char *tok, size_t n);
void table_put(router *r, session *s);
/* out of the table: its worker's and its peer's counts, its memory estimate */
void table_del(router *r, session *s);
void session_free(session *s);
/* 32 hex characters from getrandom; -1 on failure */
int new_token(char out[33]);

void task_free(task *t);
/* A zeroed task for a request: the router's spare record (the last finished one) or a new one;
 * task_recycle frees what a finished task holds and keeps its record as the spare. */
task *task_new(router *r);
void task_recycle(router *r, task *t);
/* Hands the router's spare reply buffer (if any) to t, whose reply is empty: reply_begin reuses it. */
void reply_spare_give(router *r, task *t);
/* records the op's latency, sends the reply (if any) and frees the task */
void finish(router *r, task *t);
size_t task_bytes(const task *t);
/* Bounded queues: refuses (LIMIT) a request whose bytes would push the bytes held by queued
 * requests of its session or of the whole server over the operator's limits. */
bool queue_full(router *r, task *t, session *s);
void dispatch(router *r, task *t, int wi);
/* Charges a request's bytes to the server, its session and its peer (dispatch does it; a batch
 * or a queued session-less task is charged when accepted), and undoes it when it is answered. */
void charge(router *r, task *t);
void discharge(router *r, task *t);
/* Hands t to worker wi without charging (a slice, or a queued task charged when accepted). */
void send_task(router *r, task *t, int wi);
/* Fair scheduling (batch_route.c): hands queued session-less work to free workers. */
void fair_pump(router *r);
/* the request's session ("session" field); required: an error when absent */
session *lookup(router *r, task *t, bool required, hw_err *err);

/* the stats op (stats.c) */
void op_stats(router *r, task *t);

#endif
