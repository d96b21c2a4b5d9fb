/* env.h - the environment interface every env family implements (DESIGN.md "Environment
 * interface"). Envs are pure computation: no sockets, no threads, no globals, deterministic
 * for a given seed. The server, the CLI, the tests and the benchmarks all call this vtable.
 *
 * Ownership and lifetimes:
 *  - create() receives the config as a JSON object (may be NULL = all defaults) and returns an
 *    opaque env; a bad config fails with HW_E_BAD_CONFIG and a message naming the field,
 *    e.g. "config.layer: unknown layer 'foo' in model 'vgg16'".
 *  - action_space()/observation_space() return env-owned spaces, valid until destroy().
 *  - reset()/step() fill `obs` with env-owned arrays valid until the env's next call.
 *    `info` is a JSON object owned by the caller; the env adds keys to it (may be NULL when
 *    the caller does not want info: envs must check).
 *  - step() gets an action already validated against action_space() (hw_space_check_action).
 *    A step before the first reset() must fail with HW_E_BAD_STATE.
 *  - snapshot() returns an opaque copy of the whole env state (including RNG); restore() makes
 *    the env continue exactly as it would have from the snapshot; snapshot_free() frees it.
 *    Families that cannot snapshot set these three to NULL.
 *  - evaluate() scores one design point without touching episode state: `point` is either a
 *    JSON array (an action vector) or a family-specific object (e.g. {"directives": "..."}).
 *    It writes the reward and adds metrics (with "feasible": bool and, when infeasible,
 *    "reason": str) to `metrics`. NULL when the family has no one-shot evaluation.
 *  - create_ctx() (optional, preferred) is create() with the caller's context: the file-access
 *    policy every file a config names must be read through (envs/common/hw_files.h) and the
 *    operator's limits on the knobs that scale work and memory (envs/common/env_limits.h).
 *    The server always calls create_ctx with its policy; create() is create_ctx() with
 *    hw_env_ctx_local (a local tool: any path, default limits). Families that read files or
 *    have costly knobs must implement create_ctx; the others may leave it NULL.
 *  - mem_bytes() estimates the bytes one env holds apart from its two spaces (the registry adds
 *    those: hw_env_mem_bytes), for the server's per-session and whole-server memory budgets at
 *    make; it must follow the config (program size, trace length, ...) and stay within 2x of
 *    what tests/c/security test_memest.c measures. NULL means "small" (HW_ENV_MEM_DEFAULT).
 *  - info_pack() (optional, issue 29) packs the info of the env's last successful reset() or
 *    step() straight into a msgpack reply, as one map: byte for byte what hw_pack_json
 *    (protocol/hw_codec.h) packs of the JSON object that call fills when given an empty one
 *    (envs/common/info_out.h writes both from one piece of code). The server then calls
 *    reset()/step() with info == NULL and info_pack() right after it, instead of building and
 *    freeing a JSON tree per step; it is valid only until the env's next call (a snapshot, a
 *    restore or an evaluate in between leaves it undefined). NULL: the caller passes a JSON object,
 *    which stays the path of every caller that wants the info as JSON (CLI, local clients) and of
 *    the server where it adds keys of its own (a vector session's autoreset). */
#ifndef HW_ENV_H
#define HW_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_array.h"
#include "hw_error.h"
#include "hw_space.h"

typedef struct hw_step_out {
    hw_obs obs;
    double reward;
    bool terminated, truncated;
} hw_step_out;

struct hw_files;
struct msgpack_packer;
/* What the caller lets an env do. Never NULL inside create_ctx (the registry substitutes). */
typedef struct hw_env_ctx {
    const struct hw_files *files; /* file-access policy; NULL = read no files at all */
    const json_t *limits;         /* operator limits for this family, {"count": 1000000, ...}; NULL = defaults */
} hw_env_ctx;

/* The context of a local tool (CLI, --endpoint local, tests): trusted files, default limits. */
extern const hw_env_ctx hw_env_ctx_local;

#define HW_ENV_MEM_DEFAULT ((size_t)64 << 10)

typedef struct hw_env_family {
    const char *id;      /* "maestro-v0" */
    const char *summary; /* one line for `hwgym envs` */
    void *(*create)(const json_t *config, hw_err *err);
    void (*destroy)(void *env);
    const hw_space *(*action_space)(const void *env);
    const hw_space *(*observation_space)(const void *env);
    /* seed: NULL keeps the env's current RNG stream (Gymnasium: reset() without seed). */
    int (*reset)(void *env, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err);
    int (*step)(void *env, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err);
    void *(*snapshot)(const void *env, hw_err *err);
    int (*restore)(void *env, const void *snap, hw_err *err);
    void (*snapshot_free)(void *snap);
    int (*evaluate)(void *env, const json_t *point, double *reward, json_t *metrics, hw_err *err);
    void *(*create_ctx)(const json_t *config, const hw_env_ctx *ctx, hw_err *err);
    size_t (*mem_bytes)(const void *env);
    void (*info_pack)(const void *env, struct msgpack_packer *pk);
} hw_env_family;

/* The operations of a family whose functions share a prefix P and the suffixes below
 * (P_create, P_destroy, P_aspace, P_ospace, P_reset, P_step, P_snapshot, P_restore,
 * P_snap_free, P_evaluate, P_create_ctx, P_mem_bytes): a family's table is then
 *     const hw_env_family hw_family_x = {.id = "x-v0", .summary = "...", HW_ENV_OPS(x)};  */
#define HW_ENV_OPS(P)                                                                                                      \
    .create = P##_create, .destroy = P##_destroy, .action_space = P##_aspace, .observation_space = P##_ospace,            \
    .reset = P##_reset, .step = P##_step, .snapshot = P##_snapshot, .restore = P##_restore, .snapshot_free = P##_snap_free, \
    .evaluate = P##_evaluate, .create_ctx = P##_create_ctx, .mem_bytes = P##_mem_bytes

#endif
