/* maestro_cli.c - `hwgym maestro`: a drop-in for MAESTRO's command-line binary.
 * Accepts MAESTRO's flags (--HW_file, --Mapping_file, --print_res, --print_res_csv_file, ...),
 * evaluates every layer of the mapping file with the native model, prints the results and
 * appends MAESTRO's result CSV (same columns, same file name) so scripts written for the
 * maestro binary only need a new binary path. See docs/maestro.md. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maestro.h"

typedef struct {
    const char *name;
    int kind; /* 0 string, 1 int, 2 bool */
} opt;

enum { O_HELP, O_HW, O_MAP, O_PRES, O_PCSV, O_PLOG, O_NOCBW, O_HOPS, O_HOPLAT, O_MC, O_NPES, O_SIMD, O_L1, O_L2,
       O_OFFBW, O_PDS, O_MSGLV, O_DATAFLOW, O_LAYER, O_TOPBW, O_BWSWEEP, O_IMPRED, O_FGSYNC, O_DORED, O_FULLBUF,
       O_DODSE, O_VERBOSE, O_PSPACE, O_MINPE, O_MINBW, O_MAXPE, O_MAXBW, O_PETICK, O_BWTICK, O_AREA, O_POWER,
       O_OPTTGT, O_N };

static const opt opts[O_N] = {
    {"help", 3},           {"HW_file", 0},          {"Mapping_file", 0},      {"print_res", 2},
    {"print_res_csv_file", 2}, {"print_log_file", 2}, {"noc_bw_cstr", 1},     {"noc_hops", 1},
    {"noc_hop_latency", 1}, {"noc_mc_support", 2},  {"num_pes", 1},          {"num_simd_lanes", 1},
    {"l1_size_cstr", 1},   {"l2_size_cstr", 1},     {"offchip_bw_cstr", 1},   {"print_design_space", 2},
    {"msg_print_lv", 1},   {"dataflow_file", 0},    {"layer_file", 0},        {"top_bw_only", 2},
    {"bw_sweep", 2},       {"do_implicit_reduction", 2}, {"do_fg_sync", 2},   {"do_reduction_op", 2},
    {"full_buffer", 2},    {"do_dse", 2},           {"verbose", 2},           {"print_space", 2},
    {"min_num_PEs", 1},    {"min_noc_bw", 1},       {"max_num_PEs", 1},       {"max_noc_bw", 1},
    {"pe_tick", 1},        {"bw_tick", 1},          {"area_constraint", 4},   {"power_constraint", 4},
    {"optimization_target", 0},
};

static void usage(FILE *out) {
    fprintf(out,
            "hwgym maestro: drop-in for the MAESTRO binary (native cost model)\n"
            "General Options:\n"
            "  --help                      Display help message\n"
            "  --print_res arg             Print the eval results to screen (default true)\n"
            "  --print_res_csv_file arg    Append the results to <mapping file name>.csv (default true)\n"
            "  --print_log_file arg        Print detailed logs to log.txt (default false)\n"
            "File IO options:\n"
            "  --Mapping_file arg          the MAESTRO network/mapping (.m) file\n"
            "  --HW_file arg               the hardware description file (overrides the flags below)\n"
            "Network on chip options:\n"
            "  --noc_bw_cstr arg           NoC bandwidth (elements/cycle)\n"
            "  --noc_hops arg              average number of NoC hops (default 1)\n"
            "  --noc_hop_latency arg       latency per hop (default 0)\n"
            "  --noc_mc_support arg        multicast capability (accepted; MAESTRO ignores it too)\n"
            "  --offchip_bw_cstr arg       off-chip bandwidth (default 70000)\n"
            "Processing element options:\n"
            "  --num_pes arg               number of PEs (default 7)\n"
            "  --num_simd_lanes arg        ALUs per PE (default 1)\n"
            "Design Space Exploration options:\n"
            "  --l1_size_cstr arg          L1 size per PE (bytes); only warns, as in MAESTRO\n"
            "  --l2_size_cstr arg          L2 size (bytes); only warns, as in MAESTRO\n"
            "  --print_design_space arg    accepted for compatibility; no design space is written\n");
}

static bool parse_bool(const char *s, bool *out) {
    if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on")) return *out = true, true;
    if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off")) return *out = false, true;
    return false;
}

