/* Hand-computed and behaviour checks of the dram-v0 model (issue 4 "Checks").
 * Memspec: the built-in DDR4-2400 (tCK 0.833 ns, RCD 16, CL 16, BL/2 = 4, RAS 39, RP 16,
 * RRD_S/L 4/6, FAW 26, RFC 312, REFI 9360). Address map row|bank|bankgroup|column:
 * bank group = bits 13-14, bank = bits 15-16, row = bits 17+. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dram/dram_model.h"

#define ADDR(row, bank, bg, col) (((uint64_t)(row) << 17) | ((uint64_t)(bank) << 15) | ((uint64_t)(bg) << 13) | ((uint64_t)(col) << 6))

static dram_memspec MS;
static dram_addrmap AM;

static void setup_ms(void) {
    hw_err err;
    cr_assert_eq(dram_memspec_builtin("DDR4-2400", &MS, &err), 0, "%s", err.msg);
    dram_addrmap_default(&MS, &AM);
}

typedef struct run {
    dram_result r;
    int64_t gen[64], end[64], cas[64];
    dram_cmd_rec log[20000];
} run;

/* Simulates t with the command log on; per_request: also each request's times (t->n <= 64). */
static void sim_with(const dram_ctrl *c, const dram_trace *t, run *o, bool per_request) {
    memset(o, 0, sizeof *o);
    if (per_request) {
        cr_assert(t->n <= 64);
        o->r.trace_gen_tck = o->gen;
        o->r.trace_end_tck = o->end;
        o->r.trace_cas_tck = o->cas;
    }
    o->r.cmd_log = o->log;
    o->r.cmd_log_cap = 20000;
    hw_err err;
    cr_assert_eq(dram_simulate(&MS, &AM, c, t, &o->r, &err), 0, "%s", err.msg);
}

static void sim(const dram_ctrl *c, const dram_trace *t, run *o) { sim_with(c, t, o, true); }

static int64_t first_cmd(const run *o, int cmd, int64_t req) {
    for (int64_t i = 0; i < o->r.cmd_log_n; i++)
        if (o->log[i].cmd == cmd && (req < 0 || o->log[i].req == req)) return o->log[i].t;
    return -1;
}

TestSuite(dram_model, .init = setup_ms);

Test(dram_model, memspec_and_energy_terms_match_notes) {
    cr_assert_eq(MS.RCD, 16);
    cr_assert_eq(MS.tck_ps, 833);
    cr_assert_eq(AM.bg[0], 13);
    cr_assert_eq(AM.bank[0], 15);
    cr_assert_eq(AM.row[0], 17);
    cr_assert_eq(AM.n_row, 15);
    dram_energy_terms e;
    dram_energy_terms_of(&MS, &e);
    /* hand-computed: 8 x 0.833 x [1.2 x (60.75-44) x 39 + 2.5 x 4.05 x 39] etc. */
    double act = 8 * 0.833 * (1.2 * 16.75 * 39 + 2.5 * 4.05 * 39);
    double pre = 8 * 0.833 * (1.2 * 22.5 * 16 + 2.5 * 4.05 * 16);
    cr_assert_float_eq(e.act, act, 1e-6);
    cr_assert_float_eq(e.act + e.pre, 11813.8, 0.1); /* setup.json energy_model_check */
    cr_assert_float_eq(e.act + e.pre, act + pre, 1e-6);
    cr_assert_float_eq(e.rd, 4494.2, 0.1);
    cr_assert_float_eq(e.wr, 3990.4, 0.1);
    cr_assert_float_eq(e.ref, 184630.1, 0.1);
    cr_assert_float_eq(e.p_bg_active_mW, 422.4, 1e-9);
    cr_assert_float_eq(e.p_bg_pre_mW, 367.2, 1e-9);
}

