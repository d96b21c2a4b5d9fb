/* cmd_cluster.c - `hwgym cluster DB --run ID --budget B`: Algorithm 1 of the MARL DNN-mapping
 * paper on a logged run (cluster.h has the algorithm; docs/marl.md the user guide). */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cluster.h"
#include "hwgym_trials.h"
#include "registry.h"

static const char *usage =
    "usage: hwgym cluster DB --run ID (--budget B | --threshold T) [--top 0.15] [--out FILE] [--svg FILE]\n"
    "Algorithm 1 of the MARL DNN-mapping paper: takes the top fraction (--top, default 0.15) of the\n"
    "run's trials by reward, computes the Pearson correlation between the action parameters,\n"
    "clusters the parameters agglomeratively (average linkage on the distance 1-|r|) and cuts the\n"
    "tree into B clusters (--budget) or at height T (--threshold, in [0,1]).\n"
    "Prints the dendrogram on stderr and the assignment JSON for `hwgym-marl --agents FILE` on\n"
    "stdout ({\"agents\":[{\"name\":\"a0\",\"dims\":[..],\"params\":[..]}],...}); --out also writes it\n"
    "to FILE; --svg draws the correlation heatmap and the dendrogram (the paper's Figure 4).\n";

typedef struct rowv {
    double reward;
    size_t idx;
    double *x;
} rowv;

static int by_reward_desc(const void *a, const void *b) {
    double ra = ((const rowv *)a)->reward, rb = ((const rowv *)b)->reward;
    if (ra != rb) return ra < rb ? 1 : -1;
    size_t ia = ((const rowv *)a)->idx, ib = ((const rowv *)b)->idx;
    return ia < ib ? -1 : ia > ib;
}

