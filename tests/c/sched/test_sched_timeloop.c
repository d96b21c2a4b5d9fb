/* sched-v0 against the real timeloop-model (v3.0.3): 640 runs in
 * tests/data/timeloop/sched_ref_visible.csv (copied from ../shared/reference/timeloop with its
 * NOTES.md). Checks of issue 15 on the accepted rows: energy and cycles within 1% on >= 95%,
 * per-level per-tensor access counts exact on >= 95%, Spearman of energy >= 0.99 per
 * accelerator; every row: same verdict, rejected rows in the same reason class and level.
 * HW_TL_VERBOSE=1 prints every mismatching row (the offline comparison tool). */
#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "sched/sched.h"
#include "tl_ref.h"

static const int krow[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
static const char *const kname[3] = {"reads", "fills", "updates"};

static double rel_err(double a, double b) { return fabs(a - b) / (fabs(b) > 0 ? fabs(b) : 1); }

static void ranks(const double *x, int n, double *rk) {
    size_t *p = malloc(sizeof(size_t) * (size_t)n);
    gsl_sort_index(p, x, 1, (size_t)n);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && x[p[j + 1]] == x[p[i]]) j++;
        for (int k = i; k <= j; k++) rk[p[k]] = (i + j) / 2.0;
        i = j + 1;
    }
    free(p);
}

