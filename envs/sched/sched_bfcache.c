/* sched_bfcache.c - see sched_bfcache.h. */
#include "sched_bfcache.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/env_limits.h"

typedef struct bf_key {
    int d[SCHED_NDIM], stride, n, rows[3], obj, sec;
    int f[SCHED_NROW][SCHED_NDIM];
    unsigned char ord[SCHED_NROW][SCHED_NDIM];
} bf_key;

typedef struct bf_slot {
    long long used; /* 0: empty; else the lookup count when it was last stored or hit */
    long long born; /* the lookup count when this entry was stored (its costs' stamp) */
    bf_key k;
    int f[SCHED_NROW][SCHED_NDIM]; /* the brute force's result (the loop orders are not changed) */
    unsigned cost_ix;              /* its cost's place in the cost ring, if it is still there */
} bf_slot;

/* the result's cost of a recently used entry: a pure function of the entry, kept in a ring of
 * an eighth as many places as slots (a sched_cost is 1.1 kB, more than a slot) */
typedef struct bf_cost {
    const bf_slot *owner;
    long long born; /* the owner's born when this was stored: the place is stale once it differs */
    sched_cost c;
} bf_cost;

struct sched_bfcache {
    bf_slot *slot;
    size_t mask;
    long long hits, lookups;
    bf_cost *cost;
    size_t ncost, next_cost;
    /* where the next key probably is (docs/sched.md "Speed"): hint[h(last, n, rows)] is the slot
     * (+ 1; 0: none) that the lookup after the one returning slot `last` with these rows found.
     * A step's table is the previous step's result, so the same (last, rows) usually means the
     * same key. Only a guess: a slot it names is used when its whole key equals the asked one,
     * which is the slot the hashed lookup would find (a key is in at most one slot). */
    uint32_t *hint;
    size_t hint_mask;
    long last; /* the slot whose result the last lookup returned; -1: none */
    bool no_hints;        /* sched_bfcache_use_hints(c, false): every lookup hashes (tests) */
    long long hint_hits;  /* lookups answered through the hint */
};

sched_bfcache *sched_bfcache_new(long slots) {
    size_t n = 16;
    while ((long)n < slots && n < ((size_t)1 << 24)) n <<= 1;
    sched_bfcache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->slot = calloc(n, sizeof *c->slot); /* zero pages: memory is committed as slots fill */
    c->ncost = n / 8;
    c->cost = calloc(c->ncost, sizeof *c->cost);
    c->hint = calloc(2 * n, sizeof *c->hint);
    if (!c->slot || !c->cost || !c->hint) {
        sched_bfcache_free(c);
        return NULL;
    }
    c->mask = n - 1;
    c->hint_mask = 2 * n - 1;
    c->last = -1;
    return c;
}

void sched_bfcache_free(sched_bfcache *c) {
    if (!c) return;
    free(c->slot);
    free(c->cost);
    free(c->hint);
    free(c);
}

/* keeps cost as slot s's, in the ring's next place */
static void cost_keep(sched_bfcache *c, bf_slot *s, const sched_cost *cost) {
    bf_cost *e = &c->cost[c->next_cost];
    s->cost_ix = (unsigned)c->next_cost;
    c->next_cost = c->next_cost + 1 == c->ncost ? 0 : c->next_cost + 1;
    e->owner = s, e->born = s->born, e->c = *cost;
}

void sched_bfcache_use_hints(sched_bfcache *c, bool on) { c->no_hints = !on; }

long long sched_bfcache_hint_hits(const sched_bfcache *c) { return c ? c->hint_hits : 0; }

void sched_bfcache_counts(const sched_bfcache *c, long long *hits, long long *lookups) {
    *hits = c ? c->hits : 0;
    *lookups = c ? c->lookups : 0;
}

/* FNV-1a of n bytes. Most of a key's four-byte groups are a small number then three zero bytes,
 * and h ^ 0 = h: such a group is one step by the prime's fourth power, the same h as four byte steps
 * (the byte-at-a-time loop was a sixth of a memo hit's instructions). */
static inline uint64_t fnv1a(const void *data, size_t n) {
    const unsigned char *p = data;
    const uint64_t P = 1099511628211ULL, P4 = P * P * P * P;
    uint64_t h = 1469598103934665603ULL;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        if (!(p[i + 1] | p[i + 2] | p[i + 3])) h = (h ^ p[i]) * P4;
        else
            for (size_t j = i; j < i + 4; j++) h = (h ^ p[j]) * P;
    }
    for (; i < n; i++) h = (h ^ p[i]) * P;
    return h;
}

uint64_t sched_bfcache_fnv1a(const void *data, size_t n) { return fnv1a(data, n); }

/* the key's bytes (zeroed before it is filled: no stray padding), of a size known here */
static uint64_t key_hash(const bf_key *k) {
    uint64_t h = fnv1a(k, sizeof *k);
    return h ^ (h >> 29);
}

/* the hint's place for the lookup after the one that returned slot `last`, with these rows */
static size_t hint_at(const sched_bfcache *c, long last, int n, const int *rows) {
    uint64_t r = (uint64_t)(unsigned)rows[0] | (uint64_t)(unsigned)rows[1] << 16;
    if (n == 3) r |= (uint64_t)(unsigned)rows[2] << 32 | (uint64_t)1 << 48;
    uint64_t h = ((uint64_t)last * 0x9e3779b97f4a7c15ULL ^ r) * 0xff51afd7ed558ccdULL;
    return (size_t)(h >> 29) & c->hint_mask;
}

