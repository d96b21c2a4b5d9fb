/* maestro_internal.h - shared internals of the native MAESTRO cost model (not a public API).
 * Owns the data the model's files pass between them: the cluster-level table (level), the
 * per-call dimension table (dimtab), the iteration states of a directive (istate, itab, icase),
 * a level's analysis result (lres) and the evaluation context (ctx, with its memo of sub-cluster
 * results), plus the small inline predicates on them. The files:
 *   maestro_layer.c   dimension names, layer and hardware defaults (public helpers)
 *   maestro_levels.c  cluster construction: the mapping split into levels (once per evaluation)
 *   maestro_reuse.c   iteration states and reuse analysis (ingress/egress volumes per case)
 *   maestro_model.c   the per-level engine (delays, traffic, memo) and maestro_eval() */
#ifndef HW_MAESTRO_INTERNAL_H
#define HW_MAESTRO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "maestro.h"

#define LV_DIRS 40
#define MEMO_N 32
#define MAX_CASES 1000000
#define MAX_STATES 3

enum { POS_INIT = 0, POS_STEADY = 1, POS_EDGE = 2 };

typedef struct {
    int dims[MD_NDIM];
    unsigned has; /* bit v: dimension v is defined here */
} dimtab;
static inline bool dim_has(const dimtab *D, int v) { return (D->has >> v) & 1u; }

/* the directives and variables of one tensor at a level (static, built with the level) */
typedef struct {
    unsigned mask;             /* the tensor's variables (bit v) */
    int nk;                    /* directives over the tensor's variables, in order */
    unsigned char k[LV_DIRS];
    int nsp;                   /* the tensor's variables whose first directive is a SpatialMap */
    unsigned char sp[MD_NDIM]; /* in the tensor's order */
} ltensor;

typedef struct {
    int nd;
    maestro_directive d[LV_DIRS];
    int csize;  /* number of sub-clusters at this level */
    int nedge;  /* active sub-clusters in a spatial edge step (static analysis) */
    dimtab sd;  /* static dimensions of this level */
    int ostride[MD_NDIM];
    int first[MD_NDIM], last[MD_NDIM];
    int spidx;  /* first SpatialMap */
    bool conv;  /* Y/R and X/S overlap (CONV, DSCONV); false for GEMM */
    int mapped[MD_NDIM], unique[MD_NDIM], medge[MD_NDIM], uedge[MD_NDIM]; /* sizes (ints: they multiply into longs) */
    /* per-case lookups, fixed with the level (scan_level, maestro_levels.c) */
    int nvar;                   /* the variables with a directive here */
    unsigned char var[MD_NDIM];
    unsigned vmask;             /* the same, bit v */
    ltensor lt[MT_N];
    int npk;                    /* directives over variables outside the output (partial sums) */
    unsigned char pk[LV_DIRS];
    int nspd;                   /* the SpatialMaps */
    unsigned char spd[LV_DIRS];
    int nov;                    /* the output tensor's variables, in its order, */
    unsigned char ov[MD_NDIM];
    unsigned char oa[MD_NDIM];  /* the variable each one's sizes are read at (Y'/X' for Y/X in a CONV) */
    unsigned char osp[MD_NDIM]; /* 1 when its first directive is a SpatialMap */
} level;

typedef struct {
    int n;
    int v[MD_NDIM];
    unsigned mask; /* bit v set when v is in the list */
} varlist;

typedef struct {
    unsigned char pos, unroll, iedge, spee;
    unsigned char edge; /* pos == POS_EDGE || iedge (is_edge) */
    long occ;
} istate;

typedef struct {
    long long runtime, macs, compute_sum;
    long long l2rd[MT_N], l2wr[MT_N], l1rd[MT_N], l1wr[MT_N], upreq[MT_N], downreq[MT_N];
    long double avg_active;
    long long sp_occ;
    long long peak_bw, offchip;
    long double avg_bw;
    long double dmin[3], dmax[3], davg[3];
    double ai;
} lres;

/* what a level above reads of a sub-cluster level's result */
typedef struct {
    long long runtime;
    long double avg_active;
} sres;

