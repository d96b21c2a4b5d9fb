/* MMapGame engine: hand-built programs checked step by step against Appendix A, exhaustive
 * search over all action sequences against an independent reference, optimum by search. */
#include "mm_fixture.h"

#include <math.h>

static void opt_is(const mm_game *g, int a, int legal, int32_t s, int32_t e, int32_t off) {
    cr_assert_eq(mm_game_legal(g, a), legal, "buffer %d %s legal", g->t, mm_action_names[a]);
    if (!legal) return;
    cr_assert_eq(g->opt[a].s, s, "buffer %d %s start %d, expected %d", g->t, mm_action_names[a], g->opt[a].s, s);
    cr_assert_eq(g->opt[a].e, e, "buffer %d %s end %d, expected %d", g->t, mm_action_names[a], g->opt[a].e, e);
    cr_assert_eq(g->opt[a].off, off, "buffer %d %s offset %d, expected %d", g->t, mm_action_names[a], g->opt[a].off, off);
}

Test(mmap_game, copy_latest_start_eq5_and_eq6) {
    mm_problem *p = fx_problem(FX1);
    mm_game *g = mm_game_new(p);
    /* X: demand 3 over unit supplies -> latest s = 1, I = [1,4], copy [1,3], offset 0 */
    opt_is(g, MM_COPY, 1, 1, 4, 0);
    cr_assert_eq(g->opt[MM_COPY].cs, 1);
    cr_assert_eq(g->opt[MM_COPY].ce, 3);
    opt_is(g, MM_NOCOPY, 0, 0, 0, 0); /* no earlier allocation of the tensor */
    cr_assert(mm_game_legal(g, MM_DROP));
    cr_assert_float_eq(mm_game_benefit(g, 0), 4.0, 1e-12); /* L({}) - L({X}) = 10 - 6 */
    { double r_ = mm_game_step(g, MM_COPY); cr_assert_float_eq(r_, 4.0, 1e-12); }
    /* supply consumed on steps 1..3 */
    double expW[5] = {1, 0, 0, 0, 1};
    for (int t = 0; t < 5; t++) cr_assert_float_eq(g->W[t], expW[t], 1e-12, "W[%d]", t);
    /* Y: step 3 has no supply left; extending to step 2 would overlap X's copy in 2 steps (Eq. 6) */
    opt_is(g, MM_COPY, 0, 0, 0, 0);
    opt_is(g, MM_NOCOPY, 0, 0, 0, 0);
    cr_assert_eq(mm_game_nlegal(g), 1);
    /* benefit of Y is updated with X in CMEM: L({X}) - L({X,Y}) = 6 - 5 */
    cr_assert_float_eq(mm_game_benefit(g, 1), 1.0, 1e-12);
    { double r_ = mm_game_step(g, MM_DROP); cr_assert_float_eq(r_, 0.0, 1e-12); }
    cr_assert(g->done && !g->lost);
    cr_assert_float_eq(mm_game_return(g), 4.0, 1e-12);
    cr_assert_float_eq(mm_game_latency(g), 1 + 1 + 1 + 1 + 6, 1e-12);
    cr_assert_float_eq(p->lat_hbm, 14, 1e-12);
    /* the other branch: drop X, then Y copies on step 3 alone, benefit 10 - 9 */
    mm_game_undo(g);
    mm_game_undo(g);
    mm_game_step(g, MM_DROP);
    opt_is(g, MM_COPY, 1, 3, 4, 0);
    { double r_ = mm_game_step(g, MM_COPY); cr_assert_float_eq(r_, 1.0, 1e-12); }
    mm_game_free(g);
    mm_problem_free(p);
}