Test(dram_model, single_read_precharged_bank) {
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, ADDR(5, 1, 2, 3));
    static run o;
    sim(&c, &t, &o);
    int64_t act = first_cmd(&o, DRAM_CMD_ACT, 0);
    cr_assert_eq(act, 1); /* accepted 1 tCK after arrival (ThinkDelayFw) */
    cr_assert_eq(o.cas[0] - act, 16);
    /* data complete tRCD + tCL + BL/2 after the ACT */
    cr_assert_eq(o.r.total_cycles - act, 16 + 16 + 4);
    /* latency: + 1 tCK acceptance + 1 tCK response handshake */
    cr_assert_float_eq(o.r.avg_lat_ns, (1 + 16 + 16 + 4 + 1) * 0.833, 1e-9);
    cr_assert_eq(o.r.cmd[DRAM_CMD_ACT], 1);
    cr_assert_eq(o.r.row_misses, 1);
    /* energy: one ACT + one RD; bank open from ACT (t=1) to the end (t=37), precharged for 1 tCK */
    double bg = 0.833 * (36 * 422.4 + 1 * 367.2);
    double want = 8 * 0.833 * (1.2 * 16.75 * 39 + 2.5 * 4.05 * 39) + 8 * 1.2 * (184.5 - 44) * 4 * 0.833 + bg;
    cr_assert_float_eq(o.r.energy_pJ, want, 1e-6);
    dram_trace_free(&t);
}

Test(dram_model, row_hit_is_cl_plus_burst) {
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, ADDR(5, 1, 2, 3));
    dram_trace_push(&t, 1000, false, ADDR(5, 1, 2, 9));
    static run o;
    sim(&c, &t, &o);
    cr_assert_eq(o.r.row_hits, 1);
    cr_assert_eq(o.r.cmd[DRAM_CMD_ACT], 1);
    cr_assert_eq(o.cas[1], 1001); /* CAS in the cycle the request is accepted */
    cr_assert_eq(o.end[1] - 1 - o.cas[1], 16 + 4); /* response = CAS + CL + BL/2 (+1 handshake) */
    cr_assert_eq(o.end[1] - o.gen[1], 1 + 16 + 4 + 1);
    dram_trace_free(&t);
}

Test(dram_model, activates_respect_trrd_and_tfaw) {
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    c.arbiter = DRAM_ARB_FIFO;
    c.sched_buffer = DRAM_BUF_SHARED;
    dram_trace t;
    dram_trace_init(&t, 1200);
    /* 8 reads to 8 banks: bank groups 0,1,2,3,0,1,2,3 (bank 0 then bank 1 in each group) */
    for (int i = 0; i < 8; i++) dram_trace_push(&t, 0, false, ADDR(7, i / 4, i % 4, 0));
    static run o;
    sim(&c, &t, &o);
    int64_t at[8];
    int na = 0;
    for (int64_t i = 0; i < o.r.cmd_log_n; i++)
        if (o.log[i].cmd == DRAM_CMD_ACT) at[na++] = o.log[i].t;
    cr_assert_eq(na, 8);
    for (int i = 1; i < 8; i++) cr_assert_geq(at[i] - at[i - 1], 4, "tRRD_S between ACT %d and %d", i - 1, i);
    for (int i = 4; i < 8; i++) {
        cr_assert_geq(at[i] - at[i - 4], 26, "tFAW: ACT %d only %lld after ACT %d", i, (long long)(at[i] - at[i - 4]), i - 4);
        cr_assert_geq(at[i] - at[i - 4 + 0], 6); /* same bank group: tRRD_L */
    }
    /* the fifth ACT is held by tFAW exactly (requests arrive every 2 tCK, so tRRD_S alone would allow earlier) */
    cr_assert_eq(at[4] - at[0], 26);
    dram_trace_free(&t);
}

