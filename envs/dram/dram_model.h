/* dram_model.h - native DRAM device + memory-controller model for dram-v0 (a DRAMSys-like,
 * event-driven, tCK-granular simulation; no SystemC, no subprocess).
 * Owns: memspecs (DRAMSys-style JSON, DDR3-1600 and DDR4-2400 built in), address mappings,
 * traces (the .stl reader and the streaming/random/mixed generators), the controller
 * configuration (the 10 gym parameters) and dram_simulate(), a pure function from
 * (memspec, address map, controller config, trace) to outputs. docs/dram.md describes the model.
 * All times inside the model are integer tCK; outputs are in ns / pJ / mW. */
#ifndef HW_DRAM_MODEL_H
#define HW_DRAM_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"

enum { DRAM_DDR3 = 0, DRAM_DDR4 = 1 };

typedef struct dram_memspec {
    char id[64];
    int type;                       /* DRAM_DDR3 / DRAM_DDR4 */
    int bl, data_rate, bank_groups, banks, columns, rows, width, devices, ranks;
    int tck_ps;                     /* clock period in ps */
    /* timings in tCK (DDR3: the *_S and *_L pairs are equal, bank_groups = 1) */
    int CL, WL, AL, RCD, RP, RAS, RC, RTP, WR, CCD_S, CCD_L, RRD_S, RRD_L, WTR_S, WTR_L, FAW, RFC, REFI,
        WPRE, RPRE, RTRS;
    /* currents (mA) and voltages (V); ipp0/vpp are 0 for DDR3 (single voltage domain) */
    double idd0, idd2n, idd3n, idd4r, idd4w, idd5, vdd, ipp0, vpp;
} dram_memspec;

/* Built-in memspecs by name: "DDR4-2400" (JEDEC_4Gb_DDR4-2400_8bit_A, the reference runs') and
 * "DDR3-1600" (MICRON_1Gb_DDR3-1600_8bit_G, ArchGym's default). NULL when unknown. */
const char *dram_builtin_memspec_json(const char *name);
extern const char *const dram_builtin_memspec_names[]; /* NULL-terminated */
/* Parses a DRAMSys memspec JSON object ({"memspec":{...}} or its inner object). Errors name the
 * field ("memspec.memtimingspec.RCD: missing"). */
int dram_memspec_from_json(const json_t *j, dram_memspec *ms, hw_err *err);
int dram_memspec_builtin(const char *name, dram_memspec *ms, hw_err *err);

/* Address mapping: for each field the list of address bits, LSB first (DRAMSys style). */
typedef struct dram_addrmap {
    int n_col, n_bank, n_bg, n_row, n_rank;
    uint8_t col[32], bank[8], bg[8], row[40], rank[8];
} dram_addrmap;
/* The default: BYTE 0-2 | COLUMN | BANKGROUP | BANK | ROW, sized from the memspec (for the
 * DDR4-2400 memspec: column 3-12, bankgroup 13-14, bank 15-16, row 17-31, as in setup.json). */
void dram_addrmap_default(const dram_memspec *ms, dram_addrmap *am);
/* {"COLUMN_BIT":[..],"BANKGROUP_BIT":[..],"BANK_BIT":[..],"ROW_BIT":[..],"BYTE_BIT":[..],"RANK_BIT":[..]}
 * (or wrapped in {"addressmapping":{...}}); checked against the memspec's geometry. */
int dram_addrmap_from_json(const json_t *j, const dram_memspec *ms, dram_addrmap *am, hw_err *err);

/* A trace: n requests, request i issued at cycle[i] of a clk_mhz clock (absolute timestamps). */
/* The latest time a trace may reach: the model converts cycles to a signed 64-bit count of ps
 * (as SystemC does), so about 106 days, less a little headroom for the rounding to tCK.
 * dram_trace_max_cycle(clk) is that limit in trace clock cycles; parsing rejects later cycles
 * with their line number, dram_simulate() with their index. */
#define DRAM_TRACE_MAX_PS (INT64_MAX - (INT64_C(1) << 20))
uint64_t dram_trace_max_cycle(double clk_mhz);

