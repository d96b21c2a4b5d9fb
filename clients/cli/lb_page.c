/* lb_page.c - see lb_page.h */
#include "lb_page.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"

#define G(o, k) json_object_get((o), (k))
#define S(o, k) json_string_value(json_object_get((o), (k)))

static double real(const json_t *o, const char *k) {
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "0.53 [0.41, 0.66]" */
static void ci_text(FILE *f, const json_t *ci) {
    double p = real(ci, "point"), lo = real(ci, "lo"), hi = real(ci, "hi");
    if (isnan(p)) fputs("n/a", f);
    else if (isnan(lo)) fprintf(f, "%.2f", p);
    else fprintf(f, "%.2f [%.2f, %.2f]", p, lo, hi);
}

static const char *verdict_text(const char *v) {
    return !strcmp(v, "beats") ? "learning helps (P > 0.5, interval above 0.5)"
           : !strcmp(v, "worse") ? "FLAG: worse than its untrained control"
                                 : "FLAG: does not beat its untrained control (interval includes 0.5)";
}

/* a paper's agent against a baseline, from P(agent > baseline) and its interval */
static const char *paper_verdict(const json_t *ci) {
    double lo = real(ci, "lo"), hi = real(ci, "hi");
    return isnan(lo) ? "n/a" : lo > 0.5 ? "agent better" : hi < 0.5 ? "baseline better" : "no clear difference";
}

static const char *label_of(const json_t *fam, const char *variant) {
    size_t i;
    json_t *v;
    json_array_foreach(G(fam, "variants"), i, v) if (!strcmp(S(v, "variant"), variant)) return S(v, "label");
    return variant;
}

static const json_t *variant_of(const json_t *fam, const char *variant) {
    size_t i;
    json_t *v;
    json_array_foreach(G(fam, "variants"), i, v) if (variant && !strcmp(S(v, "variant"), variant)) return v;
    return NULL;
}

static void variant_label(FILE *f, const json_t *v, bool html) {
    const char *l = S(v, "label");
    if (html) rp_escape(f, l);
    else fputs(l, f);
    if (json_is_true(G(v, "off"))) fputs(" (learning off)", f);
}

/* one row per variant of a family: agent, IQM small, IQM large, runs (markdown or HTML) */
static void variant_rows(FILE *f, const json_t *fam, bool html) {
    const char *pre = html ? "<tr><td class=\"l\">" : "| ", *sep = html ? "</td><td>" : " | ", *end = html ? "</td></tr>\n" : " |\n";
    size_t k;
    json_t *v;
    json_array_foreach(G(fam, "variants"), k, v) {
        fputs(pre, f);
        variant_label(f, v, html);
        fputs(sep, f);
        ci_text(f, G(v, "small"));
        fputs(sep, f);
        ci_text(f, G(v, "large"));
        fprintf(f, "%s%lld%s", sep, (long long)json_integer_value(G(v, "runs")), end);
    }
}

/* the intervals of o's keys k[0..n), each preceded by sep */
static void cis(FILE *f, const json_t *o, const char *const *k, size_t n, const char *sep) {
    for (size_t i = 0; i < n; i++) {
        fputs(sep, f);
        ci_text(f, G(o, k[i]));
    }
}

static const char *const POIS[] = {"poi_small", "poi_large"}, *const PAPER_COLS[] = {"iqm_large", "poi_small", "poi_large"};

/* ---- markdown ---- */

static void md_best(FILE *f, const json_t *res) {
    fprintf(f, "## Best agent per family\n\nIQM of normalised scores (0 = random search at the same budget, 1 = the best known "
               "design) with stratified-bootstrap 95%% intervals; untrained controls are not candidates.\n\n"
               "| family | envs | small budget: best | IQM | large budget: best | IQM |\n|---|---|---|---|---|---|\n");
    size_t i;
    json_t *fam;
    json_array_foreach(G(res, "families"), i, fam) {
        const json_t *bs = variant_of(fam, S(fam, "best_small")), *bl = variant_of(fam, S(fam, "best_large"));
        fprintf(f, "| %s | %zu | %s | ", S(fam, "family"), json_array_size(G(fam, "envs")), bs ? S(bs, "label") : "-");
        if (bs) ci_text(f, G(bs, "small"));
        fprintf(f, " | %s | ", bl ? S(bl, "label") : "-");
        if (bl) ci_text(f, G(bl, "large"));
        fprintf(f, " |\n");
    }
}

static void md_families(FILE *f, const json_t *res) {
    size_t i, k;
    json_t *fam, *v;
    json_array_foreach(G(res, "families"), i, fam) {
        fprintf(f, "\n### %s\n\nenvs: ", S(fam, "family"));
        json_array_foreach(G(fam, "envs"), k, v) fprintf(f, "%s`%s`", k ? ", " : "", json_string_value(v));
        fprintf(f, "\n\n| agent | IQM at the small budget | IQM at the large budget | runs |\n|---|---|---|---|\n");
        variant_rows(f, fam, false);
    }
}

static void md_learning(FILE *f, const json_t *res) {
    fprintf(f, "\n## Where learning helps\n\nEach learning agent against the same agent with learning off (its untrained policy), "
               "same budget and seeds: probability of improvement P(trained > untrained) with a 95%% interval.\n\n"
               "| agent | family | P at the small budget | P at the large budget | verdict |\n|---|---|---|---|---|\n");
    size_t i;
    json_t *l;
    json_array_foreach(G(res, "learning"), i, l) {
        fprintf(f, "| %s | %s", S(l, "label"), S(l, "family"));
        cis(f, l, POIS, 2, " | ");
        fprintf(f, " | %s |\n", verdict_text(S(l, "verdict")));
    }
}

static void md_papers(FILE *f, const json_t *res) {
    fprintf(f, "\n## Each paper's agent against that paper's baselines\n\nP(agent > baseline) over the envs listed, with 95%% "
               "intervals (above 0.5 with the whole interval: the agent is better).\n");
    size_t i, k;
    json_t *p, *r;
    json_array_foreach(G(res, "papers"), i, p) {
        fprintf(f, "\n**%s** (agent `%s`; envs:", S(p, "name"), S(p, "agent"));
        json_array_foreach(G(p, "envs"), k, r) fprintf(f, " `%s`", json_string_value(r));
        fprintf(f, "; agent IQM at the large budget ");
        ci_text(f, G(p, "iqm_large"));
        fprintf(f, ")\n\n| baseline | baseline IQM (large) | P(agent > baseline), small | P(agent > baseline), large | at the large budget |\n"
                   "|---|---|---|---|---|\n");
        json_array_foreach(G(p, "rows"), k, r) {
            fprintf(f, "| %s", S(r, "label"));
            cis(f, r, PAPER_COLS, 3, " | ");
            fprintf(f, " | %s |\n", paper_verdict(G(r, "poi_large")));
        }
    }
}

static void md_envs(FILE *f, const json_t *res) {
    fprintf(f, "\n## Envs, budgets and normalisation\n\n| env | id | score | evaluations (small / large) | CPU cap s | random at small "
               "/ large | best known |\n|---|---|---|---|---|---|---|\n");
    size_t i;
    json_t *e;
    json_array_foreach(G(res, "envs"), i, e)
        fprintf(f, "| %s | %s | %s | %lld / %lld | %g | %.4g / %.4g | %.4g (%s) |\n", S(e, "name"), S(e, "env"), S(e, "score"),
                (long long)json_integer_value(G(e, "small")), (long long)json_integer_value(G(e, "evals")), real(e, "cpu_s"),
                real(e, "random_small"), real(e, "random_large"), real(e, "best"), S(e, "best_is"));
    if (json_array_size(G(res, "failed"))) {
        fprintf(f, "\n## Failed cells\n\n| cell | status | last error line |\n|---|---|---|\n");
        json_array_foreach(G(res, "failed"), i, e) fprintf(f, "| %s | %lld | %s |\n", S(e, "key"), (long long)json_integer_value(G(e, "status")), S(e, "error"));
    }
}

int lb_page_md(const json_t *res, const char *path, const char *cmd, const char *note) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const json_t *c = G(res, "cells");
    fprintf(f, "# hwgym leaderboard: suite `%s`\n\n%lld of %lld cells finished (%lld failed), %lld seeds per cell, %lld bootstrap "
               "replicates. Recompute this page from the data with:\n\n    %s\n\n",
            S(res, "suite"), (long long)json_integer_value(G(c, "done")), (long long)json_integer_value(G(c, "total")),
            (long long)json_integer_value(G(c, "failed")), (long long)json_integer_value(G(res, "seeds")),
            (long long)json_integer_value(G(res, "bootstrap")), cmd);
    if (note) fprintf(f, "%s\n\n", note);
    fprintf(f, "The HTML page beside the data (index.html) has the sample-efficiency curves (score against evaluations and "
               "against CPU seconds) and the performance profiles. Definitions: docs/leaderboard.md.\n\n");
    md_best(f, res);
    md_learning(f, res);
    md_papers(f, res);
    fprintf(f, "\n## Every agent per family\n");
    md_families(f, res);
    md_envs(f, res);
    return fclose(f) ? -1 : 0;
}

