/* reply.h - packing of reply messages into a task's buffer.
 * Owns: the {"id", "ok": true, ...} header and the error reply; shared by router and workers. */
#ifndef HW_REPLY_H
#define HW_REPLY_H

#include "task.h"

/* Starts {"id": <echo>, "ok": true, ...} with room for nfields more key/value pairs. */
msgpack_packer reply_begin(task *t, size_t nfields);
/* The same with room for `bytes` from the start (a hint: 0 or a size out of reason is ignored), so
 * a reply of about a known size is packed in one allocation rather than grown from 8 KiB by
 * doubling, which copies what was packed each time (mmap-v0's 17.8 kB step: 8 -> 16 -> 32 KiB).
 * Both reuse a buffer the task already holds (its size reset to 0; replaced when smaller than the
 * hint): the router hands its spare to inline ops (router_core.c, reply_spare_give). */
msgpack_packer reply_begin_sized(task *t, size_t nfields, size_t bytes);
/* reply_begin_sized with the header's bytes left in g, a gather (hw_codec.h) on *pk, which it sets
 * up on t's buffer: the caller adds the reply's next pieces and flushes g before packing into *pk
 * (a step's header, observation and reward in one write) */
void reply_begin_gather(task *t, size_t nfields, size_t bytes, msgpack_packer *pk, hw_gather *g);
void reply_error(task *t, const hw_err *e);
/* Copies an error message for the wire into dst (size n): cut at n-1 bytes, invalid UTF-8 and
 * control bytes replaced by '?', an empty message replaced by `fallback` (every per-point error
 * of a batch goes through this as reply_error's message does; issue 28 finding 2). */
void reply_msg_copy(char *dst, size_t n, const char *src, const char *fallback);
void reply_fail(task *t, hw_code c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