Test(dram_model, refresh_every_trefi_blocks_trfc) {
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_trace t;
    dram_trace_init(&t, 1200);
    /* sparse reads, one every 1000 tCK over 5 refresh intervals */
    for (int i = 0; i < 48; i++) dram_trace_push(&t, (uint64_t)i * 1000, false, ADDR(3, 0, 0, i % 64));
    static run o;
    sim(&c, &t, &o);
    int64_t ref[16];
    int nr = 0;
    for (int64_t i = 0; i < o.r.cmd_log_n; i++)
        if (o.log[i].cmd == DRAM_CMD_REF) ref[nr++] = o.log[i].t;
    cr_assert_eq(nr, 5, "%d refreshes", nr);
    for (int k = 0; k < nr; k++) {
        /* due at (k+1) tREFI, after a PREA (tRP) when a bank is open */
        cr_assert_geq(ref[k], (k + 1) * 9360);
        cr_assert_leq(ref[k], (k + 1) * 9360 + 16 + 1);
    }
    /* nothing is activated within tRFC of a refresh */
    for (int64_t i = 0; i < o.r.cmd_log_n; i++) {
        if (o.log[i].cmd != DRAM_CMD_ACT) continue;
        for (int k = 0; k < nr; k++) cr_assert(!(o.log[i].t > ref[k] && o.log[i].t < ref[k] + 312), "ACT during tRFC");
    }
    /* a request arriving just after a REF waits for tRFC */
    dram_trace t2;
    dram_trace_init(&t2, 1200);
    dram_trace_push(&t2, 9370, false, ADDR(3, 0, 0, 0));
    static run o2;
    sim(&c, &t2, &o2);
    int64_t r0 = first_cmd(&o2, DRAM_CMD_REF, -1);
    cr_assert_eq(r0, 9360);
    cr_assert_eq(first_cmd(&o2, DRAM_CMD_ACT, 0), 9360 + 312);
    dram_trace_free(&t);
    dram_trace_free(&t2);
}

static int refs_of(const run *o, int64_t *ref, int cap) {
    int nr = 0;
    for (int64_t i = 0; i < o->r.cmd_log_n && nr < cap; i++)
        if (o->log[i].cmd == DRAM_CMD_REF) ref[nr++] = o->log[i].t;
    return nr;
}

Test(dram_model, refresh_postpone_and_pullin_within_limits) {
    dram_trace busy;
    dram_trace_init(&busy, 1200);
    /* saturating stream of reads for ~6 refresh intervals */
    for (int i = 0; i < 12000; i++) dram_trace_push(&busy, (uint64_t)i, false, (uint64_t)i * 64);
    static run o;
    int64_t ref[64];
    for (int P = 0; P <= 4; P += 2) {
        dram_ctrl c;
        dram_ctrl_default(&c);
        c.refresh_max_postponed = P;
        sim_with(&c, &busy, &o, false);
        int nr = refs_of(&o, ref, 64);
        cr_assert_geq(nr, 1);
        /* under sustained load the first refresh is postponed exactly P times, then forced */
        cr_assert_geq(ref[0], (P + 1) * 9360, "P=%d first REF at %lld", P, (long long)ref[0]);
        cr_assert_leq(ref[0], (P + 1) * 9360 + 100, "P=%d first REF at %lld", P, (long long)ref[0]);
    }
    /* pull-in: an idle controller issues 1 + Pulledin refreshes back to back at the first trigger */
    dram_trace idle;
    dram_trace_init(&idle, 1200);
    dram_trace_push(&idle, 0, false, 0);
    dram_trace_push(&idle, 20000, false, 64);
    for (int P = 0; P <= 3; P++) {
        dram_ctrl c;
        dram_ctrl_default(&c);
        c.refresh_max_pulledin = P;
        sim_with(&c, &idle, &o, false);
        int nr = refs_of(&o, ref, 64);
        int early = 0;
        for (int k = 0; k < nr; k++)
            if (ref[k] < 2 * 9360) early++;
        cr_assert_eq(early, 1 + P, "pulled in %d, expected %d", early - 1, P);
        for (int k = 1; k < early; k++) cr_assert_eq(ref[k] - ref[k - 1], 312); /* tRFC apart */
    }
    dram_trace_free(&busy);
    dram_trace_free(&idle);
}

