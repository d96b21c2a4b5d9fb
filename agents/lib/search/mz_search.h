/* mz_search.h - the three MCTS evaluators of the MuZero agent (mcts.h):
 *   lm_*  the learned model: a leaf's embedding = dynamics(parent embedding, action), with its
 *         reward, prior and value from the networks; embeddings live in a pool indexed by
 *         (tree, node). One mz_net_recurrent call per simulation step for every tree.
 *   ts_*  the true game (search-only ablation): an in-process mm_game per tree moved to the
 *         leaf with mm_game_goto (undo to the common prefix, replay), exact reward, legal mask,
 *         uniform prior and a value from a random legal rollout of `rollout` steps (undone after).
 *         A lost leaf is terminal with reward -(return gained since the search root): the
 *         Drop-backup view, a local negative signal.
 *   az_*  AlphaZero mode (--model true): the true game with the learned prior and value. One
 *         in-process mmap-v0 session (mz_env) per tree holds a snapshot of the search root; a
 *         leaf is reached by restoring it and stepping the path (exact reward, legal mask, loss),
 *         its observation is encoded and all leaves of a simulation step go through one batched
 *         representation + prediction call. A lost leaf is terminal with reward -(return gained
 *         since the root), as for ts_*. */
#ifndef HWGYM_MZ_SEARCH_H
#define HWGYM_MZ_SEARCH_H

#include <gsl/gsl_rng.h>

#include "mcts.h"
#include "mmap/mmap.h"
#include "muzero_net.h"
#include "mz_env.h"

typedef struct lm_ctx {
    mz_net *net;
    int E, cap, ntrees;
    double *pool; /* ntrees x cap x E embeddings, by node */
    double *in, *out, *rew, *logit, *val;
    int *act, room;
    /* advantage baseline (muzero_train.h; NULL: none): a leaf's value is the network's plus
     * vbase[rootb[tree] + its depth] */
    const double *vbase;
    int nbase;
    int *dep;     /* ntrees x cap depths, by node */
    int *rootb;   /* buffer of each tree's root */
} lm_ctx;

void lm_reserve(lm_ctx *c, int ntrees, int cap);
void lm_free(lm_ctx *c);
double *lm_emb(lm_ctx *c, int tree, int node);
/* Roots tree `tree` at buffer b (depth 0); its root embedding goes to lm_emb(c, tree, 0). */
void lm_root(lm_ctx *c, int tree, int b);
void lm_eval(void *ctx, mcts_leaf *L, int n);

typedef struct ts_ctx {
    const mm_problem *p;
    mm_game **gm;          /* one per tree */
    mcts_tree **trees;
    uint8_t **path;        /* scratch per tree (nbuf) */
    const uint8_t **prefix; /* actions that made each root */
    int *plen;
    double *rootret;       /* return at each root */
    gsl_rng *rng;
    int rollout, n;
    double rscale;
} ts_ctx;

/* n trees of capacity cap over problem p. */
ts_ctx *ts_new(const mm_problem *p, int n, int cap, int rollout, double rscale, gsl_rng *rng);
void ts_free(ts_ctx *s);
/* Roots tree i at the state made by prefix[0..len) (prefix must stay valid during mcts_run);
 * returns the legal mask there. */
uint8_t ts_root(ts_ctx *s, int i, const uint8_t *prefix, int len);
void ts_eval(void *ctx, mcts_leaf *L, int n);

typedef struct az_ctx {
    mz_net *net;
    int n, F, nbuf;
    double rscale;
    mz_env **env;          /* one session per tree */
    mcts_tree **trees;
    int64_t *snap;         /* root snapshot per tree (-1: none) */
    uint8_t **rprefix;     /* actions that made each root */
    int *rlen;
    double *rootret;       /* scaled return at each root */
    uint8_t *path;         /* scratch (nbuf) */
    double *feat, *emb, *logit, *val; /* leaf batch (n rows) */
    int *row;              /* leaf -> batch row (-1: terminal) */
    const double *vbase;   /* advantage baseline by buffer, as lm_ctx's (NULL: none) */
    int nbase;
    int64_t steps;         /* env steps taken by the searches */
    hw_err err;            /* the first session error (the search then treats leaves as lost) */
    bool failed;
} az_ctx;

/* n trees (the caller sets s->trees); each opens a session at endpoint with config (the acting
 * games' config, so that leaf features match theirs). NULL on error. */
az_ctx *az_new(mz_net *net, const char *endpoint, const json_t *config, int n, int nbuf, double rscale, hw_err *err);
void az_free(az_ctx *s);
/* Moves tree i's session to the state made by prefix[0..len) (from its previous root when that
 * is a prefix of this one, else from reset) and snapshots it. */
int az_root(az_ctx *s, int i, const uint8_t *prefix, int len, hw_err *err);
void az_eval(void *ctx, mcts_leaf *L, int n);

#endif
