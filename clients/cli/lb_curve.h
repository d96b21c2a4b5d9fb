/* lb_curve.h - the leaderboard's per-cell scores (used by lb_score.c, see lb_score.h, and by
 * the CLI's --curves).
 * Owns: reading one cell's trials into its raw best-so-far score at the small budget, on the
 * evaluation grid and on the CPU-second grid, and the table of every cell's curves with the
 * per-env normalisation (random control mean and best known score); a copy of the file that
 * keeps the curves instead of the trials (--curves). */
#ifndef LB_CURVE_H
#define LB_CURVE_H

#include <sqlite3.h>
#include <stdbool.h>

#include "hw_error.h"
#include "lb_score.h"
#include "lb_suite.h"

typedef struct lb_curve {
    double small;          /* raw best score after budget.small evaluations (NAN: none yet) */
    double ev[LB_GRID];    /* after round(evals * (k+1) / LB_GRID) evaluations */
    double cpu[LB_GRID];   /* after cpu_s * (k+1) / LB_GRID CPU seconds (interpolated) */
    long long evals;       /* trials logged */
    double cpu_s;
} lb_curve;

/* Every finished cell's curve: cell(e, v, seed) with v = 2 * agent index + off. */
typedef struct lb_table {
    const lb_suite *s;
    size_t nv;             /* 2 * nagents */
    lb_curve **c;          /* [nenvs * nv * seeds], NULL where no finished cell */
    /* per env: the random control's mean raw score (lo) at small / each grid point, and hi */
    double *lo_small, *lo_ev, *lo_cpu, *hi, *worst;
    bool *hi_is_optimum;
    size_t done, failed;
} lb_table;

int lb_table_load(lb_table *t, const lb_suite *s, sqlite3 *db, hw_err *err);
void lb_table_free(lb_table *t);
/* Writes a copy of db to `path` (which must not exist) with each finished cell's curve (the
 * table leaderboard_curves: what lb_table_load computes from the trials) instead of the trials:
 * kilobytes where the trials take hundreds of MB, and the pages computed from it equal db's.
 * It cannot be resumed (no trials). */
int lb_curve_copy(sqlite3 *db, const lb_suite *s, const char *path, hw_err *err);
lb_curve *lb_table_cell(const lb_table *t, size_t env, size_t v, int seed);
/* normalised score of a raw value on env e against lo (NAN raw, no score yet: the env's worst
 * best-so-far score of any cell at its first grid point) */
double lb_table_norm(const lb_table *t, size_t env, double raw, double lo);

#endif
