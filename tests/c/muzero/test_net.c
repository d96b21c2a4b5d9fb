/* test_net.c - muzero_net / muzero_train: h and h^-1, two-hot encoding, finite-difference
 * gradient checks of the whole K-step unrolled loss (all three networks), the 0.5 dynamics
 * gradient scale, TD-n targets and unroll targets from the replay, the advantage baseline (targets
 * and the learned-model search's leaf values), and training lowering the loss. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "muzero_net.h"
#include "muzero_train.h"
#include "mz_search.h"

Test(muzero_net, h_round_trip_and_two_hot) {
    double xs[] = {0, 1e-4, -0.3, 1, 2.5, -7, 42, 99.5, -1234.5, 1e5};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        double x = xs[i];
        cr_assert(fabs(mz_hinv(mz_h(x)) - x) <= 1e-9 * (1 + fabs(x)), "h^-1(h(%g)) = %.12g", x, mz_hinv(mz_h(x)));
    }
    cr_assert(fabs(mz_h(3) - (1 + 0.003)) < 1e-12); /* sqrt(4) - 1 + 1e-3 * 3 */
    int S = 15, V = 31;
    double cat[31], logits[31];
    double vals[] = {0, 0.37, 5, -2.2, 80};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        mz_to_cat(vals[i], S, cat);
        double s = 0, e = 0;
        for (int j = 0; j < V; j++) s += cat[j], e += cat[j] * (j - S);
        cr_assert(fabs(s - 1) < 1e-12);
        cr_assert(fabs(e - mz_h(vals[i])) < 1e-12, "two-hot mean is h(x)");
        /* logits = log(cat) decode back to the value (expectation in h space, then h^-1) */
        for (int j = 0; j < V; j++) logits[j] = cat[j] > 0 ? log(cat[j]) : -1e9;
        cr_assert(fabs(mz_from_logits(logits, S, NULL) - vals[i]) < 1e-6 * (1 + fabs(vals[i])));
    }
    mz_to_cat(1e9, S, cat); /* clipped at the top bin */
    cr_assert_eq(cat[V - 1], 1.0);
}

static mz_batch *random_batch(gsl_rng *r, int B, int K, int F, int V) {
    mz_batch *b = mz_batch_new(B, K, F, V);
    for (int i = 0; i < B * F; i++) b->feat[i] = ag_rng_uniform(r) * 2 - 1;
    for (int i = 0; i < B * K; i++) b->act[i] = (int)ag_rng_int(r, 3);
    for (int i = 0; i < B * (K + 1); i++) {
        double p[3] = {ag_rng_uniform(r), ag_rng_uniform(r), ag_rng_uniform(r)}, s = p[0] + p[1] + p[2];
        for (int a = 0; a < 3; a++) b->pol[i * 3 + a] = p[a] / s;
        b->polw[i] = i % 5 == 4 ? 0 : 1;
        b->val[i] = (ag_rng_uniform(r) - 0.3) * 20;
        b->valw[i] = 1;
        b->rew[i] = ag_rng_uniform(r) * 3;
        b->reww[i] = i % (K + 1) == 0 ? 0 : 1;
    }
    return b;
}

/* The output layers start at zero (no gradient reaches the layers below them): move every
 * parameter so that the gradient checks see all paths. */
static void jitter(mz_net *n, gsl_rng *r) {
    nnet_mlp *m[3] = {n->repr, n->dyn, n->pred};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < m[k]->nparams; i++) m[k]->params[i] += 0.3 * ag_rng_normal(r);
}

Test(muzero_net, untrained_model_prefers_no_action) {
    gsl_rng *r = ag_rng_new(7);
    mz_net_cfg c = {6, 4, 8, 8, 5};
    mz_net *n = mz_net_new(&c, r);
    double f[6], e0[4], pl[3], v, e1[3 * 4], rw[3], pl1[9], v1[3];
    for (int i = 0; i < 6; i++) f[i] = ag_rng_normal(r);
    mz_net_initial(n, f, 1, e0, pl, &v);
    cr_assert(fabs(v) < 1e-12 && pl[0] == pl[1] && pl[1] == pl[2], "value 0, uniform prior");
    double emb[12];
    for (int a = 0; a < 3; a++) memcpy(emb + a * 4, e0, sizeof e0);
    int act[3] = {0, 1, 2};
    mz_net_recurrent(n, emb, act, 3, e1, rw, pl1, v1);
    for (int a = 0; a < 3; a++) cr_assert(fabs(rw[a]) < 1e-12 && fabs(v1[a]) < 1e-12, "action %d: reward %g value %g", a, rw[a], v1[a]);
    cr_assert(fabs(e1[0] - e1[4]) + fabs(e1[4] - e1[8]) > 0, "the dynamics embedding still depends on the action");
    mz_net_free(n);
    gsl_rng_free(r);
}