Test(dram_model, closed_precharges_after_every_access) {
    dram_gen g = {DRAM_GEN_STREAM, 2000, 2.0 / 3, 0, 1 << 20, 4, 1, 0, 1200};
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_generate(&g, &t);
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.page_policy = DRAM_PP_CLOSED;
    dram_result r;
    memset(&r, 0, sizeof r);
    hw_err err;
    cr_assert_eq(dram_simulate(&MS, &AM, &c, &t, &r, &err), 0);
    cr_assert_eq(r.cmd[DRAM_CMD_RD] + r.cmd[DRAM_CMD_WR], 0);
    cr_assert_eq(r.cmd[DRAM_CMD_RDA] + r.cmd[DRAM_CMD_WRA], 2000);
    cr_assert_eq(r.cmd[DRAM_CMD_PRE], 0);
    /* one ACT per access, plus re-activations of banks a refresh closed before their CAS */
    cr_assert_geq(r.cmd[DRAM_CMD_ACT], 2000);
    cr_assert_leq(r.cmd[DRAM_CMD_ACT], 2000 + r.cmd[DRAM_CMD_REF]);
    cr_assert_eq(r.row_hits, 0);
    dram_trace_free(&t);
}

Test(dram_model, frfcfs_serves_row_hit_before_older_miss) {
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, ADDR(5, 0, 0, 0)); /* opens row 5 */
    dram_trace_push(&t, 2, false, ADDR(9, 0, 0, 0)); /* older miss (tRAS holds the PRE) */
    dram_trace_push(&t, 3, false, ADDR(5, 0, 0, 1)); /* younger hit */
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    static run o;
    sim(&c, &t, &o);
    cr_assert_lt(o.cas[2], o.cas[1], "FR-FCFS: hit at %lld, miss at %lld", (long long)o.cas[2], (long long)o.cas[1]);
    cr_assert_eq(o.r.cmd[DRAM_CMD_ACT], 2);
    c.scheduler = DRAM_SCHED_FIFO;
    sim(&c, &t, &o);
    cr_assert_gt(o.cas[2], o.cas[1]);
    cr_assert_eq(o.r.cmd[DRAM_CMD_ACT], 3);
    dram_trace_free(&t);
}

Test(dram_model, energy_of_n_activates_matches_formula) {
    /* N reads to N different rows of one bank, Closed page: N ACT + N implicit PRE + N RD */
    const int N = 20;
    dram_trace t;
    dram_trace_init(&t, 1200);
    for (int i = 0; i < N; i++) dram_trace_push(&t, (uint64_t)i * 200, false, ADDR(i + 1, 2, 1, 0));
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    c.page_policy = DRAM_PP_CLOSED;
    static run o;
    sim(&c, &t, &o);
    cr_assert_eq(o.r.cmd[DRAM_CMD_ACT], N);
    double e_act = 8 * 0.833 * (1.2 * (60.75 - 44) * 39 + 2.5 * 4.05 * 39);
    double e_pre = 8 * 0.833 * (1.2 * (60.75 - 38.25) * (55 - 39) + 2.5 * 4.05 * (55 - 39));
    cr_assert_float_eq(o.r.energy_act_pJ, N * e_act, 1e-6);
    cr_assert_float_eq(o.r.energy_pre_pJ, N * e_pre, 1e-6);
    /* each ACT at 200 i + 1, auto-precharge at ACT + tRAS (tRAS > tRCD + tRTP): 39 open cycles
     * each, except the last, cut at the end of the run (ACT + tRCD + CL + BL/2 = ACT + 36) */
    cr_assert_eq(o.r.total_cycles, 200 * (N - 1) + 1 + 36);
    cr_assert_eq(o.r.active_cycles, 39 * (N - 1) + 36);
    double bg = 0.833 * ((39.0 * (N - 1) + 36) * 422.4 + (double)(o.r.total_cycles - 39 * (N - 1) - 36) * 367.2);
    cr_assert_float_eq(o.r.energy_bg_pJ, bg, 1e-6);
    cr_assert_float_eq(o.r.energy_pJ, N * (e_act + e_pre) + N * 4494.24 + bg, 1.0);
    dram_trace_free(&t);
}

/* ---- behaviour ---- */

static void gen(int pattern, int64_t n, int interval, uint64_t seed, dram_trace *t) {
    dram_gen g = {pattern, n, 2.0 / 3, 0, 1ULL << 30, interval, seed, 0.5, 1200};
    dram_trace_init(t, 1200);
    dram_generate(&g, t);
}

