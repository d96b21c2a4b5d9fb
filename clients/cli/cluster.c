/* cluster.c - Algorithm 1 of the MARL DNN-mapping paper (see cluster.h). */
#include "cluster.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int hwcl_pearson(const double *data, size_t rows, int cols, double *corr, hw_err *err) {
    if (cols <= 0 || cols > HWCL_MAX_PARAMS)
        return hw_fail(err, HW_E_LIMIT, "cluster: %d parameters (1..%d supported)", cols, HWCL_MAX_PARAMS);
    if (rows < 2) return hw_fail(err, HW_E_BAD_STATE, "cluster: %zu samples; the correlation needs at least 2", rows);
    bool constant[HWCL_MAX_PARAMS];
    for (int j = 0; j < cols; j++) {
        constant[j] = true;
        for (size_t r = 1; r < rows && constant[j]; r++)
            if (data[r * cols + j] != data[j]) constant[j] = false;
    }
    for (int i = 0; i < cols; i++) {
        corr[i * cols + i] = 1.0;
        for (int j = i + 1; j < cols; j++) {
            double r = 0.0;
            if (!constant[i] && !constant[j]) {
                r = gsl_stats_correlation(data + i, (size_t)cols, data + j, (size_t)cols, rows);
                if (!isfinite(r)) r = 0.0;
                if (r > 1.0) r = 1.0;
                if (r < -1.0) r = -1.0;
            }
            corr[i * cols + j] = corr[j * cols + i] = r;
        }
    }
    return 0;
}

void hwcl_distance(const double *corr, int n, double *dist) {
    for (int i = 0; i < n * n; i++) dist[i] = 1.0 - fabs(corr[i]);
    for (int i = 0; i < n; i++) dist[i * n + i] = 0.0;
}

int hwcl_linkage(const double *dist, int n, hwcl_merge *merges, hw_err *err) {
    if (n <= 0 || n > HWCL_MAX_PARAMS)
        return hw_fail(err, HW_E_LIMIT, "cluster: %d parameters (1..%d supported)", n, HWCL_MAX_PARAMS);
    /* active clusters: node id, size; d between active clusters (by slot) */
    int node[HWCL_MAX_PARAMS], size[HWCL_MAX_PARAMS];
    bool alive[HWCL_MAX_PARAMS];
    double d[HWCL_MAX_PARAMS][HWCL_MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        node[i] = i;
        size[i] = 1;
        alive[i] = true;
        for (int j = 0; j < n; j++) d[i][j] = dist[i * n + j];
    }
    for (int m = 0; m < n - 1; m++) {
        int bi = -1, bj = -1;
        double best = INFINITY;
        int bl = 0, bh = 0;
        for (int i = 0; i < n; i++) {
            if (!alive[i]) continue;
            for (int j = i + 1; j < n; j++) {
                if (!alive[j]) continue;
                int lo = node[i] < node[j] ? node[i] : node[j], hi = node[i] < node[j] ? node[j] : node[i];
                /* ties within 1e-12 go to the lowest node pair */
                if (d[i][j] < best - 1e-12 || (fabs(d[i][j] - best) <= 1e-12 && (lo < bl || (lo == bl && hi < bh)))) {
                    best = d[i][j];
                    bi = i;
                    bj = j;
                    bl = lo;
                    bh = hi;
                }
            }
        }
        merges[m].a = bl;
        merges[m].b = bh;
        merges[m].dist = best;
        merges[m].size = size[bi] + size[bj];
        /* UPGMA: new distance is the size-weighted mean */
        for (int k = 0; k < n; k++) {
            if (!alive[k] || k == bi || k == bj) continue;
            double v = (size[bi] * d[bi][k] + size[bj] * d[bj][k]) / (size[bi] + size[bj]);
            d[bi][k] = d[k][bi] = v;
        }
        size[bi] += size[bj];
        node[bi] = n + m;
        alive[bj] = false;
    }
    return 0;
}

