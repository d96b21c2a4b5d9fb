/* test_mcts.c - mcts.h on a tiny known game: the search finds the optimal first action where
 * the greedy one is worse, respects legal masks (never visits an illegal child), batches one
 * evaluator call per simulation step for all trees, and the Gumbel root finds the optimum too;
 * Dirichlet noise stays on legal actions; min-max normalisation with its floor. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "mcts.h"

/* Depth-2 game. First move: Copy(0) +1, NoCopy(1) +0, Drop(2) +0.5. Second move: after NoCopy,
 * NoCopy gives +3; everything else +0. Optimum: NoCopy, NoCopy (3) vs greedy Copy (1). */
typedef struct ctx {
    mcts_tree **trees;
    int calls, maxn;
} ctx;

static void eval(void *c_, mcts_leaf *L, int n) {
    ctx *c = c_;
    c->calls++;
    if (n > c->maxn) c->maxn = n;
    for (int i = 0; i < n; i++) {
        uint8_t p[8];
        int d = mcts_path(c->trees[L[i].tree], L[i].node, p, 8);
        double r = 0;
        if (d == 1) r = p[0] == 0 ? 1 : p[0] == 1 ? 0 : 0.5;
        if (d == 2) r = (p[0] == 1 && p[1] == 1) ? 3 : 0;
        L[i].reward = r;
        L[i].value = 0;
        L[i].prior[0] = L[i].prior[1] = L[i].prior[2] = 1.0 / 3;
        L[i].mask = 7;
        L[i].terminal = d >= 2;
    }
}

static int search(mcts_cfg *c, uint8_t mask, int G, int *calls, int *maxn, double pol[3]) {
    gsl_rng *r = ag_rng_new(4);
    mcts_tree *t[8];
    double prior[3] = {0.4, 0.3, 0.3}; /* leaning toward the greedy action */
    for (int g = 0; g < G; g++) {
        t[g] = mcts_tree_new(4);
        mcts_root(t[g], c, prior, 0, mask, r);
    }
    ctx x = {t, 0, 0};
    mcts_run(t, G, c, eval, &x);
    int a = mcts_act(t[0], c, 0, r, pol, NULL);
    for (int g = 1; g < G; g++) cr_assert_eq(mcts_act(t[g], c, 0, r, NULL, NULL), a, "every tree finds the same move");
    if (calls) *calls = x.calls;
    if (maxn) *maxn = x.maxn;
    if (!(mask >> 1 & 1))
        for (int g = 0; g < G; g++) cr_assert_eq(t[g]->nodes[0].child[1], -1, "an illegal action is never expanded");
    for (int g = 0; g < G; g++) mcts_tree_free(t[g]);
    gsl_rng_free(r);
    return a;
}

Test(mcts, finds_the_optimal_first_move_with_batched_leaves) {
    mcts_cfg c = mcts_cfg_default();
    c.sims = 200;
    c.gamma = 1.0;
    c.dir_frac = 0;
    int calls = 0, maxn = 0;
    double pol[3];
    cr_assert_eq(search(&c, 7, 4, &calls, &maxn, pol), 1);
    cr_assert(pol[1] > 0.5, "visit share of the optimum %g", pol[1]);
    /* terminal leaves back up without evaluation, so calls <= sims; never more than 4 leaves */
    cr_assert(calls <= c.sims && calls >= 8, "%d evaluator calls", calls);
    cr_assert_eq(maxn, 4, "one call evaluates the leaves of all 4 trees");
}

Test(mcts, legal_mask_and_gumbel_root) {
    mcts_cfg c = mcts_cfg_default();
    c.sims = 100;
    c.gamma = 1.0;
    double pol[3];
    cr_assert_eq(search(&c, 5, 2, NULL, NULL, pol), 0, "without NoCopy, Copy (+1) beats Drop (+0.5)");
    cr_assert_eq(pol[1], 0);
    c.gumbel = true;
    c.sims = 60;
    cr_assert_eq(search(&c, 7, 3, NULL, NULL, pol), 1, "the Gumbel root finds the optimum");
    cr_assert(pol[1] > pol[0] && pol[1] > pol[2]);
    cr_assert(fabs(pol[0] + pol[1] + pol[2] - 1) < 1e-12);
    cr_assert_eq(search(&c, 5, 1, NULL, NULL, pol), 0);
    cr_assert_eq(pol[1], 0, "the Gumbel policy target puts no mass on illegal actions");
}

