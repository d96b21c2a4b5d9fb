/* batch.h - the lean evaluate_batch (PROTOCOL.md, "Lean evaluate_batch"; issue 18).
 * Owns: parsing a lean request (points as a 2-D wire array or a list of number lists, read in
 * place; the requested metrics), the evaluation-cache keys and lookups and the merging of
 * identical in-flight points (router thread), scoring a slice of the points to evaluate (worker
 * thread: the family's lean entry, else its JSON evaluate()), taking a slice's results back
 * into the cache and into the batches waiting for them (router thread), and packing the reply:
 * reward f64[K], feasible bool[K], metrics {name: f64[K]}, cache_hit bool[K], sparse errors.
 *
 * Metric records: a point's numeric metrics as bytes [u8 name length][name][f64 value]...,
 * the form kept in the cache and its SQLite file (docs/cache.md).
 *
 * Ownership: the router allocates a lean_batch for the batch; a slice writes only its own
 * points' entries; every other field is router-only. */
#ifndef HW_BATCH_H
#define HW_BATCH_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "env.h"
#include "env_lean.h"
#include "hw_codec.h"

#define LEAN_MAX_METRICS 256

typedef struct lean_batch {
    int64_t n, d;
    hw_array grid;                  /* points as a 2-D wire array (borrowed), or */
    const msgpack_object *list;     /* a list of n lists of d numbers (borrowed) */
    bool all;                       /* "metrics": "all" */
    int nreq;
    char **names;                   /* requested metric names (not "all") */
    const hw_env_lean *lean;        /* the family's lean entry, or NULL */
    int *lean_idx;                  /* per requested name: index in lean's metrics, -1 */
    bool want_rec;                  /* workers build metric records (cache on, or "all") */
    int64_t *todo, ntodo;           /* points to evaluate (not hits, not merged) */
    unsigned char *keys;            /* n * HW_CACHE_KEY when the cache is on */
    /* results */
    double *reward, *vals;          /* vals: nreq * n, metric-major */
    uint8_t *feasible, *hit;
    int *ecode;                     /* 0 = scored */
    char **emsg;
    unsigned char **rec;
    size_t *reclen;
    int64_t waiting;                /* points waiting for an identical in-flight point */
    void *owner;                    /* the router's batch record */
} lean_batch;

/* Router: parses the request's points and metrics for env `env_id` (config: the normalised
 * config), computes keys, answers hits and merges in-flight points (cache may be NULL). `owner`
 * is the router's batch record, handed back to `resolved` callbacks. */
lean_batch *lean_begin(const msgpack_object *root, const char *env_id, const json_t *config, hw_cache *cache,
                       size_t max_elems, void *owner, hw_err *err);
void lean_free(lean_batch *b);

/* Worker: scores todo[lo..hi). env NULL: every point gets `env_err`. */
void lean_run_slice(lean_batch *b, const hw_env_family *fam, void *env, const hw_err *env_err, int64_t lo, int64_t hi);

/* Router: a slice is back. Puts its scored points in the cache and copies them into the batches
 * waiting for them; for each waiting point, calls resolved(ud, owner) once. */
void lean_slice_back(lean_batch *b, hw_cache *cache, int64_t lo, int64_t hi, void (*resolved)(void *ud, void *owner),
                     void *ud);

/* Router: the reply fields (5 of them) after the {"id","ok"} header. */
#define LEAN_REPLY_FIELDS 5
void lean_pack_reply(lean_batch *b, msgpack_packer *pk);

#endif
