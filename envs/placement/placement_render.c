/* placement_render.c - SVG memory maps in the style of the EGRL paper's Figure 7: one band per
 * tensor coloured by its memory, the native heuristic above the given mapping (and above the
 * compiler's rectification of it when that differs), the memory transition matrix
 * (heuristic memory -> mapping memory), and each memory's occupancy over the inference. */
#include <stdlib.h>
#include <string.h>

#include "placement.h"

static const char *const colours[PL_MAX_MEMS] = {"#c0392b", "#e67e22", "#27ae60", "#2980b9",
                                                 "#8e44ad", "#16a085", "#7f8c8d", "#2c3e50"};

static void xml_text(FILE *o, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        default: fputc(*s, o);
        }
    }
}

/* Two rows (weights, activations) of bands for one mapping. */
static void band_rows(FILE *o, const pl_model *m, const uint8_t *map, const char *label, double x0, double y0,
                      double w, double rowh) {
    const double bw = w / m->n;
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">", x0 - 6, y0 + rowh * 0.7);
    xml_text(o, label);
    fprintf(o, " W</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">A</text>\n", x0 - 6,
            y0 + rowh * 1.7 + 2);
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < m->n; i++) {
            int t = 2 * i + r;
            const char *c = m->bytes[t] > 0 ? colours[map[t]] : "#eeeeee";
            fprintf(o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>", x0 + i * bw,
                    y0 + r * (rowh + 2), bw + 0.05, rowh, c);
            xml_text(o, m->g.nodes[i].name);
            fprintf(o, ".%s: %s, %lld bytes</title></rect>\n", r ? "act" : "weights", m->hw.mem[map[t]].name,
                    (long long)m->bytes[t]);
        }
    }
}

int pl_render_svg(const pl_model *m, const uint8_t *map, const char *title, FILE *o) {
    const int M = m->hw.n_mem;
    pl_scratch *s = pl_scratch_new(m);
    pl_result rh, rg;
    pl_evaluate(m, m->heuristic, s, &rh);
    pl_evaluate(m, map, s, &rg);
    uint8_t *rect = malloc((size_t)m->nt);
    if (!rect) abort();
    memcpy(rect, rg.rectified, (size_t)m->nt);
    const int changed = rg.reassigned_bytes > 0;
    const double W = 1100, x0 = 150, pw = W - x0 - 40, rowh = 22;
    const int nmaps = changed ? 3 : 2;
    const double bands_y = 70, bands_h = nmaps * (2 * rowh + 26);
    const double mat_y = bands_y + bands_h + 40, cell = 46;
    const double occ_y = mat_y, occ_x = x0 + M * cell + 160, occ_w = W - occ_x - 40, occ_h = M * cell;
    const double H = mat_y + M * cell + 40;
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
    fprintf(o, "<text x=\"20\" y=\"28\" font-size=\"17\" font-weight=\"bold\">");
    xml_text(o, title && *title ? title : m->g.name);
    fprintf(o, "</text>\n<text x=\"20\" y=\"50\" font-size=\"12\">%s: %d nodes, %d tensors. heuristic %.3f us; "
               "mapping %s%.3f us (%sspeedup %.4f), eps %.4g%s</text>\n",
            m->g.name, m->n, m->nt, rh.latency * 1e6, changed ? "as rectified " : "", rg.latency * 1e6,
            changed ? "rectified " : "", m->baseline / rg.latency, rg.eps,
            changed ? " - invalid: reward -eps" : "");
    /* legend */
    for (int k = 0; k < M; k++) {
        double lx = W - 40 - (M - k) * 90;
        fprintf(o, "<rect x=\"%.0f\" y=\"18\" width=\"14\" height=\"14\" fill=\"%s\"/><text x=\"%.0f\" y=\"30\" "
                   "font-size=\"12\">", lx, colours[k], lx + 18);
        xml_text(o, m->hw.mem[k].name);
        fputs("</text>\n", o);
    }
    double y = bands_y;
    band_rows(o, m, m->heuristic, "heuristic", x0, y, pw, rowh);
    y += 2 * rowh + 26;
    band_rows(o, m, map, "mapping", x0, y, pw, rowh);
    y += 2 * rowh + 26;
    if (changed) band_rows(o, m, rect, "rectified", x0, y, pw, rowh);
    /* node axis */
    double ay = bands_y + bands_h - 14;
    int step = m->n <= 20 ? 1 : m->n / 10;
    for (int i = 0; i < m->n; i += step)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n",
                x0 + (i + 0.5) * pw / m->n, ay, i);
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">node (execution order); W = "
               "weights, A = output activation</text>\n", x0 + pw / 2, ay + 14);
    /* transition matrix: rows heuristic memory, columns (rectified) mapping memory, tensor counts */
    int cnt[PL_MAX_MEMS][PL_MAX_MEMS] = {{0}}, rows[PL_MAX_MEMS] = {0};
    for (int t = 0; t < m->nt; t++) {
        if (m->bytes[t] == 0) continue;
        cnt[m->heuristic[t]][rect[t]]++;
        rows[m->heuristic[t]]++;
    }
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" font-weight=\"bold\">tensors moved: heuristic (rows) -> "
               "mapping (columns)</text>\n", x0 - 100, mat_y - 22);
    for (int a = 0; a < M; a++) {
        fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">", x0 - 6, mat_y + a * cell + cell / 2 + 4);
        xml_text(o, m->hw.mem[a].name);
        fputs("</text>\n", o);
        fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">", x0 + a * cell + cell / 2, mat_y - 6);
        xml_text(o, m->hw.mem[a].name);
        fputs("</text>\n", o);
        for (int b = 0; b < M; b++) {
            double f = rows[a] ? (double)cnt[a][b] / rows[a] : 0;
            int shade = 255 - (int)(f * 200);
            fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(%d,%d,255)\" "
                       "stroke=\"#999\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%.2f</text>\n",
                    x0 + b * cell, mat_y + a * cell, cell, cell, shade, shade, x0 + b * cell + cell / 2,
                    mat_y + a * cell + cell / 2 + 4, f);
        }
    }
    /* occupancy over time of the (rectified) mapping, as a fraction of each memory's capacity (all
     * banks together) */
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" font-weight=\"bold\">occupancy / capacity over the "
               "inference (mapping as run)</text>\n", occ_x, mat_y - 22);
    fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>\n", occ_x,
            occ_y, occ_w, occ_h);
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\">1.0</text><text x=\"%.0f\" y=\"%.0f\" "
               "font-size=\"10\" text-anchor=\"end\">0</text>\n", occ_x - 4, occ_y + 8, occ_x - 4, occ_y + occ_h);
    for (int k = 0; k < M; k++) {
        fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colours[k]);
        for (int st = 0; st < m->n; st++) {
            double f = (double)pl_occupancy(m, rect, k, st) / ((double)m->hw.mem[k].capacity * m->hw.mem[k].banks);
            if (f > 1) f = 1;
            fprintf(o, "%.1f,%.1f ", occ_x + (st + 0.5) * occ_w / m->n, occ_y + occ_h * (1 - f));
        }
        fputs("\"/>\n", o);
    }
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">step</text>\n", occ_x + occ_w / 2,
            occ_y + occ_h + 14);
    fputs("</svg>\n", o);
    free(rect);
    pl_scratch_free(s);
    return ferror(o) ? -1 : 0;
}
