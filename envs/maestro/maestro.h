/* maestro.h - a native reimplementation of MAESTRO's data-centric cost model (Kwon et al.,
 * IEEE Micro 2020) for one DNN layer, one hardware description and one mapping written in
 * MAESTRO's directives (SpatialMap / TemporalMap / Cluster).
 *
 * Usage: parse once, evaluate many.
 *   maestro_layer L;   maestro_layer_init(&L, MAESTRO_CONV, "conv1"); L.dim[MD_K] = 64; ...
 *   maestro_hw H;      maestro_hw_default(&H); H.num_pes = 256; ...
 *   maestro_mapping M; maestro_parse_directives("SpatialMap(1,1) K; ...", &L, &M, &err);
 *   maestro_result R;  maestro_eval(&L, &H, &M, &R);   // no malloc, pure
 * R.valid says whether MAESTRO itself would have evaluated the mapping (R.reason when not);
 * R.feasible additionally checks the hardware budget (PEs, L1/L2 capacity).
 * See docs/maestro.md for the mechanism, the fidelity figures and the deliberate differences. */
#ifndef HW_MAESTRO_H
#define HW_MAESTRO_H

#include <stdbool.h>
#include <stdio.h>

#include "hw_error.h"

/* Dimension ids. Y and X are INPUT rows/cols (MAESTRO's convention); YP/XP are Y'/X' (output). */
/* G: groups of a nested grouped convolution (MAESTRO's NGCONV, ResNeXt). */
enum { MD_N = 0, MD_K, MD_C, MD_R, MD_S, MD_Y, MD_X, MD_YP, MD_XP, MD_G, MD_NDIM };

/* GEMM (MAESTRO's M x K times K x N) is stored in the CONV slots: M -> Y, N -> K, K -> C, with
 * R = S = X = 1 and no sliding-window overlap; its directives use the names M, N, K. */
typedef enum { MAESTRO_CONV = 0, MAESTRO_DSCONV = 1, MAESTRO_GEMM = 2, MAESTRO_NGCONV = 3 } maestro_ltype;
typedef enum { MDIR_TEMPORAL = 0, MDIR_SPATIAL = 1, MDIR_CLUSTER = 2 } maestro_dkind;

#define MAESTRO_MAX_DIRS 48
#define MAESTRO_MAX_LEVELS 4 /* MAESTRO builds 4 NoC levels: at most 3 Cluster directives */
#define MAESTRO_NAME 64

typedef struct maestro_layer {
    char name[MAESTRO_NAME];
    maestro_ltype type;
    int dim[MD_NDIM]; /* N,K,C,R,S,Y,X (Y,X input); YP/XP derived = Y-R+1 (MAESTRO: no stride) */
    bool has_n;       /* N given in the Dimensions block (adds N to the tensors) */
    int stride_y, stride_x;
} maestro_layer;

typedef struct maestro_directive {
    unsigned char kind; /* maestro_dkind */
    unsigned char dim;  /* MD_* (for clusters: unused) */
    unsigned char logical; /* Cluster(n, L) */
    int size, ofs;      /* for Cluster: size = n */
} maestro_directive;

typedef struct maestro_mapping {
    int n;
    maestro_directive d[MAESTRO_MAX_DIRS];
} maestro_mapping;

typedef struct maestro_hw {
    int num_pes;
    int simd;             /* num_simd_lanes (vector width) */
    long l1_size, l2_size; /* capacities in elements (bytes); only used for feasibility */
    int noc_bw;           /* elements per cycle, every NoC level */
    int noc_latency;      /* zero-load latency: HW file NoC_NumHops (default 1), CLI hop_latency*hops */
    int offchip_bw;
    /* per-access energies in units of one MAC (MAESTRO's screen energy) */
    double e_l1, e_l2, e_mac;
    double mac_energy_nj; /* 0.00023 nJ per MAC (MAESTRO's cost database) for nJ outputs */
} maestro_hw;

enum { MT_IN = 0, MT_W = 1, MT_OUT = 2, MT_N = 3 };

