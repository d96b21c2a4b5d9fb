/* placement_bound.c - the capacity-free and capacity-aware speedup bounds (placement_bound.h,
 * docs/placement.md "Headroom bounds"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement_bound.h"

#define ENUM_MAX 729 /* input assignments enumerated per (weight, output) choice: 3^6 */

/* g[(wk * M + ak)] = the least time node i can have with its weights in wk and its output in
 * ak, its inputs' memories free (those beyond the enumeration limit are left out). */
static int node_table(const pl_model *m, int i, uint8_t *map, double *g) {
    const int M = m->hw.n_mem;
    int uniq[PL_MAX_IN], nu = 0;
    unsigned mask = 0;
    long combos = 1;
    int dropped = 0;
    for (int p = m->in_off[i]; p < m->in_off[i + 1]; p++) {
        int t = m->in_t[p], seen = t < 0, keep = 1;
        for (int u = 0; u < nu && !seen; u++) seen = uniq[u] == t;
        if (!seen) {
            if (combos * M <= ENUM_MAX) {
                uniq[nu++] = t;
                combos *= M;
            } else {
                keep = 0;
                dropped++;
            }
        } else if (t >= 0) {
            keep = 0;
            for (int u = 0; u < nu; u++) keep |= uniq[u] == t;
        }
        if (keep) mask |= 1u << (p - m->in_off[i]);
    }
    for (int wk = 0; wk < M; wk++)
        for (int ak = 0; ak < M; ak++) {
            map[2 * i] = (uint8_t)wk;
            map[2 * i + 1] = (uint8_t)ak;
            double best = INFINITY;
            for (long c = 0; c < combos; c++) {
                long x = c;
                for (int u = 0; u < nu; u++, x /= M) map[uniq[u]] = (uint8_t)(x % M);
                double t = pl_node_time_masked(m, map, i, mask);
                if (t < best) best = t;
            }
            g[wk * M + ak] = best;
        }
    return dropped;
}

typedef struct {
    const pl_model *m;
    int M, n, nc;            /* memories, nodes, channels */
    int coff[PL_MAX_MEMS + 1];
    double *g;               /* [n][M*M] */
    double *mu;              /* [nc][n] multipliers (memory 0's channel stays 0) */
    double *pre;             /* [nc][n+1] prefix sums of mu */
    int *wk, *ak;            /* [n] the relaxed choice at the current multipliers */
    int aware;               /* a tensor larger than a memory's bank cannot go there */
} bnd;

static int fits(const bnd *b, int t, int k) { return !b->aware || k == 0 || b->m->bytes[t] <= b->m->hw.mem[k].capacity; }

static int chan(const bnd *b, int t, int k) { return b->coff[k] + pl_bank(b->m, t, k); }

/* L(mu) and the minimising choice. */
static double lagrangian(bnd *b) {
    const pl_model *m = b->m;
    const int M = b->M, n = b->n;
    double total = 0;
    for (int c = 0; c < b->nc; c++) {
        double *p = b->pre + (size_t)c * (n + 1), *u = b->mu + (size_t)c * n;
        p[0] = 0;
        for (int t = 0; t < n; t++) p[t + 1] = p[t] + u[t];
    }
    for (int k = 1; k < M; k++)
        for (int c = b->coff[k]; c < b->coff[k + 1]; c++) total -= b->pre[(size_t)c * (n + 1) + n] * (double)m->hw.mem[k].capacity;
    for (int i = 0; i < n; i++) {
        const double wb = (double)m->bytes[2 * i], ab = (double)m->bytes[2 * i + 1];
        double best = INFINITY;
        for (int wk = 0; wk < M; wk++) {
            if (!fits(b, 2 * i, wk)) continue;
            const double *pw = b->pre + (size_t)chan(b, 2 * i, wk) * (n + 1);
            double pen_w = wb * pw[n];
            for (int ak = 0; ak < M; ak++) {
                if (!fits(b, 2 * i + 1, ak)) continue;
                const double *pa = b->pre + (size_t)chan(b, 2 * i + 1, ak) * (n + 1);
                double v = b->g[(size_t)i * M * M + wk * M + ak] + pen_w + ab * (pa[m->last_use[i] + 1] - pa[i]);
                if (v < best) {
                    best = v;
                    b->wk[i] = wk;
                    b->ak[i] = ak;
                }
            }
        }
        total += best;
    }
    return total;
}

