/* mm_game.c - the MMapGame engine (Appendix A). See mmap.h.
 *
 * State is kept in compact per-buffer / per-step arrays plus an undo log (old supply values,
 * allocation pieces, old tensor/group bookkeeping), so any earlier state is reached by undoing
 * steps, and any other state by undoing to the common prefix and replaying (mm_game_goto).
 * CMEM occupancy is a segment tree over logical time whose nodes hold granule bitmasks:
 * `cover` = granules allocated over the node's whole time range, `agg` = cover OR children.
 * Query of the occupied granules over [s,e] and allocation of a rectangle are O(log T) nodes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmap.h"

const char *const mm_action_names[MM_NACT] = {"Copy", "NoCopy", "Drop"};

static void *xcalloc(size_t n, size_t s) {
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p) abort();
    return p;
}

/* ---------------- bit helpers ---------------- */
static inline void range_words(int32_t o, int32_t n, int32_t *w0, int32_t *w1) {
    *w0 = o >> 6;
    *w1 = ((o + n - 1) >> 6) + 1;
}

static void make_bits(uint64_t *m, int32_t o, int32_t n) {
    int32_t w0, w1;
    range_words(o, n, &w0, &w1);
    for (int32_t w = w0; w < w1; w++) {
        int32_t lo = w * 64, hi = lo + 64;
        int32_t a = o > lo ? o : lo, b = o + n < hi ? o + n : hi;
        uint64_t bits;
        if (b - a == 64) bits = ~0ULL;
        else bits = ((1ULL << (b - a)) - 1) << (a - lo);
        m[w] = bits;
    }
}

static bool bits_free(const uint64_t *m, int32_t o, int32_t n) {
    int32_t w0, w1;
    range_words(o, n, &w0, &w1);
    uint64_t tmp[MM_MAX_GRANULES / 64];
    make_bits(tmp, o, n);
    for (int32_t w = w0; w < w1; w++)
        if (m[w] & tmp[w]) return false;
    return true;
}

static int32_t next_bit(const uint64_t *m, int32_t words, int32_t from, int zero) {
    int32_t w = from >> 6;
    if (w >= words) return -1;
    uint64_t x = (zero ? ~m[w] : m[w]) & (~0ULL << (from & 63));
    while (!x) {
        if (++w >= words) return -1;
        x = zero ? ~m[w] : m[w];
    }
    return w * 64 + __builtin_ctzll(x);
}

/* Lowest offset with n free granules in m (bits >= G count as occupied). */
static int32_t lowest_fit(const uint64_t *m, int32_t words, int32_t G, int32_t n) {
    int32_t pos = 0;
    while (pos + n <= G) {
        int32_t z = next_bit(m, words, pos, 1);
        if (z < 0 || z + n > G) return -1;
        int32_t o = next_bit(m, words, z, 0);
        if (o < 0 || o > G) o = G;
        if (o - z >= n) return z;
        pos = o;
    }
    return -1;
}

/* ---------------- segment tree ---------------- */
#define COVER(g, nd) ((g)->cover + (size_t)(nd) * (size_t)(g)->words)
#define AGG(g, nd) ((g)->agg + (size_t)(nd) * (size_t)(g)->words)

static void seg_query(const mm_game *g, int32_t nd, int32_t nl, int32_t nr, int32_t l, int32_t r, uint64_t *acc,
                      int32_t w0, int32_t w1) {
    if (r < nl || nr < l) return;
    if (l <= nl && nr <= r) {
        const uint64_t *a = AGG(g, nd);
        for (int32_t w = w0; w < w1; w++) acc[w] |= a[w];
        return;
    }
    const uint64_t *c = COVER(g, nd);
    for (int32_t w = w0; w < w1; w++) acc[w] |= c[w];
    int32_t mid = (nl + nr) >> 1;
    seg_query(g, 2 * nd, nl, mid, l, r, acc, w0, w1);
    seg_query(g, 2 * nd + 1, mid + 1, nr, l, r, acc, w0, w1);
}

