/* report.c - `hwgym-marl report`: turns the runs of scripts/paper-marl.sh into
 * docs/results/marl.md (means with 95% confidence intervals from GSL's t quantiles) and SVG
 * convergence plots (our own small SVG writer below).
 *
 * Input: the trial DB and a manifest, one run per line, tab-separated:
 *   SECTION  GROUP  METHOD  SEED  RUN_ID
 * SECTION is table3 | fig5 | fig6 | dram (it picks the metrics); GROUP is a column/plot (e.g.
 * "mobilenet_v2 L2 latency"); METHOD a row/line. Lines starting with # are ignored.
 * Per run the rewards are taken in trial id order (one worker: the run's first one), so sample
 * k is the k-th logged env sample/evaluation of the run. Metrics:
 *   best        best reward found; table3 shows the objective 1/best (latency cycles, EDP)
 *   final       mean reward of the last 10% of the samples ("mean return" of the policy)
 *   to95        first sample at which the moving average (window 5% of the budget) reaches
 *               95% of the group's best final mean (over methods): Figure 5's "samples to
 *               reach within 5% of the best final value"; budget if never ("not reached")
 *   ep_return   mean episode return (sum of rewards per episode) over the last 20% episodes
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwgym_trials.h"

int marl_report_main(int argc, char **argv);

#define NPTS 100
#define MAXR 512

typedef struct runrec {
    char section[32], group[128], method[64];
    long long seed, run;
    double *r;
    size_t n;
    double best, final, ep_return;
    double to95;
    bool reached;
    double best_curve[NPTS + 1], ma_curve[NPTS + 1];
} runrec;

static const char *usage =
    "usage: hwgym-marl report --db DB --manifest FILE --out FILE.md [--svg-dir DIR] [--svg-ref PREFIX]\n"
    "                         [--header FILE]\n"
    "Writes the paper-comparison report (docs/results/marl.md) from the runs listed in the manifest\n"
    "(SECTION<TAB>GROUP<TAB>METHOD<TAB>SEED<TAB>RUN_ID per line; SECTION table3|fig5|fig6|dram).\n"
    "--header: markdown copied to the top (commands, budgets). SVGs go to --svg-dir and are linked\n"
    "as --svg-ref/NAME.svg.\n";

static int load_rewards(sqlite3 *db, runrec *r) {
    sqlite3_stmt *st = NULL;
    /* the run's first worker only (hwgym-marl --log all logs each sample once per agent) */
    const char *sql = "SELECT reward, episode FROM trials WHERE run_id = ?1 AND worker = (SELECT worker FROM trials "
                      "WHERE run_id = ?1 ORDER BY id LIMIT 1) ORDER BY id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    sqlite3_bind_int64(st, 1, r->run);
    size_t cap = 1024;
    r->r = malloc(cap * sizeof(double));
    long long *ep = malloc(cap * sizeof(long long));
    r->n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (r->n == cap) {
            cap *= 2;
            r->r = realloc(r->r, cap * sizeof(double));
            ep = realloc(ep, cap * sizeof(long long));
        }
        double v = sqlite3_column_type(st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 0);
        r->r[r->n] = v;
        ep[r->n] = sqlite3_column_int64(st, 1);
        r->n++;
    }
    sqlite3_finalize(st);
    if (r->n == 0) {
        free(ep);
        return -1;
    }
    /* best-so-far curve, final mean, episode returns */
    double best = -INFINITY;
    size_t W = r->n / 20 ? r->n / 20 : 1;
    double *prefix = malloc((r->n + 1) * sizeof(double));
    prefix[0] = 0;
    for (size_t i = 0; i < r->n; i++) prefix[i + 1] = prefix[i] + (isfinite(r->r[i]) ? r->r[i] : 0);
    for (int k = 0; k <= NPTS; k++) {
        size_t upto = (size_t)((double)r->n * k / NPTS);
        if (upto < 1) upto = 1;
        for (size_t i = 0; i < upto; i++)
            if (isfinite(r->r[i]) && r->r[i] > best) best = r->r[i];
        r->best_curve[k] = best;
        size_t lo = upto > W ? upto - W : 0;
        r->ma_curve[k] = (prefix[upto] - prefix[lo]) / (double)(upto - lo);
    }
    r->best = best;
    size_t tail = r->n / 10 ? r->n / 10 : 1;
    r->final = (prefix[r->n] - prefix[r->n - tail]) / (double)tail;
    /* episode returns (episodes in order of appearance) */
    double *rets = malloc(r->n * sizeof(double));
    size_t ne = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (i == 0 || ep[i] != ep[i - 1]) rets[ne++] = 0;
        rets[ne - 1] += isfinite(r->r[i]) ? r->r[i] : 0;
    }
    size_t from = ne - (ne / 5 ? ne / 5 : 1);
    double s = 0;
    for (size_t i = from; i < ne; i++) s += rets[i];
    r->ep_return = s / (double)(ne - from);
    free(rets);
    free(prefix);
    free(ep);
    return 0;
}

