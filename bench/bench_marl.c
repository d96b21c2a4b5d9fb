/* bench_marl.c - issue 8's MARL speed target: a MARL run of 20,000 samples on maestro-v0
 * (MobileNet-v2 layer 2, latency) with 10 workers (one PPO agent per parameter), on this
 * machine, in under 5 minutes. Runs hwgym-server in-process (2 worker threads, ipc) and
 * BUILD/bin/hwgym-marl (which spawns the 10 hwgym-marl-worker processes); prints the wall
 * time, the sample rate and the ratio to the target. BENCH_MARL_BUDGET overrides 20000. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

extern char **environ;

static volatile sig_atomic_t stop_flag;
static hw_server_opts sopts;

static void *serve(void *arg) {
    (void)arg;
    hw_server_run(&sopts, &stop_flag);
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int run(const char *bin, const char *ep, const char *budget, const char *policy, const char *outpath,
               double *secs) {
    const char *argv[] = {bin,        "--endpoint", ep,       "--env",    "maestro-v0", "--budget", budget,
                          "--policy", policy,       "--seed", "1",        "--quiet",    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    double t0 = now();
    int e = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) return -1;
    int st;
    waitpid(pid, &st, 0);
    *secs = now() - t0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void) {
    char exe[4096], bin[4200], ep[128], out[128];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return 1;
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    *slash = 0; /* BUILD/bench */
    snprintf(bin, sizeof bin, "%s/../bin/hwgym-marl", exe);
    if (access(bin, X_OK)) {
        printf("bench_marl: %s is not built (make all)\n", bin);
        return 1;
    }
    const char *budget = getenv("BENCH_MARL_BUDGET") ? getenv("BENCH_MARL_BUDGET") : "20000";
    snprintf(ep, sizeof ep, "ipc:///tmp/bench-marl-%d.sock", (int)getpid());
    snprintf(out, sizeof out, "/tmp/bench-marl-%d.json", (int)getpid());
    hw_server_default_opts(&sopts);
    sopts.workers = 2;
    sopts.binds[0] = ep;
    sopts.nbinds = 1;
    pthread_t th;
    pthread_create(&th, NULL, serve, NULL);
    usleep(200000);
    long n = atol(budget);
    printf("MARL on maestro-v0 (MobileNet-v2 L2, latency), 10 workers, %ld samples, server in-process (2 threads)\n", n);
    const char *pols[] = {"ppo", "random"};
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        double secs = 0;
        int st = run(bin, ep, budget, pols[i], out, &secs);
        if (st) {
            printf("  policy %-6s  FAILED (status %d)\n", pols[i], st);
            rc = 1;
            continue;
        }
        printf("  policy %-6s  %8.2f s wall  %9.0f samples/s  %s", pols[i], secs, n / secs,
               i == 0 ? "" : "(no learning: protocol + barriers only)");
        if (i == 0) printf("target < 300 s: %.3f of the target (%s)", secs / 300.0, secs < 300 ? "met" : "NOT met");
        printf("\n");
    }
    unlink(out);
    stop_flag = 1;
    pthread_join(th, NULL);
    return rc;
}
