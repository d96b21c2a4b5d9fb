/* mm_fixture.h - shared helpers for the mmap tests: hand-built problems and an independent,
 * naive reference of Appendix A legality (full time x offset grid, recomputed from scratch). */
#ifndef MM_FIXTURE_H
#define MM_FIXTURE_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "mmap/mmap.h"

static inline mm_problem *fx_problem(const char *text) {
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    cr_assert(doc, "fixture JSON: %s (line %d)", je.text, je.line);
    hw_err err = {0};
    mm_problem *p = mm_problem_from_json(doc, &err);
    json_decref(doc);
    cr_assert(p, "fixture: %s", err.msg);
    return p;
}

/* Fixture 1: Eq. 5 / Eq. 6 (two inputs of instruction 4, unit supplies). */
#define FX1 "{\"cmem\":{\"max_size\":4,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":[" \
    "{\"supply\":1,\"buffers\":[],\"latency\":[1]},{\"supply\":1,\"buffers\":[],\"latency\":[1]}," \
    "{\"supply\":1,\"buffers\":[],\"latency\":[1]},{\"supply\":1,\"buffers\":[],\"latency\":[1]}," \
    "{\"supply\":1,\"buffers\":[{\"size\":3,\"tensor_id\":1,\"live_range\":[0,4]},{\"size\":1,\"tensor_id\":2,\"live_range\":[0,4]}]," \
    "\"latency\":[10,6,9,5]}]}"

/* Fixture 2: offsets, NoCopy (live range, covered), alias offsets (Eq. 4). */
#define FX2 "{\"name\":\"fx2\",\"cmem\":{\"max_size\":5,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":[" \
    "{\"supply\":10,\"buffers\":[{\"size\":2,\"is_output\":true,\"tensor_id\":1,\"live_range\":[0,3]}],\"latency\":[5,3]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":2,\"tensor_id\":2,\"live_range\":[0,1]}],\"latency\":[5,3]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":1,\"tensor_id\":3,\"alias_id\":7,\"live_range\":[0,2]}],\"latency\":[5,4]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":2,\"tensor_id\":1,\"live_range\":[1,3]}," \
    "{\"size\":1,\"is_output\":true,\"tensor_id\":4,\"alias_id\":7,\"live_range\":[3,3]}],\"latency\":[8,6,7,5]}]}"

/* Fixture 3: an alias group that can be blocked (lost game), optimum 5. */
#define FX3 "{\"cmem\":{\"max_size\":1,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":[" \
    "{\"supply\":10,\"buffers\":[],\"latency\":[1]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":1,\"tensor_id\":1,\"alias_id\":5,\"live_range\":[0,1]}],\"latency\":[4,2]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":1,\"is_output\":true,\"tensor_id\":2,\"live_range\":[2,3]}],\"latency\":[4,3]}," \
    "{\"supply\":10,\"buffers\":[{\"size\":1,\"tensor_id\":1,\"alias_id\":5,\"live_range\":[0,3]}],\"latency\":[4,1]}]}"

typedef struct ref_opt { int legal; int32_t s, e, off; } ref_opt;

/* Naive reference for the current buffer of g: recomputes supply, copy intervals and a full
 * time x granule ownership grid from the decided buffers. */
