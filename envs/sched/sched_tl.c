/* sched_tl.c - Timeloop's access counting, validity and energy/cycle roll-up (sched_tl.h).
 *
 * The loop nest is the concatenation, innermost first, of every storage level's spatial loops
 * (X inside Y) and temporal loops (in the level's permutation). For tensor t the tile of level
 * l is the bounding box of all loops at and below l, projected on t (inputs: (P-1)*stride+R by
 * (Q-1)*stride+S). Timeloop walks the temporal loops above a tile and counts, at every step,
 * the elements of the new tile that were not in the previously visited one; a set difference
 * of two boxes that differ along more than one axis counts the whole tile. Timeloop does not
 * visit every iteration: for each loop it visits iteration 0 and iteration 1 and weights the
 * second by n-1 (temporal extrapolation), so when an outer loop advances the new tile is
 * compared with the tile at iteration 1 of every inner loop. Summed over the visits:
 *   walk = T + sum_j (n_j - 1) * prod_{i outer of j} n_i * delta(shift_j)
 * where shift_j = +stride_j along loop j's dimension minus stride_i along each inner loop i.
 * Spatial fan-outs: children whose deltas coincide (the fanned-out dimension does not move the
 * tensor) are served by one multicast access. Levels that bypass a tensor pass their
 * children's demand up (scaled as Timeloop's tile masking does). Outputs: the first write of
 * each element of a level's partition is not preceded by a read.
 *
 * Speed (the cost core of sched-v0, <= 1 us per table): every count is an integer-valued
 * double, so products of factors are exact in any order; the code skips multiplications by 1,
 * walks each input loop nest in O(1) per loop (a loop moves the input tile along one data axis),
 * tests the MAC fan-out's neighbour differences only against the moves that occur, and keeps
 * every floating-point operation whose result is not an exact integer in its original order,
 * so the numbers are bit-identical to the straightforward formulas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_tl.h"

/* TL_FAST 0 compiles the straightforward formulas only (the general walk for every tensor, no
 * closed forms, no filters or shortcuts): tests/c/sched/tl_reference.c builds this file so to
 * check that the fast paths give bit-identical numbers. */
#ifndef TL_FAST
#define TL_FAST 1
#endif

static const int rel[SCHED_NT][SCHED_NDIM] = {
    /*        B  C  G  K  R  S  P  Q */
    /* I */ {1, 1, 1, 0, 1, 1, 1, 1},
    /* W */ {0, 1, 1, 1, 1, 1, 0, 0},
    /* O */ {1, 0, 1, 1, 0, 0, 1, 1},
};

/* data axis (of the 5 of project()) of each dimension per tensor, -1 = irrelevant; inputs: P
 * and R share axis 3, Q and S axis 4 (P and Q scaled by the stride) */
static const signed char data_axis[SCHED_NT][SCHED_NDIM] = {
    /*        B   C   G   K   R   S   P   Q */
    /* I */ {0, 2, 1, -1, 3, 4, 3, 4},
    /* W */ {-1, 0, 1, 2, 3, 4, -1, -1},
    /* O */ {0, -1, 1, 2, -1, -1, 3, 4},
};

static inline double tile_words(int t, const double *x, double st) {
    if (t == ST_I) return x[SD_B] * x[SD_G] * x[SD_C] * ((x[SD_P] - 1) * st + x[SD_R]) * ((x[SD_Q] - 1) * st + x[SD_S]);
    if (t == ST_W) return x[SD_G] * x[SD_K] * x[SD_C] * x[SD_R] * x[SD_S];
    return x[SD_B] * x[SD_G] * x[SD_K] * x[SD_P] * x[SD_Q];
}

/* round() for every finite double, inline (x86-64 without SSE4.1 calls libm for round) */
static inline double round_exact(double x) {
    if (!TL_FAST) return round(x);
    if (!(fabs(x) < 4503599627370496.0)) return x; /* >= 2^52: already an integer (or NaN/inf) */
    double t = (double)(long long)x, f = x - t;    /* trunc and the exact fraction */
    if (f >= 0.5) return t + 1;
    if (f <= -0.5) return t - 1;
    return copysign(t, x);
}

/* distinct values of a*i + b*j, i < fa, j < fb (a, b > 0) */
static double distinct2(double a, double b, double fa, double fb) {
    if (fa <= 1) return fb;
    if (fb <= 1) return fa;
    long long x = (long long)a, y = (long long)b;
    while (y) {
        long long r = x % y;
        x = y;
        y = r;
    }
    double ap = a / (double)x, bp = b / (double)x;
    double ci = fa - bp > 0 ? fa - bp : 0, cj = fb - ap > 0 ? fb - ap : 0;
    return fa * fb - ci * cj;
}