static void gradcheck(double gscale) {
    gsl_rng *r = ag_rng_new(11);
    mz_net_cfg c = {7, 5, 6, 6, 4};
    mz_net *n = mz_net_new(&c, r);
    jitter(n, r);
    mz_train_cfg tc = mz_train_cfg_default();
    tc.K = 3;
    tc.grad_scale = gscale;
    mz_trainer *t = mz_trainer_new(n, &tc);
    mz_batch *b = random_batch(r, 3, 3, c.F, n->V);
    double parts[3];
    double L = mz_loss_grad(t, b, parts);
    cr_assert(fabs(L - mz_loss(t, b)) < 1e-12, "loss with and without gradient agree");
    cr_assert(parts[0] > 0 && parts[1] > 0 && parts[2] > 0);
    nnet_mlp *nets[3] = {n->repr, n->dyn, n->pred};
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        nnet_mlp *m = nets[k];
        double *g = malloc(sizeof(double) * m->nparams);
        memcpy(g, m->grads, sizeof(double) * m->nparams);
        for (size_t i = 0; i < m->nparams; i++) {
            double p0 = m->params[i], eps = 1e-6;
            m->params[i] = p0 + eps;
            double lp = mz_loss(t, b);
            m->params[i] = p0 - eps;
            double lm = mz_loss(t, b);
            m->params[i] = p0;
            double fd = (lp - lm) / (2 * eps), err = fabs(fd - g[i]) / (1e-6 + fabs(fd) + fabs(g[i]));
            if (err > worst) worst = err;
            if (gscale == 1.0) cr_assert(err < 1e-4, "net %d param %zu: analytic %.9g vs FD %.9g", k, i, g[i], fd);
        }
        free(g);
    }
    if (gscale != 1.0) cr_assert(worst > 1e-3, "a 0.5 dynamics gradient scale must differ from the exact gradient");
    mz_batch_free(b);
    mz_trainer_free(t);
    mz_net_free(n);
    gsl_rng_free(r);
}

Test(muzero_net, unrolled_loss_gradient_matches_finite_differences) { gradcheck(1.0); }
Test(muzero_net, dynamics_gradient_scale_changes_only_upstream) {
    gradcheck(0.5);
    /* with the scale, the prediction net's gradient is unchanged and the representation's halves
     * its contribution through the unroll: compare the two runs */
    gsl_rng *r1 = ag_rng_new(5), *r2 = ag_rng_new(5);
    mz_net_cfg c = {7, 5, 6, 6, 4};
    mz_net *a = mz_net_new(&c, r1), *bn = mz_net_new(&c, r2);
    jitter(a, r1);
    jitter(bn, r2);
    mz_train_cfg t1 = mz_train_cfg_default(), t2 = t1;
    t1.K = t2.K = 2;
    t1.grad_scale = 1.0;
    t2.grad_scale = 0.5;
    mz_trainer *ta = mz_trainer_new(a, &t1), *tb = mz_trainer_new(bn, &t2);
    mz_batch *b = random_batch(r1, 2, 2, c.F, a->V);
    mz_loss_grad(ta, b, NULL);
    mz_loss_grad(tb, b, NULL);
    for (size_t i = 0; i < a->pred->nparams; i++) cr_assert_eq(a->pred->grads[i], bn->pred->grads[i]);
    int differ = 0;
    for (size_t i = 0; i < a->repr->nparams; i++) differ += fabs(a->repr->grads[i] - bn->repr->grads[i]) > 1e-12;
    cr_assert(differ > 0);
    mz_batch_free(b);
    mz_trainer_free(ta);
    mz_trainer_free(tb);
    mz_net_free(a);
    mz_net_free(bn);
    gsl_rng_free(r1);
    gsl_rng_free(r2);
}

