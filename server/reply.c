/* reply.c - see reply.h */
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

msgpack_packer reply_begin(task *t, size_t nfields) { return reply_begin_sized(t, nfields, 0); }

msgpack_packer reply_begin_sized(task *t, size_t nfields, size_t bytes) {
    msgpack_packer pk;
    hw_gather g; /* not zeroed: 2 KiB */
    reply_begin_gather(t, nfields, bytes, &pk, &g);
    hw_gather_flush(&g);
    return pk;
}

void reply_begin_gather(task *t, size_t nfields, size_t bytes, msgpack_packer *pk, hw_gather *g) {
    /* a buffer the task already holds (on the inline path, the router's spare: router_core.c) is
     * reused from its start, whatever it held before; one smaller than the hint is replaced. Below
     * 8 KiB the packer's first allocation is enough; a hint is not a promise */
    if (bytes <= MSGPACK_SBUFFER_INIT_SIZE || bytes > ((size_t)64 << 20)) bytes = 0;
    if (t->reply.data && t->reply.alloc >= bytes) t->reply.size = 0;
    else {
        msgpack_sbuffer_destroy(&t->reply);
        msgpack_sbuffer_init(&t->reply);
        if (bytes && (t->reply.data = malloc(bytes))) t->reply.alloc = bytes;
    }
    msgpack_packer_init(pk, &t->reply, msgpack_sbuffer_write);
    g->pk = pk;
    g->n = 0;
    /* {"id": <echo>, "ok": true, with the bytes msgpack_pack_map, hw_pack_cstr, msgpack_pack_object
     * (msgpack_pack_uint64 for a non-negative integer id) and msgpack_pack_nil pack, gathered
     * (written at once when the id is a non-negative integer or absent) */
    unsigned char *p = hw_gather_room(g, 24), *p0 = p; /* map, "id", a uint64, "ok": true: 5 + 3 + 9 + 4 */
    p += hw_put_map_head(p, nfields + 2);
    memcpy(p, "\xa2id", 3), p += 3;
    if (!t->id) *p++ = 0xc0;
    else if (t->id->type == MSGPACK_OBJECT_POSITIVE_INTEGER) p += hw_put_uint(p, t->id->via.u64);
    else {
        g->n += (size_t)(p - p0);
        hw_gather_flush(g);
        msgpack_pack_object(pk, *t->id);
        p = p0 = hw_gather_room(g, 4);
    }
    memcpy(p, "\xa2ok\xc3", 4), p += 4;
    g->n += (size_t)(p - p0);
    t->failed = false;
}

void reply_error(task *t, const hw_err *e) {
    msgpack_sbuffer_destroy(&t->reply);
    msgpack_sbuffer_init(&t->reply);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &t->reply, msgpack_sbuffer_write);
    /* every message on the wire is valid UTF-8, whoever wrote it; IO is a client-side code
     * (PROTOCOL.md): a file the server could not use is the config's fault */
    char msg[HW_ERR_MSG];
    reply_msg_copy(msg, sizeof msg, e->msg, "the server failed without a message");
    hw_pack_error(&pk, t->id, e->code == HW_E_IO ? HW_E_BAD_CONFIG : e->code, msg);
    t->failed = true;
}

void reply_msg_copy(char *dst, size_t n, const char *src, const char *fallback) {
    if (!n) return;
    snprintf(dst, n, "%s", src && *src ? src : fallback ? fallback : "");
    hw_utf8_sanitize(dst);
}

void reply_fail(task *t, hw_code c, const char *fmt, ...) {
    hw_err e;
    va_list ap;
    va_start(ap, fmt);
    hw_vfail(&e, c, fmt, ap);
    va_end(ap);
    reply_error(t, &e);
}
