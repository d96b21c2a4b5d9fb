/* placement_eval.c - the evaluation of a mapping (placement.h): the compiler rectification, the
 * per-node latency and the occupancy of the rectified map, on the tables pl_model_build made.
 *
 * One step of the env evaluates a whole new mapping (the action is every tensor's memory), so
 * nothing is carried over from the previous step; instead every pass is linear in the nodes:
 *  - one pass over the nodes loads each channel (memory, bank) with its resident weights (a
 *    bitset over weight ranks and their bytes) and its activations as a difference array over the
 *    steps (+bytes at birth, -bytes after the last use), kept only at the steps where a tensor of
 *    its bank is born (a twelfth of the steps for a bank of twelve: placement.h);
 *  - the rectification scans each channel's steps with a running sum of that array (a channel
 *    whose weights and activations all fit at once is not scanned); a demotion moves the tensor's
 *    bits / differences / byte sums to the slower memory's channel, so every channel stays exact
 *    for the memories rectified after it and for the occupancy;
 *  - the occupancy is then one running maximum per channel, and the latency one pass over the
 *    nodes' read lists.
 * tests/c/placement/test_placement_rectify.c checks the map against a literal bank-by-bank oracle,
 * and test_placement_eval.c the latency and occupancy against per-node and per-step recounts. */
#include <stdlib.h>
#include <string.h>

#include "placement.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

pl_scratch *pl_scratch_new(const pl_model *m) {
    pl_scratch *s = xcalloc(1, sizeof *s);
    s->map = xcalloc((size_t)m->nt + 1, 1); /* map[nt] stays 0: where a graph input lives */
    s->wbits = xcalloc((size_t)m->nch * (size_t)m->nww, sizeof(uint64_t));
    s->delta = xcalloc((size_t)m->doff[m->nch], sizeof(int64_t));
    s->node_time = xcalloc((size_t)m->n, sizeof(double));
    return s;
}

void pl_scratch_free(pl_scratch *s) {
    if (!s) return;
    free(s->map);
    free(s->wbits);
    free(s->delta);
    free(s->node_time);
    free(s);
}

/* a rectification: what it works on, and what it leaves besides the map and the scratch's channels */
typedef struct {
    const pl_model *m;
    const uint8_t *map;                    /* the agent's map */
    uint8_t *out;                          /* the map being rectified */
    pl_scratch *s;
    int mem, c;                            /* the memory and channel being scanned */
    int64_t W[PL_MAX_MEMS * PL_MAX_BANKS]; /* resident weight bytes per channel (the first nch) */
    int64_t A[PL_MAX_MEMS * PL_MAX_BANKS]; /* activation bytes per channel, over all steps */
    int na[PL_MAX_MEMS];                   /* non-empty activations per memory */
    int64_t moved;                         /* bytes of the tensors moved from the agent's memory */
    int nmov;
} pl_state;

/* the channel of node i's tensors in memory k (`one`: every memory has one bank) */
static inline int chan(const pl_model *m, int k, int i, const int one) {
    return one ? k : m->chan_of[(size_t)k * ((size_t)m->n + 1) + (size_t)i];
}

/* the delta entries (placement.h) of activation i's birth and death in memory k */
static inline size_t birth_at(const pl_model *m, int k, int i, const int one) {
    return one ? (size_t)k * ((size_t)m->n + 1) + (size_t)i : (size_t)m->bpos[(size_t)k * (size_t)m->n + (size_t)i];
}
static inline size_t death_at(const pl_model *m, int k, int i, const int one) {
    return one ? (size_t)k * ((size_t)m->n + 1) + (size_t)m->last_use[i] + 1 : (size_t)m->dpos[(size_t)k * (size_t)m->n + (size_t)i];
}

/* Loads every channel from the map `out` (see the file comment). The channels' rows are reached
 * through pointer tables and the sums kept in locals: the loop's few registers stay its own. */
