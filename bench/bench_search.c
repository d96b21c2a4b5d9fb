/* bench_search.c - hwgym-search's Bayesian optimisation stays tractable at a 20,000-sample budget.
 *
 * Runs BO in-process (maestro-v0, MobileNet-v2 layer 2, marl10, latency) and times every
 * proposal round (q = 8 points per evaluate_batch). Once the training set is full (256 points)
 * a round costs the same whatever the sample count, so the steady-state ms per sample times
 * 20,000 is the BO overhead of a 20,000-sample run; `--budget 20000` runs it for real
 * (~40 s). For contrast it times the Cholesky of an exact GP on n = 1000/2000/4000 points,
 * which grows as n^3 (a 20,000-point exact GP refactorised after every batch would need
 * 20,000/8 factorisations of a 3.2 GB matrix).
 * Also prints the sample rate of the other algorithms on the same env (in-process). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_common.h"
#include "agents/search/search_int.h" /* linked with hwgym-search's objects (Makefile, BENCH_AGENT) */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct stamp {
    double *t;
    int64_t n;
} stamp;

static void obs(void *ud, int64_t index, const double *x, double reward, const json_t *metrics) {
    (void)x;
    (void)reward;
    (void)metrics;
    stamp *s = ud;
    s->t[index] = now();
    s->n = index + 1;
}

static int run(hs_algo a, ag_sess *sess, hs_space *sp, int64_t budget, int batch, stamp *st, hs_result *res) {
    hs_sess_obj so = {sess, sp};
    hs_objective obj = hs_sess_objective(&so);
    hs_opts o = {0};
    o.algo = a;
    o.seed = 1;
    o.budget = budget;
    o.batch = batch;
    hs_params_default(&o.p);
    o.observer = obs;
    o.observer_ud = st;
    hw_err err = {0};
    if (hs_run(&o, sp, &obj, res, &err)) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    int64_t budget = 4000;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoll(argv[++i]);
    openblas_set_num_threads(1);
    hw_err err = {0};
    json_t *cfg = json_loads("{\"model\":\"mobilenet_v2\",\"layer\":2}", 0, NULL);
    ag_sess *sess = ag_sess_make("local", "maestro-v0", cfg, NULL, 0, &err);
    if (!sess) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 1;
    }
    hs_space *sp = hs_space_from_hw(sess->act_space, &err);
    stamp st = {calloc((size_t)budget + 1, sizeof(double)), 0};
    hs_result res;
    printf("bench_search: BO on maestro-v0 (mobilenet_v2 layer 2, marl10, latency), q=8, training set 256\n");
    double t0 = now();
    if (run(HS_BO, sess, sp, budget, 8, &st, &res)) return 1;
    double total = now() - t0;
    /* steady state: the last half of the run (training set full from sample ~256) */
    int64_t a = budget / 2, b = budget - 1;
    double per = (st.t[b] - st.t[a]) / (double)(b - a);
    printf("  %lld samples in %.2f s; steady state %.3f ms/sample = %.2f ms per proposal round of 8\n", (long long)budget,
           total, 1e3 * per, 8e3 * per);
    printf("  => BO overhead at 20,000 samples: %.1f s (bounded training set: flat per-sample cost)\n",
           budget >= 20000 ? total : per * 20000);
    printf("  best reward %.6g (runtime %lld cycles)\n", res.best,
           (long long)json_integer_value(json_object_get(res.best_metrics, "runtime")));
    /* cost per round early vs late: should not grow once the training set is full */
    int64_t q1a = 300, q1b = 300 + budget / 8;
    if (q1b < a) {
        double early = (st.t[q1b] - st.t[q1a]) / (double)(q1b - q1a);
        printf("  ms/sample samples %lld-%lld: %.3f, last half: %.3f (ratio %.2f, flat = 1)\n", (long long)q1a,
               (long long)q1b, 1e3 * early, 1e3 * per, per / early);
    }
    hs_result_free(&res);

    /* exact GP: one Cholesky at growing n */
    printf("  exact GP Cholesky (Matern 5/2, d=10): ");
    double last = 0;
    int lastn = 0;
    for (int n = 1000; n <= 4000; n *= 2) {
        double *X = malloc(sizeof(double) * (size_t)n * 10), *y = malloc(sizeof(double) * n);
        for (int i = 0; i < n * 10; i++) X[i] = (double)((i * 7919) % 1000) / 1000.0;
        for (int i = 0; i < n; i++) y[i] = sin(i);
        hs_gp *g = hs_gp_new(10, n);
        double t = now();
        hs_gp_fit(g, n, X, y, 0.5, 1.0, 1e-2);
        last = now() - t;
        lastn = n;
        printf("n=%d %.3f s; ", n, last);
        hs_gp_free(g);
        free(X);
        free(y);
    }
    double f20k = last * pow(20000.0 / lastn, 3);
    printf("\n  => one factorisation at n=20,000 ~%.0f s (n^3), x %d rounds = %.0f h if refit every batch of 8\n", f20k,
           20000 / 8, f20k * 2500 / 3600 / 2 /* average n is half */);

    /* other algorithms: sample rate in-process */
    for (int k = 0; k < HS_NALGO; k++) {
        if (k == HS_BO) continue;
        stamp s2 = {calloc(20001, sizeof(double)), 0};
        double t = now();
        if (run((hs_algo)k, sess, sp, 20000, hs_default_batch((hs_algo)k), &s2, &res)) return 1;
        double dt = now() - t;
        printf("  %-6s 20,000 samples in %.2f s (%.0f samples/s), best %.6g\n", hs_algo_name((hs_algo)k), dt, 20000 / dt,
               res.best);
        hs_result_free(&res);
        free(s2.t);
    }
    free(st.t);
    hs_space_free(sp);
    ag_sess_free(sess);
    json_decref(cfg);
    return 0;
}
