/* batch_route.h - evaluate_batch on the router thread: the request's session or env and config,
 * the lean form (batch.h: cache lookups, in-flight merging) or the JSON form, the batch waiting
 * in its client's fair queue, slices cut by index (no copy) as workers come free and sized by the
 * measured cost per point (fair_pump, which also hands out queued session-less evaluate/spaces),
 * the gather of the slices (requeueing what a slice's time budget left), and the reply (or
 * TIMEOUT when a slice passed the request deadline). docs/security.md "Fairness between clients". */
#ifndef HW_BATCH_ROUTE_H
#define HW_BATCH_ROUTE_H

#include "router_int.h"

void route_batch(router *r, task *t);
/* a slice task is back from its worker (the task is freed) */
void batch_slice_back(router *r, task *t);

#endif