/* project an operation-space vector on tensor t's data space (5 coordinates) */
static inline void project(int t, const double *x, double st, double *o) {
    if (t == ST_I) {
        o[0] = x[SD_B], o[1] = x[SD_G], o[2] = x[SD_C];
        o[3] = st * x[SD_P] + x[SD_R], o[4] = st * x[SD_Q] + x[SD_S];
        return;
    }
    int n = 0;
    for (int d = 0; d < SCHED_NDIM; d++)
        if (rel[t][d]) o[n++] = x[d];
}

#define TL_MAXLOOP (TL_MAXLV * SCHED_NDIM)

/* shared per-spec geometry */
typedef struct tl_geo {
    double ext[TL_MAXLV][SCHED_NDIM];  /* tile extents (loops at and below the level) */
    double prev[TL_MAXLV][SCHED_NDIM]; /* extents below the level (ext of level-1) */
    double F[TL_MAXLV], FX[TL_MAXLV], FY[TL_MAXLV];
    int nloop, first[TL_MAXLV + 1]; /* walk loops (n >= 2) innermost first; first[l]: first loop of level l */
    int ldim[TL_MAXLOOP];
    double ln[TL_MAXLOOP], lsig[TL_MAXLOOP];
    double temporal, spatial;
    double suf[TL_MAXLOOP + 1]; /* suf[j] = product of the walk loops j.. */
    double coef[TL_MAXLOOP];    /* (n_j - 1) * suf[j + 1]: visits of loop j's second iteration */
    int iax[TL_MAXLOOP];        /* inputs: the data axis each walk loop moves (-1: none) ... */
    double ipv[TL_MAXLOOP];     /* ... and by how much */
} tl_geo;

static void geometry(const tl_spec *s, tl_geo *g) {
    double run[SCHED_NDIM];
    for (int d = 0; d < SCHED_NDIM; d++) run[d] = 1;
    int nloop = 0;
    double temporal = 1, spatial = 1, st = s->stride;
    for (int l = 0; l < s->nl; l++) {
        const tl_level *v = &s->lv[l];
        memcpy(g->prev[l], run, sizeof run);
        int any = 0;
        for (int d = 0; d < SCHED_NDIM; d++) any |= v->sf[d] ^ 1;
        if (!any) {
            g->F[l] = g->FX[l] = g->FY[l] = 1;
        } else {
            double F = 1, FX = 1, FY = 1;
            for (int d = 0; d < SCHED_NDIM; d++) {
                run[d] *= v->sf[d];
                F *= v->sf[d];
                if (v->saxis[d]) FY *= v->sf[d];
                else FX *= v->sf[d];
            }
            g->F[l] = F, g->FX[l] = FX, g->FY[l] = FY;
            spatial *= F;
        }
        g->first[l] = nloop;
        any = 0;
        for (int d = 0; d < SCHED_NDIM; d++) any |= v->tf[d] ^ 1;
        if (any) /* branch-free: every entry is written, the loop counter moves on for n >= 2;
                  * multiplying by 1 changes nothing */
            for (int i = 0; i < SCHED_NDIM; i++) {
                int d = v->tperm[i];
                int n = v->tf[d];
                g->ldim[nloop] = d;
                g->ln[nloop] = n;
                g->lsig[nloop] = run[d];
                /* the input tile's move along its data axis (project() of a one-hot vector) */
                g->iax[nloop] = data_axis[ST_I][d];
                g->ipv[nloop] = (d == SD_P || d == SD_Q) ? st * run[d] : run[d];
                nloop += n >= 2;
                temporal *= n;
                run[d] *= n;
            }
        memcpy(g->ext[l], run, sizeof run);
    }
    g->nloop = nloop;
    g->temporal = temporal;
    g->spatial = spatial;
    g->first[s->nl] = nloop;
    g->suf[nloop] = 1;
    for (int j = nloop - 1; j >= 0; j--) {
        g->coef[j] = (g->ln[j] - 1) * g->suf[j + 1];
        g->suf[j] = g->suf[j + 1] * g->ln[j];
    }
}

/* The part of a tile (data-space extents ext) that is new after a move by D: Timeloop's box
 * difference: nothing when the tile stays, the slab left uncovered when the boxes differ along
 * one axis by less than the extent, the whole tile otherwise (no overlap, or boxes differing
 * along several axes: Timeloop keeps no non-box residue). */
