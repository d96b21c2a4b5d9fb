/* muzero.c - the MuZero modes of hwgym-muzero: learned-model MCTS with batched leaves
 * (muzero, prod), learning without search (learn), search over the true game without learning
 * (search), training with Reanalyse, and the heuristic's game as a demonstration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmap/mmap.h"
#include "mz_agent.h"
#include "mz_search.h"

typedef struct learn_state {
    lm_ctx lm;
    mcts_tree **trees;   /* acting */
    mcts_tree **rtrees;  /* reanalyse */
    int nrtrees;
    double *feat, *emb, *logit, *val;
    int room;
    int *idx;
    az_ctx *az;          /* AlphaZero mode */
} learn_state;

int mz_setup_learning(mz_agent *A, hw_err *err) {
    (void)err;
    mz_net_cfg nc = A->o.net;
    nc.F = A->F;
    A->net = mz_net_new(&nc, A->rng);
    mz_net_use_f32(A->net, A->o.f32);
    A->tr = mz_trainer_new(A->net, &A->o.train);
    mz_trainer_use_f32(A->tr, A->o.f32);
    A->rb = mz_replay_new(A->o.replay, A->F);
    A->batch = mz_batch_new(A->o.batch, A->o.train.K, A->F, A->net->V);
    A->store = true;
    learn_state *s = calloc(1, sizeof *s);
    A->mode_state = s;
    s->lm.net = A->net;
    s->lm.E = nc.E;
    int cap = A->o.mcts.sims + 2;
    s->trees = calloc((size_t)A->G, sizeof(mcts_tree *));
    for (int i = 0; i < A->G; i++) s->trees[i] = mcts_tree_new(cap);
    int nr = (int)lround(A->o.batch * A->o.reanalyse);
    s->nrtrees = nr;
    s->rtrees = calloc((size_t)(nr > 0 ? nr : 1), sizeof(mcts_tree *));
    for (int i = 0; i < nr; i++) s->rtrees[i] = mcts_tree_new(A->o.reanalyse_sims + 2);
    int room = A->G > A->o.batch ? A->G : A->o.batch;
    s->room = room;
    s->feat = malloc(sizeof(double) * (size_t)room * (size_t)A->F);
    s->emb = malloc(sizeof(double) * (size_t)room * (size_t)nc.E);
    s->logit = malloc(sizeof(double) * (size_t)room * MZ_NACT);
    s->val = malloc(sizeof(double) * (size_t)room);
    s->idx = malloc(sizeof(int) * (size_t)room);
    int maxcap = cap > A->o.reanalyse_sims + 2 ? cap : A->o.reanalyse_sims + 2;
    lm_reserve(&s->lm, room, maxcap);
    if (A->o.model_true) {
        /* in-process sessions: a leaf costs a restore and a few steps */
        s->az = az_new(A->net, "local", A->ecfg, A->G, A->nbuf, A->rscale, err);
        if (!s->az) return -1;
        s->az->trees = s->trees;
    }
    return 0;
}

void mz_free_learning(mz_agent *A) {
    learn_state *s = A->mode_state;
    if (s) {
        for (int i = 0; i < A->G; i++) mcts_tree_free(s->trees[i]);
        for (int i = 0; i < s->nrtrees; i++) mcts_tree_free(s->rtrees[i]);
        free(s->trees);
        free(s->rtrees);
        free(s->feat);
        free(s->emb);
        free(s->logit);
        free(s->val);
        free(s->idx);
        lm_free(&s->lm);
    free(A->vbase);
    A->vbase = NULL;
        az_free(s->az);
        free(s);
        A->mode_state = NULL;
    }
    mz_batch_free(A->batch);
    mz_replay_free(A->rb);
    mz_trainer_free(A->tr);
    mz_net_free(A->net);
}

/* Root inference for n feature rows (deciding buffers rootb), MCTS with the learned model, policy
 * targets and values. The first ngreedy trees are evaluation searches: no root noise, argmax move. */
