/* cmd_report.c - `hwgym report DB [--run ID] [--svg FILE] [--within F]`: per run of a trial DB,
 * the number of trials, the best reward with its design (action and metrics), how many trials
 * it took to come within a fraction of that best, and a convergence curve (best reward so far
 * against trials) drawn as SVG. JSON on stdout; the SVG has one line per run. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_html.h"

static const char *const USAGE =
    "usage: hwgym report DB [--run ID] [--svg FILE] [--within F] [--out DIR]\n"
    "Summarises the runs of a trial DB (schemas/trials.sql): trials, best reward and its design\n"
    "(action and metrics), trials needed to come within F (default 0.05) of the best reward, and\n"
    "the convergence curve (best reward so far vs trials). --svg draws the curves of the selected\n"
    "runs in one plot. JSON on stdout.\n"
    "--out DIR writes DIR/report.html instead: one self-contained page (inline SVG, no script, no\n"
    "network) with convergence curves per env/config and agent (mean and 95% CI over seeds), the\n"
    "best design with its metrics (maestro-v0: its directives), the parameter correlation heatmap\n"
    "and dendrogram, and the run table; stdout gets {\"html\", \"runs\", \"trials\", \"groups\"}.\n";

typedef struct curve {
    long long run;
    char name[96];
    double *best; /* best reward so far, per trial */
    long n, cap;
} curve;

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

static void write_svg(FILE *f, const curve *c, int nc) {
    const int W = 820, H = 420, L = 80, R = 300, T = 20, B = 50;
    long xmax = 1;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < nc; k++) {
        if (c[k].n > xmax) xmax = c[k].n;
        for (long i = 0; i < c[k].n; i++)
            if (isfinite(c[k].best[i])) {
                if (c[k].best[i] < lo) lo = c[k].best[i];
                if (c[k].best[i] > hi) hi = c[k].best[i];
            }
    }
    if (!isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) hi = lo + (fabs(lo) > 0 ? fabs(lo) * 0.1 : 1);
    double pw = W - L - R, ph = H - T - B;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, H - B);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">trials</text>\n", L + (int)(pw / 2), H - 12);
    fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">best reward so far</text>\n", T + (int)(ph / 2),
            T + (int)(ph / 2));
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", L - 4, H - B, lo);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", L - 4, T + 10, hi);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%ld</text>\n", W - R, H - B + 16, xmax);
    for (int k = 0; k < nc; k++) {
        const char *col = COLORS[k % 8];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        long step = c[k].n > 2000 ? c[k].n / 2000 : 1;
        for (long i = 0; i < c[k].n; i += step) {
            if (!isfinite(c[k].best[i])) continue;
            fprintf(f, "%.1f,%.1f ", L + pw * (double)(i + 1) / (double)xmax, T + ph * (1.0 - (c[k].best[i] - lo) / (hi - lo)));
        }
        if (c[k].n && isfinite(c[k].best[c[k].n - 1]))
            fprintf(f, "%.1f,%.1f", L + pw * (double)c[k].n / (double)xmax, T + ph * (1.0 - (c[k].best[c[k].n - 1] - lo) / (hi - lo)));
        fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">run %lld: %.30s</text>\n", W - R + 10, T + 14 + 16 * k, col, c[k].run, c[k].name);
    }
    fprintf(f, "</svg>\n");
}

static json_t *parse_or_null(const unsigned char *text) {
    if (!text) return json_null();
    json_t *j = json_loads((const char *)text, JSON_DECODE_ANY, NULL);
    return j ? j : json_string((const char *)text);
}

