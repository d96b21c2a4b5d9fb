/* bench_maestro.c - speed of the native MAESTRO cost model.
 * For every zoo model and every layer maestro-v0 can map, evaluates MAESTRO's standard dataflows
 * (kcp_ws, xp_ws, yxp_os, ykp_os, rs for CONV/FC; dpt, xp_ws, yxp_os for depthwise) and reports the
 * median time per layer-mapping evaluation and evaluations/s per model, against the targets:
 * median <= 5 us; >= 50x faster than MAESTRO in-process (0.26-1.2 ms per layer); >= 2000x faster
 * than one MAESTRO invocation per step (11 ms, what ArchGym pays). Also times one env evaluate
 * (JSON action -> decode -> model -> metrics) on MobileNet-v2 layer 2. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/zoo.h"
#include "maestro/maestro.h"
#include "registry.h"

static const char *const conv_df[][2] = {
    {"kcp_ws", "SpatialMap(1,1) K; TemporalMap(64,64) C; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S; "
               "TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; Cluster(64, P); SpatialMap(1,1) C; TemporalMap(Sz(R),1) Y; "
               "TemporalMap(Sz(S),1) X; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;"},
    {"xp_ws", "TemporalMap(1,1) K; TemporalMap(1,1) C; TemporalMap(Sz(R),1) Y; SpatialMap(Sz(S),1) X; "
              "TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;"},
    {"yxp_os", "TemporalMap(1,1) K; TemporalMap(1,1) C; SpatialMap(Sz(R), 1) Y; TemporalMap(8,8) X; TemporalMap(Sz(R), Sz(R)) R; "
               "TemporalMap(Sz(S), Sz(S)) S; Cluster(8, P); SpatialMap(Sz(S), 1) X;"},
    {"ykp_os", "TemporalMap(16,16) K; SpatialMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; TemporalMap(1,1) C; Cluster(16, P); "
               "SpatialMap(1,1) K; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; TemporalMap(Sz(R),Sz(R)) R; "
               "TemporalMap(Sz(S),Sz(S)) S;"},
    {"rs", "SpatialMap(1,1) Y'; TemporalMap(1,1) X'; TemporalMap(1,1) C; TemporalMap(16,16) K; TemporalMap(Sz(R),Sz(R)) R; "
           "TemporalMap(Sz(S),Sz(S)) S; Cluster(Sz(R),P); SpatialMap(1,1) Y; SpatialMap(1,1) R; TemporalMap(Sz(S),Sz(S)) S;"},
};
static const char *const dw_df[][2] = {
    {"dpt", "SpatialMap(1,1) C; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;"},
    {"xp_ws", "TemporalMap (1,1) C; TemporalMap (Sz(R),1) Y; SpatialMap (Sz(S),1) X; TemporalMap (Sz(R),Sz(R)) R; TemporalMap (Sz(S),Sz(S)) S;"},
    {"yxp_os", "TemporalMap(1,1) C; SpatialMap(Sz(R), 1) Y; TemporalMap(10,8) X; TemporalMap(Sz(R), Sz(R)) R; "
               "TemporalMap(Sz(S), Sz(S)) S; Cluster(8, P); SpatialMap(Sz(S), 1) X;"},
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bool to_layer(const hw_layer *z, maestro_layer *l) {
    maestro_ltype t;
    if (z->op == HW_OP_CONV || z->op == HW_OP_FC || z->op == HW_OP_MATMUL) t = MAESTRO_CONV;
    else if (z->op == HW_OP_DWCONV) t = MAESTRO_DSCONV;
    else return false;
    maestro_layer_init(l, t, z->name);
    l->dim[MD_K] = t == MAESTRO_DSCONV ? 1 : z->K;
    l->dim[MD_C] = z->C;
    l->dim[MD_R] = z->R > 0 ? z->R : 1;
    l->dim[MD_S] = z->S > 0 ? z->S : 1;
    l->dim[MD_Y] = z->Y > l->dim[MD_R] ? z->Y : l->dim[MD_R];
    l->dim[MD_X] = z->X > l->dim[MD_S] ? z->X : l->dim[MD_S];
    l->stride_x = l->stride_y = z->stride > 0 ? z->stride : 1;
    if (z->N > 1) l->dim[MD_N] = z->N, l->has_n = true;
    maestro_layer_finish(l);
    return true;
}

int main(void) {
    double t_start = now_s();
    maestro_hw h;
    maestro_hw_default(&h);
    h.num_pes = 256, h.noc_bw = 32, h.offchip_bw = 32, h.l1_size = 512, h.l2_size = 108000;
    size_t cap = 1 << 16, n_all = 0;
    double *all = malloc(sizeof(double) * cap);
    printf("maestro-v0 native cost model, hw_256pe_bw32, one core\n");
    printf("%-14s %7s %9s %12s %12s %14s\n", "model", "layers", "mappings", "median_us", "mean_us", "evals_per_s");
    volatile long long sink = 0;
    for (int mi = 0; mi < hw_zoo_count(); mi++) {
        const hw_model *m = hw_zoo_at(mi);
        size_t first = n_all;
        int nl = 0, npairs = 0;
        double tot_time = 0;
        long long tot_evals = 0;
        for (int li = 0; li < m->n; li++) {
            maestro_layer l;
            if (!to_layer(&m->layers[li], &l)) continue;
            nl++;
            const char *const(*df)[2] = l.type == MAESTRO_DSCONV ? dw_df : conv_df;
            int ndf = l.type == MAESTRO_DSCONV ? 3 : 5;
            for (int d = 0; d < ndf; d++) {
                maestro_mapping mp;
                hw_err err = {0};
                if (maestro_parse_directives(df[d][1], &l, &mp, &err)) continue; /* e.g. Sz(R) cluster too big */
                maestro_result r;
                maestro_eval(&l, &h, &mp, &r); /* warm */
                int reps = 40;
                double t0 = now_s();
                for (int k = 0; k < reps; k++) {
                    maestro_eval(&l, &h, &mp, &r);
                    sink += r.runtime;
                }
                double dt = (now_s() - t0) / reps;
                tot_time += dt * reps;
                tot_evals += reps;
                if (n_all == cap) all = realloc(all, sizeof(double) * (cap *= 2));
                all[n_all++] = dt;
                npairs++;
            }
        }
        size_t nm = n_all - first;
        if (!nm) continue;
        double *tmp = malloc(sizeof(double) * nm);
        memcpy(tmp, all + first, sizeof(double) * nm);
        qsort(tmp, nm, sizeof(double), cmp_d);
        printf("%-14s %7d %9d %12.2f %12.2f %14.0f\n", m->name, nl, npairs, 1e6 * tmp[nm / 2], 1e6 * tot_time / (double)tot_evals,
               (double)tot_evals / tot_time);
        free(tmp);
    }
    qsort(all, n_all, sizeof(double), cmp_d);
    double med = all[n_all / 2], p90 = all[(size_t)(0.9 * (double)n_all)], mx = all[n_all - 1];
    printf("\nall layer-mappings: %zu, median %.2f us, p90 %.2f us, max %.1f us\n", n_all, 1e6 * med, 1e6 * p90, 1e6 * mx);
    printf("target median <= 5 us: %s (%.2fx margin)\n", med <= 5e-6 ? "MET" : "MISSED", 5e-6 / med);
    printf("vs MAESTRO in-process 0.26-1.2 ms/layer: %.0fx - %.0fx faster (target >= 50x: %s)\n", 0.26e-3 / med, 1.2e-3 / med,
           0.26e-3 / med >= 50 ? "MET" : "MISSED");
    printf("vs one MAESTRO invocation per step (11 ms): %.0fx faster (target >= 2000x: %s)\n", 11e-3 / med,
           11e-3 / med >= 2000 ? "MET" : "MISSED");

    /* one env evaluate through the vtable (JSON action in, JSON metrics out) */
    const hw_env_family *f;
    hw_err err = {0};
    json_t *cfg = json_pack("{s:s, s:i, s:b}", "model", "mobilenet_v2", "layer", 2, "enforce_buffers", 0);
    void *env = hw_env_create("maestro-v0", cfg, &f, &err);
    json_decref(cfg);
    if (env) {
        const hw_space *as = f->action_space(env);
        int np = (int)hw_space_numel(as);
        int reps = 20000;
        unsigned long long s = 12345;
        double t0 = now_s();
        for (int k = 0; k < reps; k++) {
            json_t *pt = json_array();
            for (int i = 0; i < np; i++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                json_array_append_new(pt, json_integer((json_int_t)((s >> 33) % (unsigned long long)hw_space_choices(as, i))));
            }
            double rw;
            json_t *met = json_object();
            f->evaluate(env, pt, &rw, met, &err);
            json_decref(met);
            json_decref(pt);
        }
        double dt = (now_s() - t0) / reps;
        printf("env evaluate (random marl10 action, JSON in/out, MobileNet-v2 layer 2): %.2f us/call, %.0f calls/s\n", 1e6 * dt,
               1.0 / dt);
        f->destroy(env);
    } else {
        printf("env create failed: %s\n", err.msg);
    }
    printf("bench time %.1f s (sink %lld)\n", now_s() - t_start, (long long)sink);
    free(all);
    return 0;
}