/* first sample where the moving average reaches target */
static void samples_to(runrec *r, double target) {
    size_t W = r->n / 20 ? r->n / 20 : 1;
    double s = 0;
    r->reached = false;
    r->to95 = (double)r->n;
    for (size_t i = 0; i < r->n; i++) {
        s += isfinite(r->r[i]) ? r->r[i] : 0;
        if (i >= W) s -= isfinite(r->r[i - W]) ? r->r[i - W] : 0;
        size_t cnt = i + 1 < W ? i + 1 : W;
        if (i + 1 >= W / 2 && s / (double)cnt >= target) {
            r->to95 = (double)(i + 1);
            r->reached = true;
            return;
        }
    }
}

static void mean_ci(const double *x, int n, double *mean, double *ci) {
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) m += x[i];
    m /= n;
    for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    *mean = m;
    *ci = n > 1 ? gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(v / (n - 1)) / sqrt((double)n) : NAN;
}

static void fmt_mc(char *buf, size_t cap, double m, double ci, bool sci) {
    if (!isfinite(m)) snprintf(buf, cap, "n/a");
    else if (sci) {
        if (isfinite(ci)) snprintf(buf, cap, "%.3e ± %.1e", m, ci);
        else snprintf(buf, cap, "%.3e", m);
    } else {
        if (isfinite(ci)) snprintf(buf, cap, "%.4g ± %.2g", m, ci);
        else snprintf(buf, cap, "%.4g", m);
    }
}

/* ---------------------------------------------------------------- the SVG writer */
static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

typedef struct series {
    const char *name;
    double x[NPTS + 1], y[NPTS + 1], lo[NPTS + 1], hi[NPTS + 1];
} series;

static void xml(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '>') fputs("&gt;", f);
        else fputc(*s, f);
    }
}

static double nice_step(double range) {
    double e = pow(10, floor(log10(range / 5)));
    double m = range / 5 / e;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * e;
}

static int svg_plot(const char *path, const char *title, const char *xlabel, const char *ylabel, const series *s,
                    int ns) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const double W = 640, H = 400, L = 70, R = 170, T = 40, B = 50;
    double xmin = 0, xmax = 1, ymin = INFINITY, ymax = -INFINITY;
    for (int i = 0; i < ns; i++)
        for (int k = 0; k <= NPTS; k++) {
            if (s[i].x[k] > xmax) xmax = s[i].x[k];
            double lo = isfinite(s[i].lo[k]) ? s[i].lo[k] : s[i].y[k], hi = isfinite(s[i].hi[k]) ? s[i].hi[k] : s[i].y[k];
            if (isfinite(lo) && lo < ymin) ymin = lo;
            if (isfinite(hi) && hi > ymax) ymax = hi;
        }
    if (!isfinite(ymin)) ymin = 0, ymax = 1;
    if (ymax - ymin < 1e-12 * (fabs(ymax) + 1e-300)) ymax = ymin + (fabs(ymin) > 0 ? fabs(ymin) * 0.1 : 1);
    double pad = (ymax - ymin) * 0.05;
    ymin -= pad;
    ymax += pad;