Test(mmap_game, offsets_nocopy_and_alias_offsets) {
    mm_problem *p = fx_problem(FX2);
    mm_game *g = mm_game_new(p);
    /* A (output, t=0): Copy evicts over (0, 1]; NoCopy keeps it for its live range [0,3] */
    opt_is(g, MM_COPY, 1, 0, 1, 0);
    opt_is(g, MM_NOCOPY, 1, 0, 3, 0);
    { double r_ = mm_game_step(g, MM_NOCOPY); cr_assert_float_eq(r_, 2.0, 1e-12); }
    /* B (input, t=1): copy over step 0; lowest free offset above A is 2 */
    opt_is(g, MM_COPY, 1, 0, 1, 2);
    opt_is(g, MM_NOCOPY, 0, 0, 0, 0);
    { double r_ = mm_game_step(g, MM_COPY); cr_assert_float_eq(r_, 2.0, 1e-12); }
    cr_assert_float_eq(g->W[0], 8.0, 1e-12);
    /* C (input, t=2, alias 7): granules 0..3 busy at t=1 -> offset 4 */
    cr_assert(mm_game_backup_safe(g));
    opt_is(g, MM_COPY, 1, 1, 2, 4);
    { double r_ = mm_game_step(g, MM_COPY); cr_assert_float_eq(r_, 1.0, 1e-12); }
    cr_assert(!mm_game_backup_safe(g), "alias group 7 is open in CMEM");
    /* A again (t=3): still in CMEM (NoCopy interval empty, A's offset); Copy would go to offset 2 */
    opt_is(g, MM_NOCOPY, 1, 4, 3, 0);
    opt_is(g, MM_COPY, 1, 2, 3, 2);
    { double r_ = mm_game_step(g, MM_NOCOPY); cr_assert_float_eq(r_, 2.0, 1e-12); }
    /* D (output, alias 7): Drop would split the group; NoCopy at the group's offset 4; no step for a copy-out */
    cr_assert(!mm_game_legal(g, MM_DROP));
    opt_is(g, MM_COPY, 0, 0, 0, 0);
    opt_is(g, MM_NOCOPY, 1, 3, 3, 4);
    { double r_ = mm_game_step(g, MM_NOCOPY); cr_assert_float_eq(r_, 1.0, 1e-12); } /* L({A}) - L({A,D}) = 6 - 5 */
    cr_assert(g->done && !g->lost);
    cr_assert(mm_game_backup_safe(g));
    cr_assert_float_eq(mm_game_return(g), 8.0, 1e-12);
    cr_assert_float_eq(mm_game_latency(g), 3 + 3 + 4 + 5, 1e-12);
    cr_assert_float_eq(p->lat_hbm, 23, 1e-12);
    mm_game_free(g);
    mm_problem_free(p);
}

Test(mmap_game, blocked_alias_group_loses_with_zero_return) {
    mm_problem *p = fx_problem(FX3);
    mm_game *g = mm_game_new(p);
    { double r_ = mm_game_step(g, MM_COPY); cr_assert_float_eq(r_, 2.0, 1e-12); }
    /* S kept for its live range blocks the only granule at t=3 where R must sit (Eq. 4) */
    double r = mm_game_step(g, MM_NOCOPY);
    cr_assert(g->done && g->lost);
    cr_assert_float_eq(r, -2.0, 1e-12, "the losing step brings the return to 0");
    cr_assert_float_eq(mm_game_return(g), 0.0, 1e-12);
    mm_game_undo(g);
    cr_assert(!g->done && !g->lost);
    { double r_ = mm_game_step(g, MM_DROP); cr_assert_float_eq(r_, 0.0, 1e-12); }
    cr_assert(!mm_game_legal(g, MM_DROP));
    cr_assert(mm_game_legal(g, MM_COPY) && mm_game_legal(g, MM_NOCOPY));
    cr_assert_eq(g->opt[MM_NOCOPY].s, 2); /* extends P's interval [0,1] */
    { double r_ = mm_game_step(g, MM_NOCOPY); cr_assert_float_eq(r_, 3.0, 1e-12); }
    cr_assert_float_eq(mm_game_return(g), 5.0, 1e-12);
    mm_game_free(g);
    mm_problem_free(p);
}

/* Exhaustive DFS over every action sequence: at every state the engine's legality, intervals
 * and offsets equal the naive reference; returns the best complete return. */
