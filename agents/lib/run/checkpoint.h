/* checkpoint.h - preemption and resume for every hwgym agent (docs/cluster.md, "Checkpoints").
 * Owns: the checkpoint container (named arrays, JSON values and GSL RNG states), its file (a
 * small SQLite database written in ONE transaction per checkpoint, so a SIGKILL leaves either
 * the old or the new checkpoint, never half of one), the "is a checkpoint due" rule, and the
 * command-line wiring (--checkpoint FILE, --checkpoint-every N, --resume).
 *
 * ======================================================================================
 * The rule every agent follows (new agents too: EGRL, MuZero, ...)
 * ======================================================================================
 *  1. State: a checkpoint holds EVERYTHING the rest of the run depends on: network weights,
 *     optimiser moments and step counts, replay buffers and rollouts, RNG states, populations,
 *     counters (samples, episodes, updates), the best so far, and the run's trial-DB state
 *     (ag_run_ckpt_put: run id, samples, best). After resume, the run must produce the same
 *     trials, in the same order, as an uninterrupted run of the same seed.
 *  2. When: at a point where no env state is in flight: before an episode's reset (step
 *     agents) or before an evaluate/evaluate_batch call (search agents), once at least
 *     `every` samples passed since the last one (and once at sample 0, so a resumed run always
 *     finds its run id). ag_ckpt_due() says when.
 *  3. Order: flush the trial DB, THEN write the checkpoint (ag_ckpt_commit does both), so the
 *     DB always holds at least the trials the checkpoint counts. On resume, ag_run_resume()
 *     deletes the run's trials logged after the checkpoint (they are regenerated identically).
 *  4. Identity: ag_ckpt_commit stores the run's config (ctl->config); ag_ckpt_open refuses a
 *     checkpoint written with a different config and names the first differing key.
 *  5. --resume without a checkpoint file (or without an entry for this owner) starts afresh,
 *     so one command line serves the first attempt and every requeue (sbatch --requeue).
 *     A fresh start (no --resume, or nothing to resume) deletes the owner's old checkpoints.
 *
 * Use (a step agent):
 *   ag_ckpt_ctl ctl; if (ag_ckpt_ctl_init(&ctl, &o, "main", acfg, &err)) fail;  // may load
 *   ag_run *run = ag_run_resume(&o, "hwgym-x", acfg, ctl.resume, "0", &err);      // or begin
 *   if (ctl.resume) { restore own state with ag_ckpt_get_* from ctl.resume }
 *   loop: if (ag_ckpt_due(&ctl, samples)) { ag_ckpt *c = ag_ckpt_new(); ag_ckpt_put_*(c, ...);
 *                                           ag_ckpt_commit(&ctl, c, run, samples, &err); ag_ckpt_free(c); }
 *   ag_ckpt_ctl_free(&ctl);
 *
 * File: SQLite tables ckpt(owner, samples, config, created) and ckpt_entry(owner, samples,
 * name, type, n, data BLOB); several owners (e.g. one per MARL worker) share one file; the
 * latest two checkpoints of each owner are kept (a MARL launcher picks the newest sample
 * count that every worker has: ag_ckpt_common_samples). Arrays are stored in host byte order
 * (a checkpoint moves between hosts of the same architecture, as a cluster's nodes are).
 * ====================================================================================== */
#ifndef HWGYM_CHECKPOINT_H
#define HWGYM_CHECKPOINT_H

#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_common.h"
#include "hw_error.h"

typedef struct ag_ckpt ag_ckpt;
struct sqlite3;

ag_ckpt *ag_ckpt_new(void);
void ag_ckpt_free(ag_ckpt *c);
int64_t ag_ckpt_samples(const ag_ckpt *c); /* the sample count it was written at (loaded ones) */

/* Puts copy the data; a name put twice keeps the last. */
void ag_ckpt_put_f64(ag_ckpt *c, const char *name, const double *a, size_t n);
void ag_ckpt_put_i64(ag_ckpt *c, const char *name, const int64_t *a, size_t n);
void ag_ckpt_put_u8(ag_ckpt *c, const char *name, const uint8_t *a, size_t n);
void ag_ckpt_put_int(ag_ckpt *c, const char *name, int64_t v);
void ag_ckpt_put_real(ag_ckpt *c, const char *name, double v);
void ag_ckpt_put_json(ag_ckpt *c, const char *name, const json_t *j); /* NULL stores null */
void ag_ckpt_put_rng(ag_ckpt *c, const char *name, const gsl_rng *r);

