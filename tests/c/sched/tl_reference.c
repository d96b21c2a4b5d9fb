/* tl_reference.c - envs/sched/sched_tl.c built with TL_FAST 0 (the straightforward formulas:
 * the general Timeloop walk for every tensor and tile, no closed forms, filters or shortcuts),
 * its entry points renamed tlref_*, for test_sched_fastpath.c. */
#define TL_FAST 0
#define tl_check tlref_check
#define tl_check_spatial tlref_check_spatial
#define tl_eval tlref_eval
#define tl_eval_bound tlref_eval_bound
#define tl_eval_fast tlref_eval_fast
#include "sched/sched_tl.c"
