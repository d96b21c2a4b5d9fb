/* mmap.h - MMapGame (MMap-MuZero paper, sections 4.1-4.3 and Appendix A).
 * Owns: the problem instance (buffers with the paper's Table 1 features, instructions with
 * supply values and latency tables L_I(S)), its JSON/msgpack form, the program generator and
 * its named dataset, the game engine (Copy / NoCopy / Drop with Appendix A intervals, offsets,
 * supply and alias rules), the baselines (heuristic, random) and the SVG renderer.
 * The env vtable (hw_family_mmap, "mmap-v0") is a thin layer over this API (mm_env.c).
 *
 * Units: sizes and offsets in bytes on the outside; CMEM is managed in granules of
 * `granule` bytes (a buffer takes ceil(size/granule) granules). Times (latency, supply,
 * demand) are in nanoseconds. Logical time = instruction index 0..T-1. */
#ifndef HW_MMAP_H
#define HW_MMAP_H

#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hw_error.h"

#define MM_MAX_VAR 8          /* operands varied in L_I(S) (paper: the 8 largest) */
#define MM_MAX_GRANULES 4096  /* CMEM granules (max_size / granule) */
#define MM_MAX_GROUP 4096     /* buffers per alias group */

enum { MM_COPY = 0, MM_NOCOPY = 1, MM_DROP = 2, MM_NACT = 3, MM_NONE = 255 };
extern const char *const mm_action_names[MM_NACT]; /* "Copy", "NoCopy", "Drop" */

typedef struct mm_buffer {
    int64_t size;          /* bytes */
    int32_t ngran;         /* granules */
    int32_t time;          /* target_time = index of its instruction */
    int32_t tensor;        /* dense tensor id */
    int32_t alias;         /* dense alias group id (singleton groups for unaliased buffers) */
    int32_t lr_start, lr_end; /* live_range, inclusive */
    int32_t op_index;      /* position among its instruction's operands */
    int32_t group_pos;     /* index in its alias group (chronological) */
    int8_t is_output;
    int8_t var_bit;        /* bit in its instruction's L table, -1 when not varied */
    double demand;         /* ns = size * copy_ns_per_byte (or given) */
    double benefit0;       /* L_I({}) - L_I({b}) */
    int64_t user_tensor, user_alias; /* ids as given in the file */
} mm_buffer;

typedef struct mm_instr {
    int32_t first, nbuf;   /* its buffers are first..first+nbuf-1 (inputs, then outputs) */
    int32_t nvar;
    int32_t var_buf[MM_MAX_VAR]; /* buffer index of bit j */
    double *lat;           /* 2^nvar latencies (ns), bit j set = var_buf[j] in CMEM */
    double supply;         /* initial supply value (ns) */
    char name[48];
} mm_instr;

typedef struct mm_problem {
    char name[96];
    int32_t T, nbuf, ntensor, nalias;
    mm_instr *ins;
    mm_buffer *buf;
    int64_t max_size, granule;
    int32_t G;                 /* granules */
    double copy_ns_per_byte;   /* demand = size * this */
    bool prefetch_after_def;   /* input copies start no earlier than live_range.start */
    /* alias groups: members of group g are gmem[gstart[g] .. gstart[g+1]-1], chronological */
    int32_t *gstart, *gmem;
    int32_t max_group;
    /* next buffer of the same tensor (-1 = none), for the observation */
    int32_t *next_same_tensor;
    double lat_hbm;            /* sum_I L_I({}) */
} mm_problem;

void mm_problem_free(mm_problem *p);
/* Bytes the problem holds (the server's memory budget, env.h mem_bytes). */
size_t mm_problem_bytes(const mm_problem *p);
/* JSON document (schemas/mmap-problem.schema.json) -> problem; errors name the field. */
mm_problem *mm_problem_from_json(const json_t *doc, hw_err *err);
json_t *mm_problem_to_json(const mm_problem *p);
/* File by extension: .json, .msgpack / .mpk (same document in msgpack). */
mm_problem *mm_problem_load(const char *path, hw_err *err);
/* A problem from bytes (JSON text, or msgpack when `msgpack`); the env reads files through
 * envs/common/hw_files.h and parses them here. */
mm_problem *mm_problem_parse(const char *data, size_t n, bool msgpack, hw_err *err);
bool mm_problem_is_path(const char *name_or_path);
bool mm_problem_is_msgpack_path(const char *path);
int mm_problem_save(const mm_problem *p, const char *path, hw_err *err);
/* msgpack <-> JSON document (used by load/save). Caller frees the returned buffer/json. */
json_t *mm_msgpack_to_json(const char *data, size_t len, hw_err *err);
char *mm_json_to_msgpack(const json_t *doc, size_t *len);

/* ---- generator ---- */
typedef struct mm_gen_params {
    const char *model;   /* zoo model name or template: lstm, rnn, wavenet, transformer, mlp */
    int train;           /* 0 inference, 1 training step (fwd, bwd, in-place updates) */
    int batch;
    int repeat;          /* template size knob: layers / unrolled steps */
    int width;           /* template width knob (hidden size) */
    uint64_t seed;
    int64_t cmem_bytes;  /* 0 = default */
} mm_gen_params;
mm_problem *mm_generate(const mm_gen_params *gp, const char *name, hw_err *err);
int mm_dataset_count(void);
const char *mm_dataset_name(int i);
/* A dataset program by name (e.g. "alexnet_train_batch_32"); NULL + error listing names. */
mm_problem *mm_dataset_load(const char *name, uint64_t seed, hw_err *err);
/* Dataset name or file path. */
mm_problem *mm_problem_open(const char *name_or_path, uint64_t seed, hw_err *err);

