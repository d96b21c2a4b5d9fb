/* harness.c - see harness.h */
#include "harness.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <libgen.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "hw_codec.h"

static void *ctx;
static int counter;

void *cli_ctx(void) {
    if (!ctx) ctx = zmq_ctx_new();
    return ctx;
}

static void *run(void *arg) {
    srv *s = arg;
    s->rc = hw_server_run(&s->o, &s->stop);
    return NULL;
}

void srv_start_opts(srv *s, const hw_server_opts *o) {
    s->o = *o;
    snprintf(s->ep, sizeof s->ep, "ipc:///tmp/hwgym-test-%d-%d.sock", (int)getpid(), counter++);
    s->o.binds[0] = s->ep; /* callers may add more endpoints at binds[1..] */
    if (s->o.nbinds < 1) s->o.nbinds = 1;
    s->stop = 0;
    pthread_create(&s->th, NULL, run, s);
    /* wait until it answers */
    void *c = cli_new(s->ep);
    json_t *r = NULL;
    for (int i = 0; i < 100 && !r; i++) {
        r = call(c, "{\"op\":\"ping\",\"v\":1}");
        if (!r) usleep(10000);
    }
    cr_assert(r, "server did not come up on %s", s->ep);
    json_decref(r);
    cli_close(c);
}

void srv_start(srv *s, int workers, double ttl) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.workers = workers;
    o.session_ttl_s = ttl;
    srv_start_opts(s, &o);
}

int srv_stop(srv *s) {
    s->stop = 1;
    pthread_join(s->th, NULL);
    return s->rc;
}

void *cli_new(const char *ep) {
    void *sock = zmq_socket(cli_ctx(), ZMQ_DEALER);
    int to = 10000, linger = 0;
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &to, sizeof to);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(sock, ep);
    return sock;
}

void cli_close(void *sock) { zmq_close(sock); }

int free_tcp_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

void srv_start_tcp(srv *s, const hw_server_opts *o, int *port) {
    static char tcp[8][64];
    static int n;
    char *ep = tcp[n++ % 8];
    *port = free_tcp_port();
    snprintf(ep, 64, "tcp://127.0.0.1:%d", *port);
    hw_server_opts oo = *o;
    oo.binds[1] = ep;
    oo.nbinds = 2;
    srv_start_opts(s, &oo);
}

void *cli_new_as(const char *src, int port) {
    char ep[128];
    snprintf(ep, sizeof ep, "tcp://%s:0;127.0.0.1:%d", src, port);
    return cli_new(ep);
}

/* the next reply decoded (NULL: none within the timeout, *got false; or it did not decode) */
static json_t *recv_decoded(void *sock, bool *got, hw_err *err) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    *got = zmq_msg_recv(&m, sock, 0) >= 0;
    hw_msg msg;
    json_t *j = NULL;
    hw_fail(err, HW_E_IO, "no reply");
    if (*got && hw_msg_decode(&msg, zmq_msg_data(&m), zmq_msg_size(&m), NULL, err) == 0) j = hw_mp_to_json(msg.root, err);
    if (*got) hw_msg_free(&msg);
    zmq_msg_close(&m);
    return j;
}

json_t *recv_reply(void *sock) {
    bool got;
    hw_err err;
    json_t *j = recv_decoded(sock, &got, &err);
    cr_assert(j || !got, "reply did not decode: %s", err.msg);
    return j;
}

json_t *recv_lenient(void *sock) {
    bool got;
    hw_err err;
    json_t *j = recv_decoded(sock, &got, &err);
    cr_assert(got, "no reply");
    return j;
}

json_t *call_raw(void *sock, const void *buf, size_t n) {
    zmq_send(sock, buf, n, 0);
    return recv_reply(sock);
}

static void vsend(void *sock, const char *fmt, va_list ap) {
    char *text;
    cr_assert(vasprintf(&text, fmt, ap) >= 0);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert(j, "bad test JSON %s: %s", text, je.text);
    free(text);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    hw_pack_json(&pk, j);
    json_decref(j);
    zmq_send(sock, sb.data, sb.size, 0);
    msgpack_sbuffer_destroy(&sb);
}

void send_json(void *sock, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsend(sock, fmt, ap);
    va_end(ap);
}

json_t *call(void *sock, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsend(sock, fmt, ap);
    va_end(ap);
    return recv_reply(sock);
}

/* a missing reply (timeout) is an error too, so an assertion of "no error" cannot pass on silence */
const char *err_code(const json_t *r) {
    if (!r) return "NO_REPLY";
    if (json_is_true(json_object_get(r, "ok"))) return NULL;
    return json_string_value(json_object_get(json_object_get(r, "error"), "code"));
}

const char *err_msg(const json_t *r) {
    const char *m = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
    return m ? m : "";
}

void built_bin(const char *name, char *out, size_t cap) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = 0;
    char *d = dirname(dirname(exe)); /* BUILD */
    snprintf(out, cap, "%s/bin/%s", d, name);
}

bytes recv_bytes(void *sock) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    int n = zmq_msg_recv(&m, sock, 0);
    cr_assert_geq(n, 0, "no reply");
    bytes b = {malloc((size_t)n + 1), (size_t)n};
    memcpy(b.data, zmq_msg_data(&m), (size_t)n);
    zmq_msg_close(&m);
    return b;
}

void send_packed(void *sock, const json_t *req) {
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    hw_pack_json(&pk, req);
    cr_assert_geq(zmq_send(sock, sb.data, sb.size, 0), 0);
    msgpack_sbuffer_destroy(&sb);
}

void pack_pair_init(pack_pair *p) {
    for (int k = 0; k < 2; k++) {
        msgpack_sbuffer_init(&p->sb[k]);
        msgpack_packer_init(&p->pk[k], &p->sb[k], msgpack_sbuffer_write);
    }
}

bool pack_pair_same(pack_pair *p) {
    bool same = p->sb[0].size == p->sb[1].size && (!p->sb[0].size || !memcmp(p->sb[0].data, p->sb[1].data, p->sb[0].size));
    for (int k = 0; k < 2; k++) msgpack_sbuffer_destroy(&p->sb[k]);
    return same;
}
