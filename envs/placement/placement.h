/* placement.h - placement-v0 (EGRL paper): tensor placement on a DRAM/LLC/SRAM hierarchy.
 * Owns: the workload graph (Table 1 node features, edges), the hardware description, liveness,
 * the compiler rectification (demotion rule), the latency model, the native-compiler heuristic
 * and a pure evaluation function usable without the env (docs/placement.md has the formulas).
 *
 * Tensors: node i owns two tensors, its weights (tensor 2i) and its output activation
 * (tensor 2i+1); a mapping is one memory index per tensor, so the action is
 * [w0, a0, w1, a1, ...]. Memory 0 is the slowest, largest one (the backing store, DRAM);
 * higher indices are faster and smaller (default: 0 = DRAM, 1 = LLC, 2 = SRAM).
 *
 * Everything that does not depend on the mapping is computed once by pl_model_build(); the
 * evaluation (pl_evaluate) allocates nothing and only touches the caller's pl_scratch. */
#ifndef HW_PLACEMENT_MODEL_H
#define HW_PLACEMENT_MODEL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "hw_error.h"

#define PL_MAX_MEMS 8
#define PL_MAX_BANKS 16 /* banks per memory (per-engine SRAMs) */
#define PL_MAX_IN 8
#define PL_NFEAT 19
#define PL_OP_COUNT 11 /* the zoo's hw_op values 0..10 */

/* Table 1 feature columns, in observation order. */
extern const char *const pl_feature_names[PL_NFEAT];
/* Op names accepted in graph files (same order/ids as the zoo's hw_op). */
extern const char *const pl_op_names[PL_OP_COUNT];

typedef struct pl_mem {
    char name[32];
    int64_t capacity;        /* bytes, of each bank */
    double read_bw, write_bw; /* bytes per second, of each bank */
    double latency;          /* seconds, added once per node that touches the memory (max) */
    int banks;               /* 1..PL_MAX_BANKS equal banks (per-engine SRAMs); 0 is read as 1.
                              * Node i's tensors live in bank i mod banks (engine affinity);
                              * each bank has its own capacity and its own transfer channel. */
} pl_mem;

typedef struct pl_hw {
    char name[64];
    int n_mem;               /* 2..PL_MAX_MEMS; index 0 slowest (backing store) */
    pl_mem mem[PL_MAX_MEMS];
    int engines;             /* compute engines working on one layer together */
    double freq_hz;
    double macs_per_cycle;   /* per engine: conv, dwconv, fc, matmul */
    double vector_ops_per_cycle; /* per engine: every other op */
    double node_overhead;    /* seconds per node (dispatch) */
    int element_bytes;       /* bytes per tensor element (1 = int8) */
} pl_hw;

typedef struct pl_node {
    char name[64];
    int op;                  /* 0..PL_OP_COUNT-1 (hw_op) */
    int64_t ifm[3], ofm[3];  /* x, y, z (z = channels) */
    int64_t weights;         /* weight elements (0 if none) */
    int64_t ops;             /* MACs (MAC ops) or element ops (others), whole batch */
    int groups, kx, ky, stride, pad, dilation, batch;
    int n_in;
    int in[PL_MAX_IN];       /* producer node indices (< own index); -1 = graph input */
} pl_node;

typedef struct pl_graph {
    char name[64];
    int n;
    pl_node *nodes;
} pl_graph;

enum { PL_FEAT_RAW = 0, PL_FEAT_LOG1P, PL_FEAT_NORMALIZED };

/* One read of a node (pl_model.xf): `bytes` of `tensor`, from the memory the mapping gives it. */
typedef struct pl_xfer {
    double bytes;
    int tensor;
} pl_xfer;

