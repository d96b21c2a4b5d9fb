/* bench_egrl.c - hwgym-egrl's speed targets, measured in one run:
 *  1. GNN policy forward on BERT-base (376 nodes) with Table 2's sizes (hidden/out 128,
 *     4 heads, depth 4), one policy, one core: target < 2 ms; its backward too, and ResNet-50;
 *  2. one SAC-discrete update (actor 128, twin critics of --critic-hidden 32, batch 24) on
 *     BERT and ResNet-50, and the same with Table 2's 128-wide critics (the critic-width
 *     ablation's cost, docs/results/egrl-critic-width.md);
 *  3. a generation of 20 BERT mappings in one evaluate_batch over tcp against a spawned
 *     hwgym-server vs the same batch in-process (--endpoint local): time per mapping and the
 *     ratio (target: server within 2x of in-process).
 * Medians over repetitions; 1 and 2 are this thread's CPU time (the build machine is shared),
 * 3 is wall time (it includes the server process). Usage: bench_egrl [--reps N] (the server is BUILD/bin/hwgym-server). */
#include <dirent.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_common.h"
#include "env_lean.h"
#include "placement/placement_env.h"
#include "gnn.h"
#include "gnn_int.h"
#include <cblas.h>
#include "sac_discrete.h"

extern char **environ;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* this thread's CPU time: what one core spends, whatever else the shared machine runs */
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct wl {
    ag_sess *s;
    int N, E;
    gnn_graph *g;
    double *feat;
} wl;

static int load(wl *w, const char *ep, const char *name) {
    hw_err err = {0};
    json_t *cfg = json_pack("{ss}", "workload", name);
    for (int i = 0; i < 50 && !w->s; i++) {
        w->s = ag_sess_make(ep, "placement-v0", cfg, NULL, 0, &err);
        if (!w->s) usleep(100000);
    }
    json_decref(cfg);
    if (!w->s) {
        fprintf(stderr, "bench_egrl: %s: %s\n", ep, err.msg);
        return -1;
    }
    uint64_t sd = 1;
    if (ag_sess_reset(w->s, &sd, &err)) return -1;
    w->N = (int)json_integer_value(json_object_get(w->s->info, "nodes"));
    w->E = (int)json_integer_value(json_object_get(w->s->info, "edges"));
    int64_t *e = malloc(sizeof(int64_t) * (size_t)(2 * w->E + 1));
    for (int k = 0; k < 2 * w->E; k++) e[k] = (int64_t)w->s->obs[k];
    w->g = gnn_graph_from_edges(w->N, e, w->E, &err);
    free(e);
    w->feat = malloc(sizeof(double) * (size_t)w->N * 19);
    const double *nf = w->s->obs + 2 * w->E + 2 * w->N;
    for (int k = 0; k < w->N * 19; k++) w->feat[k] = log1p(nf[k] > 0 ? nf[k] : 0) / 10;
    return 0;
}

static void wl_free(wl *w) {
    ag_sess_free(w->s);
    gnn_graph_free(w->g);
    free(w->feat);
}

