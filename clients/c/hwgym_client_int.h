/* hwgym_client_int.h - libhwgym internals shared by its source files (not installed).
 * Owns: the request builder and the reply record of one call, and the call itself. */
#ifndef HWGYM_CLIENT_INT_H
#define HWGYM_CLIENT_INT_H

#include <msgpack.h>
#include <stdbool.h>
#include <zmq.h>

#include "hw_codec.h"
#include "hwgym_client.h"

typedef struct req {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    const char *op;
} req;

typedef struct rep {
    zmq_msg_t zm;
    hw_msg m;
    bool have;
} rep;

/* Starts {"op","v", <nfields more>, "id"}: the id is appended by exchange(). */
void req_begin(req *q, const char *op, int nfields);
void rep_free(rep *r);
/* Sends q (consumed) and waits for the reply with its id. On ok=false, fills err from the
 * reply and returns -1 (r is then freed). */
int exchange(hwc_client *c, req *q, rep *r, hw_err *err);
/* n calls with up to `window` in flight on the client's socket: make(ud, i, q) builds request i
 * (req_begin + fields; the id is appended here), take(ud, i, r, err) reads the ok reply of
 * request i (replies come in any order; nonzero aborts). An error reply aborts with its code and
 * message; replies still in flight are dropped later as stale. Returns 0 or -1. */
int exchange_pipe(hwc_client *c, int n, int window, void (*make)(void *ud, int i, req *q), int (*take)(void *ud, int i, rep *r, hw_err *err),
                  void *ud, hw_err *err);
/* "session" / "env" / "config" fields (each only when non-NULL; hwgym_eval.c). */
void pack_target(req *q, const char *token, const char *env, const json_t *config);
/* the reply as JSON ("reply" prefixed to err's message on failure) */
json_t *rep_json(rep *r, hw_err *err);
/* reward/terminated/truncated of a reply: a scalar or an array of `num` into out */
int get_nums(const msgpack_object *root, const char *key, int num, msgpack_zone *zone, double *out, hw_err *err);

#endif