Test(sched_timeloop, reference_rows_match_timeloop_model, .timeout = 120) {
    char path[1024];
    cr_assert(hwtest_repo_file("tests/data/timeloop/sched_ref_visible.csv", path, sizeof path), "reference CSV not found");
    tl_ref_row *rows;
    int n = tl_ref_load(path, &rows);
    cr_assert_gt(n, 600, "read %d rows", n);
    int verbose = getenv("HW_TL_VERBOSE") != NULL;
    int nok = 0, e_ok = 0, c_ok = 0, a_ok = 0, verdict_bad = 0;
    static const char *const acc_names[4] = {"eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba"};
    double *ours[4], *theirs[4];
    int na[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        ours[k] = calloc((size_t)n, sizeof(double));
        theirs[k] = calloc((size_t)n, sizeof(double));
    }
    for (int i = 0; i < n; i++) {
        tl_ref_row *r = &rows[i];
        sched_accel a;
        json_t *nm = json_string(r->accel);
        hw_err err;
        cr_assert_eq(sched_accel_resolve(nm, "acc", &a, &err), 0, "%s", err.msg);
        json_decref(nm);
        int bad = sched_check(&a, &r->layer, &r->table, &err);
        if (!r->ok) {
            /* same reason class and the same level as Timeloop's message */
            const char *cls = strstr(r->reason, "exceeds buffer capacity") ? "capacity" : "spatial";
            char lvl[64] = "";
            const char *p = strstr(r->reason, "level ");
            if (p) sscanf(p + 6, "%63[^:]", lvl);
            char want[160];
            snprintf(want, sizeof want, "constraint %s: couldn't map level %s:", cls, lvl);
            if (!bad || strncmp(err.msg, want, strlen(want))) {
                verdict_bad++;
                fprintf(stderr, "row %d (%s %s): timeloop rejected '%s', we said '%s'\n", r->id, r->accel, r->family, r->reason,
                        bad ? err.msg : "ok");
            }
            continue;
        }
        if (bad) {
            verdict_bad++;
            fprintf(stderr, "row %d (%s %s): timeloop accepted, we rejected: %s\n", r->id, r->accel, r->family, err.msg);
            continue;
        }
        nok++;
        sched_cost c;
        sched_cost_eval(&a, &r->layer, &r->table, &c);
        int ai = 0;
        for (int k = 0; k < 4; k++)
            if (!strcmp(r->accel, acc_names[k])) ai = k;
        ours[ai][na[ai]] = c.energy_pj;
        theirs[ai][na[ai]++] = r->energy;
        int eok = rel_err(c.energy_pj, r->energy) <= 0.01, cok = rel_err(c.cycles, r->cycles) <= 0.01;
        int aok = 1;
        char diffs[2048] = "";
        for (int k = 0; k < 4; k++)
            for (int t = 0; t < SCHED_NT; t++)
                for (int q = 0; q < 3; q++) {
                    double ref = r->cnt[k][t][q];
                    if (ref < 0) continue;
                    double v = q == 0 ? c.reads[krow[k]][t] : q == 1 ? c.fills[krow[k]][t] : c.updates[krow[k]][t];
                    if (fabs(v - ref) > 0.5 + 1e-9 * ref) {
                        aok = 0;
                        size_t L = strlen(diffs);
                        snprintf(diffs + L, sizeof diffs - L, " %s_%s_%s=%.0f(tl %.0f)", sched_row_names[krow[k]],
                                 sched_tensor_names[t], kname[q], v, ref);
                    }
                }
        e_ok += eok;
        c_ok += cok;
        a_ok += aok;
        if (verbose && (!eok || !cok || !aok))
            fprintf(stderr, "row %d %s %s %s: E %.4g/%.4g (%+.2f%%) cyc %.6g/%.6g (%s/%s)%s\n", r->id, r->accel, r->family,
                    r->layer.name, c.energy_pj, r->energy, 100 * (c.energy_pj / r->energy - 1), c.cycles, r->cycles,
                    c.bound_row < 0 ? "compute" : sched_row_names[c.bound_row], r->bound, diffs);
        if (verbose && !eok)
            fprintf(stderr, "    ours: REG %.6g LB %.6g GB %.6g DRAM %.6g netPE %.6g netCHIP %.6g\n", c.e_level[SR_REG],
                    c.e_level[SR_LB], c.e_level[SR_GB], c.e_level[SR_DRAM], c.e_level[SR_PEX], c.e_level[SR_CHX]);
    }
    fprintf(stderr, "timeloop fidelity: %d accepted rows: energy within 1%% %d (%.1f%%), cycles %d (%.1f%%), counts exact %d "
                    "(%.1f%%); verdict mismatches %d\n",
            nok, e_ok, 100.0 * e_ok / nok, c_ok, 100.0 * c_ok / nok, a_ok, 100.0 * a_ok / nok, verdict_bad);
    for (int k = 0; k < 4; k++) {
        if (na[k] < 3) continue;
        double *ro = malloc(sizeof(double) * (size_t)na[k]), *rt = malloc(sizeof(double) * (size_t)na[k]);
        ranks(ours[k], na[k], ro);
        ranks(theirs[k], na[k], rt);
        double rho = gsl_stats_correlation(ro, 1, rt, 1, (size_t)na[k]);
        fprintf(stderr, "  %s: %d rows, Spearman(energy) %.5f\n", acc_names[k], na[k], rho);
        cr_expect_geq(rho, 0.99, "%s: Spearman %.4f < 0.99", acc_names[k], rho);
        free(ro);
        free(rt);
    }
    cr_expect_eq(verdict_bad, 0, "%d rows with a different verdict or reason", verdict_bad);
    cr_expect_geq(e_ok, 0.95 * nok, "energy within 1%% on %d of %d", e_ok, nok);
    cr_expect_geq(c_ok, 0.95 * nok, "cycles within 1%% on %d of %d", c_ok, nok);
    cr_expect_geq(a_ok, 0.95 * nok, "access counts exact on %d of %d", a_ok, nok);
    for (int k = 0; k < 4; k++) {
        free(ours[k]);
        free(theirs[k]);
    }
    free(rows);
}

/* per-row loop orders: JSON round trip, errors that name the row, and an order that changes
 * the counts (a perm row of the reference differs from the same table with default orders) */