static void search_learned(mz_agent *A, mcts_tree **trees, int n, const double *feat, const uint8_t *mask, const int *rootb, const int *hmove,
                           int sims, bool noise, int ngreedy, double temp, mcts_eval_fn fn, void *ctx, int *act, double *pol, double *val) {
    learn_state *s = A->mode_state;
    int E = s->lm.E;
    mz_net_initial(A->net, feat, n, s->emb, s->logit, s->val);
    mcts_cfg c = A->o.mcts, cg;
    c.sims = sims;
    if (!noise) c.dir_frac = 0;
    cg = c;
    cg.greedy = true;
    for (int i = 0; i < n; i++) {
        double p[MZ_NACT];
        mz_softmax(s->logit + (size_t)i * MZ_NACT, MZ_NACT, p);
        if (act) { /* acting: the collapse watch's entropy of the prior over the legal actions */
            double z = 0, h = 0;
            for (int a = 0; a < MZ_NACT; a++) z += (mask[i] >> a & 1) ? p[a] : 0;
            for (int a = 0; a < MZ_NACT; a++)
                if ((mask[i] >> a & 1) && p[a] > 0 && z > 0) h -= p[a] / z * log(p[a] / z);
            if (__builtin_popcount(mask[i] & 7) >= 2) A->ent_sum += h, A->ent_n++;
        }
        if (hmove) mz_heur_mix(A->o.heur_prior, hmove[i], p);
        double v = s->val[i] + mz_vbase(A->vbase, A->nbuf + 1, rootb[i]);
        mcts_root(trees[i], i < ngreedy ? &cg : &c, p, v, mask[i], A->rng);
        memcpy(lm_emb(&s->lm, i, 0), s->emb + (size_t)i * (size_t)E, sizeof(double) * (size_t)E);
        lm_root(&s->lm, i, rootb[i]);
    }
    mcts_run(trees, n, &c, fn ? fn : lm_eval, fn ? ctx : &s->lm);
    A->sims += (int64_t)n * sims;
    for (int i = 0; i < n; i++) {
        int a = mcts_act(trees[i], i < ngreedy ? &cg : &c, i < ngreedy ? 0 : temp, A->rng, pol + (size_t)i * MZ_NACT, &val[i]);
        if (act) act[i] = a;
    }
}

void mz_decide_muzero(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    learn_state *s = A->mode_state;
    uint8_t mask[1024];
    int rootb[1024], h[1024];
    for (int i = 0; i < n; i++) {
        memcpy(s->feat + (size_t)i * (size_t)A->F, g[i]->cur_feat, sizeof(double) * (size_t)A->F);
        mask[i] = g[i]->env->st.mask;
        rootb[i] = g[i]->env->st.buffer;
    }
    mz_heur_moves(A, g, n, h);
    search_learned(A, s->trees, n, s->feat, mask, rootb, h, A->o.mcts.sims, true, A->o.greedy_games, mz_agent_temperature(A), NULL, NULL, act,
                   pol, val);
}

/* AlphaZero mode: the same search over the true game (az_eval) from each game's state. */
void mz_decide_az(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    learn_state *s = A->mode_state;
    uint8_t mask[1024];
    int rootb[1024], h[1024];
    for (int i = 0; i < n; i++) {
        rootb[i] = g[i]->env->st.buffer;
        if (az_root(s->az, i, g[i]->prefix, g[i]->env->st.buffer, &A->fatal)) {
            A->failed = true;
            return;
        }
        memcpy(s->feat + (size_t)i * (size_t)A->F, g[i]->cur_feat, sizeof(double) * (size_t)A->F);
        mask[i] = g[i]->env->st.mask;
    }
    mz_heur_moves(A, g, n, h);
    search_learned(A, s->trees, n, s->feat, mask, rootb, h, A->o.mcts.sims, true, A->o.greedy_games, mz_agent_temperature(A), az_eval, s->az,
                   act, pol, val);
    if (s->az->failed) {
        A->fatal = s->az->err;
        A->failed = true;
    }
}