/* slot s holds the key of these arguments: a field-by-field memcmp of the key built from them
 * (bf_key has no padding, and a key's rows past n are zero in both) */
static bool key_is(const bf_slot *s, const sched_layer *l, const sched_table *t, int n, const int *rows, int obj, int sec) {
    const bf_key *k = &s->k;
    if (!s->used || k->n != n || k->obj != obj || k->sec != sec || k->stride != l->stride) return false;
    for (int i = 0; i < n; i++)
        if (k->rows[i] != rows[i]) return false;
    return !memcmp(k->f, t->f, sizeof k->f) && !memcmp(k->ord, t->ord, sizeof k->ord) && !memcmp(k->d, l->d, sizeof k->d);
}

/* a hit on slot s: its result into t, stats into st; with tmp (room for a cost), where the
 * result's cost is: the ring's place, else tmp, evaluated and kept (NULL without tmp) */
static const sched_cost *take_hit(sched_bfcache *c, bf_slot *s, const sched_accel *a, const sched_layer *l, sched_table *t,
                                  sched_cost *tmp, sched_bf_stats *st) {
    s->used = c->lookups;
    c->hits++;
    memcpy(t->f, s->f, sizeof t->f);
    if (st) {
        memset(st, 0, sizeof *st);
        st->cache_hits = 1;
    }
    if (!tmp) return NULL;
    const bf_cost *e = &c->cost[s->cost_ix];
    if (e->owner == s && e->born == s->born) return &e->c;
    sched_cost_eval(a, l, t, tmp);
    cost_keep(c, s, tmp);
    return tmp;
}

/* sched_bruteforce through the memo; *cost: where the result's cost is when tmp is given (the
 * ring or tmp; read it before the next lookup), else NULL */
static int cached(sched_bfcache *c, const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj,
                  int sec, sched_cost *tmp, const sched_cost **cost, sched_bf_stats *st) {
    *cost = tmp;
    if (!c || n < 2 || n > 3) return sched_bruteforce(a, l, t, n, rows, obj, sec, tmp, st);
    /* the hinted slot first: when it holds this key, it is where the hashed lookup below ends */
    bool hinted = c->last >= 0 && !c->no_hints;
    size_t hi = hinted ? hint_at(c, c->last, n, rows) : 0;
    uint32_t h = hinted ? c->hint[hi] : 0;
    c->lookups++;
    if (h && key_is(&c->slot[h - 1], l, t, n, rows, obj, sec)) {
        *cost = take_hit(c, &c->slot[h - 1], a, l, t, tmp, st);
        c->hint_hits++;
        c->last = (long)h - 1;
        return 0;
    }
    bf_key k;
    memset(&k, 0, sizeof k);
    memcpy(k.d, l->d, sizeof k.d);
    k.stride = l->stride;
    k.n = n;
    for (int i = 0; i < n; i++) k.rows[i] = rows[i];
    k.obj = obj;
    k.sec = sec;
    memcpy(k.f, t->f, sizeof k.f);
    memcpy(k.ord, t->ord, sizeof k.ord);
    /* two ways: the key's slot and its neighbour (index ^ 1); a new entry takes an empty one or
     * the one used least recently, so two keys of one slot no longer evict each other */
    size_t i0 = key_hash(&k) & c->mask;
    bf_slot *s = &c->slot[i0], *s1 = &c->slot[i0 ^ 1];
    if (!(s->used && !memcmp(&s->k, &k, sizeof k)) && s1->used && !memcmp(&s1->k, &k, sizeof k)) s = s1;
    if (s->used && !memcmp(&s->k, &k, sizeof k)) {
        *cost = take_hit(c, s, a, l, t, tmp, st);
    } else {
        c->last = -1;
        int rc = sched_bruteforce(a, l, t, n, rows, obj, sec, tmp, st);
        if (rc || hw_deadline_passed()) return rc;
        if (s->used && (!s1->used || s1->used < s->used)) s = s1;
        s->used = s->born = c->lookups;
        s->k = k;
        memcpy(s->f, t->f, sizeof s->f);
        /* sched_bruteforce's best is sched_cost_eval of its result; a ring place kept for an
         * earlier entry of this slot is stale by its born */
        if (tmp) cost_keep(c, s, tmp);
    }
    c->last = s - c->slot;
    if (hinted) c->hint[hi] = (uint32_t)c->last + 1;
    return 0;
}

int sched_bruteforce_cached(sched_bfcache *c, const sched_accel *a, const sched_layer *l, sched_table *t, int n,
                            const int *rows, int obj, int sec, sched_cost *best, sched_bf_stats *st) {
    const sched_cost *k;
    int rc = cached(c, a, l, t, n, rows, obj, sec, best, &k, st);
    if (best && k && k != best) *best = *k;
    return rc;
}

int sched_bruteforce_cached_brief(sched_bfcache *c, const sched_accel *a, const sched_layer *l, sched_table *t, int n,
                                  const int *rows, int obj, int sec, sched_cost_brief *brief, sched_bf_stats *st) {
    sched_cost tmp; /* written only when the ring does not hold the cost */
    const sched_cost *k;
    int rc = cached(c, a, l, t, n, rows, obj, sec, &tmp, &k, st);
    if (rc == 0) sched_cost_brief_of(k, brief);
    return rc;
}

size_t sched_bfcache_bytes(const sched_bfcache *c) {
    return c ? sizeof *c + (c->mask + 1) * sizeof *c->slot + c->ncost * sizeof *c->cost + (c->hint_mask + 1) * sizeof *c->hint : 0;
}