typedef struct dram_trace {
    int64_t n, cap;
    uint64_t *cycle;
    uint64_t *addr;
    uint8_t *write;
    double clk_mhz;
} dram_trace;

void dram_trace_init(dram_trace *t, double clk_mhz);
void dram_trace_free(dram_trace *t);
void dram_trace_reserve(dram_trace *t, int64_t n);
void dram_trace_push(dram_trace *t, uint64_t cycle, bool write, uint64_t addr);
/* Parses `<cycle>:\t<read|write>\t0x<addr>` lines (blank lines and '#' comments skipped);
 * errors give the line number. */
int dram_trace_parse(const char *text, size_t len, dram_trace *t, hw_err *err);
int dram_trace_load(const char *path, dram_trace *t, hw_err *err);
/* Writes the trace in the same format; returns 0 or -1. */
int dram_trace_save(const char *path, const dram_trace *t);

enum { DRAM_GEN_STREAM = 0, DRAM_GEN_RANDOM, DRAM_GEN_MIXED };
typedef struct dram_gen {
    int pattern;          /* DRAM_GEN_* */
    int64_t count;
    double read_ratio;    /* P(read) */
    uint64_t base, span;  /* addresses in [base, base+span), 64 B aligned */
    int64_t interval;     /* trace cycles between requests */
    uint64_t seed;
    double stream_frac;   /* mixed: probability that a request continues the stream (else random) */
    double clk_mhz;
} dram_gen;
/* Deterministic for a seed (GSL mt19937). */
void dram_generate(const dram_gen *g, dram_trace *t);

/* Controller configuration: the 10 gym parameters plus fixed knobs. */
enum { DRAM_PP_OPEN = 0, DRAM_PP_OPENADAPTIVE, DRAM_PP_CLOSED, DRAM_PP_CLOSEDADAPTIVE };
enum { DRAM_SCHED_FIFO = 0, DRAM_SCHED_FRFCFS, DRAM_SCHED_FRFCFSGRP };
enum { DRAM_BUF_BANKWISE = 0, DRAM_BUF_READWRITE, DRAM_BUF_SHARED };
enum { DRAM_ARB_SIMPLE = 0, DRAM_ARB_FIFO, DRAM_ARB_REORDER };
enum { DRAM_RESP_FIFO = 0, DRAM_RESP_REORDER };
enum { DRAM_REF_NONE = 0, DRAM_REF_ALLBANK };
extern const char *const dram_pp_names[], *const dram_sched_names[], *const dram_buf_names[],
    *const dram_arb_names[], *const dram_resp_names[], *const dram_ref_names[];

typedef struct dram_ctrl {
    int page_policy, scheduler, sched_buffer, arbiter, resp_queue, refresh;
    int refresh_max_postponed, refresh_max_pulledin;
    int request_buffer_size;       /* Bankwise / Shared limit */
    int max_active_transactions;   /* Fifo / Reorder arbiters only */
    int buffer_size_read, buffer_size_write; /* ReadWrite buffer (DRAMSys hidden default 8/8) */
    int req_bytes;                 /* bytes per request (64) */
    bool jedec_act_act;            /* DDR4: true = same-bank ACT->ACT tRC (JEDEC), false = tRCD (DRAMSys v5.1 quirk); DDR3 always tRC */
} dram_ctrl;
/* DRAMSys's defaults (Open, FrFcfs, Bankwise 8, Fifo, AllBank 0/0, Simple, 128). */
void dram_ctrl_default(dram_ctrl *c);

enum { DRAM_CMD_ACT = 0, DRAM_CMD_PRE, DRAM_CMD_PREA, DRAM_CMD_RD, DRAM_CMD_RDA, DRAM_CMD_WR, DRAM_CMD_WRA,
       DRAM_CMD_REF, DRAM_NCMD };
extern const char *const dram_cmd_names[];

typedef struct dram_cmd_rec {
    int64_t t;    /* tCK */
    int32_t cmd;  /* DRAM_CMD_* */
    int32_t bank; /* -1 for rank commands */
    int64_t req;  /* request index, -1 for refresh commands */
} dram_cmd_rec;

