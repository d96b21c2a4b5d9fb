/* egrl.h - hwgym-egrl internals: the EGRL paper's agent (Khadka et al., section 4 and
 * Algorithms 1-2) and its baselines on placement-v0. Owns the workload view of a session
 * (graph, node features, action layout), the mixed population (GNN policies and Boltzmann
 * chromosomes) with its evolutionary operators, and the run loops of the four modes:
 *   egrl       population + SAC-discrete learner sharing one replay, PG migration
 *   ea         the population alone
 *   pg         the SAC-discrete learner alone (noisy behavioural actions)
 *   greedy-dp  layer-wise greedy passes over the 9 (weights, activation) choices per node
 * Every generation (or DP node) is scored by one evaluate_batch; every evaluation is a trial.
 * docs/egrl.md is the user guide. */
#ifndef HWGYM_EGRL_H
#define HWGYM_EGRL_H

#include <stdio.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "boltzmann.h"
#include "gnn.h"
#include "sac_discrete.h"

typedef enum { EG_EGRL = 0, EG_EA, EG_PG, EG_DP } eg_mode;

typedef struct eg_params {
    eg_mode mode;
    int64_t pop, pg_rollouts;
    double bz_frac, elite_frac, mut_prob, cx_prob;
    int64_t tournament;
    /* ERL/CERL weight mutation (docs/egrl.md) */
    double mut_frac, mut_strength, super_prob, super_strength, reset_prob, weight_limit;
    bz_mut bz;
    double updates_per_eval; /* gradient steps per evaluation (Table 2: 1) */
    double pg_noise; /* std of the Gaussian added to the PG learner's logits when it explores */
    sacd_cfg sac;
    gnn_cfg pol; /* population / PG policy GNN (in, n_out filled at set-up) */
} eg_params;

typedef struct eg_member {
    int kind; /* 0 GNN, 1 Boltzmann */
    gnn_net *net;
    bz_chrom *bz;
    double fitness;
} eg_member;

typedef struct eg_ctx {
    eg_params p;
    ag_opts *o;
    ag_sess *sess;
    ag_run *run;
    gsl_rng *rng;
    /* workload */
    int N, E, F, nmem, D; /* nodes, edges, features, memories, action elements (2N) */
    gnn_graph *g;
    double *feat; /* N x F network input */
    /* population */
    eg_member *pop, *next;
    int npop, nbz;
    sacd *pg;
    /* results */
    int64_t gens, updates, calls;
    double upd_acc; /* fractional gradient steps carried to the next generation */
    double best_gnn_fit;
    double *best_gnn; /* params of the best GNN policy evaluated greedily (NULL: none yet) */
    size_t best_gnn_n;
    /* Greedy-DP position: the current map, its reward, the next node */
    int64_t *dp_cur;
    double dp_r;
    int64_t dp_node;
    ag_ckpt_ctl *ctl; /* NULL: checkpoints off */
    sacd_stats last;
    int64_t valid, evals;
    /* capacity-aware decoding (decode.c; NULL until eg_decode_init) */
    int64_t dec_cap[32];  /* per memory: capacity of one bank, bytes */
    int dec_banks[32];
    int64_t *dec_bytes;   /* [2N] tensor sizes */
    int *dec_last;        /* [N] last step of each activation */
    FILE *curve;
    double curve_best;
    hw_err err;
} eg_ctx;

/* workload.c */
int eg_workload(eg_ctx *c, hw_err *err);
/* --features capacity: appends to each node's 19 Table 1 columns the chip-relative sizes that
 * the policy otherwise cannot see, for every on-chip memory k (reset info: capacity of a bank,
 * banks): its weights and its activation over one bank's capacity, and the weights of nodes
 * i..N-1 over memory k's total; then the graph's weights over all on-chip memory and
 * log(1 + N) / 10. Ratios r enter as r / (1 + r). F becomes 19 + 3 (nmem - 1) + 2. */
int eg_capacity_features(eg_ctx *c, hw_err *err);
/* Greedy mapping of a GNN policy on the workload (argmax per node and sub-action). */
void eg_gnn_act(eg_ctx *c, gnn_net *n, int64_t *action);
/* Its posterior (D x nmem probabilities). */
void eg_gnn_posterior(eg_ctx *c, gnn_net *n, double *post);
/* Scores n actions (n x D) with one evaluate_batch, logs each as a trial (worker label per
 * action), writes the curve; rewards out. Returns 0 or -1 (err set). */
int eg_evaluate(eg_ctx *c, int n, const int64_t *actions, const char *const *workers, double *rewards);

/* decode.c: --decode capacity. init reads the chip from the reset info (0 or -1, err set);
 * eg_decode turns a posterior (D x nmem) into a map that fits every memory bank at every step. */
int eg_decode_init(eg_ctx *c, hw_err *err);
void eg_decode(const eg_ctx *c, const double *post, int64_t *action);

/* pop.c */
void eg_pop_init(eg_ctx *c);
void eg_pop_free(eg_ctx *c);
void eg_pop_act(eg_ctx *c, int64_t *actions); /* npop x D */
void eg_pop_evolve(eg_ctx *c);
void eg_gnn_mutate(eg_ctx *c, gnn_net *n);
void eg_gnn_crossover(eg_ctx *c, gnn_net *child, const gnn_net *a, const gnn_net *b);
void eg_migrate(eg_ctx *c);

/* ckpt.c: a checkpoint when one is due (call before an evaluate_batch); the state from
 * ctl->resume (after the population and the learner exist). 0 or -1 (c->err / err set). */
int eg_ckpt_point(eg_ctx *c);
int eg_ckpt_restore(eg_ctx *c, hw_err *err);

/* loops.c */
int eg_run_population(eg_ctx *c); /* egrl and ea */
int eg_run_pg(eg_ctx *c);
int eg_run_dp(eg_ctx *c);

#endif