static void seg_pull(mm_game *g, int32_t nd, int32_t w0, int32_t w1) {
    uint64_t *a = AGG(g, nd);
    const uint64_t *c = COVER(g, nd);
    if (nd >= g->P) {
        for (int32_t w = w0; w < w1; w++) a[w] = c[w];
    } else {
        const uint64_t *x = AGG(g, 2 * nd), *y = AGG(g, 2 * nd + 1);
        for (int32_t w = w0; w < w1; w++) a[w] = c[w] | x[w] | y[w];
    }
}

static void seg_update(mm_game *g, int32_t nd, int32_t nl, int32_t nr, int32_t l, int32_t r, const uint64_t *bits,
                       int32_t w0, int32_t w1, int set) {
    if (r < nl || nr < l) return;
    if (l <= nl && nr <= r) {
        uint64_t *c = COVER(g, nd);
        if (set)
            for (int32_t w = w0; w < w1; w++) c[w] |= bits[w];
        else
            for (int32_t w = w0; w < w1; w++) c[w] &= ~bits[w];
        seg_pull(g, nd, w0, w1);
        return;
    }
    int32_t mid = (nl + nr) >> 1;
    seg_update(g, 2 * nd, nl, mid, l, r, bits, w0, w1, set);
    seg_update(g, 2 * nd + 1, mid + 1, nr, l, r, bits, w0, w1, set);
    seg_pull(g, nd, w0, w1);
}

void mm_game_occupancy(const mm_game *g, int32_t s, int32_t e, uint64_t *out) {
    memset(out, 0, sizeof(uint64_t) * (size_t)g->words);
    if (s < 0) s = 0;
    if (e >= g->p->T) e = g->p->T - 1;
    if (s > e) return;
    seg_query(g, 1, 0, g->P - 1, s, e, out, 0, g->words);
}

static void alloc_piece(mm_game *g, const mm_piece *pc, int set) {
    int32_t w0, w1;
    range_words(pc->off, pc->n, &w0, &w1);
    make_bits(g->mask2, pc->off, pc->n);
    seg_update(g, 1, 0, g->P - 1, pc->s, pc->e, g->mask2, w0, w1, set);
}

/* ---------------- setup ---------------- */
mm_game *mm_game_new(const mm_problem *p) {
    mm_game *g = xcalloc(1, sizeof *g);
    g->p = p;
    g->words = (p->G + 63) / 64;
    size_t nb = (size_t)p->nbuf, T = (size_t)p->T;
    g->act = xcalloc(nb, 1);
    g->off = xcalloc(nb, sizeof(int32_t));
    g->is = xcalloc(nb, sizeof(int32_t));
    g->ie = xcalloc(nb, sizeof(int32_t));
    g->cs = xcalloc(nb, sizeof(int32_t));
    g->ce = xcalloc(nb, sizeof(int32_t));
    g->reward = xcalloc(nb, sizeof(double));
    g->retp = xcalloc(nb + 1, sizeof(double));
    g->rec = xcalloc(nb, sizeof(mm_rec));
    g->W = xcalloc(T, sizeof(double));
    g->edge = xcalloc(T, sizeof(int32_t));
    g->imask = xcalloc(T, 1);
    g->tensor_end = xcalloc((size_t)p->ntensor, sizeof(int32_t));
    g->tensor_off = xcalloc((size_t)p->ntensor, sizeof(int32_t));
    g->group_off = xcalloc((size_t)p->nalias, sizeof(int32_t));
    g->group_state = xcalloc((size_t)p->nalias, 1);
    g->P = 1;
    while (g->P < p->T) g->P <<= 1;
    g->cover = xcalloc((size_t)(2 * g->P) * (size_t)g->words, sizeof(uint64_t));
    g->agg = xcalloc((size_t)(2 * g->P) * (size_t)g->words, sizeof(uint64_t));
    g->mask = xcalloc((size_t)g->words, sizeof(uint64_t));
    g->mask2 = xcalloc((size_t)g->words, sizeof(uint64_t));
    g->scratch = xcalloc((size_t)p->max_group + 2, sizeof(mm_piece));
    g->wlog_cap = 1024;
    g->wlog_t = xcalloc(g->wlog_cap, sizeof(int32_t));
    g->wlog_v = xcalloc(g->wlog_cap, sizeof(double));
    g->plog_cap = 1024;
    g->plog = xcalloc(g->plog_cap, sizeof(mm_piece));
    mm_game_reset(g);
    return g;
}