Test(muzero_net, inference_matches_the_training_forward) {
    gsl_rng *r = ag_rng_new(2);
    mz_net_cfg c = {6, 4, 8, 8, 5};
    mz_net *n = mz_net_new(&c, r);
    jitter(n, r);
    double f[12], e0[8], e1[8], pl[6], v[2], rw[2], pl1[6], v1[2];
    for (int i = 0; i < 12; i++) f[i] = ag_rng_normal(r);
    mz_net_initial(n, f, 2, e0, pl, v);
    int act[2] = {1, 2};
    mz_net_recurrent(n, e0, act, 2, e1, rw, pl1, v1);
    for (int i = 0; i < 8; i++) cr_assert(fabs(e1[i]) < 1 && fabs(e0[i]) < 1, "embeddings are tanh-bounded");
    /* batch of 1 gives the same as row 1 of the batch of 2 */
    double e0b[4], plb[3], vb, e1b[4], rwb, pl1b[3], v1b;
    mz_net_initial(n, f + 6, 1, e0b, plb, &vb);
    mz_net_recurrent(n, e0b, act + 1, 1, e1b, &rwb, pl1b, &v1b);
    cr_assert(fabs(vb - v[1]) < 1e-12 && fabs(rwb - rw[1]) < 1e-12 && fabs(v1b - v1[1]) < 1e-12);
    mz_net_free(n);
    gsl_rng_free(r);
}

static void add_seg(mz_replay *rb, int n, double r0, bool done, double val) {
    double feat[2] = {0, 0};
    mz_pos p[16];
    memset(p, 0, sizeof p);
    for (int i = 0; i < n; i++) {
        p[i].feat = feat;
        p[i].action = i % 3;
        p[i].reward = r0 + i;
        p[i].value = val;
        p[i].pweight = 1;
        p[i].policy[i % 3] = 1;
    }
    p[n - 1].done = done;
    mz_replay_add(rb, p, n, false);
}

Test(muzero_train, td_n_targets_and_unroll_targets) {
    mz_replay *rb = mz_replay_new(32, 2);
    add_seg(rb, 5, 1, true, 100);   /* rewards 1..5, terminal */
    add_seg(rb, 4, 10, false, 7);   /* rewards 10..13, truncated, stored values 7 */
    mz_train_cfg c = mz_train_cfg_default();
    c.gamma = 0.5;
    c.td_steps = 2;
    /* position 0: 1 + 0.5*2 + 0.25*v(2)=100 */
    cr_assert(fabs(mz_replay_target(rb, 0, &c) - (1 + 1 + 25)) < 1e-9);
    /* position 3: 4 + 0.5*5, terminal after 4 -> no bootstrap */
    cr_assert(fabs(mz_replay_target(rb, 3, &c) - 6.5) < 1e-9);
    /* position 4 (last, terminal): 5 */
    cr_assert(fabs(mz_replay_target(rb, 4, &c) - 5) < 1e-9);
    /* second segment: position 5+2=7: 12 + 0.5 * (truncated at 8: bootstrap v(8)=7) */
    cr_assert(fabs(mz_replay_target(rb, 7, &c) - (12 + 0.5 * 7)) < 1e-9);
    cr_assert(fabs(mz_replay_target(rb, 8, &c) - 7) < 1e-9, "the last stored position of a truncated segment bootstraps from itself");
    cr_assert_eq(mz_replay_next(rb, 4, 1), -1, "segments do not join");
    /* unroll from position 3 with K=3: step1 reward 4 (a=0), step 2 absorbing */
    mz_batch *b = mz_batch_new(1, 3, 2, 31);
    mz_batch_fill(b, 0, rb, 3, &c);
    cr_assert_eq(b->act[0], 3 % 3);
    cr_assert_eq(b->rew[1], 4);
    cr_assert_eq(b->reww[1], 1);
    cr_assert_eq(b->rew[2], 5);
    cr_assert_eq(b->valw[2], 1);
    cr_assert_eq(b->valw[3], 1);
    cr_assert_eq(b->val[3], 0, "past a terminal: absorbing, value 0");
    cr_assert_eq(b->polw[3], 0);
    /* unroll from the truncated segment's end: no targets past it */
    mz_batch_fill(b, 0, rb, 8, &c);
    cr_assert_eq(b->valw[1], 0);
    cr_assert_eq(b->reww[1], 1, "the last stored action's reward is known");
    cr_assert_eq(b->reww[2], 0);
    mz_batch_free(b);
    /* wrap: the ring overwrites old positions */
    for (int i = 0; i < 10; i++) add_seg(rb, 5, 0, true, 0);
    cr_assert_eq(rb->n, 32);
    mz_replay_free(rb);
}