static inline __attribute__((always_inline)) void load(const pl_model *m, const uint8_t *out, pl_scratch *s, pl_state *st, const int one) {
    enum { NCH = PL_MAX_MEMS * PL_MAX_BANKS };
    const int n = m->n, nww = m->nww, C = m->nch;
    uint64_t *wp[NCH];
    int64_t W[NCH], A[NCH], *const delta = s->delta;
    int na[PL_MAX_MEMS] = {0};
    memset(s->wbits, 0, sizeof *s->wbits * (size_t)C * (size_t)nww);
    memset(delta, 0, sizeof *delta * (size_t)m->doff[C]);
    for (int c = 0; c < C; c++) {
        wp[c] = s->wbits + (size_t)c * (size_t)nww;
        W[c] = A[c] = 0;
    }
    const int *wword = m->wword;
    const uint64_t *wbit = m->wbit;
    const int64_t *bytes = m->bytes;
    for (int i = 0; i < n; i++) {
        const int kw = out[2 * i], ka = out[2 * i + 1];
        const int cw = chan(m, kw, i, one), ca = chan(m, ka, i, one);
        wp[cw][wword[i]] |= wbit[i];
        W[cw] += bytes[2 * i];
        const int64_t b = bytes[2 * i + 1];
        delta[birth_at(m, ka, i, one)] += b;
        delta[death_at(m, ka, i, one)] -= b;
        A[ca] += b;
        na[ka]++;
    }
    for (int q = 0; q < m->n_aempty; q++) na[out[m->aempty[q]]]--; /* non-empty ones only */
    memcpy(st->W, W, sizeof *W * (size_t)C);
    memcpy(st->A, A, sizeof *A * (size_t)C);
    memcpy(st->na, na, sizeof na);
    st->moved = 0;
    st->nmov = 0;
}

/* One demotion in channel st->c of memory st->mem at step t, whose overflow is `over` > 0 bytes:
 * the smallest tensor of the channel resident at t whose size covers the overflow, or the largest
 * one if none does ((bytes, id) rank order breaks ties). The tensor moves to memory mem - 1 in
 * out and in the channels. Returns its bytes (> 0: empty tensors are never demoted), or -1 if the
 * channel holds nothing (cannot happen). Not inlined: the scan that calls it keeps its few
 * variables in registers. */
static __attribute__((noinline)) int64_t demote(pl_state *st, int t, int64_t over, const int one) {
    const pl_model *m = st->m;
    const uint8_t *map = st->map;
    uint8_t *out = st->out;
    pl_scratch *s = st->s;
    const int mem = st->mem, c = st->c;
    const int nww = m->nww;
    uint64_t *bits = s->wbits + (size_t)c * (size_t)nww;
    /* weights: the first weight rank whose size covers the overflow (between the first of at least
     * 2^b and the first of at least 2^(b+1) bytes, 2^b <= over < 2^(b+1)), then the lowest resident
     * one from there, or else the highest resident one */
    const int lb = 63 - __builtin_clzll((uint64_t)over);
    int lo = m->wrank_pow2[lb], hi = m->wrank_pow2[lb + 1];
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (m->wrank_bytes[mid] >= over) hi = mid;
        else lo = mid + 1;
    }
    int wfit = -1, wmax = -1;
    for (int k = lo >> 6; k < nww; k++) {
        uint64_t v = bits[k];
        if (k == lo >> 6 && (lo & 63)) v &= ~0ull << (lo & 63);
        if (v) {
            wfit = m->wrank_glob[(k << 6) + __builtin_ctzll(v)];
            break;
        }
    }
    if (wfit < 0)
        for (int k = nww - 1; k >= 0; k--)
            if (bits[k]) {
                wmax = m->wrank_glob[(k << 6) + 63 - __builtin_clzll(bits[k])];
                break;
            }
    /* activations of the channel alive at t */
    int afit = -1, amax = -1;
    for (int p = m->alive_off[t]; p < m->alive_off[t + 1]; p++) {
        int x = m->alive[p];
        if (out[x] != mem || m->bytes[x] == 0 || (!one && chan(m, mem, x >> 1, 0) != c)) continue;
        int r = m->rank_of[x];
        if (m->bytes[x] >= over) {
            if (afit < 0 || r < afit) afit = r;
        } else if (r > amax) {
            amax = r;
        }
    }
    int pick;
    if (wfit >= 0 || afit >= 0) pick = wfit < 0 ? afit : afit < 0 ? wfit : (wfit < afit ? wfit : afit);
    else pick = wmax > amax ? wmax : amax;
    if (pick < 0) return -1;
    const int x = m->by_rank[pick], i = x >> 1, c2 = chan(m, mem - 1, i, one);
    const int64_t b = m->bytes[x];
    out[x] = (uint8_t)(mem - 1);
    if ((x & 1) == 0) {
        bits[m->wword[i]] &= ~m->wbit[i];
        s->wbits[(size_t)c2 * (size_t)nww + (size_t)m->wword[i]] |= m->wbit[i];
        st->W[c] -= b;
        st->W[c2] += b;
    } else { /* out of channel c over its whole live range, into c2's */
        int64_t *const d = s->delta;
        d[birth_at(m, mem, i, one)] -= b;
        d[death_at(m, mem, i, one)] += b;
        d[birth_at(m, mem - 1, i, one)] += b;
        d[death_at(m, mem - 1, i, one)] -= b;
        st->A[c] -= b;
        st->A[c2] += b;
        st->na[mem]--;
        st->na[mem - 1]++;
    }
    if (map[x] == mem) { /* its first move (a tensor only moves down, one memory at a time) */
        st->moved += b;
        st->nmov++;
    }
    return b;
}

