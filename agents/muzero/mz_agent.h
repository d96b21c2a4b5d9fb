/* mz_agent.h - hwgym-muzero internals: the options, the game driver (many games in flight,
 * Drop-backup, trajectories, trial logging) and the move policies of each --mode.
 *   driver.c    games, Drop-backup, trajectories -> replay, best complete game
 *   muzero.c    MuZero acting (learned-model MCTS), search-only (true-game MCTS), learning-only,
 *               training with Reanalyse, the heuristic demonstration
 *   baselines.c ES (Salimans et al. 2017) over action preferences, random legal play
 *   elite.c     self-imitation: the heuristic's and the best game in a small replay sampled with
 *               every batch
 *   heur.c      the heuristic's move as a root prior (--heuristic-prior), from an in-process copy
 *               of the program (shared with search-only mode)
 *   ckpt.c      checkpoint and --resume (checkpoint.h's rule): the whole agent state, and the
 *               games in flight rebuilt by replaying their action prefixes into fresh sessions
 *   main.c      command line and summary */
#ifndef HWGYM_MZ_AGENT_H
#define HWGYM_MZ_AGENT_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent_common.h"
#include "checkpoint.h"
#include "mcts.h"
#include "muzero_net.h"
#include "muzero_train.h"
#include "mz_env.h"

typedef enum { MODE_MUZERO = 0, MODE_PROD, MODE_SEARCH, MODE_LEARN, MODE_ES, MODE_RANDOM } mz_mode;

typedef struct mz_opts {
    mz_mode mode;
    int games;            /* games in flight (at most) */
    bool fit_games;       /* retire games in flight that the budget cannot complete (game.c) */
    mcts_cfg mcts;
    mz_train_cfg train;
    int batch;
    int replay;
    double reanalyse;     /* fraction of each batch with fresh targets */
    int reanalyse_sims;
    int train_every;      /* env steps per training step */
    double sil;           /* fraction of each batch from the self-imitation replay (0: off) */
    double heur_prior;    /* weight of the heuristic's move mixed into the search's root prior (0: off) */
    bool f32;             /* --float32: network inference in single precision (training stays float64) */
    bool model_true;      /* AlphaZero mode: search the true game with the learned prior/value */
    int greedy_games;     /* games in flight played greedily (no noise, argmax): evaluation games */
    int log_games;        /* complete games per window of the collapse watch */
    double temp0, temp1;  /* temperature schedule: temp0 -> temp1 linearly over decay steps */
    int64_t temp_decay;
    bool demo;            /* seed the replay with the heuristic's game */
    bool backup;          /* Drop-backup (on unless --no-backup) */
    int rollout;          /* search-only: random rollout depth at leaves */
    double time_limit;    /* seconds (0: none) */
    double cpu_limit;     /* CPU seconds of this process, all threads (0: none) */
    int64_t max_games;    /* stop after this many complete games (0: none) */
    int es_pop;           /* ES population (mirrored pairs x 2) */
    double es_sigma, es_lr;
    mz_net_cfg net;
    const char *save;
    const char *worker;
    const char *curve;    /* CSV of complete games: seconds, env_steps, return, best */
} mz_opts;

/* ---- one game in flight ---- */
typedef struct mz_game {
    mz_env *env;
    int idx;
    int64_t episode;
    int64_t backup;       /* snapshot id of the last backup_safe state (-1: none) */
    int backup_buf;       /* buffers decided at that state */
    int backup_len;       /* trajectory length at that state */
    int flushed;          /* trajectory positions already in the replay */
    /* trajectory of the current game (positions since the last flush are kept) */
    int n, cap, F;
    double *feat;
    uint8_t *act, *mask;
    double *rew, *pol, *val;
    double *retp;         /* scaled return before each move */
    uint8_t *fz;          /* 1: a forced Drop (policy weight 0 in the replay) */
    int *bix;             /* the buffer each move decided (the advantage baseline's index) */
    int64_t gid;          /* game id in the replay (mz_replay_finish) */
    /* actions that made the current state (prefix), nbuf long */
    uint8_t *prefix;
    /* Drop-backup restore points inside the backup stretch: a snapshot taken just before each
     * alias group was opened in CMEM, while the group is still open (see driver.c) */
    struct mz_open { int alias; int n; int buf; int64_t snap; } *opens;
    int nopen, capopen;
    /* alias groups to drop after a restore */
    int *forced;
    int nforced, capforced;
    int restores;
    int stretch_losses;   /* losses since the last backup_safe state */
    bool opens_missed;    /* a group opened in this backup stretch has no restore point (cap) */
    double *cur_feat;     /* features of the current state */
    bool retired;         /* no longer played: the budget cannot complete it (mz_fit_games) */
    void *user;           /* per-mode state (ES candidate) */
} mz_game;

