/* bench_wake.c - what a server's own processing time costs a round trip, beyond itself.
 * A raw ZeroMQ REP echo (tcp loopback, request 200 B, reply 592 B: a maestro-v0 step's sizes)
 * spins S microseconds before some replies, the number S named in the request. Blocks of
 * requests with S > 0 alternate with blocks of S = 0 to the same process (bench_wire.h's
 * measure_pair), so the difference of the medians is what S costs the round trip: S itself plus
 * whatever the wait changes around it (a ZeroMQ I/O thread gone to sleep, a CPU gone idle).
 * The same again with the echo process on one CPU (its main and I/O threads together, as
 * hwgym-server --cpu places the router and I/O threads). On this 2-vCPU VM a spin costs about
 * itself (+0-2 us) either way (bench/README.md, eighth session): a step's round trip over the
 * echo is the server's own work between receiving and sending, not a dearer wake-up after it.
 * Usage: bench_wake [--iters N] [--rounds N] [--cpu N] (default: the last CPU this process may use) */
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_procs.h"

enum { REQ_N = 200, REP_N = 592 };

/* replies REP_N bytes after spinning the microseconds in the request's bytes 8..15; a request
 * whose first 8 bytes are all ones stops it */
static void spin_echo(const char *ep, int cpu) {
    if (cpu >= 0) pin_to_cpu(cpu);
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(s, ep) != 0) _exit(3);
    char in[REQ_N], out[REP_N];
    memset(out, 0, sizeof out);
    for (;;) {
        int n = zmq_recv(s, in, sizeof in, 0);
        if (n < 16) break;
        uint64_t stop, us;
        memcpy(&stop, in, 8);
        memcpy(&us, in + 8, 8);
        if (stop == UINT64_MAX) {
            zmq_send(s, "", 0, 0);
            break;
        }
        double t0 = now();
        while ((now() - t0) * 1e6 < (double)us) {
        }
        zmq_send(s, out, sizeof out, 0);
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
    _exit(0);
}

static int last_cpu(void) {
    cpu_set_t m;
    if (sched_getaffinity(0, sizeof m, &m) != 0) return -1;
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &m)) last = c;
    return last;
}

int main(int argc, char **argv) {
    int iters = 2000, rounds = 3, cpu = last_cpu();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) cpu = atoi(argv[++i]);
        else {
            printf("usage: bench_wake [--iters N] [--rounds N] [--cpu N]\n"
                   "  a raw echo that spins S us before its reply, against the same echo not spinning, in alternating blocks;\n"
                   "  then the same with the echo's threads on CPU N (default: the last CPU this process may use)\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (iters < BLK_N || rounds < 1 || rounds > 99) {
        fprintf(stderr, "bench_wake: --iters must be at least %d and --rounds in 1..99\n", BLK_N);
        return 2;
    }
    static const int spins[] = {2, 5, 10, 20};
    enum { NS = sizeof spins / sizeof spins[0] };
    printf("round trip of a raw echo (tcp loopback, request %d B, reply %d B) spinning S us before its reply, minus the same echo\n"
           "replying at once (blocks of %d alternating, first %d of each not counted; median of %d rounds of %d each):\n",
           REQ_N, REP_N, BLK_N, BLK_DROP, rounds, iters);
    for (int placed = 0; placed < 2; placed++) {
        if (placed && cpu < 0) break;
        char ep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", bench_port(placed));
        pid_t pid = fork();
        if (pid == 0) spin_echo(ep, placed ? cpu : -1);
        void *ctx = zmq_ctx_new();
        void *s = req_socket(ctx, ep);
        char req0[REQ_N], req1[REQ_N];
        memset(req0, 0, sizeof req0);
        memset(req1, 0, sizeof req1);
        double base = 0, add[NS], ratio[NS];
        for (int k = 0; k < NS; k++) {
            uint64_t us = (uint64_t)spins[k];
            memcpy(req1 + 8, &us, 8);
            double d[99], r[99], b[99];
            for (int j = 0; j < rounds; j++) {
                double m0, m1;
                measure_pair(s, req0, sizeof req0, s, req1, sizeof req1, iters, &m0, &m1);
                d[j] = m1 - m0;
                r[j] = m1 / m0;
                b[j] = m0;
            }
            add[k] = median(d, rounds);
            ratio[k] = median(r, rounds);
            base += median(b, rounds) / NS;
        }
        printf("  %-38s echo %.1f us;", placed ? "echo's threads on one CPU (--cpu):" : "echo's threads anywhere (the default):", base);
        for (int k = 0; k < NS; k++) printf(" S=%d: %+.1f us (%.2fx)", spins[k], add[k], ratio[k]);
        printf("\n");
        uint64_t stop = UINT64_MAX;
        memcpy(req0, &stop, 8);
        rt(s, req0, sizeof req0);
        zmq_close(s);
        zmq_ctx_term(ctx);
        waitpid(pid, NULL, 0);
    }
    printf("(a cost over S would be the wait's own: a dearer wake-up of the thread that sends the reply)\n");
    return 0;
}
