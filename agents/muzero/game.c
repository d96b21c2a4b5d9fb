/* game.c - what the agent's files share below the game driver (driver.c), the learner
 * (muzero.c) and the checkpoint (ckpt.c): a game's trajectory storage and observation
 * encoding, logging one step to the trial log, and the agent's clocks, budget and temperature.
 * Calls nothing of the other files here. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "mz_agent.h"

void mz_traj_reserve(mz_game *g, int n) {
    if (n <= g->cap) return;
    int cap = g->cap ? g->cap : 64;
    while (cap < n) cap *= 2;
    g->feat = realloc(g->feat, sizeof(double) * (size_t)cap * (size_t)g->F);
    g->act = realloc(g->act, (size_t)cap);
    g->mask = realloc(g->mask, (size_t)cap);
    g->rew = realloc(g->rew, sizeof(double) * (size_t)cap);
    g->pol = realloc(g->pol, sizeof(double) * (size_t)cap * MZ_NACT);
    g->val = realloc(g->val, sizeof(double) * (size_t)cap);
    g->retp = realloc(g->retp, sizeof(double) * (size_t)cap);
    g->fz = realloc(g->fz, (size_t)cap);
    g->bix = realloc(g->bix, sizeof(int) * (size_t)cap);
    if (!g->feat || !g->act || !g->mask || !g->rew || !g->pol || !g->val || !g->retp || !g->fz || !g->bix) abort(); /* out of memory */
    g->cap = cap;
}

void mz_game_encode(mz_agent *A, mz_game *g) {
    if (A->lean) return; /* cur_feat stays zero: the mode does not read it */
    mzf_encode(&g->env->L, g->env->st.obs, A->nbuf, A->rscale, g->cur_feat);
}

int mz_log_step(mz_agent *A, mz_game *g, const char *worker, int action, hw_err *err) {
    json_t *aj = json_integer(action);
    int rc = ag_run_step(A->run, worker, g->episode, g->env->st.buffer - 1 >= 0 ? g->env->st.buffer - 1 : 0, 0, aj, NULL,
                         g->env->reward, g->env->terminated, 0, g->env->info, err);
    json_decref(aj);
    A->env_steps++;
    return rc;
}

bool mz_agent_out_of_budget(const mz_agent *A) {
    if (A->env_steps >= A->ao->budget) return true;
    if (A->o.max_games > 0 && A->games_done >= A->o.max_games) return true;
    return mz_agent_out_of_time(A);
}

double mz_cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

bool mz_agent_out_of_time(const mz_agent *A) {
    if (A->o.time_limit > 0 && ag_now() - A->t0 >= A->o.time_limit) return true;
    return A->o.cpu_limit > 0 && mz_cpu_now() - A->cpu0 >= A->o.cpu_limit;
}

double mz_agent_clock(const mz_agent *A) { return A->o.cpu_limit > 0 ? mz_cpu_now() - A->cpu0 : ag_now() - A->t0; }

double mz_agent_temperature(const mz_agent *A) {
    if (A->o.temp_decay <= 0) return A->o.temp1;
    double f = (double)A->env_steps / (double)A->o.temp_decay;
    if (f > 1) f = 1;
    return A->o.temp0 + (A->o.temp1 - A->o.temp0) * f;
}

/* buffers left to decide in g's current game */
static int64_t game_left(const mz_agent *A, const mz_game *g) {
    int b = g->env->st.buffer;
    return b >= 0 && b < A->nbuf ? A->nbuf - b : 0;
}

void mz_fit_games(mz_agent *A) {
    if (!A->o.fit_games || A->o.mode == MODE_ES || A->live <= 1) return;
    /* env steps per buffer decided: Drop-backup's rewinds make a game longer than its buffers */
    double played = (double)(A->env_steps - A->demo_steps), useful = played - (double)A->rewound;
    double f = useful > 0 ? played / useful : 1;
    if (f < 1) f = 1;
    if (f > 4) f = 4;
    double limit = A->o.cpu_limit > 0 ? A->o.cpu_limit : A->o.time_limit;
    double now = mz_agent_clock(A), dt = now - A->fit_t;
    int64_t ds = A->env_steps - A->fit_steps;
    /* clock per env step, measured since the last change of the live games (fewer games batch
     * fewer leaves per network call: each step costs more) */
    double c = limit > 0 && ds >= 16 * (int64_t)A->live && dt > 0 ? dt / (double)ds : 0;
    double left_steps = (double)(A->ao->budget - A->env_steps), left_t = limit - now;
    bool changed = false;
    while (A->live > 1) {
        double work = 0;
        for (int i = 0; i < A->G; i++)
            if (!A->games[i]->retired) work += (double)game_left(A, A->games[i]) * f;
        if (work <= left_steps && (c <= 0 || work * c <= 0.9 * left_t)) break;
        mz_game *r = NULL;
        for (int i = 1; i < A->G; i++) {
            mz_game *g = A->games[i];
            if (!g->retired && (!r || game_left(A, g) >= game_left(A, r))) r = g;
        }
        if (!r) break;
        r->retired = true;
        A->live--;
        A->retired++;
        changed = true;
    }
    if (changed) {
        A->fit_t = now;
        A->fit_steps = A->env_steps;
    }
}
