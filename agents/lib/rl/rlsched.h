/* rlsched.h - the RL-Scheduling agent (F. Xu, ACE 2025, sections 3.2-3.4): PPO with action
 * masking over sched-v0's 55 row-selection actions, the brute force inside the env.
 *
 * Owns: the paper's PPO settings (rls_cfg), the training loop over an agent session
 * (rls_train: episodes, the decaying entropy coefficient, per-layer best tables), the greedy
 * evaluation of a trained policy (rls_eval), the JSON summary of the schedule found, and the
 * episode workers of rls_cfg.workers (rounds of episodes on several sessions, one learner).
 * docs/rlsched.md is the user guide. */
#ifndef HWGYM_RLSCHED_H
#define HWGYM_RLSCHED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_common.h"
#include "ppo.h"

typedef struct rls_cfg {
    ppo_cfg ppo;          /* lr = actor lr, lr_critic, gamma, clip, vf_coef (c1), vloss, critic_l2 */
    double ent_start;     /* c2 at episode 0 (0.1) */
    double ent_final;     /* floor of c2 (0.02) */
    double ent_decay;     /* c2_e = max(final, start * decay^e) (0.995) */
    int64_t episodes;     /* training episodes (paper: up to 3000) */
    bool norm_obs;        /* running mean/std on the observation (off: sched-v0's is in [0,1]) */
    const char *worker;   /* trial worker label ("0") */
    int reward;           /* RLS_REWARD_*: what PPO learns from (the trial log keeps the env's) */
    bool learn;           /* false: the untrained control, no PPO update ever (the same rollouts,
                             sampled from the initial masked policy; --no-learn) */
    int64_t eval_every;   /* > 0: a greedy pass after every eval_every-th training episode (and
                             before the first), its network total kept in rls_result.curve; not
                             counted in steps, not logged, not checkpointed */
    struct ag_ckpt_ctl *ckpt; /* checkpoints of the training loop before each episode's reset, and
                                 its resume (checkpoint.h); NULL: off. The caller drops a resumed
                                 run's "greedy" trials (ag_run_drop_worker). */
    int workers;          /* episode workers (--workers; 0 or 1: the sequential loop). With N > 1
                             training runs in rounds: each of N workers plays one episode on its
                             own session (sess[w]) with its own RNG stream (seed, worker index,
                             episode) and a snapshot of the policy taken at the round's start; the
                             learner then takes the N trajectories in worker order (trial log,
                             best tables, PPO rollout with an update every num_steps transitions).
                             Not with norm_obs or ckpt. Deterministic for a given (seed, N); differs
                             from N = 1, whose policy changes inside a round. */
    ag_sess **sess;       /* workers sessions of the same env and config (sess[0] may be the loop's) */
} rls_cfg;

/* RLS_REWARD_ENV: the env's reward as it is (docs/sched.md: relative improvement of the step,
 *   -penalty*n for fruitless multi-row steps).
 * RLS_REWARD_LOG: log(M_before / M_after) of the step plus the env's penalties; the sum over a
 *   layer telescopes to log(M_initial / M_final), so the return measures the final schedule.
 * RLS_REWARD_QUALITY: (M_initial - M_after) / M_initial at every step plus the penalties (the
 *   other reading of the paper's eq. (1), Delta against the original table). */
enum { RLS_REWARD_ENV = 0, RLS_REWARD_LOG = 1, RLS_REWARD_QUALITY = 2 };

rls_cfg rls_cfg_default(void);

/* Best schedule seen per layer of the env (by layer index from info "layer"). */
typedef struct rls_layer_best {
    bool seen;
    double metric;        /* value of the objective (lower is better) */
    double energy_pj, cycles;
    char name[64];
    json_t *table;        /* owned; the table of the best step */
} rls_layer_best;

/* One point of the learning curve: after `episode` training episodes, the objective's network
 * total of a greedy pass. */
typedef struct rls_curve_pt {
    int64_t episode;
    double greedy_total;
} rls_curve_pt;

typedef struct rls_result {
    int64_t episodes, steps, updates;
    int nlayers;
    rls_layer_best *best; /* nlayers entries */
    bool keep_last;       /* rls_eval: every layer keeps the table its pass ended with (no best-seen) */
    double last_return;
    double ent_coef;      /* c2 at the end */
    double *ep_totals;    /* the objective's network total each training episode ended with (the
                             sampled pass of the policy of that episode); episodes entries when
                             not resumed from a checkpoint, else those since the resume */
    int64_t n_ep_totals, cap_ep_totals;
    rls_curve_pt *curve;  /* cfg.eval_every > 0 */
    int64_t n_curve, cap_curve;
} rls_result;

/* Objective name of the env config ("energy" by default) and its info key. */
const char *rls_objective(const json_t *env_config);
/* The objective applied to network totals: energy (pJ), cycles, or edp = energy x cycles. */
double rls_metric(double energy_pj, double cycles, const char *objective);

/* Trains on s until cfg->episodes episodes or `budget` env steps; logs every step in run (may be
 * NULL). With cfg->ckpt resuming, continues the training stored in it (res is filled from it). p: a PPO built for s (rls_ppo_new) — trained in place. Returns 0 or -1 with err. */
int rls_train(ag_sess *s, ag_run *run, ppo *p, const rls_cfg *cfg, const char *objective, uint64_t seed,
              int64_t budget, rls_result *res, hw_err *err);
/* One greedy (argmax) episode; every step logged as worker "greedy". Fills res->best with the
 * table each layer ends that episode with (res is reset first; res->keep_last is set): one
 * deterministic pass, no best-seen. */
int rls_eval(ag_sess *s, ag_run *run, ppo *p, const char *objective, uint64_t seed, int64_t budget,
             rls_result *res, hw_err *err);
/* PPO over the session's Discrete action space; NULL with err when the space is not Discrete. */
ppo *rls_ppo_new(ag_sess *s, const rls_cfg *cfg, uint64_t seed, hw_err *err);
void rls_result_free(rls_result *r);
/* {"layers": [...], "total_energy_pj", "total_cycles", "layers_seen"} (new reference). */
json_t *rls_result_json(const rls_result *r);
/* The objective's network total of r's per-layer tables (NaN when no layer was seen). */
double rls_result_total(const rls_result *r, const char *objective);

#endif
