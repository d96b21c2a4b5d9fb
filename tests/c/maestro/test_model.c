/* Hand-computed checks of the native MAESTRO cost model and its parsers. */
#include <criterion/criterion.h>
#include <string.h>

#include "maestro/maestro.h"

static maestro_layer conv(int K, int C, int R, int S, int Y, int X, int stride) {
    maestro_layer l;
    maestro_layer_init(&l, MAESTRO_CONV, "t");
    l.dim[MD_K] = K, l.dim[MD_C] = C, l.dim[MD_R] = R, l.dim[MD_S] = S, l.dim[MD_Y] = Y, l.dim[MD_X] = X;
    l.stride_x = l.stride_y = stride;
    maestro_layer_finish(&l);
    return l;
}

static maestro_hw hw(int pes, int bw) {
    maestro_hw h;
    maestro_hw_default(&h);
    h.num_pes = pes;
    h.noc_bw = bw;
    h.offchip_bw = 1 << 20; /* keep off-chip out of the way unless a test wants it */
    h.l1_size = 1 << 20;
    h.l2_size = 1 << 30;
    return h;
}

static maestro_result run(const maestro_layer *l, const maestro_hw *h, const char *dirs) {
    maestro_mapping m;
    hw_err err = {0};
    cr_assert_eq(maestro_parse_directives(dirs, l, &m, &err), 0, "parse: %s", err.msg);
    maestro_result r;
    maestro_eval(l, h, &m, &r);
    cr_assert(r.valid, "rejected: %s", r.reason);
    return r;
}

static long long macs(const maestro_layer *l) {
    return (long long)l->dim[MD_K] * l->dim[MD_C] * l->dim[MD_R] * l->dim[MD_S] * l->dim[MD_YP] * l->dim[MD_XP];
}

/* 1 PE: every MAC is a cycle of compute; total compute delay == MAC count. */
Test(maestro_model, one_pe_compute_equals_macs) {
    maestro_layer l = conv(4, 3, 3, 3, 6, 6, 1);
    maestro_hw h = hw(1, 1 << 16);
    maestro_result r = run(&l, &h,
                           "TemporalMap(1,1) K; TemporalMap(1,1) C; SpatialMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; "
                           "TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;");
    cr_assert_eq(r.num_macs, macs(&l)); /* 4*3*9*16 = 1728 */
    cr_assert_eq(r.num_macs, 1728);
    cr_assert_eq(r.compute_cycles, 1728);
    /* with a very wide NoC, runtime is compute plus the first (Init) ingress only */
    cr_assert_geq(r.runtime, 1728);
    cr_assert_leq(r.runtime, 1728 + 16);
    cr_assert_float_eq(r.avg_util_pes, 1.0, 1e-9);
}

/* Halving the NoC bandwidth of a communication-bound mapping doubles its NoC delay. */
Test(maestro_model, half_bw_doubles_comm_delay) {
    maestro_layer l = conv(64, 64, 1, 1, 16, 16, 1);
    const char *d = "SpatialMap(1,1) K; TemporalMap(64,64) C; TemporalMap(1,1) Y; TemporalMap(1,1) X;";
    maestro_hw h64 = hw(64, 64), h32 = hw(64, 32);
    maestro_result a = run(&l, &h64, d), b = run(&l, &h32, d);
    /* per step: 64 input elements + (first step) 64*64 weights; compute = 64 MACs per PE */
    cr_assert_gt(a.delay_max[0], a.delay_max[2] - 1, "mapping should be communication-bound at its peak");
    cr_assert_float_eq(b.delay_max[0], 2 * a.delay_max[0], 1e-9);
    cr_assert_float_eq(b.delay_avg[0], 2 * a.delay_avg[0], 1e-9);
    cr_assert_gt(b.runtime, a.runtime);
    /* NoC delay of T elements at bandwidth bw with latency 1 is ceil(T/bw) */
    cr_assert_float_eq(a.delay_max[0], (64.0 * 64 + 64) / 64, 1e-9);
}

/* Weight-stationary reads each weight from L2 once; output-stationary re-reads weights for
 * every output position but writes each output once. */
