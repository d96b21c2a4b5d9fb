/* Hostile-input edge cases of the dram-v0 model (issue 11, item 6): trace cycles past the
 * model's 64-bit picosecond clock are rejected with their line number, and idle gaps are
 * skipped in closed form with results identical to stepping through them. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dram/dram_model.h"

#define ADDR(row, bank, bg, col) (((uint64_t)(row) << 17) | ((uint64_t)(bank) << 15) | ((uint64_t)(bg) << 13) | ((uint64_t)(col) << 6))

Test(dram_edges, huge_cycle_rejected_with_line_number) {
    dram_trace t;
    dram_trace_init(&t, 1200);
    hw_err err = {0};
    /* 1.2e16 cycles x 833 ps overflows int64 ps: it used to wrap to "issued at time 0" */
    const char *s = "0: read 0x0\n# comment\n12000000000000000: read 0x40\n";
    cr_assert_neq(dram_trace_parse(s, strlen(s), &t, &err), 0);
    cr_assert(strstr(err.msg, "line 3") && strstr(err.msg, "12000000000000000") && strstr(err.msg, "longest trace"), "%s",
              err.msg);
    dram_trace_free(&t);
    /* digits beyond uint64 as well */
    dram_trace_init(&t, 1200);
    const char *s2 = "99999999999999999999999999: write 0x0\n";
    cr_assert_neq(dram_trace_parse(s2, strlen(s2), &t, &err), 0);
    cr_assert(strstr(err.msg, "line 1"), "%s", err.msg);
    dram_trace_free(&t);
    /* the limit itself is accepted, one more is not */
    uint64_t maxc = dram_trace_max_cycle(1200);
    cr_assert_gt(maxc, (uint64_t)10000000000000000ULL, "1e16 cycles at 1200 MHz must fit (%" PRIu64 ")", maxc);
    char buf[128];
    snprintf(buf, sizeof buf, "%" PRIu64 ": read 0x0\n", maxc);
    dram_trace_init(&t, 1200);
    cr_assert_eq(dram_trace_parse(buf, strlen(buf), &t, &err), 0, "%s", err.msg);
    dram_trace_free(&t);
    snprintf(buf, sizeof buf, "%" PRIu64 ": read 0x0\n", maxc + 1);
    dram_trace_init(&t, 1200);
    cr_assert_neq(dram_trace_parse(buf, strlen(buf), &t, &err), 0);
    dram_trace_free(&t);
    /* a trace built in memory past the limit is refused by the simulator, not wrapped */
    dram_memspec ms;
    dram_addrmap am;
    cr_assert_eq(dram_memspec_builtin("DDR4-2400", &ms, &err), 0);
    dram_addrmap_default(&ms, &am);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, 0);
    dram_trace_push(&t, maxc + 5, false, 64);
    dram_result r;
    memset(&r, 0, sizeof r);
    cr_assert_neq(dram_simulate(&ms, &am, &c, &t, &r, &err), 0);
    cr_assert(strstr(err.msg, "request 1"), "%s", err.msg);
    dram_trace_free(&t);
}

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

typedef struct out {
    dram_result r;
    int64_t gen[64], end[64], cas[64];
    dram_cmd_rec log[4096];
} out;

static void run(const dram_memspec *ms, const dram_addrmap *am, const dram_ctrl *c, const dram_trace *t, int skip, out *o) {
    memset(o, 0, sizeof *o);
    o->r.trace_gen_tck = o->gen;
    o->r.trace_end_tck = o->end;
    o->r.trace_cas_tck = o->cas;
    o->r.cmd_log = o->log;
    o->r.cmd_log_cap = 4096;
    hw_err err;
    dram_sim_idle_skip = skip;
    int rc = dram_simulate(ms, am, c, t, &o->r, &err);
    dram_sim_idle_skip = 1;
    cr_assert_eq(rc, 0, "%s", err.msg);
}

/* every controller configuration, traces with bursts separated by idle gaps of up to ~60 tREFI:
 * closed-form skipping gives exactly what stepping gives (every output field and command) */
