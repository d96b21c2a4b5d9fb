/* Fidelity of the native model against MAESTRO's own outputs (tests/data/maestro, a copy of
 * the MobileNetV2 reference table: 6 dataflows x 4 HW configs + a 55-variant mapping grid). */
#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "maestro/maestro.h"
#include "refcsv.h"

static double rel(double a, double b) { return b == 0 ? fabs(a) : fabs(a - b) / fabs(b); }

enum { F_RT, F_EN, F_L1, F_L2, F_AREA, F_POWER, F_MACS, F_N };
static const char *const fname[F_N] = {"runtime", "energy (xMAC)", "L1 req", "L2 req", "area", "power", "MACs"};
static const char *const fcol[F_N] = {"out_runtime", "out_total_energy_consumption", "out_total_l1_buffer_requirement",
                                      "out_total_l2_buffer_requirement", "csv_area", "csv_power", "out_num_macs"};

Test(maestro_fidelity, mobilenetv2_reference) {
    char path[4096];
    cr_assert(hwtest_repo_file("tests/data/maestro/maestro_ref_mobilenetv2.csv", path, sizeof path), "reference CSV missing");
    refcsv c;
    cr_assert_eq(refcsv_load(&c, path), 0);
    int col[F_N];
    for (int f = 0; f < F_N; f++) cr_assert_geq(col[f] = refcsv_col(&c, fcol[f]), 0, "%s", fcol[f]);
    int c_type = refcsv_col(&c, "layer_type"), c_status = refcsv_col(&c, "status"), c_dirs = refcsv_col(&c, "directives"),
        c_exp = refcsv_col(&c, "experiment"), c_hw = refcsv_col(&c, "hw_name"), c_lat = refcsv_col(&c, "noc_latency_effective");
    static const char *const dn[] = {"K", "C", "R", "S", "Y", "X"};
    static const int di[] = {MD_K, MD_C, MD_R, MD_S, MD_Y, MD_X};
    int c_dim[6];
    for (int i = 0; i < 6; i++) c_dim[i] = refcsv_col(&c, dn[i]);
    int c_sy = refcsv_col(&c, "stride_y"), c_sx = refcsv_col(&c, "stride_x"), c_pes = refcsv_col(&c, "num_pes"),
        c_l1 = refcsv_col(&c, "l1_size_cstr"), c_l2 = refcsv_col(&c, "l2_size_cstr"), c_bw = refcsv_col(&c, "noc_bw_cstr"),
        c_obw = refcsv_col(&c, "offchip_bw_cstr");
    int nok = 0, within[F_N] = {0}, nrej = 0, rej_ok = 0, accepted_ok = 0;
    double maxrel[F_N] = {0};
    double *g_ref = calloc((size_t)c.nrow, sizeof(double)), *g_our = calloc((size_t)c.nrow, sizeof(double));
    double *work = calloc(2 * (size_t)c.nrow, sizeof(double));
    int ng = 0;
    const char *grid_hw = NULL;
    for (int i = 0; i < c.nrow; i++) {
        char **r = c.rows[i];
        maestro_layer l;
        maestro_layer_init(&l, strcmp(r[c_type], "DSCONV") == 0 ? MAESTRO_DSCONV : MAESTRO_CONV, "ref");
        for (int k = 0; k < 6; k++) l.dim[di[k]] = atoi(r[c_dim[k]]);
        l.stride_y = atoi(r[c_sy]);
        l.stride_x = atoi(r[c_sx]);
        maestro_layer_finish(&l);
        maestro_hw h;
        maestro_hw_default(&h);
        h.num_pes = atoi(r[c_pes]);
        h.l1_size = atol(r[c_l1]);
        h.l2_size = atol(r[c_l2]);
        h.noc_bw = atoi(r[c_bw]);
        h.offchip_bw = atoi(r[c_obw]);
        h.noc_latency = atoi(r[c_lat]);
        maestro_mapping m;
        hw_err err = {0};
        maestro_result res;
        memset(&res, 0, sizeof res);
        int prc = maestro_parse_directives(r[c_dirs], &l, &m, &err);
        if (!prc) maestro_eval(&l, &h, &m, &res);
        if (strcmp(r[c_status], "ok") != 0) {
            nrej++;
            const char *why = prc ? err.msg : res.reason;
            if ((prc || !res.valid) && why[0]) rej_ok++;
            continue;
        }
        nok++;
        if (prc || !res.valid) continue;
        accepted_ok++;
        double ours[F_N] = {(double)res.runtime, res.energy, (double)res.l1_req_total, (double)res.l2_req_total,
                            res.area, res.power, (double)res.num_macs};
        for (int f = 0; f < F_N; f++) {
            double e = rel(ours[f], atof(r[col[f]]));
            if (e <= 0.01) within[f]++;
            if (e > maxrel[f]) maxrel[f] = e;
        }
        if (strcmp(r[c_exp], "grid") == 0) {
            if (!grid_hw) grid_hw = r[c_hw];
            g_ref[ng] = atof(r[col[F_RT]]);
            g_our[ng] = ours[F_RT];
            ng++;
        }
    }
    printf("maestro fidelity on %d MAESTRO-accepted rows (%d accepted by us):\n", nok, accepted_ok);
    for (int f = 0; f < F_N; f++)
        printf("  %-14s within 1%%: %6.2f%%   max rel err %.2e\n", fname[f], 100.0 * within[f] / nok, maxrel[f]);
    double rho = ng > 2 ? gsl_stats_spearman(g_ref, 1, g_our, 1, (size_t)ng, work) : 0;
    printf("  grid runtime Spearman over %d rows: %.6f\n", ng, rho);
    printf("  MAESTRO-rejected rows rejected by us with a reason: %d/%d\n", rej_ok, nrej);
    cr_assert_gt(nok, 1000);
    for (int f = 0; f < F_N; f++) cr_expect_geq(100.0 * within[f] / nok, 95.0, "%s within 1%% on too few rows", fname[f]);
    cr_expect_geq(rho, 0.99);
    cr_expect_gt(ng, 100);
    cr_expect_eq(rej_ok, nrej);
    cr_expect_gt(nrej, 0);
    free(g_ref);
    free(g_our);
    free(work);
    refcsv_free(&c);
}