Test(maestro_model, ws_vs_os_l2_reads) {
    maestro_layer l = conv(8, 8, 1, 1, 8, 8, 1);
    maestro_hw h = hw(8, 64);
    maestro_result ws = run(&l, &h, "SpatialMap(1,1) K; TemporalMap(1,1) C; TemporalMap(8,8) Y; TemporalMap(8,8) X;");
    maestro_result os = run(&l, &h, "SpatialMap(1,1) Y; TemporalMap(1,1) X; TemporalMap(1,1) K; TemporalMap(8,8) C;");
    cr_assert_eq(ws.num_macs, macs(&l));
    cr_assert_eq(os.num_macs, macs(&l));
    cr_assert_eq(ws.l2_rd[MT_W], 8 * 8, "WS reads every weight exactly once");
    cr_assert_gt(os.l2_rd[MT_W], ws.l2_rd[MT_W], "OS re-reads weights");
    cr_assert_eq(os.l2_wr[MT_OUT], 8 * 8 * 8, "OS writes every output once");
    cr_assert_gt(ws.l2_wr[MT_OUT], os.l2_wr[MT_OUT], "WS writes partial sums per C step");
}

/* Edge tiles: K=10 over 4 PEs (4+4+2) and C=10 in tiles of 4 (4+4+2) still count every MAC. */
Test(maestro_model, edge_tiles_counted) {
    maestro_layer l = conv(10, 10, 1, 1, 4, 4, 1);
    maestro_hw h = hw(4, 64);
    maestro_result r = run(&l, &h, "SpatialMap(1,1) K; TemporalMap(4,4) C; TemporalMap(1,1) Y; TemporalMap(1,1) X;");
    cr_assert_eq(r.num_macs, macs(&l)); /* 1600 */
    /* 3 spatial folds x 3 C tiles x 16 pixels; compute per step = 4 or 2 MACs */
    cr_assert_eq(r.compute_cycles, 3 * 16 * (4 + 4 + 2));
    /* utilisation below 4 because the last fold has only 2 active PEs */
    cr_assert_lt(r.avg_util_pes, 4.0);
    cr_assert_gt(r.avg_util_pes, 2.0);
    maestro_layer l2 = conv(8, 8, 1, 1, 4, 4, 1);
    maestro_result r2 = run(&l2, &h, "SpatialMap(1,1) K; TemporalMap(4,4) C; TemporalMap(1,1) Y; TemporalMap(1,1) X;");
    cr_assert_eq(r2.compute_cycles, 2 * 16 * 8);
}

Test(maestro_model, multi_level_clusters) {
    maestro_layer l = conv(32, 32, 3, 3, 10, 10, 1);
    maestro_hw h = hw(64, 64);
    maestro_result r = run(&l, &h,
                           "SpatialMap(1,1) K; TemporalMap(8,8) C; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S; "
                           "TemporalMap(3,1) Y; TemporalMap(3,1) X; Cluster(8, P); SpatialMap(1,1) C; "
                           "TemporalMap(3,1) Y; TemporalMap(3,1) X; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;");
    cr_assert_eq(r.num_levels, 2);
    cr_assert_eq(r.num_macs, macs(&l));
    cr_assert_gt(r.avg_util_pes, 32.0);
    cr_assert_leq(r.avg_util_pes, 64.0);
    /* three levels */
    maestro_result r3 = run(&l, &h,
                            "SpatialMap(1,1) K; TemporalMap(8,8) C; TemporalMap(3,1) Y; TemporalMap(3,1) X; Cluster(16, P); "
                            "SpatialMap(1,1) C; Cluster(4, P); SpatialMap(1,1) X;");
    cr_assert_eq(r3.num_levels, 3);
    cr_assert_gt(r3.runtime, 0);
}

