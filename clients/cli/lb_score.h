/* lb_score.h - from a leaderboard file to its results (hwgym leaderboard; docs/leaderboard.md).
 * Owns: each finished cell's best-so-far score read from its logged trials (by the env's score
 * kind: max_reward = the best trial reward; max_return = the best completed episode's return;
 * sched_log = the best completed episode's sum of -log(1 - max(r, 0)), which for sched-v0's
 * relative-improvement rewards is log(M_start / M_end), the same quantity an evaluate reward
 * reports), sampled at the small budget and on grids of evaluations and CPU seconds; the
 * normalisation (0 = the mean of the env's random-search control at the same budget, 1 = the
 * env's declared optimum, else the best score logged in the file), and every aggregate of the
 * page built with lb_stats: IQM with stratified-bootstrap 95% intervals per family and budget,
 * performance profiles, sample-efficiency curves, learning-on vs learning-off and each paper's
 * agent vs its baselines as probabilities of improvement.
 * The result is one JSON document (written beside the pages as leaderboard.json). */
#ifndef LB_SCORE_H
#define LB_SCORE_H

#include <jansson.h>
#include <sqlite3.h>

#include "hw_error.h"
#include "lb_suite.h"

#define LB_GRID 16 /* points of the evaluation and CPU-second grids */

/* Builds the results document of suite s from db (NULL with err on failure). */
json_t *lb_score(const lb_suite *s, sqlite3 *db, hw_err *err);

#endif