void mz_decide_learn(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    learn_state *s = A->mode_state;
    for (int i = 0; i < n; i++) memcpy(s->feat + (size_t)i * (size_t)A->F, g[i]->cur_feat, sizeof(double) * (size_t)A->F);
    mz_net_initial(A->net, s->feat, n, s->emb, s->logit, val);
    double T = mz_agent_temperature(A);
    for (int i = 0; i < n; i++) {
        val[i] += mz_vbase(A->vbase, A->nbuf + 1, g[i]->env->st.buffer);
        double p[MZ_NACT], z[MZ_NACT], sum = 0;
        uint8_t m = g[i]->env->st.mask;
        for (int a = 0; a < MZ_NACT; a++) z[a] = s->logit[(size_t)i * MZ_NACT + (size_t)a] / (T > 0.05 ? T : 0.05);
        mz_softmax(z, MZ_NACT, p);
        for (int a = 0; a < MZ_NACT; a++) sum += p[a] = (m >> a & 1) ? p[a] : 0;
        double u = gsl_rng_uniform(A->rng) * sum;
        int pick = 2;
        for (int a = 0; a < MZ_NACT; a++) {
            if (p[a] <= 0) continue;
            pick = a;
            if (u < p[a]) break;
            u -= p[a];
        }
        act[i] = pick;
        for (int a = 0; a < MZ_NACT; a++) pol[(size_t)i * MZ_NACT + (size_t)a] = a == pick;
    }
}

/* One training step: sample, reanalyse a fraction with fresh MCTS, unrolled loss, Adam. */
static void train_step(mz_agent *A) {
    learn_state *s = A->mode_state;
    mz_replay *rb = A->rb;
    int B = A->o.batch;
    /* the last ns samples come from the self-imitation replay; Reanalyse takes the first nr */
    int ns = A->elite && A->elite->n > 0 ? (int)lround(B * A->o.sil) : 0;
    for (int i = 0; i < B; i++) s->idx[i] = (int)ag_rng_int(A->rng, i >= B - ns ? A->elite->n : rb->n);
    /* AlphaZero mode has no Reanalyse: the replay keeps no env states to search from */
    int nr = A->o.mode == MODE_LEARN || A->o.model_true ? 0 : s->nrtrees;
    if (nr > B - ns) nr = B - ns;
    if (nr > 0) {
        uint8_t mask[4096];
        int rootb[4096];
        for (int i = 0; i < nr; i++) {
            int j = s->idx[i];
            rootb[i] = rb->buf[j];
            for (int f = 0; f < A->F; f++) s->feat[(size_t)i * (size_t)A->F + (size_t)f] = rb->feat[(size_t)j * (size_t)A->F + (size_t)f];
            mask[i] = rb->mask[j];
        }
        double *pol = malloc(sizeof(double) * (size_t)nr * MZ_NACT), *val = malloc(sizeof(double) * (size_t)nr);
        search_learned(A, s->rtrees, nr, s->feat, mask, rootb, NULL, A->o.reanalyse_sims, false, 0, 1.0, NULL, NULL, NULL, pol, val);
        for (int i = 0; i < nr; i++) {
            int j = s->idx[i];
            if (rb->demo[j] || rb->pw[j] == 0) continue; /* demonstrations and forced Drops keep their targets */
            for (int a = 0; a < MZ_NACT; a++) rb->pol[j * MZ_NACT + a] = (float)pol[(size_t)i * MZ_NACT + (size_t)a];
            rb->val[j] = (float)val[i];
            rb->pw[j] = 1;
        }
        free(pol);
        free(val);
    }
    for (int i = 0; i < B; i++) mz_batch_fill(A->batch, i, i >= B - ns ? A->elite : rb, s->idx[i], &A->o.train);
    mz_loss_grad(A->tr, A->batch, A->last_loss);
    mz_trainer_apply(A->tr);
    A->train_steps++;
}

void mz_train_maybe(mz_agent *A) {
    if (!A->rb || A->rb->n < 2 * A->o.train.K) return;
    /* the time limit is checked between training steps too: a step earns its training steps,
     * but a wall-clock budget is not overrun by them */
    while (A->env_steps - A->last_train_at >= A->o.train_every && !mz_agent_out_of_time(A)) {
        A->last_train_at += A->o.train_every;
        train_step(A);
    }
}

/* The heuristic's game played through game 0's env (logged as episode -1 of the run's worker): positions with one-hot policies and Monte
 * Carlo return-to-go values go to the replay as a demonstration segment. */