/* Gets fail (HW_E_BAD_CONFIG naming the entry) when the entry is missing, of another type, or
 * (arrays) not exactly n elements long. */
int ag_ckpt_get_f64(const ag_ckpt *c, const char *name, double *a, size_t n, hw_err *err);
int ag_ckpt_get_i64(const ag_ckpt *c, const char *name, int64_t *a, size_t n, hw_err *err);
int ag_ckpt_get_u8(const ag_ckpt *c, const char *name, uint8_t *a, size_t n, hw_err *err);
int ag_ckpt_get_int(const ag_ckpt *c, const char *name, int64_t *v, hw_err *err);
int ag_ckpt_get_real(const ag_ckpt *c, const char *name, double *v, hw_err *err);
json_t *ag_ckpt_get_json(const ag_ckpt *c, const char *name, hw_err *err); /* new reference */
int ag_ckpt_get_rng(const ag_ckpt *c, const char *name, gsl_rng *r, hw_err *err);
/* Elements of an array entry, -1 when missing. */
/* Adds one loaded entry after checking it (reading a file uses this): a name, a known type
 * (1 float64, 2 int64, 3 bytes, 4 JSON, 5 RNG state) and a count that matches `bytes` exactly;
 * a duplicate name is refused. Returns -1 with err naming the entry. */
int ag_ckpt_add_entry(ag_ckpt *c, const char *name, int type, int64_t n, const void *data, size_t bytes, hw_err *err);
int64_t ag_ckpt_len(const ag_ckpt *c, const char *name);

/* File level. save: one transaction; keeps this owner's two newest checkpoints. */
int ag_ckpt_save(const char *path, const char *owner, int64_t samples, const json_t *config, const ag_ckpt *c,
                 hw_err *err);
/* Loads owner's checkpoint at `samples` (-1: its newest). Returns NULL with *missing = true
 * (err untouched) when the file or the entry does not exist, with err set on real errors.
 * *config (may be NULL) gets the stored config (new reference). */
ag_ckpt *ag_ckpt_load(const char *path, const char *owner, int64_t samples, json_t **config, bool *missing,
                      hw_err *err);
/* Deletes owner's checkpoints (owner NULL: every owner's) from the file, if it exists. */
int ag_ckpt_clear(const char *path, const char *owner, hw_err *err);
/* The largest sample count for which every owner in owners[0..n) has a checkpoint; 0 when
 * none is common (or the file is missing); -1 with err on a read error. */
int64_t ag_ckpt_common_samples(const char *path, const char *const *owners, int n, hw_err *err);

/* ---- the agents' wiring ---- */
typedef struct ag_ckpt_ctl {
    char path[4096]; /* "" when checkpoints are off */
    char owner[128];
    int64_t every;   /* samples between checkpoints (0: only at sample 0 and at resume points) */
    int64_t last;    /* samples at the last checkpoint written or loaded; -1: none yet */
    ag_ckpt *resume; /* the loaded checkpoint to continue from, or NULL (fresh run) */
    json_t *config;  /* the run's identity (owned copy) */
} ag_ckpt_ctl;

/* From o->checkpoint / o->checkpoint_every / o->resume (o->checkpoint defaults to o->db +
 * ".ckpt"). With o->resume, loads owner's newest checkpoint (at_samples < 0) or the one at
 * at_samples, and checks its config equals `config` (error naming the first differing key).
 * Fails when --checkpoint-every/--resume are given with neither --checkpoint nor --db. */
int ag_ckpt_ctl_init(ag_ckpt_ctl *ctl, const ag_opts *o, const char *owner, const json_t *config, int64_t at_samples,
                     hw_err *err);
void ag_ckpt_ctl_free(ag_ckpt_ctl *ctl);
/* True once ag_ckpt_ctl_init ran in this process. ag_run_begin refuses --checkpoint-every and
 * --resume in an agent that never calls it (it would silently not checkpoint). */
bool ag_ckpt_claimed(void);
bool ag_ckpt_on(const ag_ckpt_ctl *ctl);
/* True when checkpoints are on and none was written yet, or samples - last >= every > 0. */
bool ag_ckpt_due(const ag_ckpt_ctl *ctl, int64_t samples);

