/* placement_model.c - liveness, compiler rectification, latency and the heuristic (see
 * placement.h and docs/placement.md for the formulas). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

const char *const pl_feature_names[PL_NFEAT] = {
    "op_id", "weight_size", "ifm_x", "ifm_y", "ifm_z", "ofm_x", "ofm_y", "ofm_z", "ifm_size", "ofm_size",
    "n_ops_left", "n_w_left", "groups", "kernel_x", "kernel_y", "stride", "pad", "dilation", "batch"};

const char *const pl_op_names[PL_OP_COUNT] = {"conv", "dwconv", "fc",     "matmul",   "pool", "eltwise",
                                              "softmax", "norm", "concat", "upsample", "embed"};

enum { OP_CONV = 0, OP_DWCONV, OP_FC, OP_MATMUL, OP_POOL, OP_ELTWISE, OP_SOFTMAX, OP_NORM, OP_CONCAT, OP_UPSAMPLE, OP_EMBED };

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

static int is_mac_op(int op) { return op == OP_CONV || op == OP_DWCONV || op == OP_FC || op == OP_MATMUL; }
static int is_window_op(int op) { return op == OP_CONV || op == OP_DWCONV || op == OP_POOL; }

void pl_graph_free(pl_graph *g) {
    if (!g) return;
    free(g->nodes);
    g->nodes = NULL;
    g->n = 0;
}

void pl_model_free(pl_model *m) {
    if (!m) return;
    free(m->g.nodes);
    free(m->bytes);
    free(m->last_use);
    free(m->alive_off);
    free(m->alive);
    free(m->dead_off);
    free(m->dead);
    free(m->t_compute);
    free(m->w_read);
    free(m->in_off);
    free(m->in_t);
    free(m->in_bytes);
    free(m->rank_of);
    free(m->by_rank);
    free(m->rank_bytes);
    free(m->feat);
    free(m->edges);
    free(m->heuristic);
    free(m);
}

pl_scratch *pl_scratch_new(const pl_model *m) {
    pl_scratch *s = xcalloc(1, sizeof *s);
    s->map = xcalloc((size_t)m->nt, 1);
    int maxb = 1; /* rectify_mem keeps one bitset per bank */
    for (int k = 0; k < m->hw.n_mem; k++)
        if (m->hw.mem[k].banks > maxb) maxb = m->hw.mem[k].banks;
    s->bits = xcalloc((size_t)m->nwords * (size_t)maxb, sizeof(uint64_t));
    s->node_time = xcalloc((size_t)m->n, sizeof(double));
    return s;
}

void pl_scratch_free(pl_scratch *s) {
    if (!s) return;
    free(s->map);
    free(s->bits);
    free(s->node_time);
    free(s);
}

