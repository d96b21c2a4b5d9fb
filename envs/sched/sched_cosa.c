/* sched_cosa.c - a CoSA-like constrained optimiser for scheduling tables (in the spirit of
 * Huang et al., ISCA 2021; not their code or formulation). docs/sched.md "Baselines".
 *
 * CoSA poses mapping as one mixed-integer program over the placement of each prime factor of
 * each layer dimension, with constraints and objective in the log domain. We solve the
 * continuous relaxation of the same kind of program with NLopt's SLSQP and round it:
 *
 *   variables  x[d][r] >= 0: log2 of the factor of dimension d at present row r
 *   equalities sum_r x[d][r] = log2 D_d                      (the columns multiply to the layer)
 *   spatial    sum_d x[d][r] <= log2 units(r)                 (each X/Y row)
 *   capacity   sum_{d relevant to t} sum_{r' <= r} x[d][r'] <= log2(cap(r,t) / word)
 *              (input: plus log2 stride, since U <= stride*P*R; a shared pool: a third each)
 *   objective  w_c * (temporal product, log2)                 (compute: favours spatial rows)
 *            + sum over tensors t and storage boundaries r of e(parent) * log2 traffic_t(r),
 *              log2 traffic_t(r) = sum_{d rel t} log2 D_d + sum_{d irrelevant to t} sum_{temporal r'>r} x
 *              (the whole tensor, times the irrelevant loops above re-fetching it: CoSA's
 *              traffic term, without stationarity; spatial splits of relevant dims do not change
 *              the total)
 *            + for spatial rows, e(link) per tensor (1 for an irrelevant dim: multicast; 0.25
 *              for a relevant one: delivery)
 *   w_c = 0.05 for energy, 20 for cycles; e(parent) is the parent's pJ per word over the largest.
 *
 * Rounding: each dimension's prime factors, largest first, go to the row whose fractional budget
 * x[d][r] - log2(assigned so far) is largest and where the spatial units still allow it. Repair:
 * while the table breaks a constraint, the largest factor of the innermost non-DRAM row moves to
 * DRAM (the all-in-DRAM table is always valid). No search follows: the result is the rounded
 * optimum of the relaxation, scored once by the cost model. */
#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define MAXV (SCHED_NDIM * SCHED_NROW)

static const int rel[SCHED_NT][SCHED_NDIM] = {
    /*        B  C  G  K  R  S  P  Q */
    /* I */ {1, 1, 1, 0, 1, 1, 1, 1},
    /* W */ {0, 1, 1, 1, 1, 1, 0, 0},
    /* O */ {1, 0, 1, 1, 0, 0, 1, 1},
};

static int is_spatial(int r) {
    return r == SR_MACX || r == SR_MACY || r == SR_PEX || r == SR_PEY || r == SR_CHX || r == SR_CHY;
}

typedef struct lp {
    int nv;
    int vd[MAXV], vr[MAXV]; /* variable k = (dimension, row) */
    double c[MAXV];          /* linear objective */
    /* linear constraints a.x <= b (ineq) or a.x = b (eq) */
    int nc;
    double A[64][MAXV], b[64];
    int eq[64];
} lp;

static double lin_obj(unsigned n, const double *x, double *g, void *data) {
    const lp *p = data;
    double v = 0;
    for (unsigned k = 0; k < n; k++) {
        v += p->c[k] * x[k];
        if (g) g[k] = p->c[k];
    }
    return v;
}

typedef struct cref {
    const lp *p;
    int i;
} cref;

static double lin_con(unsigned n, const double *x, double *g, void *data) {
    const cref *c = data;
    double v = -c->p->b[c->i];
    for (unsigned k = 0; k < n; k++) {
        v += c->p->A[c->i][k] * x[k];
        if (g) g[k] = c->p->A[c->i][k];
    }
    return v;
}

static void add_con(lp *p, const double *a, double b, int eq) {
    if (p->nc >= 64) return;
    memcpy(p->A[p->nc], a, sizeof(double) * (size_t)p->nv);
    p->b[p->nc] = b;
    p->eq[p->nc] = eq;
    p->nc++;
}

