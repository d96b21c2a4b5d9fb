/* tl_reference.h - the straightforward build of sched_tl.c (tl_reference.c) */
#ifndef HW_TEST_TL_REFERENCE_H
#define HW_TEST_TL_REFERENCE_H

#include "sched/sched_tl.h"

void tlref_eval(const tl_spec *s, tl_result *r);
int tlref_check(const tl_spec *s, tl_result *r);

#endif
