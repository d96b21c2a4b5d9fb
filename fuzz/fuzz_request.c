/* fuzz_request.c - libFuzzer harness for request handling: the real router and workers
 * (hw_server_run on a thread, 2 workers, every env) with each input sent as one request over
 * ZeroMQ. Findings: a crash or sanitizer report anywhere in the server, a reply that is not a
 * valid msgpack map with valid UTF-8, or no reply within 20 s (a hang).
 * Inputs may name two live sessions: the 32 bytes "TTTT...T" are replaced by the token of a
 * diag-v0 session and "UUUU...U" by a maestro-v0 one (remade when a request closes them). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "hw_codec.h"
#include "server.h"

static hw_server_opts opts;
static volatile sig_atomic_t stop_flag;
static pthread_t th;
static void *zctx, *sock;
static char ep[128];
static char tok_diag[33], tok_maestro[33];

static void *run(void *arg) {
    (void)arg;
    hw_server_run(&opts, &stop_flag);
    return NULL;
}

/* one request, one reply; aborts on a hang or an undecodable reply */
static json_t *roundtrip(const void *buf, size_t n) {
    /* libFuzzer's -timeout alarm (SIGALRM every timeout/2+1 s) interrupts blocking calls: retry */
    int rc;
    while ((rc = zmq_send(sock, buf, n, 0)) < 0 && zmq_errno() == EINTR) {
    }
    if (rc < 0) return NULL;
    zmq_msg_t m;
    zmq_msg_init(&m);
    while ((rc = zmq_msg_recv(&m, sock, 0)) < 0 && zmq_errno() == EINTR) {
    }
    if (rc < 0) {
        fprintf(stderr, "fuzz_request: no reply within 20 s (hang): %s\n", zmq_strerror(zmq_errno()));
        abort();
    }
    hw_msg msg;
    hw_err err;
    json_t *j = NULL;
    if (hw_msg_decode(&msg, zmq_msg_data(&m), zmq_msg_size(&m), NULL, &err) != 0) {
        fprintf(stderr, "fuzz_request: reply does not decode: %s\n", err.msg);
        abort();
    }
    j = hw_mp_to_json(msg.root, &err);
    hw_msg_free(&msg);
    zmq_msg_close(&m);
    if (!j) abort();
    return j;
}

static void make_session(const char *env, char out[33]) {
    char req[200];
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    snprintf(req, sizeof req, "{\"op\":\"make\",\"v\":1,\"env\":\"%s\"}", env);
    json_t *q = json_loads(req, 0, NULL);
    hw_pack_json(&pk, q);
    json_decref(q);
    json_t *r = roundtrip(sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    const char *t = json_string_value(json_object_get(r, "session"));
    snprintf(out, 33, "%s", t ? t : "");
    json_decref(r);
}

static void setup(void) {
    hw_server_default_opts(&opts);
    opts.workers = 2;
    opts.request_timeout_s = 5;
    opts.max_msg = 1 << 20;
    opts.inline_us = 25;
    opts.session_ttl_s = 5;       /* sessions the inputs make are reaped quickly */
    opts.max_sessions = 500;
    opts.max_envs = 64;
    opts.session_mem = (size_t)64 << 20;
    opts.max_batch = 256;
    snprintf(ep, sizeof ep, "ipc:///tmp/hwgym-fuzz-%d.sock", (int)getpid());
    opts.binds[0] = ep;
    opts.nbinds = 1;
    pthread_create(&th, NULL, run, NULL);
    zctx = zmq_ctx_new();
    sock = zmq_socket(zctx, ZMQ_DEALER);
    int to = 20000, linger = 0;
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &to, sizeof to);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(sock, ep);
    make_session("diag-v0", tok_diag);
    make_session("maestro-v0", tok_maestro);
}

static void replace(char *buf, size_t n, char ch, const char *tok) {
    if (n < 32 || strlen(tok) != 32) return;
    for (size_t i = 0; i + 32 <= n; i++) {
        size_t k = 0;
        while (k < 32 && buf[i + k] == ch) k++;
        if (k == 32) memcpy(buf + i, tok, 32);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!sock) setup();
    if (size > (1 << 20)) return 0;
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    replace(buf, size, 'T', tok_diag);
    replace(buf, size, 'U', tok_maestro);
    /* the server answers every message that has a body; an empty one too */
    json_t *r = roundtrip(buf, size);
    json_t *e = json_object_get(r, "error");
    const char *msg = e ? json_string_value(json_object_get(e, "message")) : NULL;
    if (msg && !hw_utf8_valid(msg, strlen(msg))) abort();
    json_decref(r);
    if (size >= 5 && memmem(buf, size, "close", 5)) { /* keep two live sessions for the next inputs */
        make_session("diag-v0", tok_diag);
        make_session("maestro-v0", tok_maestro);
    }
    free(buf);
    return 0;
}