/* Deterministic insertion sort by (bytes, id): avoids a mutable global comparator context. */
static void sort_tensors(const int64_t *bytes, int *idx, int nt) {
    for (int i = 1; i < nt; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && (bytes[idx[j]] > bytes[v] || (bytes[idx[j]] == bytes[v] && idx[j] > v))) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

int pl_alive(const pl_model *m, int t, int step) {
    if (t < 0 || t >= m->nt || step < 0 || step >= m->n) return 0;
    if ((t & 1) == 0) return 1;
    int i = t >> 1;
    return step >= i && step <= m->last_use[i];
}

int64_t pl_occupancy(const pl_model *m, const uint8_t *map, int mem, int step) {
    int64_t occ = 0;
    for (int t = 0; t < m->nt; t++)
        if (map[t] == mem && pl_alive(m, t, step)) occ += m->bytes[t];
    return occ;
}

int64_t pl_occupancy_bank(const pl_model *m, const uint8_t *map, int mem, int bank, int step) {
    int64_t occ = 0;
    for (int t = 0; t < m->nt; t++)
        if (map[t] == mem && pl_bank(m, t, mem) == bank && pl_alive(m, t, step)) occ += m->bytes[t];
    return occ;
}

/* Peak occupancy (of the fullest bank) and resident weights (all banks) per memory. Channel c =
 * coff[k] + bank counts memory k's bank; only the channels that exist are cleared per step. */
static void occupancy_stats(const pl_model *m, const uint8_t *map, int64_t *peak, int64_t *win) {
    enum { NCH = PL_MAX_MEMS * PL_MAX_BANKS };
    const int M = m->hw.n_mem;
    if (m->one_bank) { /* a channel is a memory: the same sums and maxima without the bank index */
        /* the activations alive at step t per memory, as a running sum: + the one born at t,
         * maximum, - those whose last step is t (exact integer sums: the per-step totals) */
        int64_t pb[PL_MAX_MEMS] = {0}, a[PL_MAX_MEMS] = {0};
        for (int k = 0; k < M; k++) win[k] = 0;
        for (int i = 0; i < m->n; i++) win[map[2 * i]] += m->bytes[2 * i];
        for (int t = 0; t < m->n; t++) {
            /* a memory's sum only grows at a birth: its maximum is at one, in the memory born into */
            int k = map[2 * t + 1];
            a[k] += m->bytes[2 * t + 1];
            if (a[k] > pb[k]) pb[k] = a[k];
            for (int p = m->dead_off[t]; p < m->dead_off[t + 1]; p++) a[map[m->dead[p]]] -= m->bytes[m->dead[p]];
        }
        for (int k = 0; k < M; k++) peak[k] = pb[k] + win[k];
        return;
    }
    int coff[PL_MAX_MEMS + 1];
    coff[0] = 0;
    for (int k = 0; k < M; k++) coff[k + 1] = coff[k] + m->hw.mem[k].banks;
    const int C = coff[M];
    int64_t wb[NCH] = {0}, pb[NCH] = {0}, a[NCH];
    for (int k = 0; k < M; k++) win[k] = peak[k] = 0;
    for (int i = 0; i < m->n; i++) {
        int k = map[2 * i];
        win[k] += m->bytes[2 * i];
        wb[coff[k] + pl_bank(m, 2 * i, k)] += m->bytes[2 * i];
    }
    for (int t = 0; t < m->n; t++) {
        for (int c = 0; c < C; c++) a[c] = 0;
        for (int p = m->alive_off[t]; p < m->alive_off[t + 1]; p++) {
            int x = m->alive[p], k = map[x];
            a[coff[k] + pl_bank(m, x, k)] += m->bytes[x];
        }
        for (int c = 0; c < C; c++)
            if (a[c] > pb[c]) pb[c] = a[c];
    }
    for (int k = 0; k < M; k++)
        for (int c = coff[k]; c < coff[k + 1]; c++)
            if (pb[c] + wb[c] > peak[k]) peak[k] = pb[c] + wb[c];
}

/* One demotion in bank `bank` of memory `mem` at step t, whose overflow is `over` > 0 bytes: the
 * smallest tensor of the bank resident at t whose size covers the overflow, or the largest one if
 * none does (rank order breaks ties). bits: the bank's resident weights by rank. Returns the
 * demoted tensor (now in mem - 1), or -1 if the bank holds nothing (cannot happen). */
static int demote_one(const pl_model *m, uint8_t *out, uint64_t *bits, int mem, int bank, int t, int64_t over) {
    const int nt = m->nt, nw = m->nwords, B = m->hw.mem[mem].banks;
    /* first rank whose size covers the overflow */
    int lo = 0, hi = nt;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (m->rank_bytes[mid] >= over) hi = mid;
        else lo = mid + 1;
    }
    /* best fit among weights: lowest set bit at rank >= lo */
    int wfit = -1, wmax = -1;
    for (int k = lo >> 6; k < nw; k++) {
        uint64_t v = bits[k];
        if (k == lo >> 6 && (lo & 63)) v &= ~0ull << (lo & 63);
        if (v) {
            wfit = (k << 6) + __builtin_ctzll(v);
            break;
        }
    }
    if (wfit < 0)
        for (int k = nw - 1; k >= 0; k--)
            if (bits[k]) {
                wmax = (k << 6) + 63 - __builtin_clzll(bits[k]);
                break;
            }
    /* activations resident at t */
    int afit = -1, amax = -1;
    for (int p = m->alive_off[t]; p < m->alive_off[t + 1]; p++) {
        int x = m->alive[p];
        if (out[x] != mem || m->bytes[x] == 0 || ((x >> 1) % B) != bank) continue;
        int r = m->rank_of[x];
        if (r >= lo) {
            if (afit < 0 || r < afit) afit = r;
        } else if (r > amax) {
            amax = r;
        }
    }
    int pick;
    if (wfit >= 0 || afit >= 0) pick = wfit < 0 ? afit : afit < 0 ? wfit : (wfit < afit ? wfit : afit);
    else pick = wmax > amax ? wmax : amax;
    if (pick < 0) return -1;
    int x = m->by_rank[pick];
    out[x] = (uint8_t)(mem - 1);
    if ((x & 1) == 0) bits[pick >> 6] &= ~(1ull << (pick & 63));
    return x;
}