static void gnn_times(wl *w, const char *name, int reps) {
    gnn_cfg c = gnn_cfg_default(19, 6);
    gnn_net *n = gnn_new(&c);
    gsl_rng *r = ag_rng_new(1);
    gnn_init(n, r);
    double *tf = malloc(sizeof(double) * (size_t)reps), *tb = malloc(sizeof(double) * (size_t)reps);
    double *dY = malloc(sizeof(double) * (size_t)w->N * 6);
    for (int i = 0; i < w->N * 6; i++) dY[i] = ag_rng_uniform(r) - 0.5;
    gnn_forward(n, w->g, w->feat);
    for (int k = 0; k < reps; k++) {
        double a = cpu();
        gnn_forward(n, w->g, w->feat);
        double b = cpu();
        gnn_zero_grad(n);
        gnn_backward(n, dY, NULL);
        double d = cpu();
        tf[k] = (b - a) * 1e3;
        tb[k] = (d - b) * 1e3;
    }
    /* the floor of any float64 forward: its dense products alone (same shapes), in this run */
    double *A = calloc((size_t)w->N * 256, sizeof(double)), *C = calloc((size_t)w->N * 256, sizeof(double)), *td = malloc(sizeof(double) * (size_t)reps);
    for (int k = 0; k < reps; k++) {
        double a = cpu();
        for (int cv = 0; cv < n->nconv; cv++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n->cc[cv].rows, n->conv_out[cv], n->conv_in[cv], 1.0, A,
                        n->conv_in[cv], n->params + n->conv_w[cv], n->conv_out[cv], 0.0, C, n->conv_out[cv]);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, w->N, 6, c.out, 1.0, A, c.out, n->params + n->head_w, 6, 1.0, C, 6);
        td[k] = (cpu() - a) * 1e3;
    }
    double mf = median(tf, reps), md = median(td, reps);
    printf("gnn %-10s N=%-4d params %zu  forward %.3f ms (its dgemms alone %.3f ms = %.0f%%)  backward %.3f ms (CPU time, median of %d)\n",
           name, w->N, n->nparams, mf, md, 100 * md / mf, median(tb, reps), reps);
    free(A), free(C), free(td);
    /* one SAC update with make paper-egrl's critics (32 wide) and Table 2's width (128) */
    static const int widths[] = {32, 128};
    int64_t *a = malloc(sizeof(int64_t) * (size_t)w->N * 2);
    for (int wi = 0; wi < 2; wi++) {
        sacd_cfg sc = sacd_cfg_default();
        sc.actor = c;
        sc.critic = (gnn_cfg){1, widths[wi], widths[wi], 4, 4, 1, 0.5};
        hw_err err = {0};
        sacd *s = sacd_new(&sc, w->g, w->feat, 19, 2, 3, 1, &err);
        for (int t = 0; t < 48; t++) {
            for (int i = 0; i < 2 * w->N; i++) a[i] = ag_rng_int(r, 3);
            sacd_add(s, a, ag_rng_uniform(r), true);
        }
        int ur = reps / (wi ? 10 : 4);
        ur = ur > 3 ? ur : 3;
        for (int k = 0; k < ur; k++) {
            double t0 = cpu();
            sacd_update(s, r, NULL);
            tf[k] = (cpu() - t0) * 1e3;
        }
        printf("sac %-10s one update (actor 128, critics %d%s, batch 24, chunk 1): %.2f ms (CPU time, median of %d)\n", name,
               widths[wi], wi ? " = Table 2" : " = make paper-egrl", median(tf, ur), ur);
        sacd_free(s);
    }
    free(a);
    free(tf), free(tb), free(dY);
    gsl_rng_free(r);
    gnn_free(n);
}

static double batch_ms(wl *w, int reps) {
    gsl_rng *r = ag_rng_new(2);
    double *t = malloc(sizeof(double) * (size_t)reps), rew[20];
    int64_t *a = malloc(sizeof(int64_t) * (size_t)w->N * 2);
    for (int k = 0; k < reps; k++) {
        json_t *pts = json_array();
        for (int j = 0; j < 20; j++) {
            for (int i = 0; i < 2 * w->N; i++) a[i] = ag_rng_int(r, 3);
            json_array_append_new(pts, ag_json_i64(a, 2 * w->N));
        }
        hw_err err = {0};
        double t0 = now();
        if (ag_sess_evaluate_batch(w->s, pts, rew, NULL, &err)) fprintf(stderr, "bench_egrl: %s\n", err.msg);
        t[k] = (now() - t0) * 1e3;
        json_decref(pts);
    }
    double m = median(t, reps);
    free(t);
    free(a);
    gsl_rng_free(r);
    return m;
}

/* CPU time (s) of every thread of process pid, from /proc/PID/task/TID/schedstat (ns) */
static double proc_cpu(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return NAN;
    double tot = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char f[300];
        snprintf(f, sizeof f, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
        FILE *fp = fopen(f, "r");
        unsigned long long ns = 0;
        if (fp && fscanf(fp, "%llu", &ns) == 1) tot += 1e-9 * (double)ns;
        if (fp) fclose(fp);
    }
    closedir(d);
    return tot;
}

/* the lean batch as hwgym-egrl sends it: one binary array, the numeric metrics back */
static double lean_ms(wl *w, int reps) {
    gsl_rng *r = ag_rng_new(2);
    double *t = malloc(sizeof(double) * (size_t)reps), rew[20];
    double *x = malloc(sizeof(double) * (size_t)w->N * 2 * 20);
    json_t *m[20];
    for (int k = 0; k < reps; k++) {
        for (int i = 0; i < 2 * w->N * 20; i++) x[i] = ag_rng_int(r, 3);
        hw_err err = {0};
        double t0 = now();
        if (ag_sess_evaluate_lean(w->s, 20, x, rew, m, &err)) fprintf(stderr, "bench_egrl: %s\n", err.msg);
        else
            for (int j = 0; j < 20; j++) json_decref(m[j]);
        t[k] = (now() - t0) * 1e3;
    }
    double md = median(t, reps);
    free(t);
    free(x);
    gsl_rng_free(r);
    return md;
}

