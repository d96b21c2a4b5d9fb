/* sched.h - sched-v0: the RL-Scheduling paper's scheduling-table environment (docs/sched.md).
 * Owns: accelerator descriptions (JSON, four built in), the scheduling table and its
 * constraints, a Timeloop-style analytical cost model (pure functions, usable without the
 * env), the brute-force row refactorisation step, the mapping baselines and the env family.
 *
 * Table: SCHED_NROW rows (hardware levels, innermost first) x SCHED_NDIM columns (layer
 * dimensions B C G K R S P Q). A row's value for a dimension is the loop factor of that
 * dimension at that level: temporal at storage rows (REG, LB, GB, DRAM), spatial at the X/Y
 * rows. The tile of a tensor at a storage level is the product of the rows from REG up to
 * and including that level (Table 2 of the paper). Absent levels must hold 1 everywhere. */
#ifndef HW_SCHED_H
#define HW_SCHED_H

#include <jansson.h>
#include <stdint.h>

#include "env.h"
#include "hw_error.h"

enum { SD_B, SD_C, SD_G, SD_K, SD_R, SD_S, SD_P, SD_Q, SCHED_NDIM };
enum {
    SR_REG, SR_MACX, SR_MACY, SR_LB, SR_PEX, SR_PEY, SR_GB, SR_CHX, SR_CHY, SR_DRAM, SCHED_NROW
};
enum { ST_I, ST_W, ST_O, SCHED_NT };
enum { SDF_WS, SDF_OS, SDF_IS };
enum { SOBJ_ENERGY, SOBJ_CYCLES, SOBJ_EDP, SOBJ_DRAM, SOBJ_COMPUTE };

#define SCHED_NACT 55

extern const char *const sched_dim_names[SCHED_NDIM];  /* "B","C",... */
extern const char *const sched_row_names[SCHED_NROW];  /* "REG","MAC_X",... */
extern const char *const sched_tensor_names[SCHED_NT]; /* "I","W","O" */

typedef struct sched_layer {
    char name[64];
    int d[SCHED_NDIM];  /* C and K are per group; G = groups (depthwise: C = K = 1, G = channels) */
    int stride;
} sched_layer;

typedef struct sched_accel {
    char name[64];
    int word_bytes;
    int present[SCHED_NROW];
    int units[SCHED_NROW];       /* spatial rows: X or Y units; storage rows: 0 */
    int keeps[SCHED_NROW][SCHED_NT]; /* storage rows: tensor stored (else bypassed) */
    double cap[SCHED_NROW][SCHED_NT]; /* bytes per tensor, 0 = unlimited */
    double cap_shared[SCHED_NROW];    /* bytes for I+W+O together, 0 = none */
    int df[SCHED_NROW];          /* storage rows: loop order (dataflow) */
    double e_word[SCHED_NROW];   /* pJ per word: storage access, or spatial network delivery */
    double bw[SCHED_NROW];       /* storage: words per cycle per instance (DRAM: total), 0 = unlimited */
    double e_mac;                /* pJ per MAC */
} sched_accel;

typedef struct sched_table {
    int f[SCHED_NROW][SCHED_NDIM];
    /* loop order of each storage row, innermost first, as dimension index + 1; a row whose
     * ord[r][0] is 0 uses the accelerator's dataflow order (so a zeroed table is the default) */
    unsigned char ord[SCHED_NROW][SCHED_NDIM];
} sched_table;

typedef struct sched_cost {
    double energy_pj, cycles, compute_cycles, edp;
    double macs;
    double access[SCHED_NROW][SCHED_NT]; /* storage rows: reads + fills + updates (words, all instances) */
    double reads[SCHED_NROW][SCHED_NT], fills[SCHED_NROW][SCHED_NT], updates[SCHED_NROW][SCHED_NT]; /* Timeloop's */
    double e_level[SCHED_NROW];          /* pJ spent at each row (storage accesses; PE_X: PE-array
                                          * network; CHIP_X: chip network) */
    double utilisation;                  /* used MACs / available MACs (Timeloop's spatial utilisation) */
    double tl_utilization;               /* MACs / (cycles * MAC instances): includes bandwidth stalls */
    int bound_row;                       /* row limiting cycles, -1 = compute */
} sched_cost;

/* ---- accelerators ---- */
int sched_builtin_count(void);
const char *sched_builtin_name(int i);      /* "eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba" */
const char *sched_builtin_json(int i);      /* the embedded JSON text (same as envs/sched/accelerators/) */
/* Parses an accelerator description (schema: schemas/sched-accelerator.schema.json). Errors are
 * HW_E_BAD_CONFIG naming the field with `prefix` ("config.accelerator.local_buffer.W: ..."). */
