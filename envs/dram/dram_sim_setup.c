/* dram_sim_setup.c - what dram_simulate() does once per simulation, around its event loop
 * (dram_sim.c): checking the inputs and building the state (dram_sim_init), and turning the
 * finished state into outputs (dram_sim_results). See dram_sim_int.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dram_sim_int.h"

int dram_sim_init(sim *s, const dram_memspec *ms, const dram_addrmap *am, const dram_ctrl *c, const dram_trace *tr,
                  dram_result *res, hw_err *err) {
    int64_t *tg = res->trace_gen_tck, *te = res->trace_end_tck, *tc = res->trace_cas_tck;
    dram_cmd_rec *log = res->cmd_log;
    int64_t log_cap = res->cmd_log_cap;
    memset(res, 0, sizeof *res);
    res->cmd_log = log;
    res->cmd_log_cap = log ? log_cap : 0;
    res->trace_gen_tck = tg;
    res->trace_end_tck = te;
    res->trace_cas_tck = tc;
    if (tr->n <= 0) return hw_fail(err, HW_E_BAD_CONFIG, "trace: empty");
    if (c->request_buffer_size < 1 || c->request_buffer_size > 4096)
        return hw_fail(err, HW_E_BAD_CONFIG, "RequestBufferSize: %d out of range", c->request_buffer_size);
    if (c->max_active_transactions < 1) return hw_fail(err, HW_E_BAD_CONFIG, "MaxActiveTransactions: must be >= 1");
    if (c->refresh_max_postponed < 0 || c->refresh_max_pulledin < 0)
        return hw_fail(err, HW_E_BAD_CONFIG, "RefreshMaxPostponed/RefreshMaxPulledin: must be >= 0");
    if (c->req_bytes != ms->bl * ms->width * ms->devices / 8)
        return hw_fail(err, HW_E_BAD_CONFIG, "request size %d B: must equal one burst (%d B)", c->req_bytes,
                       ms->bl * ms->width * ms->devices / 8);
    if (ms->banks > MAXB) return hw_fail(err, HW_E_BAD_CONFIG, "memspec: more than %d banks", MAXB);
    uint64_t maxc = dram_trace_max_cycle(tr->clk_mhz);
    for (int64_t i = 0; i < tr->n; i++)
        if (tr->cycle[i] > maxc)
            return hw_fail(err, HW_E_BAD_CONFIG, "trace request %lld: cycle %llu is past the longest trace the model simulates (%llu cycles)",
                           (long long)i, (unsigned long long)tr->cycle[i], (unsigned long long)maxc);
    s->ms = ms;
    s->c = c;
    s->res = res;
    s->n = tr->n;
    s->nbanks = ms->banks;
    s->bpg = ms->banks / ms->bank_groups;
    int64_t n = s->n;
    s->ts = malloc((size_t)n * sizeof(int64_t));
    s->gen = malloc((size_t)n * sizeof(int64_t));
    s->end = malloc((size_t)n * sizeof(int64_t));
    /* only the arrays this configuration uses (fewer pages to fault in per call); CAS times
     * go straight to the caller's array when it asked for them */
    bool fifo_rq = c->resp_queue == DRAM_RESP_FIFO;
    s->cas_t = tc;
    s->resp_ready = fifo_rq ? NULL : malloc((size_t)n * sizeof(int64_t));
    s->row = malloc((size_t)n * sizeof(uint32_t));
    s->bank = malloc((size_t)n);
    s->wr = tr->write;
    s->acted = calloc((size_t)n, 1);
    s->rq = fifo_rq ? malloc((size_t)n * sizeof(int64_t)) : NULL;
    s->rq_t = fifo_rq ? malloc((size_t)n * sizeof(int64_t)) : NULL;
    s->pr = c->arbiter == DRAM_ARB_FIFO ? malloc((size_t)n * sizeof(int64_t)) : NULL;
    s->pr_ready = c->arbiter == DRAM_ARB_REORDER ? calloc((size_t)n, 1) : NULL;
    s->addr = tr->addr;
    int bufmax = c->sched_buffer == DRAM_BUF_READWRITE ? c->buffer_size_read + c->buffer_size_write : c->request_buffer_size + 1;
    s->qcap = bufmax + 2;
    s->q = malloc((size_t)s->nbanks * (size_t)s->qcap * sizeof(int32_t));
    s->cq_cap = c->max_active_transactions + 2;
    s->cq = malloc((size_t)s->cq_cap * sizeof(int64_t));
    if (!s->ts || !s->gen || !s->end || (!fifo_rq && !s->resp_ready) || !s->row || !s->bank || !s->acted ||
        (fifo_rq && (!s->rq || !s->rq_t)) || (c->arbiter == DRAM_ARB_FIFO && !s->pr) ||
        (c->arbiter == DRAM_ARB_REORDER && !s->pr_ready) || !s->q || !s->cq) {
        hw_fail(err, HW_E_LIMIT, "dram model: out of memory for %lld requests", (long long)n);
        goto fail;
    }
    /* decode addresses and convert issue times: trace clock period rounded to ps as SystemC does */
    int64_t period_ps = llround(1e6 / tr->clk_mhz), tck = ms->tck_ps;
    /* fields whose bits are contiguous and ascending decode with one shift and mask */
    int row_run = 1, bank_run = 1, bg_run = 1;
    for (int k = 1; k < am->n_row; k++) row_run &= am->row[k] == am->row[k - 1] + 1;
    for (int k = 1; k < am->n_bank; k++) bank_run &= am->bank[k] == am->bank[k - 1] + 1;
    for (int k = 1; k < am->n_bg; k++) bg_run &= am->bg[k] == am->bg[k - 1] + 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = tr->addr[i];
        unsigned bank = 0, bg = 0;
        uint32_t row = 0;
        if (bank_run && am->n_bank) bank = (unsigned)((a >> am->bank[0]) & ((1ULL << am->n_bank) - 1));
        else
            for (int k = 0; k < am->n_bank; k++) bank |= (unsigned)((a >> am->bank[k]) & 1) << k;
        if (bg_run && am->n_bg) bg = (unsigned)((a >> am->bg[0]) & ((1ULL << am->n_bg) - 1));
        else
            for (int k = 0; k < am->n_bg; k++) bg |= (unsigned)((a >> am->bg[k]) & 1) << k;
        if (row_run && am->n_row) row = (uint32_t)((a >> am->row[0]) & ((1ULL << am->n_row) - 1));
        else
            for (int k = 0; k < am->n_row; k++) row |= (uint32_t)((a >> am->row[k]) & 1) << k;
        s->bank[i] = (uint8_t)(bg * (unsigned)s->bpg + bank);
        s->row[i] = row;
        int64_t ps = (int64_t)tr->cycle[i] * period_ps;
        s->ts[i] = (ps + tck - 1) / tck;
        if (s->resp_ready) s->resp_ready[i] = INF;
        s->end[i] = -1;
        s->gen[i] = -1;
        if (s->cas_t) s->cas_t[i] = -1;
        if (tr->write[i]) res->n_write++;
        else res->n_read++;
    }
    res->n_req = n;
    /* derived timings */
    s->burst = ms->bl / ms->data_rate;
    int RL = ms->CL + ms->AL;
    s->tRDWR = RL + s->burst + 1 - ms->WL + ms->WPRE;
    s->tWRRD_S = ms->WL + s->burst + ms->WTR_S - ms->AL;
    s->tWRRD_L = ms->WL + s->burst + ms->WTR_L - ms->AL;
    s->tWRPRE = ms->WL + s->burst + ms->WR;
    s->tRDAACT = ms->AL + ms->RTP + ms->RP;
    s->tWRAACT = s->tWRPRE + ms->RP;
    /* DRAMSys v5.1: DDR3 checks same-bank ACT->ACT against tRC, DDR4 only against tRCD */
    s->act_act = (c->jedec_act_act || ms->type == DRAM_DDR3) ? ms->RC : ms->RCD;
    for (int b = 0; b < s->nbanks; b++) {
        s->bg_of[b] = (uint8_t)(b / s->bpg);
        s->cur[b] = -1;
        s->close_at[b] = INF;
    }
    for (int b = 0; b < MAXB; b++) { /* every slot: the vector scans read past nbanks */
        s->prop_cmd[b] = DRAM_NCMD;
        s->bp[b] = INF;
        s->nb[b][DRAM_NCMD] = s->ng[b][DRAM_NCMD] = INF;
    }
    s->nr[DRAM_NCMD] = INF;
    s->bank_times = dram_bank_times_best();
    s->ready_at = -1;
    s->ref_trigger = ms->REFI;
    s->ref_cmd = DRAM_NCMD;
    s->cmd_bound = 0;
    s->last_write = 0;
    s->rel_req = -1;
    s->outstanding = -1;
    s->r_next = INF;
    s->last_end_req = s->last_end_resp = -1;
    s->chan_free = 0;
    return 0;
