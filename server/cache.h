/* cache.h - the server's content-addressed evaluation cache (docs/cache.md).
 * Owns: an in-memory table key -> result bounded by bytes with LRU eviction, the optional
 * SQLite file behind it (--cache FILE: entries written through, looked up on a memory miss, so
 * a restarted server or a second server on the same file keeps the hits), the table of keys
 * being evaluated right now (identical in-flight points wait for the first instead of being
 * evaluated again), and the counters the stats op reports.
 * Keys are 16 bytes (truncated SHA-256 over env id, model version, canonical config and
 * normalised point: cache_key.h). Only the router thread touches the cache. */
#ifndef HW_CACHE_H
#define HW_CACHE_H

#include <jansson.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_error.h"

#define HW_CACHE_KEY 16

typedef struct hw_cache hw_cache;

/* A cached result: reward, feasible flag and the point's numeric metrics as a "metric record"
 * (batch.h: [u8 name length][name][f64 value] repeated). Valid until the next put. */
typedef struct hw_cache_val {
    double reward;
    bool feasible;
    const unsigned char *rec;
    size_t len;
    uint64_t peer; /* the client that evaluated it (HW_CACHE_PEER_UNKNOWN when read from the file) */
} hw_cache_val;

/* Clients are told which points were cache hits only for points they evaluated themselves
 * (peer = CURVE key, else address: server/peers.h) unless the operator passed --cache-shared: otherwise
 * cache_hit is a membership oracle on other clients' work (issue 28 finding 10). */
#define HW_CACHE_PEER_UNKNOWN 0
/* Rows read from the file are served only when valid (docs/cache.md, "The file"). */
#define HW_CACHE_MAX_REWARD 1e100
#define HW_CACHE_MAX_REC 65536

struct hw_server_opts;

/* path NULL: memory only. max_bytes bounds the in-memory table (entries + records). The file is
 * created 0600, refused when writable by others, and opened as data only: its schema must be the
 * cache table alone (no trigger, view, index or other table; checked at open) and triggers and
 * views are disabled on the connection. */
hw_cache *hw_cache_open(const char *path, size_t max_bytes, hw_err *err);
/* hw_cache_open with the server's options: --cache FILE, the data-file policy (keys cover the
 * content of files a config names: cache_files.h) and --cache-shared. */
hw_cache *hw_cache_open_server(const struct hw_server_opts *o, size_t max_bytes, hw_err *err);
/* Mixes the content of the data files a config names into a batch's key prefix (cache_files.h);
 * -1: do not cache this batch. */
int hw_cache_key_files(hw_cache *c, const json_t *cfg, const msgpack_object *cfg_mp, unsigned char prefix[32]);
bool hw_cache_shared(const hw_cache *c);
void hw_cache_close(hw_cache *c);
/* Memory, then the SQLite file (a file hit is loaded into memory). Counts nothing. */
bool hw_cache_get(hw_cache *c, const unsigned char *key, hw_cache_val *out);
/* Counters for stats: points answered from the cache, evaluated, merged into an in-flight one. */
void hw_cache_count(hw_cache *c, uint64_t hits, uint64_t misses, uint64_t merged);
/* Inserts (or refreshes) an entry evaluated by client `peer` (whose cache_hit it answers later);
 * written to the SQLite file at the next hw_cache_flush. */
void hw_cache_put(hw_cache *c, const unsigned char *key, uint64_t peer, double reward, bool feasible, const unsigned char *rec, size_t len);
/* Commits the SQLite writes since the last flush (one transaction). */
void hw_cache_flush(hw_cache *c);

/* In-flight points. pending_join: if `key` is being evaluated, appends (owner, index) to its
 * waiters, sets *evaluator to the evaluating client's peer and returns true (counted as merged);
 * otherwise registers key as in flight by `peer` (the caller evaluates it) and returns false. pending_take removes the key and returns its waiters. */
typedef struct hw_cache_waiter {
    void *owner;
    int64_t index;
    struct hw_cache_waiter *next;
} hw_cache_waiter;
bool hw_cache_pending_join(hw_cache *c, const unsigned char *key, void *owner, int64_t index, uint64_t peer, uint64_t *evaluator);
hw_cache_waiter *hw_cache_pending_take(hw_cache *c, const unsigned char *key);
void hw_cache_waiters_free(hw_cache_waiter *w);

/* The key hasher of this cache's thread (cache_key.h). */
struct hw_keyer *hw_cache_keyer(hw_cache *c);

/* {"entries","bytes","max_bytes","hits","misses","merged","evictions","disk_hits","disk_writes",
 *  "disk_rejected","shared","hit_rate","file" (the file's name, not its path)} */
json_t *hw_cache_stats(const hw_cache *c);

#endif