Test(maestro_model, energy_area_power_formulas) {
    maestro_layer l = conv(16, 16, 1, 1, 8, 8, 1);
    maestro_hw h = hw(16, 32);
    maestro_result r = run(&l, &h, "SpatialMap(1,1) K; TemporalMap(4,4) C; TemporalMap(2,2) Y; TemporalMap(8,8) X;");
    double l2 = 0, l1 = 0;
    for (int t = 0; t < MT_N; t++) l2 += r.l2_rd[t] + r.l2_wr[t], l1 += r.l1_rd[t] + r.l1_wr[t];
    cr_assert_float_eq(r.energy, 18.61 * l2 + 1.68 * l1 + r.num_macs, 1e-6 * r.energy);
    cr_assert_float_eq(r.energy, r.e_l2 + r.e_l1 + r.e_mac, 1e-9 * r.energy);
    double P = 16, L1 = (double)r.l1_req_total, L2 = (double)r.l2_req_total;
    double area = P * (283 + 0.104 * L1) + 0.104 * L2 + 101.7938 * (14.662 * P + 28.895) * 32 +
                  395.473 * (1.2886 * P * P + 5.5814 * P - 23.711);
    cr_assert_float_eq(r.area, area, 1e-9 * area);
    cr_assert_float_eq(r.edp, r.energy * (double)r.runtime, 1e-9 * r.edp);
    cr_assert_float_eq(r.throughput, (double)r.num_macs / (double)r.runtime, 1e-12);
}

Test(maestro_model, stride_two_layer) {
    maestro_layer l = conv(8, 4, 3, 3, 17, 17, 2); /* output 8x8 */
    maestro_hw h = hw(16, 32);
    maestro_result r = run(&l, &h, "TemporalMap(1,1) K; TemporalMap(1,1) C; SpatialMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; "
                                   "TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S;");
    cr_assert_eq(r.num_macs, 8LL * 4 * 9 * 8 * 8);
}

Test(maestro_model, rejections_name_the_reason) {
    maestro_layer l = conv(8, 8, 3, 3, 8, 8, 1);
    maestro_hw h = hw(16, 32);
    maestro_mapping m;
    hw_err err = {0};
    cr_assert_neq(maestro_parse_directives("TemporalMap(1,7) R; SpatialMap(1,1) K;", &l, &m, &err), 0);
    cr_assert(strstr(err.msg, "Tile size of R(1) should be equal to tile offset of R(7)"), "%s", err.msg);
    cr_assert_neq(maestro_parse_directives("TemporalMap(1,1) R; SpatialMap(1,1) K;", &l, &m, &err), 0);
    cr_assert(strstr(err.msg, "dimension size of R(3)"), "%s", err.msg);
    cr_assert_neq(maestro_parse_directives("SpatialMap(1,1) Q;", &l, &m, &err), 0);
    cr_assert_neq(maestro_parse_directives("SpatialMap(0,1) K;", &l, &m, &err), 0);
    maestro_result r;
    cr_assert_eq(maestro_parse_directives("TemporalMap(1,1) K; TemporalMap(1,1) C;", &l, &m, &err), 0);
    maestro_eval(&l, &h, &m, &r);
    cr_assert(!r.valid && !r.feasible);
    cr_assert(strstr(r.reason, "no SpatialMap"), "%s", r.reason);
    cr_assert_eq(maestro_parse_directives("SpatialMap(1,1) K; Cluster(32, P); SpatialMap(1,1) C;", &l, &m, &err), 0);
    maestro_eval(&l, &h, &m, &r);
    cr_assert(!r.valid);
    cr_assert(strstr(r.reason, "PEs"), "%s", r.reason);
    /* a buffer over capacity is infeasible (MAESTRO only warns) */
    h.l1_size = 1;
    cr_assert_eq(maestro_parse_directives("SpatialMap(1,1) K; TemporalMap(8,8) C;", &l, &m, &err), 0);
    maestro_eval(&l, &h, &m, &r);
    cr_assert(r.valid && !r.feasible);
    cr_assert(strstr(r.reason, "L1 requirement"), "%s", r.reason);
}