/* the model alone in-process: placement-v0's lean entry on 20 points */
static double model_ms(int N, int reps) {
    hw_err err = {0};
    json_t *cfg = json_pack("{ss}", "workload", "bert_base");
    void *env = hw_family_placement.create(cfg, &err);
    json_decref(cfg);
    const hw_env_lean *l = hw_env_lean_find("placement-v0");
    if (!env || !l) return NAN;
    gsl_rng *r = ag_rng_new(2);
    double *t = malloc(sizeof(double) * (size_t)reps), v[64];
    int64_t *a = malloc(sizeof(int64_t) * (size_t)N * 2 * 20);
    for (int k = 0; k < reps; k++) {
        for (int i = 0; i < 2 * N * 20; i++) a[i] = ag_rng_int(r, 3);
        double t0 = now();
        for (int j = 0; j < 20; j++) {
            hw_act act = {(size_t)(2 * N), a + (size_t)j * 2 * N, NULL};
            double rw;
            bool f;
            l->eval(env, NULL, &act, &rw, &f, v, &err);
        }
        t[k] = (now() - t0) * 1e3;
    }
    double md = median(t, reps);
    free(t);
    free(a);
    gsl_rng_free(r);
    hw_family_placement.destroy(env);
    return md;
}

int main(int argc, char **argv) {
    int reps = 40;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            printf("usage: bench_egrl [--reps N]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (reps < 3) reps = 3;
    /* the dgemm kernels OpenBLAS picked: OpenBLAS 0.3.21 runs a Zen 4 as Haswell (256-bit);
     * OPENBLAS_CORETYPE=SKYLAKEX there makes the dgemms faster but changes the results' bits */
    printf("OpenBLAS core: %s\n", openblas_get_corename());
    wl bert = {0}, r50 = {0};
    if (load(&bert, "local", "bert_base") || load(&r50, "local", "resnet50")) return 1;
    gnn_times(&bert, "bert_base", reps);
    gnn_times(&r50, "resnet50", reps);
    char exe[4096];
    ssize_t ln = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[ln > 0 ? ln : 0] = 0;
    char bin[4200], ep[64];
    snprintf(bin, sizeof bin, "%s/bin/hwgym-server", dirname(dirname(exe)));
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", 20000 + (int)(getpid() % 12700)); /* below the ephemeral range */
    char *sargv[] = {bin, "--bind", ep, "--workers", "1", NULL};
    pid_t srv;
    if (posix_spawn(&srv, bin, NULL, NULL, sargv, environ) != 0) {
        fprintf(stderr, "bench_egrl: cannot start %s\n", bin);
        return 1;
    }
    wl remote = {0};
    int rc = load(&remote, ep, "bert_base");
    if (!rc) {
        double ml = batch_ms(&bert, reps), mr = batch_ms(&remote, reps);
        double mm = model_ms(bert.N, reps);
        double c0 = proc_cpu(srv), ll = lean_ms(&remote, reps), sc = (proc_cpu(srv) - c0) * 1e3 / reps;
        printf("evaluate_batch of 20 BERT mappings, JSON: in-process %.3f ms (%.1f us/mapping), tcp server %.3f ms (%.1f us/mapping), "
               "ratio %.2f\n",
               ml, ml * 50, mr, mr * 50, mr / ml);
        printf("evaluate_batch of 20 BERT mappings, lean (as hwgym-egrl sends them): tcp server %.3f ms (%.1f us/mapping); "
               "the model in-process %.3f ms (%.1f us/mapping); wall ratio %.2f (client, transport and server)\n",
               ll, ll * 50, mm, mm * 50, ll / mm);
        printf("  server CPU time per lean batch of 20: %.3f ms (all its threads, /proc schedstat), %.2f x the model in-process (the server side: target <= 2)\n", sc,
               sc / mm);
    }
    wl_free(&remote);
    kill(srv, SIGTERM);
    waitpid(srv, NULL, 0);
    wl_free(&bert);
    wl_free(&r50);
    return rc ? 1 : 0;
}
