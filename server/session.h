/* session.h - a session: one env (single), N envs (vector) or one env shared by named agents
 * (multi-agent), with its snapshots. Fields are split by owner: the router thread owns the
 * routing part (token, worker, activity, inflight count); the worker the session is pinned to
 * owns everything else. The worker sets `dead` before handing back the task that destroyed the
 * env; the router frees the struct once `dead` and no task is in flight. */
#ifndef HW_SESSION_H
#define HW_SESSION_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "env.h"
#include "task.h"

typedef enum { SK_SINGLE, SK_VECTOR, SK_MULTI } sess_kind;

typedef struct agent {
    char name[64];
    int ndims;
    int *dims;
    hw_space *space;     /* MultiDiscrete over its dims */
    task *held;          /* its part of the current barrier, awaiting the reply */
    bool has_seed;
    uint64_t seed;
} agent;

typedef struct snap_rec {
    int64_t id;
    void **snaps;        /* one per env */
    bool *started, *needs_reset;
} snap_rec;

typedef struct session {
    /* router-owned */
    char token[33];
    int worker;
    double last_active;
    int inflight;
    bool in_table;
    struct peer *peer;   /* the client (peers.h) that made it; NULL once out of the table */
    struct session *lru_prev, *lru_next; /* its peer's sessions, least recently used first */
    char env_id[64];
    json_t *config;      /* as given to make: converted by the worker in make (the router thread
                          * never converts configs), then read by the router for evaluate_batch */
    bool dead;           /* set by the worker when the envs are gone */
    size_t queued;       /* request bytes dispatched to the worker and not yet answered */
    bool mem_counted;    /* mem_est is in the router's server-wide total */
    size_t mem_est;      /* worker-written at make (read by the router after the reply) */
    double cost_us[OP_COUNT]; /* EWMA of this session's time per op; 1e9 until measured */
    bool cost_check[OP_COUNT]; /* an inline run's wall time exceeded --inline-us: the next run of
                                * the op is timed on the CPU clock (session_time_on_cpu) */
    /* worker-owned */
    sess_kind kind;
    const hw_env_family *fam;
    int num_envs;
    void **envs;
    bool *started;       /* reset at least once */
    bool *needs_reset;   /* vector autoreset pending (Gymnasium next-step) */
    const hw_space *aspace, *ospace;
    int64_t anumel;
    int64_t *ibuf;       /* action scratch, num_envs * anumel */
    double *fbuf;
    /* vector obs stacking */
    int obs_fields;
    char *stack[HW_OBS_MAX_FIELDS];
    size_t stack_cap[HW_OBS_MAX_FIELDS];
    double *rewards;
    uint8_t *terms, *truncs;
    json_t **infos;
    /* multi-agent */
    int nagents;
    agent *agents;
    int barrier_op;      /* 0, OP_RESET or OP_STEP */
    int nparts;
    double deadline;     /* monotonic seconds */
    int64_t timeout_ms;
    struct session *barrier_next; /* worker's list of sessions with an open barrier */
    /* snapshots */
    int nsnaps;
    snap_rec *snaps;
    int64_t next_snap;
    int max_snapshots;
    atomic_llong *snap_ctr; /* the worker's snapshot count (stats), set at make */
    atomic_llong *mem_ctr;  /* the server's reserved env bytes this session holds mem_est of (make) */
    size_t max_values;      /* bound on JSON values converted per request (options) */
    size_t reply_hint;      /* bytes of its last single reset/step reply: run_single reserves them */
} session;

/* The inline fast path's rule (router.c): op `op` of `s` may run on the router thread when its
 * measured cost is under --inline-us. An inline run is timed on the wall clock (no system call), a
 * bound of its CPU time from above; when that bound went over --inline-us (cost_check: preemption
 * or real cost) the next run still goes inline but is timed on the thread's CPU clock, which
 * decides (two clock system calls on that run only, where sending it to the worker cost two
 * thread hand-offs, ~100 us on a loaded VM). A worker always times ops on its CPU clock. */
static inline bool session_inline_ok(const session *s, int op, double inline_us) { return s->cost_us[op] < inline_us; }
static inline bool session_time_on_cpu(const session *s, int op, bool on_router) { return !on_router || s->cost_check[op]; }

#endif