static void simr(const dram_ctrl *c, const dram_trace *t, dram_result *r) {
    memset(r, 0, sizeof *r);
    hw_err err;
    cr_assert_eq(dram_simulate(&MS, &AM, c, t, r, &err), 0, "%s", err.msg);
}

Test(dram_model, streaming_row_hits_open_vs_closed) {
    dram_trace t;
    gen(DRAM_GEN_STREAM, 10000, 4, 1, &t);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_result r;
    simr(&c, &t, &r);
    cr_assert_gt(r.row_hit_rate, 0.9, "Open: %g", r.row_hit_rate);
    c.page_policy = DRAM_PP_CLOSED;
    simr(&c, &t, &r);
    cr_assert_lt(r.row_hit_rate, 0.01, "Closed: %g", r.row_hit_rate);
    dram_trace_free(&t);
}

Test(dram_model, random_slower_than_streaming) {
    dram_trace s, r;
    gen(DRAM_GEN_STREAM, 10000, 8, 1, &s);
    gen(DRAM_GEN_RANDOM, 10000, 8, 1, &r);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_result rs, rr;
    simr(&c, &s, &rs);
    simr(&c, &r, &rr);
    cr_assert_gt(rr.avg_lat_ns, rs.avg_lat_ns * 1.2, "random %g vs stream %g", rr.avg_lat_ns, rs.avg_lat_ns);
    cr_assert_lt(rr.row_hit_rate, 0.1);
    dram_trace_free(&s);
    dram_trace_free(&r);
}

Test(dram_model, norefresh_uses_less_energy) {
    dram_trace t;
    gen(DRAM_GEN_RANDOM, 10000, 16, 3, &t);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_result a, b;
    simr(&c, &t, &a);
    c.refresh = DRAM_REF_NONE;
    simr(&c, &t, &b);
    cr_assert_gt(a.cmd[DRAM_CMD_REF], 0);
    cr_assert_eq(b.cmd[DRAM_CMD_REF], 0);
    cr_assert_lt(b.energy_pJ, a.energy_pJ);
    dram_trace_free(&t);
}

Test(dram_model, buffer_size_one_makes_frfcfs_fifo) {
    dram_trace t;
    gen(DRAM_GEN_MIXED, 5000, 2, 5, &t);
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.request_buffer_size = 1;
    dram_result a, b;
    c.scheduler = DRAM_SCHED_FRFCFS;
    simr(&c, &t, &a);
    c.scheduler = DRAM_SCHED_FIFO;
    simr(&c, &t, &b);
    cr_assert_eq(a.total_cycles, b.total_cycles);
    cr_assert_float_eq(a.avg_lat_ns, b.avg_lat_ns, 1e-12);
    cr_assert_float_eq(a.energy_pJ, b.energy_pJ, 1e-6);
    /* with a deep buffer they differ on the same trace */
    c.request_buffer_size = 8;
    simr(&c, &t, &b);
    c.scheduler = DRAM_SCHED_FRFCFS;
    simr(&c, &t, &a);
    cr_assert(a.total_cycles != b.total_cycles || a.avg_lat_ns != b.avg_lat_ns);
    dram_trace_free(&t);
}

