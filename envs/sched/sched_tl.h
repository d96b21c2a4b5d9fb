/* sched_tl.h - Timeloop's counting semantics (docs/sched.md "Cost model").
 * Owns: a flat Timeloop-style architecture + mapping description (tl_spec: storage levels
 * innermost first, each with keep flags, capacity, instances, mesh, bandwidth, per-action
 * energies, a temporal nest with its permutation and a spatial nest with X/Y axes), its
 * validity check (capacity, cumulative spatial expansion, named level and reason class) and
 * its evaluation (per-level per-tensor reads/fills/updates, energy, cycles) following the
 * public description of timeloop-model v3 (../shared/reference/timeloop/NOTES.md). Both the
 * sched-v0 cost model (a scheduling table turned into a tl_spec by sched_tl_from_table) and
 * `hwgym timeloop-model` (a tl_spec parsed from YAML) use it. No allocation. */
#ifndef HW_SCHED_TL_H
#define HW_SCHED_TL_H

#include "sched.h"

#define TL_MAXLV 16
#define TL_NAMELEN 32

enum { TL_OK = 0, TL_ECAPACITY = 1, TL_ESPATIAL = 2, TL_EFACTORS = 3 };

typedef struct tl_level {
    char name[TL_NAMELEN];
    int keep[SCHED_NT];
    double entries;      /* capacity in words for the kept tensors together; < 0 = unlimited */
    double instances;    /* hardware instances */
    double meshx;        /* mesh width (meshY = instances / meshX) */
    double bw;           /* shared bandwidth, words per cycle per instance; 0 = unlimited */
    double e_read, e_fill, e_update; /* pJ per word */
    double e_ingress;    /* pJ per word entering this level's fan-out network (multicast once) */
    int dram;            /* technology DRAM: no in-place reduction */
    int row;             /* sched table row this level stands for (stats roll-up), -1 = none */
    /* mapping */
    int tf[SCHED_NDIM];   /* temporal factors */
    int tperm[SCHED_NDIM]; /* temporal loop order, innermost first (dimension indices) */
    int sf[SCHED_NDIM];   /* spatial factors (fan-out to the next inner level) */
    int saxis[SCHED_NDIM]; /* 0 = X, 1 = Y */
} tl_level;

typedef struct tl_spec {
    int nl;              /* storage levels, innermost (0) to outermost (DRAM) */
    tl_level lv[TL_MAXLV];
    double mac_instances, mac_meshx, e_mac;
    int dims[SCHED_NDIM];
    int stride;          /* Hstride = Wstride, dilation 1 */
    /* built from a sched table: where each table row's factors live (level, spatial?) */
    int rowlvl[SCHED_NROW], rowsp[SCHED_NROW];
} tl_spec;

/* set table entry (row, dim) in a spec built by sched_tl_from_table */
static inline void tl_spec_set(tl_spec *s, int row, int dim, int v) {
    int l = s->rowlvl[row];
    if (l < 0) return;
    if (s->rowsp[row]) s->lv[l].sf[dim] = v;
    else s->lv[l].tf[dim] = v;
}

typedef struct tl_result {
    int status;           /* TL_OK or TL_E* */
    int fail_level;       /* index into lv, or -1 for the arithmetic level */
    char reason[200];     /* Timeloop-style message: "couldn't map level LB_I: mapped tile size ..." */
    double macs, compute_cycles, cycles, utilization, spatial_util;
    int bound;            /* level index limiting cycles, -1 = compute */
    double reads[TL_MAXLV][SCHED_NT], fills[TL_MAXLV][SCHED_NT], updates[TL_MAXLV][SCHED_NT]; /* all instances */
    double tile[TL_MAXLV][SCHED_NT];       /* words per instance (kept tensors) */
    double inst_used[TL_MAXLV];            /* utilized instances */
    double ingress[TL_MAXLV];              /* words entering the level's network, all instances */
    double ingress_t[TL_MAXLV][SCHED_NT];  /* the same per tensor (stats file's per-data-space network entries) */
    double level_cycles[TL_MAXLV];
    double e_level[TL_MAXLV];              /* storage access energy, all instances */
    double e_net[TL_MAXLV];                /* network energy */
    double e_tensor[SCHED_NT];             /* storage + network energy of each tensor */
    double e_mac_total, energy;
} tl_result;

/* The sched-v0 table as a Timeloop mapping on the accelerator's Timeloop architecture
 * (NOTES.md section 2; docs/sched.md "Timeloop architecture"). */
void sched_tl_from_table(const sched_accel *a, const sched_layer *l, const sched_table *t, tl_spec *s);
/* The same in two parts: the accelerator and layer (levels, capacities, instances, energies;
 * every factor 1), then a table's factors and loop orders written into that spec. A spec from
 * sched_tl_arch can take any number of tables of the same accelerator and layer. */
void sched_tl_arch(const sched_accel *a, const sched_layer *l, tl_spec *s);
void sched_tl_set_table(const sched_accel *a, const sched_table *t, tl_spec *s);
/* sched_tl_from_table into a per-thread spec that keeps the sched_tl_arch part while the
 * accelerator stays the same (compared field by field, so always current). The spec
 * is valid until the thread's next call; the callers (sched_check, sched_cost_eval) use it at
 * once and never hold it across another call. */
tl_spec *sched_tl_spec_cached(const sched_accel *a, const sched_layer *l, const sched_table *t);
/* Validity (capacity, then arithmetic and storage spatial expansion, innermost first, as
 * Timeloop checks them). Returns TL_OK or the class; r->reason/fail_level filled. */
int tl_check(const tl_spec *s, tl_result *r);
/* The spatial-expansion part of tl_check alone (valid on partial tables: products only grow).
 * r may be NULL: the class only, no message (the search's check per node). */
int tl_check_spatial(const tl_spec *s, tl_result *r);
/* Counts, energy and cycles of a spec assumed valid (tl_check first). */
void tl_eval(const tl_spec *s, tl_result *r);
/* Lower bound for the brute force on a partial table (unassigned entries 1): every access term
 * of tensor t times mul[t] (the product of the unassigned columns that t depends on, without
 * the input's P Q R S), but the per-MAC terms times all (the product of every unassigned
 * column): the reads, updates (O) and network words of the innermost level keeping t
 * when no level at or below it fans out, nor can in a completion (fan: bit l set when a
 * completion may put factors in level l's spatial fan-out); compute cycles times
 * temporal_mul. out: energy, cycles, compute cycles, DRAM words (as sched_obj_of reads them). */
typedef struct tl_bound_in {
    double mul[SCHED_NT], all, temporal_mul;
    unsigned fan;
} tl_bound_in;
void tl_eval_bound(const tl_spec *s, const tl_bound_in *b, double out[4]);
/* Fast path for search: energy and cycles only (same numbers as tl_eval). */
void tl_eval_fast(const tl_spec *s, double *energy, double *cycles, double *compute_cycles, double *dram_words);

#endif