typedef struct dram_result {
    int64_t n_req, n_read, n_write;
    double total_time_ns;        /* when the last response reached the initiator (DRAMSys "Total Time") */
    double avg_lat_ns, avg_read_lat_ns, avg_write_lat_ns; /* from arbiter acceptance to end of response */
    double p99_lat_ns, p99_read_lat_ns, max_lat_ns;
    double bandwidth_GBps;       /* bytes served / total time */
    double energy_pJ, power_mW;  /* DRAMPower-style, x devices */
    double energy_act_pJ, energy_pre_pJ, energy_rd_pJ, energy_wr_pJ, energy_ref_pJ, energy_bg_pJ;
    int64_t cmd[DRAM_NCMD];      /* command counts */
    int64_t n_pre_implicit;      /* precharges inside RDA/WRA */
    int64_t n_prea_banks;        /* banks closed by PREAB (each costs one PRE energy) */
    int64_t row_hits, row_misses; /* CAS without / with an ACT of their own */
    double row_hit_rate;
    int64_t active_cycles, total_cycles;
    /* optional per-request tracing (NULL unless the caller provides arrays of n entries) */
    int64_t *trace_gen_tck, *trace_end_tck, *trace_cas_tck;
    /* optional command log (NULL unless the caller provides cmd_log with cmd_log_cap entries);
     * cmd_log_n = commands recorded (at most cmd_log_cap) */
    dram_cmd_rec *cmd_log;
    int64_t cmd_log_cap, cmd_log_n;
} dram_result;

/* Simulates `trace` on the controller and device; fills `res`. Pure: no globals, no I/O.
 * Allocates its working memory once per call (none per request). Returns 0, or -1 with
 * HW_E_BAD_CONFIG on an inconsistent configuration. */
int dram_simulate(const dram_memspec *ms, const dram_addrmap *am, const dram_ctrl *cfg, const dram_trace *trace,
                  dram_result *res, hw_err *err);
/* 1 (default): idle gaps are skipped in closed form (identical results); 0 steps through them
 * (tests compare the two). */
extern int dram_sim_idle_skip;

/* The 10 gym parameters, in action order: PagePolicy, Scheduler, SchedulerBuffer,
 * RequestBufferSize, RespQueue, RefreshPolicy, RefreshMaxPostponed, RefreshMaxPulledin, Arbiter,
 * MaxActiveTransactions. dram_ctrl_set sets parameter p to v (an enum index or a number). */
const char *dram_param_name(int p);
void dram_ctrl_set(dram_ctrl *c, int p, int v);
/* Applies {"PagePolicy":"Closed","RequestBufferSize":4,...} (names as above, categorical values
 * as DRAMSys spells them, case-insensitive) on top of *c. Errors (HW_E_BAD_ACTION) name the field
 * as "point.<name>". */
int dram_ctrl_apply_json(const json_t *o, dram_ctrl *c, hw_err *err);
/* A controller as DRAMSys writes it: {"mcconfig": {...}} or the inner object. The ten gym
 * parameters as in dram_ctrl_apply_json, RequestBufferSizeRead/Write, and DRAMSys's other keys
 * (CmdMux, PowerDownPolicy, RefreshManagement, Think/Phy/Arbitration/Blocking delays,
 * watermarks, PowerDownTimeout) accepted at the values the model reproduces; any other value is
 * refused naming the key and the modelled value. */
int dram_ctrl_apply_mcconfig(const json_t *o, dram_ctrl *c, hw_err *err);
/* Adds every output of r (and the controller parameters under "config") to object m. */
void dram_result_json(const dram_ctrl *c, const dram_result *r, json_t *m);

/* Per-command energies of one command for the whole rank (pJ) and background power (mW). */
typedef struct dram_energy_terms {
    double act, pre, rd, wr, ref, p_bg_active_mW, p_bg_pre_mW;
} dram_energy_terms;
void dram_energy_terms_of(const dram_memspec *ms, dram_energy_terms *e);

#endif
