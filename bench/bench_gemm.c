/* bench_gemm - would float32 networks win for hwgym-muzero? (issue 25, "float32 networks with
 * small-matrix kernels where they win"). Times one forward pass of MuZero's three MLPs
 * (agents/lib/nn/muzero_net.c: representation F -> 128 -> 128 -> 32, dynamics 35 -> 64 -> 64 -> 63,
 * prediction 32 -> 64 -> 64 -> 34; F from mmap-v0's observation space through the agent's own
 * encoder layout) as the GEMMs nn.c runs, in double (cblas_dgemm, what the agent uses) and in float
 * (cblas_sgemm), at the batch sizes the agent runs: 8 (acting leaves, 8 games in flight) and 64 x 6
 * (a training batch of 64 unrolled K = 5 steps). Thread CPU time, OpenBLAS on one thread. Prints
 * the per-pass times and the ratio double / float: what float32 would save of the GEMM share of
 * MuZero's time (perf: 55% of it at the paper-mmap settings, bench/README.md). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "muzero_net.h"
#include "registry.h"

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the layer shapes (in, out) of the three MLPs, one forward pass each */
static int layers(int F, int io[][2]) {
    mz_net_cfg c = mz_net_cfg_default(F);
    int V = 2 * c.S + 1, n = 0;
    const int nets[3][4] = {{c.F, c.Hr, c.Hr, c.E}, {c.E + MZ_NACT, c.H, c.H, c.E + V}, {c.E, c.H, c.H, MZ_NACT + V}};
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) {
            io[n][0] = nets[k][l];
            io[n][1] = nets[k][l + 1];
            n++;
        }
    return n;
}

/* seconds per forward pass over all layers, double (f32 0) or float (1) */
static double pass(int B, int (*io)[2], int nl, int f32, double min_s) {
    size_t mx = 0;
    for (int l = 0; l < nl; l++) {
        size_t a = (size_t)B * (size_t)io[l][0], w = (size_t)io[l][0] * (size_t)io[l][1], o = (size_t)B * (size_t)io[l][1];
        if (a > mx) mx = a;
        if (w > mx) mx = w;
        if (o > mx) mx = o;
    }
    double *x = calloc(mx, sizeof *x), *w = calloc(mx, sizeof *w), *y = calloc(mx, sizeof *y);
    float *xf = calloc(mx, sizeof *xf), *wf = calloc(mx, sizeof *wf), *yf = calloc(mx, sizeof *yf);
    for (size_t i = 0; i < mx; i++) {
        x[i] = xf[i] = (float)((double)(i % 7) * 0.1);
        w[i] = wf[i] = (float)((double)(i % 5) * 0.01);
    }
    long reps = 0;
    double t0 = cpu_now(), t;
    do {
        for (int r = 0; r < 16; r++)
            for (int l = 0; l < nl; l++) {
                int in = io[l][0], out = io[l][1];
                if (f32) cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, xf, in, wf, in, 0.0f, yf, out);
                else cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0, x, in, w, in, 0.0, y, out);
            }
        reps += 16;
        t = cpu_now() - t0;
    } while (t < min_s);
    free(x);
    free(w);
    free(y);
    free(xf);
    free(wf);
    free(yf);
    return t / (double)reps;
}

int main(int argc, char **argv) {
    double secs = 0.5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_gemm [--secs S]  (S: CPU seconds per measurement, default 0.5)\n"
                            "  MuZero's network passes in double (dgemm) and float (sgemm) at the agent's batch sizes\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    openblas_set_num_threads(1);
    hw_err err;
    const hw_env_family *fam;
    json_t *cfg = json_pack("{ss}", "problem", "transformer_big_train");
    void *env = hw_env_create("mmap-v0", cfg, &fam, &err);
    json_decref(cfg);
    if (!env) {
        fprintf(stderr, "bench_gemm: mmap-v0: %s\n", err.msg);
        return 1;
    }
    mz_layout L;
    if (mz_layout_from_space(fam->observation_space(env), &L, &err)) {
        fprintf(stderr, "bench_gemm: %s\n", err.msg);
        return 1;
    }
    int F = mzf_dim(&L);
    fam->destroy(env);
    int io[9][2];
    int nl = layers(F, io);
    printf("MuZero's three MLPs, one forward pass (F = %d features), thread CPU time, OpenBLAS 1 thread:\n", F);
    const int Bs[] = {8, 64 * 6};
    const char *what[] = {"acting leaves, 8 games in flight", "training batch 64 x (K + 1 = 6)"};
    for (int k = 0; k < 2; k++) {
        double d = pass(Bs[k], io, nl, 0, secs), f = pass(Bs[k], io, nl, 1, secs);
        printf("  batch %4d (%s): double %8.2f us, float %8.2f us, double / float %.2f\n", Bs[k], what[k], d * 1e6, f * 1e6, d / f);
    }
    return 0;
}
