/* hwgym_client.h - libhwgym, the C client of hwgym-server (protocol/PROTOCOL.md).
 * Owns: a context shared by threads, clients (one ZeroMQ DEALER each) with a blocking call per
 * op and a per-call timeout, sessions (single, vector, multi-agent) and their results.
 *
 * Errors: every call returns 0 or -1 and fills hw_err with the server's code and message
 * (hw_code_from_name of the wire code), or HW_E_IO for a transport failure or a client-side
 * timeout ("timeout after 5000 ms waiting for the reply to step"). A reply that arrives after
 * its call timed out is recognised by its id and dropped by the next call. A server that exits,
 * hangs or becomes unreachable fails a call within about a second with HW_E_IO ("... the
 * connection to hwgym-server at EP was lost ..."), not after the timeout (hwgym_link.h).
 *
 * Threads: one hwc_ctx may be shared by any number of threads. The usual pattern is one
 * hwc_client per thread; a client shared by threads is also safe (calls are serialised by
 * the client's mutex). Results and sessions are plain data owned by the caller.
 * docs/c-client.md has a complete example. */
#ifndef HWGYM_CLIENT_H
#define HWGYM_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_array.h"
#include "hw_error.h"

typedef struct hwc_ctx hwc_ctx;
typedef struct hwc_client hwc_client;

hwc_ctx *hwc_ctx_new(void);
/* Frees the context; every client made from it must be closed first. */
void hwc_ctx_free(hwc_ctx *ctx);

/* Connects a client to `endpoint` (tcp://host:port or ipc://path). ctx may be NULL: the
 * client then owns a private context. timeout_ms is the default per-call timeout
 * (<= 0: 30000). Connecting is lazy (ZeroMQ); hwc_hello() checks the server is there. */
hwc_client *hwc_connect(hwc_ctx *ctx, const char *endpoint, int timeout_ms, hw_err *err);
void hwc_disconnect(hwc_client *c);
void hwc_set_timeout(hwc_client *c, int timeout_ms);
const char *hwc_endpoint(const hwc_client *c);

/* ---- generic call ----
 * Sends {"op", "v", "id"} plus every field of `fields` (a JSON object or NULL) and returns the
 * reply (ok == true) as JSON with wire arrays as flat number lists. *reply is new (decref it). */
int hwc_call(hwc_client *c, const char *op, const json_t *fields, json_t **reply, hw_err *err);

/* ---- service ops ---- */
/* hello: checks the server speaks our protocol version; *reply (may be NULL) gets the reply. */
int hwc_hello(hwc_client *c, json_t **reply, hw_err *err);
int hwc_ping(hwc_client *c, double *server_time, hw_err *err);
/* envs: *envs = [{"id","summary"},...] (new reference). */
int hwc_envs(hwc_client *c, json_t **envs, hw_err *err);
int hwc_stats(hwc_client *c, json_t **stats, hw_err *err);

/* ---- sessions ---- */
typedef struct hwc_session {
    char token[80];
    char env[128];
    char kind[16];       /* "single" | "vector" | "multi" */
    char agent[128];     /* set by hwc_join: reset/step then act as this agent */
    int num_envs;        /* 1 unless vector */
    int64_t act_numel;   /* action elements per env */
    int64_t obs_numel;   /* flattened observation elements per env */
    json_t *action_space, *observation_space; /* JSON form (hw_space.h); the agent's part after join */
    json_t *reply;       /* the whole make/join reply */
} hwc_session;

typedef struct hwc_make_opts {
    int num_envs;              /* > 1: vector session */
    const json_t *agents;      /* [{"name","dims":[...]}]: multi-agent session */
    int agent_timeout_ms;      /* multi-agent barrier timeout (0: server default) */
} hwc_make_opts;

/* config and opts may be NULL. On success *s is filled (free it with hwc_session_free). */
int hwc_make(hwc_client *c, const char *env, const json_t *config, const hwc_make_opts *opts, hwc_session *s, hw_err *err);
/* Joins a multi-agent session as `agent`; s gets that agent's action space. */
int hwc_join(hwc_client *c, const char *token, const char *agent, hwc_session *s, hw_err *err);
/* Action/observation spaces of a session (token) or of an env (+config): new references. */
int hwc_spaces(hwc_client *c, const char *token, const char *env, const json_t *config, json_t **action_space,
               json_t **observation_space, hw_err *err);
/* Closes the session on the server (not for joined agents: that closes it for everyone). */
int hwc_close(hwc_client *c, const hwc_session *s, hw_err *err);
/* Frees local memory only. Safe on a zeroed or already freed session. */
void hwc_session_free(hwc_session *s);