int sched_accel_from_json(const json_t *j, const char *prefix, sched_accel *a, hw_err *err);
/* A built-in name, a JSON file path (contains '/' or ends with .json), or an object. */
int sched_accel_resolve(const json_t *v, const char *prefix, sched_accel *a, hw_err *err);

/* ---- layers ---- */
/* {"B":1,"C":..,"G":1,"K":..,"R":..,"S":..,"P":..,"Q":..,"stride":1,"name":".."} */
int sched_layer_from_json(const json_t *j, const char *prefix, sched_layer *l, hw_err *err);
double sched_layer_macs(const sched_layer *l);
/* Built-in networks: the zoo's (when linked) converted to sched layers. Returns count or -1. */
int sched_model_layers(const char *model, sched_layer **out, hw_err *err);

/* ---- table, constraints, cost ---- */
void sched_table_init(const sched_layer *l, sched_table *t); /* everything in DRAM */
/* 0 when valid, else -1 with HW_E_BAD_ACTION and the failing constraint named, e.g.
 * "constraint column K: product 32 != 64", or Timeloop's checks (capacity of each Timeloop
 * level, then spatial expansion, cumulative over the fan-outs above a level):
 * "constraint capacity: couldn't map level LB_I: mapped tile size 18 exceeds buffer capacity 7",
 * "constraint spatial: couldn't map level MAC: mapped max Arithmetic X expansion 16 exceeds ...".
 * The reason class is the word after "constraint". */
int sched_check(const sched_accel *a, const sched_layer *l, const sched_table *t, hw_err *err);
/* Cost of a table assumed valid (call sched_check first for untrusted tables). */
void sched_cost_eval(const sched_accel *a, const sched_layer *l, const sched_table *t, sched_cost *c);
/* check + cost */
int sched_evaluate(const sched_accel *a, const sched_layer *l, const sched_table *t, sched_cost *c, hw_err *err);
double sched_objective(const sched_cost *c, int obj);
/* rows: [[B,C,G,K,R,S,P,Q] x 10]; orders (optional, may be NULL): {"REG":"BPQCRSKG",...} */
int sched_table_from_json(const json_t *j, sched_table *t, hw_err *err);
int sched_orders_from_json(const json_t *j, sched_table *t, hw_err *err);
/* "BPQCRSKG"-style order string (innermost first, a permutation of the 8 letters) */
int sched_order_parse(const char *s, unsigned char ord[SCHED_NDIM]);
json_t *sched_table_to_json(const sched_table *t);
json_t *sched_orders_to_json(const sched_accel *a, const sched_table *t); /* every storage row's order */

/* ---- actions and brute force ---- */
/* Rows of action a given current row r: n = 2 or 3, rows[] filled; returns n. */
int sched_action_rows(int a, int r, int rows[3]);
/* 1 when the action is valid for this accelerator and current row. */
int sched_action_valid(const sched_accel *a, int act, int r);

typedef struct sched_bf_stats {
    long long visited, leaves, pruned; /* pruned: broke a constraint */
    long long bounded;                  /* cut by the branch-and-bound lower bound */
    long long cache_hits;               /* sched_bruteforce_cached: 1 when the step was a memo hit */
} sched_bf_stats;

/* Brute force: refactorise the columns of the selected rows (n = 2 or 3), keep the valid
 * combination with the lowest objective (ties, then secondary objective sec >= 0, keep the
 * current table). t must be valid on entry; it is updated in place. Returns 0, or -1 (t
 * untouched) when a row is absent, repeated or out of range, or n is not 2 or 3. */
int sched_bruteforce(const sched_accel *a, const sched_layer *l, sched_table *t, int n, const int *rows, int obj,
                     int sec, sched_cost *best, sched_bf_stats *st);

/* ---- baselines ---- */
enum { SBASE_RANDOM, SBASE_BOTTOMUP, SBASE_TOPDOWN, SBASE_COSA };
extern const char *const sched_baseline_names[]; /* "random-pruned", "bottom-up", "top-down", "cosa", NULL */
int sched_baseline(const sched_accel *a, const sched_layer *l, int which, uint64_t seed, int samples, int obj,
                   sched_table *t, sched_cost *c, hw_err *err);

/* CoSA-like constrained optimiser (sched_cosa.c): the log-domain relaxation of factor placement
 * solved with NLopt SLSQP, rounded and repaired to a valid table, scored once. */
int sched_cosa(const sched_accel *a, const sched_layer *l, int obj, sched_table *t, sched_cost *c, hw_err *err);

extern const hw_env_family hw_family_sched;

#endif