typedef struct {
    const maestro_layer *l;
    const maestro_hw *h;
    int nlv;
    level lv[MAESTRO_MAX_LEVELS];
    varlist tv[MT_N];  /* coupled variables per tensor */
    varlist invars;    /* sorted input-tensor variables */
    bool leaf_seen;
    long long leaf_downreq[MT_N];
    char *reason;
    bool brief; /* the top level leaves what maestro_eval_brief does not report (delays, avg_bw, ai) */
    /* sub-cluster results depend only on (level, dimensions): memoised per evaluation */
    int nmemo;
    struct memo {
        int li;
        int dims[MD_NDIM];
        unsigned has;
        sres r;
    } memo[MEMO_N];
    sres scratch[MAESTRO_MAX_LEVELS]; /* a sub-cluster level's result when the memo is full */
} ctx;

/* ---------- iteration analysis (per call, on the call's dimensions) ---------- */
typedef struct {
    int nst[LV_DIRS];
    istate st[LV_DIRS][MAX_STATES];
} itab;

/* one iteration case: per variable, the state of its last directive (every directive over a
 * variable reads that one), and the changing directive */
typedef struct {
    const istate *sv[MD_NDIM]; /* per variable with a directive: the state of its last directive */
    int chg;                   /* the last directive whose variable is not in its Init state; -1: none */
    unsigned moved;            /* bit v: sv[v] differs from the previous case's (the first case: every variable) */
} icase;

/* MAESTRO's order of a call's cases (maestro_cases_begin, maestro_case_next): directive k moves
 * to its next state after case c when c is a multiple of freq[k] (freq[k]: the product of the later
 * directives' state counts), so from one case to the next the directives that move are a suffix
 * of the moving ones (an odometer): only those are visited, and the occurrence is kept as prefix
 * products (pocc[j]: of the moving directives before j). Only the directives with more than one
 * state (mk) ever move, and only the last of a variable's (mv: its variable, else MD_NDIM)
 * changes what the case analysis reads. */
typedef struct {
    int nm;
    int c;                       /* the number of the next case */
    unsigned char mk[LV_DIRS], mv[LV_DIRS];
    unsigned char ctr[LV_DIRS];  /* each moving directive's state */
    int freq[LV_DIRS], next[LV_DIRS]; /* next: the case after which it moves next (at most MAX_CASES) */
    long pocc[LV_DIRS + 1];
    unsigned vars;               /* the variables with a directive */
} corder;

/* A case's output-tensor egress factors for every flag combination MAESTRO's calls use
 * (maestro_egress_tab): the product over the output variables [first][ee][reuse_edge], and over
 * the directives outside the output (partial sums) [first][ee]. */
typedef struct {
    long ov[2][2][2];
    long ps[2][2];
} egress_tab;

/* ---------- overlap: Y/R and X/S (Y, X reference; R, S sliding) ---------- */
static inline bool is_ref_c(bool conv, int v) { return conv && (v == MD_Y || v == MD_X); }
static inline bool is_overlapped_c(bool conv, int v) { return conv && (v == MD_Y || v == MD_X || v == MD_R || v == MD_S); }
static inline int counterpart(int v) {
    switch (v) {
    case MD_Y: return MD_R;
    case MD_X: return MD_S;
    case MD_R: return MD_Y;
    case MD_S: return MD_X;
    default: return v;
    }
}
static inline bool in_list(const varlist *vl, int v) { return (vl->mask >> v) & 1u; }
static inline bool is_edge(const istate *s) { return s->edge; }