/* Builds the program for layer l on accelerator a. */
static void build(const sched_accel *a, const sched_layer *l, int obj, lp *p) {
    memset(p, 0, sizeof *p);
    for (int d = 0; d < SCHED_NDIM; d++) {
        if (l->d[d] <= 1) continue;
        for (int r = 0; r < SCHED_NROW; r++) {
            if (!a->present[r] || (is_spatial(r) && a->units[r] <= 1)) continue;
            p->vd[p->nv] = d;
            p->vr[p->nv] = r;
            p->nv++;
        }
    }
    double row[MAXV];
    for (int d = 0; d < SCHED_NDIM; d++) { /* columns */
        if (l->d[d] <= 1) continue;
        memset(row, 0, sizeof row);
        for (int k = 0; k < p->nv; k++) row[k] = p->vd[k] == d;
        add_con(p, row, log2((double)l->d[d]), 1);
    }
    for (int r = 0; r < SCHED_NROW; r++) { /* spatial units */
        if (!is_spatial(r) || !a->present[r] || a->units[r] <= 1) continue;
        memset(row, 0, sizeof row);
        for (int k = 0; k < p->nv; k++) row[k] = p->vr[k] == r;
        add_con(p, row, log2((double)a->units[r]), 0);
    }
    double wb = a->word_bytes > 0 ? a->word_bytes : 1;
    for (int r = 0; r < SR_DRAM; r++) { /* capacities */
        if (is_spatial(r) || !a->present[r]) continue;
        for (int t = 0; t < SCHED_NT; t++) {
            double cap = a->cap[r][t] > 0 && a->keeps[r][t] ? a->cap[r][t] : a->cap_shared[r] > 0 ? a->cap_shared[r] / 3 : 0;
            if (!(cap > 0)) continue;
            memset(row, 0, sizeof row);
            for (int k = 0; k < p->nv; k++) row[k] = rel[t][p->vd[k]] && p->vr[k] <= r;
            double words = cap / wb;
            add_con(p, row, log2(words < 1 ? 1 : words) - (t == ST_I ? log2((double)(l->stride > 0 ? l->stride : 1)) : 0), 0);
        }
    }
    /* objective */
    double emax = 0;
    for (int r = 0; r < SCHED_NROW; r++)
        if (a->present[r] && !is_spatial(r) && a->e_word[r] > emax) emax = a->e_word[r];
    if (!(emax > 0)) emax = 1;
    double wc = obj == SOBJ_CYCLES ? 20.0 : 0.05;
    for (int k = 0; k < p->nv; k++)
        if (!is_spatial(p->vr[k])) p->c[k] += wc;
    for (int k = 0; k < p->nv; k++) { /* network words: spreading over a spatial row costs its links */
        int q = p->vr[k];
        if (!is_spatial(q)) continue;
        for (int t = 0; t < SCHED_NT; t++) p->c[k] += a->e_word[q] / emax * (rel[t][p->vd[k]] ? 0.25 : 1.0);
    }
    for (int r = 0; r < SR_DRAM; r++) { /* boundary between storage row r and its parent */
        if (is_spatial(r) || !a->present[r]) continue;
        int parent = -1;
        for (int q = r + 1; q < SCHED_NROW && parent < 0; q++)
            if (!is_spatial(q) && a->present[q]) parent = q;
        if (parent < 0) continue;
        double w = a->e_word[parent] / emax;
        for (int t = 0; t < SCHED_NT; t++) {
            if (!a->keeps[r][t]) continue;
            for (int k = 0; k < p->nv; k++) {
                int d = p->vd[k], q = p->vr[k];
                if (!rel[t][d] && !is_spatial(q) && q > r) p->c[k] += w;
            }
        }
    }
}

static int nprimes(int n, int *pr) {
    int k = 0;
    for (int f = 2; (long)f * f <= n; f++)
        while (n % f == 0) {
            pr[k++] = f;
            n /= f;
        }
    if (n > 1) pr[k++] = n;
    /* largest first */
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (pr[j] > pr[i]) {
                int t = pr[i];
                pr[i] = pr[j];
                pr[j] = t;
            }
    return k;
}

static long row_product(const sched_table *t, int r) {
    long p = 1;
    for (int d = 0; d < SCHED_NDIM; d++) p *= t->f[r][d];
    return p;
}