typedef struct mz_agent mz_agent;
/* decides the moves of n games; writes actions (-1: this game waits this round), the policy
 * target (3 per game) and root value (scaled). Forced Drops are applied by the driver after. */
typedef void (*mz_decide_fn)(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);
/* a game just completed (feasible); ret = its return */
typedef void (*mz_done_fn)(mz_agent *A, mz_game *g, double ret);

struct mz_agent {
    mz_opts o;
    ag_opts *ao;
    ag_run *run;
    gsl_rng *rng;
    int G;
    mz_game **games;
    int live;             /* games not retired (G unless mz_fit_games retired some) */
    int64_t retired;      /* games retired by mz_fit_games */
    double fit_t;         /* mz_fit_games' measuring window: clock and env steps at its start */
    int64_t fit_steps;
    int nbuf, F;
    double rscale;        /* reward scale: 100 / heuristic return */
    double *vbase;        /* --value-target adv*: the heuristic's scaled return-to-go from each
                           * buffer (nbuf + 1 entries, the last 0); NULL: no baseline */
    double heur_return, heur_latency;
    char *heur_actions;
    /* best complete game of the agent */
    double best;
    char *best_actions;
    json_t *best_metrics;
    int64_t games_done, restores, losses;
    int64_t rewound;      /* trajectory steps undone by Drop-backup restores */
    int64_t env_steps, demo_steps;
    double t0;
    double cpu0;          /* process CPU seconds at the start (--cpu-limit) */
    /* learning */
    mz_net *net;
    mz_trainer *tr;
    mz_replay *rb;
    mz_batch *batch;
    mz_replay *elite;     /* self-imitation replay (elite.c; NULL: off) */
    mz_env *elite_env;
    bool elite_due;       /* the best improved since the last rebuild */
    int64_t elite_at;     /* env steps at the last rebuild */
    char *elite_actions;  /* the best game in it (NULL: none) and its return */
    double elite_best;
    int64_t train_steps, last_train_at, sims;
    int64_t next_gid;
    /* collapse watch: choices at positions with >= 2 legal actions (forced Drops excluded) and
     * the entropy of the network's prior at acting roots, per window of --log-games games */
    int64_t choice[3], choice_all[3];
    double ent_sum;
    int64_t ent_n;
    int64_t window_games;
    json_t *windows;      /* [{games, env_steps, entropy, copy, nocopy, drop}, ...] */
    bool warned;
    double last_loss[3];
    /* mode hooks */
    mz_decide_fn decide;
    mz_done_fn on_done;
    bool store;           /* trajectories go to the replay */
    bool lean;            /* the mode reads no observation features (ES, random, search only):
                           * the env is opened without its memory map, states are not encoded */
    void *mode_state;
    void *heur;           /* --heuristic-prior's in-process games (heur.c; NULL: off) */
    json_t *ecfg;         /* the env config of every session (the acting games', the searches') */
    bool failed;          /* a mode hook failed: fatal holds the error */
    hw_err fatal;
    bool quiet;
    double last_print;
    FILE *curve;
    /* checkpoints */
    ag_ckpt_ctl *ctl;     /* NULL: none */
    bool resumed;         /* the games were rebuilt from a checkpoint: do not reset them */
};