static inline double box_delta(const double *D, const double *ext) {
    int nz = 0, k = -1;
    for (int i = 0; i < 5; i++)
        if (D[i] != 0) nz++, k = i;
    if (nz == 0) return 0;
    double m = fabs(D[k]);
    if (nz > 1 || m >= ext[k]) return 1;
    return m / ext[k];
}

/* Timeloop's reset on stride change (v3 OperationSpace::SaveAndSubtractIfSameStride): a tile's
 * state is the translation of its last move, or none. A move by translation D (identified by
 * id >= 1: equal translations share an id) brings the box difference when the state is none
 * or the same translation, and then the state becomes that translation; any other translation
 * (a zero move after a nonzero one included) brings the whole tile and clears the state. */
#define TL_WALK_STACK 2048 /* memo cells on the stack: (loops + 1) x (translations + 1), 45 loops */

typedef struct walk_ctx {
    int m, nid;
    double n[TL_MAXLOOP];
    double f[TL_MAXLOOP];  /* box difference of each move */
    int id[TL_MAXLOOP];    /* translation id of each move (1..nid) */
    double *memo_sum;      /* [(m + 1) * (nid + 1)]: walk of subnest k entered in state s */
    short *memo_out;       /* the state it leaves, -1 = not computed */
    double sbuf[TL_WALK_STACK];
    short obuf[TL_WALK_STACK];
} walk_ctx;

/* moves of the subnest k.. (outer to inner) entered in state sin: Timeloop visits iteration 0
 * and iteration 1 (weighted n-1) of every loop */
static double walk_rec(walk_ctx *w, int k, int sin, int *sout) {
    if (k == w->m) {
        *sout = sin;
        return 0;
    }
    size_t at = (size_t)k * (size_t)(w->nid + 1) + (size_t)sin;
    if (w->memo_out[at] >= 0) {
        *sout = w->memo_out[at];
        return w->memo_sum[at];
    }
    int s1, s2, s3;
    double sum1 = walk_rec(w, k + 1, sin, &s1);
    double f;
    if (s1 == 0 || s1 == w->id[k]) f = w->f[k], s2 = w->id[k];
    else f = 1, s2 = 0;
    double sum2 = walk_rec(w, k + 1, s2, &s3);
    double sum = sum1 + (w->n[k] - 1) * (f + sum2);
    w->memo_out[at] = (short)s3;
    w->memo_sum[at] = sum;
    *sout = s3;
    return sum;
}

/* the walk of a tile of tensor t (data-space extents ext) over the loops lo.., state by state */
static double walk_states(const tl_geo *g, int t, const double *ext, int lo, double st) {
    walk_ctx w;
    int hi = g->nloop;
    w.m = hi - lo;
    w.nid = 0;
    /* moves in data space: loop j's step (project() of a one-hot vector) minus the inner loops' */
    double R[5] = {0, 0, 0, 0, 0}, D[TL_MAXLOOP][5];
    for (int j = lo; j < hi; j++) {
        int k = hi - 1 - j, d = g->ldim[j], ax = data_axis[t][d]; /* k: outer to inner */
        double v = (t == ST_I && (d == SD_P || d == SD_Q)) ? st * g->lsig[j] : g->lsig[j];
        for (int i = 0; i < 5; i++) {
            double P = i == ax ? v : 0;
            D[k][i] = P - R[i];
            R[i] += P;
        }
        w.n[k] = g->ln[j];
        w.f[k] = box_delta(D[k], ext);
    }
    for (int k = 0; k < w.m; k++) {
        int q = 0;
        while (q < k && !(D[q][0] == D[k][0] && D[q][1] == D[k][1] && D[q][2] == D[k][2] && D[q][3] == D[k][3] &&
                          D[q][4] == D[k][4]))
            q++;
        w.id[k] = q < k ? w.id[q] : ++w.nid;
    }
    size_t cells = (size_t)(w.m + 1) * (size_t)(w.nid + 1);
    w.memo_sum = w.sbuf, w.memo_out = w.obuf;
    if (cells > TL_WALK_STACK) { /* beyond any layer's loop count; only a contrived YAML nest */
        w.memo_sum = malloc(cells * sizeof *w.memo_sum);
        w.memo_out = malloc(cells * sizeof *w.memo_out);
        if (!w.memo_sum || !w.memo_out) abort();
    }
    for (size_t c = 0; c < cells; c++) w.memo_out[c] = -1;
    int sout;
    double sum = walk_rec(&w, 0, 0, &sout);
    if (cells > TL_WALK_STACK) {
        free(w.memo_sum);
        free(w.memo_out);
    }
    return sum;
}

