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
#include "spin.h"

extern char **environ;

/* --cpu N: the servers' router and I/O threads (hwgym-server --cpu) and the echo process on CPU N,
 * the client wherever the system puts it (-1: no placement) */
static int pin_cpu = -1;
/* --spin-us N: the servers with hwgym-server --spin-us N (-1, no flag: the server's default, which
 * polls HW_SPIN_DEFAULT_US while few clients step, and not with --cpu; server/spin.h); with
 * echo_spins the echo polls alike (echo_server), else it blocks as a plain REP echo does */
static int spin_us = -1;
static bool echo_spins = false;

/* how long the echo polls with --echo-spins: as long as the server does */
static inline int echo_spin_us(void) { return !echo_spins ? 0 : spin_us >= 0 ? spin_us : pin_cpu >= 0 ? 0 : HW_SPIN_DEFAULT_US; }

/* the set-up issue 29's verdict is about: the server as it starts by default, the echo a plain
 * blocking REP echo, neither placed */
static inline bool procs_default(void) { return spin_us < 0 && !echo_spins && pin_cpu < 0; }

/* the two sides' set-up, for the benches' headings: " (server ..., echo ...)" */
static inline const char *procs_mode(void) {
    static char m[200];
    char srv[80];
    if (spin_us < 0) snprintf(srv, sizeof srv, "%s", pin_cpu >= 0 ? "not polling (--cpu)" : "the default, polling while few clients step");
    else if (spin_us == 0) snprintf(srv, sizeof srv, "--spin-us 0, not polling");
    else snprintf(srv, sizeof srv, "--spin-us %d", spin_us);
    snprintf(m, sizeof m, " (server %s%s; echo %s%s)", srv, pin_cpu >= 0 ? ", --cpu" : "", echo_spins ? "polling alike" : "blocking",
             pin_cpu >= 0 ? ", on the same CPU" : "");
    return m;
}

/* argv[*i] if it is one of the placement flags above (--cpu N, --spin-us N, --echo-spins): taken,
 * its value too (*i moved past it); false for any other argument */
static inline bool procs_flag(int argc, char **argv, int *i) {
    const char *a = argv[*i];
    bool val = *i + 1 < argc;
    if (!strcmp(a, "--cpu") && val) pin_cpu = atoi(argv[++*i]);
    else if (!strcmp(a, "--spin-us") && val) spin_us = atoi(argv[++*i]);
    else if (!strcmp(a, "--echo-spins")) echo_spins = true;
    else return false;
    return true;
}

/* `extra`: one more flag, with the server's stderr to /dev/null (a server that does not know the
 * flag prints its usage and exits) */
static inline pid_t start_server(const char *bin, const char *ep, const char *extra) {
    char cpu[16], spin[16];
    snprintf(cpu, sizeof cpu, "%d", pin_cpu);
    snprintf(spin, sizeof spin, "%d", spin_us);
    char *sargv[11] = {(char *)bin, "--bind", (char *)ep, "--workers", "2"}, **a = sargv + 5;
    if (pin_cpu >= 0) *a++ = "--cpu", *a++ = cpu;
    if (spin_us >= 0) *a++ = "--spin-us", *a++ = spin;
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

/* the raw echo in a child process bound to `ep` (n bytes; "tcp://127.0.0.1:*": a free port),
 * on CPU pin_cpu when set; the endpoint it bound comes back in ep once it has. -1 when it could
 * not bind (a fixed port can be some connection's ephemeral one: the echo exited, and its client
 * would have waited for it for ever) */
static inline pid_t start_echo(char *ep, size_t n) {
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t echo = fork();
    if (echo == 0) {
        close(fd[0]);
        if (pin_cpu >= 0) pin_to_cpu(pin_cpu);
        echo_server(ep, echo_spin_us(), fd[1]);
    }
    close(fd[1]);
    char got[256];
    size_t k = 0;
    ssize_t r;
    while (k < sizeof got - 1 && (r = read(fd[0], got + k, sizeof got - 1 - k)) > 0) k += (size_t)r;
    close(fd[0]);
    if (echo < 0 || k == 0) {
        if (echo > 0) waitpid(echo, NULL, 0);
        fprintf(stderr, "the raw echo could not bind %s\n", ep);
        return -1;
    }
    got[k < n ? k : n - 1] = 0; /* "tcp://127.0.0.1:NNNNN" fits the callers' 64 bytes */
    memcpy(ep, got, strlen(got) + 1);
    return echo;
}

#endif