static void round_table(const sched_accel *a, const sched_layer *l, const lp *p, const double *x, sched_table *t) {
    sched_table_init(l, t);
    for (int d = 0; d < SCHED_NDIM; d++) t->f[SR_DRAM][d] = 1;
    for (int d = 0; d < SCHED_NDIM; d++) {
        int pr[32], np = nprimes(l->d[d] > 0 ? l->d[d] : 1, pr);
        for (int i = 0; i < np; i++) {
            int best = SR_DRAM;
            double bv = -INFINITY;
            for (int k = 0; k < p->nv; k++) {
                if (p->vd[k] != d) continue;
                int r = p->vr[k];
                if (is_spatial(r) && row_product(t, r) * pr[i] > a->units[r]) continue;
                double v = x[k] - log2((double)t->f[r][d]);
                if (v > bv + 1e-9) {
                    bv = v;
                    best = r;
                }
            }
            if (bv <= 1e-9) best = SR_DRAM; /* no fractional budget left anywhere: outermost */
            t->f[best][d] *= pr[i];
        }
    }
}

/* Moves factors outwards to DRAM until the table is valid: first any single prime factor whose
 * move makes the table valid (innermost rows first), else the largest factor of the innermost
 * non-DRAM row (the all-in-DRAM table is always valid, so this ends). */
static int move_one(sched_table *t, int r, int d) {
    int pr[32];
    if (t->f[r][d] <= 1) return 0;
    nprimes(t->f[r][d], pr);
    t->f[r][d] /= pr[0];
    t->f[SR_DRAM][d] *= pr[0];
    return pr[0];
}

static void repair(const sched_accel *a, const sched_layer *l, sched_table *t) {
    for (int guard = 0; guard < 4096 && sched_check(a, l, t, NULL); guard++) {
        int fixed = 0;
        for (int r = 0; r < SR_DRAM && !fixed; r++)
            for (int d = 0; d < SCHED_NDIM && !fixed; d++) {
                sched_table c = *t;
                if (move_one(&c, r, d) && !sched_check(a, l, &c, NULL)) {
                    *t = c;
                    fixed = 1;
                }
            }
        if (fixed) break;
        int moved = 0;
        for (int r = 0; r < SR_DRAM && !moved; r++) {
            int bd = -1, bf = 1;
            for (int d = 0; d < SCHED_NDIM; d++)
                if (t->f[r][d] > bf) {
                    bf = t->f[r][d];
                    bd = d;
                }
            if (bd >= 0) moved = move_one(t, r, bd);
        }
        if (!moved) break;
    }
}

int sched_cosa(const sched_accel *a, const sched_layer *l, int obj, sched_table *t, sched_cost *c, hw_err *err) {
    sched_table_init(l, t);
    if (sched_check(a, l, t, err)) return -1;
    lp *p = malloc(sizeof *p);
    if (!p) return hw_fail(err, HW_E_INTERNAL, "cosa: out of memory");
    build(a, l, obj, p);
    if (p->nv > 0) {
        double x[MAXV], lo[MAXV], hi[MAXV];
        cref refs[64];
        nlopt_opt o = nlopt_create(NLOPT_LD_SLSQP, (unsigned)p->nv);
        for (int k = 0; k < p->nv; k++) {
            lo[k] = 0;
            hi[k] = log2((double)l->d[p->vd[k]]);
            if (is_spatial(p->vr[k])) hi[k] = fmin(hi[k], log2((double)a->units[p->vr[k]]));
            x[k] = p->vr[k] == SR_DRAM ? hi[k] : 0; /* start from the all-in-DRAM table */
        }
        nlopt_set_lower_bounds(o, lo);
        nlopt_set_upper_bounds(o, hi);
        nlopt_set_min_objective(o, lin_obj, p);
        for (int i = 0; i < p->nc; i++) {
            refs[i].p = p;
            refs[i].i = i;
            if (p->eq[i]) nlopt_add_equality_constraint(o, lin_con, &refs[i], 1e-9);
            else nlopt_add_inequality_constraint(o, lin_con, &refs[i], 1e-9);
        }
        nlopt_set_xtol_rel(o, 1e-8);
        nlopt_set_maxeval(o, 2000);
        double f;
        nlopt_result rc = nlopt_optimize(o, x, &f);
        nlopt_destroy(o);
        if (rc > 0 || rc == NLOPT_ROUNDOFF_LIMITED) round_table(a, l, p, x, t); /* else: stay in DRAM */
    }
    free(p);
    repair(a, l, t);
    sched_cost_eval(a, l, t, c);
    return 0;
}