size_t mm_game_bytes(const mm_game *g) {
    const mm_problem *p = g->p;
    size_t nb = (size_t)p->nbuf, T = (size_t)p->T, w = (size_t)g->words;
    return sizeof *g + nb * (1 + 5 * sizeof(int32_t) + 2 * sizeof(double) + sizeof(mm_rec)) + sizeof(double) +
           T * (sizeof(double) + sizeof(int32_t) + 1) + (size_t)p->ntensor * 2 * sizeof(int32_t) +
           (size_t)p->nalias * (sizeof(int32_t) + 1) + 2 * (2 * (size_t)g->P) * w * sizeof(uint64_t) +
           2 * w * sizeof(uint64_t) + ((size_t)p->max_group + 2) * sizeof(mm_piece) +
           (size_t)g->wlog_cap * (sizeof(int32_t) + sizeof(double)) + (size_t)g->plog_cap * sizeof(mm_piece) +
           24 * 16; /* the allocator's header per block */
}

void mm_game_free(mm_game *g) {
    if (!g) return;
    free(g->act); free(g->off); free(g->is); free(g->ie); free(g->cs); free(g->ce);
    free(g->reward); free(g->retp); free(g->rec); free(g->W); free(g->edge); free(g->imask);
    free(g->tensor_end); free(g->tensor_off); free(g->group_off); free(g->group_state);
    free(g->cover); free(g->agg); free(g->mask); free(g->mask2); free(g->scratch);
    free(g->wlog_t); free(g->wlog_v); free(g->plog);
    free(g);
}

static void compute_options(mm_game *g);

void mm_game_reset(mm_game *g) {
    const mm_problem *p = g->p;
    g->t = 0;
    g->lost = g->done = false;
    memset(g->act, MM_NONE, (size_t)p->nbuf);
    for (int32_t i = 0; i < p->nbuf; i++) {
        g->off[i] = -1;
        g->is[i] = 1;
        g->ie[i] = 0;
        g->cs[i] = 1;
        g->ce[i] = 0;
        g->reward[i] = 0;
    }
    g->retp[0] = 0;
    for (int32_t t = 0; t < p->T; t++) {
        g->W[t] = p->ins[t].supply;
        g->edge[t] = 0;
        g->imask[t] = 0;
    }
    for (int32_t i = 0; i < p->ntensor; i++) {
        g->tensor_end[i] = -1;
        g->tensor_off[i] = -1;
    }
    for (int32_t i = 0; i < p->nalias; i++) {
        g->group_off[i] = -1;
        g->group_state[i] = 0;
    }
    g->open_cmem = 0;
    memset(g->cover, 0, sizeof(uint64_t) * (size_t)(2 * g->P) * (size_t)g->words);
    memset(g->agg, 0, sizeof(uint64_t) * (size_t)(2 * g->P) * (size_t)g->words);
    g->wlog_n = g->plog_n = 0;
    g->ncopy = g->nnocopy = g->ndrop = 0;
    compute_options(g);
}

/* ---------------- options ---------------- */
static int32_t group_size(const mm_problem *p, int32_t a) { return p->gstart[a + 1] - p->gstart[a]; }

/* Pieces of [s,e] not already covered by CMEM members of b's alias group (same offset, same
 * size by validation, so those cells are this group's own memory). */
static int32_t group_pieces(mm_game *g, int32_t b, int32_t s, int32_t e) {
    const mm_problem *p = g->p;
    const mm_buffer *B = &p->buf[b];
    mm_piece *pc = g->scratch;
    int32_t n = 0;
    pc[n++] = (mm_piece){s, e, 0, 0};
    const int32_t *mem = p->gmem + p->gstart[B->alias];
    for (int32_t k = 0; k < B->group_pos && n > 0; k++) {
        int32_t m = mem[k];
        if (g->act[m] == MM_DROP || g->act[m] == MM_NONE || g->is[m] > g->ie[m]) continue;
        int32_t a = g->is[m], z = g->ie[m];
        int32_t nn = n;
        for (int32_t i = 0; i < nn; i++) {
            mm_piece q = pc[i];
            if (z < q.s || a > q.e) continue;
            /* remove [a,z] from q */
            pc[i].s = 1; pc[i].e = 0; /* mark empty */
            if (q.s < a) pc[n++] = (mm_piece){q.s, a - 1, 0, 0};
            if (z < q.e) pc[n++] = (mm_piece){z + 1, q.e, 0, 0};
        }
        int32_t j = 0;
        for (int32_t i = 0; i < n; i++)
            if (pc[i].s <= pc[i].e) pc[j++] = pc[i];
        n = j;
    }
    return n;
}