#define PX(x) (L + ((x)-xmin) / (xmax - xmin) * (W - L - R))
#define PY(y) (H - B - ((y)-ymin) / (ymax - ymin) * (H - T - B))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"13\">", L);
    xml(f, title);
    fputs("</text>\n", f);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n", L, T,
            W - L - R, H - T - B);
    double xs = nice_step(xmax - xmin), ys = nice_step(ymax - ymin);
    for (double x = ceil(xmin / xs) * xs; x <= xmax + 1e-9; x += xs)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%.0f\" "
                   "text-anchor=\"middle\">%g</text>\n",
                PX(x), T, PX(x), H - B, PX(x), H - B + 15, x);
    for (double y = ceil(ymin / ys) * ys; y <= ymax + 1e-12; y += ys)
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%.0f\" y=\"%.1f\" "
                   "text-anchor=\"end\">%.3g</text>\n",
                L, PY(y), W - R, PY(y), L - 4, PY(y) + 4, y);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", (L + W - R) / 2, H - 12);
    xml(f, xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(14,%.0f) rotate(-90)\" text-anchor=\"middle\">", (T + H - B) / 2);
    xml(f, ylabel);
    fputs("</text>\n", f);
    for (int i = 0; i < ns; i++) {
        const char *col = palette[i % 10];
        bool band = false;
        for (int k = 0; k <= NPTS; k++) band |= isfinite(s[i].lo[k]);
        if (band) {
            fprintf(f, "<path fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\" d=\"", col);
            for (int k = 0; k <= NPTS; k++)
                fprintf(f, "%s%.1f %.1f ", k ? "L" : "M", PX(s[i].x[k]), PY(isfinite(s[i].hi[k]) ? s[i].hi[k] : s[i].y[k]));
            for (int k = NPTS; k >= 0; k--)
                fprintf(f, "L%.1f %.1f ", PX(s[i].x[k]), PY(isfinite(s[i].lo[k]) ? s[i].lo[k] : s[i].y[k]));
            fputs("Z\"/>\n", f);
        }
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" d=\"", col);
        bool pen = false;
        for (int k = 0; k <= NPTS; k++) {
            if (!isfinite(s[i].y[k])) {
                pen = false;
                continue;
            }
            fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", PX(s[i].x[k]), PY(s[i].y[k]));
            pen = true;
        }
        fputs("\"/>\n", f);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/><text x=\"%.0f\" "
                   "y=\"%d\">",
                W - R + 10, (int)T + 10 + 16 * i, W - R + 30, (int)T + 10 + 16 * i, col, W - R + 35, (int)T + 14 + 16 * i);
        xml(f, s[i].name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
#undef PX
#undef PY
    return fclose(f);
}

/* ---------------------------------------------------------------- report */
static const char *section_title(const char *s) {
    if (!strcmp(s, "table3")) return "Table III: best objective after the budget (lower is better)";
    if (!strcmp(s, "fig5")) return "Figure 5: samples to reach within 5% of the best final mean reward, MARL vs single-agent PPO";
    if (!strcmp(s, "fig6")) return "Figure 6: number of agents from the clustering (MobileNet-v2 layer 2, latency)";
    if (!strcmp(s, "dram")) return "DRAM paper Figure 2: mean episode return (higher is better)";
    return s;
}

static void slug(const char *in, char *out, size_t cap) {
    size_t k = 0;
    for (; *in && k + 1 < cap; in++) out[k++] = (char)((*in >= 'a' && *in <= 'z') || (*in >= '0' && *in <= '9') ||
                                                                (*in >= 'A' && *in <= 'Z')
                                                            ? *in
                                                            : '_');
    out[k] = 0;
}

