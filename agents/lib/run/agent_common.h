/* agent_common.h - what every hwgym agent process shares: the command line, a session over
 * libhwgym (or an in-process env), trial logging with progress and the JSON summary, and the
 * GSL random number helpers. docs/agents.md is the user guide.
 *
 * ======================================================================================
 * API (stable: other agents build on it)
 * ======================================================================================
 * Command line ------------------------------------------------------------------------
 *   ag_opts o; ag_optdef extra[] = {{"epochs", AG_OPT_INT, &epochs, "PPO epochs (10)"}, {0}};
 *   int rc; if (ag_parse_args(argc, argv, "hwgym-ppo", "one-line summary", extra, &o, &rc)) return rc;
 *   ... ag_opts_free(&o);
 *   Common options: --endpoint EP (default tcp://127.0.0.1:5555; "local" runs the env in this
 *   process through the env vtable, no server), --env ID (required unless the agent says so),
 *   --config JSON|@file (env config object), --seed N (default 0), --budget N (samples,
 *   default 1000), --db PATH (trial DB; none: no logging), --run-name NAME, --quiet, --help,
 *   --checkpoint FILE, --checkpoint-every N, --resume (checkpoint.h).
 *   Extra options are "--name VALUE" (flags: "--name"); "--name=VALUE" also works.
 *   ag_opts_to_json(&o, extra) gives the agent config object logged with the run.
 *
 * Session (one env, one agent) ---------------------------------------------------------
 *   ag_sess *s = ag_sess_make(o.endpoint, o.env, o.config, NULL, 0, &err);       single agent
 *   ag_sess *s = ag_sess_make(ep, env, cfg, agents_json, timeout_ms, &err);       multi-agent
 *                (creator; it is not an agent itself: use ag_sess_join for each agent)
 *   ag_sess *s = ag_sess_join(ep, token, "agent0", &err);                          join as agent
 *                (s->dims/s->ndims: the env action elements this agent controls; s->mask is
 *                sliced to them; reset/step are barriers: every agent must call them)
 *   s->act_space (hw_space*), s->act_dim, s->obs_dim, s->token
 *   ag_sess_reset(s, &seed or NULL, &err); ag_sess_step_i64(s, a, &err) / ag_sess_step_f64
 *   after reset/step: s->obs (double[obs_dim]), s->reward, s->terminated, s->truncated,
 *   s->info (JSON object, owned by s), s->mask (uint8 per choice, sum of choices long, or NULL
 *   when the info has no "action_mask"), s->mask_len.
 *   ag_sess_evaluate(s, point, &reward, &metrics, &err); ag_sess_evaluate_batch(s, points,
 *   rewards, &metrics_list, &err) (NaN reward for a failed point); ag_sess_free(s).
 *
 * Run (trial log + best tracking + progress + summary) -----------------------------------
 *   ag_run *r = ag_run_begin(&o, "hwgym-ppo", agent_cfg_json, &err);  (opens --db if given)
 *   ag_run_step(r, worker, episode, step, reset_seed(-1: none), action_json, obs_json|NULL,
 *               reward, terminated, truncated, info|NULL, &err)        one HWT_STEP trial
 *   ag_run_eval(r, worker, episode, point_json, reward, metrics|NULL, &err)  one HWT_EVAL trial
 *   Every trial counts one sample; the best reward (NaN ignored) with its action and metrics
 *   is kept; a progress line goes to stderr at most every 0.5 s (not with --quiet):
 *     [hwgym-ppo] samples 1200/5000 (24.0%)  best 0.987500  rate 3512.4/s  eta 1.1s
 *   ag_run_done(r) says when samples >= budget. One ag_run may be shared by threads (it locks).
 *   ag_run_end(r, extra_json|NULL, &err) prints the final progress line and ONE line of JSON on
 *   stdout: {"agent","env","run_id" (null without --db),"run_name","seed","budget","samples",
 *   "best_reward","best_action","best_metrics","wall_s","samples_per_s", ...extra keys};
 *   ends the DB run, closes the DB, frees r.
 *   o.attach_run_id > 0 (set by the agent, e.g. from --run-id): log into that existing run
 *   instead of beginning one, and do not end it (workers of a launcher).
 *
 * JSON helpers: ag_json_i64(a, n), ag_json_f64(a, n) -> new arrays.
 * RNG (GSL mt19937): ag_rng_new(seed), gsl_rng_free; ag_rng_uniform (0,1], ag_rng_int(r, n),
 *   ag_rng_normal(r), ag_rng_categorical(r, probs, n), ag_rng_shuffle(r, idx, n),
 *   ag_rng_derive(seed, k) (a well mixed sub-seed for stream k).
 * Time: ag_now() (monotonic seconds).
 * ====================================================================================== */
#ifndef HWGYM_AGENT_COMMON_H
#define HWGYM_AGENT_COMMON_H

