/* mz_search.h - the two MCTS evaluators of the MuZero agent (mcts.h):
 *   lm_*  the learned model: a leaf's embedding = dynamics(parent embedding, action), with its
 *         reward, prior and value from the networks; embeddings live in a pool indexed by
 *         (tree, node). One mz_net_recurrent call per simulation step for every tree.
 *   ts_*  the true game (search-only ablation): an in-process mm_game per tree moved to the
 *         leaf with mm_game_goto (undo to the common prefix, replay), exact reward, legal mask,
 *         uniform prior and a value from a random legal rollout of `rollout` steps (undone after).
 *         A lost leaf is terminal with reward -(return gained since the search root): the
 *         Drop-backup view, a local negative signal. */
#ifndef HWGYM_MZ_SEARCH_H
#define HWGYM_MZ_SEARCH_H

#include <gsl/gsl_rng.h>

#include "mcts.h"
#include "mmap/mmap.h"
#include "muzero_net.h"

typedef struct lm_ctx {
    mz_net *net;
    int E, cap, ntrees;
    double *pool; /* ntrees x cap x E embeddings, by node */
    double *in, *out, *rew, *logit, *val;
    int *act, room;
} lm_ctx;

void lm_reserve(lm_ctx *c, int ntrees, int cap);
void lm_free(lm_ctx *c);
double *lm_emb(lm_ctx *c, int tree, int node);
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

#endif