static int find(int *parent, int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

int hwcl_cut(const hwcl_merge *merges, int n, int k, double threshold, int *labels) {
    int parent[2 * HWCL_MAX_PARAMS];
    for (int i = 0; i < 2 * n; i++) parent[i] = i;
    int apply = 0;
    if (k > 0) apply = n - (k > n ? n : k);
    else
        while (apply < n - 1 && merges[apply].dist <= threshold) apply++;
    for (int m = 0; m < apply; m++) {
        parent[find(parent, merges[m].a)] = n + m;
        parent[find(parent, merges[m].b)] = n + m;
    }
    int root_label[2 * HWCL_MAX_PARAMS];
    for (int i = 0; i < 2 * n; i++) root_label[i] = -1;
    int count = 0;
    for (int i = 0; i < n; i++) {
        int r = find(parent, i);
        if (root_label[r] < 0) root_label[r] = count++;
        labels[i] = root_label[r];
    }
    return count;
}

double hwcl_cut_height(const hwcl_merge *merges, int n, int k) {
    if (k >= n) return n > 1 ? merges[0].dist / 2 : 0.0;
    if (k <= 1) return merges[n - 2].dist + 0.05;
    return 0.5 * (merges[n - k - 1].dist + merges[n - k].dist);
}

static void leaves(const hwcl_merge *m, int n, int node, int *order, int *pos) {
    if (node < n) {
        order[(*pos)++] = node;
        return;
    }
    leaves(m, n, m[node - n].a, order, pos);
    leaves(m, n, m[node - n].b, order, pos);
}

void hwcl_leaf_order(const hwcl_merge *merges, int n, int *order) {
    int pos = 0;
    if (n == 1) order[0] = 0;
    else leaves(merges, n, 2 * n - 2, order, &pos);
}

static void print_node(FILE *f, const hwcl_merge *m, int n, int node, const char *const *names, char *prefix,
                       size_t plen, bool last, bool root) {
    fprintf(f, "%s%s", prefix, root ? "" : (last ? "`-- " : "|-- "));
    if (node < n) {
        fprintf(f, "%s\n", names[node]);
        return;
    }
    const hwcl_merge *x = &m[node - n];
    fprintf(f, "[%.3f] (%d params)\n", x->dist, x->size);
    size_t l = strlen(prefix);
    if (!root && l + 5 < plen) strcat(prefix, last ? "    " : "|   ");
    print_node(f, m, n, x->a, names, prefix, plen, false, false);
    print_node(f, m, n, x->b, names, prefix, plen, true, false);
    prefix[l] = '\0';
}

void hwcl_print_dendrogram(FILE *f, const hwcl_merge *merges, int n, const char *const *names) {
    char prefix[4 * HWCL_MAX_PARAMS + 8] = "";
    if (n == 1) {
        fprintf(f, "%s\n", names[0]);
        return;
    }
    print_node(f, merges, n, 2 * n - 2, names, prefix, sizeof prefix, true, true);
}

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* r in [-1,1] -> blue (negative) .. white .. red (positive) */
static void color(double r, int *R, int *G, int *B) {
    double t = fabs(r) > 1 ? 1 : fabs(r);
    int v = (int)lround(255 * (1 - t));
    if (r >= 0) *R = 255, *G = v, *B = v;
    else *R = v, *G = v, *B = 255;
}

int hwcl_write_svg(FILE *f, const double *corr, int n, const char *const *names, const hwcl_merge *merges,
                   double cut_height, const char *title) {
    const int cell = 36, lab = 110, top = 50, gap = 60, dw = 260, legend = 40;
    int hm = n * cell;
    int W = lab + hm + gap + lab + dw + 30, H = top + lab + hm + legend + 20;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\">");
    xml_text(f, title ? title : "Correlation matrix and dendrogram");
    fprintf(f, "</text>\n<text x=\"%d\" y=\"40\">(a) Pearson r</text>\n", lab);
    fprintf(f, "<text x=\"%d\" y=\"40\">(b) average linkage on 1-|r|</text>\n", lab + hm + gap);
    int y0 = top + lab;
    for (int i = 0; i < n; i++) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", lab - 4, y0 + i * cell + cell / 2 + 4);
        xml_text(f, names[i]);
        fprintf(f, "</text>\n<text transform=\"translate(%d,%d) rotate(-60)\">", lab + i * cell + cell / 2 + 3,
                y0 - 4);
        xml_text(f, names[i]);
        fputs("</text>\n", f);
        for (int j = 0; j < n; j++) {
            int R, G, B;
            double r = corr[i * n + j];
            color(r, &R, &G, &B);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" stroke=\"#ccc\"/>",
                    lab + j * cell, y0 + i * cell, cell, cell, R, G, B);
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">%.2f</text>\n",
                    lab + j * cell + cell / 2, y0 + i * cell + cell / 2 + 3, r);
        }
    }
    /* legend */
    int ly = y0 + hm + 12;
    for (int s = 0; s <= 20; s++) {
        int R, G, B;
        color(-1 + s * 0.1, &R, &G, &B);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"rgb(%d,%d,%d)\"/>", lab + s * 10, ly, R,
                G, B);
    }
    fprintf(f, "\n<text x=\"%d\" y=\"%d\">-1</text><text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\">+1</text>\n",
            lab, ly + 22, lab + 100, ly + 22, lab + 200, ly + 22);
    /* dendrogram: leaves on the left (labels), heights grow to the right */
    if (n >= 2) {
        int order[HWCL_MAX_PARAMS], pos_of[HWCL_MAX_PARAMS];
        hwcl_leaf_order(merges, n, order);
        for (int i = 0; i < n; i++) pos_of[order[i]] = i;
        int x0 = lab + hm + gap + lab;
        double hmax = merges[n - 2].dist;
        if (cut_height > hmax) hmax = cut_height;
        if (hmax <= 0) hmax = 1;
        double nodey[2 * HWCL_MAX_PARAMS], nodex[2 * HWCL_MAX_PARAMS];
        for (int i = 0; i < n; i++) {
            nodey[i] = y0 + pos_of[i] * cell + cell / 2.0;
            nodex[i] = x0;
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", x0 - 4, nodey[i] + 4);
            xml_text(f, names[i]);
            fputs("</text>\n", f);
        }
        for (int m = 0; m < n - 1; m++) {
            int a = merges[m].a, b = merges[m].b;
            double x = x0 + dw * merges[m].dist / hmax;
            fprintf(f, "<path d=\"M%.1f %.1f H%.1f V%.1f H%.1f\" fill=\"none\" stroke=\"#225\" stroke-width=\"1.5\"/>\n",
                    nodex[a], nodey[a], x, nodey[b], nodex[b]);
            nodex[n + m] = x;
            nodey[n + m] = (nodey[a] + nodey[b]) / 2;
        }
        for (int t = 0; t <= 4; t++) {
            double hv = hmax * t / 4;
            int x = x0 + dw * t / 4;
            fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/><text x=\"%d\" y=\"%d\" "
                       "text-anchor=\"middle\">%.2f</text>\n",
                    x, y0 + hm + 2, x, y0 + hm + 6, x, y0 + hm + 18, hv);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\">distance 1-|r|</text>\n", x0 + dw / 2 - 40, y0 + hm + 32);
        if (cut_height >= 0) {
            double x = x0 + dw * cut_height / hmax;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"red\" stroke-dasharray=\"4 3\"/>\n",
                    x, y0 - 10, x, y0 + hm);
        }
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

