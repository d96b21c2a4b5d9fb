/* heur.c - the heuristic's move as a search prior (--heuristic-prior W), and the in-process copy
 * of the program that it and search-only mode share.
 * The env's heuristic (envs/mmap mm_policy_heuristic) is a per-state policy. The agent keeps one
 * in-process mm_game per game in flight (the same dataset program or file, loaded here), moved to
 * the acting game's state by its action prefix (mm_game_goto: undo to the common prefix, replay,
 * so O(1) per move while the game goes forward), and reads the heuristic's move there. That works
 * with any endpoint: a remote env does not need to expose it. The search then mixes a one-hot of
 * that move into its root prior, P <- (1 - W) P + W onehot(h), before masking (muzero.c), the
 * AlphaGo-style use of domain knowledge: the untrained agent plays the heuristic's game, and
 * search + learning start from there. */
#include <stdlib.h>

#include "mmap/mmap.h"
#include "mz_agent.h"

typedef struct heur_state {
    mm_problem *p;
    mm_game **gm; /* one per game in flight (by mz_game.idx) */
    int n;
} heur_state;

mm_problem *mz_local_problem(const mz_agent *A, const char *who, hw_err *err) {
    const char *prob = json_string_value(json_object_get(A->ao->config, "problem"));
    json_t *sd = json_object_get(A->ao->config, "seed");
    mm_problem *p = mm_problem_open(prob ? prob : "alexnet_train_batch_32", json_is_integer(sd) ? (uint64_t)json_integer_value(sd) : 0, err);
    if (!p) return NULL;
    if (p->nbuf != A->nbuf) {
        hw_fail(err, HW_E_BAD_CONFIG, "%s: the local copy of the problem has %d buffers, the env %d", who, p->nbuf, A->nbuf);
        mm_problem_free(p);
        return NULL;
    }
    return p;
}

int mz_heur_setup(mz_agent *A, hw_err *err) {
    if (A->o.heur_prior <= 0) return 0;
    heur_state *s = calloc(1, sizeof *s);
    if (!s) abort();
    A->heur = s;
    s->p = mz_local_problem(A, "--heuristic-prior", err);
    if (!s->p) return -1;
    s->n = A->G;
    s->gm = calloc((size_t)s->n, sizeof(mm_game *));
    if (!s->gm) abort();
    for (int i = 0; i < s->n; i++) {
        s->gm[i] = mm_game_new(s->p);
        mm_game_reset(s->gm[i]);
    }
    return 0;
}

void mz_heur_free(mz_agent *A) {
    heur_state *s = A->heur;
    if (!s) return;
    for (int i = 0; i < s->n && s->gm; i++) mm_game_free(s->gm[i]);
    free(s->gm);
    mm_problem_free(s->p);
    free(s);
    A->heur = NULL;
}

void mz_heur_moves(mz_agent *A, mz_game **g, int n, int *h) {
    heur_state *s = A->heur;
    for (int i = 0; i < n; i++) {
        h[i] = -1;
        if (!s || g[i]->idx < 0 || g[i]->idx >= s->n) continue;
        mm_game *m = s->gm[g[i]->idx];
        int len = g[i]->env->st.buffer;
        if (len < 0 || len > A->nbuf || mm_game_goto(m, g[i]->prefix, len) || m->done || m->lost) continue;
        int a = mm_policy_heuristic(m);
        /* the env's legal moves decide: a move it does not allow is no prior */
        if (a >= 0 && a < MZ_NACT && (g[i]->env->st.mask >> a & 1)) h[i] = a;
    }
}

void mz_heur_mix(double w, int h, double p[MZ_NACT]) {
    if (w <= 0 || h < 0 || h >= MZ_NACT) return;
    for (int a = 0; a < MZ_NACT; a++) p[a] = (1 - w) * p[a] + (a == h ? w : 0);
}