/* ---- HTML ---- */

static const char *CSS =
    "body{font-family:sans-serif;max-width:1100px;margin:1em auto;color:#222}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-size:13px}.l{text-align:left}.flag{color:#b00;font-weight:bold}"
    ".ok{color:#070}svg.chart{width:100%;max-width:760px;height:auto}.ct{font-size:14px;font-weight:bold}"
    ".tx{font-size:11px;text-anchor:middle}.ty{font-size:11px;text-anchor:end}.lg{font-size:12px}.gr{stroke:#e5e5e5}"
    ".pa{fill:none;stroke:#999}.muted{color:#777}code{font-size:12px}";

static void h_ci(FILE *f, const json_t *ci) {
    fputs("<td>", f);
    ci_text(f, ci);
    fputs("</td>", f);
}

/* one chart of every variant of a family: key "curve_evals"/"curve_cpu" (x = grid fraction * xmax) or "profile" */
static void h_chart(FILE *f, const json_t *fam, const char *key, double xmax, const char *title, const char *xl, const char *yl) {
    size_t nv = json_array_size(G(fam, "variants")), grid = 0;
    rp_series *s = calloc(nv ? nv : 1, sizeof *s);
    double *buf = NULL;
    json_t *v;
    size_t i;
    json_array_foreach(G(fam, "variants"), i, v) if (json_array_size(G(v, key)) > grid) grid = json_array_size(G(v, key));
    buf = calloc(nv * grid * 4 + 1, sizeof *buf);
    char(*labels)[160] = calloc(nv ? nv : 1, sizeof *labels);
    if (!s || !buf || !labels) goto out;
    json_array_foreach(G(fam, "variants"), i, v) {
        double *x = buf + i * grid * 4, *m = x + grid, *lo = m + grid, *hi = lo + grid;
        const json_t *arr = G(v, key);
        for (size_t k = 0; k < json_array_size(arr); k++) {
            const json_t *p = json_array_get(arr, k);
            if (json_is_array(p)) { /* profile: [tau, fraction] */
                x[k] = json_number_value(json_array_get(p, 0));
                m[k] = json_is_number(json_array_get(p, 1)) ? json_number_value(json_array_get(p, 1)) : NAN;
                lo[k] = hi[k] = NAN;
            } else {
                x[k] = xmax * (double)(k + 1) / (double)json_array_size(arr);
                m[k] = real(p, "point"), lo[k] = real(p, "lo"), hi[k] = real(p, "hi");
            }
        }
        snprintf(labels[i], sizeof labels[i], "%s%s", S(v, "label"), json_is_true(G(v, "off")) ? " (learning off)" : "");
        s[i] = (rp_series){labels[i], (int)json_array_size(arr), x, m, json_is_array(json_array_get(arr, 0)) ? NULL : lo,
                           json_is_array(json_array_get(arr, 0)) ? NULL : hi};
    }
    fputs("<div class=\"fig\">", f);
    rp_chart(f, title, xl, yl, s, (int)nv);
    fputs("</div>\n", f);
out:
    free(s);
    free(buf);
    free(labels);
}

