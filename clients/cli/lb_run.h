/* lb_run.h - running a leaderboard suite's cells (hwgym leaderboard; docs/leaderboard.md).
 * Owns: starting and stopping the suite's own servers (hwgym-server on ipc sockets, unless
 * endpoints are given), running cells as local agent processes N at a time with each cell's
 * CPU cap enforced (the agent's CPU time, read from /proc, is checked every 100 ms; at the cap
 * it gets SIGTERM, on which the trial logger flushes), spreading cells over the endpoints
 * (cell i uses endpoint i mod n), and handing each finished cell to lb_db_merge_cell.
 * Cells already in the leaderboard file are skipped (resume). With `slurm` the cells go to
 * lb_slurm.h instead, as one job array. */
#ifndef LB_RUN_H
#define LB_RUN_H

#include <sqlite3.h>
#include <stdbool.h>

#include "hw_error.h"
#include "lb_suite.h"

typedef struct lb_run_opts {
    const char *bindir;       /* directory of the agent and server binaries */
    const char *workdir;      /* DIR/work: per-cell trial files and logs */
    const char *const *endpoints; /* given endpoints (NULL/0: start `servers` own servers) */
    size_t nendpoints;
    int servers;              /* own servers to start when no endpoints are given (default 1) */
    int jobs;                 /* cells at a time (default 2) */
    bool local;               /* agents run the env in-process (--endpoint local; not hwgym-marl) */
    bool retry_failed;        /* re-run cells recorded as failed */
    bool keep_obs;            /* keep observations in the leaderboard file */
    bool quiet;
    const char *only_key;     /* run this one cell of the suite only (--cell; a Slurm array task) */
    bool slurm;               /* run the cells as a Slurm job array (lb_slurm.h) */
    bool jobs_given;          /* --jobs was given: with slurm, the array's throttle */
    const char *sbatch_args;  /* with slurm: extra sbatch options, split at spaces */
} lb_run_opts;

/* Runs every cell not yet in db. Returns 0 when every cell ran (some may have failed: they are
 * recorded and listed on the page), -1 on an error that stopped the run (err says which). */
int lb_run_suite(const lb_suite *s, sqlite3 *db, const lb_run_opts *o, hw_err *err);

#endif
