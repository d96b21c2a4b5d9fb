/* gnn_graph.c - batched CSR graphs for gnn.h: construction from an edge list, disjoint
 * batches, and the top-k pooled subgraph with A^2 connectivity (see gnn.h). */
#include <stdlib.h>
#include <string.h>

#include "gnn.h"
#include "gnn_int.h"

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) abort();
    return q;
}

void gnn_graph_reserve(gnn_graph *g, int n, int nnz, int nseg) {
    if (n + 1 > g->cap_n) {
        g->cap_n = n + 1;
        g->rowptr = xrealloc(g->rowptr, sizeof(int) * (size_t)g->cap_n);
    }
    if (nnz > g->cap_e) {
        g->cap_e = nnz;
        g->col = xrealloc(g->col, sizeof(int) * (size_t)g->cap_e);
    }
    if (nseg + 1 > g->cap_s) {
        g->cap_s = nseg + 1;
        g->seg = xrealloc(g->seg, sizeof(int) * (size_t)g->cap_s);
    }
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

gnn_graph *gnn_graph_from_edges(int n, const int64_t *edges, int E, hw_err *err) {
    if (n < 1) {
        hw_fail(err, HW_E_BAD_CONFIG, "graph: %d nodes (need at least 1)", n);
        return NULL;
    }
    int *deg = calloc((size_t)n, sizeof(int));
    for (int e = 0; e < E; e++) {
        int64_t a = edges[2 * e], b = edges[2 * e + 1];
        if (a < 0 || a >= n || b < 0 || b >= n) {
            free(deg);
            hw_fail(err, HW_E_BAD_CONFIG, "graph: edges[%d] = (%lld, %lld) outside [0, %d)", e, (long long)a, (long long)b, n);
            return NULL;
        }
        deg[a]++;
        deg[b]++;
    }
    gnn_graph *g = calloc(1, sizeof *g);
    int cap = 2 * E + n;
    gnn_graph_reserve(g, n, cap, 1);
    g->n = n;
    g->nseg = 1;
    g->seg[0] = 0;
    g->seg[1] = n;
    /* fill with duplicates, then sort and deduplicate each row */
    int *start = malloc(sizeof(int) * (size_t)(n + 1)), *fill = calloc((size_t)n, sizeof(int));
    start[0] = 0;
    for (int i = 0; i < n; i++) start[i + 1] = start[i] + deg[i] + 1;
    int *tmp = malloc(sizeof(int) * (size_t)start[n]);
    for (int i = 0; i < n; i++) tmp[start[i] + fill[i]++] = i;
    for (int e = 0; e < E; e++) {
        int a = (int)edges[2 * e], b = (int)edges[2 * e + 1];
        tmp[start[a] + fill[a]++] = b;
        tmp[start[b] + fill[b]++] = a;
    }
    int k = 0;
    g->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        int *r = tmp + start[i], m = start[i + 1] - start[i];
        qsort(r, (size_t)m, sizeof(int), cmp_int);
        for (int j = 0; j < m; j++)
            if (j == 0 || r[j] != r[j - 1]) g->col[k++] = r[j];
        g->rowptr[i + 1] = k;
    }
    free(tmp);
    free(start);
    free(fill);
    free(deg);
    return g;
}

gnn_graph *gnn_graph_batch(const gnn_graph *g, int B) {
    if (B < 1) B = 1;
    gnn_graph *o = calloc(1, sizeof *o);
    int nnz = g->rowptr[g->n];
    gnn_graph_reserve(o, g->n * B, nnz * B, g->nseg * B);
    o->n = g->n * B;
    o->nseg = g->nseg * B;
    o->rowptr[0] = 0;
    for (int b = 0; b < B; b++) {
        int r0 = b * g->n, e0 = b * nnz;
        for (int s = 0; s < g->nseg; s++) o->seg[b * g->nseg + s] = r0 + g->seg[s];
        for (int i = 0; i < g->n; i++) o->rowptr[r0 + i + 1] = e0 + g->rowptr[i + 1];
        for (int e = 0; e < nnz; e++) o->col[e0 + e] = r0 + g->col[e];
    }
    o->seg[o->nseg] = o->n;
    return o;
}

void gnn_graph_free(gnn_graph *g) {
    if (!g) return;
    free(g->seg);
    free(g->rowptr);
    free(g->col);
    free(g);
}

