/* pop.c - the mixed EGRL population (GNN policies and Boltzmann chromosomes) and its
 * evolutionary operators: tournament selection, elites, crossover within an encoding,
 * cross-encoding seeding (Algorithm 2, lines 12-20), ERL-style Gaussian weight mutation and
 * migration of the PG learner (line 38). See egrl.h and docs/egrl.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egrl.h"

static gnn_net *new_policy(eg_ctx *c) {
    gnn_net *n = gnn_new(&c->p.pol);
    if (!n) abort();
    return n;
}

static void copy_member(eg_member *dst, const eg_member *src) {
    if (src->kind == 0) memcpy(dst->net->params, src->net->params, sizeof(double) * src->net->nparams);
    else bz_copy(dst->bz, src->bz);
    dst->fitness = src->fitness;
}

void eg_pop_init(eg_ctx *c) {
    c->npop = (int)c->p.pop;
    c->nbz = (int)llround(c->p.bz_frac * (double)c->npop);
    if (c->nbz > c->npop) c->nbz = c->npop;
    c->pop = calloc((size_t)c->npop, sizeof(eg_member));
    c->next = calloc((size_t)c->npop, sizeof(eg_member));
    for (int j = 0; j < c->npop; j++) {
        int kind = j >= c->npop - c->nbz;
        for (int k = 0; k < 2; k++) {
            eg_member *m = k ? &c->next[j] : &c->pop[j];
            m->kind = kind;
            m->fitness = -INFINITY;
            if (kind) m->bz = bz_new(c->D, c->nmem);
            else m->net = new_policy(c);
        }
        if (kind) bz_init_random(c->pop[j].bz, c->rng);
        else gnn_init(c->pop[j].net, c->rng);
    }
}

void eg_pop_free(eg_ctx *c) {
    for (int j = 0; c->pop && j < c->npop; j++) {
        gnn_free(c->pop[j].net), bz_free(c->pop[j].bz);
        gnn_free(c->next[j].net), bz_free(c->next[j].bz);
    }
    free(c->pop);
    free(c->next);
    c->pop = c->next = NULL;
}

void eg_pop_act(eg_ctx *c, int64_t *actions) {
    for (int j = 0; j < c->npop; j++) {
        int64_t *a = actions + (size_t)j * c->D;
        if (c->pop[j].kind == 0) eg_gnn_act(c, c->pop[j].net, a);
        else bz_sample(c->pop[j].bz, c->rng, a);
    }
}

/* ERL's SSNE mutation (Khadka and Tumer 2018), per weight tensor (biases are left alone):
 * ceil(mut_frac * size) random entries; each is reset to N(0, 1) with probability reset_prob,
 * gets N(0, super_strength |w|) with probability super_prob, otherwise N(0, mut_strength |w|);
 * weights are clamped to +-weight_limit. */
void eg_gnn_mutate(eg_ctx *c, gnn_net *n) {
    const eg_params *p = &c->p;
    int T = gnn_ntensors(n);
    for (int t = 0; t < T; t++) {
        size_t b, e;
        gnn_layer_range(n, t, &b, &e);
        size_t sz = e - b;
        if (sz == 0) continue;
        if (t < 4 * n->nconv ? t % 4 == 3 : t == T - 1) continue; /* conv and head biases */
        size_t num = (size_t)ceil(p->mut_frac * (double)sz);
        for (size_t k = 0; k < num; k++) {
            double *w = n->params + b + (size_t)ag_rng_int(c->rng, (int64_t)sz);
            double r = ag_rng_uniform(c->rng);
            if (r < p->super_prob) *w += p->super_strength * fabs(*w) * ag_rng_normal(c->rng);
            else if (r < p->super_prob + p->reset_prob) *w = ag_rng_normal(c->rng);
            else *w += p->mut_strength * fabs(*w) * ag_rng_normal(c->rng);
            if (*w > p->weight_limit) *w = p->weight_limit;
            if (*w < -p->weight_limit) *w = -p->weight_limit;
        }
    }
}

/* Single-point crossover over the parameter tensors: tensors [0, t) from a, [t, T) from b. */
void eg_gnn_crossover(eg_ctx *c, gnn_net *child, const gnn_net *a, const gnn_net *b) {
    int T = gnn_ntensors(a);
    int t = 1 + (int)ag_rng_int(c->rng, T - 1);
    size_t cut, e;
    gnn_layer_range(a, t, &cut, &e);
    memcpy(child->params, a->params, sizeof(double) * cut);
    memcpy(child->params + cut, b->params + cut, sizeof(double) * (a->nparams - cut));
}

