/* worker.h - worker threads: each owns the sessions pinned to it and runs their ops in order,
 * so a session needs no locks, while sessions on different workers step at the same time.
 * Owns: the op handlers (make, reset, step, close, spaces, evaluate; snapshots are in
 * snapshot.c, multi-agent barriers and their timeouts in multi.c, evaluate_batch slices in
 * batch_slice.c), the worker loop, and a
 * small per-worker cache of envs used for session-less evaluate/spaces and evaluate_batch. */
#ifndef HW_WORKER_H
#define HW_WORKER_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/hw_files.h"
#include "server.h"
#include "session.h"
#include "task.h"

#define WORKER_CACHE 8

typedef struct batch_range {
    int64_t lo, hi;
    struct batch_range *next;
} batch_range;

typedef struct batch {
    task *parent;
    int64_t n;
    const msgpack_object *list;  /* points as a msgpack array, or */
    hw_array grid;               /* points as a 2-D wire array */
    char env_id[64];
    json_t *config;              /* the session's config, or NULL: then each slice converts config_mp */
    const msgpack_object *config_mp; /* session-less: the request's "config" (NULL/nil = none) */
    bool timed_out;              /* a slice hit the request deadline (router-owned) */
    double *rewards;
    json_t **metrics;
    json_t **errors;
    int pending;                 /* slices not yet back, +1 while points are left to cut (router-owned) */
    /* fair slicing (router-owned; batch_route.c): slices are cut when a worker is free */
    int64_t next;                /* the next point to cut */
    struct batch_range *rem;     /* ranges a slice left when its time budget ran out */
    double cost_s;               /* measured seconds per point; < 0 until a slice is back */
    double setup_s;              /* the longest a slice took to get its env (a worker without it builds it) */
    bool measured;               /* cost_s is this batch's own (else remembered from the client's last one) */
    uint64_t work;               /* its env and config (peers_work_key), 0: not remembered */
    int cut, max_slices;         /* slices cut; the lean form's slice lists */
    bool queued;                 /* the parent waits in its client's fair queue */
    struct lean_batch *lean;     /* a lean evaluate_batch (batch.h), or NULL */
} batch;

typedef struct worker {
    int index;
    pthread_t th;
    void *zctx;
    void *pull;                  /* tasks from the router */
    void *push;                  /* tasks back to the router */
    const hw_server_opts *opts;
    hw_files files;              /* the server's file policy for env configs (policy.h) */
    struct {
        char *key;
        const hw_env_family *fam;
        void *env;
        uint64_t used;
    } cache[WORKER_CACHE];
    uint64_t tick;
    session *barriers;           /* sessions with an open multi-agent barrier */
    atomic_ullong env_steps;
    atomic_int nsessions;
    atomic_llong nsnapshots;     /* snapshots held by this worker's sessions (stats) */
    atomic_llong *mem_used;      /* the server's: estimated bytes reserved by live sessions' envs
                                  * (--server-mem-mb), shared by every worker; set by the router */
} worker;

/* Binds/connects the inproc sockets (call from the router thread) and starts the thread. */
int worker_start(worker *w, int index, void *zctx, const hw_server_opts *opts);
void worker_join(worker *w);
/* Frees a session's envs and snapshots (worker-side); used by the worker and at shutdown. */
void session_destroy_envs(session *s);
double hw_now(void);
/* Runs one task's op (make, reset, step, ...). Returns true when the task is held (a
 * multi-agent part waiting for its barrier). Called by the worker thread, and by the router
 * for its inline fast path when the session has no task in flight. */
bool worker_handle(worker *w, task *t);
/* The same, run by the router thread (its inline fast path): times the op on the wall clock
 * (see worker.c's worker_handle_timed). */
bool worker_handle_inline(worker *w, task *t);

#endif
