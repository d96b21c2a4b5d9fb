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
    free(m->t_compute);
    free(m->w_read);
    free(m->in_off);
    free(m->in_t);
    free(m->in_bytes);
    free(m->rank_of);
    free(m->by_rank);
    free(m->wword);
    free(m->wbit);
    free(m->wrank_glob);
    free(m->wrank_bytes);
    free(m->xoff);
    free(m->doff);
    free(m->chan_of);
    free(m->bpos);
    free(m->dpos);
    free(m->xf);
    free(m->out_bytes);
    free(m->aempty);
    free(m->feat);
    free(m->edges);
    free(m->heuristic);
    free(m);
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

/* The tables of the evaluation (placement_eval.c; placement.h says what each holds), once the
 * tensors' bytes, ranks, inputs and the hardware are known. */
static void eval_tables(pl_model *m) {
    const pl_hw *hw = &m->hw;
    const int n = m->n;
    m->nch = 0;
    for (int k = 0; k < hw->n_mem; k++) {
        m->coff[k] = m->nch;
        m->nch += hw->mem[k].banks;
        m->inv_rbw[k] = 1.0 / hw->mem[k].read_bw;
        m->inv_wbw[k] = 1.0 / hw->mem[k].write_bw;
        m->lat[k] = hw->mem[k].latency;
    }
    m->coff[hw->n_mem] = m->nch;
    /* the channels' difference arrays and every activation's entries in them (placement.h) */
    const int M = hw->n_mem, n1 = n + 1;
    m->doff = xcalloc((size_t)m->nch + 1, sizeof(int));
    for (int k = 0; k < M; k++)
        for (int b = 0, B = hw->mem[k].banks; b < B; b++) {
            const int c = m->coff[k] + b, births = b < n ? (n - b + B - 1) / B : 0;
            m->doff[c + 1] = m->doff[c] + births + 1;
        }
    m->chan_of = xcalloc((size_t)M * (size_t)n1, 1);
    m->bpos = xcalloc((size_t)M * (size_t)n, sizeof(int));
    m->dpos = xcalloc((size_t)M * (size_t)n, sizeof(int));
    for (int k = 0; k < M; k++) {
        const int B = hw->mem[k].banks;
        for (int i = 0; i < n; i++) {
            const int b = i % B, c = m->coff[k] + b, e = m->last_use[i] + 1;
            m->chan_of[(size_t)k * n1 + i] = (uint8_t)c;
            m->bpos[(size_t)k * n + i] = m->doff[c] + i / B;
            m->dpos[(size_t)k * n + i] = m->doff[c] + (e - b + B - 1) / B;
        }
        m->chan_of[(size_t)k * n1 + n] = (uint8_t)m->coff[k];
    }
    /* weight ranks: the weights in rank order */
    m->nww = (n + 63) / 64;
    m->wword = xcalloc((size_t)n, sizeof(int));
    m->wbit = xcalloc((size_t)n, sizeof(uint64_t));
    m->wrank_glob = xcalloc((size_t)n, sizeof(int));
    m->wrank_bytes = xcalloc((size_t)n, sizeof(int64_t));
    for (int r = 0, w = 0; r < m->nt; r++) {
        int x = m->by_rank[r];
        if (x & 1) continue;
        m->wrank_glob[w] = r;
        m->wrank_bytes[w] = m->bytes[x];
        m->wword[x >> 1] = w >> 6;
        m->wbit[x >> 1] = m->bytes[x] > 0 ? 1ull << (w & 63) : 0;
        w++;
    }
    m->aempty = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++)
        if (m->bytes[2 * i + 1] == 0) m->aempty[m->n_aempty++] = 2 * i + 1;
    for (int b = 0, w = 0; b <= 64; b++) { /* where a demotion's search for a size starts and ends */
        while (b < 64 && w < n && (uint64_t)m->wrank_bytes[w] < (1ull << b)) w++;
        m->wrank_pow2[b] = b < 64 ? w : n;
    }
    /* read lists: the weights, then the inputs (as pl_node_time adds them; a graph input from map[nt]) */
    m->xoff = xcalloc((size_t)n + 1, sizeof(int));
    m->xf = xcalloc((size_t)n + (size_t)m->in_off[n], sizeof(pl_xfer));
    m->out_bytes = xcalloc((size_t)n, sizeof(double));
    int q = 0;
    for (int i = 0; i < n; i++) {
        m->xoff[i] = q;
        if (m->w_read[i] > 0) m->xf[q++] = (pl_xfer){(double)m->w_read[i], 2 * i};
        for (int p = m->in_off[i]; p < m->in_off[i + 1]; p++)
            m->xf[q++] = (pl_xfer){(double)m->in_bytes[p], m->in_t[p] < 0 ? m->nt : m->in_t[p]};
        m->out_bytes[i] = (double)m->bytes[2 * i + 1];
    }
    m->xoff[n] = q;
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
    free(cnt);
    /* rank order */
    m->by_rank = xcalloc((size_t)nt, sizeof(int));
    m->rank_of = xcalloc((size_t)nt, sizeof(int));
    for (int t = 0; t < nt; t++) m->by_rank[t] = t;
    sort_tensors(m->bytes, m->by_rank, nt);
    for (int r = 0; r < nt; r++) m->rank_of[m->by_rank[r]] = r;
    m->total_bytes = 0;
    for (int t = 0; t < nt; t++) m->total_bytes += m->bytes[t];
    eval_tables(m);
    /* the backing store must hold everything */
    uint8_t *zero = xcalloc((size_t)nt, 1);
    pl_scratch *s = pl_scratch_new(m);
    pl_result r;
    pl_occupancy_of(m, zero, s, &r);
    pl_scratch_free(s);
    free(zero);
    if (r.peak[0] > hw->mem[0].capacity) {
        hw_fail(err, HW_E_BAD_CONFIG,
                "hw.memories[0].capacity_bytes: workload '%s' needs %lld bytes at its peak with every tensor in %s, "
                "which holds %lld",
                m->g.name, (long long)r.peak[0], hw->mem[0].name, (long long)hw->mem[0].capacity);
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
