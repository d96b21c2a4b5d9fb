/* batch_slice.h - an evaluate_batch slice on a worker thread: the env for the batch's config
 * (the session's, or a session-less request's converted here), then either the lean path
 * (batch.h: lean_run_slice, in chunks) or the JSON form, one evaluate() per point with per-point
 * JSON metrics and errors; it stops between points (chunks) after its time budget, reporting where
 * it stopped, how long it ran and how long building the env took. */
#ifndef HW_BATCH_SLICE_H
#define HW_BATCH_SLICE_H

#include "worker.h"

void op_batch_slice(worker *w, task *t);

#endif