static inline void ref_options(const mm_game *g, ref_opt out[MM_NACT]) {
    const mm_problem *p = g->p;
    int32_t T = p->T, G = p->G, b = g->t;
    const mm_buffer *B = &p->buf[b];
    double *W = calloc((size_t)T, sizeof(double));
    int32_t *grid = malloc(sizeof(int32_t) * (size_t)T * (size_t)G);
    for (int32_t t = 0; t < T; t++) W[t] = p->ins[t].supply;
    for (int64_t i = 0; i < (int64_t)T * G; i++) grid[i] = -1;
    int gstate = 0; /* 0 none, 1 cmem, 2 hbm */
    int32_t goff = -1;
    for (int32_t d = 0; d < b; d++) {
        const mm_buffer *D = &p->buf[d];
        int a = g->act[d];
        if (D->alias == B->alias) {
            if (a == MM_DROP) gstate = gstate ? gstate : 2;
            else {
                gstate = gstate ? gstate : 1;
                if (goff < 0) goff = g->off[d];
            }
        }
        if (a == MM_DROP) continue;
        for (int32_t t = g->is[d]; t <= g->ie[d]; t++)
            for (int32_t o = g->off[d]; o < g->off[d] + D->ngran; o++) grid[(size_t)t * G + o] = D->alias;
        if (a == MM_COPY) {
            double rem = D->demand;
            if (!D->is_output)
                for (int32_t t = g->ce[d]; t >= g->cs[d]; t--) { double u = W[t] < rem ? W[t] : rem; W[t] -= u; rem -= u; }
            else
                for (int32_t t = g->cs[d]; t <= g->ce[d]; t++) { double u = W[t] < rem ? W[t] : rem; W[t] -= u; rem -= u; }
        }
    }
    /* lowest offset over [s,e] (Eq. 4: the group's offset if it has one) */
#define REF_FIT(S, E, OFF)                                                                   \
    do {                                                                                   \
        (OFF) = -1;                                                                        \
        for (int32_t o = 0; o + B->ngran <= G && (OFF) < 0; o++) {                         \
            if (goff >= 0 && o != goff) continue;                                          \
            int ok = 1;                                                                    \
            for (int32_t t = (S); t <= (E) && ok; t++)                                     \
                for (int32_t q = o; q < o + B->ngran; q++) {                               \
                    int32_t own = grid[(size_t)t * G + q];                                 \
                    if (own >= 0 && own != B->alias) ok = 0;                               \
                }                                                                          \
            if (ok) (OFF) = o;                                                             \
        }                                                                                  \
    } while (0)
    for (int a = 0; a < MM_NACT; a++) out[a] = (ref_opt){0, 1, 0, -1};
    out[MM_DROP].legal = gstate != 1;
    if (gstate != 2) {
        /* Copy: latest s (earliest e) with Eq. 5 and Eq. 6 (|copy cap other copy| <= 1 step) */
        int32_t tt = B->time, best = -1;
        if (!B->is_output) {
            int32_t lb = p->prefetch_after_def ? B->lr_start : 0;
            for (int32_t s = tt - 1; s >= lb && best < 0; s--) {
                double sum = 0;
                for (int32_t t = s; t < tt; t++) sum += W[t];
                if (sum < B->demand) continue;
                int ok = 1;
                for (int32_t d = 0; d < b && ok; d++) {
                    if (g->act[d] != MM_COPY) continue;
                    int32_t lo = s > g->cs[d] ? s : g->cs[d], hi = tt - 1 < g->ce[d] ? tt - 1 : g->ce[d];
                    if (hi - lo + 1 > 1) ok = 0;
                }
                if (ok) best = s;
            }
            if (best >= 0) { out[MM_COPY].s = best; out[MM_COPY].e = tt; }
        } else {
            for (int32_t e = tt + 1; e < T && best < 0; e++) {
                double sum = 0;
                for (int32_t t = tt + 1; t <= e; t++) sum += W[t];
                if (sum < B->demand) continue;
                int ok = 1;
                for (int32_t d = 0; d < b && ok; d++) {
                    if (g->act[d] != MM_COPY) continue;
                    int32_t lo = tt + 1 > g->cs[d] ? tt + 1 : g->cs[d], hi = e < g->ce[d] ? e : g->ce[d];
                    if (hi - lo + 1 > 1) ok = 0;
                }
                if (ok) best = e;
            }
            if (best >= 0) { out[MM_COPY].s = tt; out[MM_COPY].e = best; }
        }
        if (best >= 0) {
            REF_FIT(out[MM_COPY].s, out[MM_COPY].e, out[MM_COPY].off);
            out[MM_COPY].legal = out[MM_COPY].off >= 0;
        }
        /* NoCopy */
        if (B->is_output) {
            out[MM_NOCOPY].s = B->lr_start;
            out[MM_NOCOPY].e = B->lr_end;
            REF_FIT(B->lr_start, B->lr_end, out[MM_NOCOPY].off);
            out[MM_NOCOPY].legal = out[MM_NOCOPY].off >= 0;
        } else {
            int32_t end = -1, eoff = -1;
            for (int32_t d = 0; d < b; d++)
                if (p->buf[d].tensor == B->tensor && g->act[d] != MM_DROP && g->is[d] <= g->ie[d] && g->ie[d] > end) {
                    end = g->ie[d];
                    eoff = g->off[d];
                }
            if (end >= 0 && end >= tt) {
                out[MM_NOCOPY] = (ref_opt){goff < 0 || goff == eoff, tt + 1, tt, eoff};
            } else if (end >= 0) {
                out[MM_NOCOPY].s = end + 1;
                out[MM_NOCOPY].e = tt;
                REF_FIT(end + 1, tt, out[MM_NOCOPY].off);
                out[MM_NOCOPY].legal = out[MM_NOCOPY].off >= 0;
            }
        }
    }
#undef REF_FIT
    free(W);
    free(grid);
}

/* Asserts the engine's options for the current buffer equal the reference. */
static inline void ref_check(const mm_game *g) {
    ref_opt r[MM_NACT];
    ref_options(g, r);
    for (int a = 0; a < MM_NACT; a++) {
        cr_assert_eq(mm_game_legal(g, a), r[a].legal, "buffer %d action %s: engine legal=%d reference legal=%d", g->t,
                     mm_action_names[a], mm_game_legal(g, a), r[a].legal);
        if (r[a].legal && a != MM_DROP) {
            cr_assert_eq(g->opt[a].s, r[a].s, "buffer %d %s: start %d vs %d", g->t, mm_action_names[a], g->opt[a].s, r[a].s);
            cr_assert_eq(g->opt[a].e, r[a].e, "buffer %d %s: end %d vs %d", g->t, mm_action_names[a], g->opt[a].e, r[a].e);
            cr_assert_eq(g->opt[a].off, r[a].off, "buffer %d %s: offset %d vs %d", g->t, mm_action_names[a], g->opt[a].off, r[a].off);
        }
    }
}

#endif