/* Chooses the offset for b over I = [s,e] (Appendix A: lowest free offset over the whole
 * interval respecting Eq. 4). Returns granule offset or -1. */
static int32_t choose_offset(mm_game *g, int32_t b, int32_t s, int32_t e) {
    const mm_problem *p = g->p;
    const mm_buffer *B = &p->buf[b];
    int32_t n = B->ngran;
    int32_t goff = g->group_off[B->alias];
    if (goff >= 0) {
        if (goff + n > p->G) return -1;
        int32_t np = group_pieces(g, b, s, e);
        int32_t w0, w1;
        range_words(goff, n, &w0, &w1);
        for (int32_t i = 0; i < np; i++) {
            memset(g->mask + w0, 0, sizeof(uint64_t) * (size_t)(w1 - w0));
            seg_query(g, 1, 0, g->P - 1, g->scratch[i].s, g->scratch[i].e, g->mask, w0, w1);
            if (!bits_free(g->mask, goff, n)) return -1;
        }
        return goff;
    }
    memset(g->mask, 0, sizeof(uint64_t) * (size_t)g->words);
    seg_query(g, 1, 0, g->P - 1, s, e, g->mask, 0, g->words);
    return lowest_fit(g->mask, g->words, p->G, n);
}

static void compute_options(mm_game *g) {
    const mm_problem *p = g->p;
    for (int a = 0; a < MM_NACT; a++) g->opt[a] = (mm_option){false, 1, 0, 1, 0, -1};
    if (g->done || g->t >= p->nbuf) return;
    int32_t b = g->t;
    const mm_buffer *B = &p->buf[b];
    int32_t tt = B->time;
    int8_t gs = g->group_state[B->alias];
    /* Drop: illegal when it would split an alias group already in CMEM */
    g->opt[MM_DROP].legal = gs != 1;
    if (gs == 2) return; /* group in HBM: Copy / NoCopy would split it */
    /* Copy: latest s (input) / earliest e (output) satisfying Eq. 5 and Eq. 6 */
    {
        mm_option *o = &g->opt[MM_COPY];
        bool ok = true;
        double sum = 0;
        if (!B->is_output) {
            int32_t lb = p->prefetch_after_def ? B->lr_start : 0;
            if (lb < 0) lb = 0;
            int32_t s = tt;
            while (sum < B->demand) {
                s--;
                if (s < lb || (s < tt - 1 && g->edge[s] > 0)) { ok = false; break; }
                sum += g->W[s];
            }
            if (ok) { o->s = s; o->e = tt; o->cs = s; o->ce = tt - 1; }
        } else {
            int32_t e = tt;
            while (sum < B->demand) {
                e++;
                if (e >= p->T || (e > tt + 1 && g->edge[e - 1] > 0)) { ok = false; break; }
                sum += g->W[e];
            }
            if (ok) { o->s = tt; o->e = e; o->cs = tt + 1; o->ce = e; }
        }
        if (ok) {
            o->off = choose_offset(g, b, o->s, o->e);
            o->legal = o->off >= 0;
        }
    }
    /* NoCopy */
    {
        mm_option *o = &g->opt[MM_NOCOPY];
        if (B->is_output) {
            o->s = B->lr_start;
            o->e = B->lr_end;
            o->off = choose_offset(g, b, o->s, o->e);
            o->legal = o->off >= 0;
        } else {
            int32_t prev = g->tensor_end[B->tensor];
            if (prev >= 0) {
                if (prev >= tt) {
                    /* the tensor already sits in CMEM at target_time: empty new interval */
                    int32_t toff = g->tensor_off[B->tensor];
                    int32_t goff = g->group_off[B->alias];
                    o->s = tt + 1;
                    o->e = tt;
                    o->off = toff;
                    o->legal = goff < 0 || goff == toff;
                } else {
                    o->s = prev + 1;
                    o->e = tt;
                    o->off = choose_offset(g, b, o->s, o->e);
                    o->legal = o->off >= 0;
                }
            }
        }
    }
}