Test(dram_model, trace_parse_roundtrip_and_errors) {
    const char *txt = "# comment\n0:\tread\t0x40\n16:\twrite\t0x1000\r\n\n32: READ 0xABC0\n";
    dram_trace t;
    dram_trace_init(&t, 1200);
    hw_err err;
    cr_assert_eq(dram_trace_parse(txt, strlen(txt), &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.cycle[1], 16);
    cr_assert_eq(t.write[1], 1);
    cr_assert_eq(t.addr[2], 0xABC0);
    dram_trace_free(&t);
    dram_trace_init(&t, 1200);
    const char *bad = "0:\tread\t0x40\n5:\tfetch\t0x80\n";
    cr_assert_eq(dram_trace_parse(bad, strlen(bad), &t, &err), -1);
    cr_assert(strstr(err.msg, "line 2"), "%s", err.msg);
    dram_trace_free(&t);
}

Test(dram_model, generators_deterministic_for_seed) {
    dram_trace a, b, c;
    gen(DRAM_GEN_RANDOM, 1000, 4, 9, &a);
    gen(DRAM_GEN_RANDOM, 1000, 4, 9, &b);
    gen(DRAM_GEN_RANDOM, 1000, 4, 10, &c);
    cr_assert_eq(memcmp(a.addr, b.addr, 1000 * sizeof(uint64_t)), 0);
    cr_assert_eq(memcmp(a.write, b.write, 1000), 0);
    cr_assert_neq(memcmp(a.addr, c.addr, 1000 * sizeof(uint64_t)), 0);
    int reads = 0;
    for (int i = 0; i < 1000; i++) {
        reads += !a.write[i];
        cr_assert_eq(a.addr[i] % 64, 0);
        cr_assert_lt(a.addr[i], 1ULL << 30);
        cr_assert_eq(a.cycle[i], (uint64_t)i * 4);
    }
    cr_assert(reads > 600 && reads < 730, "reads %d", reads);
    dram_trace_free(&a);
    dram_trace_free(&b);
    dram_trace_free(&c);
}

Test(dram_model, ddr3_memspec_runs) {
    dram_memspec ms;
    hw_err err;
    cr_assert_eq(dram_memspec_builtin("DDR3-1600", &ms, &err), 0, "%s", err.msg);
    cr_assert_eq(ms.bank_groups, 1);
    cr_assert_eq(ms.CCD_L, ms.CCD_S);
    dram_addrmap am;
    dram_addrmap_default(&ms, &am);
    cr_assert_eq(am.bank[0], 13);
    cr_assert_eq(am.row[0], 16);
    dram_trace t;
    gen(DRAM_GEN_STREAM, 2000, 4, 1, &t);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_result r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(dram_simulate(&ms, &am, &c, &t, &r, &err), 0, "%s", err.msg);
    cr_assert_gt(r.energy_pJ, 0);
    cr_assert_gt(r.row_hit_rate, 0.9);
    dram_trace_free(&t);
}

Test(dram_model, same_bank_act_to_act_quirk_and_jedec) {
    /* Closed page, reads to two rows of one bank: DRAMSys v5.1's DDR4 checker lets the second ACT
     * follow at max(tRCD (its ACT->ACT), RDA + tRTP + tRP) = 16 + 12 + 16 = 44 tCK; JEDEC needs tRC = 55. */
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, ADDR(1, 0, 0, 0));
    dram_trace_push(&t, 1, false, ADDR(2, 0, 0, 0));
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.refresh = DRAM_REF_NONE;
    c.page_policy = DRAM_PP_CLOSED;
    static run o;
    sim(&c, &t, &o);
    int64_t a0 = first_cmd(&o, DRAM_CMD_ACT, 0), a1 = first_cmd(&o, DRAM_CMD_ACT, 1);
    cr_assert_eq(a1 - a0, 44);
    c.jedec_act_act = true;
    sim(&c, &t, &o);
    a0 = first_cmd(&o, DRAM_CMD_ACT, 0);
    a1 = first_cmd(&o, DRAM_CMD_ACT, 1);
    cr_assert_eq(a1 - a0, 55);
    dram_trace_free(&t);
}

Test(dram_model, ctrl_json_roundtrip) {
    dram_ctrl c;
    dram_ctrl_default(&c);
    json_t *o = json_loads("{\"PagePolicy\":\"closedadaptive\",\"Arbiter\":\"Reorder\",\"MaxActiveTransactions\":32,"
                           "\"RefreshMaxPulledin\":3}", 0, NULL);
    hw_err err;
    cr_assert_eq(dram_ctrl_apply_json(o, &c, &err), 0, "%s", err.msg);
    json_decref(o);
    cr_assert_eq(c.page_policy, DRAM_PP_CLOSEDADAPTIVE);
    cr_assert_eq(c.arbiter, DRAM_ARB_REORDER);
    cr_assert_eq(c.max_active_transactions, 32);
    cr_assert_eq(c.refresh_max_pulledin, 3);
    cr_assert_eq(c.scheduler, DRAM_SCHED_FRFCFS); /* untouched default */
    o = json_loads("{\"RespQueue\":\"Lifo\"}", 0, NULL);
    cr_assert_eq(dram_ctrl_apply_json(o, &c, &err), -1);
    cr_assert(strstr(err.msg, "point.RespQueue") && strstr(err.msg, "Reorder"), "%s", err.msg);
    json_decref(o);
}