int hwcli_cluster(int argc, char **argv) {
    const char *runtext = NULL, *budtext = NULL, *thrtext = NULL, *toptext = NULL, *outpath = NULL, *svgpath = NULL,
               *pos[1];
    hwcli_opt opts[] = {{"--run", &runtext, NULL},     {"--budget", &budtext, NULL}, {"--threshold", &thrtext, NULL},
                        {"--top", &toptext, NULL},     {"--out", &outpath, NULL},    {"--svg", &svgpath, NULL},
                        {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err;
    long long run = 0, budget = 0;
    double threshold = -1, top = 0.15;
    if (!runtext) return hwcli_fail("cluster", 2, "missing --run ID");
    if (hwcli_int_arg(runtext, "--run", 1, INT64_MAX, &run, &err)) return hwcli_fail("cluster", 2, "%s", err.msg);
    if (!budtext && !thrtext) return hwcli_fail("cluster", 2, "missing --budget B (or --threshold T)");
    if (budtext && hwcli_int_arg(budtext, "--budget", 1, HWCL_MAX_PARAMS, &budget, &err))
        return hwcli_fail("cluster", 2, "%s", err.msg);
    if (thrtext) {
        char *end;
        threshold = strtod(thrtext, &end);
        if (*end || end == thrtext || !(threshold >= 0))
            return hwcli_fail("cluster", 2, "--threshold: '%s' is not a number >= 0", thrtext);
    }
    if (toptext) {
        char *end;
        top = strtod(toptext, &end);
        if (*end || end == toptext || !(top > 0 && top <= 1))
            return hwcli_fail("cluster", 2, "--top: '%s' is not a fraction in (0, 1]", toptext);
    }

    sqlite3 *db = hwt_open_readonly(pos[0], &err);
    if (!db) return hwcli_fail("cluster", 1, "%s", err.msg);
    int ret = 1;
    rowv *rows = NULL;
    size_t nrows = 0, cap = 0, skipped = 0;
    double *data = NULL, *corr = NULL, *dist = NULL;
    char **names = NULL;
    int n = -1;
    json_t *envcfg = NULL, *assign = NULL;
    char envid[128] = "";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT env, env_config FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
        hwcli_fail("cluster", 1, "%s: %s", pos[0], sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) != SQLITE_ROW) {
        hwcli_fail("cluster", 1, "--run: no run %lld in %s", run, pos[0]);
        goto out;
    }
    snprintf(envid, sizeof envid, "%s", (const char *)sqlite3_column_text(st, 0));
    if (sqlite3_column_type(st, 1) != SQLITE_NULL)
        envcfg = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
    sqlite3_finalize(st);
    st = NULL;

    if (sqlite3_prepare_v2(db, "SELECT action, reward FROM trials WHERE run_id = ? AND reward IS NOT NULL ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK) {
        hwcli_fail("cluster", 1, "%s: %s", pos[0], sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_bind_int64(st, 1, run);
    while (sqlite3_step(st) == SQLITE_ROW) {
        double reward = sqlite3_column_double(st, 1);
        json_t *a = json_loads((const char *)sqlite3_column_text(st, 0), JSON_DECODE_ANY, NULL);
        if (!json_is_array(a) || !isfinite(reward) || (n >= 0 && (int)json_array_size(a) != n)) {
            skipped++;
            json_decref(a);
            continue;
        }
        if (n < 0) {
            n = (int)json_array_size(a);
            if (n < 1 || n > HWCL_MAX_PARAMS) {
                json_decref(a);
                hwcli_fail("cluster", 1, "run %lld: actions have %d elements (1..%d supported)", run, n,
                           HWCL_MAX_PARAMS);
                goto out;
            }
        }
        if (nrows == cap) {
            cap = cap ? cap * 2 : 1024;
            rows = realloc(rows, cap * sizeof *rows);
        }
        rows[nrows].reward = reward;
        rows[nrows].idx = nrows;
        rows[nrows].x = malloc((size_t)n * sizeof(double));
        bool ok = true;
        for (int i = 0; i < n; i++) {
            json_t *v = json_array_get(a, (size_t)i);
            if (!json_is_number(v)) ok = false;
            else rows[nrows].x[i] = json_number_value(v);
        }
        json_decref(a);
        if (!ok) {
            free(rows[nrows].x);
            skipped++;
            continue;
        }
        nrows++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (nrows < 2) {
        hwcli_fail("cluster", 1, "run %lld has %zu trials with an action vector and a reward; need at least 2", run,
                   nrows);
        goto out;
    }
    /* top fraction by reward (ties keep the logging order) */
    qsort(rows, nrows, sizeof *rows, by_reward_desc);
    size_t m = (size_t)ceil(top * (double)nrows);
    if (m < 2) m = 2;
    if (m > nrows) m = nrows;
    data = malloc(m * (size_t)n * sizeof(double));
    for (size_t r = 0; r < m; r++) memcpy(data + r * n, rows[r].x, (size_t)n * sizeof(double));

    /* parameter names from the env's action space (made in-process) */
    names = calloc((size_t)n, sizeof *names);
    {
        const hw_env_family *fam = NULL;
        hw_err e2;
        void *env = hw_env_create(envid, envcfg, &fam, &e2);
        const hw_space *as = env ? fam->action_space(env) : NULL;
        for (int i = 0; i < n; i++) {
            char buf[64];
            const char *nm = NULL;
            if (as && as->names && hw_space_numel(as) == n) nm = as->names[i];
            if (!nm) {
                snprintf(buf, sizeof buf, "p%d", i);
                nm = buf;
            }
            names[i] = strdup(nm);
        }
        if (!env) fprintf(stderr, "hwgym cluster: cannot make %s here (%s); naming parameters p0..p%d\n", envid,
                          e2.msg, n - 1);
        else fam->destroy(env);
    }

    corr = malloc((size_t)n * n * sizeof(double));
    dist = malloc((size_t)n * n * sizeof(double));
    hwcl_merge merges[HWCL_MAX_PARAMS];
    int labels[HWCL_MAX_PARAMS];
    if (hwcl_pearson(data, m, n, corr, &err) || hwcl_linkage((hwcl_distance(corr, n, dist), dist), n, merges, &err)) {
        hwcli_fail("cluster", 1, "%s", err.msg);
        goto out;
    }
    int k = hwcl_cut(merges, n, budget > 0 ? (int)budget : 0, threshold, labels);
    double cut_h = budget > 0 ? hwcl_cut_height(merges, n, (int)budget) : threshold;

    fprintf(stderr, "run %lld (%s): %zu trials, top %.0f%% = %zu used%s; %d parameters -> %d agents\n", run, envid,
            nrows, top * 100, m, skipped ? " (some trials without an action vector skipped)" : "", n, k);
    fprintf(stderr, "dendrogram (average linkage, height = mean 1-|r|):\n");
    hwcl_print_dendrogram(stderr, merges, n, (const char *const *)names);

    assign = hwcl_assignment_json(labels, n, k, (const char *const *)names);
    json_object_set_new(assign, "env", json_string(envid));
    if (envcfg) json_object_set(assign, "env_config", envcfg);
    json_object_set_new(assign, "run", json_integer(run));
    json_object_set_new(assign, "top", json_real(top));
    json_object_set_new(assign, "samples", json_integer((json_int_t)m));
    json_object_set_new(assign, "linkage", json_string("average"));
    json_object_set_new(assign, "distance", json_string("1-|r|"));
    json_object_set_new(assign, "cut_height", json_real(cut_h));
    json_t *cm = json_array();
    for (int i = 0; i < n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < n; j++) json_array_append_new(row, json_real(round(corr[i * n + j] * 1e6) / 1e6));
        json_array_append_new(cm, row);
    }
    json_object_set_new(assign, "correlation", cm);
    if (outpath && json_dump_file(assign, outpath, JSON_INDENT(1))) {
        hwcli_fail("cluster", 1, "--out: cannot write %s", outpath);
        goto out;
    }
    if (svgpath) {
        FILE *f = fopen(svgpath, "w");
        char title[256];
        snprintf(title, sizeof title, "%s run %lld: top %.0f%% of %zu trials, %d agents", envid, run, top * 100,
                 nrows, k);
        if (!f || hwcl_write_svg(f, corr, n, (const char *const *)names, merges, cut_h, title)) {
            if (f) fclose(f);
            hwcli_fail("cluster", 1, "--svg: cannot write %s", svgpath);
            goto out;
        }
        fclose(f);
    }
    hwcli_print_json(assign);
    ret = 0;
out:
    if (st) sqlite3_finalize(st);
    sqlite3_close(db);
    for (size_t i = 0; i < nrows; i++) free(rows[i].x);
    free(rows);
    free(data);
    free(corr);
    free(dist);
    if (names)
        for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    json_decref(envcfg);
    json_decref(assign);
    return ret;
}
