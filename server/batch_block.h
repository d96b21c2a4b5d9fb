/* batch_block.h - the vectorised passes of the lean batch's block path (server/batch.c, issue
 * 18): widening a block of integer points to int64 and range-checking it, without a call or a
 * branch per element (GCC vectorises them at -O2). */
#ifndef HW_BATCH_BLOCK_H
#define HW_BATCH_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_array.h"

/* cnt integers of dtype dt (an integer or bool dtype) at src, as int64 into o */
void lean_widen(hw_dtype dt, const char *restrict src, size_t cnt, int64_t *restrict o);
/* every x[i] in [lo[i], lo[i] + span[i]] (span < 2^63) */
bool lean_in_range(const int64_t *x, const int64_t *lo, const uint64_t *span, int64_t n);
/* every x[i] in [lo[i], hi[i]] */
bool lean_in_range8(const int8_t *x, const int8_t *lo, const int8_t *hi, int64_t n);

#endif