fail:
    return -1;
}

static double pct_sorted_hist(const int64_t *hist, int64_t nh, int64_t count, double p) {
    /* linear interpolation between order statistics (numpy's default) */
    if (count <= 0) return 0;
    double pos = p * (double)(count - 1);
    int64_t lo = (int64_t)floor(pos), hi = lo + 1;
    double frac = pos - (double)lo;
    int64_t acc = 0, vlo = -1, vhi = -1;
    for (int64_t v = 0; v < nh; v++) {
        acc += hist[v];
        if (vlo < 0 && acc > lo) vlo = v;
        if (acc > hi || (hi >= count && acc >= count)) {
            vhi = v;
            break;
        }
    }
    if (vhi < 0) vhi = vlo;
    return (double)vlo + frac * (double)(vhi - vlo);
}

int dram_sim_results(sim *s, int64_t T, hw_err *err) {
    const dram_memspec *ms = s->ms;
    const dram_ctrl *c = s->c;
    dram_result *res = s->res;
    int64_t n = s->n, tck = ms->tck_ps;
    double tck_ns = tck / 1000.0;
    res->total_cycles = T;
    res->active_cycles = s->act_cycles;
    res->total_time_ns = (double)T * tck_ns;
    /* latency */
    int64_t maxlat = 0;
    double sum = 0, sumr = 0, sumw = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t l = s->end[i] - s->gen[i];
        if (l > maxlat) maxlat = l;
        sum += (double)l;
        if (s->wr[i]) sumw += (double)l;
        else sumr += (double)l;
    }
    int64_t *hist = calloc((size_t)maxlat + 1, sizeof *hist), *histr = calloc((size_t)maxlat + 1, sizeof *histr);
    if (!hist || !histr) {
        free(hist);
        free(histr);
        hw_fail(err, HW_E_LIMIT, "dram model: out of memory for the latency histogram");
        goto fail;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t l = s->end[i] - s->gen[i];
        hist[l]++;
        if (!s->wr[i]) histr[l]++;
    }
    res->avg_lat_ns = sum / (double)n * tck_ns;
    res->avg_read_lat_ns = res->n_read ? sumr / (double)res->n_read * tck_ns : 0;
    res->avg_write_lat_ns = res->n_write ? sumw / (double)res->n_write * tck_ns : 0;
    res->p99_lat_ns = pct_sorted_hist(hist, maxlat + 1, n, 0.99) * tck_ns;
    res->p99_read_lat_ns = pct_sorted_hist(histr, maxlat + 1, res->n_read, 0.99) * tck_ns;
    res->max_lat_ns = (double)maxlat * tck_ns;
    free(hist);
    free(histr);
    res->bandwidth_GBps = res->total_time_ns > 0 ? (double)n * c->req_bytes / res->total_time_ns : 0;
    /* energy */
    dram_energy_terms e;
    dram_energy_terms_of(ms, &e);
    res->energy_act_pJ = (double)res->cmd[DRAM_CMD_ACT] * e.act;
    res->energy_pre_pJ = (double)(res->cmd[DRAM_CMD_PRE] + res->n_pre_implicit + res->n_prea_banks) * e.pre;
    res->energy_rd_pJ = (double)(res->cmd[DRAM_CMD_RD] + res->cmd[DRAM_CMD_RDA]) * e.rd;
    res->energy_wr_pJ = (double)(res->cmd[DRAM_CMD_WR] + res->cmd[DRAM_CMD_WRA]) * e.wr;
    res->energy_ref_pJ = (double)res->cmd[DRAM_CMD_REF] * e.ref;
    res->energy_bg_pJ = tck_ns * ((double)s->act_cycles * e.p_bg_active_mW + (double)(T - s->act_cycles) * e.p_bg_pre_mW);
    res->energy_pJ = res->energy_act_pJ + res->energy_pre_pJ + res->energy_rd_pJ + res->energy_wr_pJ + res->energy_ref_pJ +
                     res->energy_bg_pJ;
    res->power_mW = res->total_time_ns > 0 ? res->energy_pJ / res->total_time_ns : 0;
    int64_t cas = res->row_hits + res->row_misses;
    res->row_hit_rate = cas ? (double)res->row_hits / (double)cas : 0;
    if (res->trace_gen_tck) memcpy(res->trace_gen_tck, s->gen, (size_t)n * sizeof(int64_t));
    if (res->trace_end_tck) memcpy(res->trace_end_tck, s->end, (size_t)n * sizeof(int64_t));
    return 0;
fail:
    return -1;
}

void dram_sim_free(sim *s) {
    free(s->ts);
    free(s->gen);
    free(s->end);
    free(s->resp_ready);
    free(s->row);
    free(s->bank);
    free(s->acted);
    free(s->rq);
    free(s->rq_t);
    free(s->pr);
    free(s->pr_ready);
    free(s->q);
    free(s->cq);
}
