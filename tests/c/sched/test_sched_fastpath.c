/* The sched-v0 cost core's fast paths against the straightforward formulas, bit for bit.
 * sched_cost_eval (per-thread accelerator spec, closed-form walks, the MAC fan-out's filtered
 * and memoised link counts, the partition shortcut, inline rounding) must give exactly the
 * numbers of sched_tl.c built with TL_FAST 0 (tl_reference.c: the general Timeloop walk for
 * every tile of every tensor, a fresh spec per table) on random valid tables with random loop
 * orders, on every built-in accelerator, on layers with strides, depthwise and 1x1 shapes,
 * with the accelerators interleaved so the spec cache must notice every change. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/sched_internal.h"
#include "tl_reference.h"

static void builtin(int i, sched_accel *a) {
    json_t *s = json_string(sched_builtin_name(i));
    hw_err err;
    int rc = sched_accel_resolve(s, "acc", a, &err);
    json_decref(s);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

/* a random table: every prime factor of every dimension in a random present row; a random
 * loop order on some storage rows */
static void random_table(const sched_accel *a, const sched_layer *l, gsl_rng *rng, sched_table *t) {
    int pres[SCHED_NROW], np = 0;
    for (int r = 0; r < SCHED_NROW; r++)
        if (a->present[r]) pres[np++] = r;
    sched_table_init(l, t);
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) t->f[r][d] = 1;
    for (int d = 0; d < SCHED_NDIM; d++) {
        int x = l->d[d];
        for (int p = 2; x > 1; p++)
            while (x % p == 0) {
                x /= p;
                t->f[pres[gsl_rng_uniform_int(rng, (unsigned long)np)]][d] *= p;
            }
    }
    static const int srow[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
    for (int k = 0; k < 4; k++) {
        if (!a->present[srow[k]] || gsl_rng_uniform(rng) < 0.6) continue;
        int o[SCHED_NDIM] = {0, 1, 2, 3, 4, 5, 6, 7};
        for (int i = SCHED_NDIM - 1; i > 0; i--) {
            int j = (int)gsl_rng_uniform_int(rng, (unsigned long)i + 1), x = o[i];
            o[i] = o[j], o[j] = x;
        }
        for (int i = 0; i < SCHED_NDIM; i++) t->ord[srow[k]][i] = (unsigned char)(o[i] + 1);
    }
}

/* sched_cost field by field, bit for bit (the doubles as stored, then the int) */
static void expect_same_cost(const sched_cost *x, const sched_cost *y, const char *what, int id) {
    size_t nd = offsetof(sched_cost, bound_row) / sizeof(double);
    const double *p = (const double *)x, *q = (const double *)y;
    for (size_t i = 0; i < nd; i++)
        cr_assert(!memcmp(&p[i], &q[i], sizeof p[i]), "%s table %d: double #%zu of sched_cost differs: %.17g vs %.17g", what,
                  id, i, p[i], q[i]);
    cr_assert_eq(x->bound_row, y->bound_row, "%s table %d: bound row", what, id);
}

Test(sched_fastpath, cost_core_matches_straightforward_formulas, .timeout = 120) {
    enum { NA = 5 };
    sched_accel acc[NA];
    for (int i = 0; i < 4; i++) builtin(i, &acc[i]);
    /* Eyeriss v2 again with other energies and bandwidths: same shape, different numbers (the
     * spec cache compares contents, not names) */
    acc[4] = acc[1];
    for (int r = 0; r < SCHED_NROW; r++) acc[4].e_word[r] *= 1.5, acc[4].bw[r] *= 0.5;
    static const sched_layer layers[] = {
        {"conv3x3", {1, 64, 1, 64, 3, 3, 28, 28}, 1},   {"conv3x3/2", {1, 32, 1, 64, 3, 3, 26, 26}, 2},
        {"conv7x7/2", {1, 3, 1, 64, 7, 7, 56, 56}, 2},  {"dw3x3", {1, 1, 96, 1, 3, 3, 14, 14}, 1},
        {"pw", {2, 128, 1, 64, 1, 1, 14, 14}, 1},      {"1x7", {1, 48, 1, 64, 1, 7, 17, 17}, 1},
        {"fc", {4, 512, 1, 250, 1, 1, 1, 1}, 1},        {"grouped", {1, 8, 4, 16, 3, 3, 12, 12}, 1},
    };
    int nl = (int)(sizeof layers / sizeof layers[0]);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 15);
    int compared = 0, tries = 0;
    while (compared < 3000 && tries < 200000) {
        tries++;
        const sched_accel *a = &acc[gsl_rng_uniform_int(rng, NA)]; /* interleaved */
        const sched_layer *l = &layers[gsl_rng_uniform_int(rng, (unsigned long)nl)];
        sched_table t;
        random_table(a, l, rng, &t);
        if (sched_check(a, l, &t, NULL)) continue;
        sched_cost fast, ref;
        sched_cost_eval(a, l, &t, &fast);
        tl_spec s;
        tl_result r;
        sched_tl_from_table(a, l, &t, &s);
        cr_assert_eq(tlref_check(&s, &r), TL_OK, "table %d: the reference rejects a table sched_check accepts", compared);
        tlref_eval(&s, &r);
        sched_cost_from_tl(&s, &r, &ref);
        expect_same_cost(&fast, &ref, a->name, compared);
        /* and the spec built in two parts for the brute force equals the one-shot spec */
        tl_spec s2;
        sched_tl_arch(a, l, &s2);
        sched_tl_set_table(a, &t, &s2);
        tl_result r2;
        tl_eval(&s2, &r2);
        cr_assert(!memcmp(&r2.energy, &r.energy, sizeof r.energy) && !memcmp(&r2.cycles, &r.cycles, sizeof r.cycles),
                  "table %d: two-part spec differs", compared);
        compared++;
    }
    gsl_rng_free(rng);
    cr_assert_geq(compared, 3000, "only %d valid random tables in %d tries", compared, tries);
}
