/* bench_machine.h - the raw machine line printed first by the benchmarks whose targets are
 * absolute times (bench_dram, bench_mmap), so a slow or loaded machine is visible beside their
 * figures: memcpy bandwidth over 64 MiB and ns per step of a dependent multiply-add chain, best
 * of 5 in the thread's CPU time. Header-only: each benchmark is one .c file (Makefile). */
#ifndef HW_BENCH_MACHINE_H
#define HW_BENCH_MACHINE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* this machine's raw speed, best of 5 in CPU time: memcpy GB/s over 64 MiB, and ns per step of
 * a dependent multiply-add chain (what a slow or throttled core shows first) */
static inline void machine_line(void) {
    size_t n = 64u << 20;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n), memset(b, 2, n);
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t = cpu_ms();
        memcpy(b, a, n);
        t = cpu_ms() - t;
        if (t < best) best = t;
    }
    volatile char sink = b[n / 2];
    (void)sink;
    free(a), free(b);
    double bestl = 1e30;
    volatile uint64_t out = 0;
    for (int k = 0; k < 5; k++) {
        uint64_t x = (uint64_t)k + 1;
        double t = cpu_ms();
        for (int i = 0; i < 20000000; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t = cpu_ms() - t;
        out += x;
        if (t < bestl) bestl = t;
    }
    printf("machine: memcpy %.1f GB/s (64 MiB, best of 5, CPU time); dependent multiply-add %.2f ns a step\n",
           (double)n / best / 1e6, bestl * 1e6 / 20000000);
}

#endif