static double dfs(mm_game *g, int *leaves) {
    if (g->done) {
        (*leaves)++;
        return g->lost ? -INFINITY : mm_game_return(g);
    }
    ref_check(g);
    double best = -INFINITY;
    for (int a = 0; a < MM_NACT; a++) {
        if (!mm_game_legal(g, a)) continue;
        mm_game_step(g, a);
        double v = dfs(g, leaves);
        if (v > best) best = v;
        mm_game_undo(g);
    }
    return best;
}

Test(mmap_game, exhaustive_legality_and_optimum) {
    const char *fx[3] = {FX1, FX2, FX3};
    double opt[3] = {4, 8, 5};
    for (int i = 0; i < 3; i++) {
        mm_problem *p = fx_problem(fx[i]);
        mm_game *g = mm_game_new(p);
        int leaves = 0;
        double best = dfs(g, &leaves);
        cr_assert(leaves > 1);
        cr_assert_float_eq(best, opt[i], 1e-12, "fixture %d optimum %g, expected %g", i + 1, best, opt[i]);
        /* the heuristic (with backtracking) completes and cannot beat the optimum */
        double h = mm_play(g, 0, 0);
        cr_assert(g->done && !g->lost);
        cr_assert(h <= best + 1e-12);
        mm_game_free(g);
        mm_problem_free(p);
    }
}

Test(mmap_game, exhaustive_small_generated_program) {
    /* a 2-layer training MLP: DFS on a prefix (3^k branches) checked against the reference */
    mm_gen_params gp = {"mlp", 1, 4, 2, 256, 1, 0};
    hw_err err;
    mm_problem *p = mm_generate(&gp, "mlp2", &err);
    cr_assert(p, "%s", err.msg);
    mm_game *g = mm_game_new(p);
    /* walk to several depths with random legal play, then exhaust 6 more decisions */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int start = 0; start + 6 < p->nbuf; start += 7) {
        uint8_t acts[512];
        mm_game_reset(g);
        gsl_rng_set(rng, (unsigned long)start);
        while (g->t < start && !g->done) mm_game_step(g, mm_policy_random(g, rng));
        if (g->done) continue;
        int32_t n = g->t;
        memcpy(acts, g->act, (size_t)n);
        /* bounded DFS */
        int depth = 0, stack[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        while (depth >= 0) {
            if (depth == 6 || g->done) {
                depth--;
                if (depth >= 0) mm_game_undo(g);
                continue;
            }
            if (stack[depth] == -1) ref_check(g);
            int a = stack[depth] + 1;
            while (a < MM_NACT && !mm_game_legal(g, a)) a++;
            if (a >= MM_NACT) {
                stack[depth] = -1;
                depth--;
                if (depth >= 0) mm_game_undo(g);
                continue;
            }
            stack[depth] = a;
            mm_game_step(g, a);
            depth++;
        }
        cr_assert_eq(g->t, n);
        cr_assert_eq(memcmp(g->act, acts, (size_t)n), 0, "undo returns to the same prefix");
    }
    gsl_rng_free(rng);
    mm_game_free(g);
    mm_problem_free(p);
}

