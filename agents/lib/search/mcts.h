/* mcts.h - MuZero Monte Carlo tree search over 3 actions with batched leaf evaluation.
 * Owns: search trees (one per game in flight), PUCT selection, min-max value normalisation,
 * Dirichlet root noise, legal-action masks, the Gumbel root (Danihelka et al. 2022), backup, and
 * action selection with a temperature. Includes gsl/gsl_randist.h: never include cblas.h here.
 *
 * Batching: mcts_run() advances every tree by one simulation per step and hands ALL new leaves
 * of that step to one evaluator call, so a learned model runs one batched network call per
 * simulation step for every game in flight. The evaluator fills reward, value, prior, mask
 * (legal actions at the leaf; 7 = all, as inside a learned model) and terminal.
 *
 * Selection (PUCT, MuZero Appendix B):
 *   score(a) = Qn(a) + P(a) sqrt(N) / (1 + N(a)) (c1 + log((N + c2 + 1) / c2)),  c1 1.25, c2 19652
 *   Q(a) = R(a) + gamma V(a).
 * Q normalisation (cfg.qmode):
 *   MCTS_Q_NODE (default; mctx's qtransform_by_parent_and_siblings, EfficientZero likewise): at each
 *     node, an unvisited legal child is completed with the node's own mean value, and
 *     Qn = (Q - lo) / max(hi - lo, floor) with lo/hi over the node's completed children and its
 *     value. A difference between siblings smaller than the floor stays small instead of being
 *     stretched to [0, 1], and an unvisited child is neither pessimistic nor optimistic.
 *   MCTS_Q_TREE (the previous behaviour, kept as an ablation): tree-wide min-max over every Q met
 *     in backups; unvisited children score 0 (MuZero's pseudocode).
 *   The floor is in scaled units; the agent sets it to the heuristic's mean reward per buffer.
 * Root prior: P <- (1 - root_mix) P + root_mix / legal (a floor against collapse), then for PUCT
 *   P <- (1 - frac) P + frac Dir(alpha) over the legal actions (alpha 0.03, frac 0.25).
 * Gumbel root (cfg.gumbel): no noise; m = min(gumbel_m, legal) actions with the largest
 *   g(a) + logit(a) (g ~ Gumbel; g = 0 when the root is greedy) get sims by sequential halving
 *   (ceil(log2 m) phases), ranking by g + logit + sigma(q), sigma(q) = (c_visit + max_b N(b)) c_scale q;
 *   the action is the best survivor and the policy target softmax(logit + sigma(completed q)).
 *   With MCTS_Q_NODE, q is mctx's qtransform_completed_by_mix_value: unvisited actions take the
 *   mixed value (v_net + sum_b N(b) * sum_visited P Q / sum_visited P) / (1 + sum_b N(b)), then
 *   min-max over the legal root children with the floor. Below the root, selection is PUCT. */
#ifndef HWGYM_MCTS_H
#define HWGYM_MCTS_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#define MCTS_NACT 3

enum { MCTS_Q_TREE = 0, MCTS_Q_NODE = 1 };

typedef struct mcts_cfg {
    int sims;          /* 400 */
    double c1, c2;     /* 1.25, 19652 */
    double gamma;      /* 0.9999 */
    double dir_alpha, dir_frac; /* 0.03, 0.25; frac 0 = no noise */
    double minmax_floor;        /* 0.01 (the agent: 100 / buffers, the heuristic's mean reward) */
    int qmode;         /* MCTS_Q_NODE (default) or MCTS_Q_TREE */
    double root_mix;   /* uniform mix into the root prior over legal actions (0) */
    bool greedy;       /* this search is an evaluation: no Dirichlet noise, no Gumbel noise */
    bool gumbel;       /* Gumbel root instead of PUCT + noise at the root */
    int gumbel_m;      /* 3 */
    double c_visit, c_scale;    /* 50, 0.1 */
} mcts_cfg;
mcts_cfg mcts_cfg_default(void);

typedef struct mcts_node {
    int32_t child[MCTS_NACT];
    int32_t parent;
    int32_t N;
    double W, R;
    double prior[MCTS_NACT];
    uint8_t action, mask;
    bool expanded, terminal;
} mcts_node;

typedef struct mcts_tree {
    mcts_node *nodes;
    int n, cap;
    double qmin, qmax;
    double root_value;  /* the evaluator's value of the root (Gumbel's mixed value) */
    /* gumbel root */
    double g[MCTS_NACT], logit[MCTS_NACT];
    int rem[MCTS_NACT], nrem, target; /* survivors, visits each should reach in this phase */
    int phases_left, sims_left;
    /* the pending leaf of the current simulation step */
    int32_t leaf;
} mcts_tree;

typedef struct mcts_leaf {
    int tree;          /* index into the trees array of mcts_run */
    int32_t parent, node;
    int action;
    /* filled by the evaluator */
    double reward, value;
    double prior[MCTS_NACT]; /* probabilities (need not be masked) */
    uint8_t mask;            /* legal actions at the leaf (7: all) */
    bool terminal;           /* no further moves: value ignored (0) */
} mcts_leaf;

typedef void (*mcts_eval_fn)(void *ctx, mcts_leaf *leaves, int n);

mcts_tree *mcts_tree_new(int cap);
void mcts_tree_free(mcts_tree *t);
/* Resets t to a root with prior (probabilities over the 3 actions; masked here), value and legal
 * mask; adds Dirichlet noise (or draws the Gumbel root) with rng. Node 0 is the root. */
void mcts_root(mcts_tree *t, const mcts_cfg *c, const double prior[MCTS_NACT], double value, uint8_t mask, gsl_rng *rng);
/* Runs c->sims simulations on G trees, one batched evaluator call per simulation step. */
void mcts_run(mcts_tree **trees, int G, const mcts_cfg *c, mcts_eval_fn fn, void *ctx);
/* Actions from the root to node (returns the depth; acts gets depth entries). */
int mcts_path(const mcts_tree *t, int32_t node, uint8_t *acts, int cap);
/* Chooses the move: PUCT - visit counts^(1/temperature) sampled (temperature <= 0: argmax);
 * Gumbel - the best survivor. policy (may be NULL): the search policy target; *root_value
 * (may be NULL): the root's mean value. */
int mcts_act(const mcts_tree *t, const mcts_cfg *c, double temperature, gsl_rng *rng, double policy[MCTS_NACT],
             double *root_value);

#endif
