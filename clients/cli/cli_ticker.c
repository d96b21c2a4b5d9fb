/* cli_ticker.c - the progress thread of cli_ticker.h. */
#include "cli_ticker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hwcli_ticker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int printed;
    double t0, first, every;
    char cmd[32], what[200];
};

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *run(void *arg) {
    hwcli_ticker *t = arg;
    pthread_mutex_lock(&t->mu);
    double next = t->t0 + t->first;
    while (!t->stop) {
        double wait = next - mono_s();
        if (wait > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double at = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + wait;
            ts.tv_sec = (time_t)at;
            ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
            int rc = pthread_cond_timedwait(&t->cv, &t->mu, &ts);
            if (rc != ETIMEDOUT) continue; /* woken: stop, or spurious (re-checked) */
        }
        if (t->stop) break;
        fprintf(stderr, "hwgym %s: %s: %.0f s so far\n", t->cmd, t->what, mono_s() - t->t0);
        t->printed++;
        next += t->every;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

hwcli_ticker *hwcli_ticker_start(const char *cmd, const char *what) {
    hwcli_ticker *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    const char *e = getenv("HWGYM_PROGRESS_S");
    double x = e ? strtod(e, NULL) : 0;
    bool tty = isatty(STDERR_FILENO);
    t->first = x > 0 ? x : tty ? 1.0 : 10.0;
    t->every = x > 0 ? x : tty ? 2.0 : 10.0;
    t->t0 = mono_s();
    snprintf(t->cmd, sizeof t->cmd, "%s", cmd);
    snprintf(t->what, sizeof t->what, "%s", what);
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&t->th, NULL, run, t)) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    return t;
}

void hwcli_ticker_stop(hwcli_ticker *t) {
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    if (t->printed) fprintf(stderr, "hwgym %s: %s: done in %.1f s\n", t->cmd, t->what, mono_s() - t->t0);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
