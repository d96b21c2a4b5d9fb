/* bench_cluster.c - load and scaling of hwgym-server (issue 19, docs/cluster.md).
 *  1. load: C clients (default 64), each its own libhwgym client and diag-v0 session, step as
 *     fast as they can for S seconds (HWGYM_LOAD_SECONDS, default 60) against ONE server
 *     (--workers 2, tcp loopback): steps/s and the client-side round-trip p50/p99 (target p99
 *     < 10 ms);
 *  2. scaling, same clients for HWGYM_SCALE_SECONDS (default 15): one server with --workers 2
 *     against two servers with --workers 1 each (clients split between them), ratio of steps/s.
 * Both print the server's CPU time per step (user+sys of the server processes from /proc, which
 * does not depend on how busy the machine is, unlike the latencies) and the 1-minute load average
 * at the start and the end of each measurement (the end, and later starts, include this benchmark's
 * own threads); a first measurement that starts on a busy machine (load > 1) says so.
 * Usage: bench_cluster [--clients N]   (servers: BUILD/bin/hwgym-server, or HWGYM_SERVER_BIN
 * for an A/B comparison of two builds) */
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwgym_client.h"

extern char **environ;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct client {
    hwc_ctx *ctx;
    const char *ep;
    double until;
    float *lat; /* seconds */
    size_t n, cap;
    int fail;
    char err[400];
} client;

static void *client_run(void *arg) {
    client *c = arg;
    hw_err err = {0};
    hwc_client *cl = hwc_connect(c->ctx, c->ep, 10000, &err);
    hwc_session s = {0};
    json_t *cfg = json_pack("{si}", "dims", 4);
    if (!cl || hwc_make(cl, "diag-v0", cfg, NULL, &s, &err)) goto fail;
    int64_t seed = 1, a[4] = {1, 2, 3, 4};
    hwc_result r = {0};
    if (hwc_reset(cl, &s, &seed, NULL, &r, &err)) goto fail;
    hwc_result_free(&r);
    while (now() < c->until) {
        double t = now();
        if (hwc_step_i64(cl, &s, a, 4, &r, &err)) goto fail;
        double dt = now() - t;
        bool done = r.num > 0 && (r.terminated[0] || r.truncated[0]);
        hwc_result_free(&r);
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 4096;
            c->lat = realloc(c->lat, sizeof(float) * c->cap);
        }
        c->lat[c->n++] = (float)dt;
        if (done) {
            if (hwc_reset(cl, &s, &seed, NULL, &r, &err)) goto fail;
            hwc_result_free(&r);
        }
    }
    hwc_close(cl, &s, &err);
    goto out;
fail:
    c->fail = 1;
    snprintf(c->err, sizeof c->err, "%s: %s", hw_code_name(err.code), err.msg);
out:
    hwc_session_free(&s);
    json_decref(cfg);
    if (cl) hwc_disconnect(cl);
    return NULL;
}

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

typedef struct load_res {
    double steps_s, p50_ms, p99_ms;
    double cpu_us; /* server CPU (user+sys) per step, microseconds */
    double load0, load1; /* 1-minute load average at the start and the end */
} load_res;

/* user+sys CPU seconds of process p so far (/proc/p/stat fields 14 and 15), NAN if unreadable */
static double proc_cpu(pid_t p) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *q = strrchr(buf, ')'); /* the command may hold spaces */
    unsigned long long ut = 0, st = 0;
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return NAN;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double load1(void) {
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : NAN;
}

/* nclients clients, client i on eps[i % neps], for secs seconds; pids: the servers. */
static int load(const char *const *eps, const pid_t *pids, int neps, int nclients, double secs, load_res *out) {
    out->load0 = load1();
    double cpu0 = 0;
    for (int i = 0; i < neps; i++) cpu0 += proc_cpu(pids[i]);
    hwc_ctx *ctx = hwc_ctx_new();
    client *cs = calloc((size_t)nclients, sizeof *cs);
    pthread_t *th = calloc((size_t)nclients, sizeof *th);
    double t0 = now();
    for (int i = 0; i < nclients; i++) {
        cs[i].ctx = ctx;
        cs[i].ep = eps[i % neps];
        cs[i].until = t0 + secs;
        pthread_create(&th[i], NULL, client_run, &cs[i]);
    }
    size_t total = 0;
    int rc = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(th[i], NULL);
        total += cs[i].n;
        if (cs[i].fail) {
            fprintf(stderr, "bench_cluster: client %d: %s\n", i, cs[i].err);
            rc = -1;
        }
    }
    double el = now() - t0;
    double cpu1 = 0;
    for (int i = 0; i < neps; i++) cpu1 += proc_cpu(pids[i]);
    out->load1 = load1();
    out->cpu_us = total ? 1e6 * (cpu1 - cpu0) / (double)total : NAN;
    float *all = malloc(sizeof(float) * (total + 1));
    size_t k = 0;
    for (int i = 0; i < nclients; i++) {
        memcpy(all + k, cs[i].lat, sizeof(float) * cs[i].n);
        k += cs[i].n;
        free(cs[i].lat);
    }
    qsort(all, total, sizeof(float), cmp_f);
    out->steps_s = (double)total / el;
    out->p50_ms = total ? 1e3 * all[total / 2] : NAN;
    out->p99_ms = total ? 1e3 * all[(size_t)(0.99 * (double)(total - 1))] : NAN;
    free(all);
    free(cs);
    free(th);
    hwc_ctx_free(ctx);
    return rc;
}

