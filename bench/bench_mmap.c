/* bench_mmap.c - mmap-v0 speed: mean step time under random legal play on the largest dataset
 * program (targets: <= 5 us per step) and snapshot + restore of a mid-game state (<= 100 us).
 * First the raw machine line (bench_machine.h), so a slow or loaded machine is visible. */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_machine.h"
#include "mmap/mmap.h"
#include "registry.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *PROBLEM = "transformer_big_train";

/* Mean env step (us, wall time) under random legal play for about `budget` seconds; *cpu_share
 * gets the thread's CPU time over the wall time of the whole loop (1 on an idle machine; a
 * loaded one preempts the thread inside timed steps too, so step x share estimates the CPU
 * time of a step without reading the CPU clock, a system call, around each 4 us step). */
static double env_steps(const char *cfg_text, double budget, long *nsteps, double *cpu_share) {
    const hw_env_family *f;
    hw_err err;
    json_t *cfg = json_loads(cfg_text, 0, NULL);
    void *env = hw_env_create("mmap-v0", cfg, &f, &err);
    json_decref(cfg);
    if (!env) {
        fprintf(stderr, "create: %s\n", err.msg);
        exit(1);
    }
    const mm_game *g = mm_env_game(env);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    hw_obs obs;
    hw_step_out o;
    double spent = 0, w0 = now(), c0 = cpu_ms() * 1e-3, t_end = w0 + budget;
    long n = 0;
    uint64_t seed = 0;
    while (now() < t_end) {
        f->reset(env, &seed, NULL, &obs, NULL, NULL);
        gsl_rng_set(rng, (unsigned long)seed++);
        while (!g->done) {
            int64_t a = mm_policy_random(g, rng);
            hw_act act = {1, &a, NULL};
            double t0 = now();
            f->step(env, &act, &o, NULL, NULL);
            spent += now() - t0;
            n++;
        }
    }
    *cpu_share = (cpu_ms() * 1e-3 - c0) / (now() - w0);
    gsl_rng_free(rng);
    f->destroy(env);
    *nsteps = n;
    return spent / (double)n * 1e6;
}

int main(void) {
    machine_line();
    hw_err err;
    mm_problem *p = mm_dataset_load(PROBLEM, 0, &err);
    if (!p) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("program %s: %d instructions, %d buffers, CMEM %d granules\n", PROBLEM, p->T, p->nbuf, p->G);
    /* 1. engine step (apply + legality of the next buffer) */
    mm_game *g = mm_game_new(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    long n = 0;
    double spent = 0;
    for (int ep = 0; ep < 20; ep++) {
        mm_game_reset(g);
        gsl_rng_set(rng, (unsigned long)ep);
        while (!g->done) {
            int a = mm_policy_random(g, rng);
            double t0 = now();
            mm_game_step(g, a);
            spent += now() - t0;
            n++;
        }
    }
    double eng = spent / (double)n * 1e6;
    printf("engine step (random legal play): %.3f us/step over %ld steps  (target 5 us: %.1fx under)\n", eng, n, 5.0 / eng);
    /* 2. env step with the full Dict observation, and without the 128x128 map */
    long n1, n2;
    double sh1, sh2;
    char cfg[200];
    snprintf(cfg, sizeof cfg, "{\"problem\":\"%s\"}", PROBLEM);
    double full = env_steps(cfg, 4.0, &n1, &sh1);
    printf("env step, full observation (128x128 map): %.3f us/step over %ld steps  (target 5 us: ratio %.2f); CPU share %.2f, "
           "so ~%.3f us of CPU a step\n", full, n1, full / 5.0, sh1, full * sh1);
    snprintf(cfg, sizeof cfg, "{\"problem\":\"%s\",\"memory_map\":false}", PROBLEM);
    double nomap = env_steps(cfg, 2.0, &n2, &sh2);
    printf("env step, observation without the map: %.3f us/step over %ld steps  (target 5 us: ratio %.2f); CPU share %.2f\n", nomap, n2,
           nomap / 5.0, sh2);
    /* 3. snapshot + restore of a mid-game state, MCTS-style: snapshot, 16 random steps, restore */
    const hw_env_family *f;
    snprintf(cfg, sizeof cfg, "{\"problem\":\"%s\"}", PROBLEM);
    json_t *cj = json_loads(cfg, 0, NULL);
    void *env = hw_env_create("mmap-v0", cj, &f, &err);
    json_decref(cj);
    json_t *pt = json_pack("{s:s}", "policy", "heuristic");
    json_t *m = json_object();
    double r;
    f->evaluate(env, pt, &r, m, NULL);
    const char *hacts = json_string_value(json_object_get(m, "actions"));
    hw_obs obs;
    hw_step_out o;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    const mm_game *eg = mm_env_game(env);
    for (int32_t i = 0; i < p->nbuf / 2; i++) {
        int64_t a = hacts[i] - '0';
        hw_act act = {1, &a, NULL};
        f->step(env, &act, &o, NULL, NULL);
    }
    double ts = 0, tr = 0;
    int K = 2000;
    for (int k = 0; k < K; k++) {
        double t0 = now();
        void *snap = f->snapshot(env, NULL);
        double t1 = now();
        for (int s = 0; s < 16 && !eg->done; s++) {
            int64_t a = mm_policy_random(eg, rng);
            hw_act act = {1, &a, NULL};
            f->step(env, &act, &o, NULL, NULL);
        }
        double t2 = now();
        f->restore(env, snap, NULL);
        double t3 = now();
        f->snapshot_free(snap);
        ts += t1 - t0;
        tr += t3 - t2;
    }
    double sr = (ts + tr) / K * 1e6;
    printf("snapshot + restore at buffer %d (16 steps apart): %.2f us (snapshot %.2f, restore %.2f)  (target 100 us: %.1fx under)\n",
           eg->t, sr, ts / K * 1e6, tr / K * 1e6, 100.0 / sr);
    /* worst case: restore after a reset (replays the whole prefix) */
    void *snap = f->snapshot(env, NULL);
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    double t0 = now();
    f->restore(env, snap, NULL);
    printf("worst case restore after reset (replay of %d steps): %.1f us\n", eg->t, (now() - t0) * 1e6);
    f->snapshot_free(snap);
    json_decref(pt);
    json_decref(m);
    f->destroy(env);
    gsl_rng_free(rng);
    mm_game_free(g);
    mm_problem_free(p);
    return 0;
}
