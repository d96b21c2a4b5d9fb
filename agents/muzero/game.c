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
    if (!g->feat || !g->act || !g->mask || !g->rew || !g->pol || !g->val || !g->retp || !g->fz) abort(); /* out of memory */
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
