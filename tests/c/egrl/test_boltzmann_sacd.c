/* test_boltzmann_sacd.c - Boltzmann chromosome operators and the graph SAC-discrete learner
 * (agents/lib/rl/boltzmann.h, sac_discrete.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "boltzmann.h"
#include "sac_discrete.h"

Test(boltzmann, temperature_controls_exploration) {
    bz_chrom *c = bz_new(2, 3);
    double pr[6] = {0.7, 0.2, 0.1, 0.1, 0.1, 0.8};
    bz_seed_from_posterior(c, pr);
    double p[3];
    c->temp[0] = 0.01;
    bz_probs(c, 0, p);
    cr_assert(p[0] > 0.999, "low T follows the prior's mode: %g", p[0]);
    c->temp[0] = 10;
    bz_probs(c, 0, p);
    for (int j = 0; j < 3; j++) cr_assert(fabs(p[j] - 1.0 / 3) < 0.02, "high T is near uniform: %g", p[j]);
    c->temp[0] = 1;
    bz_probs(c, 0, p);
    double s = exp(0.7) + exp(0.2) + exp(0.1);
    cr_assert_float_eq(p[0], exp(0.7) / s, 1e-12);
    cr_assert_float_eq(p[2], exp(0.1) / s, 1e-12);
    int64_t a[2];
    bz_mode(c, a);
    cr_assert(a[0] == 0 && a[1] == 2);
    /* sampling frequencies follow bz_probs */
    gsl_rng *r = ag_rng_new(3);
    c->temp[1] = 0.5;
    double q[3];
    bz_probs(c, 1, q);
    int cnt[3] = {0};
    for (int k = 0; k < 20000; k++) {
        bz_sample(c, r, a);
        cnt[a[1]]++;
    }
    for (int j = 0; j < 3; j++) cr_assert(fabs(cnt[j] / 20000.0 - q[j]) < 0.015, "choice %d: %g vs %g", j, cnt[j] / 20000.0, q[j]);
    gsl_rng_free(r);
    bz_free(c);
    cr_assert_null(bz_new(3, 65));
}

Test(boltzmann, mutation_crossover_seeding) {
    gsl_rng *r = ag_rng_new(7);
    bz_chrom *a = bz_new(50, 3), *b = bz_new(50, 3), *c = bz_new(50, 3);
    bz_init_random(a, r);
    bz_init_random(b, r);
    for (int d = 0; d < 50; d++) cr_assert(a->temp[d] >= 0.05 - 1e-12 && a->temp[d] <= 1.0 + 1e-12);
    bz_crossover(c, a, b, r);
    /* a single cut: a prefix from a, the rest from b */
    int cut = -1;
    for (int d = 0; d < 50; d++) {
        int fa = !memcmp(c->prior + 3 * d, a->prior + 3 * d, 3 * sizeof(double)) && c->temp[d] == a->temp[d];
        int fb = !memcmp(c->prior + 3 * d, b->prior + 3 * d, 3 * sizeof(double)) && c->temp[d] == b->temp[d];
        cr_assert(fa || fb);
        if (!fa && cut < 0) cut = d;
        if (cut >= 0) cr_assert(fb, "element %d after the cut %d comes from b", d, cut);
    }
    cr_assert(cut >= 1 && cut <= 49, "cut %d", cut);
    /* mutation: about frac of the elements change, priors stay distributions, T in range */
    bz_copy(c, a);
    bz_mut m = bz_mut_default();
    m.frac = 0.5;
    bz_mutate(c, &m, r);
    int changed = 0;
    for (int d = 0; d < 50; d++) {
        double s = 0;
        for (int j = 0; j < 3; j++) {
            cr_assert(c->prior[3 * d + j] >= 0);
            s += c->prior[3 * d + j];
        }
        cr_assert_float_eq(s, 1.0, 1e-12);
        cr_assert(c->temp[d] >= BZ_TMIN && c->temp[d] <= BZ_TMAX);
        changed += c->temp[d] != a->temp[d];
    }
    cr_assert(changed > 10 && changed < 40, "%d of 50 mutated at frac 0.5", changed);
    /* seeding keeps temperatures and takes the posterior */
    double post[150];
    for (int k = 0; k < 150; k++) post[k] = (k % 3 == 1) ? 0.8 : 0.1;
    bz_copy(c, a);
    bz_seed_from_posterior(c, post);
    cr_assert_eq(memcmp(c->temp, a->temp, sizeof(double) * 50), 0);
    int64_t act[50];
    bz_mode(c, act);
    for (int d = 0; d < 50; d++) cr_assert_eq(act[d], 1);
    bz_free(a), bz_free(b), bz_free(c);
    gsl_rng_free(r);
}

static const int64_t EDGES[] = {0, 1, 1, 2, 2, 3, 1, 4, 4, 5};