/* Drop-backup's rewound stretch: a non-terminal segment with a tail value bootstraps from it
 * after its last reward (not from the last position's own value); Monte Carlo targets are the
 * game's final return minus the return before the move, once mz_replay_finish knows it. */
Test(muzero_train, tail_bootstrap_and_monte_carlo_targets) {
    mz_replay *rb = mz_replay_new(32, 2);
    double feat[2] = {0, 0};
    mz_pos p[3];
    memset(p, 0, sizeof p);
    double rew[3] = {2, 3, -5}, retp[3] = {10, 12, 15};
    for (int i = 0; i < 3; i++) {
        p[i].feat = feat;
        p[i].reward = rew[i];
        p[i].value = 1000; /* the losing positions' root values: never the target */
        p[i].retp = retp[i];
        p[i].game = 42;
        p[i].pweight = 1;
    }
    p[2].has_tail = true;
    p[2].tail = 30; /* V(restore state) */
    mz_replay_add(rb, p, 3, false);
    mz_train_cfg c = mz_train_cfg_default();
    c.gamma = 1.0;
    c.td_steps = 10;
    cr_assert(fabs(mz_replay_target(rb, 0, &c) - 30) < 1e-9, "the stretch's gains cancel: V(restore) = %g", mz_replay_target(rb, 0, &c));
    cr_assert(fabs(mz_replay_target(rb, 2, &c) - 25) < 1e-9);
    c.value_target = MZ_VT_MC;
    cr_assert(fabs(mz_replay_target(rb, 1, &c) - 28) < 1e-9, "MC falls back to TD-n until the game ends");
    mz_replay_finish(rb, 41, 99); /* another game */
    cr_assert(fabs(mz_replay_target(rb, 1, &c) - 28) < 1e-9);
    mz_replay_finish(rb, 42, 50);
    cr_assert(fabs(mz_replay_target(rb, 0, &c) - 40) < 1e-9, "MC: 50 - 10");
    cr_assert(fabs(mz_replay_target(rb, 2, &c) - 35) < 1e-9, "MC: 50 - 15");
    mz_replay_free(rb);
}

Test(muzero_train, advantage_targets_subtract_the_baseline_by_buffer) {
    mz_replay *rb = mz_replay_new(32, 2);
    double feat[2] = {0, 0};
    mz_pos p[4];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 4; i++) {
        p[i].feat = feat;
        p[i].reward = i + 1; /* 1 2 3 4 */
        p[i].pweight = 1;
        p[i].buf = 5 + i;    /* buffers 5..8 */
    }
    p[3].done = true;
    mz_replay_add(rb, p, 4, false);
    mz_train_cfg c = mz_train_cfg_default();
    c.gamma = 1.0;
    c.K = 2;
    double base[10] = {0, 0, 0, 0, 0, 40, 30, 20, 10, 0};
    mz_batch *b = mz_batch_new(1, 2, 2, 31);
    mz_batch_fill(b, 0, rb, 0, &c);
    double plain[3] = {b->val[0], b->val[1], b->val[2]};
    cr_assert(fabs(plain[0] - 10) < 1e-9 && fabs(plain[1] - 9) < 1e-9 && fabs(plain[2] - 7) < 1e-9, "TD returns %g %g %g", plain[0], plain[1],
              plain[2]);
    c.vbase = base;
    c.nbase = 10;
    mz_batch_fill(b, 0, rb, 0, &c);
    for (int k = 0; k <= 2; k++)
        cr_assert(fabs(b->val[k] - (plain[k] - base[5 + k])) < 1e-9, "unroll step %d: %g, expected %g - %g", k, b->val[k], plain[k], base[5 + k]);
    mz_batch_fill(b, 0, rb, 3, &c); /* the last move, then absorbing: no baseline past the end */
    cr_assert(fabs(b->val[0] - (4 - 10)) < 1e-9 && b->valw[1] == 1 && b->val[1] == 0);
    cr_assert(mz_vbase(base, 10, 12) == 0 && mz_vbase(base, 10, -1) == 0 && mz_vbase(NULL, 0, 5) == 0);
    mz_batch_free(b);
    mz_replay_free(rb);
}

