/* batch_route.h - evaluate_batch on the router thread: the request's session or env and config,
 * the lean form (batch.h: cache lookups, in-flight merging) or the JSON form, the fan-out of the
 * points to evaluate as one slice per worker (split by index, no copy), the gather of the
 * slices, and the reply (or TIMEOUT when a slice passed the request deadline). */
#ifndef HW_BATCH_ROUTE_H
#define HW_BATCH_ROUTE_H

#include "router_int.h"

void route_batch(router *r, task *t);
/* a slice task is back from its worker (the task is freed) */
void batch_slice_back(router *r, task *t);

#endif