/* The demotion rule on memory `mem` (see pl_rectify), every bank in one pass over the steps:
 * a tensor only counts against its own bank and a demotion leaves `mem`, so the banks are
 * independent and this equals rectifying one bank after the other (tests/c/placement checks it
 * against a bank-by-bank oracle). out is updated in place; bits holds banks x nwords words. */
static inline __attribute__((always_inline)) void rectify_mem_b(const pl_model *m, const uint8_t *map, uint8_t *out, uint64_t *bits, int mem,
                                                                const int B, int64_t *moved, int *nmov) {
    const int n = m->n, nw = m->nwords;
    const int64_t cap = m->hw.mem[mem].capacity;
    int64_t W[PL_MAX_BANKS] = {0}, A[PL_MAX_BANKS];
    memset(bits, 0, sizeof(uint64_t) * (size_t)nw * (size_t)B);
    for (int i = 0, b = 0; i < n; i++, b = b + 1 == B ? 0 : b + 1) {
        int w = 2 * i;
        if (out[w] == mem && m->bytes[w] > 0) {
            int r = m->rank_of[w];
            bits[(size_t)b * (size_t)nw + (size_t)(r >> 6)] |= 1ull << (r & 63);
            W[b] += m->bytes[w];
        }
    }
    /* A[b]: the activations in the bank alive at step t, as a running sum: + the one born at t,
     * - a demoted one, - those whose last step was t - 1 and are still here (the same totals as
     * summing the step's live list: only demotions move a tensor out of `mem` during the pass) */
    memset(A, 0, sizeof A);
    for (int t = 0; t < n; t++) {
        const int xb = 2 * t + 1;
        if (out[xb] == mem) A[B == 1 ? 0 : t % B] += m->bytes[xb];
        for (int b = 0; b < B; b++)
            while (W[b] + A[b] > cap) {
                int x = demote_one(m, out, bits + (size_t)b * (size_t)nw, mem, b, t, W[b] + A[b] - cap);
                if (x < 0) break; /* cannot happen: the overflow is made of the bank's tensors */
                if ((x & 1) == 0) W[b] -= m->bytes[x];
                else A[b] -= m->bytes[x];
                if (map[x] == mem) { /* its first move (a tensor only moves down, one memory at a time) */
                    *moved += m->bytes[x];
                    ++*nmov;
                }
            }
        for (int p = m->dead_off[t]; p < m->dead_off[t + 1]; p++) {
            int x = m->dead[p];
            if (out[x] == mem) A[B == 1 ? 0 : (x >> 1) % B] -= m->bytes[x];
        }
    }
}

/* rectify_mem_b compiled twice: for a memory of one bank (the common case) and for any */
static void rectify_mem(const pl_model *m, const uint8_t *map, uint8_t *out, uint64_t *bits, int mem, int64_t *moved, int *nmov) {
    const int B = m->hw.mem[mem].banks;
    if (B == 1) rectify_mem_b(m, map, out, bits, mem, 1, moved, nmov);
    else rectify_mem_b(m, map, out, bits, mem, B, moved, nmov);
}

/* The demotion rule (docs/placement.md "Compiler rectification"): memories from the fastest to
 * memory 1; within a memory, each bank on its own (one pass over the steps for all banks), steps in execution order;
 * while the bank overflows at step t, demote (to the next slower memory) the smallest tensor resident at t whose size covers the
 * overflow, or the largest one if none does; ties by tensor id (rank order). */