typedef struct maestro_result {
    bool valid;      /* MAESTRO would have accepted the mapping */
    bool feasible;   /* valid and within the hardware budget */
    bool degenerate; /* rejected because MAESTRO would print zero/negative/NaN numbers here */
    char reason[200];
    long long runtime;   /* cycles */
    long long num_macs;  /* counted MACs (MAESTRO's "Num MACs") */
    long long compute_cycles; /* sum over top-level iterations of the compute delay */
    double throughput;   /* MACs per cycle */
    long long l2_req[MT_N], l1_req[MT_N]; /* buffer requirements (elements) */
    long long l2_rd[MT_N], l2_wr[MT_N], l1_rd[MT_N], l1_wr[MT_N];
    long long l2_req_total, l1_req_total;
    double energy;   /* total, in MAC units: 18.61*L2 + 1.68*L1 + MACs (screen value) */
    double e_mac, e_l1, e_l2, e_noc, e_offchip; /* per component, MAC units */
    double energy_nj; /* energy * mac_energy_nj */
    double area, power;           /* MAESTRO's area/power model */
    double pe_power, l1_power, l2_power, noc_power;
    double edp;                   /* runtime * energy */
    long long peak_bw, offchip_bw_req;
    double avg_bw;
    double delay_min[3], delay_max[3], delay_avg[3]; /* ingress, egress, compute at top level */
    double avg_util_pes;
    double arith_intensity;
    int num_levels;
    int warn_l1, warn_l2, warn_noc_bw, warn_offchip_bw;
} maestro_result;

void maestro_layer_init(maestro_layer *l, maestro_ltype type, const char *name);
/* Fills Y'/X' from Y,X,R,S. Call after setting dims. */
void maestro_layer_finish(maestro_layer *l);
void maestro_hw_default(maestro_hw *h);
const char *maestro_dim_name(int d);
int maestro_dim_from_name(const char *s); /* -1 when unknown; accepts Y' X' */

/* Directive text "SpatialMap(1,1) K; TemporalMap(Sz(C),4) C; Cluster(16, P); ...".
 * Sz(D) resolves to the layer's size of D. Checks MAESTRO's own parse-time rules (a
 * TemporalMap over R/S must have size == offset == the filter size). */
int maestro_parse_directives(const char *text, const maestro_layer *l, maestro_mapping *m, hw_err *err);
/* Writes directive text ("; "-separated) into buf. */
int maestro_mapping_to_text(const maestro_mapping *m, char *buf, size_t cap);
/* The same, naming dimensions as the layer type does (M/N/K for GEMM). */
int maestro_mapping_to_text_for(const maestro_mapping *m, maestro_ltype t, char *buf, size_t cap);
/* Dimension name in a layer type's vocabulary ("M" for MD_Y in a GEMM). */
const char *maestro_dim_name_for(int d, maestro_ltype t);

/* A MAESTRO network (.m) file: Network name { Layer L { Type: ..; Stride {..} Dimensions {..}
 * Dataflow {..} } ... }. Layers without a Dataflow block get n == 0 directives. */
typedef struct maestro_net_layer {
    maestro_layer layer;
    maestro_mapping map;
} maestro_net_layer;
typedef struct maestro_net {
    char name[MAESTRO_NAME];
    int n;
    maestro_net_layer *layers;
} maestro_net;
int maestro_parse_network(const char *text, maestro_net *net, hw_err *err);
int maestro_load_network(const char *path, maestro_net *net, hw_err *err);
void maestro_net_free(maestro_net *net);

/* A MAESTRO HW file ("num_pes: 256", "l1_size_cstr: 512", ...) applied over *h. */
int maestro_parse_hw(const char *text, maestro_hw *h, hw_err *err);
int maestro_load_hw(const char *path, maestro_hw *h, hw_err *err);

/* The cost model. Pure; no allocation. */
void maestro_eval(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r);
/* The checks maestro_eval makes of the layer alone (dimensions positive, Y/X at least R/S, at most
 * 1e15 MAC-loop iterations) all pass. */
bool maestro_layer_ok(const maestro_layer *l);
/* maestro_eval of a layer that passed maestro_layer_ok, without checking it again (an env's layer
 * does not change between steps), and without what maestro-v0 does not report: the same result
 * but compute_cycles, avg_bw, delay_min/max/avg and arith_intensity, which it leaves 0. */
void maestro_eval_brief(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r);

/* The hwgym maestro drop-in (argv[0] = "maestro"); output to out. Returns the exit code. */
int maestro_cli_main(int argc, char **argv, FILE *out);

#endif