static void h_family(FILE *f, const json_t *res, const json_t *fam) {
    const char *name = S(fam, "family");
    fprintf(f, "<h3 id=\"%s\">%s</h3>\n<p>envs:", name, name);
    size_t i;
    json_t *v;
    double evals = 0, cpu = 0;
    json_array_foreach(G(fam, "envs"), i, v) {
        fprintf(f, " <code>%s</code>", json_string_value(v));
        json_t *e;
        size_t k;
        json_array_foreach(G(res, "envs"), k, e) if (!strcmp(S(e, "name"), json_string_value(v))) {
            evals = fmax(evals, (double)json_integer_value(G(e, "evals")));
            cpu = fmax(cpu, real(e, "cpu_s"));
        }
    }
    fprintf(f, "</p>\n<table><tr><th class=\"l\">agent</th><th>IQM, small budget</th><th>IQM, large budget</th><th>runs</th></tr>\n");
    variant_rows(f, fam, true);
    fputs("</table>\n", f);
    char t[256];
    snprintf(t, sizeof t, "%s: IQM normalised score against evaluations (95%% bands)", name);
    h_chart(f, fam, "curve_evals", evals, t, "evaluations", "IQM normalised score");
    snprintf(t, sizeof t, "%s: IQM normalised score against agent CPU seconds (95%% bands)", name);
    h_chart(f, fam, "curve_cpu", cpu, t, "agent CPU seconds", "IQM normalised score");
    snprintf(t, sizeof t, "%s: performance profile at the large budget", name);
    h_chart(f, fam, "profile", 1.2, t, "normalised score tau", "fraction of runs with score > tau");
}