Test(muzero_train, learned_search_adds_the_baseline_by_depth) {
    gsl_rng *r = ag_rng_new(3);
    mz_net_cfg nc = {6, 4, 8, 8, 5};
    mz_net *n = mz_net_new(&nc, r); /* zero value head: the network's value is 0 */
    lm_ctx c = {0};
    c.net = n;
    c.E = nc.E;
    lm_reserve(&c, 2, 8);
    double f[6], pl[3], v;
    for (int i = 0; i < 6; i++) f[i] = ag_rng_normal(r);
    double base[6] = {50, 41, 33, 20, 7, 0};
    for (int pass = 0; pass < 2; pass++) {
        c.vbase = pass ? base : NULL;
        c.nbase = 6;
        mz_net_initial(n, f, 1, lm_emb(&c, 1, 0), pl, &v);
        lm_root(&c, 1, 2); /* tree 1 rooted at buffer 2 */
        mcts_leaf L[1] = {{.tree = 1, .parent = 0, .node = 1, .action = 0}};
        lm_eval(&c, L, 1);
        double v1 = L[0].value;
        L[0] = (mcts_leaf){.tree = 1, .parent = 1, .node = 2, .action = 2};
        lm_eval(&c, L, 1);
        double v2 = L[0].value;
        L[0] = (mcts_leaf){.tree = 1, .parent = 2, .node = 3, .action = 1};
        lm_eval(&c, L, 1); /* depth 3: buffer 5, the end (baseline 0) */
        double v3 = L[0].value;
        if (pass == 0) cr_assert(fabs(v1) < 1e-12 && fabs(v2) < 1e-12 && fabs(v3) < 1e-12, "no baseline: the network's 0");
        else cr_assert(fabs(v1 - 20) < 1e-12 && fabs(v2 - 7) < 1e-12 && fabs(v3) < 1e-12, "depth 1, 2, 3 from buffer 2: %g %g %g", v1, v2, v3);
    }
    lm_free(&c);
    mz_net_free(n);
    gsl_rng_free(r);
}

Test(muzero_train, adam_steps_lower_the_loss) {
    gsl_rng *r = ag_rng_new(9);
    mz_net_cfg c = {7, 8, 16, 16, 5};
    mz_net *n = mz_net_new(&c, r);
    mz_train_cfg tc = mz_train_cfg_default();
    tc.K = 2;
    tc.lr = 3e-3;
    mz_trainer *t = mz_trainer_new(n, &tc);
    mz_batch *b = random_batch(r, 8, 2, c.F, n->V);
    double L0 = mz_loss(t, b);
    for (int i = 0; i < 200; i++) {
        mz_loss_grad(t, b, NULL);
        mz_trainer_apply(t);
    }
    double L1 = mz_loss(t, b);
    cr_assert(L1 < 0.8 * L0, "loss %g -> %g", L0, L1);
    mz_batch_free(b);
    mz_trainer_free(t);
    mz_net_free(n);
    gsl_rng_free(r);
}

/* --float32: the float mirror's inference agrees with float64 inference to single precision, and
 * follows the parameters after a training step (mz_trainer_apply marks them changed); without
 * the re-sync it would answer with the old weights, which the last check tells apart. */
static void infer_all(mz_net *n, const double *f, double *out) {
    double e0[8], e1[8], pl[6], v[2], rw[2], pl1[6], v1[2];
    int act[2] = {0, 2};
    mz_net_initial(n, f, 2, e0, pl, v);
    mz_net_recurrent(n, e0, act, 2, e1, rw, pl1, v1);
    double *o = out;
    for (int i = 0; i < 8; i++) *o++ = e0[i];
    for (int i = 0; i < 8; i++) *o++ = e1[i];
    for (int i = 0; i < 6; i++) *o++ = pl[i];
    for (int i = 0; i < 6; i++) *o++ = pl1[i];
    for (int i = 0; i < 2; i++) {
        *o++ = v[i];
        *o++ = rw[i];
        *o++ = v1[i];
    }
}