/* MAESTRO names the CSV after the mapping file: drop up to two leading path components, then
 * everything from the first '.' on, and add ".csv" (ConstructOutputFileName). */
static void csv_name(const char *map, char *out, size_t cap) {
    const char *p = map;
    for (int i = 0; i < 2; i++) {
        const char *s = strchr(p, '/');
        p = s ? s + 1 : p;
    }
    size_t n = strcspn(p, ".");
    snprintf(out, cap, "%.*s.csv", (int)n, p);
}

static void print_screen(FILE *out, const maestro_layer *l, const maestro_result *r) {
    static const char *const tn[MT_N] = {"input", "filter", "output"};
    fprintf(out, "\n\nNum MACs: %lld\n\n[Performance Analysis]\nRuntime: %lld cycles\nThroughput: %g MACs/cycle\n", r->num_macs,
            r->runtime, r->throughput);
    fprintf(out, "[Buffer Access Analysis]\n");
    long long l1w = 0, l1r = 0;
    for (int t = 0; t < MT_N; t++) {
        fprintf(out, "Tensor %s\nL2 size requirement: %lld\nL1 size requirement: %lld\nL2 buffer write: %lld\nL2 buffer read: %lld\n"
                     "L1 buffer write: %lld\nL1 buffer read: %lld\nData reuse factor: %g\n",
                tn[t], r->l2_req[t], r->l1_req[t], r->l2_wr[t], r->l2_rd[t], r->l1_wr[t], r->l1_rd[t],
                r->l1_wr[t] ? (double)r->l1_rd[t] / (double)r->l1_wr[t] : 0.0);
        l1w += r->l1_wr[t], l1r += r->l1_rd[t];
    }
    fprintf(out, "Overall data reuse factor: %g\n[Energy Analysis]\n-For each data class\n", l1w ? (double)l1r / (double)l1w : 0.0);
    double l2we = 0, l2re = 0, l1we = 0, l1re = 0;
    for (int t = 0; t < MT_N; t++) {
        double a = 18.61 * (double)r->l2_wr[t], b = 18.61 * (double)r->l2_rd[t], c = 1.68 * (double)r->l1_wr[t],
               d = 1.68 * (double)r->l1_rd[t];
        fprintf(out, "Tensor %s\nL2 buffer write energy: %g X MAC energy\nL2 buffer read energy: %g X MAC energy\n"
                     "L1 buffer write energy: %g X MAC energy\nL1 buffer read energy: %g X MAC energy\n",
                tn[t], a, b, c, d);
        l2we += a, l2re += b, l1we += c, l1re += d;
    }
    fprintf(out, "\n[Summary]\nTotal L2 buffer requirement: %lld\nTotal L1 buffer requirement: %lld\n", r->l2_req_total, r->l1_req_total);
    fprintf(out, "Total L2 buffer write energy: %g X MAC energy\nTotal L2 buffer read energy: %g X MAC energy\n", l2we, l2re);
    fprintf(out, "Total L1 buffer write energy: %g X MAC energy\nTotal L1 buffer read energy: %g X MAC energy\n", l1we, l1re);
    fprintf(out, "Total MAC energy: %lld X MAC energy\nPeak bandwidth requirement: %lld\nAvg bandwidth requirement: %g\n\n",
            r->num_macs, r->peak_bw, r->avg_bw);
    fprintf(out, "Total energy consumption: %g X MAC energy\nRuntime: %lld cycles\nThroughput: %g MACs/cycle\n", r->energy,
            r->runtime, r->throughput);
    fprintf(out, "Performance per MAC energy: %g MACs/cycle/(MAC_energy)\n", r->throughput / r->energy);
    static const char *const dn[3] = {"Ingress Delay", "Egress Delay", "Computation Delay"};
    for (int k = 0; k < 3; k++)
        fprintf(out, "%s\nMin: %g\nMax: %g\nAvg: %g\n", dn[k], r->delay_min[k], r->delay_max[k], r->delay_avg[k]);
    fprintf(out, "Average number of utilized PEs: %g\nArithmetic intensity: %g\n", r->avg_util_pes, r->arith_intensity);
    (void)l;
}

