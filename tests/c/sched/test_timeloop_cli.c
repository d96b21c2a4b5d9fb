/* `hwgym timeloop-model` at the boundary a user sees: the shipped Timeloop templates
 * (tests/data/timeloop/templates) reproduce reference row 0 exactly under both ERTs; reference
 * rows of every accelerator, written out as Timeloop problem/mapping YAML, give the same
 * numbers as the in-process model and rejected rows give Timeloop's own message; unsupported
 * features are named. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "sched/sched.h"
#include "sched/sched_tl.h"
#include "tl_ref.h"

static char tdir[1024], hw[1024];

static void setup(void) {
    cr_assert(hwtest_repo_file("tests/data/timeloop/templates/problem-shape.yaml", tdir, sizeof tdir));
    *strrchr(tdir, '/') = 0;
    cr_assert(hwtest_bin("hwgym", hw, sizeof hw), "hwgym binary not built");
}

static int run(const char *a, const char *p, const char *m, const char *e, const char *stats, json_t **out, char **err) {
    const char *pre[] = {hw, "timeloop-model", NULL};
    const char *args[] = {a, p, m, e, "--stats", stats, NULL};
    char *o = NULL;
    int rc = hwtest_run_args(pre, args, &o, err);
    *out = o && *o ? json_loads(o, 0, NULL) : NULL;
    free(o);
    return rc;
}

static double jnum(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

Test(timeloop_cli, shipped_example_reproduces_row_0, .init = setup) {
    char a[1200], p[1200], m[1200], e[1200], stats[] = "/tmp/hwgym_tl_statsXXXXXX";
    int fd = mkstemp(stats);
    cr_assert(fd >= 0);
    close(fd);
    static const char *const ert[2] = {"proj", "pub"};
    static const double want[2] = {477217461.47, 767580250.52};
    for (int k = 0; k < 2; k++) {
        snprintf(a, sizeof a, "%s/eyeriss_v1.arch.%s.yaml", tdir, ert[k]);
        snprintf(p, sizeof p, "%s/example.eyeriss_v1.problem.yaml", tdir);
        snprintf(m, sizeof m, "%s/example.eyeriss_v1.map.yaml", tdir);
        snprintf(e, sizeof e, "%s/eyeriss_v1.ERT.%s.yaml", tdir, ert[k]);
        json_t *o;
        char *er = NULL;
        int rc = run(a, p, m, e, stats, &o, &er);
        cr_assert_eq(rc, 0, "exit %d: %s", rc, er);
        free(er);
        cr_assert(o);
        cr_assert(fabs(jnum(o, "energy_pj") - want[k]) < 0.02, "energy %.2f vs %.2f", jnum(o, "energy_pj"), want[k]);
        cr_assert_float_eq(jnum(o, "cycles"), 2408448, 0.5);
        cr_assert_float_eq(jnum(o, "computes"), 115605504, 0.5);
        /* per-level per-tensor counts of row 0 */
        const json_t *lv = json_object_get(o, "levels");
        const json_t *gb = NULL, *lbo = NULL;
        for (size_t i = 0; i < json_array_size(lv); i++) {
            const char *n = json_string_value(json_object_get(json_array_get(lv, i), "name"));
            if (!strcmp(n, "GB")) gb = json_object_get(json_array_get(lv, i), "tensors");
            if (!strcmp(n, "LB_O")) lbo = json_object_get(json_array_get(lv, i), "tensors");
        }
        cr_assert(gb && lbo);
        cr_assert_float_eq(jnum(json_object_get(gb, "Inputs"), "reads"), 903168, 0.5);
        cr_assert_float_eq(jnum(json_object_get(gb, "Outputs"), "reads"), 12744704, 0.5);
        cr_assert_float_eq(jnum(json_object_get(gb, "Outputs"), "updates"), 12845056, 0.5);
        cr_assert_float_eq(jnum(json_object_get(lbo, "Outputs"), "fills"), 38234112, 0.5);
        json_decref(o);
    }
    /* the stats file carries Timeloop's summary lines */
    FILE *f = fopen(stats, "r");
    cr_assert(f);
    char line[256];
    int cyc = 0, comp = 0, en = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strcmp(line, "Cycles: 2408448\n")) cyc = 1;
        if (!strcmp(line, "Computes = 115605504\n")) comp = 1;
        if (!strncmp(line, "Energy: 767.58 uJ", 17)) en = 1;
    }
    fclose(f);
    unlink(stats);
    cr_assert(cyc && comp && en, "stats file lacks Timeloop's summary lines");
}

