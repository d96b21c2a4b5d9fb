/* The `hwgym maestro` drop-in (maestro_cli_main), run on small files in a temp dir. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "maestro/maestro.h"

static const char *NET = "Network tiny {\n"
                         "Layer C1 {\n Type: CONV\n Stride { X: 1, Y: 1 }\n"
                         " Dimensions { K: 16, C: 8, R: 3, S: 3, Y: 10, X: 10 }\n"
                         " Dataflow {\n  SpatialMap(1,1) K;\n  TemporalMap(4,4) C;\n  TemporalMap(Sz(R),Sz(R)) R;\n"
                         "  TemporalMap(Sz(S),Sz(S)) S;\n  TemporalMap(Sz(R),1) Y;\n  TemporalMap(Sz(S),1) X;\n"
                         "  Cluster(4, P);\n  SpatialMap(1,1) C;\n }\n}\n"
                         "Layer D2 {\n Type: DSCONV\n Dimensions { K: 1, C: 16, R: 3, S: 3, Y: 8, X: 8 }\n"
                         " Dataflow {\n  SpatialMap(1,1) C;\n  TemporalMap(3,1) Y;\n  TemporalMap(3,1) X;\n"
                         "  TemporalMap(3,3) R;\n  TemporalMap(3,3) S;\n }\n}\n}\n";

static char dir[4096];

static void setup(void) {
    hwtest_tmpdir(dir, sizeof dir);
    cr_assert_eq(chdir(dir), 0);
    FILE *f = fopen("tiny.m", "w");
    fputs(NET, f);
    fclose(f);
    f = fopen("hw.m", "w");
    fputs("num_pes: 32\nl1_size_cstr: 512\nl2_size_cstr: 108000\nnoc_bw_cstr: 16\noffchip_bw_cstr: 16\n", f);
    fclose(f);
}

static void teardown(void) {
    if (chdir("/") == 0) hwtest_rmtree(dir);
}

static int run(FILE *out, int n, ...) {
    char *argv[32];
    argv[0] = "maestro";
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    return maestro_cli_main(n + 1, argv, out);
}

static int count_fields(const char *line) {
    int n = 1;
    for (const char *p = line; *p && *p != '\n'; p++) n += *p == ',';
    return n;
}

TestSuite(maestro_cli, .init = setup, .fini = teardown);

Test(maestro_cli, writes_maestro_csv) {
    FILE *out = tmpfile();
    cr_assert_eq(run(out, 5, "--HW_file=hw.m", "--Mapping_file=tiny.m", "--print_res=true", "--print_res_csv_file=true",
                     "--print_log_file=false"),
                 0);
    rewind(out);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, out);
    buf[n] = 0;
    fclose(out);
    cr_assert(strstr(buf, "Runtime: "), "%s", buf);
    cr_assert(strstr(buf, "BW Analysis:"));
    /* the CSV is named after the mapping file, appended on each run */
    out = tmpfile();
    cr_assert_eq(run(out, 3, "--HW_file", "hw.m", "--Mapping_file=tiny.m"), 0);
    fclose(out);
    FILE *f = fopen("tiny.csv", "r");
    cr_assert(f, "tiny.csv not written");
    char hdr[8192], row[4][8192];
    cr_assert(fgets(hdr, sizeof hdr, f));
    int nr = 0;
    while (nr < 4 && fgets(row[nr], sizeof row[nr], f)) nr++;
    fclose(f);
    cr_assert_eq(nr, 4, "2 layers x 2 runs, got %d rows", nr);
    cr_assert(strncmp(hdr, "Neural Network Name, Layer Number, NumPEs, Runtime (Cycles), Activity count-based Energy (nJ)", 90) == 0);
    cr_assert(strstr(hdr, "input l1 read, input l1 write, input l2 read, input l2 write, input reuse factor,filter l1 read"));
    cr_assert(strstr(hdr, "Avg number of utilized PEs, Arithmetic Intensity"));
    int nh = count_fields(hdr);
    cr_assert_eq(nh, 52, "header has %d fields", nh);
    for (int i = 0; i < nr; i++) cr_assert_eq(count_fields(row[i]), nh, "row %d: %s", i, row[i]);
    cr_assert(strncmp(row[0], "tiny,C1,32,", 11) == 0, "%s", row[0]);
    cr_assert(strncmp(row[1], "tiny,D2,32,", 11) == 0, "%s", row[1]);
    /* the runtime column is the model's runtime with the HW file's values */
    maestro_net net;
    hw_err err = {0};
    cr_assert_eq(maestro_parse_network(NET, &net, &err), 0, "%s", err.msg);
    maestro_hw h;
    maestro_hw_default(&h);
    h.num_pes = 32, h.noc_bw = 16, h.offchip_bw = 16, h.l1_size = 512, h.l2_size = 108000;
    maestro_result r;
    maestro_eval(&net.layers[0].layer, &h, &net.layers[0].map, &r);
    cr_assert(r.valid, "%s", r.reason);
    char expect[128];
    snprintf(expect, sizeof expect, "tiny,C1,32,%lld,", r.runtime);
    cr_assert(strncmp(row[0], expect, strlen(expect)) == 0, "%s vs %s", row[0], expect);
    cr_assert_eq(r.num_levels, 2);
    maestro_net_free(&net);
}

Test(maestro_cli, flags_without_hw_file) {
    FILE *out = tmpfile();
    /* boost-style unambiguous prefix (--noc_bw) and separate values */
    cr_assert_eq(run(out, 9, "--Mapping_file=tiny.m", "--num_pes", "64", "--noc_bw", "8", "--noc_hops=2", "--noc_hop_latency=3",
                     "--print_res_csv_file=false", "--print_design_space=true"),
                 0);
    fclose(out);
    cr_assert_neq(access("tiny.csv", F_OK), 0, "CSV written although disabled");
    out = tmpfile();
    cr_assert_eq(run(out, 1, "--help"), 0);
    rewind(out);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, out);
    buf[n] = 0;
    fclose(out);
    cr_assert(strstr(buf, "--HW_file") && strstr(buf, "--noc_mc_support") && strstr(buf, "--print_design_space"));
}

Test(maestro_cli, errors) {
    FILE *out = tmpfile();
    cr_assert_neq(run(out, 1, "--bogus_flag=1"), 0);
    cr_assert_neq(run(out, 1, "--noc=4"), 0, "ambiguous prefix accepted");
    cr_assert_neq(run(out, 1, "--Mapping_file=missing.m"), 0);
    cr_assert_neq(run(out, 2, "--Mapping_file=tiny.m", "--num_pes=abc"), 0);
    FILE *f = fopen("bad.m", "w");
    fputs("Network b { Layer L { Type: CONV Dimensions { K: 4, C: 4, R: 1, S: 1, Y: 4, X: 4 } Dataflow { TemporalMap(1,1) K; } } }", f);
    fclose(f);
    cr_assert_eq(run(out, 2, "--Mapping_file=bad.m", "--print_res_csv_file=false"), 255);
    fclose(out);
}