bool mm_game_legal(const mm_game *g, int a) {
    if (a < 0 || a >= MM_NACT || g->done) return false;
    return g->opt[a].legal;
}

int mm_game_nlegal(const mm_game *g) {
    int n = 0;
    for (int a = 0; a < MM_NACT; a++) n += mm_game_legal(g, a);
    return n;
}

double mm_game_benefit(const mm_game *g, int32_t b) {
    const mm_buffer *B = &g->p->buf[b];
    if (B->var_bit < 0) return 0;
    const mm_instr *I = &g->p->ins[B->time];
    unsigned m = g->imask[B->time];
    return I->lat[m] - I->lat[m | (1u << B->var_bit)];
}

double mm_game_return(const mm_game *g) { return g->retp[g->t]; }

bool mm_game_backup_safe(const mm_game *g) { return g->open_cmem == 0; }

double mm_game_latency(const mm_game *g) {
    double L = 0;
    for (int32_t t = 0; t < g->p->T; t++) L += g->p->ins[t].lat[g->imask[t]];
    return L;
}

/* ---------------- step / undo ---------------- */
static void wlog_push(mm_game *g, int32_t t, double v) {
    if (g->wlog_n == g->wlog_cap) {
        g->wlog_cap *= 2;
        g->wlog_t = realloc(g->wlog_t, g->wlog_cap * sizeof(int32_t));
        g->wlog_v = realloc(g->wlog_v, g->wlog_cap * sizeof(double));
        if (!g->wlog_t || !g->wlog_v) abort();
    }
    g->wlog_t[g->wlog_n] = t;
    g->wlog_v[g->wlog_n++] = v;
}

static void plog_push(mm_game *g, mm_piece pc) {
    if (g->plog_n == g->plog_cap) {
        g->plog_cap *= 2;
        g->plog = realloc(g->plog, g->plog_cap * sizeof(mm_piece));
        if (!g->plog) abort();
    }
    g->plog[g->plog_n++] = pc;
}

static void open_track(mm_game *g, int32_t b, int dir) {
    const mm_problem *p = g->p;
    const mm_buffer *B = &p->buf[b];
    int32_t sz = group_size(p, B->alias);
    if (sz <= 1 || g->group_state[B->alias] != 1) return;
    if (B->group_pos == 0) g->open_cmem += dir;
    if (B->group_pos == sz - 1) g->open_cmem -= dir;
}

