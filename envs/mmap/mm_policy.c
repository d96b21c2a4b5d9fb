/* mm_policy.c - baselines: a deterministic heuristic in the spirit of XLA's memory-space
 * assignment, and random legal play. */
#include <math.h>
#include <stdlib.h>

#include "mmap.h"

/* Heuristic knobs (logical time steps / fraction of CMEM). */
#define H_KEEP_GAP 32      /* keep a tensor in CMEM (NoCopy) across gaps up to this long */
#define H_OUT_KEEP 128     /* keep an output for its live range if it is at most this long */
#define H_GROUP_SPAN 8     /* start an aliased group in CMEM only if all its uses are this close */
#define H_MAX_FRAC 0.5     /* never place buffers larger than this fraction of CMEM */

static int len(const mm_option *o) { return o->s <= o->e ? o->e - o->s + 1 : 0; }

int mm_policy_heuristic(const mm_game *g) {
    const mm_problem *p = g->p;
    const mm_buffer *B = &p->buf[g->t];
    const mm_option *cp = &g->opt[MM_COPY], *nc = &g->opt[MM_NOCOPY];
    if (!g->opt[MM_DROP].legal) {
        /* the alias group is in CMEM: follow it, preferring the cheaper allocation */
        if (nc->legal && (!cp->legal || len(nc) <= len(cp) + H_KEEP_GAP)) return MM_NOCOPY;
        if (cp->legal) return MM_COPY;
        return nc->legal ? MM_NOCOPY : MM_DROP;
    }
    int32_t gsz = p->gstart[B->alias + 1] - p->gstart[B->alias];
    if (gsz > 1 && B->group_pos == 0) {
        int32_t last = p->buf[p->gmem[p->gstart[B->alias + 1] - 1]].time;
        if (last - B->time > H_GROUP_SPAN) return MM_DROP;
    }
    if (g->group_state[B->alias] == 2) return MM_DROP;
    if ((double)B->size > H_MAX_FRAC * (double)p->max_size) return MM_DROP;
    if (mm_game_benefit(g, g->t) <= 0) return MM_DROP;
    if (!B->is_output) {
        if (nc->legal && (len(nc) == 0 || len(nc) <= H_KEEP_GAP)) return MM_NOCOPY;
        if (cp->legal) return MM_COPY;
        return MM_DROP;
    }
    if (nc->legal && len(nc) <= H_OUT_KEEP) return MM_NOCOPY;
    if (cp->legal) return MM_COPY;
    return MM_DROP;
}

int mm_policy_random(const mm_game *g, gsl_rng *rng) {
    int legal[MM_NACT], n = 0;
    for (int a = 0; a < MM_NACT; a++)
        if (mm_game_legal(g, a)) legal[n++] = a;
    if (n == 0) return MM_DROP;
    return legal[gsl_rng_uniform_int(rng, (unsigned long)n)];
}

double mm_play(mm_game *g, int policy, uint64_t seed) {
    mm_game_reset(g);
    if (policy == 1) {
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, (unsigned long)seed);
        while (!g->done) mm_game_step(g, mm_policy_random(g, rng));
        gsl_rng_free(rng);
        return mm_game_return(g);
    }
    /* Heuristic with backtracking: when an aliased group it placed in CMEM cannot be completed,
     * go back to the group's first buffer and keep that group in HBM (always feasible). */
    const mm_problem *p = g->p;
    uint8_t *banned = calloc((size_t)p->nalias, 1);
    if (!banned) abort();
    while (!g->done) {
        const mm_buffer *B = &p->buf[g->t];
        int a = mm_policy_heuristic(g);
        if (banned[B->alias] && mm_game_legal(g, MM_DROP)) a = MM_DROP;
        mm_game_step(g, a);
        if (g->lost) {
            int32_t al = p->buf[g->t].alias, first = p->gmem[p->gstart[al]];
            banned[al] = 1;
            while (g->t > first) mm_game_undo(g);
        }
    }
    free(banned);
    return mm_game_return(g);
}

double mm_heuristic_latency(const mm_problem *p) {
    mm_game *g = mm_game_new(p);
    mm_play(g, 0, 0);
    double L = g->lost || !g->done ? INFINITY : mm_game_latency(g);
    mm_game_free(g);
    return L;
}