typedef struct pl_model {
    pl_hw hw;
    pl_graph g;              /* owned copy */
    int n, nt, ne;           /* nodes, tensors (2n), edges */
    int64_t *bytes;          /* [nt] tensor sizes */
    int64_t total_bytes;
    int *last_use;           /* [n] last step at which activation i is alive (>= i) */
    int *alive_off, *alive;  /* CSR [n+1]: activation tensor ids alive at step t */
    double *t_compute;       /* [n] seconds */
    int64_t *w_read;         /* [n] weight bytes read by node i */
    int *in_off, *in_t;      /* CSR [n+1]: input tensor ids (-1 = graph input, in memory 0) */
    int64_t *in_bytes;
    /* rectification: tensors sorted by (bytes, id) ascending (their rank) */
    int *rank_of;            /* [nt] */
    int *by_rank;            /* [nt] */
    /* the weights alone in the same order (weight rank): a memory bank's resident weights are a
     * bitset over weight ranks, nww words (one up to 64 nodes) */
    int nww;
    int *wword;              /* [n] the word of node i's weights */
    uint64_t *wbit;          /* [n] its bit in that word; 0 for empty weights (never demoted) */
    int *wrank_glob;         /* [n] the rank of the weight of weight rank r */
    int64_t *wrank_bytes;    /* [n] its bytes (ascending) */
    int wrank_pow2[65];      /* the first weight rank of at least 2^b bytes (n: none); [64] = n */
    int *aempty, n_aempty;   /* the empty activations (tensor ids): uncounted in pl_result's act_tensors */
    /* channels: memory k's bank b is channel coff[k] + b (nch of them) */
    int coff[PL_MAX_MEMS + 1], nch;
    /* a channel's activation differences (pl_scratch.delta) hold one entry per step at which a
     * tensor of its bank is born (bank b of B banks: steps b, b + B, ...; between two such steps
     * its sum only falls), plus one for the deaths after the last: channel c's are
     * delta[doff[c] .. doff[c + 1]); with one bank per memory doff[c] = c * (n + 1). */
    int *doff;               /* [nch + 1] */
    uint8_t *chan_of;        /* [n_mem x (n + 1)] the channel of node i's tensors in memory k
                              * (k * (n + 1) + i; i = n: a graph input, bank 0) */
    int *bpos, *dpos;        /* [n_mem x n] in memory k, the delta entries of activation i's
                              * birth and of its death (the first entry after its last use) */
    double inv_rbw[PL_MAX_MEMS], inv_wbw[PL_MAX_MEMS], lat[PL_MAX_MEMS];
    int one_bank;            /* every memory has one bank: a channel is its memory (faster paths) */
    /* latency with one bank per memory (placement_eval.c): node i's reads xf[xoff[i]..xoff[i+1])
     * (its weights if any, then its inputs, a graph input as tensor nt: the order their seconds
     * add up), then its output written, out_bytes[i] (as a double; 0: none) */
    int *xoff;
    pl_xfer *xf;
    double *out_bytes;
    /* observation */
    float *feat;             /* [n * PL_NFEAT] */
    int64_t *edges;          /* [ne * 2] (producer, consumer) */
    /* baseline */
    uint8_t *heuristic;      /* [nt] native-compiler mapping */
    double baseline;         /* its latency, seconds */
} pl_model;

typedef struct pl_scratch {
    uint8_t *map;            /* [nt] rectified mapping of the last evaluation */
    uint64_t *wbits;         /* [nch x nww] each channel's resident weights (weight-rank bitset) */
    int64_t *delta;          /* [doff[nch]] each channel's activation bytes: + at birth, - after the last use */
    double *node_time;       /* [n] per-node latency of the last evaluation */
} pl_scratch;

typedef struct pl_result {
    double latency;          /* seconds, of the rectified mapping */
    double eps;              /* reassigned bytes / total bytes */
    int64_t reassigned_bytes;
    int n_reassigned;        /* tensors moved by the compiler */
    int64_t peak[PL_MAX_MEMS];    /* peak occupancy per memory (bytes; its fullest bank), rectified map */
    int64_t weights_in[PL_MAX_MEMS]; /* resident weight bytes per memory */
    int weight_tensors[PL_MAX_MEMS], act_tensors[PL_MAX_MEMS]; /* non-empty tensors per memory */
    const uint8_t *rectified;     /* = scratch->map */
} pl_result;

/* Hardware: the NNP-I-like default, or read from JSON (missing fields take the defaults;
 * `memories`, when given, replaces the default list). `where` prefixes errors
 * ("config.hw"). */