/* Writes the reason into c->reason; returns -1 (maestro_levels.c). */
int maestro_fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* snprintf, without stdio for %d, %ld, %lld and %s (maestro_levels.c). */
int maestro_format(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The reasons a step formats most, "<a><x><b><y><c>" (a, b, c literals): maestro_format's text
 * with two integer conversions, written in place (inline: the literals' lengths are constants),
 * or by maestro_format when it does not fit. */
static inline int format_digits(long long v) { /* v's characters, its sign included */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    int n = 1 + (v < 0);
    for (; u >= 10; u /= 10) n++;
    return n;
}
static inline void format_put(char *e, long long v) { /* v's characters, ending at e */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do *--e = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--e = '-';
}
static inline int maestro_format_nn(char *dst, size_t cap, const char *a, size_t na, long long x, const char *b, size_t nb, long long y,
                                    const char *c, size_t nc) {
    size_t lx = (size_t)format_digits(x), ly = (size_t)format_digits(y), n = na + lx + nb + ly + nc;
    if (n >= cap) return maestro_format(dst, cap, "%s%lld%s%lld%s", a, x, b, y, c); /* truncated as snprintf truncates */
    char *p = dst;
    memcpy(p, a, na), p += na + lx;
    format_put(p, x);
    memcpy(p, b, nb), p += nb + ly;
    format_put(p, y);
    memcpy(p, c, nc), p[nc] = 0;
    return (int)n;
}
#define MAESTRO_FORMAT_NN(dst, cap, a, x, b, y, c) maestro_format_nn(dst, cap, a, sizeof a - 1, x, b, sizeof b - 1, y, c, sizeof c - 1)

/* Splits the mapping into cluster levels, fills c->lv, c->nlv, c->tv and c->invars; checks the
 * rules MAESTRO enforces by terminating. -1 with c->reason set when MAESTRO would not run. */
int maestro_build_levels(ctx *c, const maestro_mapping *m);

/* Reuse analysis of one level on one case (maestro_reuse.c). */
void maestro_iteration_states(const level *L, const dimtab *D, itab *it);
/* The call's first case (every directive in its Init state) into *cs, its case count into *ncases
 * and the order into *o; -1 when there are more than MAX_CASES. */
int maestro_cases_begin(const level *L, const itab *it, corder *o, icase *cs, long *ncases);
/* Sets *cs to the call's next case in MAESTRO's order (after begin: the first case); returns its
 * occurrence (the product of its directives' state occurrences). */
long maestro_case_next(const itab *it, corder *o, icase *cs);
/* Tensor t's (MT_IN or MT_W) ingress of one spatial step; -1 where MAESTRO terminates. */
int maestro_spatial_ingress(const level *L, int t, const icase *cs, long *out);
/* The output tensor's egress factors of case cs; the three volumes below read them. */
void maestro_egress_tab(const level *L, const icase *cs, egress_tab *e);
long maestro_spatial_egress(const level *L, const icase *cs, const egress_tab *e);
long maestro_crit_psums(const level *L, const icase *cs, const egress_tab *e);
long maestro_psum_mapping_size(const level *L, const icase *cs, const egress_tab *e);
/* The variables the call's cases move (bit v), and of those the ones whose moves can change what a
 * case reads: the sub-clusters' dimensions (*sub), maestro_case_out's answers (*out) and, for
 * one changing directive, maestro_case_ingress's (*in). A variable's sub-cluster size, and the
 * factors of its TemporalMaps in the egress, read of its state the edge flag alone (Init and Steady
 * give the mapped size unless Init is an edge; an edge state the edge size): *sub holds the
 * variables whose states differ in it, *out those and every moving variable with a SpatialMap
 * here. A TemporalMap's ingress factor reads, before the changing directive, whether its state is
 * an edge in Init (after it every state is Init; the changing directive's own factor reads none),
 * and a TemporalMap that moves never starts at an edge (it has more states only when its size is
 * below the dimension): *in holds the moving variables with a SpatialMap here. */
unsigned maestro_moving_vars(const level *L, const itab *it, const corder *o, unsigned *sub, unsigned *out, unsigned *in);
/* The three above of case cs at once (psmap NULL: without the last), as the case loop asks. */
void maestro_case_out(const level *L, const icase *cs, long *egress, long *npsums, long *psmap);
/* Both input tensors' maestro_spatial_ingress (ing[MT_IN], ing[MT_W]); -1 where MAESTRO terminates. */
int maestro_case_ingress(const level *L, const icase *cs, long ing[2]);
long maestro_mapped_volume(const level *L, const varlist *cv);
/* The dimensions a sub-cluster sees in case cs (ee: the edge-of-edge sub-cluster). */
void maestro_sub_dims(const level *L, const icase *cs, bool ee, dimtab *out);
/* *out, maestro_sub_dims of an earlier case, made cs's: vars holds every variable whose state
 * changed since (bit v; a variable without a directive here must not be in it). True when a size
 * changed. */
bool maestro_sub_dims_update(const level *L, const icase *cs, bool ee, unsigned vars, dimtab *out);

#endif