static sacd *small_sacd_chunk(gnn_graph **g, int chunk) {
    hw_err err = {0};
    *g = gnn_graph_from_edges(6, EDGES, 5, &err);
    double feat[6 * 3];
    for (int i = 0; i < 18; i++) feat[i] = 0.1 * (i % 7) - 0.2;
    sacd_cfg c = sacd_cfg_default();
    c.actor.hidden = c.actor.out = 4;
    c.actor.heads = 2;
    c.actor.depth = 2;
    c.critic = c.actor;
    c.batch = 4;
    c.buffer = 16;
    c.alpha = 0.3;
    c.chunk = chunk;
    sacd *s = sacd_new(&c, *g, feat, 3, 2, 3, 5, &err);
    cr_assert_not_null(s, "%s", err.msg);
    return s;
}

static sacd *small_sacd(gnn_graph **g) { return small_sacd_chunk(g, 1); }

/* the critics see the batch in chunks: any chunk (one sample, a remainder, the whole batch) is
 * the same update up to rounding */
Test(sacd, critic_chunks_give_the_same_update) {
    int chunks[3] = {1, 3, 4};
    sacd *s[3];
    gnn_graph *g[3];
    int64_t a[12];
    for (int v = 0; v < 3; v++) {
        s[v] = small_sacd_chunk(&g[v], chunks[v]);
        cr_assert_eq(s[v]->cfg.chunk, chunks[v]);
        for (int k = 0; k < 6; k++) {
            for (int i = 0; i < 12; i++) a[i] = (k * 5 + i) % 3;
            sacd_add(s[v], a, 0.1 * k, true);
        }
        gsl_rng *r = ag_rng_new(9);
        for (int u = 0; u < 2; u++) cr_assert_eq(sacd_update(s[v], r, NULL), 1);
        gsl_rng_free(r);
    }
    for (int v = 1; v < 3; v++)
        for (size_t i = 0; i < s[0]->q1->nparams; i++) {
            cr_assert_float_eq(s[v]->q1->params[i], s[0]->q1->params[i], 1e-9, "chunk %d q1[%zu]", chunks[v], i);
            cr_assert_float_eq(s[v]->q2->params[i], s[0]->q2->params[i], 1e-9, "chunk %d q2[%zu]", chunks[v], i);
        }
    for (size_t i = 0; i < s[0]->actor->nparams; i++)
        cr_assert_float_eq(s[2]->actor->params[i], s[0]->actor->params[i], 1e-9, "actor[%zu]", i);
    for (int v = 0; v < 3; v++) sacd_free(s[v]), gnn_graph_free(g[v]);
}

Test(sacd, actor_loss_gradient_check) {
    gnn_graph *g;
    sacd *s = small_sacd(&g);
    double H;
    sacd_actor_loss(s, true, &H);
    cr_assert(H > 0 && H <= 2 * log(3.0) + 1e-12, "entropy averaged over nodes: %g", H);
    size_t n = s->actor->nparams;
    double *g0 = malloc(sizeof(double) * n);
    memcpy(g0, s->actor->grads, sizeof(double) * n);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double w = s->actor->params[i], eps = 1e-6;
        s->actor->params[i] = w + eps;
        double lp = sacd_actor_loss(s, false, NULL);
        s->actor->params[i] = w - eps;
        double lm = sacd_actor_loss(s, false, NULL);
        s->actor->params[i] = w;
        double num = (lp - lm) / (2 * eps);
        if (fabs(num - g0[i]) > 1e-5 * fmax(1.0, fabs(num)) && bad++ < 5)
            cr_log_error("param %zu: numeric %.9g analytic %.9g", i, num, g0[i]);
    }
    cr_assert_eq(bad, 0);
    free(g0);
    sacd_free(s);
    gnn_graph_free(g);
}

Test(sacd, replay_cycles_and_critic_fits_rewards) {
    gnn_graph *g;
    sacd *s = small_sacd(&g);
    gsl_rng *r = ag_rng_new(2);
    cr_assert_eq(sacd_update(s, r, NULL), 0, "no update before a batch is stored");
    int64_t a[12];
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < 12; i++) a[i] = (k + i) % 3;
        sacd_add(s, a, k, true);
    }
    cr_assert_eq(s->size, 16);
    cr_assert_eq(s->pos, 4);
    cr_assert_float_eq(s->r_rew[0], 16.0, 0); /* the oldest four were overwritten */
    cr_assert_eq(s->r_act[0], (16 + 0) % 3);
    /* a constant reward: the critics' loss falls */
    gnn_graph *g2;
    sacd *t = small_sacd(&g2);
    for (int k = 0; k < 8; k++) sacd_add(t, a, 0.4, true);
    sacd_stats st0, st;
    sacd_update(t, r, &st0);
    for (int k = 0; k < 300; k++) sacd_update(t, r, &st);
    cr_assert(st.q_loss < 0.05 * st0.q_loss, "q loss %g -> %g", st0.q_loss, st.q_loss);
    sacd_free(t);
    gnn_graph_free(g2);
    sacd_free(s);
    gnn_graph_free(g);
    gsl_rng_free(r);
}