Test(maestro_model, directive_text_round_trip) {
    maestro_layer l = conv(8, 8, 3, 3, 8, 8, 1);
    maestro_mapping m, m2;
    hw_err err = {0};
    cr_assert_eq(maestro_parse_directives("SpatialMap(1,1) K; TemporalMap(Sz(C),4) C; Cluster(4, L); SpatialMap(3,1) Y';", &l, &m, &err), 0, "%s", err.msg);
    cr_assert_eq(m.n, 4);
    cr_assert_eq(m.d[1].size, 8);
    cr_assert_eq(m.d[2].kind, MDIR_CLUSTER);
    cr_assert_eq(m.d[2].logical, 1);
    cr_assert_eq(m.d[3].dim, MD_YP);
    char buf[512];
    cr_assert_eq(maestro_mapping_to_text(&m, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "SpatialMap(1,1) K; TemporalMap(8,4) C; Cluster(4, L); SpatialMap(3,1) Y';");
    cr_assert_eq(maestro_parse_directives(buf, &l, &m2, &err), 0);
    cr_assert_eq(m2.n, m.n);
    cr_assert_eq(memcmp(m.d, m2.d, sizeof m.d[0] * (size_t)m.n), 0);
}

Test(maestro_model, network_and_hw_files) {
    const char *net_text = "Network demo {\n"
                           "Layer CONV1 {\n Type: CONV\n Stride { X: 2, Y: 2 }\n"
                           " Dimensions { K: 32, C: 3, R: 3, S: 3, Y: 225, X: 225 }\n"
                           " Dataflow {\n  // comment\n  SpatialMap(1,1) K;\n  TemporalMap(Sz(R),Sz(R)) R;\n"
                           "  TemporalMap(Sz(S),Sz(S)) S;\n  TemporalMap(3,2) Y;\n }\n}\n"
                           "Layer DW { Type: DSCONV Dimensions { K: 1, C: 32, R: 3, S: 3, Y': 110, X': 110 } }\n}\n";
    maestro_net net;
    hw_err err = {0};
    cr_assert_eq(maestro_parse_network(net_text, &net, &err), 0, "%s", err.msg);
    cr_assert_str_eq(net.name, "demo");
    cr_assert_eq(net.n, 2);
    cr_assert_eq(net.layers[0].layer.stride_x, 2);
    cr_assert_eq(net.layers[0].map.n, 4);
    cr_assert_eq(net.layers[1].layer.type, MAESTRO_DSCONV);
    cr_assert_eq(net.layers[1].layer.dim[MD_Y], 112);
    cr_assert_eq(net.layers[1].map.n, 4, "MAESTRO: a layer without Dataflow reuses the previous one's");
    maestro_net_free(&net);
    /* Constant declarations, MAESTRO's layer naming ("Conv2d-1" -> "1") and GEMM layers */
    const char *gemm_text = "Constant KT 4;\nNetwork g {\nLayer Conv2d-1 {\nType: GEMM\nDimensions { N: 16, K: 8, M: 32 }\n"
                            "Dataflow { TemporalMap(KT,KT) K; SpatialMap(1,1) M; TemporalMap(Sz(N),Sz(N)) N; }\n}\n}\n";
    cr_assert_eq(maestro_parse_network(gemm_text, &net, &err), 0, "%s", err.msg);
    cr_assert_eq(net.n, 1);
    cr_assert_str_eq(net.layers[0].layer.name, "1");
    maestro_layer *g = &net.layers[0].layer;
    cr_assert_eq(g->type, MAESTRO_GEMM);
    cr_assert_eq(g->dim[MD_Y], 32); /* M */
    cr_assert_eq(g->dim[MD_K], 16); /* N */
    cr_assert_eq(g->dim[MD_C], 8);  /* K */
    cr_assert_eq(net.layers[0].map.d[0].size, 4);
    cr_assert_eq(net.layers[0].map.d[2].size, 16);
    char gt[256];
    cr_assert_eq(maestro_mapping_to_text_for(&net.layers[0].map, MAESTRO_GEMM, gt, sizeof gt), 0);
    cr_assert_str_eq(gt, "TemporalMap(4,4) K; SpatialMap(1,1) M; TemporalMap(16,16) N;");
    maestro_hw gh;
    maestro_hw_default(&gh);
    gh.num_pes = 32;
    maestro_result gr;
    maestro_eval(g, &gh, &net.layers[0].map, &gr);
    cr_assert(gr.valid, "%s", gr.reason);
    cr_assert_eq(gr.num_macs, 32LL * 16 * 8);
    maestro_net_free(&net);
    cr_assert_neq(maestro_parse_network("Network x { Layer L { Type: LSTM } }", &net, &err), 0);
    maestro_hw h;
    maestro_hw_default(&h);
    cr_assert_eq(maestro_parse_hw("num_pes: 168\nl1_size_cstr: 512\nl2_size_cstr: 108000\nnoc_bw_cstr: 16\noffchip_bw_cstr: 8\n", &h, &err), 0);
    cr_assert_eq(h.num_pes, 168);
    cr_assert_eq(h.noc_bw, 16);
    cr_assert_eq(h.offchip_bw, 8);
    cr_assert_eq(h.l2_size, 108000);
    cr_assert_neq(maestro_parse_hw("bogus: 1\n", &h, &err), 0);
    cr_assert(strstr(err.msg, "bogus"));
}

/* Arbitrary directive lists (what an agent or a user may send) never crash: each is either
 * evaluated or rejected with a reason. Runs under ASan/UBSan in `make test`. */
static int rnd(unsigned long long *s, int n) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((*s >> 33) % (unsigned long long)n);
}

