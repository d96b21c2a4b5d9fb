/* reply.h - packing of reply messages into a task's buffer.
 * Owns: the {"id", "ok": true, ...} header and the error reply; shared by router and workers. */
#ifndef HW_REPLY_H
#define HW_REPLY_H

#include "task.h"

/* Starts {"id": <echo>, "ok": true, ...} with room for nfields more key/value pairs. */
msgpack_packer reply_begin(task *t, size_t nfields);
void reply_error(task *t, const hw_err *e);
void reply_fail(task *t, hw_code c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
