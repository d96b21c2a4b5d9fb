/* sched_search.c - the brute-force row refactorisation (paper section 3.4) and the mapping
 * baselines (Timeloop-style random-pruned, NeuroSpector-style bottom-up, ZigZag-style
 * top-down). See docs/sched.md. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/env_limits.h"
#include "sched.h"
#include "sched_internal.h"
#include "sched_tl.h"

const char *const sched_baseline_names[] = {"random-pruned", "bottom-up", "top-down", "cosa", NULL};

int sched_action_rows(int act, int r, int rows[3]) {
    if (act < 10) {
        rows[0] = act;
        rows[1] = r;
        return 2;
    }
    /* the k-th pair (i, j), i < j, in order: SCHED_NROW - 1 - i pairs start at i */
    int k = act - 10;
    for (int i = 0; i < SCHED_NROW - 1; i++) {
        if (k < SCHED_NROW - 1 - i) {
            rows[0] = i;
            rows[1] = i + 1 + k;
            rows[2] = r;
            return 3;
        }
        k -= SCHED_NROW - 1 - i;
    }
    return 0;
}

int sched_action_valid(const sched_accel *a, int act, int r) {
    if (act < 0 || act >= SCHED_NACT || r < 0 || r >= SCHED_NROW || !a->present[r]) return 0;
    int rows[3];
    int n = sched_action_rows(act, r, rows);
    for (int i = 0; i < n; i++) {
        if (!a->present[rows[i]]) return 0;
        for (int j = i + 1; j < n; j++)
            if (rows[i] == rows[j]) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ brute force */

typedef struct bf_ctx {
    const sched_accel *a;
    const sched_layer *l;
    sched_table t;
    double cum[SCHED_NROW][SCHED_NDIM];
    int n, rows[3], lo, hi;
    int ncol, cols[SCHED_NDIM], cnt[SCHED_NDIM];
    double sufmul[SCHED_NDIM + 1][SCHED_NT], sufprod[SCHED_NDIM + 1]; /* over columns k.. of the order */
    const int *opt[SCHED_NDIM]; /* cnt * n values */
    int chk_store[4], nstore;   /* storage rows whose tiles the split changes */
    int chk_sp[3], nsp;         /* selected spatial rows */
    int obj, sec, bound;
    unsigned selmask, fan; /* fan: Timeloop levels whose spatial fan-out a selected row sets */
    double best_p, best_s;
    sched_table best_t;
    sched_cost best_c; /* of the incumbent on entry */
    sched_bf_stats st;
    tl_spec sp; /* the table as a Timeloop spec, kept in step with t */
} bf_ctx;

static void recum(bf_ctx *c, int d) {
    double p = c->lo > 0 ? c->cum[c->lo - 1][d] : 1;
    for (int r = c->lo; r < SCHED_NROW; r++) {
        p *= c->t.f[r][d];
        c->cum[r][d] = p;
    }
}

static int partial_ok(const bf_ctx *c, tl_spec *s) {
    if (c->nsp) {
        /* Timeloop's cumulative spatial check (a partial table's fan-outs only grow) */
        if (tl_check_spatial(s, NULL) != TL_OK) return 0;
    }
    for (int i = 0; i < c->nstore; i++) {
        double need, have;
        if (sched_cap_fail(c->a, c->l, c->chk_store[i], c->cum[c->chk_store[i]], &need, &have)) return 0;
    }
    return 1;
}

static int better(double p, double s, double bp, double bs) {
    double tol = 1e-12 * fabs(bp);
    if (p < bp - tol) return 1;
    if (p > bp + tol) return 0;
    return s < bs - 1e-12 * fabs(bs);
}

static void dfs(bf_ctx *c, int k, const tl_spec *cur) {
    /* the server's request deadline (a no-op in local tools): past it the search stops and keeps
     * the best table found so far; callers turn hw_deadline_passed() into a TIMEOUT */
    if ((c->st.visited & 4095) == 4095 && hw_deadline_passed()) return;
    if (k == c->ncol) {
        c->st.leaves++;
        double out[4];
        tl_eval_fast(cur, &out[0], &out[1], &out[2], &out[3]);
        double p = sched_obj_of(out, c->obj), s = c->sec >= 0 ? sched_obj_of(out, c->sec) : 0;
        if (better(p, s, c->best_p, c->best_s)) {
            c->best_p = p;
            c->best_s = s;
            c->best_t = c->t;
        }
        return;
    }
    int d = c->cols[k];
    /* smallest factors in the innermost selected row first; among exactly tied tables the first
     * found is kept, so ties leave the factors in the outer rows */
    const int *o = c->opt[k];
    for (int e = 0; e < c->cnt[k]; e++, o += c->n) {
        c->st.visited++;
        for (int i = 0; i < c->n; i++) c->t.f[c->rows[i]][d] = o[i];
        recum(c, d);
        /* the Timeloop spec follows the table in place: only the selected rows change */
        tl_spec *sp = &c->sp;
        for (int i = 0; i < c->n; i++) tl_spec_set(sp, c->rows[i], d, o[i]);
        if (!partial_ok(c, sp)) {
            c->st.pruned++;
            continue;
        }
        if (c->bound && k + 1 < c->ncol) {
            /* branch and bound: the partial table (unassigned entries 1) bounds every completion */
            double out[4];
            tl_bound_in b;
            for (int ten = 0; ten < SCHED_NT; ten++) b.mul[ten] = c->sufmul[k + 1][ten];
            b.all = c->sufprod[k + 1];
            b.fan = c->fan;
            /* temporal product owed: the unassigned products, less what the spatial rows can still
             * absorb (Timeloop checks fan-outs cumulatively: bounded by the MACs left unused) */
            double room = 1;
            if (c->nsp) {
                double used = 1, units = 1;
                for (int r = 0; r < SCHED_NROW; r++)
                    if (sched_is_spatial(r) && c->a->present[r]) {
                        units *= c->a->units[r];
                        for (int d = 0; d < SCHED_NDIM; d++) used *= c->t.f[r][d];
                    }
                room = units / used;
            }
            b.temporal_mul = c->sufprod[k + 1] / room > 1 ? c->sufprod[k + 1] / room : 1;
            tl_eval_bound(sp, &b, out);
            if (sched_obj_of(out, c->obj) > c->best_p + 1e-12 * fabs(c->best_p)) {
                c->st.bounded++;
                continue;
            }
        }
        dfs(c, k + 1, sp);
    }
    for (int i = 0; i < c->n; i++) {
        c->t.f[c->rows[i]][d] = 1;
        tl_spec_set(&c->sp, c->rows[i], d, 1);
    }
    recum(c, d);
}

/* divisors of n in increasing order */
static int ndivisors(int n, int *div) {
    int k = 0, hi[1024], nh = 0;
    for (int i = 1; (long)i * i <= n; i++)
        if (n % i == 0) {
            div[k++] = i;
            if (i != n / i) hi[nh++] = n / i;
        }
    while (nh > 0) div[k++] = hi[--nh];
    return k;
}

/* ordered factorisations of N into n parts (n = 2 or 3); returns the count, fills out when non-NULL */
static int factorisations(int N, int n, int *out) {
    int div[2048], k = 0;
    int nd = ndivisors(N, div);
    for (int i = 0; i < nd; i++) {
        int x = div[i], rest = N / x;
        if (n == 2) {
            if (out) out[2 * k] = x, out[2 * k + 1] = rest;
            k++;
            continue;
        }
        for (int j = 0; j < nd && div[j] <= rest; j++) {
            if (rest % div[j]) continue;
            if (out) out[3 * k] = x, out[3 * k + 1] = div[j], out[3 * k + 2] = rest / div[j];
            k++;
        }
    }
    return k;
}

/* the factor by which x of dimension d at least multiplies tensor ten's access terms wherever
 * it goes (docs/sched.md "Brute-force step"): x when ten depends on d; for the input's P (Q) the
 * growth of the window's height (width), at least 1 + (x - 1) * min(1, stride / R (S)); else 1 */
double sched_bound_mul(const sched_layer *l, int ten, int d, int x) {
    if (!sched_rel[ten][d]) return 1;
    if (ten != ST_I || (d != SD_P && d != SD_Q)) return ten == ST_I && (d == SD_R || d == SD_S) ? 1 : x;
    double k = (double)l->stride / l->d[d == SD_P ? SD_R : SD_S];
    return 1 + (x - 1) * (k < 1 ? k : 1);
}

static int bruteforce(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj, int sec,
                      sched_cost *best, sched_bf_stats *st, int bound) {
    if (n < 2 || n > 3) return -1;
    for (int i = 0; i < n; i++) {
        if (rows[i] < 0 || rows[i] >= SCHED_NROW || !a->present[rows[i]]) return -1;
        for (int j = i + 1; j < n; j++)
            if (rows[i] == rows[j]) return -1;
    }
    bf_ctx *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->a = a;
    c->l = l;
    c->t = *t;
    c->n = n;
    c->obj = obj;
    c->sec = sec;
    c->bound = bound;
    c->lo = SCHED_NROW;
    c->hi = -1;
    for (int i = 0; i < n; i++) {
        c->rows[i] = rows[i];
        if (rows[i] < c->lo) c->lo = rows[i];
        if (rows[i] > c->hi) c->hi = rows[i];
        if (sched_is_spatial(rows[i]) && a->present[rows[i]]) c->chk_sp[c->nsp++] = rows[i];
    }
    for (int k = 0; k < 4; k++) {
        int r = sched_storage_rows[k];
        if (a->present[r] && r >= c->lo && r < c->hi) c->chk_store[c->nstore++] = r;
    }
    /* the current table is the incumbent: the step never makes the objective worse */
    sched_cost_eval(a, l, t, &c->best_c);
    c->best_p = sched_objective(&c->best_c, obj);
    c->best_s = sec >= 0 ? sched_objective(&c->best_c, sec) : 0;
    c->best_t = *t;
    /* column products over the selected rows, and their factorisations */
    int prod[SCHED_NDIM], total = 0, cnt[SCHED_NDIM];
    for (int d = 0; d < SCHED_NDIM; d++) {
        prod[d] = 1;
        for (int i = 0; i < n; i++) prod[d] *= t->f[rows[i]][d];
        cnt[d] = prod[d] > 1 ? factorisations(prod[d], n, NULL) : 0;
        total += cnt[d];
    }
    int *buf = malloc(sizeof(int) * (size_t)(total * n + 1));
    if (!buf) abort();
    /* order: most options first (their splits prune the most) */
    int off = 0;
    for (;;) {
        int bd = -1;
        for (int d = 0; d < SCHED_NDIM; d++)
            if (cnt[d] > 0 && (bd < 0 || cnt[d] > cnt[bd])) bd = d;
        if (bd < 0) break;
        c->cols[c->ncol] = bd;
        c->cnt[c->ncol] = cnt[bd];
        c->opt[c->ncol] = buf + off;
        factorisations(prod[bd], n, buf + off);
        off += cnt[bd] * n;
        c->ncol++;
        cnt[bd] = 0;
    }
    for (int i = 0; i < n; i++) c->selmask |= 1u << rows[i];
    for (int k = 0; k < c->ncol; k++)
        for (int i = 0; i < n; i++) c->t.f[rows[i]][c->cols[k]] = 1;
    /* bound multipliers of the columns k.. (tl_eval_bound in sched_tl.h) */
    for (int ten = 0; ten < SCHED_NT; ten++) c->sufmul[c->ncol][ten] = 1;
    c->sufprod[c->ncol] = 1;
    for (int k = c->ncol - 1; k >= 0; k--) {
        int d = c->cols[k];
        c->sufprod[k] = c->sufprod[k + 1] * prod[d];
        for (int ten = 0; ten < SCHED_NT; ten++) {
            c->sufmul[k][ten] = c->sufmul[k + 1][ten] * sched_bound_mul(l, ten, d, prod[d]);
        }
    }
    sched_cum(&c->t, c->cum);
    sched_tl_from_table(a, l, &c->t, &c->sp);
    for (int i = 0; i < n; i++)
        if (c->sp.rowsp[rows[i]] && c->sp.rowlvl[rows[i]] >= 0) c->fan |= 1u << c->sp.rowlvl[rows[i]];
    if (partial_ok(c, &c->sp)) dfs(c, 0, &c->sp);
    *t = c->best_t;
    if (best) sched_cost_eval(a, l, t, best);
    if (st) *st = c->st;
    free(buf);
    free(c);
    return 0;
}

int sched_bruteforce(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj, int sec,
                     sched_cost *best, sched_bf_stats *st) {
    return bruteforce(a, l, t, n, rows, obj, sec, best, st, 1);
}

int sched_bruteforce_nobound(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj,
                             int sec, sched_cost *best, sched_bf_stats *st) {
    return bruteforce(a, l, t, n, rows, obj, sec, best, st, 0);
}

/* ------------------------------------------------------------------ baselines */

/* one brute-force pass over the present rows among `want` (at least two needed) */
static void bf_rows(const sched_accel *a, const sched_layer *l, sched_table *t, const int *want, int nw, int obj, int sec) {
    int rows[3], n = 0;
    for (int i = 0; i < nw; i++)
        if (a->present[want[i]] && n < 3) rows[n++] = want[i];
    if (n < 2) return;
    sched_bruteforce(a, l, t, n, rows, obj, sec, NULL, NULL);
}

static void random_table(const sched_accel *a, const sched_layer *l, gsl_rng *rng, sched_table *t) {
    int pres[SCHED_NROW], np = 0;
    for (int r = 0; r < SCHED_NROW; r++)
        if (a->present[r]) pres[np++] = r;
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) t->f[r][d] = 1;
    memset(t->ord, 0, sizeof t->ord);
    for (int d = 0; d < SCHED_NDIM; d++) {
        int x = l->d[d];
        for (int p = 2; x > 1; p++)
            while (x % p == 0) {
                x /= p;
                t->f[pres[gsl_rng_uniform_int(rng, (unsigned long)np)]][d] *= p;
            }
    }
}

int sched_baseline(const sched_accel *a, const sched_layer *l, int which, uint64_t seed, int samples, int obj,
                   sched_table *t, sched_cost *c, hw_err *err) {
    if (which == SBASE_COSA) return sched_cosa(a, l, obj, t, c, err);
    sched_table_init(l, t);
    if (sched_check(a, l, t, err)) return -1; /* even the all-in-DRAM table is invalid */
    if (which == SBASE_RANDOM) {
        /* Timeloop-style: sample random factor placements, discard invalid ones (pruned before
         * scoring), keep the best of `samples` valid ones (attempts capped at 50x). */
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, (unsigned long)seed);
        sched_cost best;
        sched_cost_eval(a, l, t, &best);
        double bo = sched_objective(&best, obj);
        sched_table cand;
        int valid = 0;
        for (long att = 0; att < 50L * samples && valid < samples; att++) {
            if ((att & 1023) == 1023 && hw_deadline_check("sched baseline", err)) { /* the server's request deadline */
                gsl_rng_free(rng);
                return -1;
            }
            random_table(a, l, rng, &cand);
            if (sched_check(a, l, &cand, NULL)) continue;
            valid++;
            sched_cost cc;
            sched_cost_eval(a, l, &cand, &cc);
            double o = sched_objective(&cc, obj);
            if (o < bo) {
                bo = o;
                *t = cand;
            }
        }
        gsl_rng_free(rng);
    } else if (which == SBASE_BOTTOMUP) {
        /* NeuroSpector spirit: from off-chip memory inwards; the outermost split minimises DRAM
         * accesses first (objective breaks ties), inner levels minimise the objective. */
        static const int s1[][3] = {{SR_GB, SR_CHX, SR_DRAM}, {SR_GB, SR_CHY, SR_DRAM}};
        static const int s2[][3] = {{SR_LB, SR_PEX, SR_GB}, {SR_LB, SR_PEY, SR_GB}, {SR_REG, SR_MACX, SR_LB},
                                    {SR_REG, SR_MACY, SR_LB}};
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < 2; i++) bf_rows(a, l, t, s1[i], 3, pass ? obj : SOBJ_DRAM, obj);
            for (int i = 0; i < 4; i++) bf_rows(a, l, t, s2[i], 3, obj, -1);
            if (hw_deadline_check("sched baseline", err)) return -1;
        }
    } else {
        /* ZigZag spirit: from the compute units outwards; spatial rows first, maximising PE
         * utilisation (minimum compute cycles, objective breaks ties), then the temporal rows. */
        static const int s1[][3] = {{SR_MACX, SR_MACY, SR_DRAM}, {SR_PEX, SR_PEY, SR_DRAM}, {SR_CHX, SR_CHY, SR_DRAM}};
        static const int s2[][3] = {{SR_REG, SR_LB, SR_DRAM}, {SR_LB, SR_GB, SR_DRAM}};
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < 3; i++) bf_rows(a, l, t, s1[i], 3, pass ? obj : SOBJ_COMPUTE, obj);
            for (int i = 0; i < 2; i++) bf_rows(a, l, t, s2[i], 3, obj, -1);
            if (hw_deadline_check("sched baseline", err)) return -1;
        }
    }
    sched_cost_eval(a, l, t, c);
    return 0;
}