/* Timeloop's walk-delta sum of an input tile (extents e) over the temporal loops lo.. Each
 * loop moves the tile along one data axis; loop j's move is its step minus the steps of the
 * loops inside it (lo..j-1), so it is nonzero along j's axis and every axis an inner loop
 * moved. Two closed forms, where every nonzero move brings the whole tile and every zero move
 * nothing: (a) the innermost loop does not move the tile (a K loop): its zero move always
 * precedes the next nonzero move, whose translation then differs from the state (Timeloop
 * resets: no sliding-window reuse at all); (b) no move is zero or partial (one axis, less than
 * the extent). Otherwise the state machine (walk_states). */
static double walk_input(const tl_geo *g, const double *e, int lo, double st) {
    double T = tile_words(ST_I, e, st);
    int hi = g->nloop;
    if (lo >= hi) return T;
    double ext[5] = {e[SD_B] - 1 + 1, e[SD_G] - 1 + 1, e[SD_C] - 1 + 1, st * (e[SD_P] - 1) + (e[SD_R] - 1) + 1,
                     st * (e[SD_Q] - 1) + (e[SD_S] - 1) + 1};
    if (!TL_FAST) return T * (1 + walk_states(g, ST_I, ext, lo, st));
    int closed = g->iax[lo] < 0; /* (a) */
    double R[5] = {0, 0, 0, 0, 0}, sum = 0;
    int nR = 0; /* axes with R != 0 (steps are positive: R only grows) */
    for (int j = lo; j < hi; j++) {
        int a = g->iax[j], nz, k = -1;
        double m = 0;
        if (a < 0) {
            nz = nR;
        } else {
            double Da = g->ipv[j] - R[a];
            int ra = R[a] != 0;
            nz = nR - ra + (Da != 0);
            if (nz == 1 && Da != 0) k = a, m = fabs(Da);
            R[a] += g->ipv[j];
            nR += !ra && R[a] != 0;
        }
        if (!closed) {
            if (nz == 0) return T * (1 + walk_states(g, ST_I, ext, lo, st));
            if (nz == 1) {
                if (k < 0) /* the one axis an inner loop moved (not j's own) */
                    for (int i = 0; i < 5; i++)
                        if (i != a && R[i] != 0) k = i, m = R[i];
                if (m < ext[k]) return T * (1 + walk_states(g, ST_I, ext, lo, st));
            }
        }
        if (nz) sum += g->coef[j];
    }
    return T * (1 + sum);
}

/* tile l over the temporal loops above it. Weights and outputs never overlap partially (a
 * loop's stride is a multiple of the tile along its dimension), so their walk is the classic
 * stationarity product: the tile times every loop from the innermost relevant one outwards. */
static double walk_sum(const tl_geo *g, int l, int t, double st) {
    if (t == ST_I) return walk_input(g, g->ext[l], g->first[l + 1], st);
    if (!TL_FAST) {
        double one[SCHED_NDIM], ext[5];
        for (int d = 0; d < SCHED_NDIM; d++) one[d] = g->ext[l][d] - 1;
        project(t, one, st, ext);
        for (int i = 0; i < 5; i++) ext[i] += 1;
        return tile_words(t, g->ext[l], st) * (1 + walk_states(g, t, ext, g->first[l + 1], st));
    }
    int j = g->first[l + 1];
    while (j < g->nloop && !rel[t][g->ldim[j]]) j++;
    return tile_words(t, g->ext[l], st) * g->suf[j];
}

/* distinct multicast groups among the children of level l's fan-out, for tensor t */
static double groups(const tl_spec *s, const tl_geo *g, int l, int t) {
    const int *f = s->lv[l].sf;
    if (t != ST_I) {
        double p = 1;
        for (int d = 0; d < SCHED_NDIM; d++)
            if (rel[t][d]) p *= f[d];
        return p;
    }
    const double *pv = g->prev[l];
    double st = s->stride;
    double h = distinct2(st * pv[SD_P], pv[SD_R], f[SD_P], f[SD_R]);
    double w = distinct2(st * pv[SD_Q], pv[SD_S], f[SD_Q], f[SD_S]);
    return (double)f[SD_B] * f[SD_G] * f[SD_C] * h * w;
}

#define TL_MAXKIDS 64

static inline int eq5(const double *a, const double *b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4];
}

/* the MAC fan-out's children on their H x V mesh (child c at column c % H, row c / H) */
typedef struct kids {
    const tl_level *v;
    int t, nk, H, V, ready;
    double st;
    double off[TL_MAXKIDS][5]; /* each child's operand offset in data space (made on first use) */
    double span[5];            /* max - min of the offsets: a neighbour difference fits in it */
} kids;