int marl_report_main(int argc, char **argv) {
    const char *dbp = NULL, *man = NULL, *outp = NULL, *svgdir = ".", *svgref = ".", *header = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "hwgym-marl report: %s: missing value\n%s", argv[i], usage);
            return 2;
        }
        const char *k = argv[i], *v = argv[++i];
        if (!strcmp(k, "--db")) dbp = v;
        else if (!strcmp(k, "--manifest")) man = v;
        else if (!strcmp(k, "--out")) outp = v;
        else if (!strcmp(k, "--svg-dir")) svgdir = v;
        else if (!strcmp(k, "--svg-ref")) svgref = v;
        else if (!strcmp(k, "--header")) header = v;
        else {
            fprintf(stderr, "hwgym-marl report: unknown option '%s'\n%s", k, usage);
            return 2;
        }
    }
    if (!dbp || !man || !outp) {
        fprintf(stderr, "hwgym-marl report: --db, --manifest and --out are required\n%s", usage);
        return 2;
    }
    hw_err err;
    sqlite3 *db = hwt_open_readonly(dbp, &err);
    if (!db) {
        fprintf(stderr, "hwgym-marl report: %s\n", err.msg);
        return 1;
    }
    FILE *mf = fopen(man, "r");
    if (!mf) {
        fprintf(stderr, "hwgym-marl report: cannot read %s\n", man);
        sqlite3_close(db);
        return 1;
    }
    runrec *runs = calloc(MAXR, sizeof *runs);
    int nr = 0;
    char line[1024];
    while (fgets(line, sizeof line, mf) && nr < MAXR) {
        if (line[0] == '#' || line[0] == '\n') continue;
        runrec *r = &runs[nr];
        char *f[5];
        char *save = NULL, *p = strtok_r(line, "\t\n", &save);
        int k = 0;
        while (p && k < 5) {
            f[k++] = p;
            p = strtok_r(NULL, "\t\n", &save);
        }
        if (k < 5) continue;
        snprintf(r->section, sizeof r->section, "%s", f[0]);
        snprintf(r->group, sizeof r->group, "%s", f[1]);
        snprintf(r->method, sizeof r->method, "%s", f[2]);
        r->seed = atoll(f[3]);
        r->run = atoll(f[4]);
        if (load_rewards(db, r)) {
            fprintf(stderr, "hwgym-marl report: run %lld (%s / %s) has no trials; skipped\n", r->run, r->group,
                    r->method);
            continue;
        }
        nr++;
    }
    fclose(mf);
    FILE *out = fopen(outp, "w");
    if (!out) {
        fprintf(stderr, "hwgym-marl report: cannot write %s\n", outp);
        return 1;
    }
    if (header) {
        FILE *h = fopen(header, "r");
        if (h) {
            char buf[4096];
            size_t k;
            while ((k = fread(buf, 1, sizeof buf, h)) > 0) fwrite(buf, 1, k, out);
            fclose(h);
        }
    }
    /* sections and groups in order of appearance */
    bool done_sec[MAXR] = {false};
    for (int a = 0; a < nr; a++) {
        if (done_sec[a]) continue;
        const char *sec = runs[a].section;
        fprintf(out, "\n## %s\n\n", section_title(sec));
        bool t3 = !strcmp(sec, "table3"), dram = !strcmp(sec, "dram");
        bool done_grp[MAXR] = {false};
        for (int b = a; b < nr; b++) {
            if (strcmp(runs[b].section, sec) || done_grp[b]) continue;
            const char *grp = runs[b].group;
            /* methods of this group */
            const char *methods[32];
            int nm = 0;
            for (int c = b; c < nr; c++) {
                if (strcmp(runs[c].section, sec) || strcmp(runs[c].group, grp)) continue;
                done_grp[c] = true;
                done_sec[c] = true;
                bool seen = false;
                for (int m = 0; m < nm; m++) seen |= !strcmp(methods[m], runs[c].method);
                if (!seen && nm < 32) methods[nm++] = runs[c].method;
            }
            /* group-level target for to95: best mean final over methods */
            double target = -INFINITY, gbest = -INFINITY, gfinal = -INFINITY;
            for (int m = 0; m < nm; m++) {
                double x[MAXR];
                int n = 0;
                for (int c = b; c < nr; c++)
                    if (!strcmp(runs[c].section, sec) && !strcmp(runs[c].group, grp) && !strcmp(runs[c].method, methods[m])) {
                        x[n++] = runs[c].final;
                        if (runs[c].best > gbest) gbest = runs[c].best;
                    }
                double mm, ci;
                mean_ci(x, n, &mm, &ci);
                if (mm > target) target = mm;
            }
            gfinal = target;
            for (int c = b; c < nr; c++)
                if (!strcmp(runs[c].section, sec) && !strcmp(runs[c].group, grp))
                    samples_to(&runs[c], target >= 0 ? 0.95 * target : 1.05 * target);
            fprintf(out, "### %s\n\n", grp);
            if (t3)
                fprintf(out, "| method | seeds | best objective (1/reward) | ratio to MARL | best reward | mean reward, "
                             "last 10%% |\n|---|---|---|---|---|---|\n");
            else if (dram)
                fprintf(out, "| method | seeds | mean episode return, last 20%% | best reward | mean reward, last 10%% "
                             "|\n|---|---|---|---|---|\n");
            else
                fprintf(out, "| method | seeds | samples to 95%% of best final mean | reached | mean reward, last 10%% | "
                             "best reward |\n|---|---|---|---|---|---|\n");
            double marl_obj = NAN;
            for (int m = 0; m < nm; m++)
                if (!strcmp(methods[m], "MARL")) {
                    double x[MAXR];
                    int n = 0;
                    for (int c = b; c < nr; c++)
                        if (!strcmp(runs[c].section, sec) && !strcmp(runs[c].group, grp) && !strcmp(runs[c].method, "MARL"))
                            x[n++] = 1.0 / runs[c].best;
                    double ci;
                    mean_ci(x, n, &marl_obj, &ci);
                }
            series *ss = calloc(nm > 0 && nm <= 32 ? (size_t)nm : 1, sizeof *ss);
            for (int m = 0; m < nm; m++) {
                double best[MAXR], obj[MAXR], fin[MAXR], to[MAXR], er[MAXR];
                int n = 0, reached = 0;
                double sbest = 0;
                for (int c = b; c < nr; c++) {
                    runrec *r = &runs[c];
                    if (strcmp(r->section, sec) || strcmp(r->group, grp) || strcmp(r->method, methods[m])) continue;
                    best[n] = r->best;
                    obj[n] = 1.0 / r->best;
                    fin[n] = r->final;
                    to[n] = r->to95;
                    er[n] = r->ep_return;
                    reached += r->reached;
                    sbest = (double)r->n;
                    n++;
                }
                char c1[64], c2[64], c3[64], c4[64];
                double mm, ci;
                if (t3) {
                    mean_ci(obj, n, &mm, &ci);
                    fmt_mc(c1, sizeof c1, mm, ci, true);
                    double ratio = mm / marl_obj;
                    mean_ci(best, n, &mm, &ci);
                    fmt_mc(c2, sizeof c2, mm, ci, true);
                    mean_ci(fin, n, &mm, &ci);
                    fmt_mc(c3, sizeof c3, mm, ci, true);
                    fprintf(out, "| %s | %d | %s | %.2f | %s | %s |\n", methods[m], n, c1, ratio, c2, c3);
                } else if (dram) {
                    mean_ci(er, n, &mm, &ci);
                    fmt_mc(c1, sizeof c1, mm, ci, false);
                    mean_ci(best, n, &mm, &ci);
                    fmt_mc(c2, sizeof c2, mm, ci, false);
                    mean_ci(fin, n, &mm, &ci);
                    fmt_mc(c3, sizeof c3, mm, ci, false);
                    fprintf(out, "| %s | %d | %s | %s | %s |\n", methods[m], n, c1, c2, c3);
                } else {
                    mean_ci(to, n, &mm, &ci);
                    fmt_mc(c1, sizeof c1, mm, ci, false);
                    mean_ci(fin, n, &mm, &ci);
                    fmt_mc(c3, sizeof c3, mm, ci, true);
                    mean_ci(best, n, &mm, &ci);
                    fmt_mc(c4, sizeof c4, mm, ci, true);
                    fprintf(out, "| %s | %d | %s | %d of %d (budget %.0f) | %s | %s |\n", methods[m], n, c1, reached, n,
                            sbest, c3, c4);
                }
                (void)c4;
                /* curve: mean over seeds with a 95% band; table3: best-so-far, else moving average */
                ss[m].name = methods[m];
                for (int k = 0; k <= NPTS; k++) {
                    double y[MAXR];
                    int ny = 0;
                    double xs = 0;
                    for (int c = b; c < nr; c++) {
                        runrec *r = &runs[c];
                        if (strcmp(r->section, sec) || strcmp(r->group, grp) || strcmp(r->method, methods[m])) continue;
                        double v = t3 ? r->best_curve[k] / gbest : r->ma_curve[k];
                        if (!t3 && !dram && gfinal > 0) v /= gfinal;
                        y[ny++] = v;
                        xs = (double)r->n * k / NPTS;
                    }
                    double mm2, ci2;
                    mean_ci(y, ny, &mm2, &ci2);
                    ss[m].x[k] = xs;
                    ss[m].y[k] = mm2;
                    ss[m].lo[k] = isfinite(ci2) ? mm2 - ci2 : NAN;
                    ss[m].hi[k] = isfinite(ci2) ? mm2 + ci2 : NAN;
                }
            }
            char sl[160], path[4096], title[256];
            slug(grp, sl, sizeof sl);
            snprintf(path, sizeof path, "%s/%s_%s.svg", svgdir, sec, sl);
            snprintf(title, sizeof title, "%s: %s", sec, grp);
            const char *ylab = t3 ? "best reward so far / best overall"
                                  : dram ? "reward, moving average (5% of budget)"
                                         : "moving-average reward / best final mean";
            if (svg_plot(path, title, "samples", ylab, ss, nm))
                fprintf(stderr, "hwgym-marl report: cannot write %s\n", path);
            else
                fprintf(out, "\n![%s](%s/%s_%s.svg)\n\n", grp, svgref, sec, sl);
            free(ss);
        }
    }
    fclose(out);
    for (int i = 0; i < nr; i++) free(runs[i].r);
    free(runs);
    sqlite3_close(db);
    return 0;
}
