/* hwgym_spare.h - libhwgym internals (not part of its API): spare big buffers.
 * Owns: one spare buffer per kind, process-wide, kept from one call to the next. A loop of big
 * lean batches (hwc_evaluate_lean) would otherwise get fresh memory from malloc at every call
 * whenever glibc's heuristics give the pages of a freed megabyte-sized buffer back to the
 * kernel (trimming the heap top, or unmapping a chunk above the mmap threshold), and fault them
 * in again: diag-v0's 100,000-point batch measured 345 page faults a call and 4x the client CPU.
 * Only buffers of SPARE_MIN bytes up to SPARE_MAX are kept, SPARE_SLOTS of each kind (the
 * requests of a pipelined batch are up to 4 in flight: with one spare, the others faulted in
 * fresh pages, 190-650 faults a call of 1,000,000 diag-v0 points); a full kind drops its
 * smallest, and a kind keeps at most SPARE_MAX bytes in all. Thread-safe (the request's spare
 * comes back from ZeroMQ's I/O thread). */
#ifndef HWGYM_SPARE_H
#define HWGYM_SPARE_H

#include <stdbool.h>
#include <stddef.h>

enum { SPARE_REQ, SPARE_RES, SPARE_KINDS };
#define SPARE_MIN ((size_t)64 << 10)
#define SPARE_MAX ((size_t)256 << 20)
#define SPARE_SLOTS 4

/* A buffer of at least `need` bytes from malloc (the kind's spare when it is big enough); *cap
 * gets its size, *reused (may be NULL) whether it is a spare (its bytes as they were given back)
 * or fresh from malloc. Aborts when out of memory. */
void *spare_take(int kind, size_t need, size_t *cap, bool *reused);
/* p (cap bytes, from malloc or spare_take) becomes the kind's spare, or is freed. p may be NULL. */
void spare_give(int kind, void *p, size_t cap);

#endif
