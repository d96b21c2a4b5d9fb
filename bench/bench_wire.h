/* bench_wire.h - bench_server's client side (bench_server.c): the clock and medians, one round
 * trip whose reply lands in rbuf (or another buffer), two kinds of round trip measured in
 * alternating blocks, requests packed from JSON text or as a step, an integer of the server's
 * stats, and a process's CPU (schedstat, all threads) and RSS. Header-only, for the one
 * benchmark that includes it (each benchmark is one .c file: Makefile). */
#ifndef HW_BENCH_WIRE_H
#define HW_BENCH_WIRE_H

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hw_codec.h"
#include "spin.h"

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void *req_socket(void *ctx, const char *ep) {
    void *s = zmq_socket(ctx, ZMQ_REQ);
    int to = 20000, linger = 0, one = 1;
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &to, sizeof to);
    zmq_setsockopt(s, ZMQ_REQ_RELAXED, &one, sizeof one);
    zmq_setsockopt(s, ZMQ_REQ_CORRELATE, &one, sizeof one);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(s, ep);
    return s;
}

static char rbuf[1 << 24];
__attribute__((unused)) static char other_buf[1 << 24]; /* a second reply buffer, for benches that keep one reply while reading the next */

static inline int rt_into(void *s, const void *req, size_t n, char *buf, size_t cap) {
    zmq_send(s, req, n, 0);
    return zmq_recv(s, buf, cap, 0);
}

static inline int rt(void *s, const void *req, size_t n) { return rt_into(s, req, n, rbuf, sizeof rbuf); }

static inline json_t *decode(int n) {
    hw_msg m;
    hw_err e;
    json_t *j = NULL;
    if (n <= 0) return NULL;
    if (hw_msg_decode(&m, rbuf, (size_t)n, NULL, &e) == 0) j = hw_mp_to_json(m.root, &e);
    hw_msg_free(&m);
    return j;
}