Test(mcts, dirichlet_noise_only_on_legal_actions) {
    mcts_cfg c = mcts_cfg_default();
    gsl_rng *r = ag_rng_new(1);
    mcts_tree *t = mcts_tree_new(8);
    double prior[3] = {0.2, 0.5, 0.3};
    double maxdev = 0;
    for (int k = 0; k < 50; k++) {
        mcts_root(t, &c, prior, 0, 3 /* Copy, NoCopy */, r);
        const mcts_node *n = &t->nodes[0];
        cr_assert_eq(n->prior[2], 0);
        cr_assert(fabs(n->prior[0] + n->prior[1] - 1) < 1e-12);
        /* masked prior renormalised: 0.2/0.7, 0.5/0.7, then 0.75 of that plus 0.25 noise */
        cr_assert(n->prior[0] >= 0.75 * 0.2 / 0.7 - 1e-12 && n->prior[1] >= 0.75 * 0.5 / 0.7 - 1e-12);
        double d = fabs(n->prior[0] - 0.2 / 0.7);
        if (d > maxdev) maxdev = d;
    }
    cr_assert(maxdev > 0.05, "noise moves the prior");
    c.dir_frac = 0;
    mcts_root(t, &c, prior, 0, 7, r);
    cr_assert(fabs(t->nodes[0].prior[1] - 0.5) < 1e-12, "no noise with fraction 0");
    mcts_tree_free(t);
    gsl_rng_free(r);
}

/* All children equal up to 1e-4: with the floor (0.01) the normalised values stay close, so the
 * prior decides; without it (floor 1e-9) the tiny difference dominates. */
static void flat_eval(void *c_, mcts_leaf *L, int n) {
    ctx *c = c_;
    for (int i = 0; i < n; i++) {
        uint8_t p[8];
        int d = mcts_path(c->trees[L[i].tree], L[i].node, p, 8);
        L[i].reward = d == 1 && p[0] == 2 ? 1e-4 : 0;
        L[i].value = 0;
        L[i].prior[0] = L[i].prior[1] = L[i].prior[2] = 1.0 / 3;
        L[i].mask = 7;
        L[i].terminal = true;
    }
}

/* One tree searched with c from a root with prior (all legal), evaluated by fn; the caller frees
 * the tree. */
static mcts_tree *run_one(const mcts_cfg *c, const double prior[3], mcts_eval_fn fn, unsigned long seed) {
    gsl_rng *r = ag_rng_new(seed);
    mcts_tree *t = mcts_tree_new(4);
    mcts_root(t, c, prior, 0, 7, r);
    ctx x = {&t, 0, 0};
    mcts_run(&t, 1, c, fn, &x);
    gsl_rng_free(r);
    return t;
}

static int child_visits(const mcts_tree *t, int a) { return t->nodes[0].child[a] >= 0 ? t->nodes[t->nodes[0].child[a]].N : 0; }

Test(mcts, min_max_floor) {
    double prior[3] = {0.8, 0.1, 0.1};
    int share[2];
    for (int k = 0; k < 2; k++) {
        mcts_cfg c = mcts_cfg_default();
        c.sims = 60;
        c.dir_frac = 0;
        c.minmax_floor = k == 0 ? 0.01 : 1e-9;
        mcts_tree *t = run_one(&c, prior, flat_eval, 1);
        share[k] = child_visits(t, 2);
        mcts_tree_free(t);
    }
    cr_assert(share[0] < share[1], "with the floor Drop gets %d visits, without %d", share[0], share[1]);
}

/* The review's collapse: a reward head gives Drop +0.05 over Copy/NoCopy (one move), noise
 * against the scale of the game (the mean reward per buffer on mlp_train_batch_16 is 0.66 scaled
 * units, the floor the agent sets). The tree-wide min-max (MCTS_Q_TREE, floor 0.01)
 * stretches it to the whole [0, 1] and sends most visits to Drop; the per-node normalisation
 * with a reward-scale floor keeps it small, so the uniform prior spreads the visits. */