static double max_abs_diff(const double *a, const double *b, int n) {
    double d = 0;
    for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

Test(muzero_net, float32_inference_matches_float64_and_follows_training) {
    gsl_rng *r = ag_rng_new(4);
    mz_net_cfg c = {6, 4, 8, 8, 5};
    mz_net *n = mz_net_new(&c, r);
    jitter(n, r);
    double f[12], a[34], b[34], a2[34], b2[34];
    for (int i = 0; i < 12; i++) f[i] = ag_rng_normal(r);
    infer_all(n, f, a);
    mz_net_use_f32(n, true);
    infer_all(n, f, b);
    double d = max_abs_diff(a, b, 34);
    cr_assert(d < 1e-4, "float32 inference differs from float64 by %g", d);
    cr_assert(d > 0, "float32 inference is bit-identical to float64: not the float path");
    /* a training step changes the weights: both precisions must see the new ones */
    mz_train_cfg tc = mz_train_cfg_default();
    tc.K = 2;
    tc.lr = 3e-2;
    mz_trainer *t = mz_trainer_new(n, &tc);
    mz_batch *bt = random_batch(r, 8, 2, c.F, n->V);
    mz_loss_grad(t, bt, NULL);
    mz_trainer_apply(t);
    infer_all(n, f, b2);
    mz_net_use_f32(n, false);
    infer_all(n, f, a2);
    cr_assert(max_abs_diff(a2, b2, 34) < 1e-4, "float32 after a step differs from float64 by %g", max_abs_diff(a2, b2, 34));
    cr_assert(max_abs_diff(a, a2, 34) > 1e-3, "the training step moved the outputs");
    mz_batch_free(bt);
    mz_trainer_free(t);
    mz_net_free(n);
    gsl_rng_free(r);
}

/* Mixed-precision training (mz_trainer_use_f32): the unrolled loss's gradient with float32 GEMMs
 * matches the float64 one (checked against finite differences above) to single precision, and
 * differs from it (the float path runs); Adam steps on it still lower the loss. */
Test(muzero_train, float32_gemm_gradient_matches_float64_and_trains) {
    gsl_rng *r = ag_rng_new(12);
    mz_net_cfg c = {7, 5, 6, 6, 4};
    mz_net *n = mz_net_new(&c, r);
    jitter(n, r);
    mz_train_cfg tc = mz_train_cfg_default();
    tc.K = 3;
    mz_trainer *t = mz_trainer_new(n, &tc);
    mz_batch *b = random_batch(r, 4, 3, c.F, n->V);
    nnet_mlp *nets[3] = {n->repr, n->dyn, n->pred};
    double *g64[3];
    double L64 = mz_loss_grad(t, b, NULL);
    for (int k = 0; k < 3; k++) {
        g64[k] = malloc(sizeof(double) * nets[k]->nparams);
        memcpy(g64[k], nets[k]->grads, sizeof(double) * nets[k]->nparams);
    }
    mz_trainer_use_f32(t, true);
    double L32 = mz_loss_grad(t, b, NULL);
    cr_assert(fabs(L32 - L64) < 1e-4 * fabs(L64), "loss %.9g (float32 GEMMs) vs %.9g", L32, L64);
    double num = 0, den = 0, mx = 0;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < nets[k]->nparams; i++) {
            double d = nets[k]->grads[i] - g64[k][i];
            num += d * d;
            den += g64[k][i] * g64[k][i];
            mx = fmax(mx, fabs(d));
        }
        free(g64[k]);
    }
    cr_assert(sqrt(num) < 1e-4 * sqrt(den), "float32-GEMM gradient off by %g of its norm", sqrt(num / den));
    cr_assert(mx > 0, "the float32 path ran (bit-identical gradients)");
    double L0 = mz_loss(t, b);
    for (int i = 0; i < 200; i++) {
        mz_loss_grad(t, b, NULL);
        mz_trainer_apply(t);
    }
    double L1 = mz_loss(t, b);
    cr_assert(L1 < 0.8 * L0, "loss %g -> %g with float32 GEMMs", L0, L1);
    mz_batch_free(b);
    mz_trainer_free(t);
    mz_net_free(n);
    gsl_rng_free(r);
}
