/* report_plot.c - SVG line charts with confidence bands for the HTML report (report_html.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report_html.h"
#include "hw_codec.h"

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"};

/* the length of the valid UTF-8 sequence at s (n bytes left), 0 when the byte starts none */
static size_t utf8_len(const char *s, size_t n) {
    for (size_t k = 1; k <= 4 && k <= n; k++)
        if (hw_utf8_valid(s, k)) return k;
    return 0;
}

void rp_escape(FILE *f, const char *s) {
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(s + i, n - i);
        if (k == 0) { /* bytes from a trial log that are not UTF-8: the page is UTF-8 (issue 28) */
            fputs("\xEF\xBF\xBD", f);
            i++;
            continue;
        }
        if (k > 1) {
            fwrite(s + i, 1, k, f);
            i += k;
            continue;
        }
        switch (s[i]) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') fputs("\xEF\xBF\xBD", f); /* control bytes too */
            else fputc(s[i], f);
        }
        i++;
    }
}

/* a "nice" tick step for a span */
static double nice_step(double span, int want) {
    double raw = span / want, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

void rp_chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, const rp_series *s, int ns) {
    const double W = 760, H = 360, L = 80, R = 20, T = 34, B = 46;
    double xmax = 1, lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (s[k].x[i] > xmax) xmax = s[k].x[i];
            double a = s[k].lo ? s[k].lo[i] : s[k].mean[i], b = s[k].hi ? s[k].hi[i] : s[k].mean[i];
            if (isfinite(a) && a < lo) lo = a;
            if (isfinite(s[k].mean[i]) && s[k].mean[i] < lo) lo = s[k].mean[i];
            if (isfinite(b) && b > hi) hi = b;
            if (isfinite(s[k].mean[i]) && s[k].mean[i] > hi) hi = s[k].mean[i];
        }
    if (!isfinite(lo)) lo = 0, hi = 1;
    bool logy = lo > 0 && hi / lo > 100;
    double y0 = logy ? log10(lo) : lo, y1 = logy ? log10(hi) : hi;
    if (y1 <= y0) y1 = y0 + (fabs(y0) > 0 ? fabs(y0) * 0.1 : 1);
    double pad = (y1 - y0) * 0.05;
    y0 -= pad, y1 += pad;
    double pw = W - L - R, ph = H - T - B;
#define X(v) (L + pw * (v) / xmax)
#define Y(v) (T + ph * (1.0 - ((logy ? log10(v) : (v)) - y0) / (y1 - y0)))
    fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n", W, H);
    fprintf(f, "<text x=\"%.0f\" y=\"18\" class=\"ct\">", L);
    rp_escape(f, title);
    fprintf(f, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"pa\"/>\n", L, T, pw, ph);
    /* ticks */
    double st = nice_step(xmax, 6);
    for (double v = 0; v <= xmax * 1.0001; v += st)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" class=\"gr\"/><text x=\"%.1f\" y=\"%.0f\" class=\"tx\">%g</text>\n",
                X(v), T, X(v), T + ph, X(v), T + ph + 16, v);
    double sy = nice_step(y1 - y0, 5);
    for (double v = ceil(y0 / sy) * sy; v <= y1; v += sy) {
        double yy = T + ph * (1.0 - (v - y0) / (y1 - y0));
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"gr\"/><text x=\"%.0f\" y=\"%.1f\" class=\"ty\">%.3g</text>\n",
                L, yy, L + pw, yy, L - 6, yy + 4, logy ? pow(10, v) : v);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"tx\">", L + pw / 2, H - 6);
    rp_escape(f, xlabel);
    fprintf(f, "</text><text transform=\"translate(14 %.0f) rotate(-90)\" class=\"tx\">", T + ph / 2);
    rp_escape(f, ylabel);
    fprintf(f, "%s</text>\n", logy ? " (log)" : "");
    for (int k = 0; k < ns; k++) {
        const char *col = COLORS[k % 10];
        if (s[k].lo && s[k].hi) {
            fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", col);
            for (int i = 0; i < s[k].n; i++)
                if (isfinite(s[k].hi[i]) && (!logy || s[k].hi[i] > 0)) fprintf(f, "%.1f,%.1f ", X(s[k].x[i]), Y(s[k].hi[i]));
            for (int i = s[k].n - 1; i >= 0; i--)
                if (isfinite(s[k].lo[i]) && (!logy || s[k].lo[i] > 0)) fprintf(f, "%.1f,%.1f ", X(s[k].x[i]), Y(s[k].lo[i]));
            fprintf(f, "\"/>\n");
        }
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (int i = 0; i < s[k].n; i++)
            if (isfinite(s[k].mean[i]) && (!logy || s[k].mean[i] > 0)) fprintf(f, "%.1f,%.1f ", X(s[k].x[i]), Y(s[k].mean[i]));
        fprintf(f, "\"/>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" class=\"lg\">", L + 10,
                T + 8 + 18 * k, col, L + 28, T + 18 + 18 * k);
        rp_escape(f, s[k].label);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
#undef X
#undef Y
}
