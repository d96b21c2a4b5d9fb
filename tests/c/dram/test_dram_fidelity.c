/* Fidelity of the dram-v0 model against DRAMSys v5.1: replays the 84 reference runs of
 * tests/data/dram/dram_ref_visible.csv (copied from the reference folder together with
 * setup.json) on traces regenerated bit for bit by ref_traces.c, and checks the issue's
 * thresholds: total time and energy within 5% on >= 90% of rows, mean latency within 10% on
 * >= 80% of rows, Spearman rank correlation of total time >= 0.95 per trace. */
#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "dram/dram_model.h"
#include "ref_traces.h"

static uint64_t trace_hash(const dram_trace *t) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t i = 0; i < t->n; i++) {
        uint64_t v[3] = {t->cycle[i], t->write[i], t->addr[i]};
        for (int k = 0; k < 3; k++) {
            h ^= v[k];
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

/* Splits one CSV line in place (handles "quoted,fields"). */
static int split_csv(char *line, char **f, int maxf) {
    int n = 0;
    char *p = line;
    while (n < maxf) {
        if (*p == '"') {
            f[n++] = ++p;
            char *q = strchr(p, '"');
            if (!q) break;
            *q = 0;
            p = q + 1;
            if (*p == ',') p++;
            else break;
        } else {
            f[n++] = p;
            char *q = strpbrk(p, ",\r\n");
            if (!q) break;
            char c = *q;
            *q = 0;
            p = q + 1;
            if (c != ',') break;
        }
    }
    return n;
}

static int col(char **hdr, int nh, const char *name) {
    for (int i = 0; i < nh; i++)
        if (!strcmp(hdr[i], name)) return i;
    cr_assert_fail("CSV column %s missing", name);
    return -1;
}

static int pick(const char *const *names, const char *v) {
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], v)) return i;
    cr_assert_fail("unknown value %s", v);
    return -1;
}

Test(dram_fidelity, traces_regenerate_bit_for_bit) {
    dram_trace t;
    ref_trace("random", 16, 100000, 12345, &t);
    /* first lines of gen_traces.py's random_i16.stl */
    cr_assert_eq(t.addr[0], 0x3553ccc0);
    cr_assert_eq(t.write[0], 1);
    cr_assert_eq(t.addr[2], 0x18c9e500);
    cr_assert_eq(t.write[2], 0);
    cr_assert_eq(trace_hash(&t), 0x9dbb4f051428e90ULL);
    int64_t reads = 0;
    for (int64_t i = 0; i < t.n; i++) reads += !t.write[i];
    cr_assert_eq(reads, 66661); /* setup.json */
    dram_trace_free(&t);
    ref_trace("stream", 1, 100000, 12345, &t);
    cr_assert_eq(trace_hash(&t), 0x44b1cd38999ef091ULL);
    reads = 0;
    for (int64_t i = 0; i < t.n; i++) reads += !t.write[i];
    cr_assert_eq(reads, 66750);
    dram_trace_free(&t);
    ref_trace("stream", 16, 100000, 12345, &t);
    cr_assert_eq(trace_hash(&t), 0xfefa7d7325ec9d81ULL);
    dram_trace_free(&t);
}

#define MAXROWS 128

/* one reference row: its CSV fields, the controller it names, and the simulation's result */
typedef struct sim_row {
    char line[8192];
    char *v[96];
    int nv, ti;
    dram_ctrl c;
    const dram_memspec *ms;
    const dram_addrmap *am;
    const dram_trace *tr;
    dram_result r;
    int rc;
    char err[sizeof(hw_err)];
} sim_row;

typedef struct sim_job {
    sim_row *rows;
    int n, first, step;
} sim_job;

/* simulates rows first, first + step, ... (no assertions here: Criterion's belong to the test's thread) */
static void *sim_rows(void *arg) {
    sim_job *j = arg;
    for (int i = j->first; i < j->n; i += j->step) {
        sim_row *w = &j->rows[i];
        hw_err err = {0};
        memset(&w->r, 0, sizeof w->r);
        w->rc = dram_simulate(w->ms, w->am, &w->c, w->tr, &w->r, &err);
        snprintf(w->err, sizeof w->err, "%s", err.msg);
    }
    return NULL;
}