Test(mmap_game, undo_and_goto_restore_exact_state) {
    hw_err err;
    mm_problem *p = mm_dataset_load("inference_lstm", 3, &err);
    cr_assert(p, "%s", err.msg);
    mm_game *g = mm_game_new(p), *h = mm_game_new(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    while (g->t < 300 && !g->done) mm_game_step(g, mm_policy_random(g, rng));
    /* h reaches the same state by a detour: random play to 500, then goto g's prefix */
    gsl_rng_set(rng, 6);
    while (h->t < 500 && !h->done) mm_game_step(h, mm_policy_random(h, rng));
    cr_assert_eq(mm_game_goto(h, g->act, g->t), 0);
    cr_assert_eq(h->t, g->t);
    cr_assert_eq(memcmp(h->W, g->W, sizeof(double) * (size_t)p->T), 0, "supply restored bit-exactly");
    cr_assert_eq(memcmp(h->edge, g->edge, sizeof(int32_t) * (size_t)p->T), 0);
    cr_assert_eq(memcmp(h->agg, g->agg, sizeof(uint64_t) * (size_t)(2 * g->P) * (size_t)g->words), 0, "occupancy restored");
    cr_assert_eq(memcmp(h->cover, g->cover, sizeof(uint64_t) * (size_t)(2 * g->P) * (size_t)g->words), 0);
    cr_assert_eq(memcmp(h->opt, g->opt, sizeof g->opt), 0);
    cr_assert_eq(mm_game_return(h), mm_game_return(g));
    cr_assert_eq(h->open_cmem, g->open_cmem);
    gsl_rng_free(rng);
    mm_game_free(g);
    mm_game_free(h);
    mm_problem_free(p);
}

/* Every field of two games' states, bit for bit (the undo logs' lengths included). */
static void same_state(const mm_game *a, const mm_game *b, int round) {
    const mm_problem *p = a->p;
    size_t nb = (size_t)p->nbuf, T = (size_t)p->T, nodes = (size_t)(2 * a->P) * (size_t)a->words;
    cr_assert_eq(a->t, b->t, "round %d", round);
    cr_assert_eq(a->done, b->done, "round %d", round);
    cr_assert_eq(a->lost, b->lost, "round %d", round);
    cr_assert_eq(memcmp(a->act, b->act, nb), 0, "round %d: actions", round);
    cr_assert_eq(memcmp(a->off, b->off, nb * sizeof(int32_t)), 0, "round %d: offsets", round);
    cr_assert_eq(memcmp(a->is, b->is, nb * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->ie, b->ie, nb * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->cs, b->cs, nb * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->ce, b->ce, nb * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->reward, b->reward, nb * sizeof(double)), 0, "round %d: rewards", round);
    cr_assert_eq(memcmp(a->retp, b->retp, ((size_t)a->t + 1) * sizeof(double)), 0, "round %d: returns", round);
    cr_assert_eq(memcmp(a->W, b->W, T * sizeof(double)), 0, "round %d: supply", round);
    cr_assert_eq(memcmp(a->edge, b->edge, T * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->imask, b->imask, T), 0, "round %d", round);
    cr_assert_eq(memcmp(a->tensor_end, b->tensor_end, (size_t)p->ntensor * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->tensor_off, b->tensor_off, (size_t)p->ntensor * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->group_off, b->group_off, (size_t)p->nalias * sizeof(int32_t)), 0, "round %d", round);
    cr_assert_eq(memcmp(a->group_state, b->group_state, (size_t)p->nalias), 0, "round %d", round);
    cr_assert_eq(a->open_cmem, b->open_cmem, "round %d", round);
    cr_assert_eq(memcmp(a->cover, b->cover, nodes * sizeof(uint64_t)), 0, "round %d: occupancy", round);
    cr_assert_eq(memcmp(a->agg, b->agg, nodes * sizeof(uint64_t)), 0, "round %d: occupancy", round);
    cr_assert_eq(memcmp(a->opt, b->opt, sizeof a->opt), 0, "round %d: options", round);
    cr_assert_eq(a->wlog_n, b->wlog_n, "round %d", round);
    cr_assert_eq(a->plog_n, b->plog_n, "round %d", round);
    cr_assert_eq(a->ncopy, b->ncopy, "round %d", round);
    cr_assert_eq(a->nnocopy, b->nnocopy, "round %d", round);
    cr_assert_eq(a->ndrop, b->ndrop, "round %d", round);
}

Test(mmap_game, goto_rewind_matches_replay_from_reset) {
    /* mm_game_goto rewinds with one options computation at the end (the fast path); the simple
     * path is a fresh game replaying the prefix from reset. On random games of a training
     * program with lost games and rewinds of every length, both reach the same state. */
    hw_err err;
    mm_problem *p = mm_dataset_load("mlp_train_batch_16", 0, &err);
    cr_assert(p, "%s", err.msg);
    mm_game *g = mm_game_new(p), *h = mm_game_new(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    uint8_t *pre = malloc((size_t)p->nbuf);
    int losses = 0;
    for (int round = 0; round < 40; round++) {
        /* play on (random legal moves) until lost, done or a random depth */
        int32_t stop = g->t + 1 + (int32_t)gsl_rng_uniform_int(rng, (unsigned long)p->nbuf);
        while (!g->done && g->t < stop) mm_game_step(g, mm_policy_random(g, rng));
        losses += g->lost;
        /* back to a random earlier prefix of this game */
        int32_t k = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)g->t + 1);
        memcpy(pre, g->act, (size_t)k);
        cr_assert_eq(mm_game_goto(g, pre, k), 0);
        mm_game_reset(h);
        for (int32_t i = 0; i < k; i++) {
            cr_assert(mm_game_legal(h, pre[i]));
            mm_game_step(h, pre[i]);
        }
        same_state(g, h, round);
    }
    cr_assert(losses > 0, "the random games lost (the rewinds cover lost states)");
    free(pre);
    gsl_rng_free(rng);
    mm_game_free(g);
    mm_game_free(h);
    mm_problem_free(p);
}