int64_t pl_rectify(const pl_model *m, const uint8_t *map, uint8_t *out, pl_scratch *s, int *n_moved) {
    const int nt = m->nt, M = m->hw.n_mem;
    uint8_t *orig = NULL; /* rectifying in place: the map as given, to count the moves against */
    if (out == map) {
        orig = malloc((size_t)nt);
        if (!orig) abort();
        memcpy(orig, map, (size_t)nt);
        map = orig;
    } else {
        memcpy(out, map, (size_t)nt);
    }
    int64_t moved = 0; /* the tensors whose memory changed, counted as they first move */
    int nmov = 0;
    for (int mem = M - 1; mem >= 1; mem--)
        rectify_mem(m, map, out, s->bits, mem, &moved, &nmov);
    free(orig);
    if (n_moved) *n_moved = nmov;
    return moved;
}

/* A node's transfers: one entry per channel (memory, bank) it touches, key = memory *
 * PL_MAX_BANKS + bank; a channel's seconds add up in the order the transfers come. */
typedef struct {
    int n;
    int key[PL_MAX_IN + 2];
    double t[PL_MAX_IN + 2];
} chan_acc;

static inline void chan_add(chan_acc *c, int k, int b, double sec) {
    const int key = k * PL_MAX_BANKS + b;
    for (int j = 0; j < c->n; j++)
        if (c->key[j] == key) {
            c->t[j] += sec;
            return;
        }
    c->key[c->n] = key;
    c->t[c->n++] = sec;
}

/* pl_node_time_masked with every input, when every memory has one bank: a channel is a memory,
 * its seconds add up in t[memory] in the same order, and the maxima over the channels touched
 * are the same numbers (tests/c/placement checks it bit for bit against the general path). */
static double node_time_one_bank(const pl_model *m, const uint8_t *map, int i) {
    double t[PL_MAX_MEMS];
    unsigned touched = 0;
#define PL_ADD(k, sec)                                                                                                  \
    do {                                                                                                               \
        int k_ = (k);                                                                                                  \
        double s_ = (sec);                                                                                             \
        if (touched >> k_ & 1) t[k_] += s_;                                                                            \
        else t[k_] = s_, touched |= 1u << k_;                                                                          \
    } while (0)
    if (m->w_read[i] > 0) {
        int k = map[2 * i];
        PL_ADD(k, (double)m->w_read[i] * m->inv_rbw[k]);
    }
    for (int p = m->in_off[i]; p < m->in_off[i + 1]; p++) {
        int x = m->in_t[p];
        int k = x < 0 ? 0 : map[x];
        PL_ADD(k, (double)m->in_bytes[p] * m->inv_rbw[k]);
    }
    if (m->bytes[2 * i + 1] > 0) {
        int k = map[2 * i + 1];
        PL_ADD(k, (double)m->bytes[2 * i + 1] * m->inv_wbw[k]);
    }
#undef PL_ADD
    double tm = 0, lat = 0;
    for (unsigned u = touched; u; u &= u - 1) {
        int k = __builtin_ctz(u);
        if (t[k] > tm) tm = t[k];
        if (m->lat[k] > lat) lat = m->lat[k];
    }
    return (m->t_compute[i] > tm ? m->t_compute[i] : tm) + lat + m->hw.node_overhead;
}

double pl_node_time(const pl_model *m, const uint8_t *map, int i) {
    return m->one_bank ? node_time_one_bank(m, map, i) : pl_node_time_masked(m, map, i, ~0u);
}

double pl_node_time_masked(const pl_model *m, const uint8_t *map, int i, unsigned in_mask) {
    chan_acc c;
    c.n = 0;
    if (m->w_read[i] > 0) {
        int k = map[2 * i];
        chan_add(&c, k, pl_bank(m, 2 * i, k), (double)m->w_read[i] * m->inv_rbw[k]);
    }
    const int p0 = m->in_off[i], p1 = m->in_off[i + 1];
    for (int p = p0; p < p1; p++) {
        if (!(in_mask & (1u << (p - p0)))) continue;
        int t = m->in_t[p];
        int k = t < 0 ? 0 : map[t];
        chan_add(&c, k, t < 0 ? 0 : pl_bank(m, t, k), (double)m->in_bytes[p] * m->inv_rbw[k]);
    }
    if (m->bytes[2 * i + 1] > 0) {
        int k = map[2 * i + 1];
        chan_add(&c, k, pl_bank(m, 2 * i + 1, k), (double)m->bytes[2 * i + 1] * m->inv_wbw[k]);
    }
    double tm = 0, lat = 0;
    for (int j = 0; j < c.n; j++) {
        if (c.t[j] > tm) tm = c.t[j];
        double l = m->lat[c.key[j] / PL_MAX_BANKS];
        if (l > lat) lat = l;
    }
    return (m->t_compute[i] > tm ? m->t_compute[i] : tm) + lat + m->hw.node_overhead;
}

