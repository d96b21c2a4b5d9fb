/* sched_internal.h - helpers shared by the sched-v0 sources (not a public API). */
#ifndef HW_SCHED_INTERNAL_H
#define HW_SCHED_INTERNAL_H

#include "sched.h"

extern const int sched_rel[SCHED_NT][SCHED_NDIM];
extern const int sched_order[3][SCHED_NDIM];
extern const int sched_storage_rows[4];
extern const int sched_groups[3][2];

int sched_is_spatial(int row);
double sched_sram_energy(double bytes);
double sched_tile_words(int t, const double *x, int stride);
void sched_cum(const sched_table *t, double cum[SCHED_NROW][SCHED_NDIM]);
int sched_cap_fail(const sched_accel *a, const sched_layer *l, int row, const double *x, double *need, double *have);
typedef struct sched_pre {
    double rp[SCHED_NROW], orel[SCHED_NROW];
    double skip[SCHED_NT][SCHED_NROW];
    int stop[SCHED_NT][SCHED_NROW];
    /* lower-bound mode only: per-tensor multiplier of every access term, and of the temporal
     * product, owed to the columns not assigned yet (see sched_cost_core) */
    double lbmul[SCHED_NT], lbtemporal;
    double lbfirst; /* upper bound of the growth of the O replication (C R S in selected spatial rows) */
} sched_pre;
void sched_pre_rows(const sched_accel *a, const sched_table *t, sched_pre *pre, unsigned mask);
void sched_cost_core(const sched_accel *a, const sched_layer *l, const double cum[SCHED_NROW][SCHED_NDIM],
                     const sched_pre *pre, sched_cost *c, double out[4], int lb);
/* sched_bruteforce with the branch-and-bound pruning switched off (tests compare the two) */
int sched_bruteforce_nobound(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj,
                             int sec, sched_cost *best, sched_bf_stats *st);
double sched_obj_of(const double out[4], int obj);
void sched_cost_eval_cum(const sched_accel *a, const sched_layer *l, const sched_table *t,
                         const double cum[SCHED_NROW][SCHED_NDIM], sched_cost *c);

struct tl_spec;
struct tl_result;
void sched_cost_from_tl(const struct tl_spec *s, const struct tl_result *r, sched_cost *c);
/* loop order of a storage row, innermost first: the table's or the dataflow default */
void sched_table_order(const sched_accel *a, const sched_table *t, int row, int ord[SCHED_NDIM]);
/* the pre-Timeloop cost core above is kept only as the brute force's pruning heuristic */
#endif