int mz_play_demo(mz_agent *A, hw_err *err) {
    mz_game *g = A->games[0];
    mz_env *e = g->env;
    int n = (int)strlen(A->heur_actions);
    if (n == 0) return 0;
    if (mz_env_reset(e, err)) return -1;
    mz_pos *p = calloc((size_t)n, sizeof *p);
    double *feat = malloc(sizeof(double) * (size_t)n * (size_t)A->F);
    int k = 0;
    for (; k < n && !mz_agent_out_of_budget(A); k++) {
        int a = A->heur_actions[k] - '0';
        mzf_encode(&e->L, e->st.obs, A->nbuf, A->rscale, feat + (size_t)k * (size_t)A->F);
        p[k].feat = feat + (size_t)k * (size_t)A->F;
        p[k].action = a;
        p[k].mask = e->st.mask;
        p[k].buf = e->st.buffer;
        p[k].policy[a] = 1;
        p[k].pweight = __builtin_popcount(e->st.mask & 7) >= 2; /* a single legal move teaches nothing */
        p[k].retp = e->st.ret * A->rscale;
        p[k].has_fin = true;
        p[k].fin = A->heur_return * A->rscale;
        if (mz_env_step(e, a, err) || mz_log_step(A, g, A->o.worker ? A->o.worker : "0", a, err)) {
            free(p);
            free(feat);
            return -1;
        }
        A->demo_steps++;
        p[k].reward = e->reward * A->rscale;
        if (e->terminated) {
            p[k].done = true;
            k++;
            break;
        }
    }
    double z = 0;
    for (int i = k - 1; i >= 0; i--) p[i].value = z = p[i].reward + A->o.train.gamma * z;
    if (k > 0) {
        int first = mz_replay_add(A->rb, p, k, true);
        (void)first;
    }
    /* the demonstration's env steps earn no training steps: on a program of 16k buffers they
     * would be hundreds of training steps on the demonstration alone in one burst before the
     * first self-play move (most of a time-budgeted run); self-play steps earn them from here */
    A->last_train_at = A->env_steps;
    free(p);
    free(feat);
    return 0;
}

int mz_value_baseline(mz_agent *A, hw_err *err) {
    mz_env *e = A->games[0]->env;
    int n = (int)strlen(A->heur_actions);
    free(A->vbase);
    A->vbase = calloc((size_t)A->nbuf + 1, sizeof(double));
    double *r = calloc((size_t)A->nbuf + 1, sizeof(double));
    int rc = mz_env_reset(e, err);
    for (int k = 0; k < n && !rc && !e->terminated; k++) {
        int b = e->st.buffer;
        rc = mz_env_step(e, A->heur_actions[k] - '0', err);
        if (!rc && b >= 0 && b < A->nbuf) r[b] += e->reward * A->rscale;
    }
    for (int b = A->nbuf - 1; b >= 0 && !rc; b--) A->vbase[b] = r[b] + A->o.train.gamma * A->vbase[b + 1];
    free(r);
    if (rc) return -1;
    A->o.train.vbase = A->vbase;
    A->o.train.nbase = A->nbuf + 1;
    learn_state *s = A->mode_state;
    s->lm.vbase = A->vbase;
    s->lm.nbase = A->nbuf + 1;
    if (s->az) {
        s->az->vbase = A->vbase;
        s->az->nbase = A->nbuf + 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ search only (true game) */
typedef struct search_state {
    mm_problem *p;
    ts_ctx *ts;
} search_state;

int mz_setup_search(mz_agent *A, hw_err *err) {
    search_state *s = calloc(1, sizeof *s);
    A->mode_state = s;
    s->p = mz_local_problem(A, "search mode", err);
    if (!s->p) return -1;
    s->ts = ts_new(s->p, A->G, A->o.mcts.sims + 2, A->o.rollout, A->rscale, A->rng);
    return 0;
}

void mz_free_search(mz_agent *A) {
    search_state *s = A->mode_state;
    if (!s) return;
    ts_free(s->ts);
    mm_problem_free(s->p);
    free(s);
    A->mode_state = NULL;
}

void mz_decide_search(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    search_state *s = A->mode_state;
    double pr[MZ_NACT] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    mcts_cfg c = A->o.mcts;
    for (int i = 0; i < n; i++) {
        ts_root(s->ts, i, g[i]->prefix, g[i]->env->st.buffer);
        mcts_root(s->ts->trees[i], &c, pr, 0, g[i]->env->st.mask, A->rng);
    }
    mcts_run(s->ts->trees, n, &c, ts_eval, s->ts);
    A->sims += (int64_t)n * c.sims;
    for (int i = 0; i < n; i++)
        act[i] = mcts_act(s->ts->trees[i], &c, mz_agent_temperature(A), A->rng, pol + (size_t)i * MZ_NACT, &val[i]);
}