typedef struct scored {
    double y;
    int i;
} scored;

int gnn_topk_rows(int n, double ratio) {
    int k = (int)((double)n * ratio + 0.999999999);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return k;
}

/* x before y in the pooling order: higher score first, then lower row */
static inline int before(scored x, scored y) { return x.y != y.y ? x.y > y.y : x.i < y.i; }

/* Rearranges sc[0, n) so that sc[k-1] is the k-th element in the pooling order (quickselect,
 * middle pivot: deterministic, linear on average). The order is strict (rows differ), so the
 * top k are exactly the elements not after sc[k-1]. */
static scored kth(scored *sc, int n, int k) {
    int lo = 0, hi = n - 1, t = k - 1;
    while (lo < hi) {
        scored piv = sc[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (before(sc[i], piv)) i++;
            while (before(piv, sc[j])) j--;
            if (i <= j) {
                scored tmp = sc[i];
                sc[i++] = sc[j];
                sc[j--] = tmp;
            }
        }
        if (t <= j) hi = j;
        else if (t >= i) lo = i;
        else break;
    }
    return sc[t];
}

int gnn_pool_select(const gnn_graph *g, const double *y, double ratio, int *perm, gnn_ws_int *ws) {
    int m = 0;
    if ((size_t)g->n + 1 > ws->sc_cap) {
        ws->sc_cap = (size_t)g->n + 1;
        ws->sc = xrealloc(ws->sc, sizeof(scored) * ws->sc_cap);
    }
    scored *sc = ws->sc;
    for (int s = 0; s < g->nseg; s++) {
        int a = g->seg[s], b = g->seg[s + 1], ns = b - a;
        if (ns <= 0) continue;
        for (int i = 0; i < ns; i++) sc[i] = (scored){y[a + i], a + i};
        int k = gnn_topk_rows(ns, ratio);
        scored last = kth(sc, ns, k);
        /* the rows of the top k, ascending */
        for (int i = a; i < b; i++)
            if (!before(last, (scored){y[i], i})) perm[m++] = i;
    }
    return m;
}

void gnn_pool_graph(const gnn_graph *g, const int *perm, int m, gnn_graph *out, gnn_ws_int *ws) {
    gnn_ws_int_reserve(ws, 2 * g->n);
    int *newid = ws->p, *stamp = ws->p + g->n;
    for (int i = 0; i < g->n; i++) newid[i] = -1, stamp[i] = -1;
    for (int r = 0; r < m; r++) newid[perm[r]] = r;
    /* segments: count the selected rows of each old segment */
    gnn_graph_reserve(out, m, out->cap_e, g->nseg);
    out->n = m;
    out->nseg = g->nseg;
    int r = 0;
    for (int s = 0; s < g->nseg; s++) {
        out->seg[s] = r;
        while (r < m && perm[r] < g->seg[s + 1]) r++;
    }
    out->seg[g->nseg] = m;
    int k = 0;
    out->rowptr[0] = 0;
    for (int rr = 0; rr < m; rr++) {
        int u = perm[rr];
        for (int p = g->rowptr[u]; p < g->rowptr[u + 1]; p++) {
            int v = g->col[p];
            for (int q = g->rowptr[v]; q < g->rowptr[v + 1]; q++) {
                int w = g->col[q], nw = newid[w];
                if (nw < 0 || stamp[w] == rr) continue;
                stamp[w] = rr;
                if (k >= out->cap_e) {
                    out->cap_e = out->cap_e ? 2 * out->cap_e : 256;
                    out->col = xrealloc(out->col, sizeof(int) * (size_t)out->cap_e);
                }
                out->col[k++] = nw;
            }
        }
        int *row = out->col + out->rowptr[rr], len = k - out->rowptr[rr];
        if (len > 32) qsort(row, (size_t)len, sizeof(int), cmp_int);
        else /* short rows (most): insertion sort */
            for (int x = 1; x < len; x++) {
                int v = row[x], z = x;
                for (; z > 0 && row[z - 1] > v; z--) row[z] = row[z - 1];
                row[z] = v;
            }
        out->rowptr[rr + 1] = k;
    }
}

void gnn_ws_int_reserve(gnn_ws_int *w, int n) {
    if ((size_t)n > w->cap) {
        w->cap = (size_t)n;
        w->p = xrealloc(w->p, sizeof(int) * w->cap);
    }
}
