/* loops.c - the run loops of hwgym-egrl's modes (see egrl.h): the EGRL / EA generation loop
 * (Algorithm 2), the PG learner alone and the Greedy-DP baseline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egrl.h"

static void keep_best_gnn(eg_ctx *c, const gnn_net *n, double fit) {
    if (!(fit > c->best_gnn_fit)) return;
    c->best_gnn_fit = fit;
    if (!c->best_gnn) c->best_gnn = malloc(sizeof(double) * n->nparams);
    c->best_gnn_n = n->nparams;
    memcpy(c->best_gnn, n->params, sizeof(double) * n->nparams);
}

static int learn(eg_ctx *c, int evals) {
    c->upd_acc += evals * c->p.updates_per_eval;
    int ups = (int)floor(c->upd_acc + 1e-9);
    c->upd_acc -= ups;
    for (int u = 0; u < ups; u++)
        if (sacd_update(c->pg, c->rng, &c->last)) c->updates++;
    return 0;
}

int eg_run_population(eg_ctx *c) {
    const bool pg = c->p.mode == EG_EGRL;
    int R = pg ? (int)c->p.pg_rollouts : 0, B = c->npop + R;
    int64_t *acts = malloc(sizeof(int64_t) * (size_t)B * c->D);
    double *rew = malloc(sizeof(double) * (size_t)B);
    char **names = malloc(sizeof(char *) * (size_t)B);
    for (int j = 0; j < B; j++) {
        names[j] = malloc(32);
        if (j < c->npop) snprintf(names[j], 32, "%s%d", c->pop[j].kind ? "bz" : "gnn", j);
        else snprintf(names[j], 32, "pg%d", j - c->npop);
    }
    int rc = 0;
    while (!ag_run_done(c->run)) {
        if (eg_ckpt_point(c)) {
            rc = -1;
            break;
        }
        eg_pop_act(c, acts);
        for (int k = 0; k < R; k++) sacd_act(c->pg, c->rng, c->p.pg_noise, acts + (size_t)(c->npop + k) * c->D);
        int n = eg_evaluate(c, B, acts, (const char *const *)names, rew);
        if (n < 0) {
            rc = -1;
            break;
        }
        for (int j = 0; j < n; j++) {
            if (pg) sacd_add(c->pg, acts + (size_t)j * c->D, rew[j], true);
            if (j < c->npop) {
                c->pop[j].fitness = rew[j];
                if (c->pop[j].kind == 0) keep_best_gnn(c, c->pop[j].net, rew[j]);
            }
        }
        c->gens++;
        if (n < B || ag_run_done(c->run)) break; /* the budget is spent: no evolution or learning after the last scores */
        eg_pop_evolve(c);
        if (pg) {
            learn(c, n); /* one gradient step per evaluation of this generation */
            eg_migrate(c);
        }
    }
    for (int j = 0; j < B; j++) free(names[j]);
    free(names);
    free(acts);
    free(rew);
    return rc;
}

int eg_run_pg(eg_ctx *c) {
    int R = (int)(c->p.pg_rollouts > 0 ? c->p.pg_rollouts : 1);
    int64_t *acts = malloc(sizeof(int64_t) * (size_t)(R + 1) * c->D);
    double *rew = malloc(sizeof(double) * (size_t)(R + 1));
    const char *names[64];
    for (int k = 0; k < R && k < 64; k++) names[k] = "pg";
    int rc = 0;
    while (!ag_run_done(c->run)) {
        if (eg_ckpt_point(c)) {
            rc = -1;
            break;
        }
        for (int k = 0; k < R; k++) sacd_act(c->pg, c->rng, c->p.pg_noise, acts + (size_t)k * c->D);
        int n = eg_evaluate(c, R, acts, names, rew);
        if (n < 0) {
            rc = -1;
            break;
        }
        for (int k = 0; k < n; k++) sacd_add(c->pg, acts + (size_t)k * c->D, rew[k], true);
        c->gens++;
        if (n < R || ag_run_done(c->run)) break;
        learn(c, n);
    }
    free(acts);
    free(rew);
    return rc;
}

/* The paper's Greedy-DP: from the all-DRAM map (the initial mapping action), node by node try
 * the nmem^2 (weights, activation) choices with the rest fixed, keep the best (ties: the
 * current choice, then the lower index), and circle back for further passes until the budget
 * is spent. One evaluate_batch per node. */
int eg_run_dp(eg_ctx *c) {
    int K = c->nmem * c->nmem;
    if (!c->dp_cur) { /* a fresh run (a resumed one has its position from the checkpoint) */
        c->dp_cur = calloc((size_t)c->D, sizeof(int64_t));
        c->dp_r = -INFINITY;
        c->dp_node = 0;
    }
    int64_t *cur = c->dp_cur;
    int64_t *acts = malloc(sizeof(int64_t) * (size_t)K * c->D);
    double *rew = malloc(sizeof(double) * (size_t)K);
    const char *names[64 * 64];
    for (int k = 0; k < K; k++) names[k] = "dp";
    int rc = 0;
    while (!ag_run_done(c->run)) {
        if (eg_ckpt_point(c)) {
            rc = -1;
            break;
        }
        int i = (int)c->dp_node;
        for (int k = 0; k < K; k++) {
            int64_t *a = acts + (size_t)k * c->D;
            memcpy(a, cur, sizeof(int64_t) * (size_t)c->D);
            a[2 * i] = k / c->nmem;
            a[2 * i + 1] = k % c->nmem;
        }
        int n = eg_evaluate(c, K, acts, names, rew);
        if (n < 0) {
            rc = -1;
            break;
        }
        int best = -1;
        for (int k = 0; k < n; k++) { /* the current map's own score (the first time: the start map) */
            int64_t *a = acts + (size_t)k * c->D;
            if (a[2 * i] == cur[2 * i] && a[2 * i + 1] == cur[2 * i + 1]) c->dp_r = rew[k];
        }
        for (int k = 0; k < n; k++)
            if (rew[k] > c->dp_r && (best < 0 || rew[k] > rew[best])) best = k;
        if (best >= 0) {
            cur[2 * i] = acts[(size_t)best * c->D + 2 * i];
            cur[2 * i + 1] = acts[(size_t)best * c->D + 2 * i + 1];
            c->dp_r = rew[best];
        }
        c->gens++;
        c->dp_node = (i + 1) % c->N;
    }
    free(acts);
    free(rew);
    return rc;
}