/* children: Y loops outer, X loops inner, dimensions in index order */
static void kids_offsets(kids *k) {
    int idx[SCHED_NDIM] = {0};
    for (int c = 0; c < k->nk; c++) {
        double x[SCHED_NDIM];
        for (int d = 0; d < SCHED_NDIM; d++) x[d] = idx[d];
        project(k->t, x, k->st, k->off[c]);
        /* increment: X dims least significant */
        for (int pass = 0; pass < 2; pass++) {
            int done = 0;
            for (int d = 0; d < SCHED_NDIM && !done; d++) {
                if (k->v->saxis[d] != pass || k->v->sf[d] < 2) continue;
                if (++idx[d] < k->v->sf[d]) done = 1;
                else idx[d] = 0;
            }
            if (done) break;
        }
    }
    k->ready = 1;
}

/* does child c have a mesh neighbour m with off[m] - off[c] == D? */
static inline int neighbour_diff(const kids *k, int c, const double *D) {
    int h = c % k->H, w = c / k->H;
    int nb[4][2] = {{h, w - 1}, {h, w + 1}, {h - 1, w}, {h + 1, w}};
    for (int q = 0; q < 4; q++) {
        int nh = nb[q][0], nw = nb[q][1];
        if (nh < 0 || nh >= k->H || nw < 0 || nw >= k->V || nw * k->H + nh >= k->nk) continue;
        int m = nw * k->H + nh, eq = 1;
        for (int i = 0; i < 5 && eq; i++)
            if (k->off[m][i] - k->off[c][i] != D[i]) eq = 0;
        if (eq) return 1;
    }
    return 0;
}

/* operand accesses of a step whose move D equals some neighbour difference: the MACs whose
 * neighbour received their point at the previous step take it over the link; the others need
 * one access per distinct point. -1 when D is no neighbour difference. */
static double link_count(kids *k, const double *D, double grp) {
    if (!k->ready) kids_offsets(k);
    int served[TL_MAXKIDS], any = 0;
    for (int c = 0; c < k->nk; c++) any |= served[c] = neighbour_diff(k, c, D);
    if (!any) return -1;
    double left = 0;
    for (int c = 0; c < k->nk; c++) {
        if (served[c]) continue;
        int dup = 0;
        for (int c2 = 0; c2 < c && !dup; c2++)
            if (!served[c2] && eq5(k->off[c2], k->off[c])) dup = 1;
        if (!dup) left++;
    }
    return left < grp ? left : grp;
}

/* Accesses into level 0 when it fans out to the MACs: every temporal step delivers each MAC
 * its operand point, one access per distinct point (multicast); a MAC whose point equals what
 * a mesh neighbour received at the previous visited step is served over the link instead when
 * that lowers the step's count (Timeloop's link transfers). */
static double mac_fanout_accesses(const tl_spec *s, const tl_geo *g, int t, double st) {
    const tl_level *v = &s->lv[0];
    int nk = (int)g->F[0];
    if (nk > TL_MAXKIDS) return g->temporal * groups(s, g, 0, t);
    kids k;
    k.v = v, k.t = t, k.nk = nk, k.st = st, k.ready = 0;
    /* the offsets' span: every digit at its largest minus every digit at 0 (all integers) */
    for (int i = 0; i < 5; i++) k.span[i] = 0;
    for (int d = 0; d < SCHED_NDIM; d++) {
        int ax = data_axis[t][d];
        if (ax < 0 || v->sf[d] < 2 || (v->saxis[d] != 0 && v->saxis[d] != 1)) continue;
        k.span[ax] += (v->sf[d] - 1) * ((t == ST_I && (d == SD_P || d == SD_Q)) ? st : 1);
    }
    double hx = s->mac_meshx / v->meshx, hy = (s->mac_instances / s->mac_meshx) / (v->instances / v->meshx);
    k.H = (int)(hx > g->FX[0] ? hx : g->FX[0]), k.V = (int)(hy > g->FY[0] ? hy : g->FY[0]);
    double grp = groups(s, g, 0, t);
    /* visits: the first (no predecessor), then each walk loop j with its move; the count of a
     * move is memoised (loops often repeat a move) */
    double sum = grp, R[5] = {0, 0, 0, 0, 0}, seen[TL_MAXLOOP][5], seen_cnt[TL_MAXLOOP];
    int nseen = 0;
    for (int j = 0; j < g->nloop; j++) {
        /* loop j's step (project() of a one-hot vector) minus the inner loops' */
        int d = g->ldim[j], ax = data_axis[t][d];
        double D[5];
        for (int i = 0; i < 5; i++) D[i] = 0 - R[i];
        if (ax >= 0) {
            double P = (t == ST_I && (d == SD_P || d == SD_Q)) ? st * g->lsig[j] : g->lsig[j];
            D[ax] = P - R[ax];
            R[ax] += P;
        }
        double cnt = grp;
        int fits = 1;
        for (int i = 0; i < 5; i++) fits &= fabs(D[i]) <= k.span[i];
        if (!TL_FAST) {
            cnt = link_count(&k, D, grp);
            if (cnt < 0) cnt = grp;
        } else if (fits) { /* a neighbour difference is possible: memoised per move */
            cnt = -2;
            for (int i = 0; i < nseen && cnt == -2; i++)
                if (eq5(seen[i], D)) cnt = seen_cnt[i];
            if (cnt == -2) {
                cnt = link_count(&k, D, grp);
                if (cnt < 0) cnt = grp;
                memcpy(seen[nseen], D, sizeof D);
                seen_cnt[nseen++] = cnt;
            }
        }
        sum += g->coef[j] * cnt;
    }
    return sum;
}

