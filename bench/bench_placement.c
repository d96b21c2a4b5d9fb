/* bench_placement.c - placement-v0: median time of one mapping evaluation (compiler
 * rectification + latency, pl_evaluate) on BERT-base (target <= 20 us), ResNet-50 and
 * ResNet-101 on both hw presets (nnpi-like, the default, and nnp-i with 12 SRAM banks), plus
 * the model's figures for reference policies and the time of the headroom bounds
 * (pl_bound_compute, 2000 iterations). Prints a few lines per workload and chip.
 * Usage: bench_placement [REPS [PRESET [WORKLOAD]]] (the optional names keep one chip or one
 * workload, e.g. to count one configuration's instructions under callgrind). */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "placement/placement_bound.h"
#include "placement/placement_env.h"
#include "registry.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `reps` timed batches of `inner` evaluations, per evaluation, in microseconds. */
static double median_eval_us(const pl_model *m, pl_scratch *s, uint8_t *const *maps, int nmaps, int reps) {
    enum { INNER = 8 };
    double *t = malloc(sizeof(double) * (size_t)reps);
    pl_result r;
    volatile double sink = 0;
    for (int k = 0; k < reps; k++) {
        const uint8_t *mp = maps[k % nmaps];
        double a = now();
        for (int j = 0; j < INNER; j++) {
            pl_evaluate(m, mp, s, &r);
            sink += r.latency;
        }
        t[k] = (now() - a) / INNER * 1e6;
    }
    qsort(t, (size_t)reps, sizeof *t, cmpd);
    double med = t[reps / 2];
    free(t);
    (void)sink;
    return med;
}

int main(int argc, char **argv) {
    const char *workloads[] = {"bert_base", "resnet50", "resnet101"};
    const int reps = argc > 1 ? atoi(argv[1]) : 3000;
    const double target_us = 20.0;
    int fail = 0;
    const char *presets[] = {"nnpi-like", "nnp-i"};
    const char *only_hw = argc > 2 ? argv[2] : NULL, *only_w = argc > 3 ? argv[3] : NULL;
    printf("placement-v0 evaluation speed (rectification + latency), median of %d x 8 calls\n", reps);
    for (int h = 0; h < 2; h++)
    for (int w = 0; w < 3; w++) {
        if ((only_hw && strcmp(only_hw, presets[h]) != 0) || (only_w && strcmp(only_w, workloads[w]) != 0)) continue;
        char cfg_text[96];
        snprintf(cfg_text, sizeof cfg_text, "{\"workload\":\"%s\",\"hw\":\"%s\"}", workloads[w], presets[h]);
        json_t *cfg = json_loads(cfg_text, 0, NULL);
        hw_err err = {0};
        const hw_env_family *f;
        void *env = hw_env_create("placement-v0", cfg, &f, &err);
        json_decref(cfg);
        if (!env) {
            printf("%-10s create failed: %s\n", workloads[w], err.msg);
            fail = 1;
            continue;
        }
        const pl_model *m = pl_env_model(env);
        pl_scratch *s = pl_scratch_new(m);
        enum { NR = 64 };
        uint8_t *rnd[NR], *sram = malloc((size_t)m->nt), *dram = calloc((size_t)m->nt, 1);
        memset(sram, m->hw.n_mem - 1, (size_t)m->nt);
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, 1);
        for (int k = 0; k < NR; k++) {
            rnd[k] = malloc((size_t)m->nt);
            for (int t = 0; t < m->nt; t++) rnd[k][t] = (uint8_t)gsl_rng_uniform_int(rng, (unsigned long)m->hw.n_mem);
        }
        uint8_t *heur[1] = {m->heuristic}, *sr[1] = {sram};
        double t_rand = median_eval_us(m, s, rnd, NR, reps);
        double t_heur = median_eval_us(m, s, heur, 1, reps);
        double t_sram = median_eval_us(m, s, sr, 1, reps);
        pl_result r;
        double eps_rand = 0;
        for (int k = 0; k < NR; k++) {
            pl_evaluate(m, rnd[k], s, &r);
            eps_rand += r.eps / NR;
        }
        pl_evaluate(m, sram, s, &r);
        double sram_eps = r.eps, sram_speed = m->baseline / r.latency;
        double dram_speed = m->baseline / pl_latency(m, dram, NULL);
        printf("%-10s %-9s N=%3d E=%3d  median us/eval: random %.2f, heuristic %.2f, all-SRAM %.2f", workloads[w],
               presets[h], m->n, m->ne, t_rand, t_heur, t_sram);
        if (w == 0) {
            double worst = t_rand > t_heur ? t_rand : t_heur;
            if (t_sram > worst) worst = t_sram;
            printf("  -> worst %.2f us = %.2fx of the %.0f us target (%s)", worst, worst / target_us, target_us,
                   worst <= target_us ? "PASS" : "FAIL");
            if (worst > target_us) fail = 1;
        }
        printf("\n%-10s baseline (heuristic) latency %.1f us; speedup all-DRAM %.3f; all-SRAM eps %.3f (rectified "
               "speedup %.3f); random mean eps %.3f\n",
               "", m->baseline * 1e6, dram_speed, sram_eps, sram_speed, eps_rand);
        pl_bound b;
        double tb = now();
        if (pl_bound_compute(m, 2000, &b) == 0)
            printf("%-10s bounds: capacity_free %.3f, capacity_aware %.3f (%d iterations) in %.1f ms\n", "", b.capacity_free,
                   b.capacity_aware, b.iterations, (now() - tb) * 1e3);
        for (int k = 0; k < NR; k++) free(rnd[k]);
        free(sram);
        free(dram);
        gsl_rng_free(rng);
        pl_scratch_free(s);
        f->destroy(env);
    }
    return fail;
}