Test(mmap_game, backup_safe_means_drop_all_completes) {
    /* section 4.3.2: when no open alias group sits in CMEM, dropping every remaining buffer is
     * a complete solution; when the flag is false it need not be */
    hw_err err;
    mm_problem *p = mm_dataset_load("mlp_train_batch_16", 0, &err);
    cr_assert(p, "%s", err.msg);
    mm_game *g = mm_game_new(p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int safe_seen = 0, unsafe_seen = 0;
    for (int ep = 0; ep < 4; ep++) {
        mm_game_reset(g);
        gsl_rng_set(rng, (unsigned long)ep);
        while (!g->done) {
            int32_t here = g->t;
            if (mm_game_backup_safe(g)) {
                safe_seen++;
                while (!g->done) {
                    cr_assert(mm_game_legal(g, MM_DROP), "Drop illegal at %d after a backup-safe state %d", g->t, here);
                    mm_game_step(g, MM_DROP);
                }
                cr_assert(!g->lost);
                while (g->t > here) mm_game_undo(g);
            } else {
                unsafe_seen++;
            }
            mm_game_step(g, mm_policy_random(g, rng));
        }
    }
    cr_assert(safe_seen > 0 && unsafe_seen > 0);
    gsl_rng_free(rng);
    mm_game_free(g);
    mm_problem_free(p);
}

Test(mmap_game, prefetch_after_definition_bounds_input_copies) {
    /* input at t=3 whose value is defined at t=1 (live_range starts at 2): with the bound the
     * copy cannot reach back to steps 0-1; Appendix A literally (false) lets it */
    const char *fmt = "{\"prefetch_after_definition\":%s,\"cmem\":{\"max_size\":4,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":["
                      "{\"supply\":1,\"buffers\":[],\"latency\":[1]},{\"supply\":1,\"buffers\":[],\"latency\":[1]},"
                      "{\"supply\":1,\"buffers\":[],\"latency\":[1]},"
                      "{\"supply\":1,\"buffers\":[{\"size\":2,\"tensor_id\":1,\"live_range\":[2,3]}],\"latency\":[5,3]}]}";
    char buf[1024];
    snprintf(buf, sizeof buf, fmt, "true");
    mm_problem *p = fx_problem(buf);
    mm_game *g = mm_game_new(p);
    cr_assert(!mm_game_legal(g, MM_COPY), "demand 2 needs steps 1-2, but the value exists only from step 2");
    mm_game_free(g);
    mm_problem_free(p);
    snprintf(buf, sizeof buf, fmt, "false");
    p = fx_problem(buf);
    g = mm_game_new(p);
    cr_assert(mm_game_legal(g, MM_COPY));
    cr_assert_eq(g->opt[MM_COPY].s, 1);
    mm_game_free(g);
    mm_problem_free(p);
}
