/* hwgym_trials.h - the C trial-logging module (schemas/trials.sql, DESIGN.md "Trials").
 * Owns: opening/creating a trial DB (schema version check, WAL, busy timeout), runs, buffered
 * trials written in batched transactions, and flushing at exit and on SIGINT/SIGTERM.
 *
 * Durability guarantee (exact):
 *  - hwt_add_trial() copies the trial into an in-process buffer and returns. The buffer is
 *    written in ONE short transaction (BEGIN IMMEDIATE ... COMMIT) when it holds
 *    opts.batch_trials trials, when its oldest trial is opts.batch_ms old (checked by a
 *    background flusher thread, so an idle agent still flushes), on hwt_flush()/hwt_close(),
 *    and at normal process exit (atexit).
 *  - On SIGINT or SIGTERM (when opts.handle_signals and the signal's disposition was SIG_DFL
 *    at open): the handler only sets a flag and writes a byte to a pipe. The flusher thread
 *    wakes at once, takes each open DB's lock (so a hwt_* call in progress finishes first),
 *    commits every buffered trial and ends every open run (ended_at), then restores the
 *    default action and re-raises the signal, so the process still dies by that signal.
 *    Any hwt_* call made after the signal also performs this flush first (hwt_check_signals()
 *    does it explicitly). So: every trial whose hwt_add_trial() returned before the signal
 *    arrived is in the DB when the process dies. SIGKILL, a crash or _exit() lose the
 *    unflushed buffer (at most batch_trials trials or batch_ms of logging).
 *  - Writers never hold the write lock while the agent computes: the lock is held only for
 *    the duration of one batch insert; other processes wait up to busy_timeout_ms.
 * Thread safety: one hwt_db may be shared by threads (it has a mutex).
 * After fork(), a child must not use a DB opened by its parent: open its own. */
#ifndef HWGYM_TRIALS_H
#define HWGYM_TRIALS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"

#define HWT_SCHEMA_VERSION 2

/* schemas/trials.sql, byte for byte (a test checks it). */
extern const char hwt_schema_sql[];

typedef struct hwt_opts {
    int batch_trials;    /* flush when this many trials are buffered (default 256) */
    int batch_ms;        /* ... or when the oldest buffered trial is this old (default 1000) */
    int busy_timeout_ms; /* SQLite busy timeout (default 30000) */
    bool handle_signals; /* install the SIGINT/SIGTERM flush handlers (default true) */
    bool no_thread;      /* no background flusher: batch_ms and signals act at the next hwt_* call */
} hwt_opts;

/* Defaults as documented above; use as `hwt_opts o = hwt_opts_default();` then adjust. */
hwt_opts hwt_opts_default(void);

typedef struct hwt_db hwt_db;

/* Opens (creating if needed) a trial DB. opts may be NULL (defaults). Fails with HW_E_IO when
 * the file cannot be opened, and with HW_E_NOT_SUPPORTED when its user_version is newer than
 * HWT_SCHEMA_VERSION ("... written by a newer hwgym: schema version 2, this build reads 1"). */
hwt_db *hwt_open(const char *path, const hwt_opts *opts, hw_err *err);
/* Flushes, ends the runs begun through this handle that are still open, and closes. NULL ok. */
int hwt_close(hwt_db *db, hw_err *err);

typedef struct hwt_run {
    const char *agent;        /* required, e.g. "hwgym-search --algo random" */
    const json_t *agent_config; /* object or NULL */
    const char *env;          /* required, env id */
    const json_t *env_config; /* object or NULL */
    bool has_seed;
    int64_t seed;
    const char *endpoint;     /* or NULL */
} hwt_run;

/* Inserts a run (host, version, started_at filled in) and returns its id (> 0), or -1. */
int64_t hwt_begin_run(hwt_db *db, const hwt_run *run, hw_err *err);
/* Flushes and sets ended_at. */
int hwt_end_run(hwt_db *db, int64_t run_id, hw_err *err);
/* Forgets a run without ending it: its trials are flushed, its ended_at stays NULL (a failed run,
 * as after a crash), and hwt_close() no longer ends it. */
int hwt_abandon_run(hwt_db *db, int64_t run_id, hw_err *err);

typedef enum hwt_kind { HWT_STEP = 0, HWT_EVAL = 1 } hwt_kind;

typedef struct hwt_trial {
    int64_t run_id;
    const char *worker;       /* NULL -> "0" */
    int64_t episode;          /* 0-based per worker */
    int64_t step;             /* 0-based in the episode; ignored (-1) for HWT_EVAL */
    hwt_kind kind;
    bool has_reset_seed;
    int64_t reset_seed;       /* the seed given to this episode's reset */
    const json_t *action;     /* required: number list, number, or design-point object */
    const json_t *observation;/* the obs returned by this step, or NULL */
    bool has_reward;
    double reward;            /* NaN is stored as NULL */
    int terminated, truncated;/* 0/1, or -1 for NULL */
    const json_t *metrics;    /* step info or evaluate metrics (object), or NULL */
    int feasible;             /* 0/1, or -1: taken from metrics.feasible when it is a bool */
    double time;              /* unix seconds; 0 -> now */
} hwt_trial;

/* Buffers one trial (see the guarantee above). */
int hwt_add_trial(hwt_db *db, const hwt_trial *t, hw_err *err);
/* Writes the buffer now. */
int hwt_flush(hwt_db *db, hw_err *err);
/* Buffered, not yet written trials. */
int hwt_pending(hwt_db *db);
/* If SIGINT/SIGTERM arrived: flush every open DB and re-raise (does not return then).
 * Returns 0 otherwise. Only needed with opts.no_thread in long loops that make no hwt_* call. */
int hwt_check_signals(void);

/* The underlying sqlite3 handle (for readers such as replay/export; do not write through it
 * while trials are buffered). */
struct sqlite3 *hwt_sqlite(hwt_db *db);

/* Opens an existing DB read-only with the version check (replay, export). */
struct sqlite3 *hwt_open_readonly(const char *path, hw_err *err);

double hwt_now(void);

#endif