Test(dram_fidelity, dramsys_reference_runs) {
    char path[1024];
    cr_assert(hwtest_repo_file("tests/data/dram/setup.json", path, sizeof path), "setup.json not found");
    hw_err err;
    json_t *setup = json_load_file(path, 0, NULL);
    cr_assert(setup);
    dram_memspec ms, builtin;
    cr_assert_eq(dram_memspec_from_json(json_object_get(setup, "dramsys_memspec_JEDEC_4Gb_DDR4-2400_8bit_A"), &ms, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(dram_memspec_builtin("DDR4-2400", &builtin, &err), 0);
    cr_assert_eq(memcmp(&ms.type, &builtin.type, sizeof ms - offsetof(dram_memspec, type)), 0,
                 "the built-in DDR4-2400 memspec differs from setup.json's");
    dram_addrmap am, am_def;
    cr_assert_eq(dram_addrmap_from_json(json_object_get(setup, "dramsys_addressmapping_used_rbc"), &ms, &am, &err), 0,
                 "%s", err.msg);
    dram_addrmap_default(&ms, &am_def);
    cr_assert_eq(memcmp(&am, &am_def, sizeof am), 0, "the default address map differs from the reference runs'");
    json_decref(setup);

    cr_assert(hwtest_repo_file("tests/data/dram/dram_ref_visible.csv", path, sizeof path));
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char hdrline[8192];
    cr_assert(fgets(hdrline, sizeof hdrline, f));
    char *hdr[96];
    int nh = split_csv(hdrline, hdr, 96);
    int c_trace = col(hdr, nh, "trace"), c_pat = col(hdr, nh, "pattern"), c_itv = col(hdr, nh, "interval_tck"),
        c_pp = col(hdr, nh, "PagePolicy"), c_sch = col(hdr, nh, "Scheduler"), c_buf = col(hdr, nh, "SchedulerBuffer"),
        c_rbs = col(hdr, nh, "RequestBufferSize"), c_rq = col(hdr, nh, "RespQueue"), c_ref = col(hdr, nh, "RefreshPolicy"),
        c_post = col(hdr, nh, "RefreshMaxPostponed"), c_pull = col(hdr, nh, "RefreshMaxPulledin"),
        c_arb = col(hdr, nh, "Arbiter"), c_mat = col(hdr, nh, "MaxActiveTransactions"), c_T = col(hdr, nh, "total_time_ns"),
        c_E = col(hdr, nh, "total_energy_pJ"), c_L = col(hdr, nh, "avg_lat_ns"), c_P = col(hdr, nh, "avg_power_mW"),
        c_id = col(hdr, nh, "run_id"), c_act = col(hdr, nh, "n_ACT"), c_refn = col(hdr, nh, "n_REFAB");

    /* the three reference traces, regenerated once */
    const char *tnames[3] = {"stream_i1.stl", "stream_i16.stl", "random_i16.stl"};
    static dram_trace tr[3];
    ref_trace("stream", 1, 100000, 12345, &tr[0]);
    ref_trace("stream", 16, 100000, 12345, &tr[1]);
    ref_trace("random", 16, 100000, 12345, &tr[2]);

    /* read every row, simulate them on two threads (the 84 runs of 100,000 requests are most of
     * this group's time under ASan), then check and print them in file order */
    static sim_row R[MAXROWS];
    int rows = 0;
    for (;;) {
        cr_assert_lt(rows, MAXROWS);
        sim_row *w = &R[rows];
        if (!fgets(w->line, sizeof w->line, f)) break;
        w->nv = split_csv(w->line, w->v, 96);
        if (w->nv < nh) continue;
        char **v = w->v;
        int ti = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(v[c_trace], tnames[k])) ti = k;
        cr_assert_geq(ti, 0, "unknown trace %s", v[c_trace]);
        cr_assert_eq(atoi(v[c_itv]), ti == 0 ? 1 : 16);
        cr_assert_str_eq(v[c_pat], ti == 2 ? "random" : "stream");
        dram_ctrl *c = &w->c;
        dram_ctrl_default(c);
        c->page_policy = pick(dram_pp_names, v[c_pp]);
        c->scheduler = pick(dram_sched_names, v[c_sch]);
        c->sched_buffer = pick(dram_buf_names, v[c_buf]);
        c->request_buffer_size = atoi(v[c_rbs]);
        c->resp_queue = pick(dram_resp_names, v[c_rq]);
        c->refresh = pick(dram_ref_names, v[c_ref]);
        c->refresh_max_postponed = atoi(v[c_post]);
        c->refresh_max_pulledin = atoi(v[c_pull]);
        c->arbiter = pick(dram_arb_names, v[c_arb]);
        c->max_active_transactions = atoi(v[c_mat]);
        w->ms = &ms;
        w->am = &am;
        w->tr = &tr[ti];
        w->ti = ti;
        rows++;
    }
    sim_job jobs[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        jobs[k] = (sim_job){R, rows, k, 2};
        cr_assert_eq(pthread_create(&th[k], NULL, sim_rows, &jobs[k]), 0);
    }
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);

    static double refT[MAXROWS], simT[MAXROWS];
    static int trace_of[MAXROWS];
    int okT = 0, okE = 0, okL = 0, cmd_exact = 0;
    double worstT = 0, worstE = 0, worstL = 0;
    printf("dram fidelity vs DRAMSys v5.1 (84 runs; DDR4-2400, RoBaBgCo map)\n");
    printf("%4s %-15s %-15s %-9s %-9s %3s %-7s %-9s %3s %3s %-7s %4s | %8s %8s %8s %8s\n", "run", "trace", "PagePolicy",
           "Sched", "Buffer", "RBS", "Resp", "Refresh", "Pst", "Pul", "Arbiter", "MAT", "dT%", "dE%", "dLat%", "dP%");
    for (int i = 0; i < rows; i++) {
        char **v = R[i].v;
        const dram_ctrl c = R[i].c;
        const dram_result r = R[i].r;
        cr_assert_eq(R[i].rc, 0, "%s", R[i].err);
        double T = atof(v[c_T]), E = atof(v[c_E]), L = atof(v[c_L]), P = atof(v[c_P]);
        double dT = r.total_time_ns / T - 1, dE = r.energy_pJ / E - 1, dL = r.avg_lat_ns / L - 1, dP = r.power_mW / P - 1;
        okT += fabs(dT) <= 0.05;
        okE += fabs(dE) <= 0.05;
        okL += fabs(dL) <= 0.10;
        worstT = fmax(worstT, fabs(dT));
        worstE = fmax(worstE, fabs(dE));
        worstL = fmax(worstL, fabs(dL));
        cmd_exact += r.cmd[DRAM_CMD_ACT] == atoll(v[c_act]) && r.cmd[DRAM_CMD_REF] == atoll(v[c_refn]);
        refT[i] = T;
        simT[i] = r.total_time_ns;
        trace_of[i] = R[i].ti;
        printf("%4s %-15s %-15s %-9s %-9s %3d %-7s %-9s %3d %3d %-7s %4d | %+8.3f %+8.3f %+8.3f %+8.3f\n", v[c_id],
               v[c_trace], v[c_pp], v[c_sch], v[c_buf], c.request_buffer_size, v[c_rq], v[c_ref], c.refresh_max_postponed,
               c.refresh_max_pulledin, v[c_arb], c.max_active_transactions, 100 * dT, 100 * dE, 100 * dL, 100 * dP);
    }
    fclose(f);
    cr_assert_eq(rows, 84);
    printf("total time within 5%%: %d/%d (worst %.3f%%)\n", okT, rows, 100 * worstT);
    printf("energy     within 5%%: %d/%d (worst %.3f%%)\n", okE, rows, 100 * worstE);
    printf("mean lat.  within 10%%: %d/%d (worst %.3f%%)\n", okL, rows, 100 * worstL);
    printf("ACT and REFAB counts exact: %d/%d\n", cmd_exact, rows);
    cr_assert_geq(okT, (int)ceil(0.9 * rows), "total time within 5%% on %d/%d rows", okT, rows);
    cr_assert_geq(okE, (int)ceil(0.9 * rows), "energy within 5%% on %d/%d rows", okE, rows);
    cr_assert_geq(okL, (int)ceil(0.8 * rows), "latency within 10%% on %d/%d rows", okL, rows);
    for (int k = 0; k < 3; k++) {
        double a[MAXROWS], b[MAXROWS], work[2 * MAXROWS];
        int m = 0;
        for (int i = 0; i < rows; i++)
            if (trace_of[i] == k) {
                a[m] = refT[i];
                b[m] = simT[i];
                m++;
            }
        double rho = gsl_stats_spearman(a, 1, b, 1, (size_t)m, work);
        printf("Spearman(total time) %s over %d configs: %.4f\n", tnames[k], m, rho);
        cr_assert_geq(rho, 0.95, "Spearman %s = %g", tnames[k], rho);
    }
    fflush(stdout);
    for (int k = 0; k < 3; k++) dram_trace_free(&tr[k]);
}