/* Subgradient (occupancy of the relaxed choice minus capacity) into sg; returns its squared norm
 * over the components that can move (mu > 0 or sg > 0). */
static double subgradient(const bnd *b, double *sg) {
    const pl_model *m = b->m;
    const int n = b->n;
    memset(sg, 0, sizeof(double) * (size_t)b->nc * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (b->wk[i] > 0 && m->bytes[2 * i] > 0) {
            double *s = sg + (size_t)chan(b, 2 * i, b->wk[i]) * n;
            for (int t = 0; t < n; t++) s[t] += (double)m->bytes[2 * i];
        }
        if (b->ak[i] > 0 && m->bytes[2 * i + 1] > 0) {
            double *s = sg + (size_t)chan(b, 2 * i + 1, b->ak[i]) * n;
            for (int t = i; t <= m->last_use[i]; t++) s[t] += (double)m->bytes[2 * i + 1];
        }
    }
    double norm = 0;
    for (int k = 1; k < b->M; k++)
        for (int c = b->coff[k]; c < b->coff[k + 1]; c++)
            for (int t = 0; t < n; t++) {
                double *x = &sg[(size_t)c * n + t];
                *x -= (double)m->hw.mem[k].capacity;
                if (*x > 0 || b->mu[(size_t)c * n + t] > 0) norm += *x * *x;
            }
    return norm;
}

int pl_bound_compute(const pl_model *m, int iterations, pl_bound *out) {
    memset(out, 0, sizeof *out);
    bnd b = {.m = m, .M = m->hw.n_mem, .n = m->n};
    for (int k = 0; k < b.M; k++) b.coff[k + 1] = b.coff[k] + m->hw.mem[k].banks;
    b.nc = b.coff[b.M];
    const size_t n = (size_t)m->n, nc = (size_t)b.nc;
    uint8_t *map = calloc((size_t)m->nt, 1);
    b.g = calloc(n * (size_t)(b.M * b.M), sizeof(double));
    b.mu = calloc(nc * n, sizeof(double));
    b.pre = calloc(nc * (n + 1), sizeof(double));
    b.wk = calloc(n, sizeof(int));
    b.ak = calloc(n, sizeof(int));
    double *sg = calloc(nc * n, sizeof(double));
    int rc = -1;
    if (!map || !b.g || !b.mu || !b.pre || !b.wk || !b.ak || !sg) goto done;
    for (int i = 0; i < m->n; i++) out->inputs_dropped += node_table(m, i, map, b.g + (size_t)i * b.M * b.M);
    out->baseline = m->baseline;
    out->free_latency = lagrangian(&b);
    b.aware = 1;
    double best = lagrangian(&b), theta = 2.0;
    int stall = 0;
    if (iterations < 0) iterations = 0;
    if (iterations > 100000) iterations = 100000;
    for (int it = 0; it < iterations; it++) {
        out->iterations = it + 1;
        double norm = subgradient(&b, sg);
        double gap = m->baseline - best;
        if (norm <= 0 || gap <= 0) break;
        double step = theta * gap / norm;
        for (size_t x = 0; x < nc * n; x++) {
            double v = b.mu[x] + step * sg[x];
            b.mu[x] = v > 0 ? v : 0;
        }
        for (size_t x = 0; x < n; x++) b.mu[x] = 0; /* memory 0 (channel 0) has no capacity term */
        double L = lagrangian(&b);
        if (L > best * (1 + 1e-12)) {
            best = L;
            stall = 0;
        } else if (++stall >= 20) {
            theta /= 2;
            stall = 0;
            if (theta < 1e-6) break;
        }
    }
    out->aware_latency = best;
    out->capacity_free = out->free_latency > 0 ? m->baseline / out->free_latency : INFINITY;
    out->capacity_aware = best > 0 ? m->baseline / best : INFINITY;
    rc = 0;
done:
    free(map);
    free(b.g);
    free(b.mu);
    free(b.pre);
    free(b.wk);
    free(b.ak);
    free(sg);
    return rc;
}