/* ---- game ---- */
typedef struct mm_option {
    bool legal;
    int32_t s, e;        /* allocation interval I(b), inclusive; s > e = empty */
    int32_t cs, ce;      /* copy interval (steps), cs > ce = none */
    int32_t off;         /* granule offset, -1 */
} mm_option;

typedef struct mm_rec {   /* undo record of one step */
    int32_t old_tensor_end, old_tensor_off, old_group_off;
    uint32_t wlog, plog;  /* start indices in the W and piece logs */
    int8_t old_group_state;
    uint8_t old_imask;
} mm_rec;

typedef struct mm_piece { int32_t s, e, off, n; } mm_piece;

typedef struct mm_game {
    const mm_problem *p;
    int32_t t;             /* current buffer index (== move number) */
    bool lost, done;
    int32_t words;         /* 64-bit words per occupancy mask */
    /* per buffer */
    uint8_t *act;
    int32_t *off, *is, *ie, *cs, *ce;
    double *reward;        /* reward received at each step */
    double *retp;          /* return before step i (retp[0] = 0) */
    /* per time step */
    double *W;             /* remaining supply */
    int32_t *edge;         /* copy intervals holding edge (t, t+1) */
    uint8_t *imask;        /* varied operands of instruction already in CMEM */
    /* per tensor / group */
    int32_t *tensor_end, *tensor_off;
    int32_t *group_off;
    int8_t *group_state;   /* 0 undecided, 1 CMEM, 2 HBM */
    int32_t open_cmem;     /* groups in CMEM with members still undecided */
    /* undo */
    mm_rec *rec;
    int32_t *wlog_t; double *wlog_v; uint32_t wlog_n, wlog_cap;
    mm_piece *plog; uint32_t plog_n, plog_cap;
    /* occupancy: segment tree over time with granule bitmasks */
    int32_t P;             /* leaves (power of two >= T) */
    uint64_t *cover, *agg; /* 2P nodes x words */
    /* options for the current buffer */
    mm_option opt[MM_NACT];
    /* scratch */
    uint64_t *mask, *mask2;
    mm_piece *scratch;
    int32_t nscratch;
    /* counters */
    int32_t ncopy, nnocopy, ndrop;
} mm_game;

mm_game *mm_game_new(const mm_problem *p);
void mm_game_free(mm_game *g);
/* Bytes the game holds, its logs at their current capacity (env.h mem_bytes). */
size_t mm_game_bytes(const mm_game *g);
void mm_game_reset(mm_game *g);
/* Applies action a (must be legal). Returns the reward; sets g->done / g->lost. A step that
 * leads to a state with no legal action is terminal and its reward brings the return to 0. */
double mm_game_step(mm_game *g, int a);
bool mm_game_legal(const mm_game *g, int a);
int mm_game_nlegal(const mm_game *g);
void mm_game_undo(mm_game *g);      /* undoes the last step */
/* Moves the game to the state reached by acts[0..n-1] (undo to the common prefix, replay). */
int mm_game_goto(mm_game *g, const uint8_t *acts, int32_t n);
double mm_game_return(const mm_game *g);
/* Current benefit of buffer b given the instruction's operands already in CMEM. */
double mm_game_benefit(const mm_game *g, int32_t b);
/* sum_I L_I(S_I) under the current mapping (undecided buffers count as HBM). */
double mm_game_latency(const mm_game *g);
/* True when no open alias group sits in CMEM: dropping everything left completes the game. */
bool mm_game_backup_safe(const mm_game *g);
/* Occupancy over time [s, e] as a granule bitmask written to out (g->words words). */
void mm_game_occupancy(const mm_game *g, int32_t s, int32_t e, uint64_t *out);

/* ---- baselines ---- */
int mm_policy_heuristic(const mm_game *g);
int mm_policy_random(const mm_game *g, gsl_rng *rng);
/* Plays a whole episode from reset with a policy (0 heuristic, 1 random). Returns the return. */
double mm_play(mm_game *g, int policy, uint64_t seed);
/* Latency of the heuristic's mapping (infinite if it loses; it does not on valid problems). */
double mm_heuristic_latency(const mm_problem *p);

/* ---- env helpers (mm_env.c) ---- */
/* Plays a design point on g from reset: an action array (0/1/2 or "Copy"/"NoCopy"/"Drop"), a
 * string of digits, {"actions": ...} or {"policy": "heuristic"|"random", "seed": n}. *illegal is
 * set when an action was illegal (the game is then lost). */
int mm_env_play_point(const mm_problem *p, mm_game *g, const json_t *point, bool *illegal, hw_err *err);
/* The live game of an mmap-v0 env instance (read-only). */
const mm_game *mm_env_game(const void *env);

/* ---- rendering ---- */
/* SVG layout (time x offset, one colour per tensor) of the game's current mapping. */
int mm_render_svg(const mm_game *g, FILE *f, const char *title);
/* What `hwgym render` does for mmap: problem (dataset name or file), a policy ("heuristic",
 * "random") or an actions file (JSON array or digit string), output SVG path. */
int mm_render_file(const char *problem, uint64_t seed, const char *policy, const char *actions_file, const char *out,
                   hw_err *err);

#endif
