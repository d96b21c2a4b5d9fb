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
} hw_cache_val;

/* path NULL: memory only. max_bytes bounds the in-memory table (entries + records). */
hw_cache *hw_cache_open(const char *path, size_t max_bytes, hw_err *err);
void hw_cache_close(hw_cache *c);
/* Memory, then the SQLite file (a file hit is loaded into memory). Counts nothing. */
bool hw_cache_get(hw_cache *c, const unsigned char *key, hw_cache_val *out);
/* Counters for stats: points answered from the cache, evaluated, merged into an in-flight one. */
void hw_cache_count(hw_cache *c, uint64_t hits, uint64_t misses, uint64_t merged);
/* Inserts (or refreshes) an entry; written to the SQLite file at the next hw_cache_flush. */
void hw_cache_put(hw_cache *c, const unsigned char *key, double reward, bool feasible, const unsigned char *rec, size_t len);
/* Commits the SQLite writes since the last flush (one transaction). */
void hw_cache_flush(hw_cache *c);

/* In-flight points. pending_join: if `key` is being evaluated, appends (owner, index) to its
 * waiters and returns true (counted as merged); otherwise registers key as in flight (the caller
 * evaluates it) and returns false. pending_take removes the key and returns its waiters. */
typedef struct hw_cache_waiter {
    void *owner;
    int64_t index;
    struct hw_cache_waiter *next;
} hw_cache_waiter;
bool hw_cache_pending_join(hw_cache *c, const unsigned char *key, void *owner, int64_t index);
hw_cache_waiter *hw_cache_pending_take(hw_cache *c, const unsigned char *key);
void hw_cache_waiters_free(hw_cache_waiter *w);

/* The key hasher of this cache's thread (cache_key.h). */
struct hw_keyer *hw_cache_keyer(hw_cache *c);

/* {"entries","bytes","max_bytes","hits","misses","merged","evictions","disk_hits","hit_rate","file"} */
json_t *hw_cache_stats(const hw_cache *c);

#endif