Test(maestro_model, random_directives_never_crash) {
    unsigned long long s = 42;
#define RND(n) rnd(&s, (n))
    int valid = 0, n = 3000;
    for (int it = 0; it < n; it++) {
        int K = 1 + RND(64), C = 1 + RND(64), R = 1 + RND(4), S = 1 + RND(4), Y = 8 + RND(24), X = 8 + RND(24);
        maestro_layer l = conv(K, C, R, S, Y, X, 1 + RND(2));
        if (RND(3) == 0) l.type = MAESTRO_DSCONV, l.dim[MD_K] = 1;
        int pes = 1 + RND(300);
        maestro_hw h = hw(pes, 1 + RND(64));
        h.noc_latency = RND(3);
        h.offchip_bw = 1 + RND(64);
        maestro_mapping m;
        m.n = 1 + RND(14);
        for (int i = 0; i < m.n; i++) {
            maestro_directive *d = &m.d[i];
            memset(d, 0, sizeof *d);
            int k = RND(10);
            d->kind = k < 4 ? MDIR_TEMPORAL : k < 8 ? MDIR_SPATIAL : MDIR_CLUSTER;
            d->dim = (unsigned char)RND(MD_NDIM);
            d->size = 1 + RND(20);
            d->ofs = 1 + RND(d->size + 2);
        }
        maestro_result r;
        maestro_eval(&l, &h, &m, &r);
        if (r.valid) {
            valid++;
            cr_assert_gt(r.runtime, 0);
            cr_assert_geq(r.energy, (double)r.num_macs);
        } else {
            cr_assert(r.reason[0], "rejected without a reason");
        }
    }
    cr_assert_gt(valid, n / 20, "only %d/%d random mappings evaluated", valid, n);
#undef RND
}

/* NGCONV (ResNeXt's grouped convolution, MAESTRO's G dimension) and TRCONV (a CONV to MAESTRO). */
Test(maestro_model, ngconv_and_trconv_layers) {
    const char *t = "Network x {\nLayer g {\nType: NGCONV\nDimensions { G: 4, K: 8, C: 8, R: 3, S: 3, Y: 10, X: 10 }\n"
                    "Dataflow { TemporalMap(1,1) G; SpatialMap(1,1) K; TemporalMap(4,4) C; TemporalMap(Sz(R),Sz(R)) R; "
                    "TemporalMap(Sz(S),Sz(S)) S; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; Cluster(4, P); SpatialMap(1,1) C; }\n}\n"
                    "Layer t {\nType: TRCONV\nDimensions { K: 8, C: 8, R: 3, S: 3, Y: 10, X: 10 }\n}\n}\n";
    maestro_net net;
    hw_err err = {0};
    cr_assert_eq(maestro_parse_network(t, &net, &err), 0, "%s", err.msg);
    cr_assert_eq(net.n, 2);
    cr_assert_eq(net.layers[0].layer.type, MAESTRO_NGCONV);
    cr_assert_eq(net.layers[1].layer.type, MAESTRO_CONV);
    maestro_hw h = hw(64, 32);
    maestro_result r;
    maestro_eval(&net.layers[0].layer, &h, &net.layers[0].map, &r);
    cr_assert(r.valid, "%s", r.reason);
    cr_assert_eq(r.num_macs, 4LL * 8 * 8 * 9 * 8 * 8);
    /* the G directive is rejected on a layer without groups */
    maestro_eval(&net.layers[1].layer, &h, &net.layers[1].map, &r);
    cr_assert(!r.valid);
    cr_assert(strstr(r.reason, "G"), "%s", r.reason);
    maestro_net_free(&net);
}
