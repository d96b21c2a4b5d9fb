/* bench_procs.h - the processes a round-trip bench starts and stops: hwgym-server (optionally
 * with --cpu), waiting for its ping, and the raw echo (bench_wire.h echo_server). Shared by
 * bench_server and bench_instances; header-only like bench_wire.h. */
#ifndef HW_BENCH_PROCS_H
#define HW_BENCH_PROCS_H
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_wire.h"

extern char **environ;

/* --cpu N: the servers' router and I/O threads (hwgym-server --cpu) and the echo process on CPU N,
 * the client wherever the system puts it (-1: no placement) */
static int pin_cpu = -1;

/* `extra`: one more flag, with the server's stderr to /dev/null (a server that does not know the
 * flag prints its usage and exits) */
static inline pid_t start_server(const char *bin, const char *ep, const char *extra) {
    char cpu[16];
    snprintf(cpu, sizeof cpu, "%d", pin_cpu);
    char *sargv[9] = {(char *)bin, "--bind", (char *)ep, "--workers", "2"}, **a = sargv + 5;
    if (pin_cpu >= 0) *a++ = "--cpu", *a++ = cpu;
    if (extra) *a++ = (char *)extra;
    *a = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (extra) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, sargv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "cannot start %s\n", bin);
        return -1;
    }
    return pid;
}

static inline bool wait_ping(void *ctx, const char *ep) {
    json_t *r = NULL;
    for (int i = 0; i < 100 && !r; i++) { /* wait until the daemon answers */
        void *p = req_socket(ctx, ep);
        int to = 200;
        zmq_setsockopt(p, ZMQ_RCVTIMEO, &to, sizeof to);
        r = call(p, "{\"op\":\"ping\",\"v\":1}");
        zmq_close(p);
    }
    json_decref(r);
    return r != NULL;
}

/* SIGTERM to both servers (the exit status of the first), the echo told to stop */
static inline int stop_all(pid_t srv, pid_t srvj, void *e, pid_t echo) {
    kill(srv, SIGTERM);
    if (srvj > 0) kill(srvj, SIGTERM);
    int status;
    waitpid(srv, &status, 0);
    if (srvj > 0) waitpid(srvj, NULL, 0);
    char stop[8];
    uint64_t want = UINT64_MAX;
    memcpy(stop, &want, 8);
    rt(e, stop, 8);
    waitpid(echo, NULL, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* the hwgym-server to measure: `given` (--server), else BUILD/bin/hwgym-server beside this bench */
static inline void server_path(char *bin, size_t n, const char *given) {
    char exe[4096];
    ssize_t ln = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[ln > 0 ? ln : 0] = 0;
    if (given) snprintf(bin, n, "%s", given);
    else snprintf(bin, n, "%s/bin/hwgym-server", dirname(dirname(exe)));
}

/* the calling process (a child about to make its ZeroMQ context, whose I/O thread then inherits
 * it) on CPU `cpu` only; exits 4 when it may not run there */
static inline void pin_to_cpu(int cpu) {
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(cpu, &m);
    if (sched_setaffinity(0, sizeof m, &m) != 0) _exit(4);
}

/* the raw echo in a child process bound to `ep`, on CPU pin_cpu when set */
static inline pid_t start_echo(const char *ep) {
    pid_t echo = fork();
    if (echo == 0) {
        if (pin_cpu >= 0) pin_to_cpu(pin_cpu);
        echo_server(ep);
    }
    return echo;
}

#endif