double mm_game_step(mm_game *g, int a) {
    const mm_problem *p = g->p;
    int32_t b = g->t;
    const mm_buffer *B = &p->buf[b];
    mm_rec *r = &g->rec[b];
    r->old_tensor_end = g->tensor_end[B->tensor];
    r->old_tensor_off = g->tensor_off[B->tensor];
    r->old_group_off = g->group_off[B->alias];
    r->old_group_state = g->group_state[B->alias];
    r->old_imask = g->imask[B->time];
    r->wlog = g->wlog_n;
    r->plog = g->plog_n;
    double rew = 0;
    const mm_option *o = &g->opt[a];
    g->act[b] = (uint8_t)a;
    if (a == MM_DROP) {
        if (g->group_state[B->alias] == 0) g->group_state[B->alias] = 2;
        g->ndrop++;
    } else {
        rew = mm_game_benefit(g, b);
        g->off[b] = o->off;
        g->is[b] = o->s;
        g->ie[b] = o->e;
        if (o->s <= o->e) {
            int32_t np = g->group_off[B->alias] >= 0 ? group_pieces(g, b, o->s, o->e) : 1;
            if (g->group_off[B->alias] < 0) g->scratch[0] = (mm_piece){o->s, o->e, 0, 0};
            for (int32_t i = 0; i < np; i++) {
                mm_piece pc = g->scratch[i];
                pc.off = o->off;
                pc.n = B->ngran;
                alloc_piece(g, &pc, 1);
                plog_push(g, pc);
            }
            if (o->e > g->tensor_end[B->tensor]) {
                g->tensor_end[B->tensor] = o->e;
                g->tensor_off[B->tensor] = o->off;
            }
        }
        if (a == MM_COPY) {
            g->cs[b] = o->cs;
            g->ce[b] = o->ce;
            double rem = B->demand;
            if (!B->is_output) {
                for (int32_t t = o->ce; t >= o->cs && rem > 0; t--) {
                    double u = g->W[t] < rem ? g->W[t] : rem;
                    wlog_push(g, t, g->W[t]);
                    g->W[t] -= u;
                    rem -= u;
                }
            } else {
                for (int32_t t = o->cs; t <= o->ce && rem > 0; t++) {
                    double u = g->W[t] < rem ? g->W[t] : rem;
                    wlog_push(g, t, g->W[t]);
                    g->W[t] -= u;
                    rem -= u;
                }
            }
            for (int32_t t = o->cs; t < o->ce; t++) g->edge[t]++;
            g->ncopy++;
        } else {
            g->nnocopy++;
        }
        if (g->group_state[B->alias] == 0) {
            g->group_state[B->alias] = 1;
            g->group_off[B->alias] = o->off;
        }
        if (B->var_bit >= 0) g->imask[B->time] |= (uint8_t)(1u << B->var_bit);
    }
    open_track(g, b, +1);
    g->t++;
    if (g->t >= p->nbuf) {
        g->done = true;
        compute_options(g);
    } else {
        compute_options(g);
        if (mm_game_nlegal(g) == 0) {
            /* infeasible state: the game is lost and the return drops to 0 */
            g->lost = true;
            g->done = true;
            rew = -g->retp[b];
        }
    }
    g->reward[b] = rew;
    g->retp[b + 1] = g->retp[b] + rew;
    if (g->lost) g->retp[b + 1] = 0;
    return rew;
}

/* Undoes the last step without recomputing the options: the options are a pure function of the
 * state, so a run of undos (mm_game_goto's rewind) computes them once at its end. */
static void undo_raw(mm_game *g) {
    const mm_problem *p = g->p;
    int32_t b = g->t - 1;
    const mm_buffer *B = &p->buf[b];
    mm_rec *r = &g->rec[b];
    open_track(g, b, -1);
    int a = g->act[b];
    if (a == MM_COPY) {
        for (int32_t t = g->cs[b]; t < g->ce[b]; t++) g->edge[t]--;
        g->ncopy--;
    } else if (a == MM_NOCOPY) {
        g->nnocopy--;
    } else {
        g->ndrop--;
    }
    while (g->wlog_n > r->wlog) {
        g->wlog_n--;
        g->W[g->wlog_t[g->wlog_n]] = g->wlog_v[g->wlog_n];
    }
    while (g->plog_n > r->plog) {
        g->plog_n--;
        alloc_piece(g, &g->plog[g->plog_n], 0);
    }
    g->tensor_end[B->tensor] = r->old_tensor_end;
    g->tensor_off[B->tensor] = r->old_tensor_off;
    g->group_off[B->alias] = r->old_group_off;
    g->group_state[B->alias] = r->old_group_state;
    g->imask[B->time] = r->old_imask;
    g->act[b] = MM_NONE;
    g->off[b] = -1;
    g->is[b] = 1;
    g->ie[b] = 0;
    g->cs[b] = 1;
    g->ce[b] = 0;
    g->reward[b] = 0;
    g->t = b;
    g->done = g->lost = false;
}

void mm_game_undo(mm_game *g) {
    if (g->t <= 0) return;
    undo_raw(g);
    compute_options(g);
}

int mm_game_goto(mm_game *g, const uint8_t *acts, int32_t n) {
    int32_t k = 0, m = g->t < n ? g->t : n;
    while (k < m && g->act[k] == acts[k]) k++;
    if (g->t > k) {
        while (g->t > k) undo_raw(g);
        compute_options(g);
    }
    for (int32_t i = k; i < n; i++) {
        if (!mm_game_legal(g, acts[i])) return -1;
        mm_game_step(g, acts[i]);
    }
    return 0;
}