static inline size_t pack_json_text(msgpack_sbuffer *sb, const char *text) {
    json_t *j = json_loads(text, 0, NULL);
    msgpack_sbuffer_init(sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    hw_pack_json(&pk, j);
    json_decref(j);
    return sb->size;
}

static inline json_t *call(void *s, const char *text) {
    msgpack_sbuffer sb;
    pack_json_text(&sb, text);
    int n = rt(s, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return decode(n);
}

/* a request {op, v: 1, id: 1, session, + `more` fields the caller packs next} into a new sb */
static inline msgpack_packer pack_request(msgpack_sbuffer *sb, const char *op, const char *tok, size_t more) {
    msgpack_sbuffer_init(sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4 + more);
    hw_pack_kv_str(&pk, "op", op);
    hw_pack_cstr(&pk, "v");
    msgpack_pack_int(&pk, 1);
    hw_pack_cstr(&pk, "id");
    msgpack_pack_int(&pk, 1);
    hw_pack_kv_str(&pk, "session", tok);
    return pk;
}

static inline void pack_step(msgpack_sbuffer *sb, const char *tok, int64_t lead, int64_t dims, int64_t *act) {
    msgpack_packer pk = pack_request(sb, "step", tok, 1);
    hw_pack_cstr(&pk, "action");
    hw_array a = {HW_DT_INT64, lead ? 2 : 1, {lead ? lead : dims, dims}, act};
    hw_pack_array(&pk, &a, 0);
}

/* an integer field of the server's stats reply (-1 when absent) */
static inline json_int_t stat_int(void *s, const char *key) {
    json_t *r = call(s, "{\"op\":\"stats\",\"v\":1}");
    json_t *v = json_object_get(r, key);
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
    json_decref(r);
    return n;
}

static inline long rss_kb(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* CPU seconds of every thread of a process: the sum of the first field (ns on a CPU) of each
 * task's schedstat. Unlike round-trip times this hardly moves with the machine's load. */
static inline double task_cpu_s(pid_t pid) {
    char pat[64];
    snprintf(pat, sizeof pat, "/proc/%d/task/*/schedstat", (int)pid);
    glob_t g;
    double s = 0;
    if (glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            FILE *f = fopen(g.gl_pathv[i], "r");
            unsigned long long ns = 0;
            if (f && fscanf(f, "%llu", &ns) == 1) s += 1e-9 * (double)ns;
            if (f) fclose(f);
        }
        globfree(&g);
    }
    return s;
}

/* CPU (us) the process `pid` spends per round trip of `req` over `n` round trips */
static inline double cpu_per_rt(pid_t pid, void *sock, const void *req, size_t len, int n) {
    double c0 = task_cpu_s(pid);
    for (int i = 0; i < n; i++) rt(sock, req, len);
    return (task_cpu_s(pid) - c0) * 1e6 / n;
}

/* Round trips are measured in short blocks, BLK_N to one process in a row, alternating between
 * the kinds compared, the first BLK_DROP of each block not counted. A probe (2026-11-27, 17:45
 * UTC, this 2-vCPU VM) found the first round trip after one to another process 25-35 us
 * slower than the next ones, and all the next ones alike: an agent stepping one server sees the
 * steady ones, and a strict alternation (a b a b) adds the switch to every round trip on both
 * sides, which pulls every ratio towards 1. Blocks of ~3 ms keep the kinds at the same moments of
 * the machine (its speed drifts by a third from minute to minute). */
enum { BLK_N = 25, BLK_DROP = 2 };

/* Two round trips, `iters` of each (rounded up to whole blocks), in blocks: a's then b's. Medians
 * (us) of the counted ones in *ma and *mb. */
static inline void timed_block(void *s, const void *req, size_t n, double *out) { /* one block; out: the counted */
    for (int i = 0; i < BLK_N; i++) {
        double t = now();
        rt(s, req, n);
        if (i >= BLK_DROP) out[i - BLK_DROP] = (now() - t) * 1e6;
    }
}

static inline void measure_pair(void *a, const void *ra, size_t na, void *b, const void *rb, size_t nb, int iters, double *ma,
                                double *mb) {
    int nblk = (iters + BLK_N - 1) / BLK_N, per = BLK_N - BLK_DROP, m = 0;
    double *v = malloc(sizeof(double) * 2 * (size_t)nblk * (size_t)per), *w = v + (size_t)nblk * (size_t)per;
    for (int k = 0; k < nblk; k++, m += per) {
        timed_block(a, ra, na, v + m);
        timed_block(b, rb, nb, w + m);
    }
    *ma = median(v, m);
    *mb = median(w, m);
    free(v);
}

/* A request for the raw echo (echo_server below) of a request's sizes: as long as the request (n
 * bytes, at least 8), asking for a reply of reply_n bytes; calloc'd, its length in *len */
static inline char *echo_request(size_t n, int reply_n, size_t *len) {
    *len = n > 8 ? n : 8;
    char *r = calloc(1, *len);
    uint64_t want = (uint64_t)reply_n;
    memcpy(r, &want, 8);
    return r;
}

/* `rounds` times measure_pair of the echo request `ereq` (on e) and `req` (on s): the medians over
 * rounds of the server's (*ms) and the echo's (*me) medians; returns the median of the rounds'
 * ratios (server over echo) */
static inline double paired_ratio(void *s, const void *req, size_t n, void *e, const void *ereq, size_t en, int iters, int rounds,
                                  double *ms, double *me) {
    double *v = malloc(sizeof(double) * 3 * (size_t)rounds), *w = v + rounds, *q = w + rounds;
    for (int k = 0; k < rounds; k++) {
        measure_pair(e, ereq, en, s, req, n, iters, &w[k], &v[k]);
        q[k] = v[k] / w[k];
    }
    *ms = median(v, rounds);
    *me = median(w, rounds);
    double r = median(q, rounds);
    free(v);
    return r;
}

/* A TCP port for this process's k-th listener: 20000-32699, below Linux's default ephemeral range
 * (32768-60999), where a port can be taken by some connection's local end and the bind fail */
static inline int bench_port(int k) { return 20000 + (int)(((long)getpid() * 7 + k) % 12700); }

/* the raw echo (bench_server): replies with a payload whose size the request names in its first 8
 * bytes (0: the request's own size); all ones there: replies empty and exits. Once bound it writes
 * the endpoint to report_fd (>= 0) and closes it. spin_us > 0: after each reply it polls for the
 * next request for up to that long before its blocking receive, deciding when to poll with the
 * server's own hw_spin (server/spin.h: backing off after 4 misses in a row): the like-for-like
 * echo of a polling server */
static inline void echo_server(const char *ep, int spin_us, int report_fd) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(s, ep) != 0) _exit(3);
    if (report_fd >= 0) { /* the endpoint as bound (a port picked by the system), then EOF */
        char got[256];
        size_t gn = sizeof got;
        if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, got, &gn) != 0 || write(report_fd, got, strlen(got)) < 0) _exit(3);
        close(report_fd);
    }
    char *in = malloc(1 << 24), *out = calloc(1, 1 << 24);
    hw_spin sp; /* the server's own decision (spin.h): its back-off; one client, so never gated */
    hw_spin_init(&sp, spin_us, 1);
    int first = 1;
    for (;;) {
        int n = -1;
        if (!first && hw_spin_should(&sp, now())) {
            const double end = now() + spin_us * 1e-6;
            do n = zmq_recv(s, in, 1 << 24, ZMQ_DONTWAIT);
            while (n < 0 && zmq_errno() == EAGAIN && now() < end);
            hw_spin_result(&sp, n >= 0);
        }
        first = 0;
        if (n < 0) n = zmq_recv(s, in, 1 << 24, 0);
        if (n < 0) break;
        uint64_t want = 0;
        if (n >= 8) memcpy(&want, in, 8);
        if (want == UINT64_MAX) {
            zmq_send(s, "", 0, 0);
            break;
        }
        zmq_send(s, out, want ? (size_t)want : (size_t)n, 0);
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
    _exit(0);
}

#endif
