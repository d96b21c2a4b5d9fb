/* snapshot.h - the snapshot, restore and drop_snapshot ops of a session (worker thread): a
 * snapshot holds every env's state plus the started/needs-reset flags, up to the session's
 * limit; restore brings them all back; drop frees one. Freeing a record is worker.c's snap_free
 * (also used when a session is destroyed). */
#ifndef HW_SNAPSHOT_H
#define HW_SNAPSHOT_H

#include "worker.h"

void op_snapshot(task *t);
void op_restore(task *t);
void op_drop_snapshot(task *t);

#endif