/* A reset/step result. Observations are flattened to doubles: a Dict observation is the
 * concatenation of its keys' arrays in (sorted) key order; vector sessions give num_envs rows
 * of obs_numel each (env-major). reward/terminated/truncated have `num` entries (1 unless
 * vector). info: the reply's "info" (object, or list of objects for vector), borrowed from
 * reply; reply: the whole reply with wire arrays as flat lists. */
typedef struct hwc_result {
    int num;
    double *obs;
    size_t obs_len;
    double *reward;
    bool *terminated, *truncated;
    json_t *info;
    json_t *reply;
} hwc_result;

void hwc_result_free(hwc_result *r);

/* seed: NULL = no seed (continue the RNG stream); vector sessions: env i gets seed+i.
 * options may be NULL. */
int hwc_reset(hwc_client *c, const hwc_session *s, const int64_t *seed, const json_t *options, hwc_result *r, hw_err *err);
/* The action as a wire array (vector sessions: leading axis num_envs). */
int hwc_step(hwc_client *c, const hwc_session *s, const hw_array *action, hwc_result *r, hw_err *err);
/* Convenience: an integer action of n elements (vector: num_envs * act_numel, env-major). */
int hwc_step_i64(hwc_client *c, const hwc_session *s, const int64_t *action, size_t n, hwc_result *r, hw_err *err);
/* Convenience: a float64 action (Box spaces). */
int hwc_step_f64(hwc_client *c, const hwc_session *s, const double *action, size_t n, hwc_result *r, hw_err *err);
/* The action as JSON (a number, or a list of numbers / lists of numbers for vector). */
int hwc_step_json(hwc_client *c, const hwc_session *s, const json_t *action, hwc_result *r, hw_err *err);

int hwc_snapshot(hwc_client *c, const hwc_session *s, int64_t *snapshot, hw_err *err);
int hwc_restore(hwc_client *c, const hwc_session *s, int64_t snapshot, hw_err *err);
int hwc_drop_snapshot(hwc_client *c, const hwc_session *s, int64_t snapshot, hw_err *err);

/* ---- one-shot scoring ----
 * Select the env with `token` (a session) or `env` (+ config). point: a JSON array (action
 * vector) or an env-specific object. *metrics (may be NULL) gets a new reference. */
int hwc_evaluate(hwc_client *c, const char *token, const char *env, const json_t *config, const json_t *point,
                 double *reward, json_t **metrics, hw_err *err);

typedef struct hwc_batch {
    size_t n;
    double *reward;  /* NaN for a point that failed */
    json_t *metrics; /* list of n objects (null for a failed point) */
    json_t *errors;  /* list of n: null or {"code","message"} */
    json_t *reply;
} hwc_batch;

int hwc_evaluate_batch(hwc_client *c, const char *token, const char *env, const json_t *config, const json_t *points,
                       hwc_batch *b, hw_err *err);
void hwc_batch_free(hwc_batch *b);


/* ---- lean evaluate_batch (PROTOCOL.md "Lean evaluate_batch"; hwgym_batch.c) ----
 * points: a 2-D array (points x elements, any numeric dtype), or 3-D when each point is a
 * table (points x rows x columns, e.g. sched-v0). metrics: names of the metrics
 * wanted (nmetrics may be 0: reward and feasible only), or metrics == NULL with nmetrics < 0
 * for "all". Results are plain arrays owned by `out` (free with hwc_lean_free):
 * reward[k] (NaN for a failed point), feasible[k], cache_hit[k] (answered by the server's
 * evaluation cache, or merged with an identical point in flight), vals[j * n + k] = metric j
 * of point k (NaN when absent), error[k] = NULL or "CODE: message".
 * Integer points go on the wire in the narrowest integer dtype holding them; with named metrics
 * (nmetrics >= 0), a batch of more than 50,000 points is sent as pipelined chunk requests of
 * equal size (up to 4 in flight) and reassembled, error indices being the caller's. The request
 * buffer and the result arrays of a big batch are kept for the next call (one of each in the
 * process), so a loop of big batches reuses warm memory. */
typedef struct hwc_lean {
    size_t n;
    int nmetrics;
    char **names;
    double *reward, *vals;
    bool *feasible, *cache_hit;
    char **error;
    size_t nerrors;
} hwc_lean;

int hwc_evaluate_lean(hwc_client *c, const char *token, const char *env, const json_t *config, const hw_array *points,
                      const char *const *metrics, int nmetrics, hwc_lean *out, hw_err *err);
void hwc_lean_free(hwc_lean *b);

#endif