Test(sched_timeloop, loop_orders_from_json) {
    sched_accel a;
    json_t *nm = json_string("eyeriss_v1");
    hw_err err;
    cr_assert_eq(sched_accel_resolve(nm, "acc", &a, &err), 0);
    json_decref(nm);
    sched_layer l = {"t", {1, 16, 1, 16, 3, 3, 8, 8}, 1};
    sched_table t;
    sched_table_init(&l, &t);
    t.f[SR_DRAM][SD_K] = 4;
    t.f[SR_GB][SD_K] = 4;
    t.f[SR_DRAM][SD_P] = 2;
    t.f[SR_GB][SD_P] = 4;
    json_t *o = json_loads("{\"GB\": \"PKBCGRSQ\"}", 0, NULL);
    cr_assert_eq(sched_orders_from_json(o, &t, &err), 0, "%s", err.msg);
    json_decref(o);
    json_t *back = sched_orders_to_json(&a, &t);
    cr_assert_str_eq(json_string_value(json_object_get(back, "GB")), "PKBCGRSQ");
    cr_assert_str_eq(json_string_value(json_object_get(back, "DRAM")), "CRSKBPQG"); /* default (OS) */
    json_decref(back);
    sched_cost c1, c2;
    cr_assert_eq(sched_evaluate(&a, &l, &t, &c1, &err), 0, "%s", err.msg);
    sched_table t0 = t;
    memset(t0.ord, 0, sizeof t0.ord);
    cr_assert_eq(sched_evaluate(&a, &l, &t0, &c2, &err), 0, "%s", err.msg);
    /* P innermost at GB re-fetches the input tile on every K; the default (K inside P) keeps it */
    cr_assert_neq(c1.fills[SR_LB][ST_I], c2.fills[SR_LB][ST_I]);
    o = json_loads("{\"LB\": \"BPQCRSKK\"}", 0, NULL);
    cr_assert_eq(sched_orders_from_json(o, &t, &err), -1);
    cr_assert(strstr(err.msg, "orders.LB"), "%s", err.msg);
    json_decref(o);
    o = json_loads("{\"PE_X\": \"BPQCRSKG\"}", 0, NULL);
    cr_assert_eq(sched_orders_from_json(o, &t, &err), -1);
    cr_assert(strstr(err.msg, "orders.PE_X: not a storage row"), "%s", err.msg);
    json_decref(o);
}

/* Timeloop's reset on stride change, by hand. LB keeps inputs only; R = 3 in the LB row, so
 * the LB holds a 3-row input window (stride 1) and the DRAM row moves it along P (4 steps)
 * and loops over K (2, irrelevant to inputs):
 *  - P alone: the window slides, each step brings one new row: 3 + 3*1 = 6 fills;
 *  - K inside P (the default OS order): K's zero translation always comes just before each P
 *    step, the translation changes, Timeloop discards the window: 3 rows at each of the 4 P
 *    positions = 12 (no sliding-window reuse at all);
 *  - P inside K: each K pass slides afresh (the K step's translation, the P reset, differs
 *    from P's): 2 * 6 = 12. */
Test(sched_timeloop, input_window_reuse_resets_on_stride_change) {
    sched_accel a;
    json_t *j = json_loads("{\"local_buffer\":{\"I\":8,\"dataflow\":\"WS\"},\"dram\":{\"dataflow\":\"OS\"}}", 0, NULL);
    hw_err err;
    cr_assert_eq(sched_accel_from_json(j, "acc", &a, &err), 0, "%s", err.msg);
    json_decref(j);
    static const int Ks[3] = {1, 2, 2};
    static const char *const orders[3] = {NULL, NULL, "PKBCGRSQ"};
    static const double want[3] = {6, 12, 12};
    for (int k = 0; k < 3; k++) {
        sched_layer l = {"w", {1, 1, 1, Ks[k], 3, 1, 4, 1}, 1};
        sched_table t;
        sched_table_init(&l, &t);
        t.f[SR_LB][SD_R] = 3;
        t.f[SR_DRAM][SD_R] = 1;
        if (orders[k]) cr_assert_eq(sched_order_parse(orders[k], t.ord[SR_DRAM]), 0);
        sched_cost c;
        cr_assert_eq(sched_evaluate(&a, &l, &t, &c, &err), 0, "%s", err.msg);
        cr_assert_eq(c.fills[SR_LB][ST_I], want[k], "case %d: LB input fills %g, want %g", k, c.fills[SR_LB][ST_I], want[k]);
        cr_assert_eq(c.reads[SR_DRAM][ST_I], want[k], "case %d: DRAM input reads %g", k, c.reads[SR_DRAM][ST_I]);
    }
}
