/* task.h - the unit of work passed between the router thread and the workers.
 * Owns: the op enum and the task record. A task is created by the router for each request
 * (or for internal work: destroy a reaped session, score a slice of an evaluate_batch, stop),
 * handed to exactly one worker by pointer over inproc, and handed back once with a reply.
 * Ownership moves with the pointer, so no field is ever touched by two threads at once. */
#ifndef HW_TASK_H
#define HW_TASK_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <zmq.h>

#include "hw_codec.h"

typedef enum hw_op {
    OP_HELLO, OP_PING, OP_ENVS, OP_STATS, OP_MAKE, OP_SPACES, OP_RESET, OP_STEP, OP_CLOSE,
    OP_SNAPSHOT, OP_RESTORE, OP_DROP_SNAPSHOT, OP_EVALUATE, OP_EVALUATE_BATCH, OP_JOIN,
    OP_COUNT,
    /* internal */
    OP_DESTROY = OP_COUNT, OP_BATCH_SLICE, OP_STOP
} hw_op_t;

const char *hw_op_name_of(int op);
int hw_op_lookup(const char *name, size_t len); /* -1 when unknown */

struct session;
struct batch;
struct peer;

#define TASK_MAX_ENVELOPE 4

typedef struct task {
    int op;
    int nenv;                          /* frames held in env[] */
    bool has_body, decoded;            /* body holds a frame; msg was decoded from it */
    hw_msg msg;
    const msgpack_object *id;          /* echoed in the reply (may be NULL) */
    const msgpack_object *session_o;   /* the request's "session" and "action" values (NULL when */
    const msgpack_object *action_o;    /* absent), found with its other fields (router.c on_request) */
    struct session *s;
    double t0;                         /* receipt time (monotonic seconds) */
    double done;                       /* when an inline op ended, timed on the wall clock (0: not so):
                                          the router's bookkeeping after it reads no clock again */
    msgpack_sbuffer reply;             /* packed reply; empty = no reply to send */
    bool failed;                       /* the reply is an error */
    bool dispatched;                   /* set by the router before handing it to a worker; never written by workers */
    struct peer *peer;                 /* the client it came from (peers.h; router-owned), NULL for internal tasks */
    bool fair;                         /* session-less work: queued per peer, at most one per worker (router-owned) */
    int at;                            /* the worker it was handed to (router-owned) */
    /* evaluate_batch slices */
    struct batch *b;
    int64_t lo, hi;
    int slice;                         /* this slice's number in its batch */
    double budget_s;                   /* a slice stops between points after this much work (0: no limit): */
    int64_t chunk;                     /* a lean slice's first chunk of points (doubling after it) */
    int64_t stop;                      /* the worker sets where it stopped (hi when it did them all) */
    double run_s;                      /* and how long it ran, and how much of that went to getting */
    double setup_s;                    /* its env (a config the worker had not built yet) */
    struct task *next;                 /* worker-side held lists */
    /* the inline fast path (router.c): the op runs on the router thread, which frees what the
     * reply no longer needs (the step's info object) only after the reply is sent */
    bool inline_run;
    bool inline_alone;                 /* over --inline-us, run inline because its client was alone:
                                          timed on the CPU clock (worker_handle_timed) */
    json_t *info_hold;                 /* freed by task_free */
    /* last, and not zeroed by the router's task_new (zmq_msg_init sets each frame it receives):
     * only nenv frames of env and body when has_body are valid */
    zmq_msg_t env[TASK_MAX_ENVELOPE]; /* routing id (+ empty delimiter for REQ peers) */
    zmq_msg_t body;                    /* the raw request; hw_msg points into it */
} task;

#endif
