/* search.h - hwgym-search: black-box search baselines over an env's action space.
 * Owns: the search space view of an action space (hs_space), the objective interface the
 * algorithms call (hs_objective: score a batch of points), and the algorithms themselves:
 * random walker, GA, GAMMA-style GA, Bayesian optimisation (GP, Matern 5/2, EI), a
 * Salimans-style evolution strategy, ArchGym-style ant-colony optimisation and simulated
 * annealing.
 *
 * A point is `dim` doubles in action units: an integer index for a categorical element
 * (0 .. card-1), a real in [low, high] for a Box element. Every algorithm draws all its
 * randomness from one gsl_rng seeded with opts.seed, and scores each generation (or batch of
 * proposals) with ONE objective call of at most opts.batch points, so a run is deterministic
 * for a seed whenever the objective is. docs/search.md documents every hyperparameter. */
#ifndef HW_SEARCH_H
#define HW_SEARCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"
#include "hw_space.h"

typedef struct hs_space {
    int dim;
    int64_t *card;      /* choices per element; 0 = continuous (Box) */
    double *low, *high; /* bounds in action units (categorical: 0 .. card-1) */
    char **names;       /* element names ("p3" when the space has none) */
    char ***labels;     /* labels[i]: card[i] strings, or NULL */
    bool scalar;        /* a Discrete space: the action is one number, not a list */
    /* Optional design encoding (NULL: the point is the action vector itself): turns a point into
     * the design the env's evaluate() scores, e.g. sched-v0's genome into a table (sched_genome.c). */
    json_t *(*encode)(const struct hs_space *s, const double *x);
    void *enc;          /* the encoding's data, freed with enc_free */
    void (*enc_free)(void *enc);
} hs_space;

/* sched-v0 in layer mode: a genome of one gene per prime factor of each layer dimension, whose
 * value picks the table row (a present storage row or spatial row) that factor goes to; points
 * are scored as whole tables ({"table": [...]}). NULL with err naming why when the config is not
 * one layer of sched-v0. */
hs_space *hs_sched_genome_space(const json_t *env_config, hw_err *err);

/* From an integer (Discrete/MultiDiscrete/MultiBinary) or Box action space. */
hs_space *hs_space_from_hw(const hw_space *s, hw_err *err);
hs_space *hs_space_from_json(const json_t *j, hw_err *err);
void hs_space_free(hs_space *s);
/* [0,1] encoding used by BO and ES: categorical k -> k/(card-1), Box x -> (x-low)/(high-low). */
void hs_encode(const hs_space *s, const double *x, double *u);
/* The inverse, rounding categorical elements to the nearest index and clamping. */
void hs_decode(const hs_space *s, const double *u, double *x);
/* The action as JSON: a list of dim numbers (integers for categorical elements). */
json_t *hs_point_json(const hs_space *s, const double *x);
/* {"name": label-or-value, ...} for summaries. */
json_t *hs_point_decoded(const hs_space *s, const double *x);

typedef struct hs_objective {
    void *ctx;
    /* Scores n points (rows of s->dim doubles) in one call. rewards[i] = NaN for a point that
     * failed; metrics[i] gets a new reference (or NULL). Returns 0, or -1 (transport/env
     * failure: the search stops with that error). */
    int (*eval)(void *ctx, int n, const double *x, double *rewards, json_t **metrics, hw_err *err);
} hs_objective;

typedef enum { HS_RANDOM = 0, HS_GA, HS_GAMMA, HS_BO, HS_ES, HS_ACO, HS_SA, HS_NALGO } hs_algo;
const char *hs_algo_name(hs_algo a);
int hs_algo_from_name(const char *s); /* -1 when unknown */

/* Hyperparameters (docs/search.md). hs_params_default fills them; --opt key=value sets one. */
typedef struct hs_params {
    /* ga */
    double ga_tournament, ga_crossover, ga_mutation /* <0: 1/dim */, ga_elite;
    /* gamma */
    double gm_elite_frac, gm_parent_frac, gm_crossover, gm_mutation, gm_reorder, gm_growth;
    /* bo */
    double bo_init /* <=0: max(10, 2*dim) */, bo_train, bo_refit, bo_xi, bo_cand, bo_starts, bo_maxeval;
    /* es */
    double es_sigma, es_lr, es_init_random;
    /* aco */
    double aco_evaporation, aco_greediness, aco_tau0, aco_bins;
    /* sa */
    double sa_t0, sa_t1, sa_moves, sa_step, sa_relative;
} hs_params;

void hs_params_default(hs_params *p);
/* "key=value": sets one hyperparameter; error lists the known keys. */
int hs_params_set(hs_params *p, const char *kv, hw_err *err);
/* The parameters as a JSON object (run config). */
json_t *hs_params_json(const hs_params *p, hs_algo a);

/* Called once per evaluated point, in evaluation order (index = 0-based sample number). */
typedef void (*hs_observer)(void *ud, int64_t index, const double *x, double reward, const json_t *metrics);

typedef struct hs_opts {
    hs_algo algo;
    uint64_t seed;
    int64_t budget; /* points to evaluate */
    int batch;      /* points per objective call (population / ants / q); <=0: the algo's default */
    hs_params p;
    hs_observer observer;
    void *observer_ud;
} hs_opts;

int hs_default_batch(hs_algo a);

typedef struct hs_result {
    int64_t samples, calls;
    double best;           /* -inf when nothing scored */
    double *best_x;        /* dim doubles (malloc) */
    json_t *best_metrics;  /* new reference or NULL */
    int64_t best_index;    /* sample number of the best */
} hs_result;

/* Runs the search. res must be freed with hs_result_free. */
int hs_run(const hs_opts *o, const hs_space *s, hs_objective *obj, hs_result *res, hw_err *err);
void hs_result_free(hs_result *r);

/* ---- objectives ---- */
/* Over an agents/lib session (server: one evaluate_batch per call; --endpoint local: the env's
 * evaluate() in this process). */
struct ag_sess;
typedef struct hs_sess_obj {
    struct ag_sess *sess;
    const hs_space *space;
} hs_sess_obj;
hs_objective hs_sess_objective(hs_sess_obj *o);

/* Checkpoints and resume (resume.c): wraps an objective; replays the first replay_n samples
 * from the checkpoint, then checkpoints (ctl) before live calls once `every` samples passed. */
struct ag_ckpt_ctl;
struct ag_run;
typedef struct hs_ckpt_obj {
    hs_objective inner;
    const hs_space *space;
    struct ag_ckpt_ctl *ctl;
    struct ag_run *run;
    int64_t done, cap, replay_n;
    double *rewards;      /* every sample's reward so far (NaN kept) */
    uint64_t hash, replay_hash;
} hs_ckpt_obj;
int hs_ckpt_obj_init(hs_ckpt_obj *o, hs_objective inner, const hs_space *space, struct ag_ckpt_ctl *ctl,
                     struct ag_run *run, hw_err *err);
void hs_ckpt_obj_free(hs_ckpt_obj *o);
hs_objective hs_ckpt_objective(hs_ckpt_obj *o);

/* The command line (main() calls this; tests call it in-process). */
int hs_main(int argc, char **argv);

#endif