static pid_t start_server(const char *bin, const char *ep, const char *workers) {
    char *argv[] = {(char *)bin, "--bind", (char *)ep, "--workers", (char *)workers, NULL};
    pid_t p;
    if (posix_spawn(&p, bin, NULL, NULL, argv, environ)) return -1;
    hw_err err = {0};
    for (int i = 0; i < 100; i++) {
        hwc_client *c = hwc_connect(NULL, ep, 200, &err);
        int ok = c && hwc_ping(c, NULL, &err) == 0;
        hwc_disconnect(c);
        if (ok) return p;
        usleep(50000);
    }
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    return -1;
}

static void stop_server(pid_t p) {
    if (p <= 0) return;
    kill(p, SIGTERM);
    waitpid(p, NULL, 0);
}

static double env_secs(const char *name, double dflt) {
    const char *v = getenv(name);
    double x = v ? atof(v) : dflt;
    return x > 0 ? x : dflt;
}

int main(int argc, char **argv) {
    int nclients = 64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--clients") && i + 1 < argc) nclients = atoi(argv[++i]);
        else {
            printf("usage: bench_cluster [--clients N]   (HWGYM_LOAD_SECONDS, HWGYM_SCALE_SECONDS)\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    double secs = env_secs("HWGYM_LOAD_SECONDS", 60), ssecs = env_secs("HWGYM_SCALE_SECONDS", 15);
    char exe[4096];
    ssize_t ln = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[ln > 0 ? ln : 0] = 0;
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/bin/hwgym-server", dirname(dirname(exe)));
    if (getenv("HWGYM_SERVER_BIN") && *getenv("HWGYM_SERVER_BIN"))
        snprintf(bin, sizeof bin, "%s", getenv("HWGYM_SERVER_BIN"));
    int port = 21000 + (int)(getpid() % 20000);
    char ep1[64], ep2[64];
    snprintf(ep1, sizeof ep1, "tcp://127.0.0.1:%d", port);
    snprintf(ep2, sizeof ep2, "tcp://127.0.0.1:%d", port + 1);

    pid_t a = start_server(bin, ep1, "2");
    if (a < 0) {
        fprintf(stderr, "bench_cluster: cannot start %s on %s\n", bin, ep1);
        return 1;
    }
    load_res r1;
    const char *one[] = {ep1};
    int rc = load(one, &a, 1, nclients, secs, &r1);
    printf("load: %d clients x %.0f s, diag-v0 steps, one server --workers 2 (tcp loopback), %s:\n"
           "  %.0f steps/s, round trip p50 %.2f ms, p99 %.2f ms (target p99 < 10 ms: %s); server CPU %.1f us/step\n"
           "  load average %.2f at the start, %.2f at the end on %ld cores%s\n",
           nclients, secs, bin, r1.steps_s, r1.p50_ms, r1.p99_ms, r1.p99_ms < 10 ? "met" : "NOT met", r1.cpu_us,
           r1.load0, r1.load1, sysconf(_SC_NPROCESSORS_ONLN),
           r1.load0 > 1.0 ? " (the machine was BUSY before the run: not a clean measurement)" : "");
    fflush(stdout);
    load_res s1, s2;
    rc |= load(one, &a, 1, nclients, ssecs, &s1);
    stop_server(a);
    a = start_server(bin, ep1, "1");
    pid_t b = start_server(bin, ep2, "1");
    if (a < 0 || b < 0) {
        fprintf(stderr, "bench_cluster: cannot start two servers\n");
        stop_server(a);
        stop_server(b);
        return 1;
    }
    const char *two[] = {ep1, ep2};
    pid_t ab[2] = {a, b};
    rc |= load(two, ab, 2, nclients, ssecs, &s2);
    stop_server(a);
    stop_server(b);
    printf("scaling: %d clients x %.0f s: one server --workers 2: %.0f steps/s (p99 %.2f ms, %.1f us CPU/step); two "
           "servers --workers 1: %.0f steps/s (p99 %.2f ms, %.1f us CPU/step): ratio two/one %.2f\n"
           "  load average %.2f at the start, %.2f at the end\n",
           nclients, ssecs, s1.steps_s, s1.p99_ms, s1.cpu_us, s2.steps_s, s2.p99_ms, s2.cpu_us, s2.steps_s / s1.steps_s,
           s1.load0, s2.load1);
    return rc ? 1 : 0;
}
