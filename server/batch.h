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
 * Per-point cost: no allocation and no msgpack or JSON object per point on the lean path (a
 * family with a lean entry): points are read in place from the request's wire array, results
 * written into flat arrays that are packed as wire arrays, errors kept in sparse lists.
 *
 * Ownership: the router allocates a lean_batch for the batch; a slice writes only its own
 * points' entries and its own error list; every other field is router-only. */
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
#define LEAN_SLICE_BLOCK 64 /* slices' error lists are made in blocks of this many, as slices are cut */

/* a point's error: index, code, message (a batch reports them sparsely) */
typedef struct lean_err {
    int64_t k;
    int code;
    char *msg;
} lean_err;

typedef struct lean_errs {
    lean_err *v;
    size_t n, cap;
} lean_errs;

typedef struct lean_batch {
    int64_t n, d;
    hw_array grid;                  /* points as a 2-D/3-D wire array (borrowed), or */
    const msgpack_object *list;     /* a list of n lists of d numbers (borrowed) */
    int64_t rows, cols;             /* a point's shape: (d, 0), or (rows, columns) of a 3-D array */
    bool all;                       /* "metrics": "all" of a family without a lean entry */
    int nreq;
    char **names;                   /* requested metric names (a lean family's "all": all its names) */
    const hw_env_lean *lean;        /* the family's lean entry, or NULL */
    int *lean_idx;                  /* per requested name: index in lean's metrics */
    bool cached;                    /* the cache is on for this batch: keys, records */
    int64_t *todo, ntodo;           /* points to evaluate (not hits, not merged); todo NULL: 0..n-1 */
    unsigned char *keys;            /* n * HW_CACHE_KEY when cached */
    /* results, written by the slice that owns the point (or the router for hits and merges) */
    double *reward, *vals;          /* vals: nreq * n, metric-major */
    bool inreply;                   /* reward and feasible point into the reply being built (8-aligned) */
    uint8_t *feasible, *hit;        /* hit NULL: no point was a hit */
    double *lv;                     /* lean family, cached: n * lean->nmetrics, point-major */
    unsigned char **rec;            /* no lean entry, cached or "all": per-point metric records */
    size_t *reclen;
    int nslices;
    lean_errs **serr;               /* per slice s: serr[s / LEAN_SLICE_BLOCK][s % LEAN_SLICE_BLOCK], each block made by
                                     * the router when it cuts the block's first slice (lean_slice_cut); a slice's list is
                                     * written by its worker only */
    lean_errs rerr;                 /* errors set on the router (merged points) */
    int64_t waiting;                /* points waiting for an identical in-flight point */
    void *owner;                    /* the router's batch record */
    uint64_t peer;                  /* the client that sent it: in-flight points merge only within a client */
    uint64_t client;                /* its connection (or CURVE key): cache_hit is true only for its own points */
} lean_batch;

/* Router: parses the request's points and metrics for env `env_id` (config: the session's
 * config, else the request's "config" is hashed as msgpack), computes keys, answers hits and
 * merges in-flight points (cache may be NULL). `owner` is the router's batch record, handed back
 * to `resolved` callbacks. `peer` is the client (server/peers.h): a point merges only with an
 * identical point in flight for the same client, so no client waits for another's slow batch or
 * gets its failure; a merged point's error names its own index. `client` is the narrower identity
 * cache_hit answers to (peers_client_of). reply: the reply buffer, holding just the {"id","ok"} header (the
 * "reward" and "feasible" fields are laid out in it and written in place), or NULL. */
lean_batch *lean_begin(const msgpack_object *root, const char *env_id, const json_t *config, hw_cache *cache,
                       size_t max_elems, void *owner, uint64_t peer, uint64_t client, msgpack_sbuffer *reply, hw_err *err);
/* Router, before dispatching: the todo list is split into at most `n` slices (slice s gets an
 * index); lean_slice_cut before slice s goes to a worker (its error list is made then: a batch
 * of 2 slices costs 2, not the 4,000 its bound allows). */
void lean_set_slices(lean_batch *b, int n);
void lean_slice_cut(lean_batch *b, int slice);
void lean_free(lean_batch *b);

/* Worker: the per-slice state of the lean path (the action space's bounds laid out for blocks
 * of points, buffers, the family's prepare()d context), built once for all the chunks of a
 * slice; NULL for a family without a lean entry or without an env. Closed with the batch it was
 * opened for. */
typedef struct lean_run lean_run;
lean_run *lean_run_open(const lean_batch *b, const hw_env_family *fam, void *env);
void lean_run_close(const lean_batch *b, lean_run *R);
/* Worker: scores todo[lo..hi) as slice `slice`, with R from lean_run_open for a lean family.
 * env NULL: every point gets `env_err`. */
void lean_run_slice(lean_batch *b, int slice, lean_run *R, const hw_env_family *fam, void *env, const hw_err *env_err, int64_t lo,
                    int64_t hi);

/* Router: slice `slice` is back. Puts its scored points in the cache and copies them into the
 * batches waiting for them; for each waiting point, calls resolved(ud, owner) once. */
void lean_slice_back(lean_batch *b, hw_cache *cache, int slice, int64_t lo, int64_t hi, void (*resolved)(void *ud, void *owner),
                     void *ud);

/* Router: the reply fields (5 of them) after the {"id","ok"} header; with the reward and
 * feasible already in place (lean_begin's reply), the other three are appended. */
#define LEAN_REPLY_FIELDS 5
void lean_pack_reply(lean_batch *b, msgpack_packer *pk, msgpack_sbuffer *sb);  /* sb: pk's buffer (batch_reply.c) */
/* the value of metric `name` in a point's record (name length, name, double; NAN when absent) */
double lean_rec_get(const unsigned char *p, size_t len, const char *name);

#endif