Test(dram_edges, idle_skip_identical_to_stepping, .timeout = 120) {
    dram_memspec ms[2];
    hw_err err;
    cr_assert_eq(dram_memspec_builtin("DDR4-2400", &ms[0], &err), 0);
    cr_assert_eq(dram_memspec_builtin("DDR3-1600", &ms[1], &err), 0);
    uint64_t st = 777;
    static out a, b;
    int skipped_any = 0;
    for (int it = 0; it < 120; it++) {
        int m = (int)(lcg(&st) % 2);
        dram_addrmap am;
        dram_addrmap_default(&ms[m], &am);
        dram_trace t;
        dram_trace_init(&t, 1e6 / ms[m].tck_ps);
        uint64_t cyc = lcg(&st) % 20000;
        int n = 8 + (int)(lcg(&st) % 50);
        for (int i = 0; i < n; i++) {
            cyc += lcg(&st) % 4 == 0 ? lcg(&st) % (60 * (uint64_t)ms[m].REFI) : lcg(&st) % 20;
            dram_trace_push(&t, cyc, lcg(&st) % 3 == 0, ADDR(lcg(&st) % 8, lcg(&st) % 4, lcg(&st) % 2, lcg(&st) % 64));
        }
        dram_ctrl c;
        dram_ctrl_default(&c);
        c.page_policy = (int)(lcg(&st) % 4);
        c.scheduler = (int)(lcg(&st) % 3);
        c.sched_buffer = (int)(lcg(&st) % 3);
        c.request_buffer_size = 1 + (int)(lcg(&st) % 16);
        c.resp_queue = (int)(lcg(&st) % 2);
        c.refresh = lcg(&st) % 5 != 0; /* mostly AllBank */
        c.refresh_max_postponed = (int)(lcg(&st) % 9);
        c.refresh_max_pulledin = (int)(lcg(&st) % 9);
        c.arbiter = (int)(lcg(&st) % 3);
        c.max_active_transactions = 1 << (lcg(&st) % 8);
        run(&ms[m], &am, &c, &t, 1, &a);
        run(&ms[m], &am, &c, &t, 0, &b);
        cr_assert_eq(a.r.cmd_log_n, b.r.cmd_log_n, "run %d: %lld vs %lld commands", it, (long long)a.r.cmd_log_n,
                     (long long)b.r.cmd_log_n);
        for (int64_t i = 0; i < a.r.cmd_log_n; i++)
            cr_assert(a.log[i].t == b.log[i].t && a.log[i].cmd == b.log[i].cmd && a.log[i].bank == b.log[i].bank &&
                          a.log[i].req == b.log[i].req,
                      "run %d: command %lld differs (%s at %lld vs %s at %lld)", it, (long long)i, dram_cmd_names[a.log[i].cmd],
                      (long long)a.log[i].t, dram_cmd_names[b.log[i].cmd], (long long)b.log[i].t);
        for (int k = 0; k < DRAM_NCMD; k++) cr_assert_eq(a.r.cmd[k], b.r.cmd[k], "run %d: %s count", it, dram_cmd_names[k]);
        cr_assert(a.r.total_time_ns == b.r.total_time_ns && a.r.energy_pJ == b.r.energy_pJ && a.r.avg_lat_ns == b.r.avg_lat_ns &&
                      a.r.energy_bg_pJ == b.r.energy_bg_pJ && a.r.p99_lat_ns == b.r.p99_lat_ns &&
                      a.r.power_mW == b.r.power_mW && a.r.active_cycles == b.r.active_cycles,
                  "run %d: outputs differ", it);
        cr_assert_eq(memcmp(a.gen, b.gen, sizeof a.gen), 0, "run %d", it);
        cr_assert_eq(memcmp(a.end, b.end, sizeof a.end), 0, "run %d", it);
        cr_assert_eq(memcmp(a.cas, b.cas, sizeof a.cas), 0, "run %d", it);
        skipped_any |= a.r.cmd[DRAM_CMD_REF] > 10;
        dram_trace_free(&t);
    }
    cr_assert(skipped_any, "no run had a gap long enough to skip");
}

/* a 1e16-cycle gap (about 96 days of idle DRAM at 1200 MHz) is simulated, not stepped: the
 * refresh count is the closed form of one REF per tREFI */