static int tournament(eg_ctx *c, int kind /* -1: any */) {
    int best = -1;
    for (int k = 0; k < c->p.tournament; k++) {
        int j;
        int tries = 0;
        do j = (int)ag_rng_int(c->rng, c->npop);
        while (kind >= 0 && c->pop[j].kind != kind && ++tries < 1000);
        if (kind >= 0 && c->pop[j].kind != kind) continue;
        if (best < 0 || c->pop[j].fitness > c->pop[best].fitness) best = j;
    }
    return best;
}

static int *rank_desc(eg_ctx *c) {
    int *r = malloc(sizeof(int) * (size_t)c->npop);
    for (int j = 0; j < c->npop; j++) r[j] = j;
    /* insertion sort: fitness descending, then lower slot (stable, deterministic) */
    for (int i = 1; i < c->npop; i++) {
        int v = r[i], k = i;
        while (k > 0 && c->pop[r[k - 1]].fitness < c->pop[v].fitness) r[k] = r[k - 1], k--;
        r[k] = v;
    }
    return r;
}

void eg_pop_evolve(eg_ctx *c) {
    int *rank = rank_desc(c);
    int ne = (int)llround(c->p.elite_frac * c->npop);
    if (ne < 1) ne = 1;
    if (ne > c->npop) ne = c->npop;
    char *elite = calloc((size_t)c->npop, 1);
    for (int k = 0; k < ne; k++) elite[rank[k]] = 1;
    double *post = malloc(sizeof(double) * (size_t)c->D * c->nmem);
    for (int j = 0; j < c->npop; j++) {
        eg_member *slot = &c->pop[j], *child = &c->next[j];
        if (elite[j]) { /* shielded from mutation */
            copy_member(child, slot);
            continue;
        }
        int b = tournament(c, -1);
        int a = rank[ag_rng_int(c->rng, ne)];
        bool cx = ag_rng_uniform(c->rng) <= c->p.cx_prob;
        if (slot->kind == 0) {
            if (c->pop[b].kind != 0) b = tournament(c, 0); /* a Boltzmann winner cannot become a GNN */
            copy_member(child, &c->pop[b]);
            if (cx && c->pop[a].kind == 0) eg_gnn_crossover(c, child->net, c->pop[a].net, c->pop[b].net);
            if (ag_rng_uniform(c->rng) <= c->p.mut_prob) eg_gnn_mutate(c, child->net);
        } else {
            if (c->pop[b].kind == 1) {
                copy_member(child, &c->pop[b]);
                if (cx && c->pop[a].kind == 1) bz_crossover(child->bz, c->pop[a].bz, c->pop[b].bz, c->rng);
                else if (cx) { /* elite GNN, Boltzmann offspring: seed its prior (line 17-18) */
                    eg_gnn_posterior(c, c->pop[a].net, post);
                    bz_seed_from_posterior(child->bz, post);
                }
            } else { /* a GNN won the Boltzmann slot: encode its posterior as the prior */
                bz_copy(child->bz, slot->bz);
                eg_gnn_posterior(c, c->pop[b].net, post);
                bz_seed_from_posterior(child->bz, post);
            }
            if (ag_rng_uniform(c->rng) <= c->p.mut_prob) bz_mutate(child->bz, &c->p.bz, c->rng);
        }
    }
    eg_member *t = c->pop;
    c->pop = c->next;
    c->next = t;
    free(post);
    free(elite);
    free(rank);
}

/* Algorithm 2, line 38: the PG learner's weights into the weakest member of the generation
 * just ranked (its slot in the new population); a Boltzmann slot gets the learner's
 * posterior as its prior instead. */
void eg_migrate(eg_ctx *c) {
    int w = 0;
    for (int j = 1; j < c->npop; j++)
        if (c->next[j].fitness < c->next[w].fitness) w = j; /* next holds the previous generation */
    eg_member *m = &c->pop[w];
    if (m->kind == 0) memcpy(m->net->params, c->pg->actor->params, sizeof(double) * m->net->nparams);
    else {
        double *post = malloc(sizeof(double) * (size_t)c->D * c->nmem);
        sacd_posterior(c->pg, post);
        bz_seed_from_posterior(m->bz, post);
        free(post);
    }
}