static uint32_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

Test(dram_model, random_configurations_complete_with_consistent_counts) {
    /* every controller configuration (incl. ArchGym's wider ranges and DRAMSys's 0 refresh
     * credits) on random traces of both memspecs: no deadlock, every request served exactly once */
    dram_memspec ms[2];
    hw_err err;
    cr_assert_eq(dram_memspec_builtin("DDR3-1600", &ms[1], &err), 0);
    ms[0] = MS;
    uint64_t st = 12345;
    for (int it = 0; it < 300; it++) {
        int m = lcg(&st) % 2;
        dram_addrmap am;
        dram_addrmap_default(&ms[m], &am);
        dram_gen g = {(int)(lcg(&st) % 3), 300 + lcg(&st) % 1500, (lcg(&st) % 11) / 10.0, 0,
                      (lcg(&st) % 2) ? (1ULL << 30) : (1ULL << (12 + lcg(&st) % 18)), lcg(&st) % 20, lcg(&st),
                      (lcg(&st) % 10) / 10.0, 1e6 / ms[m].tck_ps};
        dram_trace t;
        dram_trace_init(&t, g.clk_mhz);
        dram_generate(&g, &t);
        dram_ctrl c;
        dram_ctrl_default(&c);
        c.page_policy = lcg(&st) % 4;
        c.scheduler = lcg(&st) % 3;
        c.sched_buffer = lcg(&st) % 3;
        c.request_buffer_size = 1 + lcg(&st) % ((lcg(&st) % 2) ? 8 : 128);
        c.resp_queue = lcg(&st) % 2;
        c.refresh = lcg(&st) % 2;
        c.refresh_max_postponed = lcg(&st) % 9;
        c.refresh_max_pulledin = lcg(&st) % 9;
        c.arbiter = lcg(&st) % 3;
        c.max_active_transactions = 1 << (lcg(&st) % 8);
        c.jedec_act_act = lcg(&st) % 2;
        dram_result r;
        memset(&r, 0, sizeof r);
        cr_assert_eq(dram_simulate(&ms[m], &am, &c, &t, &r, &err), 0, "run %d: %s", it, err.msg);
        int64_t cas = r.cmd[DRAM_CMD_RD] + r.cmd[DRAM_CMD_RDA] + r.cmd[DRAM_CMD_WR] + r.cmd[DRAM_CMD_WRA];
        cr_assert_eq(cas, t.n, "run %d", it);
        cr_assert_eq(r.row_hits + r.row_misses, t.n);
        cr_assert_geq(r.cmd[DRAM_CMD_ACT], r.row_misses);
        double lmin = (1 + (ms[m].WL < ms[m].CL ? ms[m].WL : ms[m].CL) + ms[m].bl / 2) * ms[m].tck_ps / 1000.0;
        cr_assert_geq(r.avg_lat_ns, lmin - 1e-9, "run %d", it);
        cr_assert_gt(r.energy_pJ, 0);
        if (c.refresh == DRAM_REF_NONE) cr_assert_eq(r.cmd[DRAM_CMD_REF], 0);
        if (c.page_policy == DRAM_PP_CLOSED) cr_assert_eq(r.cmd[DRAM_CMD_RD] + r.cmd[DRAM_CMD_WR], 0);
        if (c.page_policy == DRAM_PP_OPEN) cr_assert_eq(r.cmd[DRAM_CMD_RDA] + r.cmd[DRAM_CMD_WRA], 0);
        dram_trace_free(&t);
    }
}