/* While the channel being scanned overflows at step t (slack < 0), demote one tensor: the slack
 * after (demote gives back the tensor's bytes) */
static inline __attribute__((always_inline)) int64_t settle(pl_state *st, int t, int64_t slack, const int one) {
    while (slack < 0) {
        int64_t b = demote(st, t, -slack, one);
        if (b < 0) break; /* cannot happen: the overflow is made of the channel's tensors */
        slack += b;
    }
    return slack;
}

/* The demotion rule (docs/placement.md "Compiler rectification"): memories from the fastest to
 * memory 1, within a memory each bank (channel) on its own, steps in execution order; while the
 * channel overflows at step t, demote one tensor (demote). out holds map on entry. A channel is
 * scanned at the steps where a tensor of its bank is born (its delta entries, placement.h): its
 * bytes only fall between them, so it can only overflow at one, or at step 0 from its weights
 * alone (demoted there as the step-by-step scan would: no activation of the bank is alive yet). */
static inline __attribute__((always_inline)) void rectify_body(pl_state *st, const int one) {
    const pl_model *m = st->m;
    load(m, st->out, st->s, st, one);
    for (int mem = m->hw.n_mem - 1; mem >= 1; mem--) {
        const int64_t cap = m->hw.mem[mem].capacity;
        const int B = one ? 1 : m->hw.mem[mem].banks;
        for (int c = m->coff[mem]; c < m->coff[mem + 1]; c++) {
            if (st->W[c] + st->A[c] <= cap) continue; /* fits even with every activation alive at once */
            const int64_t *dc = st->s->delta + m->doff[c];
            const int births = m->doff[c + 1] - m->doff[c] - 1, b0 = c - m->coff[mem];
            /* the room the channel's weights leave, less its live activation bytes at step t;
             * a demotion gives back the tensor's bytes either way */
            int64_t slack = cap - st->W[c];
            st->mem = mem;
            st->c = c;
            if (b0 > 0) slack = settle(st, 0, slack, one); /* weights alone, before the bank's first birth */
            for (int j = 0; j < births; j++) slack = settle(st, b0 + j * B, slack - dc[j], one);
        }
    }
}

/* Rectifies map into out (which may be map) and leaves the channels of the result in s. */
static void rectify(const pl_model *m, const uint8_t *map, uint8_t *out, pl_scratch *s, pl_state *st) {
    uint8_t *orig = NULL; /* rectifying in place: the map as given, to count the moves against */
    if (out == map) {
        orig = malloc((size_t)m->nt);
        if (!orig) abort();
        memcpy(orig, map, (size_t)m->nt);
        map = orig;
    } else {
        memcpy(out, map, (size_t)m->nt);
    }
    st->m = m;
    st->map = map;
    st->out = out;
    st->s = s;
    if (m->one_bank) rectify_body(st, 1);
    else rectify_body(st, 0);
    free(orig);
}

int64_t pl_rectify(const pl_model *m, const uint8_t *map, uint8_t *out, pl_scratch *s, int *n_moved) {
    pl_state st;
    rectify(m, map, out, s, &st);
    if (n_moved) *n_moved = st.nmov;
    return st.moved;
}

/* Peak occupancy (of the fullest bank), resident weight bytes and non-empty tensors per memory,
 * from the channels s and st hold. */
static void occupancy(const pl_model *m, const pl_scratch *s, const pl_state *st, pl_result *r) {
    const int nww = m->nww;
    for (int k = 0; k < m->hw.n_mem; k++) {
        int64_t peak = 0, win = 0;
        int nw = 0;
        for (int c = m->coff[k]; c < m->coff[k + 1]; c++) {
            const int64_t *dc = s->delta + m->doff[c];
            const int n = m->doff[c + 1] - m->doff[c] - 1; /* its birth steps (the peak is at one) */
            int64_t a = 0, pa = 0, pb = 0;
            int t = 0;
            for (; t + 2 <= n; t += 2) { /* two steps at a time, a maximum each */
                a += dc[t];
                pa = pa > a ? pa : a;
                a += dc[t + 1];
                pb = pb > a ? pb : a;
            }
            if (t < n) a += dc[t], pa = pa > a ? pa : a;
            pa = pa > pb ? pa : pb;
            if (pa + st->W[c] > peak) peak = pa + st->W[c];
            win += st->W[c];
            for (int w = 0; w < nww; w++) nw += __builtin_popcountll(s->wbits[(size_t)c * (size_t)nww + (size_t)w]);
        }
        r->peak[k] = peak;
        r->weights_in[k] = win;
        r->weight_tensors[k] = nw;
        r->act_tensors[k] = st->na[k];
    }
}

