/* bench_fair.c - a victim's latency while another client floods the server (issue 28, findings
 * 8 and 9; docs/security.md "Fairness between clients"), measured in one run against the real
 * daemon (2 workers, tcp loopback).
 * The attacker (source address 127.0.0.2) runs 4 processes, each sending session-less
 * evaluate_batch requests at the env caps back to back: 2 x diag-v0 step_us 1e6 (1 s a point)
 * and 2 x dram-v0 count 1e6, 60 points each (a minute of work per request on one worker). The
 * victim (127.0.0.3, libhwgym) makes a diag-v0 session, resets it, steps it and closes it, R
 * times without the attack and R times under it (250 ms apart, once the server has measured the
 * attack's cost). Goal: the victim's make under attack < 1 s.
 * Usage: bench_fair [--rounds R]   (the server binary is BUILD/bin/hwgym-server) */
#include <libgen.h>
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

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one attacker process: the same batch at the caps, again and again, until killed */
static void attacker(const char *ep, bool dram) {
    hw_err err;
    hwc_client *c = hwc_connect(NULL, ep, 600000, &err);
    if (!c) _exit(3);
    json_t *cfg = dram ? json_pack("{s:i}", "count", 1000000) : json_pack("{s:i, s:i, s:i}", "dims", 2, "choices", 3, "step_us", 1000000);
    json_t *pts = json_array();
    for (int k = 0; k < 60; k++) {
        json_t *p = json_array();
        for (int j = 0; j < (dram ? 10 : 2); j++) json_array_append_new(p, json_integer((k + j) % 2));
        json_array_append_new(pts, p);
    }
    for (;;) {
        hwc_batch b;
        if (hwc_evaluate_batch(c, NULL, dram ? "dram-v0" : "diag-v0", cfg, pts, &b, &err) == 0) hwc_batch_free(&b);
    }
}

/* R rounds of make, reset, step, close, gap_us apart; make latencies (s) into mk, whole rounds into all */
static int victim(hwc_client *c, int R, double *mk, double *all, int gap_us) {
    hw_err err;
    json_t *cfg = json_pack("{s:i}", "dims", 4);
    for (int i = 0; i < R; i++) {
        hwc_session s;
        hwc_result res;
        int64_t act[4] = {1, 1, 1, 1};
        if (gap_us) usleep((useconds_t)gap_us);
        double t0 = mono();
        if (hwc_make(c, "diag-v0", cfg, NULL, &s, &err)) {
            fprintf(stderr, "bench_fair: victim make: %s\n", err.msg);
            json_decref(cfg);
            return -1;
        }
        mk[i] = mono() - t0;
        int bad = hwc_reset(c, &s, NULL, NULL, &res, &err);
        if (!bad) hwc_result_free(&res);
        if (!bad && !(bad = hwc_step_i64(c, &s, act, 4, &res, &err))) hwc_result_free(&res);
        if (!bad) bad = hwc_close(c, &s, &err);
        hwc_session_free(&s);
        all[i] = mono() - t0;
        if (bad) {
            fprintf(stderr, "bench_fair: victim: %s\n", err.msg);
            json_decref(cfg);
            return -1;
        }
    }
    json_decref(cfg);
    return 0;
}

static void report(const char *what, double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    printf("  %-28s p50 %8.2f ms   p90 %8.2f ms   max %8.2f ms\n", what, 1e3 * v[n / 2], 1e3 * v[(n * 9) / 10], 1e3 * v[n - 1]);
}

static json_int_t stat_int(hwc_client *c, const char *key) {
    hw_err err;
    json_t *st = NULL;
    json_int_t v = hwc_stats(c, &st, &err) ? -1 : json_integer_value(json_object_get(st, key));
    json_decref(st);
    return v;
}