static void h_tables(FILE *f, const json_t *res) {
    size_t i, k;
    json_t *fam, *l, *p, *r;
    fputs("<h2>Best agent per family</h2>\n<table><tr><th class=\"l\">family</th><th class=\"l\">small budget: best</th><th>IQM</th>"
          "<th class=\"l\">large budget: best</th><th>IQM</th></tr>\n", f);
    json_array_foreach(G(res, "families"), i, fam) {
        const json_t *bs = variant_of(fam, S(fam, "best_small")), *bl = variant_of(fam, S(fam, "best_large"));
        fprintf(f, "<tr><td class=\"l\"><a href=\"#%s\">%s</a></td><td class=\"l\">", S(fam, "family"), S(fam, "family"));
        rp_escape(f, bs ? label_of(fam, S(bs, "variant")) : "-");
        fputs("</td>", f);
        h_ci(f, bs ? G(bs, "small") : NULL);
        fputs("<td class=\"l\">", f);
        rp_escape(f, bl ? label_of(fam, S(bl, "variant")) : "-");
        fputs("</td>", f);
        h_ci(f, bl ? G(bl, "large") : NULL);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<h2>Where learning helps</h2>\n<p>P(trained &gt; same agent with learning off), same budget and seeds, 95% "
          "intervals.</p>\n<table><tr><th class=\"l\">agent</th><th class=\"l\">family</th><th>P, small budget</th><th>P, large budget</th>"
          "<th class=\"l\">verdict</th></tr>\n", f);
    json_array_foreach(G(res, "learning"), i, l) {
        fputs("<tr><td class=\"l\">", f);
        rp_escape(f, S(l, "label"));
        fprintf(f, "</td><td class=\"l\">%s", S(l, "family"));
        cis(f, l, POIS, 2, "</td><td>");
        fprintf(f, "</td><td class=\"l %s\">%s</td></tr>\n", strcmp(S(l, "verdict"), "beats") ? "flag" : "ok", verdict_text(S(l, "verdict")));
    }
    fputs("</table>\n<h2>Each paper's agent against its baselines</h2>\n", f);
    json_array_foreach(G(res, "papers"), i, p) {
        fputs("<p><b>", f);
        rp_escape(f, S(p, "name"));
        fprintf(f, "</b> (agent <code>%s</code>, IQM at the large budget ", S(p, "agent"));
        ci_text(f, G(p, "iqm_large"));
        fputs(")</p>\n<table><tr><th class=\"l\">baseline</th><th>baseline IQM (large)</th><th>P(agent &gt; baseline), small</th>"
              "<th>P(agent &gt; baseline), large</th><th class=\"l\">at the large budget</th></tr>\n", f);
        json_array_foreach(G(p, "rows"), k, r) {
            fputs("<tr><td class=\"l\">", f);
            rp_escape(f, S(r, "label"));
            cis(f, r, PAPER_COLS, 3, "</td><td>");
            fprintf(f, "</td><td class=\"l\">%s</td></tr>\n", paper_verdict(G(r, "poi_large")));
        }
        fputs("</table>\n", f);
    }
}

int lb_page_html(const json_t *res, const char *path, const char *cmd, const char *note) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    const json_t *c = G(res, "cells");
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hwgym leaderboard: %s</title><style>%s</style>"
               "</head><body>\n<h1>hwgym leaderboard: suite <code>%s</code></h1>\n",
            S(res, "suite"), CSS, S(res, "suite"));
    fprintf(f, "<p>%lld of %lld cells finished (%lld failed); %lld seeds per cell; %lld bootstrap replicates. Scores are normalised "
               "per env: 0 = random search at the same budget, 1 = the best known design. Recompute with <code>",
            (long long)json_integer_value(G(c, "done")), (long long)json_integer_value(G(c, "total")),
            (long long)json_integer_value(G(c, "failed")), (long long)json_integer_value(G(res, "seeds")),
            (long long)json_integer_value(G(res, "bootstrap")));
    rp_escape(f, cmd);
    fputs("</code>.</p>\n<p>", f);
    for (const char *p = note; p && *p; p++) {
        if (p[0] == '\n' && p[1] == '\n') fputs("</p>\n<p>", f), p++;
        else if (p[0] == '*' && p[1] == '*') p++; /* markdown emphasis and code marks: dropped */
        else if (p[0] == '`') continue;
        else {
            char one[2] = {*p, 0};
            rp_escape(f, one);
        }
    }
    fputs("</p>\n", f);
    h_tables(f, res);
    fputs("<h2>Every agent per family</h2>\n", f);
    size_t i;
    json_t *fam;
    json_array_foreach(G(res, "families"), i, fam) h_family(f, res, fam);
    fputs("<p class=\"muted\">Written by hwgym leaderboard (docs/leaderboard.md).</p>\n</body></html>\n", f);
    return fclose(f) ? -1 : 0;
}