/* ---- the run's part (agent_run.c) ---- */
/* Like ag_run_begin, but with ck (not NULL) continues the run stored in ck: logs into its run
 * id, deletes that run's trials of `worker` ("*": every worker) logged after the checkpoint, and restores the
 * sample count and the best (so progress and the summary continue). The run is ended by
 * ag_run_end as usual. */
ag_run *ag_run_resume(const ag_opts *o, const char *agent, const json_t *agent_config, const ag_ckpt *ck,
                      const char *worker, hw_err *err);
/* Deletes the run's trials of `worker` (a resumed run's phase that comes after every checkpoint,
 * e.g. hwgym-rlsched's greedy episode, is played again). No DB: nothing to do. */
int ag_run_drop_worker(ag_run *r, const char *worker, hw_err *err);
/* Flushes the run's trial DB and puts run.id, run.samples, run.best, run.best_action,
 * run.best_metrics into c. */
int ag_run_ckpt_put(ag_run *r, ag_ckpt *c, hw_err *err);
/* Adds the run's state (when run is not NULL; flushes its trial DB first), saves, sets last
 * (agent_run.c: the run layer sits above the checkpoint file, which never calls back up). */
int ag_ckpt_commit(ag_ckpt_ctl *ctl, ag_ckpt *c, ag_run *run, int64_t samples, hw_err *err);
/* Deletes run_id's trials of worker ("*": of every worker, for an agent whose one process logs
 * under several worker names, as hwgym-egrl) after the first `keep` (by id). Fails when the DB holds
 * fewer than keep (the checkpoint is ahead of the log: refuse to continue). */
int ag_trials_truncate(struct sqlite3 *db, int64_t run_id, const char *worker, int64_t keep, hw_err *err);

/* ---- savers of agents/lib modules (ppo_ckpt.c): entries "<pre>.<field>" ---- */
struct ppo;
struct ag_rms;
/* PPO: weights, Adam moments/steps/lr, log std, minibatch RNG, update count, the rollout. */
void ppo_ckpt_put(ag_ckpt *c, const char *pre, const struct ppo *p);
int ppo_ckpt_get(const ag_ckpt *c, const char *pre, struct ppo *p, hw_err *err);
/* Running observation normaliser. */
void ag_rms_ckpt_put(ag_ckpt *c, const char *pre, const struct ag_rms *r);
int ag_rms_ckpt_get(const ag_ckpt *c, const char *pre, struct ag_rms *r, hw_err *err);
/* the observation and reward normaliser of the PPO-family agents (ag_norm.h): all its statistics */
struct ag_norm;
void ag_norm_ckpt_put(ag_ckpt *c, const char *pre, const struct ag_norm *z);
int ag_norm_ckpt_get(const ag_ckpt *c, const char *pre, struct ag_norm *z, hw_err *err);

/* One Adam optimiser (moments, step count, learning rate): entries "<pre>.<name>.m|v|t_lr". */
struct nnet_adam;
void ag_adam_ckpt_put(ag_ckpt *c, const char *pre, const char *name, const struct nnet_adam *a);
int ag_adam_ckpt_get(const ag_ckpt *c, const char *pre, const char *name, struct nnet_adam *a, hw_err *err);

/* ---- checkpoint_savers.c ---- */
/* A replay buffer (replay.h): its stored transitions (size rows, not the whole capacity), the
 * write position; get refuses a buffer of another capacity or shape. */
struct ag_replay;
void ag_replay_ckpt_put(ag_ckpt *c, const char *pre, const struct ag_replay *r);
int ag_replay_ckpt_get(const ag_ckpt *c, const char *pre, struct ag_replay *r, hw_err *err);
/* Discrete SAC (sac.h): actor, twin critics and their targets, the four Adam optimisers, the
 * temperatures. */
struct sac;
void sac_ckpt_put(ag_ckpt *c, const char *pre, const struct sac *s);
int sac_ckpt_get(const ag_ckpt *c, const char *pre, struct sac *s, hw_err *err);

/* First key (dotted path) where a and b differ, into buf; returns false when equal. */
bool ag_json_first_diff(const json_t *a, const json_t *b, char *buf, size_t cap);

/* Test hook: HWGYM_TEST_KILL_AT=N makes ag_run (and hwgym-marl-worker) raise SIGKILL right
 * after logging sample N (a preemption at a chosen, reproducible point), in a run that did not
 * resume from a checkpoint (so a requeued job with the same environment finishes). 0 when unset. */
int64_t ag_test_kill_at(void);

#endif
