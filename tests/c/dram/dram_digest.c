/* dram_digest.c - see dram_digest.h. */
#include "dram_digest.h"

#include <stdlib.h>
#include <string.h>

#include "dram/dram_model.h"

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

/* case i: its memspec, trace and controller */
static void make_case(int i, dram_memspec *ms, dram_trace *t, dram_ctrl *c) {
    uint64_t st = 1000003ULL * (uint64_t)(i + 1);
    hw_err err;
    dram_memspec_builtin(i % 3 == 2 ? "DDR3-1600" : "DDR4-2400", ms, &err);
    dram_ctrl_default(c);
    c->page_policy = (int)(lcg(&st) % 4);
    c->scheduler = (int)(lcg(&st) % 3);
    c->sched_buffer = (int)(lcg(&st) % 3);
    c->request_buffer_size = 1 + (int)(lcg(&st) % 16);
    c->buffer_size_read = 1 + (int)(lcg(&st) % 8);
    c->buffer_size_write = 1 + (int)(lcg(&st) % 8);
    c->resp_queue = (int)(lcg(&st) % 2);
    c->refresh = lcg(&st) % 4 != 0;
    c->refresh_max_postponed = (int)(lcg(&st) % 9);
    c->refresh_max_pulledin = (int)(lcg(&st) % 9);
    c->arbiter = (int)(lcg(&st) % 3);
    c->max_active_transactions = 1 << (lcg(&st) % 8);
    c->jedec_act_act = lcg(&st) % 2;
    double clk = 1e6 / ms->tck_ps;
    dram_trace_init(t, clk);
    if (i % 4 == 3) { /* bursts on few banks and rows, with idle gaps of up to 3 tREFI */
        uint64_t cyc = 0;
        int n = 50 + (int)(lcg(&st) % 300);
        for (int k = 0; k < n; k++) {
            cyc += lcg(&st) % 8 == 0 ? lcg(&st) % (3 * (uint64_t)ms->REFI) : lcg(&st) % 12;
            uint64_t a = (lcg(&st) % 4) << 17 | (lcg(&st) % 4) << 15 | (lcg(&st) % 2) << 13 | (lcg(&st) % 64) << 6;
            dram_trace_push(t, cyc, lcg(&st) % 3 == 0, a);
        }
        return;
    }
    dram_gen g = {(int)(lcg(&st) % 3), 500 + (int64_t)(lcg(&st) % 2500), 0.3 + (double)(lcg(&st) % 60) / 100.0, 0,
                  1ULL << (20 + lcg(&st) % 10), 1 + (int64_t)(lcg(&st) % 24), lcg(&st), 0.5, clk};
    dram_generate(&g, t);
}

uint64_t dram_digest_case(int i) {
    dram_memspec ms;
    dram_trace t;
    dram_ctrl c;
    make_case(i, &ms, &t, &c);
    dram_addrmap am;
    dram_addrmap_default(&ms, &am);
    int64_t n = t.n, cap = 4 * n + 4096;
    dram_result r;
    memset(&r, 0, sizeof r);
    r.trace_gen_tck = malloc((size_t)n * sizeof(int64_t));
    r.trace_end_tck = malloc((size_t)n * sizeof(int64_t));
    r.trace_cas_tck = malloc((size_t)n * sizeof(int64_t));
    r.cmd_log = malloc((size_t)cap * sizeof *r.cmd_log);
    r.cmd_log_cap = cap;
    hw_err err;
    uint64_t h = 0;
    if (dram_simulate(&ms, &am, &c, &t, &r, &err) == 0) {
        h = 1469598103934665603ULL;
        int64_t ints[] = {r.n_req, r.n_read, r.n_write, r.n_pre_implicit, r.n_prea_banks, r.row_hits, r.row_misses,
                          r.active_cycles, r.total_cycles, r.cmd_log_n};
        h = fnv(h, ints, sizeof ints);
        h = fnv(h, r.cmd, sizeof r.cmd);
        h = fnv(h, r.trace_gen_tck, (size_t)n * sizeof(int64_t));
        h = fnv(h, r.trace_end_tck, (size_t)n * sizeof(int64_t));
        h = fnv(h, r.trace_cas_tck, (size_t)n * sizeof(int64_t));
        for (int64_t k = 0; k < r.cmd_log_n; k++) { /* field by field: the struct has padding */
            int64_t rec[4] = {r.cmd_log[k].t, r.cmd_log[k].cmd, r.cmd_log[k].bank, r.cmd_log[k].req};
            h = fnv(h, rec, sizeof rec);
        }
    }
    free(r.trace_gen_tck);
    free(r.trace_end_tck);
    free(r.trace_cas_tck);
    free(r.cmd_log);
    dram_trace_free(&t);
    return h;
}
