/* cmd_dram.c - `hwgym dram sim|gen|memspecs`: the dram-v0 model without the env (docs/dram.md).
 * The hwgym dispatcher calls hwcli_dram() with argv[0] == "dram". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dram/dram_model.h"

int hwcli_dram(int argc, char **argv);

static const char *usage =
    "usage: hwgym dram sim [--memspec NAME|JSON|@file] [--addrmap JSON|@file] [--controller JSON|@file]\n"
    "                      [--trace FILE.stl [--trace-clk MHZ]] [--jedec]\n"
    "                      [--pattern stream|random|mixed|archgym-stream|archgym-random --count N\n"
    "                       --interval TCK --read-ratio R\n"
    "                       --span BYTES --seed S --stream-frac F]\n"
    "       hwgym dram gen [--pattern ... as above] [--out FILE.stl]\n"
    "       hwgym dram memspecs\n"
    "sim simulates one controller configuration on a trace file or a generated trace and prints\n"
    "every output as one JSON object (times in ns, energy in pJ, power in mW). --controller takes\n"
    "named parameters, e.g. {\"PagePolicy\":\"Closed\",\"Scheduler\":\"FrFcfsGrp\",\"RequestBufferSize\":4},\n"
    "or a DRAMSys mcconfig file as DRAMSys writes it ({\"mcconfig\": {...}}, CmdMux etc. at the values\n"
    "the model reproduces); absent ones keep DRAMSys's defaults. Memspecs: DDR4-2400 (default), DDR3-1600, or a DRAMSys\n"
    "memspec JSON. gen writes a trace in DRAMSys's .stl format (stdout without --out).\n"
    "archgym-stream / archgym-random are ArchGym DRAM-Gym style traces: all reads, one per cycle\n"
    "(--read-ratio 1 --interval 1 unless given).\n";

typedef struct gen_args {
    const char *pattern, *count, *interval, *rr, *span, *seed, *sf, *clk;
} gen_args;

static int build_gen(const gen_args *a, double clk_default, dram_gen *g, hw_err *err) {
    long long count = 10000, itv = 16, seed = 1;
    /* archgym-stream / archgym-random: ArchGym DRAM-Gym style, all reads, one per cycle */
    bool ag = a->pattern && !strncmp(a->pattern, "archgym-", 8);
    if (ag) itv = 1;
    if (a->count && hwcli_int_arg(a->count, "--count", 1, 100000000, &count, err)) return -1;
    if (a->interval && hwcli_int_arg(a->interval, "--interval", 0, 1000000000, &itv, err)) return -1;
    if (a->seed && hwcli_int_arg(a->seed, "--seed", 0, (long long)(~0ULL >> 1), &seed, err)) return -1;
    double rr = a->rr ? atof(a->rr) : ag ? 1.0 : 2.0 / 3.0, span = a->span ? atof(a->span) : 1073741824.0, sf = a->sf ? atof(a->sf) : 0.5,
           clk = a->clk ? atof(a->clk) : clk_default;
    if (!(rr >= 0 && rr <= 1)) return hw_fail(err, HW_E_BAD_CONFIG, "--read-ratio: expected a number in [0, 1]");
    if (!(span >= 64)) return hw_fail(err, HW_E_BAD_CONFIG, "--span: expected bytes >= 64");
    if (!(sf >= 0 && sf <= 1)) return hw_fail(err, HW_E_BAD_CONFIG, "--stream-frac: expected a number in [0, 1]");
    if (!(clk > 0)) return hw_fail(err, HW_E_BAD_CONFIG, "--trace-clk: expected MHz > 0");
    int pat = DRAM_GEN_STREAM;
    if (a->pattern) {
        const char *pn = ag ? a->pattern + 8 : a->pattern;
        if (!strcmp(pn, "stream")) pat = DRAM_GEN_STREAM;
        else if (!strcmp(pn, "random")) pat = DRAM_GEN_RANDOM;
        else if (!strcmp(pn, "mixed") && !ag) pat = DRAM_GEN_MIXED;
        else
            return hw_fail(err, HW_E_BAD_CONFIG, "--pattern: '%s' (stream, random, mixed, archgym-stream, archgym-random)",
                           a->pattern);
    }
    *g = (dram_gen){pat, count, rr, 0, (uint64_t)span, itv, (uint64_t)seed, sf, clk};
    return 0;
}

static int load_memspec(const char *arg, dram_memspec *ms, hw_err *err) {
    if (!arg) return dram_memspec_builtin("DDR4-2400", ms, err);
    if (dram_builtin_memspec_json(arg)) return dram_memspec_builtin(arg, ms, err);
    json_t *j;
    if (hwcli_json_arg(arg, "--memspec", &j, err)) return -1;
    int rc = dram_memspec_from_json(j, ms, err);
    json_decref(j);
    if (rc) hw_err_prefix(err, "--memspec");
    return rc;
}