double pl_latency(const pl_model *m, const uint8_t *map, double *node_time) {
    double total = 0;
    for (int i = 0; i < m->n; i++) {
        double ti = pl_node_time(m, map, i);
        if (node_time) node_time[i] = ti;
        total += ti;
    }
    return total;
}

void pl_evaluate(const pl_model *m, const uint8_t *map, pl_scratch *s, pl_result *r) {
    r->reassigned_bytes = pl_rectify(m, map, s->map, s, &r->n_reassigned);
    r->eps = m->total_bytes > 0 ? (double)r->reassigned_bytes / (double)m->total_bytes : 0.0;
    r->latency = pl_latency(m, s->map, s->node_time);
    occupancy_stats(m, s->map, r->peak, r->weights_in);
    r->rectified = s->map;
}

/* The native-compiler heuristic (docs/placement.md "Heuristic"): start from all-DRAM; place
 * activations in execution order, each in the fastest memory that has room for it over its
 * whole live range; then weights in execution order, each in the fastest memory with room at
 * every step. In a banked memory "room" is in the tensor's own bank (node mod banks). Zero-byte
 * tensors stay in memory 0. Valid by construction. */
void pl_heuristic(const pl_model *m, uint8_t *out) {
    const int n = m->n, M = m->hw.n_mem;
    memset(out, 0, (size_t)m->nt);
    /* occupancy per channel (memory k, bank b) and step: occ[(coff[k] + b) * n + s] */
    int coff[PL_MAX_MEMS + 1] = {0};
    for (int k = 0; k < M; k++) coff[k + 1] = coff[k] + m->hw.mem[k].banks;
    int64_t *occ = xcalloc((size_t)coff[M] * (size_t)n, sizeof(int64_t));
    for (int i = 0; i < n; i++) {
        int t = 2 * i + 1;
        int64_t b = m->bytes[t];
        if (b == 0) continue;
        for (int k = M - 1; k >= 1; k--) {
            int64_t *o = occ + (size_t)(coff[k] + pl_bank(m, t, k)) * (size_t)n, mx = 0;
            for (int s = i; s <= m->last_use[i]; s++)
                if (o[s] > mx) mx = o[s];
            if (mx + b <= m->hw.mem[k].capacity) {
                out[t] = (uint8_t)k;
                for (int s = i; s <= m->last_use[i]; s++) o[s] += b;
                break;
            }
        }
    }
    int64_t *peak = xcalloc((size_t)coff[M], sizeof(int64_t));
    for (int c = 0; c < coff[M]; c++)
        for (int s = 0; s < n; s++)
            if (occ[(size_t)c * n + s] > peak[c]) peak[c] = occ[(size_t)c * n + s];
    for (int i = 0; i < n; i++) {
        int t = 2 * i;
        int64_t b = m->bytes[t];
        if (b == 0) continue;
        for (int k = M - 1; k >= 1; k--) {
            int c = coff[k] + pl_bank(m, t, k);
            if (peak[c] + b <= m->hw.mem[k].capacity) {
                out[t] = (uint8_t)k;
                peak[c] += b;
                break;
            }
        }
    }
    free(peak);
    free(occ);
}

static double feat_value(const pl_node *d, int f, const pl_model *m, int i, const int64_t *ops_suffix,
                         const int64_t *w_suffix) {
    int win = is_window_op(d->op);
    switch (f) {
    case 0: return d->op;
    case 1: return (double)m->bytes[2 * i];
    case 2: return (double)d->ifm[0];
    case 3: return (double)d->ifm[1];
    case 4: return (double)d->ifm[2];
    case 5: return (double)d->ofm[0];
    case 6: return (double)d->ofm[1];
    case 7: return (double)d->ofm[2];
    case 8: return (double)(d->ifm[0] * d->ifm[1] * d->ifm[2]);
    case 9: return (double)(d->ofm[0] * d->ofm[1] * d->ofm[2]);
    case 10: return (double)ops_suffix[i + 1];
    case 11: return (double)w_suffix[i];
    case 12: return win ? d->groups : 0;
    case 13: return win ? d->kx : 0;
    case 14: return win ? d->ky : 0;
    case 15: return win ? d->stride : 0;
    case 16: return win ? d->pad : 0;
    case 17: return win ? d->dilation : 0;
    case 18: return d->batch;
    }
    return 0;
}

