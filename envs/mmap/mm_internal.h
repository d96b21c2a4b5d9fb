/* mm_internal.h - helpers shared by the mmap sources (not part of the public mmap.h API). */
#ifndef HW_MM_INTERNAL_H
#define HW_MM_INTERNAL_H

#include "mmap.h"

/* Problem with T instructions and nbuf buffers, all zeroed (prefetch_after_def = true). The
 * caller fills ins[].first/nbuf/nvar/var_buf/lat/supply (< 0 = default), buf[].size/is_output/
 * user_tensor/user_alias (< 0 = none)/lr_start/lr_end/demand (< 0 = default), max_size, granule,
 * copy_ns_per_byte, then calls mm_problem_finalize. */
mm_problem *mm_problem_alloc(int32_t T, int32_t nbuf);
int mm_problem_finalize(mm_problem *p, hw_err *err);
/* The up-to-8 largest operands of instruction t (ties: lower index), in operand order. */
void mm_default_varying(mm_problem *p, int32_t t);

#endif
