/* Invariants over random legal play on every dataset program, plus the reference legality
 * check at every step on the small ones, plus the heuristic on every program. */
#include "mm_fixture.h"

#include <math.h>

typedef struct ivl { int32_t s, e, off, n, alias; } ivl;
static int cmp_ivl(const void *a, const void *b) {
    const ivl *x = a, *y = b;
    return x->s != y->s ? x->s - y->s : x->e - y->e;
}

static void check_invariants(const mm_game *g) {
    const mm_problem *p = g->p;
    int32_t T = p->T;
    /* supply never negative, never above its initial value, and conserved */
    double used = 0, demand = 0;
    for (int32_t t = 0; t < T; t++) {
        cr_assert(g->W[t] >= 0, "supply W[%d] = %g < 0", t, g->W[t]);
        cr_assert(g->W[t] <= p->ins[t].supply);
        used += p->ins[t].supply - g->W[t];
    }
    ivl *v = malloc(sizeof(ivl) * (size_t)(g->t + 1));
    int32_t nv = 0;
    int32_t *edges = calloc((size_t)T + 1, sizeof(int32_t));
    for (int32_t b = 0; b < g->t; b++) {
        const mm_buffer *B = &p->buf[b];
        int a = g->act[b];
        cr_assert(a < MM_NACT);
        if (a == MM_DROP) continue;
        cr_assert(g->off[b] >= 0 && g->off[b] + B->ngran <= p->G, "buffer %d offset %d out of CMEM", b, g->off[b]);
        if (g->is[b] <= g->ie[b]) {
            cr_assert(g->is[b] <= B->time && B->time <= g->ie[b], "buffer %d interval misses target_time", b);
            v[nv++] = (ivl){g->is[b], g->ie[b], g->off[b], B->ngran, B->alias};
        }
        if (a == MM_COPY) {
            demand += B->demand;
            if (!B->is_output) cr_assert_eq(g->ce[b], B->time - 1);
            else cr_assert_eq(g->cs[b], B->time + 1);
            cr_assert(g->cs[b] <= g->ce[b] || B->demand == 0);
            for (int32_t t = g->cs[b]; t < g->ce[b]; t++) edges[t]++;
        }
    }
    cr_assert(fabs(used - demand) <= 1e-6 * (demand + 1), "supply used %g != copy demand %g", used, demand);
    /* Eq. 6: no two copy intervals share more than one step */
    for (int32_t t = 0; t < T; t++) cr_assert(edges[t] <= 1, "copy intervals overlap on steps %d..%d", t, t + 1);
    /* no two CMEM allocations of different alias groups overlap in time x offset */
    qsort(v, (size_t)nv, sizeof(ivl), cmp_ivl);
    for (int32_t i = 0; i < nv; i++)
        for (int32_t j = i + 1; j < nv && v[j].s <= v[i].e; j++) {
            if (v[i].alias == v[j].alias) continue;
            int ov = v[i].off < v[j].off + v[j].n && v[j].off < v[i].off + v[i].n;
            cr_assert(!ov, "allocations [%d,%d]@%d+%d and [%d,%d]@%d+%d overlap", v[i].s, v[i].e, v[i].off, v[i].n, v[j].s, v[j].e, v[j].off,
                      v[j].n);
        }
    /* every alias group is all-CMEM or all-HBM, at one offset */
    for (int32_t al = 0; al < p->nalias; al++) {
        int cm = 0, hbm = 0;
        int32_t off = -1;
        for (int32_t k = p->gstart[al]; k < p->gstart[al + 1]; k++) {
            int32_t b = p->gmem[k];
            if (b >= g->t) break;
            if (g->act[b] == MM_DROP) hbm++;
            else {
                cm++;
                if (off < 0) off = g->off[b];
                cr_assert_eq(g->off[b], off, "alias group %d at two offsets", al);
            }
        }
        cr_assert(!(cm && hbm), "alias group %d split between CMEM and HBM", al);
    }
    free(v);
    free(edges);
}

Test(mmap_invariants, random_play_on_every_dataset_program, .timeout = 120) {
    hw_err err;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < mm_dataset_count(); i++) {
        mm_problem *p = mm_dataset_load(mm_dataset_name(i), (uint64_t)i, &err);
        cr_assert(p, "%s", err.msg);
        mm_game *g = mm_game_new(p);
        int small = p->nbuf <= 400;
        int episodes = small ? 3 : 1;
        for (int ep = 0; ep < episodes; ep++) {
            mm_game_reset(g);
            gsl_rng_set(rng, (unsigned long)(100 * i + ep));
            int32_t mid = p->nbuf / 2;
            while (!g->done) {
                if (small) ref_check(g);
                cr_assert(mm_game_nlegal(g) > 0);
                mm_game_step(g, mm_policy_random(g, rng));
                if (g->t == mid) check_invariants(g);
            }
            check_invariants(g);
            if (g->lost) cr_assert_float_eq(mm_game_return(g), 0.0, 1e-9);
        }
        /* the heuristic completes every program and is never slower than all-HBM */
        mm_play(g, 0, 0);
        cr_assert(g->done && !g->lost, "%s: heuristic lost", p->name);
        check_invariants(g);
        cr_assert(mm_game_latency(g) <= p->lat_hbm, "%s", p->name);
        mm_game_free(g);
        mm_problem_free(p);
    }
    gsl_rng_free(rng);
}