int hwcli_report(int argc, char **argv) {
    const char *run_s = NULL, *svg = NULL, *within_s = NULL, *outdir = NULL, *pos[1];
    int npos = 0;
    const hwcli_opt opts[] = {{"--run", &run_s, NULL}, {"--svg", &svg, NULL}, {"--within", &within_s, NULL}, {"--out", &outdir, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, &npos, USAGE);
    if (rc) return rc == 1 ? 0 : 2;
    long long run = 0;
    hw_err err;
    if (run_s && hwcli_int_arg(run_s, "--run", 1, (1LL << 62), &run, &err)) return hwcli_fail("report", 2, "%s", err.msg);
    double within = 0.05;
    if (within_s) {
        char *end;
        within = strtod(within_s, &end);
        if (*end || !(within >= 0 && within < 1)) return hwcli_fail("report", 2, "--within: '%s' is not a fraction in [0, 1)", within_s);
    }
    if (outdir) {
        json_t *sum = NULL;
        if (hwcli_report_html(pos[0], outdir, run, within, &sum)) return 1;
        hwcli_print_json(sum);
        json_decref(sum);
        return 0;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(pos[0], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        int r = hwcli_fail("report", 1, "%s: %s", pos[0], sqlite3_errmsg(db));
        sqlite3_close(db);
        return r;
    }
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *runs;
    const char *q = run ? "SELECT id, agent, env FROM runs WHERE id = ?1 ORDER BY id" : "SELECT id, agent, env FROM runs ORDER BY id";
    if (sqlite3_prepare_v2(db, q, -1, &runs, NULL) != SQLITE_OK) {
        int r = hwcli_fail("report", 1, "%s: not a trial DB (%s)", pos[0], sqlite3_errmsg(db));
        sqlite3_close(db);
        return r;
    }
    if (run) sqlite3_bind_int64(runs, 1, run);
    sqlite3_stmt *tr;
    sqlite3_prepare_v2(db, "SELECT reward, action, metrics, feasible FROM trials WHERE run_id = ?1 ORDER BY id", -1, &tr, NULL);
    json_t *out = json_array();
    curve *cv = NULL;
    int nc = 0;
    while (sqlite3_step(runs) == SQLITE_ROW) {
        curve c = {0};
        c.run = sqlite3_column_int64(runs, 0);
        snprintf(c.name, sizeof c.name, "%s", (const char *)sqlite3_column_text(runs, 1));
        sqlite3_reset(tr);
        sqlite3_bind_int64(tr, 1, c.run);
        double best = -INFINITY;
        json_t *best_action = json_null(), *best_metrics = json_null();
        long best_at = -1, feasible = 0;
        while (sqlite3_step(tr) == SQLITE_ROW) {
            if (c.n == c.cap) {
                c.cap = c.cap ? 2 * c.cap : 1024;
                c.best = realloc(c.best, (size_t)c.cap * sizeof(double));
                if (!c.best) abort();
            }
            if (sqlite3_column_type(tr, 3) != SQLITE_NULL && sqlite3_column_int(tr, 3)) feasible++;
            if (sqlite3_column_type(tr, 0) != SQLITE_NULL) {
                double r = sqlite3_column_double(tr, 0);
                if (isfinite(r) && r > best) {
                    best = r;
                    best_at = c.n;
                    json_decref(best_action);
                    json_decref(best_metrics);
                    best_action = parse_or_null(sqlite3_column_text(tr, 1));
                    best_metrics = parse_or_null(sqlite3_column_text(tr, 2));
                }
            }
            c.best[c.n++] = best;
        }
        long reach = -1;
        if (best_at >= 0) {
            double target = best - within * fabs(best);
            for (long i = 0; i < c.n && reach < 0; i++)
                if (c.best[i] >= target) reach = i + 1;
        }
        json_t *j = json_pack("{s:I, s:s, s:s, s:I, s:I}", "run", (json_int_t)c.run, "agent", (const char *)sqlite3_column_text(runs, 1), "env",
                              (const char *)sqlite3_column_text(runs, 2), "trials", (json_int_t)c.n, "feasible", (json_int_t)feasible);
        if (best_at >= 0) {
            json_object_set_new(j, "best_reward", json_real(best));
            json_object_set_new(j, "best_trial", json_integer(best_at + 1));
            json_object_set_new(j, "trials_to_within", json_integer(reach));
            json_object_set_new(j, "within", json_real(within));
        }
        json_object_set_new(j, "best_action", best_action);
        json_object_set_new(j, "best_metrics", best_metrics);
        json_array_append_new(out, j);
        cv = realloc(cv, (size_t)(nc + 1) * sizeof *cv);
        if (!cv) abort();
        cv[nc++] = c;
    }
    sqlite3_finalize(tr);
    sqlite3_finalize(runs);
    sqlite3_close(db);
    rc = 0;
    if (run && nc == 0) rc = hwcli_fail("report", 1, "%s: no run %lld", pos[0], run);
    if (!rc && svg) {
        FILE *f = fopen(svg, "w");
        if (!f) rc = hwcli_fail("report", 1, "--svg: cannot write %s", svg);
        else {
            write_svg(f, cv, nc);
            fclose(f);
        }
    }
    if (!rc) {
        json_t *top = json_pack("{s:s, s:o}", "db", pos[0], "runs", out);
        hwcli_print_json(top);
        json_decref(top);
    } else {
        json_decref(out);
    }
    for (int k = 0; k < nc; k++) free(cv[k].best);
    free(cv);
    return rc;
}
