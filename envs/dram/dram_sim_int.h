/* dram_sim_int.h - the simulation state shared by dram_sim.c (the event loop: arbiter, bank
 * machines, timing checker, refresh, energy) and dram_sim_setup.c (what runs once per
 * simulation: checking the inputs, decoding the trace, derived timings, and the results:
 * latency statistics and energy). Private to envs/dram. */
#ifndef HW_DRAM_SIM_INT_H
#define HW_DRAM_SIM_INT_H

#include <stdint.h>

#include "dram_model.h"
#include "dram_scan.h"

#define INF INT64_MAX
#define MAXB 64

typedef struct sim {
    const dram_memspec *ms;
    const dram_ctrl *c;
    int nbanks, bpg;
    int64_t n;
    /* per request */
    int64_t *ts;      /* issue time at the player, tCK (ceil) */
    int64_t *gen;     /* arbiter acceptance (TimeOfGeneration) */
    int64_t *end;     /* end of response at the controller side */
    int64_t *cas_t;   /* CAS times: the caller's res->trace_cas_tck, or NULL */
    int64_t *resp_ready; /* data-strobe end, INF until CAS (Reorder response queue only) */
    uint32_t *row;
    uint64_t *addr;
    uint8_t *bank, *acted;
    const uint8_t *wr; /* the trace's */
    /* bank queues */
    int qcap;
    int32_t *q;      /* nbanks * qcap */
    int qn[MAXB];
    uint64_t nonempty;
    /* buffer counters */
    int bank_cnt[MAXB], total, nrd, nwr, last_bank;
    /* bank machines */
    uint8_t open[MAXB], keep[MAXB], blocked[MAXB];
    uint64_t open_mask; /* the banks with open[b] */
    uint32_t open_row[MAXB];
    int64_t act_t[MAXB]; /* time of the bank's last ACT */
    int32_t cur[MAXB];
    int activated;
    int last_write;
    uint64_t dirty;          /* banks whose proposal must be recomputed */
    int8_t prop_cmd[MAXB];
    uint8_t bg_of[MAXB];
    int64_t bp[MAXB]; /* bank-level bound of the proposal's time (dram_sim.c, the command pass) */
    dram_bank_times_fn bank_times; /* dram_scan.h, chosen for this CPU */
    uint64_t next_ready; /* the banks legal at ready_at, found by the last scan (dram_sim.c) */
    int64_t ready_at;
    int64_t cmd_bound; /* the next command time found by the last command pass */
    int64_t prop_req[MAXB]; /* each bank's proposed request */
    /* timing checker: earliest time per command type, by bank / bank group / rank; the slot
     * DRAM_NCMD (no command) holds INF */
    int64_t nb[MAXB][DRAM_NCMD + 1], ng[MAXB][DRAM_NCMD + 1], nr[DRAM_NCMD + 1], bus;
    int64_t faw[4];
    int faw_n, faw_h;
    /* derived timings */
    int burst, tRDWR, tWRRD_S, tWRRD_L, tWRPRE, tRDAACT, tWRAACT, act_act;
    /* refresh manager */
    int64_t ref_trigger;
    int ref_pulledin_state, flex, ref_cmd;
    /* controller input (the request offered by the arbiter) */
    int64_t in_req, in_arr;
    /* response handshake (Simple arbiter) */
    int64_t rel_req, rel_time;
    /* response queue */
    int64_t *rq; /* Fifo response queue only */
    int64_t *rq_t;
    int64_t rq_h, rq_n;
    int64_t next_ret; /* Reorder resp queue: next request index to return */
    /* arbiter Fifo/Reorder + player */
    int64_t p_next, p_time, active, outstanding;
    int64_t *cq;
    int64_t cq_h, cq_n, cq_cap;
    int chan_busy;
    int64_t chan_free, last_end_req;
    int thread_busy;
    int64_t r_next, last_end_resp;
    int64_t *pr;          /* pending responses (arbiter Fifo) */
    int64_t pr_h, pr_n;
    uint8_t *pr_ready;    /* arbiter Reorder: response reached the arbiter */
    int64_t arb_next_ret;
    /* completion */
    int64_t done, t_last;
    /* energy */
    int64_t close_at[MAXB];
    uint8_t e_open[MAXB];
    int n_open, n_pending;
    int64_t last_change, act_cycles;
    dram_result *res;
} sim;

/* dram_sim_setup.c: checks the inputs, allocates and fills s (the trace decoded, the derived
 * timings, the banks idle); -1 with err set (call dram_sim_free either way). */
int dram_sim_init(sim *s, const dram_memspec *ms, const dram_addrmap *am, const dram_ctrl *c, const dram_trace *tr,
                  dram_result *res, hw_err *err);
/* fills s->res from a finished simulation that ended at tCK T: latency statistics, bandwidth,
 * energy, row-hit rate and the per-request traces asked for; -1 with err set */
int dram_sim_results(sim *s, int64_t T, hw_err *err);
void dram_sim_free(sim *s);

#endif
