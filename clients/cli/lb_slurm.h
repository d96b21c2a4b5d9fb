/* lb_slurm.h - running a leaderboard suite's cells as one Slurm job array (hwgym leaderboard
 * --slurm; docs/leaderboard.md, "On a Slurm cluster").
 * Owns: the array's files under WORK/slurm (the suite as run, the pending cells' keys, the task
 * script), submitting it with sbatch, waiting for it with squeue (scancel when the run is
 * interrupted), and merging each task's result into the leaderboard file. Each array task runs
 * `hwgym leaderboard SUITE --cell KEY` on its node: that process starts its own server there
 * (unless endpoints were given), runs the one cell with its CPU cap enforced exactly as a local
 * run does, and writes a leaderboard file of its own, so no SQLite file is written from two
 * nodes. A task that left no result is recorded as a failed cell naming its Slurm log. */
#ifndef LB_SLURM_H
#define LB_SLURM_H

#include <signal.h>
#include <sqlite3.h>

#include "hw_error.h"
#include "lb_run.h"
#include "lb_suite.h"

/* Runs the cells of `cells` not yet in db (failed ones too with o->retry_failed) as one job
 * array; o->jobs > 0 with o->jobs_given throttles it (--array=...%N). *stop set by a signal
 * cancels the job. 0 when the array ran (cells may have failed: recorded), -1 with err. */
int lb_slurm_run(const lb_suite *s, const lb_cell *cells, size_t n, sqlite3 *db, const lb_run_opts *o,
                 volatile sig_atomic_t *stop, hw_err *err);

#endif