static int fail(tl_result *r, int cls, int lvl, const char *name, const char *fmt, double a, double b) {
    if (!r) return cls; /* the search's quiet check: no message */
    r->status = cls;
    r->fail_level = lvl;
    char m[128];
    snprintf(m, sizeof m, fmt, a, b);
    snprintf(r->reason, sizeof r->reason, "couldn't map level %s: %s", name, m);
    return cls;
}

static int check_levels(const tl_spec *s, const tl_geo *g, tl_result *r, int capacity);

int tl_check(const tl_spec *s, tl_result *r) {
    r->status = TL_OK;
    r->fail_level = -1;
    r->reason[0] = 0;
    for (int d = 0; d < SCHED_NDIM; d++) {
        double p = 1;
        for (int l = 0; l < s->nl; l++) p *= (double)s->lv[l].tf[d] * s->lv[l].sf[d];
        if (p != s->dims[d]) {
            r->status = TL_EFACTORS;
            snprintf(r->reason, sizeof r->reason, "factors of %s multiply to %.0f, problem has %d", sched_dim_names[d], p,
                     s->dims[d]);
            return TL_EFACTORS;
        }
    }
    tl_geo g;
    geometry(s, &g);
    return check_levels(s, &g, r, 1);
}

int tl_check_spatial(const tl_spec *s, tl_result *r) {
    /* the spatial checks read only the fan-outs: geometry's spatial part */
    tl_geo g;
    for (int l = 0; l < s->nl; l++) {
        const tl_level *v = &s->lv[l];
        double FX = 1, FY = 1;
        for (int d = 0; d < SCHED_NDIM; d++)
            if (v->sf[d] != 1) {
                if (v->saxis[d]) FY *= v->sf[d];
                else FX *= v->sf[d];
            }
        g.FX[l] = FX, g.FY[l] = FY;
    }
    return check_levels(s, &g, r, 0);
}

/* Timeloop's order: the arithmetic level's expansion, then each storage level innermost
 * first: its capacity, then its instances and X/Y expansion */
static int check_levels(const tl_spec *s, const tl_geo *g, tl_result *r, int capacity) {
    if (r) {
        r->status = TL_OK;
        r->fail_level = -1;
    }
    /* arithmetic: every fan-out */
    double X = 1, Y = 1;
    for (int l = 0; l < s->nl; l++) X *= g->FX[l], Y *= g->FY[l];
    double my = s->mac_instances / s->mac_meshx;
    if (X * Y > s->mac_instances)
        return fail(r, TL_ESPATIAL, -1, "MAC", "mapped max Arithmetic instances %.0f exceeds hardware instances %.0f", X * Y,
                    s->mac_instances);
    if (X > s->mac_meshx)
        return fail(r, TL_ESPATIAL, -1, "MAC", "mapped max Arithmetic X expansion %.0f exceeds hardware instances %.0f", X,
                    s->mac_meshx);
    if (Y > my)
        return fail(r, TL_ESPATIAL, -1, "MAC", "mapped max Arithmetic Y expansion %.0f exceeds hardware instances %.0f", Y, my);
    /* storage levels: the fan-outs above each */
    for (int l = 0; l < s->nl; l++) {
        const tl_level *v = &s->lv[l];
        if (capacity && v->entries >= 0) {
            double need = 0;
            for (int t = 0; t < SCHED_NT; t++)
                if (v->keep[t]) need += tile_words(t, g->ext[l], s->stride);
            if (need > v->entries)
                return fail(r, TL_ECAPACITY, l, v->name, "mapped tile size %.0f exceeds buffer capacity %.0f", need,
                            v->entries);
        }
        double x = 1, y = 1;
        for (int k = l + 1; k < s->nl; k++) x *= g->FX[k], y *= g->FY[k];
        double vy = v->instances / v->meshx;
        if (x * y > v->instances)
            return fail(r, TL_ESPATIAL, l, v->name, "mapped instances %.0f exceeds available hardware instances %.0f", x * y,
                        v->instances);
        if (x > v->meshx)
            return fail(r, TL_ESPATIAL, l, v->name, "mapped X expansion %.0f exceeds available hardware instances %.0f", x,
                        v->meshx);
        if (y > vy)
            return fail(r, TL_ESPATIAL, l, v->name, "mapped Y expansion %.0f exceeds available hardware instances %.0f", y, vy);
    }
    return TL_OK;
}