void pl_occupancy_of(const pl_model *m, const uint8_t *map, pl_scratch *s, pl_result *r) {
    pl_state st;
    if (m->one_bank) load(m, map, s, &st, 1);
    else load(m, map, s, &st, 0);
    occupancy(m, s, &st, r);
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

/* Every node's time with one bank per memory, from the read lists (a graph input is read from
 * map[nt], which must be 0: pl_scratch's map): the seconds of memory k add up in t[k] from 0
 * (0 + s is s), and as they only grow, the largest of the final sums is the largest of the
 * running ones (an untouched memory's 0 never wins); so is the largest latency of the memories
 * touched. The same numbers as node_time_one_bank. (Each maximum is written `a > b ? a : b` with
 * a the running one: x86's maxsd.) */
static inline __attribute__((always_inline)) double latency_one_bank_m(const pl_model *m, const uint8_t *map, double *node_time,
                                                                       const int MM) {
    double total = 0;
    const pl_xfer *x = m->xf; /* node i's reads follow node i - 1's */
    for (int i = 0; i < m->n; i++) {
        const pl_xfer *e = m->xf + m->xoff[i + 1];
        double t[PL_MAX_MEMS], tm = 0, lat = 0;
        for (int k = 0; k < MM; k++) t[k] = 0; /* MM >= the memories, a constant: a few stores */
        for (; x < e; x++) { /* the weights, then the inputs */
            const int k = map[x->tensor];
            const double v = t[k] + x->bytes * m->inv_rbw[k];
            t[k] = v;
            tm = tm > v ? tm : v;
            lat = lat > m->lat[k] ? lat : m->lat[k];
        }
        if (m->out_bytes[i] > 0) { /* the output written */
            const int k = map[2 * i + 1];
            const double v = t[k] + m->out_bytes[i] * m->inv_wbw[k];
            tm = tm > v ? tm : v;
            lat = lat > m->lat[k] ? lat : m->lat[k];
        }
        const double ti = (m->t_compute[i] > tm ? m->t_compute[i] : tm) + lat + m->hw.node_overhead;
        node_time[i] = ti;
        total += ti;
    }
    return total;
}

static double latency_one_bank(const pl_model *m, const uint8_t *map, double *node_time) {
    return m->hw.n_mem <= 4 ? latency_one_bank_m(m, map, node_time, 4) : latency_one_bank_m(m, map, node_time, PL_MAX_MEMS);
}

/* Every node's time with banked memories, from the same read lists: the seconds of channel c add
 * up in t[c] from 0 in the order pl_node_time_masked adds them, and t[] is put back to 0 for the
 * channels a node touched; the maxima are taken over the running sums as above. The same numbers
 * as pl_node_time (tests/c/placement/test_placement_eval.c checks every node bit for bit). map[nt]
 * must be 0 (a graph input). */
static double latency_banks(const pl_model *m, const uint8_t *map, double *node_time) {
    double t[PL_MAX_MEMS * PL_MAX_BANKS] = {0}, total = 0;
    const size_t n1 = (size_t)m->n + 1;
    const uint8_t *co = m->chan_of;
    const pl_xfer *x = m->xf;
    for (int i = 0; i < m->n; i++) {
        const pl_xfer *const x0 = x, *const e = m->xf + m->xoff[i + 1];
        double tm = 0, lat = 0;
        for (; x < e; x++) {
            const int k = map[x->tensor], c = co[(size_t)k * n1 + (size_t)(x->tensor >> 1)];
            const double v = t[c] + x->bytes * m->inv_rbw[k];
            t[c] = v;
            tm = tm > v ? tm : v;
            lat = lat > m->lat[k] ? lat : m->lat[k];
        }
        if (m->out_bytes[i] > 0) {
            const int k = map[2 * i + 1], c = co[(size_t)k * n1 + (size_t)i];
            const double v = t[c] + m->out_bytes[i] * m->inv_wbw[k];
            tm = tm > v ? tm : v;
            lat = lat > m->lat[k] ? lat : m->lat[k];
        }
        for (const pl_xfer *y = x0; y < e; y++) t[co[(size_t)map[y->tensor] * n1 + (size_t)(y->tensor >> 1)]] = 0;
        const double ti = (m->t_compute[i] > tm ? m->t_compute[i] : tm) + lat + m->hw.node_overhead;
        node_time[i] = ti;
        total += ti;
    }
    return total;
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
    pl_state st;
    rectify(m, map, s->map, s, &st);
    r->reassigned_bytes = st.moved;
    r->n_reassigned = st.nmov;
    r->eps = m->total_bytes > 0 ? (double)st.moved / (double)m->total_bytes : 0.0;
    r->latency = m->one_bank ? latency_one_bank(m, s->map, s->node_time) : latency_banks(m, s->map, s->node_time);
    occupancy(m, s, &st, r);
    r->rectified = s->map;
}