/* driver.c */
int mz_agent_init(mz_agent *A, hw_err *err);
void mz_agent_free(mz_agent *A);
/* Plays until the budget (env steps) or the time limit is spent. */
int mz_agent_play(mz_agent *A, hw_err *err);
bool mz_agent_out_of_budget(const mz_agent *A);
/* --time-limit or --cpu-limit reached. */
bool mz_agent_out_of_time(const mz_agent *A);
/* Process CPU seconds (all threads). */
double mz_cpu_now(void);
/* Seconds on the run's clock: CPU seconds since the start with --cpu-limit, else wall. */
double mz_agent_clock(const mz_agent *A);
/* The current state's features into g->cur_feat. */
void mz_game_encode(mz_agent *A, mz_game *g);
/* Grows g's trajectory arrays (features, actions, masks, rewards, policies, values) to hold at
 * least n steps: capacity 64 doubled as needed; aborts when out of memory. */
void mz_traj_reserve(mz_game *g, int n);
void mz_progress(mz_agent *A, bool force);
/* The collapse watch's current window as JSON (a new reference) and its reset. */
json_t *mz_window_json(const mz_agent *A);
double mz_agent_temperature(const mz_agent *A);
/* Fits the games in flight to what is left of the budget (--budget env steps, --cpu-limit or
 * --time-limit): when the live games cannot all complete in it (their buffers left times the
 * measured clock per env step, rewinds included), retires the ones with the most buffers left,
 * never game 0, until they can or one is left, so that large programs complete games. Off
 * unless A->o.fit_games; ES keeps its population. With a step budget the choice is
 * deterministic; with a clock budget it depends on the measured speed, as the stop itself does. */
void mz_fit_games(mz_agent *A);
/* Logs one env step of game g (already applied) as a trial. */
int mz_log_step(mz_agent *A, mz_game *g, const char *worker, int action, hw_err *err);

/* muzero.c */
int mz_setup_learning(mz_agent *A, hw_err *err);
void mz_free_learning(mz_agent *A);
int mz_play_demo(mz_agent *A, hw_err *err);
/* The advantage baseline (A->vbase) from the heuristic's game, replayed through game 0's
 * session (not logged); wires it into the trainer and the searches. */
int mz_value_baseline(mz_agent *A, hw_err *err);
void mz_decide_muzero(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);
void mz_decide_az(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);
void mz_decide_learn(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);
int mz_setup_search(mz_agent *A, hw_err *err);
void mz_decide_search(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);
void mz_free_search(mz_agent *A);
void mz_train_maybe(mz_agent *A);

/* elite.c */
int mz_elite_setup(mz_agent *A, hw_err *err);
void mz_elite_free(mz_agent *A);
/* Rebuilds the self-imitation replay from the heuristic's and the best game. */
int mz_elite_rebuild(mz_agent *A, hw_err *err);
/* Refills it from the heuristic's game and elite_actions (after a checkpoint restore). */
int mz_elite_fill(mz_agent *A, hw_err *err);
/* Rebuilds it when the best improved and a program's worth of env steps went by. */
int mz_elite_maybe(mz_agent *A, hw_err *err);

/* heur.c */
struct mm_problem;
/* The env's program loaded in this process (the config's "problem" and "seed"); fails when its
 * buffer count differs from the env's. who names the caller in the error. */
struct mm_problem *mz_local_problem(const mz_agent *A, const char *who, hw_err *err);
/* Sets up --heuristic-prior (nothing when it is 0). */
int mz_heur_setup(mz_agent *A, hw_err *err);
void mz_heur_free(mz_agent *A);
/* h[i]: the heuristic's move at game g[i]'s current state (-1: none, e.g. the option is off or
 * the env does not allow that move). */
void mz_heur_moves(mz_agent *A, mz_game **g, int n, int *h);
/* p <- (1 - w) p + w onehot(h) (nothing when w <= 0 or h < 0). */
void mz_heur_mix(double w, int h, double p[MZ_NACT]);

/* ckpt.c */
/* Writes a checkpoint when one is due (top of the play loop: no step in flight). */
int mz_ckpt_maybe(mz_agent *A, hw_err *err);
/* Restores everything from A->ctl->resume after init and mode setup (replaces the demo). */
int mz_ckpt_restore(mz_agent *A, hw_err *err);

/* baselines.c */
void mz_es_ckpt_put(const mz_agent *A, ag_ckpt *c);
int mz_es_ckpt_get(mz_agent *A, const ag_ckpt *c, hw_err *err);
int mz_setup_es(mz_agent *A, hw_err *err);
void mz_free_es(mz_agent *A);
void mz_decide_random(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val);

#endif