/* problem + mapping YAML of a sched table (as NOTES.md section 2 builds them) */
static void write_yaml(const tl_spec *s, const char *pp, const char *mp) {
    FILE *f = fopen(pp, "w");
    cr_assert(f);
    char src[1200];
    snprintf(src, sizeof src, "%s/problem-shape.yaml", tdir);
    FILE *g = fopen(src, "r");
    cr_assert(g);
    char line[256];
    while (fgets(line, sizeof line, g)) fputs(line, f);
    fclose(g);
    fprintf(f, "  instance:\n");
    for (int d = 0; d < SCHED_NDIM; d++) fprintf(f, "    %s: %d\n", sched_dim_names[d], s->dims[d]);
    fprintf(f, "    Hstride: %d\n    Wstride: %d\n", s->stride, s->stride);
    fclose(f);
    static const char *const ds[3] = {"Inputs", "Weights", "Outputs"};
    f = fopen(mp, "w");
    cr_assert(f);
    fprintf(f, "mapping:\n");
    for (int l = 0; l < s->nl; l++) {
        const tl_level *v = &s->lv[l];
        fprintf(f, "- target: %s\n  type: temporal\n  factors:", v->name);
        for (int d = 0; d < SCHED_NDIM; d++) fprintf(f, " %s%d", sched_dim_names[d], v->tf[d]);
        fprintf(f, "\n  permutation: ");
        for (int i = 0; i < SCHED_NDIM; i++) fputs(sched_dim_names[v->tperm[i]], f);
        int any = 0, nx = 0;
        for (int d = 0; d < SCHED_NDIM; d++) any |= v->sf[d] > 1, nx += !v->saxis[d];
        if (any) {
            fprintf(f, "\n- target: %s\n  type: spatial\n  factors:", v->name);
            for (int d = 0; d < SCHED_NDIM; d++) fprintf(f, " %s%d", sched_dim_names[d], v->sf[d]);
            fprintf(f, "\n  permutation: ");
            for (int ax = 0; ax < 2; ax++)
                for (int d = 0; d < SCHED_NDIM; d++)
                    if (v->saxis[d] == ax) fputs(sched_dim_names[d], f);
            fprintf(f, "\n  split: %d", nx);
        }
        fprintf(f, "\n- target: %s\n  type: datatype\n  keep: [", v->name);
        int c = 0;
        for (int t = 0; t < 3; t++)
            if (v->keep[t]) fprintf(f, "%s%s", c++ ? ", " : "", ds[t]);
        fprintf(f, "]\n  bypass: [");
        c = 0;
        for (int t = 0; t < 3; t++)
            if (!v->keep[t]) fprintf(f, "%s%s", c++ ? ", " : "", ds[t]);
        fprintf(f, "]\n");
    }
    fclose(f);
}


/* A reader of real timeloop-model stats files, as a user's script would be: under "Buffer and
 * Arithmetic Levels" every "Energy (total)" line counts to the level named by the last
 * "=== NAME ===", under "Networks" to the network named on the line after "Network N" /
 * "---------" ("OUTER <==> INNER"). The energies are rolled up as the reference's columns are:
 * MAC, REG, LB, GB, DRAM and the networks out of REG/LB (net_MAC), GB (net_PE) and DRAM
 * (net_CHIP); the zero-capacity *_XDUMMY levels belong to the group they split. Returns the
 * number of networks that had a per-data-space STATS block. */
