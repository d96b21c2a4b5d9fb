/* mm_render.c - SVG memory layout (time x offset, one colour per tensor), like the paper's
 * Figures 1 and 8. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmap.h"

#define W_PX 1200
#define H_PX 640
#define ML 70
#define MR 20
#define MT 50
#define MB 50

static void colour(int32_t tensor, char *out, size_t cap) {
    uint32_t h = (uint32_t)tensor * 2654435761u;
    snprintf(out, cap, "hsl(%u,%u%%,%u%%)", h % 360, 55 + (h >> 9) % 35, 45 + (h >> 17) % 20);
}

int mm_render_svg(const mm_game *g, FILE *f, const char *title) {
    const mm_problem *p = g->p;
    double pw = W_PX - ML - MR, ph = H_PX - MT - MB;
    double sx = pw / (double)p->T, sy = ph / (double)p->G;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
            W_PX, H_PX, W_PX, H_PX);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W_PX, H_PX);
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"16\">", ML);
    for (const char *c = title ? title : p->name; *c; c++) {
        if (*c == '<') fputs("&lt;", f);
        else if (*c == '&') fputs("&amp;", f);
        else fputc(*c, f);
    }
    int32_t ncm = 0;
    for (int32_t b = 0; b < g->t; b++) ncm += g->act[b] == MM_COPY || g->act[b] == MM_NOCOPY;
    fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" font-size=\"12\" fill=\"#444\">%d instructions, %d buffers, CMEM %.1f MiB; "
               "%d of %d decided, %d in CMEM; return %.4g%s</text>\n",
            ML, p->T, p->nbuf, (double)p->max_size / 1048576.0, g->t, p->nbuf, ncm, mm_game_return(g), g->lost ? " (lost)" : "");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f4f4\" stroke=\"#888\"/>\n", ML, MT, pw, ph);
    for (int32_t b = 0; b < g->t; b++) {
        if (g->act[b] == MM_DROP || g->is[b] > g->ie[b] || g->off[b] < 0) continue;
        const mm_buffer *B = &p->buf[b];
        char col[40];
        colour(B->tensor, col, sizeof col);
        double x = ML + g->is[b] * sx, w = (g->ie[b] - g->is[b] + 1) * sx;
        double y = MT + ph - (g->off[b] + B->ngran) * sy, h = B->ngran * sy;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#222\" stroke-width=\"0.2\">"
                   "<title>buffer %d tensor %lld %s t=%d %s [%d,%d] off=%lld size=%lld</title></rect>\n",
                x, y, w < 0.3 ? 0.3 : w, h < 0.3 ? 0.3 : h, col, b, (long long)B->user_tensor, p->ins[B->time].name, B->time,
                mm_action_names[g->act[b]], g->is[b], g->ie[b], (long long)g->off[b] * (long long)p->granule, (long long)B->size);
    }
    /* axes */
    for (int i = 0; i <= 10; i++) {
        double x = ML + pw * i / 10.0;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%d</text>\n", x, H_PX - MB + 16,
                (int)((double)p->T * i / 10.0));
        double y = MT + ph - ph * i / 10.0;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f</text>\n", ML - 4, y + 4,
                (double)p->max_size / 1048576.0 * i / 10.0);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">logical time (instruction)</text>\n", ML + pw / 2,
            H_PX - 12);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">CMEM offset (MiB)</text>\n",
            MT + ph / 2, MT + ph / 2);
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}

int mm_render_file(const char *problem, uint64_t seed, const char *policy, const char *actions_file, const char *out,
                   hw_err *err) {
    mm_problem *p = mm_problem_open(problem, seed, err);
    if (!p) return -1;
    mm_game *g = mm_game_new(p);
    json_t *point = NULL;
    int rc = -1;
    if (actions_file) {
        json_error_t je;
        point = json_load_file(actions_file, JSON_DECODE_ANY, &je);
        if (!point) {
            hw_fail(err, HW_E_IO, "%s:%d:%d: %s", actions_file, je.line, je.column, je.text);
            goto done;
        }
    } else {
        point = json_pack("{s:s,s:I}", "policy", policy ? policy : "heuristic", "seed", (json_int_t)seed);
    }
    bool illegal;
    if (mm_env_play_point(p, g, point, &illegal, err)) goto done;
    FILE *f = fopen(out, "w");
    if (!f) {
        hw_fail(err, HW_E_IO, "%s: cannot write", out);
        goto done;
    }
    char title[200];
    snprintf(title, sizeof title, "%s: %s%s, speedup over all-HBM %.3f", p->name, actions_file ? "actions from " : "policy ",
             actions_file ? actions_file : (policy ? policy : "heuristic"), g->done && !g->lost ? p->lat_hbm / mm_game_latency(g) : 0.0);
    rc = mm_render_svg(g, f, title);
    if (fclose(f) != 0 || rc) rc = hw_fail(err, HW_E_IO, "%s: write failed", out);
done:
    json_decref(point);
    mm_game_free(g);
    mm_problem_free(p);
    return rc;
}