#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_error.h"
#include "hw_space.h"

/* ---------------------------------------------------------------- command line */
typedef enum ag_opt_type { AG_OPT_INT = 0, AG_OPT_DOUBLE, AG_OPT_STRING, AG_OPT_FLAG } ag_opt_type;

/* An agent-specific option. dst: int64_t* (INT), double* (DOUBLE), const char** (STRING,
 * points into argv), bool* (FLAG). The default is whatever *dst holds before parsing. */
typedef struct ag_optdef {
    const char *name; /* without "--"; NULL ends the table */
    ag_opt_type type;
    void *dst;
    const char *help;
} ag_optdef;

typedef struct ag_opts {
    const char *endpoint; /* default "tcp://127.0.0.1:5555"; "local": in-process env */
    const char *env;      /* NULL when not given */
    json_t *config;       /* env config object (owned; never NULL after parsing: {} default) */
    uint64_t seed;
    int64_t budget;       /* samples */
    const char *db;       /* NULL: no trial logging */
    const char *run_name; /* NULL: none */
    bool quiet;
    int64_t attach_run_id; /* > 0: log into this existing run (set by the agent) */
    const char *prog;      /* program name given to ag_parse_args */
    /* preemption and resume (checkpoint.h, docs/cluster.md) */
    const char *checkpoint;   /* --checkpoint FILE (NULL: DB path + ".ckpt" when needed) */
    int64_t checkpoint_every; /* --checkpoint-every N samples (0: off unless --resume) */
    bool resume;              /* --resume: continue from the checkpoint and the trial DB */
} ag_opts;

/* Parses argv. Returns 0 to go on; otherwise 1 with *exit_code set (0 after --help, 2 after a
 * usage error, printed on stderr). --env is not checked here: the agent checks it if needed. */
int ag_parse_args(int argc, char **argv, const char *prog, const char *summary, const ag_optdef *extra, ag_opts *o,
                  int *exit_code);
void ag_opts_free(ag_opts *o);
/* {"seed","budget","endpoint", extra options by name...} (new reference). */
json_t *ag_opts_to_json(const ag_opts *o, const ag_optdef *extra);
/* Parses "JSON" or "@file" into a JSON value (new reference) or NULL with err set. */
json_t *ag_json_arg(const char *text, const char *what, hw_err *err);

/* ---------------------------------------------------------------- session */
typedef struct ag_sess {
    /* read-only for the caller */
    char token[80];
    char env[128];
    char agent[128];       /* joined agent name, "" otherwise */
    int64_t *dims;         /* joined agent: the env action elements it controls (ndims), else NULL */
    int ndims;
    bool local;            /* in-process env */
    hw_space *act_space;   /* this agent's action space */
    hw_space *obs_space;
    int64_t act_dim;       /* action elements */
    int64_t obs_dim;       /* flattened observation elements */
    double *obs;           /* obs_dim values after reset/step */
    double reward;
    bool terminated, truncated;
    json_t *info;          /* last reset/step info object (owned by the session) */
    uint8_t *mask;         /* from info "action_mask" or NULL; a joined agent gets the slice of
                              its own dims (sum of its choices long) */
    int64_t mask_len;
    json_t *make_reply;    /* remote: the make/join reply (owned) */
    void *impl;            /* private */
} ag_sess;

/* agents: NULL (single-agent) or [{"name","dims":[...]}]; agent_timeout_ms: 0 = default. */
ag_sess *ag_sess_make(const char *endpoint, const char *env, const json_t *config, const json_t *agents,
                      int agent_timeout_ms, hw_err *err);
ag_sess *ag_sess_join(const char *endpoint, const char *token, const char *agent, hw_err *err);
int ag_sess_reset(ag_sess *s, const uint64_t *seed, hw_err *err);
int ag_sess_step_i64(ag_sess *s, const int64_t *action, hw_err *err);
int ag_sess_step_f64(ag_sess *s, const double *action, hw_err *err);
/* *metrics (may be NULL) gets a new reference. */
int ag_sess_evaluate(ag_sess *s, const json_t *point, double *reward, json_t **metrics, hw_err *err);
/* points: JSON array of n points; rewards: n doubles (NaN when a point failed); *metrics (may
 * be NULL) gets a new list of n objects (null for failed points). */
int ag_sess_evaluate_batch(ag_sess *s, const json_t *points, double *rewards, json_t **metrics, hw_err *err);
/* The lean evaluate_batch (PROTOCOL.md): n points of act_dim doubles in action units (rows of
 * x), numeric metrics only. metrics[i] (may be NULL) gets a new object {name: number, ...,
 * "feasible": bool, "cache_hit": bool} or NULL for a failed point. Local sessions fall back to
 * ag_sess_evaluate_batch (cache_hit false). */