int main(int argc, char **argv) {
    int R = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) R = atoi(argv[++i]);
        else {
            printf("usage: bench_fair [--rounds R]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (R < 2 || R > 100000) R = 20;
    char exe[4096];
    ssize_t ln = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[ln > 0 ? ln : 0] = 0;
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/bin/hwgym-server", dirname(dirname(exe)));
    int port = 20000 + (int)((getpid() * 7) % 12700); /* below the ephemeral range (bench_wire.h bench_port) */
    char ep[64], vep[96], xep[96];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    snprintf(vep, sizeof vep, "tcp://127.0.0.3:0;127.0.0.1:%d", port);
    snprintf(xep, sizeof xep, "tcp://127.0.0.2:0;127.0.0.1:%d", port);
    char *sargv[] = {bin, "--bind", ep, "--workers", "2", "--drain-timeout", "1", NULL};
    pid_t srv;
    if (posix_spawn(&srv, bin, NULL, NULL, sargv, environ) != 0) {
        fprintf(stderr, "bench_fair: cannot start %s\n", bin);
        return 1;
    }
    hw_err err;
    hwc_client *v = hwc_connect(NULL, vep, 30000, &err);
    bool up = false;
    for (int i = 0; i < 100 && v && !up; i++) {
        hwc_set_timeout(v, 200);
        up = hwc_ping(v, NULL, &err) == 0;
    }
    if (!up) {
        fprintf(stderr, "bench_fair: %s did not answer on %s\n", bin, ep);
        kill(srv, SIGKILL);
        return 1;
    }
    hwc_set_timeout(v, 10000); /* a victim op not answered in 10 s is reported as a failure */
    double *mk0 = calloc((size_t)R, sizeof(double)), *all0 = calloc((size_t)R, sizeof(double));
    double *mk1 = calloc((size_t)R, sizeof(double)), *all1 = calloc((size_t)R, sizeof(double));
    if (!mk0 || !all0 || !mk1 || !all1 || victim(v, R, mk0, all0, 0)) {
        kill(srv, SIGKILL);
        return 1;
    }
    pid_t att[4];
    for (int k = 0; k < 4; k++)
        if ((att[k] = fork()) == 0) attacker(xep, k % 2);
    /* the attack is on and its first points are back (the server has measured their cost) */
    json_int_t steps0 = stat_int(v, "env_steps");
    for (int i = 0; i < 3000 && (stat_int(v, "fair_queued") < 3 || stat_int(v, "env_steps") < steps0 + 4); i++) usleep(10000);
    double a0 = mono();
    int rc = victim(v, R, mk1, all1, 250000);
    double span = mono() - a0;
    json_int_t queued = stat_int(v, "fair_queued"), inflight = stat_int(v, "inflight");
    for (int k = 0; k < 4; k++) kill(att[k], SIGKILL);
    for (int k = 0; k < 4; k++) waitpid(att[k], NULL, 0);
    if (rc) {
        printf("victim make under attack: an op was not answered within 10 s (goal < 1000 ms on 2 cores) FAIL\n");
        kill(srv, SIGKILL);
        waitpid(srv, NULL, 0);
        return 1;
    }
    printf("victim (libhwgym, another address) round of make + reset + step + close on diag-v0, %d rounds each; 2 workers:\n", R);
    report("make, no attack:", mk0, R);
    report("make, under attack:", mk1, R);
    report("whole round, no attack:", all0, R);
    report("whole round, under attack:", all1, R);
    printf("attack: 4 session-less evaluate_batch at the caps (2 x diag-v0 step_us 1e6, 2 x dram-v0 count 1e6; 60 points,\n"
           "  about a minute of work each) from one other address; victim rounds 250 ms apart over %.1f s of attack;\n"
           "  at the end %lld tasks at workers, %lld waiting in fair queues\n",
           span, (long long)inflight, (long long)queued);
    printf("victim make under attack: max %.0f ms (goal < 1000 ms on 2 cores) %s\n", 1e3 * mk1[R - 1], mk1[R - 1] < 1.0 ? "PASS" : "FAIL");
    hwc_disconnect(v);
    kill(srv, SIGTERM);
    int status = 0;
    waitpid(srv, &status, 0);
    free(mk0);
    free(all0);
    free(mk1);
    free(all1);
    return 0;
}