/* per-instance reads/fills/updates of every level for tensor t; content[] = accesses into each
 * level after masking (network ingress), part[] = the level's partition of the tensor, size[] =
 * its tile */
static void tensor_counts(const tl_spec *s, const tl_geo *g, int t, double *rd, double *fl, double *up, double *content,
                          double *part, double *size) {
    int nl = s->nl;
    double st = s->stride;
    double weighted[TL_MAXLV], pas[TL_MAXLV];
    if (g->F[0] > 1) {
        content[0] = mac_fanout_accesses(s, g, t, st);
        weighted[0] = g->temporal * g->F[0];
    } else {
        content[0] = g->temporal;
        weighted[0] = g->temporal;
    }
    for (int l = 0; l < nl; l++) size[l] = tile_words(t, g->ext[l], st);
    double w = 0;
    for (int l = 1; l < nl; l++) {
        /* a level with no loops of its own (LB_I, LB_O) sees the same walk as the one below */
        if (!TL_FAST || l < 2 || g->first[l] != g->first[l - 1] || memcmp(g->ext[l - 1], g->ext[l - 2], sizeof g->ext[0]))
            w = walk_sum(g, l - 1, t, st);
        pas[l - 1] = w;
        content[l] = g->F[l] > 1 ? w * groups(s, g, l, t) : w;
        weighted[l] = w * g->F[l];
    }
    pas[nl - 1] = 0;
    part[nl - 1] = size[nl - 1];
    for (int l = nl - 2; l >= 0; l--) {
        double pfd = size[l];
        if (g->F[l + 1] > 1) {
            double sb[SCHED_NDIM];
            for (int d = 0; d < SCHED_NDIM; d++) sb[d] = g->ext[l][d] * s->lv[l + 1].sf[d];
            pfd = tile_words(t, sb, st);
        }
        /* part * size / size is exactly part while the product is an exact integer */
        if (TL_FAST && pfd == size[l] && part[l + 1] * size[l] < 9007199254740992.0) part[l] = part[l + 1];
        else part[l] = pfd > 0 ? floor(part[l + 1] * size[l] / pfd) : part[l + 1];
    }
    /* bypassed levels pass their children's demand to the next level out */
    for (int l = 0; l + 1 < nl; l++) {
        if (s->lv[l].keep[t]) continue;
        if (weighted[l + 1] > 0) {
            double f = content[l] * g->F[l + 1] / weighted[l + 1];
            content[l + 1] *= f;
            weighted[l + 1] *= f;
        }
    }
    for (int l = 0; l < nl; l++) {
        rd[l] = fl[l] = up[l] = 0;
        if (!s->lv[l].keep[t]) continue;
        int outermost = l == nl - 1;
        if (t == ST_O) {
            up[l] = round_exact(content[l]);
            rd[l] = round_exact(content[l] - part[l]);
            fl[l] = outermost ? 0 : round_exact(pas[l] - part[l]);
        } else {
            rd[l] = round_exact(content[l]);
            fl[l] = outermost ? 0 : pas[l];
        }
    }
}