json_t *hwcl_assignment_json(const int *labels, int n, int k, const char *const *names) {
    json_t *agents = json_array();
    for (int c = 0; c < k; c++) {
        json_t *dims = json_array(), *params = json_array();
        for (int i = 0; i < n; i++)
            if (labels[i] == c) {
                json_array_append_new(dims, json_integer(i));
                json_array_append_new(params, json_string(names[i]));
            }
        char name[32];
        snprintf(name, sizeof name, "a%d", c);
        json_array_append_new(agents, json_pack("{s:s, s:o, s:o}", "name", name, "dims", dims, "params", params));
    }
    return json_pack("{s:o}", "agents", agents);
}

json_t *hwcl_assignment_parse(const json_t *j, int n, hw_err *err) {
    const json_t *agents = json_is_object(j) ? json_object_get(j, "agents") : j;
    if (!json_is_array(agents) || json_array_size(agents) == 0) {
        hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents: expected a non-empty list of {\"name\",\"dims\"}");
        return NULL;
    }
    bool seen[4096] = {false};
    int total = 0;
    json_t *out = json_array();
    size_t i;
    json_t *a;
    json_array_foreach(agents, i, a) {
        const json_t *name = json_object_get(a, "name"), *dims = json_object_get(a, "dims");
        if (!json_is_string(name) || !json_string_length(name) || json_string_length(name) > 100) {
            hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents[%zu].name: expected a non-empty string (<= 100 chars)", i);
            goto fail;
        }
        for (size_t p = 0; p < i; p++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(out, p), "name")), json_string_value(name))) {
                hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents[%zu].name: '%s' appears twice", i,
                        json_string_value(name));
                goto fail;
            }
        if (!json_is_array(dims) || json_array_size(dims) == 0) {
            hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents[%zu].dims: expected a non-empty list of integers", i);
            goto fail;
        }
        size_t k;
        json_t *d;
        json_array_foreach(dims, k, d) {
            json_int_t v = json_is_integer(d) ? json_integer_value(d) : -1;
            if (v < 0 || v >= 4096 || (n > 0 && v >= n)) {
                hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents[%zu].dims[%zu]: not an action element index%s", i, k,
                        n > 0 ? " of this env" : "");
                goto fail;
            }
            if (seen[v]) {
                hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents[%zu].dims[%zu]: element %lld is already assigned", i,
                        k, (long long)v);
                goto fail;
            }
            seen[v] = true;
            total++;
        }
        json_array_append_new(out, json_pack("{s:O, s:O}", "name", name, "dims", dims));
    }
    if (n > 0 && total != n) {
        for (int v = 0; v < n; v++)
            if (!seen[v]) {
                hw_fail(err, HW_E_BAD_CONFIG, "assignment.agents: action element %d is assigned to no agent", v);
                goto fail;
            }
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}
