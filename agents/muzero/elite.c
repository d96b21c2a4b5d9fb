/* elite.c - self-imitation (--self-imitation F): a second, small replay holding the heuristic's
 * game and the agent's best complete game so far, each position with a one-hot policy target on
 * the move that game made (weight 0 where one move was legal) and its Monte Carlo return-to-go as
 * the value target. A fraction F of every training batch is drawn from it, so the best mapping
 * found is never forgotten when the main replay wraps, and the policy is pulled towards it.
 * The games are replayed through one in-process session (not logged as trials: they are replays
 * of games already played and logged) whenever the best improves, at most once per program's
 * worth of env steps. */
#include <stdlib.h>
#include <string.h>

#include "mz_agent.h"

/* Plays the digit string acts from reset into the elite replay as one demonstration segment. */
static int add_game(mz_agent *A, const char *acts, double ret, hw_err *err) {
    mz_env *e = A->elite_env;
    int n = (int)strlen(acts);
    if (n == 0) return 0;
    if (mz_env_reset(e, err)) return -1;
    mz_pos *p = calloc((size_t)n, sizeof *p);
    double *feat = malloc(sizeof(double) * (size_t)n * (size_t)A->F);
    double fin = ret * A->rscale;
    int k = 0, rc = 0;
    for (; k < n; k++) {
        int a = acts[k] - '0';
        if (a < 0 || a > 2 || !(e->st.mask >> a & 1)) break; /* cannot happen: the game was played */
        mzf_encode(&e->L, e->st.obs, A->nbuf, A->rscale, feat + (size_t)k * (size_t)A->F);
        p[k].feat = feat + (size_t)k * (size_t)A->F;
        p[k].action = a;
        p[k].mask = e->st.mask;
        p[k].buf = e->st.buffer;
        p[k].policy[a] = 1;
        p[k].pweight = __builtin_popcount(e->st.mask & 7) >= 2;
        p[k].retp = e->st.ret * A->rscale;
        p[k].has_fin = true;
        p[k].fin = fin;
        p[k].value = fin - p[k].retp;
        p[k].game = 0;
        if (mz_env_step(e, a, err)) {
            rc = -1;
            break;
        }
        p[k].reward = e->reward * A->rscale;
        if (e->terminated) {
            p[k].done = !e->lost;
            k++;
            break;
        }
    }
    if (!rc && k > 0) mz_replay_add(A->elite, p, k, true);
    free(p);
    free(feat);
    return rc;
}

int mz_elite_fill(mz_agent *A, hw_err *err) {
    if (!A->elite) return 0;
    mz_replay_clear(A->elite);
    if (add_game(A, A->heur_actions, A->heur_return, err)) return -1;
    if (A->elite_actions && A->elite_best > A->heur_return && add_game(A, A->elite_actions, A->elite_best, err)) return -1;
    return 0;
}

int mz_elite_rebuild(mz_agent *A, hw_err *err) {
    if (!A->elite) return 0;
    free(A->elite_actions);
    A->elite_actions = A->best_actions ? strdup(A->best_actions) : NULL;
    A->elite_best = A->best;
    A->elite_due = false;
    A->elite_at = A->env_steps;
    return mz_elite_fill(A, err);
}

int mz_elite_setup(mz_agent *A, hw_err *err) {
    if (A->o.sil <= 0) return 0;
    int cap = 2 * (A->nbuf + 1);
    A->elite = mz_replay_new(cap, A->F);
    A->elite_env = mz_env_open("local", A->ecfg, err);
    if (!A->elite_env) return -1;
    return mz_elite_rebuild(A, err);
}

void mz_elite_free(mz_agent *A) {
    mz_replay_free(A->elite);
    mz_env_free(A->elite_env);
    free(A->elite_actions);
    A->elite_actions = NULL;
    A->elite = NULL;
    A->elite_env = NULL;
}

int mz_elite_maybe(mz_agent *A, hw_err *err) {
    if (!A->elite || !A->elite_due || A->env_steps - A->elite_at < A->nbuf) return 0;
    return mz_elite_rebuild(A, err);
}
