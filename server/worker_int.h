/* worker_int.h - worker internals shared by the files that run worker ops (worker.c, multi.c,
 * batch_slice.c, snapshot.c); not used by the router. Owns nothing: declarations of
 * worker_core.c's helpers, the layer below all four (so none of them calls back up). */
#ifndef HW_WORKER_INT_H
#define HW_WORKER_INT_H

#include "worker.h"

/* hands a finished task back to the router */
void send_back(worker *w, task *t);
void pack_space(msgpack_packer *pk, const hw_space *s);
/* a step's info object (an empty map for NULL) */
void pack_info(msgpack_packer *pk, json_t *info);
/* whether the session's env infos are packed by the family's info_pack (env.h) rather than built
 * as JSON objects: the family has one and the server was not told --info-json */
bool info_packed(const worker *w, const session *s);
/* env i's info into a reply: the JSON object `info`, or, when it is NULL (info_packed), what the
 * family's info_pack writes of the env's last reset/step */
void pack_env_info(msgpack_packer *pk, const session *s, int i, json_t *info);
/* the worker's env for (env_id, config), created on a miss (WORKER_CACHE entries, LRU) */
void *cached_env(worker *w, const char *env_id, const json_t *config, const hw_env_family **fam, hw_err *err);
/* frees a snapshot record's env states and flags */
void snap_free(session *s, snap_rec *r);
int get_seed(const msgpack_object *o, uint64_t *out, hw_err *err, const char *what);
/* Records that op `op` of session `s` cost `us` microseconds, the estimate the router's inline
 * fast path reads (cost_us, an EWMA; see worker.c's worker_handle_timed). `wall` says `us` is
 * wall time from an inline run rather than CPU time: under `inline_us` it bounds the CPU time
 * from above and is recorded; over it, it is not recorded and sets cost_check[op], so the next
 * such op is timed in CPU time (session_time_on_cpu, session.h), which clears it. */
void session_cost_record(session *s, int op, double us, bool wall, double inline_us);
/* A single reset's or step's reply fields: "obs" and, for a step, "reward", "terminated" and
 * "truncated" (1 or 4 keys; run_single, and bench/bench_step.c, which packs replies as the server does) */
void pack_step_out(msgpack_packer *pk, const hw_step_out *out, bool step);
/* Single env reset/step; `act` NULL means reset. Packs into each task in `targets`. */
int run_single(worker *w, session *s, const hw_act *act, const uint64_t *seed, const json_t *opts, task **targets, int ntargets,
               hw_err *err);

#endif