pl_model *pl_model_build(pl_graph *g, const pl_hw *hw, int features, hw_err *err) {
    if (!g || g->n <= 0) return hw_fail(err, HW_E_BAD_CONFIG, "graph: no nodes"), NULL;
    pl_model *m = xcalloc(1, sizeof *m);
    m->hw = *hw;
    m->one_bank = 1;
    for (int k = 0; k < m->hw.n_mem; k++) {
        if (m->hw.mem[k].banks < 1 || m->hw.mem[k].banks > PL_MAX_BANKS) m->hw.mem[k].banks = 1;
        m->one_bank &= m->hw.mem[k].banks == 1;
    }
    m->g = *g;
    g->nodes = NULL;
    g->n = 0;
    const int n = m->g.n;
    m->n = n;
    m->nt = 2 * n;
    const int nt = m->nt;
    const int64_t eb = hw->element_bytes;
    m->bytes = xcalloc((size_t)nt, sizeof(int64_t));
    m->last_use = xcalloc((size_t)n, sizeof(int));
    m->t_compute = xcalloc((size_t)n, sizeof(double));
    m->w_read = xcalloc((size_t)n, sizeof(int64_t));
    m->in_off = xcalloc((size_t)n + 1, sizeof(int));
    int nin = 0;
    for (int i = 0; i < n; i++) nin += m->g.nodes[i].n_in;
    m->in_t = xcalloc((size_t)nin, sizeof(int));
    m->in_bytes = xcalloc((size_t)nin, sizeof(int64_t));
    m->edges = xcalloc((size_t)nin * 2, sizeof(int64_t));
    const double mac_rate = hw->engines * hw->freq_hz * hw->macs_per_cycle;
    const double vec_rate = hw->engines * hw->freq_hz * hw->vector_ops_per_cycle;
    for (int i = 0; i < n; i++) {
        const pl_node *d = &m->g.nodes[i];
        m->bytes[2 * i] = d->weights * eb;
        m->bytes[2 * i + 1] = d->ofm[0] * d->ofm[1] * d->ofm[2] * (d->batch > 0 ? d->batch : 1) * eb;
        m->last_use[i] = i;
        m->t_compute[i] = (double)d->ops / (is_mac_op(d->op) ? mac_rate : vec_rate);
        /* an embedding lookup reads only the gathered rows, not the whole table */
        int64_t wr = m->bytes[2 * i];
        if (d->op == OP_EMBED && m->bytes[2 * i + 1] < wr) wr = m->bytes[2 * i + 1];
        m->w_read[i] = wr;
    }
    int p = 0;
    for (int i = 0; i < n; i++) {
        const pl_node *d = &m->g.nodes[i];
        m->in_off[i] = p;
        for (int k = 0; k < d->n_in; k++, p++) {
            int src = d->in[k];
            if (src >= 0) {
                m->in_t[p] = 2 * src + 1;
                m->in_bytes[p] = m->bytes[2 * src + 1];
                if (m->last_use[src] < i) m->last_use[src] = i;
                m->edges[2 * m->ne] = src;
                m->edges[2 * m->ne + 1] = i;
                m->ne++;
            } else {
                m->in_t[p] = -1;
                /* an embedding's graph input is one token id per position, not a one-hot ifm_z */
                int64_t z = d->op == OP_EMBED ? 1 : d->ifm[2];
                m->in_bytes[p] = d->ifm[0] * d->ifm[1] * z * (d->batch > 0 ? d->batch : 1) * eb;
            }
        }
    }
    m->in_off[n] = p;
    /* liveness CSR */
    m->alive_off = xcalloc((size_t)n + 1, sizeof(int));
    int *cnt = xcalloc((size_t)n + 1, sizeof(int));
    for (int i = 0; i < n; i++)
        for (int s = i; s <= m->last_use[i]; s++) cnt[s]++;
    for (int s = 0; s < n; s++) m->alive_off[s + 1] = m->alive_off[s] + cnt[s];
    m->alive = xcalloc((size_t)m->alive_off[n], sizeof(int));
    memset(cnt, 0, sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++)
        for (int s = i; s <= m->last_use[i]; s++) m->alive[m->alive_off[s] + cnt[s]++] = 2 * i + 1;
    /* the activations by their last step: node i's is born at step i and dies after last_use[i] */
    m->dead_off = xcalloc((size_t)n + 1, sizeof(int));
    m->dead = xcalloc((size_t)n, sizeof(int));
    memset(cnt, 0, sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) cnt[m->last_use[i]]++;
    for (int s = 0; s < n; s++) m->dead_off[s + 1] = m->dead_off[s] + cnt[s];
    memset(cnt, 0, sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) m->dead[m->dead_off[m->last_use[i]] + cnt[m->last_use[i]]++] = 2 * i + 1;
    free(cnt);
    /* rank order */
    m->by_rank = xcalloc((size_t)nt, sizeof(int));
    m->rank_of = xcalloc((size_t)nt, sizeof(int));
    m->rank_bytes = xcalloc((size_t)nt, sizeof(int64_t));
    for (int t = 0; t < nt; t++) m->by_rank[t] = t;
    sort_tensors(m->bytes, m->by_rank, nt);
    for (int r = 0; r < nt; r++) {
        m->rank_of[m->by_rank[r]] = r;
        m->rank_bytes[r] = m->bytes[m->by_rank[r]];
    }
    m->nwords = (nt + 63) / 64;
    m->total_bytes = 0;
    for (int t = 0; t < nt; t++) m->total_bytes += m->bytes[t];
    for (int k = 0; k < hw->n_mem; k++) {
        m->inv_rbw[k] = 1.0 / hw->mem[k].read_bw;
        m->inv_wbw[k] = 1.0 / hw->mem[k].write_bw;
        m->lat[k] = hw->mem[k].latency;
    }
    /* the backing store must hold everything */
    uint8_t *zero = xcalloc((size_t)nt, 1);
    int64_t peak[PL_MAX_MEMS], win[PL_MAX_MEMS];
    occupancy_stats(m, zero, peak, win);
    free(zero);
    if (peak[0] > hw->mem[0].capacity) {
        hw_fail(err, HW_E_BAD_CONFIG,
                "hw.memories[0].capacity_bytes: workload '%s' needs %lld bytes at its peak with every tensor in %s, "
                "which holds %lld",
                m->g.name, (long long)peak[0], hw->mem[0].name, (long long)hw->mem[0].capacity);
        pl_model_free(m);
        return NULL;
    }
    /* features */
    int64_t *ops_suffix = xcalloc((size_t)n + 1, sizeof(int64_t));
    int64_t *w_suffix = xcalloc((size_t)n + 1, sizeof(int64_t));
    for (int i = n - 1; i >= 0; i--) {
        ops_suffix[i] = ops_suffix[i + 1] + m->g.nodes[i].ops;
        w_suffix[i] = w_suffix[i + 1] + m->g.nodes[i].weights;
    }
    m->feat = xcalloc((size_t)n * PL_NFEAT, sizeof(float));
    double colmax[PL_NFEAT] = {0};
    double *tmp = xcalloc((size_t)n * PL_NFEAT, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int f = 0; f < PL_NFEAT; f++) {
            double v = feat_value(&m->g.nodes[i], f, m, i, ops_suffix, w_suffix);
            tmp[i * PL_NFEAT + f] = v;
            if (v > colmax[f]) colmax[f] = v;
        }
    for (int i = 0; i < n * PL_NFEAT; i++) {
        double v = tmp[i];
        if (features == PL_FEAT_LOG1P) v = log1p(v);
        else if (features == PL_FEAT_NORMALIZED) v = colmax[i % PL_NFEAT] > 0 ? v / colmax[i % PL_NFEAT] : 0;
        m->feat[i] = (float)v;
    }
    free(tmp);
    free(ops_suffix);
    free(w_suffix);
    /* baseline */
    m->heuristic = xcalloc((size_t)nt, 1);
    pl_heuristic(m, m->heuristic);
    m->baseline = pl_latency(m, m->heuristic, NULL);
    return m;
}