int ag_sess_evaluate_lean(ag_sess *s, int n, const double *x, double *rewards, json_t **metrics, hw_err *err);
/* The env's state as a snapshot (the protocol's snapshot / restore / drop_snapshot ops; local
 * sessions keep the env's own snapshots under ids 1, 2, ...). restore leaves obs, reward and
 * info as they were: the protocol's restore reply carries no observation. */
int ag_sess_snapshot(ag_sess *s, int64_t *id, hw_err *err);
int ag_sess_restore(ag_sess *s, int64_t id, hw_err *err);
int ag_sess_drop_snapshot(ag_sess *s, int64_t id, hw_err *err);
/* Closes the server session when this process made it (not a joined agent), frees. NULL ok. */
void ag_sess_free(ag_sess *s);
/* Several servers: an endpoint "EP1,EP2,..." makes the session on every one; reset/step/evaluate
 * use the one at ag_sess_spread_index(n) (HWGYM_SPREAD_INDEX, else SLURM_ARRAY_TASK_ID, else
 * SLURM_PROCID, modulo n; 0 when none is set), evaluate_batch splits its points into contiguous
 * chunks, one per server, evaluated concurrently and gathered in order (same results as one
 * server). ag_sess_make with agents and ag_sess_join use the first endpoint only: hwgym-marl
 * picks one server per run (ag_run_spread_index) and passes only that one. */
int ag_endpoint_count(const char *endpoint);
int ag_endpoint_nth(const char *endpoint, int k, char *out, size_t cap); /* 0, or -1 when absent */
int ag_sess_spread_index(int n);
/* The server of a whole run whose session cannot be split (a multi-agent session: its agents
 * meet at one barrier, so hwgym-marl puts it on one server): HWGYM_SPREAD_INDEX, else
 * SLURM_ARRAY_TASK_ID, else seed, modulo n. (Not SLURM_PROCID: a batch script's launcher is
 * rank 0 in every job, so independent runs spread by their seed.) */
int ag_run_spread_index(int n, int64_t seed);
/* Number of choices per action element (integer spaces); out has act_dim entries. 0 on Box. */
int ag_sess_choices(const ag_sess *s, int64_t *out);

/* ---------------------------------------------------------------- run / trials */
typedef struct ag_run ag_run;

ag_run *ag_run_begin(const ag_opts *o, const char *agent, const json_t *agent_config, hw_err *err);
int ag_run_step(ag_run *r, const char *worker, int64_t episode, int64_t step, int64_t reset_seed, const json_t *action,
                const json_t *obs, double reward, int terminated, int truncated, const json_t *info, hw_err *err);
int ag_run_eval(ag_run *r, const char *worker, int64_t episode, const json_t *point, double reward,
                const json_t *metrics, hw_err *err);
/* Prints the progress line now if ag_progress_interval() passed since the last (force: always). */
void ag_run_progress(ag_run *r, bool force);
/* Seconds between progress lines: 0.5 when stderr is a terminal, 10 when it is a file or pipe
 * (a log gets a line every 10 s, not 2 a second); HWGYM_PROGRESS_S=<seconds> overrides both. */
double ag_progress_interval(void);
bool ag_run_done(const ag_run *r);
int64_t ag_run_samples(const ag_run *r);
double ag_run_best(const ag_run *r); /* -INFINITY before the first finite reward */
int64_t ag_run_id(const ag_run *r);  /* 0 without --db */
/* Final progress line, summary JSON on stdout (extra's keys merged in; extra is borrowed),
 * end of the DB run, frees r. Returns 0 or -1 (DB error; the summary is still printed). */
int ag_run_end(ag_run *r, const json_t *extra, hw_err *err);
/* The end of every agent's run, in one place. failed: the agent's loop stopped on *err.
 * Then "error": err->msg goes into extra (an object, borrowed; may be NULL) so the summary says
 * why. Ends the run (ag_run_end; *r becomes NULL), then prints "<prog>: CODE: message" on stderr
 * for the loop's error or, when the loop succeeded, for a failure to end the run (err then holds
 * it). Returns 0 when both succeeded, 1 otherwise. */
int ag_run_finish(ag_run **r, json_t *extra, bool failed, hw_err *err, const char *prog);

/* ---------------------------------------------------------------- helpers */
json_t *ag_json_i64(const int64_t *a, int64_t n);
json_t *ag_json_f64(const double *a, int64_t n);
double ag_now(void);

gsl_rng *ag_rng_new(uint64_t seed);
double ag_rng_uniform(gsl_rng *r);                  /* (0,1] never 0 */
int64_t ag_rng_int(gsl_rng *r, int64_t n);          /* uniform in [0, n) */
double ag_rng_normal(gsl_rng *r);                   /* standard normal */
int ag_rng_categorical(gsl_rng *r, const double *probs, int n); /* probs sum to ~1 */
void ag_rng_shuffle(gsl_rng *r, int *idx, int n);
uint64_t ag_rng_derive(uint64_t seed, uint64_t k);

#endif
