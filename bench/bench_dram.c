/* bench_dram.c - speed of the dram-v0 model: requests simulated per second, and the time for a
 * 100,000-request trace against the 50 ms target and DRAMSys's 0.24-0.85 s (goal >= 10x).
 * Traces: the reference runs' shapes (stream / random over 1 GiB, 2/3 reads, 64 B requests,
 * intervals 1, 6 and 16 tCK) from the built-in generators. Best of 5 runs, one core, in this
 * thread's CPU time (a loaded machine's preemption does not count; wall time printed beside);
 * the 5 runs of a row are spread over the whole benchmark (5 rounds over the 24 rows).
 * It prints two raw figures of this machine, measured the same way, first and again right above
 * the verdict, so a slow (or slowed) machine is visible beside it: memcpy bandwidth over 64 MiB
 * and a dependent integer loop (ns per step). The verdict states the margin under the target
 * (the issue asks for 1.5x, so that a slow day still meets it) and names the slowest run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_machine.h"
#include "dram/dram_model.h"
#include "env.h"
#include "registry.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        fprintf(help ? stdout : stderr,
                "usage: bench_dram\n"
                "  dram-v0's speed: 24 runs of 100,000-request traces (stream / random, intervals 1, 6, 16 tCK,\n"
                "  4 controllers), best of 5 rounds in CPU time, against the 50 ms target (margin goal 1.5x) and\n"
                "  DRAMSys's 0.24-0.85 s; this machine's raw speed (memcpy, dependent multiply-add) printed first\n"
                "  and beside the verdict; then dram-v0 env steps per second. No options.\n");
        return help ? 0 : 2;
    }
    dram_memspec ms;
    hw_err err;
    if (dram_memspec_builtin("DDR4-2400", &ms, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    dram_addrmap am;
    dram_addrmap_default(&ms, &am);
    const int64_t N = 100000;
    const double target_ms = 50, dramsys_lo_ms = 240, dramsys_hi_ms = 850;
    struct {
        const char *name;
        int page, sched, arb;
    } cfgs[] = {{"default (Open/FrFcfs/Simple)", DRAM_PP_OPEN, DRAM_SCHED_FRFCFS, DRAM_ARB_SIMPLE},
                {"Closed/FrFcfs/Simple", DRAM_PP_CLOSED, DRAM_SCHED_FRFCFS, DRAM_ARB_SIMPLE},
                {"Open/FrFcfsGrp/Simple", DRAM_PP_OPEN, DRAM_SCHED_FRFCFSGRP, DRAM_ARB_SIMPLE},
                {"Open/FrFcfs/Fifo arbiter 128", DRAM_PP_OPEN, DRAM_SCHED_FRFCFS, DRAM_ARB_FIFO}};
    const int ncfg = 4;
    printf("bench_dram: 100,000-request traces (DDR4-2400, default address map), best of 5 rounds over all rows, one core, CPU time\n");
    machine_line();
    printf("%-8s %-4s %-30s %10s %10s %12s %10s %12s\n", "pattern", "itv", "controller", "cpu ms", "wall ms", "Mreq/s", "vs 50ms",
           "vs DRAMSys");
    double worst = 0, total_req = 0, total_ms = 0;
    char worst_run[96] = "";
    int pats[2] = {DRAM_GEN_STREAM, DRAM_GEN_RANDOM};
    int itvs[3] = {1, 6, 16};
    /* the 5 runs of each (trace, controller) are spread over the whole benchmark, one round of
     * all 24 after another, so a few slow seconds on a shared machine cannot spoil every run
     * of one row */
    dram_trace tr[6];
    double best[6][4], bestw[6][4];
    for (int ti = 0; ti < 6; ti++) {
        dram_gen g = {pats[ti / 3], N, 2.0 / 3, 0, 1ULL << 30, itvs[ti % 3], 12345, 0.5, 1200};
        dram_trace_init(&tr[ti], 1200);
        dram_generate(&g, &tr[ti]);
        for (int k = 0; k < ncfg; k++) best[ti][k] = bestw[ti][k] = 1e30;
    }
    for (int rep = 0; rep < 5; rep++)
        for (int ti = 0; ti < 6; ti++)
            for (int k = 0; k < ncfg; k++) {
                dram_ctrl c;
                dram_ctrl_default(&c);
                c.page_policy = cfgs[k].page;
                c.scheduler = cfgs[k].sched;
                c.arbiter = cfgs[k].arb;
                dram_result r;
                memset(&r, 0, sizeof r);
                double a = cpu_ms(), aw = now_ms();
                if (dram_simulate(&ms, &am, &c, &tr[ti], &r, &err)) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                double d = cpu_ms() - a, dw = now_ms() - aw;
                if (d < best[ti][k]) best[ti][k] = d;
                if (dw < bestw[ti][k]) bestw[ti][k] = dw;
            }
    for (int ti = 0; ti < 6; ti++) {
        const char *pat = ti / 3 ? "random" : "stream";
        for (int k = 0; k < ncfg; k++) {
            double bt = best[ti][k];
            if (bt > worst) {
                worst = bt;
                snprintf(worst_run, sizeof worst_run, "%s itv %d, %s", pat, itvs[ti % 3], cfgs[k].name);
            }
            total_req += (double)N;
            total_ms += bt;
            printf("%-8s %-4d %-30s %10.2f %10.2f %12.2f %9.1fx %5.0f-%.0fx\n", pat, itvs[ti % 3], cfgs[k].name, bt,
                   bestw[ti][k], (double)N / bt / 1e3, target_ms / bt, dramsys_lo_ms / bt, dramsys_hi_ms / bt);
        }
        dram_trace_free(&tr[ti]);
    }
    printf("overall: %.2f M requests simulated per second\n", total_req / total_ms / 1e3);
    machine_line();
    const double margin_goal = 1.5;
    printf("slowest 100k-request run: %.2f ms CPU (%s); target < %.0f ms: %s, margin %.2fx (goal >= %.1fx: %s); "
           "vs DRAMSys 0.24-0.85 s: %.1fx-%.1fx (goal >= 10x: %s)\n",
           worst, worst_run, target_ms, worst < target_ms ? "met" : "MISSED", target_ms / worst, margin_goal,
           target_ms / worst >= margin_goal ? "met" : "MISSED", dramsys_lo_ms / worst, dramsys_hi_ms / worst,
           dramsys_lo_ms / worst >= 10 ? "met" : "met only against 0.85 s");

    /* env steps per second on the default 10,000-request workload */
    const hw_env_family *f;
    json_t *cfg = json_loads("{\"workload\":\"random\",\"episode_length\":1000000}", 0, NULL);
    void *env = hw_env_create("dram-v0", cfg, &f, &err);
    json_decref(cfg);
    if (!env) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    hw_obs obs;
    uint64_t seed = 1;
    f->reset(env, &seed, NULL, &obs, NULL, NULL);
    int64_t a[10] = {0, 1, 0, 7, 0, 1, 0, 0, 0, 7};
    hw_act act = {10, a, NULL};
    hw_step_out out;
    int steps = 200;
    double t0 = now_ms();
    for (int i = 0; i < steps; i++) {
        a[0] = i % 4;
        a[1] = i % 3;
        if (f->step(env, &act, &out, NULL, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    double dt = now_ms() - t0;
    printf("dram-v0 env: %.0f steps/s on the 10,000-request random workload (%.2f ms per step)\n", steps / dt * 1e3, dt / steps);
    f->destroy(env);
    return 0;
}
