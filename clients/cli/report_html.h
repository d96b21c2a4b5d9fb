/* report_html.h - `hwgym report DB --out DIR`: one self-contained HTML page (inline CSS and SVG,
 * no script, no network) summarising a trial DB (cmd_report_html.c, report_plot.c).
 * Owns: nothing shared; the entry point used by cmd_report.c and the plot helpers. */
#ifndef HWCLI_REPORT_HTML_H
#define HWCLI_REPORT_HTML_H

#include <stdio.h>

/* Writes DIR/report.html (DIR is created). run > 0 restricts to one run. Returns 0, or 1 with
 * a message on stderr. *summary (may be NULL) gets {"html": path, "runs": n, "trials": n, "groups": n}. */
struct json_t;
int hwcli_report_html(const char *db_path, const char *dir, long long run, double within, struct json_t **summary);

/* ---- plots (report_plot.c) ---- */
typedef struct rp_series {
    const char *label;
    int n;             /* points */
    const double *x, *mean, *lo, *hi; /* lo/hi may be NULL (no band) */
} rp_series;

/* A convergence chart: one line (+ a translucent band) per series. log_y when every value > 0
 * and they span more than two decades. */
void rp_chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, const rp_series *s, int ns);
/* HTML-escapes s into f. */
void rp_escape(FILE *f, const char *s);

#endif
