/* harness.h - in-process hwgym-server and a raw ZeroMQ client for the server tests.
 * The server runs hw_server_run() on a thread (ASan sees all of it); requests are written as
 * JSON text (converted to msgpack) or as raw bytes; replies come back as JSON (wire arrays
 * flattened to number lists). */
#ifndef TEST_SERVER_HARNESS_H
#define TEST_SERVER_HARNESS_H

#include <jansson.h>
#include <msgpack.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "server.h"

typedef struct srv {
    pthread_t th;
    hw_server_opts o;
    volatile sig_atomic_t stop;
    char ep[128];
    int rc;
} srv;

void srv_start(srv *s, int workers, double ttl);
void srv_start_opts(srv *s, const hw_server_opts *o);
int srv_stop(srv *s); /* returns hw_server_run's exit code */

void *cli_ctx(void);
void *cli_new(const char *ep);          /* DEALER, 10 s receive timeout */
void cli_close(void *sock);
/* Sends the JSON request (printf-style) and returns the decoded reply (NULL on timeout). */
json_t *call(void *sock, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
json_t *call_raw(void *sock, const void *buf, size_t n);
json_t *recv_reply(void *sock);
/* The next reply (a test failure when none comes), or NULL when it does not decode. */
json_t *recv_lenient(void *sock);
void send_json(void *sock, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *err_code(const json_t *reply);  /* NULL when ok */
const char *err_msg(const json_t *reply);
/* A TCP port on 127.0.0.1 free a moment ago (for a second bind). */
int free_tcp_port(void);
/* Starts the server with a second endpoint tcp://127.0.0.1:PORT (returned in *port). */
void srv_start_tcp(srv *s, const hw_server_opts *o, int *port);
/* A DEALER connected to 127.0.0.1:port from source address src (e.g. "127.0.0.2"): the server
 * sees it as that peer (server/peers.h), so one test process can play several hosts. */
void *cli_new_as(const char *src, int port);
/* Path of a built binary next to the test binary (BUILD/bin/NAME). */
void built_bin(const char *name, char *out, size_t cap);

/* A reply's raw bytes (the next message on sock; a test failure when none comes). */
typedef struct {
    char *data;
    size_t n;
} bytes;
bytes recv_bytes(void *sock);
/* Sends `req` packed as msgpack. */
void send_packed(void *sock, const json_t *req);

/* Two packers side by side, for byte-for-byte checks: the code under test packs into pk[0], the
 * reference (msgpack-c's own calls) into pk[1]; pack_pair_same compares and frees both. */
typedef struct {
    msgpack_sbuffer sb[2];
    msgpack_packer pk[2];
} pack_pair;
void pack_pair_init(pack_pair *p);
bool pack_pair_same(pack_pair *p);

#endif