static int part_of(const char *n, int net) {
    if (!strncmp(n, "MAC", 3)) return TL_REF_E_MAC;
    if (!strncmp(n, "GB", 2) || !strncmp(n, "PE_", 3)) return net ? TL_REF_E_NET_PE : TL_REF_E_GB;
    if (!strncmp(n, "DRAM", 4) || !strncmp(n, "CHIP_", 5)) return net ? TL_REF_E_NET_CHIP : TL_REF_E_DRAM;
    if (net) return TL_REF_E_NET_MAC;
    return !strncmp(n, "REG", 3) ? TL_REF_E_REG : TL_REF_E_LB;
}

static int read_stats(const char *path, double e[8]) {
    FILE *f = fopen(path, "r");
    cr_assert(f, "no stats file %s", path);
    char line[512], name[512] = "";
    int in_net = 0, want_name = 0, nets_with_stats = 0, in_stats = 0;
    for (int k = 0; k < 8; k++) e[k] = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strcmp(line, "Networks")) in_net = 1;
        if (!strncmp(line, "Operational Intensity", 21)) break;
        if (sscanf(line, "=== %511s ===", name) == 1) continue;
        if (in_net && !strncmp(line, "Network ", 8)) {
            want_name = 2, in_stats = 0;
            continue;
        }
        if (want_name && --want_name == 0) {
            snprintf(name, sizeof name, "%s", line);
            continue;
        }
        if (in_net && !strcmp(line, "    STATS")) in_stats = 1, nets_with_stats++;
        const char *c = strstr(line, "Energy (total)");
        if (!c || strstr(line, "Reduction") || strstr(line, "Link") || strstr(line, "Address")) continue;
        if (in_net) cr_assert(in_stats && strncmp(line, "        ", 8) == 0, "network energy outside a per-data-space STATS entry: %s", line);
        e[part_of(name, in_net)] += atof(strchr(c, ':') + 1);
    }
    fclose(f);
    return nets_with_stats;
}

Test(timeloop_cli, reference_rows_through_yaml, .init = setup, .timeout = 60) {
    char path[1024];
    cr_assert(hwtest_repo_file("tests/data/timeloop/sched_ref_visible.csv", path, sizeof path));
    tl_ref_row *rows;
    int n = tl_ref_load(path, &rows);
    cr_assert_gt(n, 0);
    char pp[] = "/tmp/hwgym_tl_probXXXXXX", mp[] = "/tmp/hwgym_tl_mapXXXXXX", sp[] = "/tmp/hwgym_tl_statXXXXXX";
    int f1 = mkstemp(pp), f2 = mkstemp(mp), f3 = mkstemp(sp);
    cr_assert(f1 >= 0 && f2 >= 0 && f3 >= 0);
    close(f1), close(f2), close(f3);
    /* every 20th row (all four accelerators, every family) and every 4th rejected one */
    int ok = 0, rej = 0;
    for (int i = 0; i < n; i++) {
        tl_ref_row *r = &rows[i];
        if (i % 20 && (r->ok || i % 4)) continue;
        sched_accel acc;
        json_t *nm = json_string(r->accel);
        hw_err err;
        cr_assert_eq(sched_accel_resolve(nm, "acc", &acc, &err), 0);
        json_decref(nm);
        tl_spec s;
        sched_tl_from_table(&acc, &r->layer, &r->table, &s);
        write_yaml(&s, pp, mp);
        char a[1200], e[1200];
        snprintf(a, sizeof a, "%s/%s.arch.proj.yaml", tdir, r->accel);
        snprintf(e, sizeof e, "%s/%s.ERT.proj.yaml", tdir, r->accel);
        json_t *o;
        char *er = NULL;
        int rc = run(a, pp, mp, e, sp, &o, &er);
        cr_assert(o, "row %d: no JSON (exit %d): %s", r->id, rc, er);
        if (!r->ok) {
            cr_assert_eq(rc, 1, "row %d: rejected by Timeloop, exit %d", r->id, rc);
            cr_assert_str_eq(json_string_value(json_object_get(o, "reason")), r->reason, "row %d", r->id);
            rej++;
        } else {
            cr_assert_eq(rc, 0, "row %d: exit %d: %s", r->id, rc, er);
            sched_cost c;
            sched_cost_eval(&acc, &r->layer, &r->table, &c);
            cr_assert(fabs(jnum(o, "energy_pj") - c.energy_pj) <= 1e-9 * c.energy_pj, "row %d: CLI %.17g vs model %.17g", r->id,
                      jnum(o, "energy_pj"), c.energy_pj);
            cr_assert_float_eq(jnum(o, "cycles"), c.cycles, 1e-9 * c.cycles, "row %d", r->id);
            /* the stats file, read as a Timeloop stats file, gives the reference's energy split */
            double e[8];
            cr_assert_eq(read_stats(sp, e), s.nl, "row %d: a STATS block per network", r->id);
            static const char *const part[8] = {"MAC", "REG", "LB", "GB", "DRAM", "net_MAC", "net_PE", "net_CHIP"};
            for (int k = 0; k < 8; k++)
                cr_assert(fabs(e[k] - r->e[k]) <= 0.05 + 1e-9 * r->energy, "row %d (%s): stats file %s %.2f pJ, Timeloop %.2f pJ", r->id,
                          r->accel, part[k], e[k], r->e[k]);
            ok++;
        }
        free(er);
        json_decref(o);
    }
    cr_assert_gt(ok, 10);
    cr_assert_gt(rej, 0);
    unlink(pp), unlink(mp), unlink(sp);
    free(rows);
}

