/* reply_slot.h - a wire array laid out in a reply before its values exist (issue 18, the lean
 * evaluate_batch): the header is written and the data left as a slot that starts 8-aligned, so
 * the workers can write float64 results straight into the reply (server/batch.c). The alignment
 * comes from choosing among msgpack's equivalent encodings of "shape", "data" and the length
 * (a str16 key or a uint64 length decodes exactly like the shortest form). */
#ifndef HW_REPLY_SLOT_H
#define HW_REPLY_SLOT_H

#include <msgpack.h>
#include <stdint.h>

#include "hw_array.h"

/* Appends `key` and {dtype, shape [n], data: bin} to sb (which must have room: no reallocation)
 * and returns where the n elements go (8-aligned when sb->data is; not written). */
void *reply_slot(msgpack_sbuffer *sb, const char *key, hw_dtype dt, int64_t n);

#endif