static void write_csv_header(FILE *f) {
    fprintf(f, "Neural Network Name, Layer Number, NumPEs, Runtime (Cycles), Activity count-based Energy (nJ), Throughput "
               "(MACs/Cycle), Throughput Per Energy (GMACs/s*J), Area, Power, NoC BW Req (Elements/cycle), Avg BW Req, Peak BW "
               "Req, Vector Width, Offchip BW Req (Elements/cycle),  L2 SRAM Size Req (Bytes), L1 SRAM Size Req (Bytes), "
               "Multicasting Factor (Weight), Multicasting Factor (Input), Num Total Input Pixels, Num Total Weight Pixels, "
               "Ops/J, Num MACs, PE power, L1 power, L2 power, NOC power, ");
    static const char *const tn[MT_N] = {"input", "filter", "output"};
    for (int t = 0; t < MT_N; t++)
        fprintf(f, "%s l1 read, %s l1 write, %s l2 read, %s l2 write, %s reuse factor,", tn[t], tn[t], tn[t], tn[t], tn[t]);
    fprintf(f, "Ingress Delay (Min), Ingress Delay (Max), Ingress Delay (Avg), Egress Delay (Min), Egress Delay (Max),  Egress "
               "Delay (Avg),Compute Delay (Min), Compute Delay (Min), Compute Delay (Avg),Avg number of utilized PEs, "
               "Arithmetic Intensity\n");
}

static void write_csv_row(FILE *f, const char *net, const maestro_layer *l, const maestro_hw *h, const maestro_result *r) {
    /* Activity-count energy in nJ: MAESTRO's CSV formula (L2 traffic of all tensors except output
     * reads, plus this layer's L1 traffic). MAESTRO itself uses the previous layer's L1 counts for
     * layers with Cluster directives; we do not reproduce that bug (docs/maestro.md). */
    double l2 = (double)(r->l2_rd[MT_IN] + r->l2_wr[MT_IN] + r->l2_rd[MT_W] + r->l2_wr[MT_W] + r->l2_wr[MT_OUT]);
    double l1 = 0;
    for (int t = 0; t < MT_N; t++) l1 += (double)(r->l1_rd[t] + r->l1_wr[t]);
    double e_nj = h->mac_energy_nj * (18.61 * l2 + 1.68 * l1);
    double perf_per_e = (double)r->num_macs / (double)r->runtime / e_nj * 1e9;
    double ops_per_j = (double)r->num_macs / e_nj * 1e9;
    long long nin = (long long)l->dim[MD_C] * l->dim[MD_Y] * l->dim[MD_X] * (l->has_n ? l->dim[MD_N] : 1);
    long long nw = (long long)(l->type == MAESTRO_DSCONV ? 1 : l->dim[MD_K]) * l->dim[MD_C] * l->dim[MD_R] * l->dim[MD_S];
    if (l->type == MAESTRO_NGCONV) nin *= l->dim[MD_G], nw *= l->dim[MD_G];
    if (l->type == MAESTRO_GEMM) nin = (long long)l->dim[MD_Y] * l->dim[MD_C], nw = (long long)l->dim[MD_C] * l->dim[MD_K];
    double mcw = r->l2_rd[MT_W] ? (double)r->l1_wr[MT_W] / (double)r->l2_rd[MT_W] : 0;
    double mci = r->l2_rd[MT_IN] ? (double)r->l1_wr[MT_IN] / (double)r->l2_rd[MT_IN] : 0;
    fprintf(f, "%s,%s,%d,%lld,%g,%g,%g,%g,%g,%lld,%g,%lld,%d,%lld,%lld,%lld,%g,%g,%lld,%lld,%g,%lld,%g,%g,%g,%g,", net, l->name,
            h->num_pes, r->runtime, e_nj, r->throughput, perf_per_e, r->area, r->power, r->peak_bw, r->avg_bw, r->peak_bw, h->simd,
            r->offchip_bw_req, r->l2_req_total, r->l1_req_total, mcw, mci, nin, nw, ops_per_j, r->num_macs, r->pe_power,
            r->l1_power, r->l2_power, r->noc_power);
    for (int t = 0; t < MT_N; t++)
        fprintf(f, "%lld, %lld, %lld, %lld, %g, ", r->l1_rd[t], r->l1_wr[t], r->l2_rd[t], r->l2_wr[t],
                r->l1_wr[t] ? (double)r->l1_rd[t] / (double)r->l1_wr[t] : 0.0);
    /* MAESTRO stores the per-iteration delays as integers */
    fprintf(f, "%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld", (long long)r->delay_min[0], (long long)r->delay_max[0],
            (long long)r->delay_avg[0], (long long)r->delay_min[1], (long long)r->delay_max[1], (long long)r->delay_avg[1],
            (long long)r->delay_min[2], (long long)r->delay_max[2], (long long)r->delay_avg[2]);
    fprintf(f, ", %g, %g\n", r->avg_util_pes, r->arith_intensity);
}

