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
/* sched_bruteforce with the branch-and-bound pruning switched off (tests compare the two) */
int sched_bruteforce_nobound(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj,
                             int sec, sched_cost *best, sched_bf_stats *st);
/* the branch-and-bound multiplier of an unassigned factor x of dimension d for tensor ten */
double sched_bound_mul(const sched_layer *l, int ten, int d, int x);
double sched_obj_of(const double out[4], int obj);

struct tl_spec;
struct tl_result;
void sched_cost_from_tl(const struct tl_spec *s, const struct tl_result *r, sched_cost *c);
/* loop order of a storage row, innermost first: the table's or the dataflow default */
void sched_table_order(const sched_accel *a, const sched_table *t, int row, int ord[SCHED_NDIM]);
#endif