Test(timeloop_cli, unsupported_features_are_named, .init = setup) {
    char a[] = "/tmp/hwgym_tl_archXXXXXX", sp[] = "/tmp/hwgym_tl_statXXXXXX";
    int fd = mkstemp(a), f3 = mkstemp(sp);
    cr_assert(fd >= 0 && f3 >= 0);
    close(f3);
    const char *txt = "arch:\n  arithmetic:\n    name: MAC\n    instances: 4\n    meshX: 2\n  storage:\n"
                      "  - name: BUF\n    entries: 64\n    instances: 1\n    meshX: 1\n    multiple-buffering: 2\n";
    cr_assert_eq(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
    close(fd);
    char p[1200], m[1200], e[1200];
    snprintf(p, sizeof p, "%s/example.eyeriss_v1.problem.yaml", tdir);
    snprintf(m, sizeof m, "%s/example.eyeriss_v1.map.yaml", tdir);
    snprintf(e, sizeof e, "%s/eyeriss_v1.ERT.proj.yaml", tdir);
    json_t *o;
    char *er = NULL;
    int rc = run(a, p, m, e, sp, &o, &er);
    cr_assert_eq(rc, 2);
    cr_assert(er && strstr(er, "multiple-buffering") && strstr(er, "unsupported"), "%s", er);
    free(er);
    json_decref(o);
    unlink(a), unlink(sp);
}

/* `-o DIR` as --help and docs/sched.md write it: the stats file lands in DIR */
Test(timeloop_cli, short_o_writes_into_dir, .init = setup) {
    char dir[] = "/tmp/hwgym_tl_dirXXXXXX";
    cr_assert(mkdtemp(dir));
    char a[1200], p[1200], m[1200], e[1200], st[1200];
    snprintf(a, sizeof a, "%s/eyeriss_v1.arch.proj.yaml", tdir);
    snprintf(p, sizeof p, "%s/example.eyeriss_v1.problem.yaml", tdir);
    snprintf(m, sizeof m, "%s/example.eyeriss_v1.map.yaml", tdir);
    snprintf(e, sizeof e, "%s/eyeriss_v1.ERT.proj.yaml", tdir);
    const char *pre[] = {hw, "timeloop-model", NULL};
    const char *args[] = {a, p, m, e, "-o", dir, NULL};
    char *o = NULL, *er = NULL;
    int rc = hwtest_run_args(pre, args, &o, &er);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, er);
    snprintf(st, sizeof st, "%s/timeloop-model.stats.txt", dir);
    cr_assert(o && strstr(o, st), "%s", o);
    double en[8];
    cr_assert_eq(read_stats(st, en), 6);
    cr_assert_float_eq(en[TL_REF_E_NET_PE], 7021568.0, 0.01);
    free(o), free(er);
    unlink(st);
    rmdir(dir);
}