static void noisy_eval(void *c_, mcts_leaf *L, int n) {
    ctx *c = c_;
    for (int i = 0; i < n; i++) {
        uint8_t p[8];
        int d = mcts_path(c->trees[L[i].tree], L[i].node, p, 8);
        L[i].reward = d >= 1 && p[d - 1] == 2 ? 0.05 : 0;
        L[i].value = 0;
        L[i].prior[0] = L[i].prior[1] = L[i].prior[2] = 1.0 / 3;
        L[i].mask = 7;
        L[i].terminal = true;
    }
}

static int drop_visits(int qmode, double floor_) {
    double prior[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    mcts_cfg c = mcts_cfg_default();
    c.sims = 16;
    c.dir_frac = 0;
    c.qmode = qmode;
    c.minmax_floor = floor_;
    mcts_tree *t = run_one(&c, prior, noisy_eval, 3);
    int n = child_visits(t, 2);
    mcts_tree_free(t);
    return n;
}

Test(mcts, node_normalisation_does_not_amplify_noise) {
    int tree = drop_visits(MCTS_Q_TREE, 0.01), node = drop_visits(MCTS_Q_NODE, 0.66);
    cr_assert(tree >= 12, "tree-wide min-max: Drop gets %d of 16 visits", tree);
    cr_assert(node <= 8, "per-node normalisation with a reward-scale floor: Drop gets %d of 16", node);
    /* a real difference (above the floor) still decides */
    cr_assert(drop_visits(MCTS_Q_NODE, 0.01) > node);
}

/* A collapsed prior (Drop 0.993) on a game where Copy pays 1 and Drop 0: with the root mix the
 * search finds Copy; without it Copy is never visited. */
static void copy_pays(void *c_, mcts_leaf *L, int n) {
    ctx *c = c_;
    for (int i = 0; i < n; i++) {
        uint8_t p[8];
        int d = mcts_path(c->trees[L[i].tree], L[i].node, p, 8);
        L[i].reward = d == 1 && p[0] == 0 ? 1 : 0;
        L[i].value = 0;
        L[i].prior[0] = 0.004, L[i].prior[1] = 0.003, L[i].prior[2] = 0.993;
        L[i].mask = 7;
        L[i].terminal = d >= 2;
    }
}

Test(mcts, root_mix_rescues_a_collapsed_prior) {
    double prior[3] = {0.004, 0.003, 0.993};
    int visits[2];
    for (int k = 0; k < 2; k++) {
        mcts_cfg c = mcts_cfg_default();
        c.sims = 32;
        c.dir_frac = 0;
        c.root_mix = k ? 0.25 : 0;
        c.minmax_floor = 0.1;
        mcts_tree *t = run_one(&c, prior, copy_pays, 1);
        visits[k] = child_visits(t, 0);
        if (k) cr_assert_eq(mcts_act(t, &c, 0, NULL, NULL, NULL), 0, "with the mix the search picks Copy");
        mcts_tree_free(t);
    }
    cr_assert(visits[0] <= 1, "without the mix Copy gets %d visits", visits[0]);
    cr_assert(visits[1] > 16, "with the mix Copy gets %d of 32 visits", visits[1]);
}

/* mctx's completed Q for the Gumbel root: once the search shows Copy is better, the policy
 * target moves toward Copy even against a prior of 0.99 for Drop (the tree-wide normalisation
 * with unvisited children at 0 kept the target on Drop). */
Test(mcts, gumbel_completed_q_moves_the_target) {
    double prior[3] = {0.005, 0.005, 0.99}, pol[3];
    mcts_cfg c = mcts_cfg_default();
    c.sims = 16;
    c.gumbel = true;
    c.greedy = true;
    c.minmax_floor = 0.1;
    mcts_tree *t = run_one(&c, prior, copy_pays, 2);
    int a = mcts_act(t, &c, 0, NULL, pol, NULL);
    cr_assert_eq(a, 0, "Copy chosen");
    cr_assert(pol[0] > 0.5, "policy target on Copy %g", pol[0]);
    mcts_tree_free(t);
}