int hwcli_dram(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "memspecs")) {
        json_t *out = json_array();
        for (int i = 0; dram_builtin_memspec_names[i]; i++) {
            dram_memspec ms;
            hw_err err;
            if (dram_memspec_builtin(dram_builtin_memspec_names[i], &ms, &err)) continue;
            json_array_append_new(out, json_pack("{sssssisisisf}", "name", dram_builtin_memspec_names[i], "id", ms.id, "banks",
                                                 ms.banks, "bank_groups", ms.bank_groups, "rows", ms.rows, "tCK_ns",
                                                 ms.tck_ps / 1000.0));
        }
        hwcli_print_json(out);
        json_decref(out);
        return 0;
    }
    if (strcmp(sub, "sim") && strcmp(sub, "gen")) return hwcli_fail("dram", 2, "unknown subcommand '%s' (sim, gen, memspecs)", sub);
    bool is_sim = !strcmp(sub, "sim");
    const char *msarg = NULL, *amarg = NULL, *ctlarg = NULL, *trace = NULL, *out = NULL;
    bool jedec = false;
    gen_args ga = {0};
    hwcli_opt opts[] = {{"--memspec", &msarg, NULL},       {"--addrmap", &amarg, NULL},     {"--controller", &ctlarg, NULL},
                        {"--trace", &trace, NULL},         {"--trace-clk", &ga.clk, NULL},  {"--jedec", NULL, &jedec},
                        {"--pattern", &ga.pattern, NULL},  {"--count", &ga.count, NULL},    {"--interval", &ga.interval, NULL},
                        {"--read-ratio", &ga.rr, NULL},    {"--span", &ga.span, NULL},      {"--seed", &ga.seed, NULL},
                        {"--stream-frac", &ga.sf, NULL},   {"--out", &out, NULL},           {NULL, NULL, NULL}};
    char *av[argc > 1 ? argc - 1 : 1];
    av[0] = is_sim ? "dram sim" : "dram gen";
    for (int i = 2; i < argc; i++) av[i - 1] = argv[i];
    int rc = hwcli_parse(argc - 1, av, opts, NULL, 0, 0, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    hw_err err;
    dram_memspec ms;
    if (load_memspec(msarg, &ms, &err)) return hwcli_fail("dram", 2, "%s", err.msg);
    dram_trace t;
    double clk = ga.clk ? atof(ga.clk) : 1e6 / ms.tck_ps;
    dram_trace_init(&t, clk);
    if (trace) {
        if (!is_sim) return hwcli_fail("dram", 2, "--trace: only for sim");
        if (dram_trace_load(trace, &t, &err)) return hwcli_fail("dram", 2, "--trace: %s", err.msg);
    } else {
        dram_gen g;
        if (build_gen(&ga, clk, &g, &err)) return hwcli_fail("dram", 2, "%s", err.msg);
        dram_generate(&g, &t);
    }
    if (!is_sim) {
        if (out) {
            rc = dram_trace_save(out, &t);
            dram_trace_free(&t);
            return rc ? hwcli_fail("dram", 1, "--out: cannot write %s", out) : 0;
        }
        for (int64_t i = 0; i < t.n; i++)
            printf("%llu:\t%s\t0x%llx\n", (unsigned long long)t.cycle[i], t.write[i] ? "write" : "read", (unsigned long long)t.addr[i]);
        dram_trace_free(&t);
        return 0;
    }
    dram_addrmap am;
    dram_addrmap_default(&ms, &am);
    if (amarg) {
        json_t *j;
        if (hwcli_json_arg(amarg, "--addrmap", &j, &err)) {
            dram_trace_free(&t);
            return hwcli_fail("dram", 2, "%s", err.msg);
        }
        rc = dram_addrmap_from_json(j, &ms, &am, &err);
        json_decref(j);
        if (rc) {
            dram_trace_free(&t);
            return hwcli_fail("dram", 2, "--addrmap: %s", err.msg);
        }
    }
    dram_ctrl c;
    dram_ctrl_default(&c);
    c.jedec_act_act = jedec;
    c.req_bytes = ms.bl * ms.width * ms.devices / 8;
    if (ctlarg) {
        json_t *j;
        if (hwcli_json_arg(ctlarg, "--controller", &j, &err)) {
            dram_trace_free(&t);
            return hwcli_fail("dram", 2, "%s", err.msg);
        }
        rc = dram_ctrl_apply_mcconfig(j, &c, &err);
        json_decref(j);
        if (rc) {
            dram_trace_free(&t);
            return hwcli_fail("dram", 2, "--controller: %s", err.msg);
        }
    }
    dram_result r;
    memset(&r, 0, sizeof r);
    rc = dram_simulate(&ms, &am, &c, &t, &r, &err);
    dram_trace_free(&t);
    if (rc) return hwcli_fail("dram", 1, "%s", err.msg);
    json_t *o = json_object();
    json_object_set_new(o, "memspec", json_string(ms.id));
    dram_result_json(&c, &r, o);
    hwcli_print_json(o);
    json_decref(o);
    return 0;
}
