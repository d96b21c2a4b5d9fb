/* bench_sched.c - mean brute-force step time of sched-v0 for every accelerator x model, for
 * two-row and three-row actions, against the target: three-row actions on ResNet-50
 * layers < 5 ms on average.
 *
 * Method: for each accelerator and model, episodes start from the all-in-DRAM table and take
 * STEPS uniformly random valid actions (what an untrained agent does; r moves on as in the env);
 * every brute-force call is timed. ResNet-50 uses every conv/fc layer; the other models use
 * SAMPLE evenly spaced layers to keep the whole bench under 60 s (printed below). */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sched/sched.h"

#define STEPS 24
#define SAMPLE 24

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* step times are thread CPU time: the figures then do not depend on other load on the machine
 * (on an idle machine they equal wall time; the step is single-threaded and does no I/O) */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int next_row(const sched_accel *a, int r) {
    for (int k = 1; k <= SCHED_NROW; k++)
        if (a->present[(r + k) % SCHED_NROW]) return (r + k) % SCHED_NROW;
    return r;
}

int main(void) {
    static const char *const models[] = {"yolov3", "inception_v4", "mobilenet_v3", "resnet50"};
    double t_start = now();
    double rn50_sum3 = 0, rn50_max3 = 0, acc_mean[8] = {0};
    long rn50_n3 = 0;
    printf("sched-v0 brute-force step time, objective energy (thread CPU ms; random valid actions from the all-in-DRAM\n"
           "table, %d steps per layer; ResNet-50: every layer, other models: %d evenly spaced layers)\n",
           STEPS, SAMPLE);
    printf("%-11s %-13s %6s %9s %9s %9s %9s %11s\n", "accelerator", "model", "layers", "2row_ms", "3row_ms", "3row_max",
           "leaves/3r", "pruned/3r");
    for (int ai = 0; ai < sched_builtin_count(); ai++) {
        sched_accel a;
        json_t *nm = json_string(sched_builtin_name(ai));
        hw_err err;
        if (sched_accel_resolve(nm, "accelerator", &a, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        json_decref(nm);
        for (int mi = 0; mi < 4; mi++) {
            sched_layer *L;
            int n = sched_model_layers(models[mi], &L, &err);
            if (n < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            int all = mi == 3, used = all ? n : (n < SAMPLE ? n : SAMPLE);
            gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
            gsl_rng_set(rng, (unsigned long)(ai * 10 + mi));
            double s2 = 0, s3 = 0, mx3 = 0, lv3 = 0, pr3 = 0;
            long n2 = 0, n3 = 0;
            for (int k = 0; k < used; k++) {
                const sched_layer *l = &L[all ? k : (int)((long)k * n / used)];
                sched_table t;
                sched_table_init(l, &t);
                int r = SCHED_NROW - 1;
                for (int q = 0; q < SCHED_NROW; q++)
                    if (a.present[q]) {
                        r = q;
                        break;
                    }
                for (int s = 0; s < STEPS; s++) {
                    int act;
                    do act = (int)gsl_rng_uniform_int(rng, SCHED_NACT);
                    while (!sched_action_valid(&a, act, r));
                    int rows[3];
                    int nr = sched_action_rows(act, r, rows);
                    sched_bf_stats st;
                    double t0 = cpu_now();
                    sched_bruteforce(&a, l, &t, nr, rows, SOBJ_ENERGY, -1, NULL, &st);
                    double ms = (cpu_now() - t0) * 1e3;
                    if (nr == 2) s2 += ms, n2++;
                    else {
                        s3 += ms, n3++;
                        lv3 += (double)st.leaves;
                        pr3 += (double)st.pruned;
                        if (ms > mx3) mx3 = ms;
                        if (all) {
                            rn50_sum3 += ms;
                            rn50_n3++;
                            if (ms > rn50_max3) rn50_max3 = ms;
                        }
                    }
                    r = next_row(&a, r);
                }
            }
            if (all) acc_mean[ai] = n3 ? s3 / n3 : 0;
            printf("%-11s %-13s %3d/%-3d %9.3f %9.3f %9.2f %9.0f %11.0f\n", a.name, models[mi], used, n, n2 ? s2 / n2 : 0,
                   n3 ? s3 / n3 : 0, mx3, n3 ? lv3 / n3 : 0, n3 ? pr3 / n3 : 0);
            fflush(stdout);
            gsl_rng_free(rng);
            free(L);
        }
    }
    printf("\nResNet-50, 3-row actions, per accelerator (target < 5 ms mean):\n");
    for (int ai = 0; ai < sched_builtin_count(); ai++)
        printf("  %-11s %7.3f ms  ratio %.3f  %s\n", sched_builtin_name(ai), acc_mean[ai], acc_mean[ai] / 5.0,
               acc_mean[ai] < 5.0 ? "PASS" : "FAIL");
    double mean = rn50_n3 ? rn50_sum3 / rn50_n3 : 0;
    printf("\nResNet-50, 3-row actions, all accelerators: mean %.3f ms over %ld steps (max %.2f ms); target < 5 ms: "
           "ratio %.3f -> %s\n",
           mean, rn50_n3, rn50_max3, mean / 5.0, mean < 5.0 ? "PASS" : "FAIL");
    printf("bench time %.1f s\n", now() - t_start);
    return 0;
}