void pl_hw_default(pl_hw *hw);
/* Named presets: "nnpi-like" (the default above) and "nnp-i" (12 per-ICE SRAM banks, the public
 * Spring Hill figures; docs/placement.md cites each). Returns -1 (HW_E_BAD_CONFIG naming
 * `where`) for an unknown name. */
int pl_hw_preset(const char *name, const char *where, pl_hw *hw, hw_err *err);
/* `j` may also be a preset name (a string), or an object with "preset" plus overrides. */
int pl_hw_from_json(const json_t *j, const char *where, pl_hw *hw, hw_err *err);
json_t *pl_hw_to_json(const pl_hw *hw);

/* Graphs: from the workload zoo (by name), or from the documented JSON format. */
int pl_graph_from_zoo(const char *model, pl_graph *g, hw_err *err);
struct hw_model;
int pl_graph_from_hw_model(const struct hw_model *zm, pl_graph *g, hw_err *err);
int pl_graph_from_json(const json_t *j, const char *where, pl_graph *g, hw_err *err);
void pl_graph_free(pl_graph *g);

/* Precomputes everything mapping-independent. Takes ownership of g's nodes (g is emptied).
 * Fails when the workload cannot fit even with every tensor in memory 0. */
pl_model *pl_model_build(pl_graph *g, const pl_hw *hw, int features, hw_err *err);
void pl_model_free(pl_model *m);

pl_scratch *pl_scratch_new(const pl_model *m);
void pl_scratch_free(pl_scratch *s);

/* Liveness: is tensor t alive at step s? (weights: always) */
int pl_alive(const pl_model *m, int tensor, int step);
/* Occupancy of memory `mem` at step s under a mapping (no rectification), all banks together. */
int64_t pl_occupancy(const pl_model *m, const uint8_t *map, int mem, int step);
/* The bank of memory `mem` that tensor t occupies when mapped there (node mod banks). */
static inline int pl_bank(const pl_model *m, int tensor, int mem) {
    int b = m->hw.mem[mem].banks;
    return b > 1 ? (tensor >> 1) % b : 0;
}
/* Occupancy of one bank of memory `mem` at step s; its capacity is hw.mem[mem].capacity. */
int64_t pl_occupancy_bank(const pl_model *m, const uint8_t *map, int mem, int bank, int step);

/* Compiler rectification only: writes the rectified map to out (may equal map). Returns the
 * reassigned bytes. */
int64_t pl_rectify(const pl_model *m, const uint8_t *map, uint8_t *out, pl_scratch *s, int *n_moved);
/* Time (seconds) of node i under a mapping: max(compute, slowest channel) + max latency. */
double pl_node_time(const pl_model *m, const uint8_t *map, int i);
/* The same with only the inputs p (0-based, in the node's input order) whose bit is set in
 * in_mask; dropping inputs can only lower the time (used by the bounds, placement_bound.h). */
double pl_node_time_masked(const pl_model *m, const uint8_t *map, int i, unsigned in_mask);
/* The occupancy keys of r (peak, weights_in, weight_tensors, act_tensors) of a mapping as it is
 * (no rectification). */
void pl_occupancy_of(const pl_model *m, const uint8_t *map, pl_scratch *s, pl_result *r);
/* Latency (seconds) of an already valid mapping; per-node times go to node_time if non-NULL. */
double pl_latency(const pl_model *m, const uint8_t *map, double *node_time);
/* Rectify + latency. map entries must be < hw.n_mem. No allocation. */
void pl_evaluate(const pl_model *m, const uint8_t *map, pl_scratch *s, pl_result *r);
/* The deterministic native-compiler heuristic (docs/placement.md). out: [nt]. */
void pl_heuristic(const pl_model *m, uint8_t *out);

/* SVG memory maps (placement_render.c): the heuristic above `map` (and its rectification when
 * the compiler changed it), one band per tensor, plus the memory transition matrix. */
int pl_render_svg(const pl_model *m, const uint8_t *map, const char *title, FILE *out);

#endif
