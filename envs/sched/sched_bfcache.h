/* sched_bfcache.h - a bounded memo of sched-v0's brute-force steps (docs/sched.md "Speed").
 *
 * Owns: a two-way set-associative table from (layer shape and stride, table, selected rows, objective,
 * secondary objective) to the table the brute force returns, for one accelerator. The brute force
 * is a pure function of those, so a hit returns exactly what sched_bruteforce would; layers with
 * the same shape (ResNet-50's repeated blocks) and later training episodes reaching the same
 * table reuse the search. The result's cost is kept too, for the most recently stored or hit
 * entries (a ring of an eighth as many costs as slots): a hit on one of them does not run the cost
 * model again. A hint table (two places a slot, 4 bytes each) remembers where the key that followed
 * a returned slot with given rows was found: a step's table is the last step's result, so the
 * next key is usually there, and a field-by-field compare finds it without hashing the key's 460
 * bytes. Memory is bounded by the slot count (about 950 bytes a slot with its share of the
 * ring and the hints, touched lazily); a key may sit in its hashed slot or that slot's neighbour, and a new entry takes an
 * empty one of the two or replaces the one used less recently. A search cut short by the server's request
 * deadline is not stored. Not thread-safe: one per env instance. */
#ifndef HW_SCHED_BFCACHE_H
#define HW_SCHED_BFCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

typedef struct sched_bfcache sched_bfcache;

/* slots: entries kept at most (rounded up to a power of two, >= 16). NULL when out of memory. */
sched_bfcache *sched_bfcache_new(long slots);
void sched_bfcache_free(sched_bfcache *c);

/* sched_bruteforce through the cache (c may be NULL: no cache). On a hit t becomes the cached
 * table, best (if non-NULL) its cost, and st (if non-NULL) is zero but for cache_hits = 1. */
int sched_bruteforce_cached(sched_bfcache *c, const sched_accel *a, const sched_layer *l, sched_table *t, int n,
                            const int *rows, int obj, int sec, sched_cost *best, sched_bf_stats *st);

/* The figures a step reports of a cost (the env keeps these, not the 1.1 kB cost). */
typedef struct sched_cost_brief {
    double energy_pj, cycles, edp, utilisation;
} sched_cost_brief;
static inline void sched_cost_brief_of(const sched_cost *c, sched_cost_brief *b) {
    b->energy_pj = c->energy_pj, b->cycles = c->cycles, b->edp = c->edp, b->utilisation = c->utilisation;
}
/* sched_objective of the brief, for the objectives it holds (SOBJ_ENERGY, SOBJ_CYCLES, SOBJ_EDP) */
static inline double sched_brief_objective(const sched_cost_brief *b, int obj) {
    return obj == SOBJ_ENERGY ? b->energy_pj : obj == SOBJ_CYCLES ? b->cycles : b->edp;
}
/* sched_bruteforce_cached with the result's cost as a brief (not copied whole: a hit reads it in
 * the memo's ring); the same table, stats and memo updates */
int sched_bruteforce_cached_brief(sched_bfcache *c, const sched_accel *a, const sched_layer *l, sched_table *t, int n,
                                  const int *rows, int obj, int sec, sched_cost_brief *brief, sched_bf_stats *st);

/* bytes the cache may come to hold (its slots, all of them once touched; 0 for NULL): the env's
 * memory estimate counts them (envs/env.h mem_bytes) */
size_t sched_bfcache_bytes(const sched_bfcache *c);
/* FNV-1a (64-bit) of n bytes, the memo's key hash (exposed for its test) */
uint64_t sched_bfcache_fnv1a(const void *data, size_t n);
/* hits and lookups so far */
void sched_bfcache_counts(const sched_bfcache *c, long long *hits, long long *lookups);
/* the hint (where the key after the last lookup's result, with these rows, was found; checked
 * field by field before the hashed lookup): on by default; off, every lookup hashes (its test
 * compares the two) */
void sched_bfcache_use_hints(sched_bfcache *c, bool on);
/* hits found through the hint */
long long sched_bfcache_hint_hits(const sched_bfcache *c);

#endif