int maestro_cli_main(int argc, char **argv, FILE *out) {
    const char *val[O_N] = {0};
    bool given[O_N] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "[MAESTRO] Failed to parse program options: unexpected argument '%s'\n", a);
            return 1;
        }
        a += 2;
        const char *eq = strchr(a, '=');
        size_t klen = eq ? (size_t)(eq - a) : strlen(a);
        int hit = -1, nhit = 0;
        for (int k = 0; k < O_N; k++) {
            if (strlen(opts[k].name) == klen && strncmp(opts[k].name, a, klen) == 0) {
                hit = k, nhit = 1;
                break;
            }
            if (strncmp(opts[k].name, a, klen) == 0) hit = k, nhit++; /* unambiguous prefixes, like boost */
        }
        if (nhit != 1) {
            fprintf(stderr, "[MAESTRO] Failed to parse program options: %s option '--%.*s'\n", nhit ? "ambiguous" : "unknown",
                    (int)klen, a);
            return 1;
        }
        given[hit] = true;
        if (opts[hit].kind == 3) continue;
        if (eq) val[hit] = eq + 1;
        else if (i + 1 < argc) val[hit] = argv[++i];
        else {
            fprintf(stderr, "[MAESTRO] Failed to parse program options: --%s needs a value\n", opts[hit].name);
            return 1;
        }
    }
    if (given[O_HELP]) {
        usage(out);
        return 0;
    }
    long iv[O_N];
    bool bv[O_N];
    for (int k = 0; k < O_N; k++) {
        if (!given[k]) continue;
        if (opts[k].kind == 1) {
            char *end;
            iv[k] = strtol(val[k], &end, 10);
            if (*end || iv[k] < 0 || iv[k] > INT_MAX) {
                fprintf(stderr, "[MAESTRO] Failed to parse program options: --%s expects an integer\n", opts[k].name);
                return 1;
            }
        } else if (opts[k].kind == 2 && !parse_bool(val[k], &bv[k])) {
            fprintf(stderr, "[MAESTRO] Failed to parse program options: --%s expects true or false\n", opts[k].name);
            return 1;
        }
    }
    bool print_res = given[O_PRES] ? bv[O_PRES] : true;
    bool print_csv = given[O_PCSV] ? bv[O_PCSV] : true;
    bool print_log = given[O_PLOG] ? bv[O_PLOG] : false;
    maestro_hw h;
    maestro_hw_default(&h);
    h.num_pes = given[O_NPES] ? (int)iv[O_NPES] : 7;
    h.simd = given[O_SIMD] ? (int)iv[O_SIMD] : 1;
    h.noc_bw = given[O_NOCBW] ? (int)iv[O_NOCBW] : INT_MAX;
    h.offchip_bw = given[O_OFFBW] ? (int)iv[O_OFFBW] : 70000;
    h.l1_size = given[O_L1] ? iv[O_L1] : INT_MAX;
    h.l2_size = given[O_L2] ? iv[O_L2] : INT_MAX;
    h.noc_latency = (int)((given[O_HOPLAT] ? iv[O_HOPLAT] : 0) * (given[O_HOPS] ? iv[O_HOPS] : 1));
    hw_err err = {0};
    if (given[O_HW] && val[O_HW][0]) {
        h.noc_latency = 1; /* with a HW file the NoC latency is NoC_NumHops (default 1) */
        if (maestro_load_hw(val[O_HW], &h, &err)) {
            fprintf(stderr, "[Error] %s\n", err.msg);
            return 255;
        }
    }
    if (!given[O_MAP] || !val[O_MAP][0]) {
        fprintf(stderr, "[Error] no --Mapping_file given (the dataflow_file/layer_file interface is not supported)\n");
        return 255;
    }
    if (h.num_pes <= 0 || h.noc_bw <= 0 || h.offchip_bw <= 0 || h.simd <= 0) {
        fprintf(stderr, "[Error] num_pes, noc_bw_cstr, offchip_bw_cstr and num_simd_lanes must be positive\n");
        return 255;
    }
    maestro_net net;
    if (maestro_load_network(val[O_MAP], &net, &err)) {
        fprintf(stderr, "[Error] %s\n", err.msg);
        return 255;
    }
    maestro_result *res = calloc((size_t)(net.n ? net.n : 1), sizeof *res);
    if (!res) {
        maestro_net_free(&net);
        return 255;
    }
    int rc = 0;
    for (int i = 0; i < net.n; i++) {
        maestro_eval(&net.layers[i].layer, &h, &net.layers[i].map, &res[i]);
        if (!res[i].valid && res[i].degenerate) {
            /* MAESTRO runs these and prints zeros, negative counts or NaN: we skip the layer */
            fprintf(stderr, "[WARNING] layer %s skipped: %s\n", net.layers[i].layer.name, res[i].reason);
        } else if (!res[i].valid) {
            fprintf(stderr, "[Error] layer %s: %s\n", net.layers[i].layer.name, res[i].reason);
            rc = 255;
            goto done;
        }
    }
    long long maxl1 = 0, maxl2 = 0, peak = 0, offc = 0, tl1 = 0, tl2 = 0;
    for (int i = 0; i < net.n; i++) {
        const maestro_result *r = &res[i];
        if (!r->valid) continue;
        if (print_res) print_screen(out, &net.layers[i].layer, r);
        if (r->l1_req_total > maxl1) maxl1 = r->l1_req_total;
        if (r->l2_req_total > maxl2) maxl2 = r->l2_req_total;
        if (r->peak_bw > peak) peak = r->peak_bw;
        if (r->offchip_bw_req > offc) offc = r->offchip_bw_req;
        tl1 += r->l1_req_total, tl2 += r->l2_req_total;
    }
    if (print_res) {
        fprintf(out, "\nModel-wise total L1 size usage: %lld\nModel-wise total L2 size usage: %lld\n", tl1, tl2);
        if (maxl1 > h.l1_size) fprintf(out, "[WARNING] L1 size requirement [%lld] is larger than the given L1 size [%ld]\n", maxl1, h.l1_size);
        if (maxl2 > h.l2_size) fprintf(out, "[WARNING] L2 size requirement [%lld] is larger than the given L2 size [%ld]\n", maxl2, h.l2_size);
    }
    if (print_csv) {
        char name[4096];
        csv_name(val[O_MAP], name, sizeof name);
        bool exists = access(name, F_OK) == 0;
        FILE *f = fopen(name, "a");
        if (!f) {
            fprintf(stderr, "[Error] cannot write %s\n", name);
            rc = 255;
            goto done;
        }
        if (!exists) write_csv_header(f);
        for (int i = 0; i < net.n; i++)
            if (res[i].valid) write_csv_row(f, net.name[0] ? net.name : "Network", &net.layers[i].layer, &h, &res[i]);
        fclose(f);
    }
    if (print_log) {
        FILE *f = fopen("log.txt", "a");
        if (f) {
            for (int i = 0; i < net.n; i++) {
                if (!res[i].valid) continue;
                char text[4096];
                maestro_mapping_to_text_for(&net.layers[i].map, net.layers[i].layer.type, text, sizeof text);
                fprintf(f, "Layer %s: levels %d runtime %lld energy %g mapping %s\n", net.layers[i].layer.name, res[i].num_levels,
                        res[i].runtime, res[i].energy, text);
            }
            fclose(f);
        }
    }
    fprintf(out, "BW Analysis:\n");
    bool pass = true;
    if (peak > h.noc_bw) {
        fprintf(out, "[WARNING:BW] Per-layer NoC BW requirement [%lld] is larger than the given NoC BW [%d]\n", peak, h.noc_bw);
        pass = false;
    }
    if (offc > h.offchip_bw) {
        fprintf(out, "[WARNING:BW] Per-layer OffChip BW requirement [%lld] is larger than the given OffChip BW [%d]\n", offc, h.offchip_bw);
        pass = false;
    }
    if (pass) fprintf(out, "[PASS]\n");
done:
    free(res);
    maestro_net_free(&net);
    return rc;
}