Test(dram_edges, gap_of_1e16_cycles, .timeout = 30) {
    dram_memspec ms;
    dram_addrmap am;
    hw_err err;
    cr_assert_eq(dram_memspec_builtin("DDR4-2400", &ms, &err), 0);
    dram_addrmap_default(&ms, &am);
    dram_ctrl c;
    dram_ctrl_default(&c);
    dram_trace t;
    dram_trace_init(&t, 1200);
    dram_trace_push(&t, 0, false, ADDR(1, 0, 0, 0));
    dram_trace_push(&t, 10000000000000000ULL, false, ADDR(2, 0, 0, 0));
    dram_result r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(dram_simulate(&ms, &am, &c, &t, &r, &err), 0, "%s", err.msg);
    /* the second request issues at 1e16 x 833 ps / 833 ps per tCK = 1e16 tCK */
    double t2 = 1e16 * 0.833;
    cr_assert(r.total_time_ns > t2 && r.total_time_ns < t2 + 1000, "total %g ns", r.total_time_ns);
    int64_t refs = (int64_t)(10000000000000000LL / ms.REFI);
    cr_assert(r.cmd[DRAM_CMD_REF] >= refs - 2 && r.cmd[DRAM_CMD_REF] <= refs + 2, "%lld REF, expected about %lld",
              (long long)r.cmd[DRAM_CMD_REF], (long long)refs);
    dram_trace_free(&t);
}

/* `hwgym dram sim --controller` takes DRAMSys's mcconfig file as DRAMSys writes it */
Test(dram_edges, dramsys_mcconfig_accepted) {
    const char *file = "{\"mcconfig\":{\"PagePolicy\":\"Closed\",\"Scheduler\":\"FrFcfsGrp\",\"SchedulerBuffer\":\"ReadWrite\","
                       "\"RequestBufferSize\":8,\"RequestBufferSizeRead\":4,\"RequestBufferSizeWrite\":6,\"CmdMux\":\"Oldest\","
                       "\"RespQueue\":\"Reorder\",\"RefreshPolicy\":\"AllBank\",\"RefreshMaxPostponed\":2,"
                       "\"RefreshMaxPulledin\":3,\"PowerDownPolicy\":\"NoPowerDown\",\"Arbiter\":\"Fifo\","
                       "\"MaxActiveTransactions\":64,\"RefreshManagement\":false,\"ThinkDelayFw\":1,\"PowerDownTimeout\":3}}";
    json_t *j = json_loads(file, 0, NULL);
    cr_assert(j);
    dram_ctrl c, d;
    dram_ctrl_default(&c);
    hw_err err = {0};
    cr_assert_eq(dram_ctrl_apply_mcconfig(j, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.page_policy, DRAM_PP_CLOSED);
    cr_assert_str_eq(dram_sched_names[c.scheduler], "FrFcfsGrp");
    cr_assert_eq(c.buffer_size_read, 4);
    cr_assert_eq(c.buffer_size_write, 6);
    cr_assert_eq(c.refresh_max_pulledin, 3);
    cr_assert_eq(c.max_active_transactions, 64);
    /* the inner object alone is the same */
    dram_ctrl_default(&d);
    cr_assert_eq(dram_ctrl_apply_mcconfig(json_object_get(j, "mcconfig"), &d, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(&c, &d, sizeof c), 0);
    json_decref(j);
    /* values the model does not reproduce are refused, naming the key */
    const char *bad[][2] = {{"{\"mcconfig\":{\"CmdMux\":\"Strict\"}}", "mcconfig.CmdMux"},
                            {"{\"mcconfig\":{\"PowerDownPolicy\":\"Staggered\"}}", "mcconfig.PowerDownPolicy"},
                            {"{\"mcconfig\":{\"ArbitrationDelayFw\":3}}", "mcconfig.ArbitrationDelayFw"},
                            {"{\"mcconfig\":{\"Bogus\":1}}", "mcconfig.Bogus"},
                            {"{\"mcconfig\":{\"Scheduler\":\"Nope\"}}", "mcconfig.Scheduler"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *b = json_loads(bad[i][0], 0, NULL);
        dram_ctrl_default(&c);
        cr_assert_neq(dram_ctrl_apply_mcconfig(b, &c, &err), 0, "%s accepted", bad[i][0]);
        cr_assert(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
        json_decref(b);
    }
}