void tl_eval(const tl_spec *s, tl_result *r) {
    tl_geo g;
    geometry(s, &g);
    int nl = s->nl;
    double macs = 1;
    for (int d = 0; d < SCHED_NDIM; d++) macs *= s->dims[d];
    r->macs = macs;
    r->compute_cycles = g.temporal;
    double inst[TL_MAXLV];
    inst[nl - 1] = 1;
    for (int l = nl - 2; l >= 0; l--) inst[l] = inst[l + 1] * g.F[l + 1];
    double e = macs * s->e_mac;
    r->e_mac_total = e;
    for (int l = 0; l < nl; l++) {
        r->inst_used[l] = inst[l];
        r->e_level[l] = r->e_net[l] = r->ingress[l] = 0;
    }
    for (int t = 0; t < SCHED_NT; t++) {
        r->e_tensor[t] = 0;
        double rd[TL_MAXLV], fl[TL_MAXLV], up[TL_MAXLV], part[TL_MAXLV], size[TL_MAXLV], content[TL_MAXLV];
        tensor_counts(s, &g, t, rd, fl, up, content, part, size);
        for (int l = 0; l < nl; l++) {
            const tl_level *v = &s->lv[l];
            double R = rd[l] * inst[l], Fi = fl[l] * inst[l], U = up[l] * inst[l];
            r->reads[l][t] = R;
            r->fills[l][t] = Fi;
            r->updates[l][t] = U;
            r->tile[l][t] = v->keep[t] ? size[l] : 0;
            double ea = R * v->e_read + Fi * v->e_fill + U * v->e_update;
            r->e_level[l] += ea;
            /* a network into a level without in-place reduction (DRAM) carries partial sums both
             * ways: 2 * accesses - partition */
            double in = content[l];
            if (t == ST_O && v->dram) in = 2 * in - part[l];
            r->ingress[l] += in * inst[l];
            r->ingress_t[l][t] = in * inst[l];
            r->e_tensor[t] += ea + in * inst[l] * v->e_ingress;
        }
    }
    double cyc = g.temporal;
    r->bound = -1;
    for (int l = 0; l < nl; l++) {
        const tl_level *v = &s->lv[l];
        r->e_net[l] = r->ingress[l] * v->e_ingress;
        e += r->e_level[l] + r->e_net[l];
        r->level_cycles[l] = 0;
        if (v->bw > 0) {
            double acc = 0;
            for (int t = 0; t < SCHED_NT; t++) acc += r->reads[l][t] + r->fills[l][t] + r->updates[l][t];
            double c = acc / inst[l] / v->bw;
            r->level_cycles[l] = c;
            if (c > cyc) {
                cyc = c;
                r->bound = l;
            }
        }
    }
    r->cycles = cyc;
    r->energy = e;
    r->utilization = macs / (cyc * s->mac_instances);
    r->spatial_util = g.spatial / s->mac_instances;
}

/* the innermost level keeping tensor t when no fan-out at or below it exists or can appear
 * (fan: levels whose fan-out a completion may still change); -1 otherwise */
static int per_mac_level(const tl_spec *s, int t, unsigned fan) {
    for (int l = 0; l < s->nl; l++) {
        if (fan >> l & 1u) return -1;
        for (int d = 0; d < SCHED_NDIM; d++)
            if (s->lv[l].sf[d] != 1) return -1;
        if (s->lv[l].keep[t]) return l;
    }
    return -1;
}

void tl_eval_bound(const tl_spec *s, const tl_bound_in *b, double out[4]) {
    tl_result r;
    tl_eval(s, &r);
    double e = r.e_mac_total;
    for (int t = 0; t < SCHED_NT; t++) {
        int pm = per_mac_level(s, t, b->fan);
        for (int l = 0; l < s->nl; l++) {
            const tl_level *v = &s->lv[l];
            double m = b->mul[t];
            /* per-MAC level: its reads (I, W), updates (O) and network words are the product of
             * every loop of the table, so every unassigned factor multiplies them; its output
             * reads (updates - partition) too: the partition over the instances, |O| times the
             * C R S fan-outs above, grows by at most that product (docs/sched.md) */
            double mc = l == pm && !v->dram ? b->all : m;
            e += r.reads[l][t] * v->e_read * mc + r.fills[l][t] * v->e_fill * m +
                 r.updates[l][t] * v->e_update * mc + r.ingress_t[l][t] * v->e_ingress * mc;
        }
    }
    int d = s->nl - 1;
    double dw = 0;
    for (int t = 0; t < SCHED_NT; t++) dw += b->mul[t] * (r.reads[d][t] + r.fills[d][t] + r.updates[d][t]);
    out[0] = e;
    out[1] = out[2] = r.compute_cycles * b->temporal_mul;
    out[3] = dw;
}

void tl_eval_fast(const tl_spec *s, double *energy, double *cycles, double *compute_cycles, double *dram_words) {
    tl_result r;
    tl_eval(s, &r);
    *energy = r.energy;
    *cycles = r.cycles;
    *compute_cycles = r.compute_cycles;
    int d = s->nl - 1;
    *dram_words = 0;
    for (int t = 0; t < SCHED_NT; t++) *dram_words += r.reads[d][t] + r.fills[d][t] + r.updates[d][t];
}
