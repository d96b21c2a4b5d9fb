/* sched-v0 model: hand-computed costs, constraints, brute force vs exhaustive enumeration,
 * accelerator JSON parsing. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "sched/sched_internal.h"
#include "sched/sched_tl.h"

static void accel_from_text(const char *text, sched_accel *a) {
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    cr_assert(j, "bad test JSON: %s", je.text);
    hw_err err;
    int rc = sched_accel_from_json(j, "acc", a, &err);
    json_decref(j);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

static void builtin(const char *name, sched_accel *a) {
    json_t *s = json_string(name);
    hw_err err;
    int rc = sched_accel_resolve(s, "acc", a, &err);
    json_decref(s);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

static sched_layer mklayer(int B, int C, int G, int K, int R, int S, int P, int Q, int stride) {
    sched_layer l = {"t", {B, C, G, K, R, S, P, Q}, stride};
    return l;
}

/* A 1-level machine (DRAM only): every MAC reads I and W from DRAM and read-modify-writes O,
 * except the first write of each output: E = MACs*e_mac + (3*MACs + MACs - |O|)*e_dram. */
Test(sched_model, one_level_table_is_macs_plus_dram_traffic) {
    sched_accel a;
    accel_from_text("{\"name\":\"dram_only\",\"mac\":{\"energy_pj\":2.0},\"dram\":{\"energy_pj\":100}}", &a);
    sched_layer l = mklayer(1, 2, 1, 3, 1, 1, 2, 2, 1);
    sched_table t;
    sched_table_init(&l, &t);
    sched_cost c;
    hw_err err;
    cr_assert_eq(sched_evaluate(&a, &l, &t, &c, &err), 0, "%s", err.msg);
    double macs = 2 * 3 * 2 * 2, o = 3 * 2 * 2;
    cr_assert_float_eq(c.macs, macs, 1e-9);
    cr_assert_float_eq(c.access[SR_DRAM][ST_I], macs, 1e-9);
    cr_assert_float_eq(c.access[SR_DRAM][ST_W], macs, 1e-9);
    cr_assert_float_eq(c.access[SR_DRAM][ST_O], macs + macs - o, 1e-9);
    cr_assert_float_eq(c.energy_pj, macs * 2.0 + (4 * macs - o) * 100.0, 1e-6);
    cr_assert_float_eq(c.energy_pj, 8448.0, 1e-6);
    cr_assert_float_eq(c.cycles, macs, 1e-9); /* no bandwidth limit: one MAC per cycle */
    /* with a DRAM bandwidth of 2 words/cycle the 84 accesses bound the cycles */
    accel_from_text("{\"mac\":{\"energy_pj\":2.0},\"dram\":{\"energy_pj\":100,\"bandwidth\":2}}", &a);
    sched_cost_eval(&a, &l, &t, &c);
    cr_assert_float_eq(c.cycles, (4 * macs - o) / 2, 1e-9);
    cr_assert_eq(c.bound_row, SR_DRAM);
}

/* Two levels: a GB holding the whole layer in front of DRAM. DRAM then moves each tensor once
 * (I and W read once, O written once) and the GB serves the MACs (Timeloop's counting: the
 * first update of each output is not preceded by a read, and the drain to DRAM is DRAM's
 * update, not a GB read). */
Test(sched_model, two_level_whole_layer_in_gb) {
    sched_accel a;
    accel_from_text("{\"mac\":{\"energy_pj\":1.0},\"global_buffer\":{\"bytes\":100000,\"energy_pj\":3},"
                    "\"dram\":{\"energy_pj\":100}}",
                    &a);
    sched_layer l = mklayer(1, 2, 1, 3, 3, 1, 4, 1, 1); /* U = (4-1)+3 = 6, V = 1 */
    sched_table t;
    sched_table_init(&l, &t);
    for (int d = 0; d < SCHED_NDIM; d++) {
        t.f[SR_GB][d] = l.d[d];
        t.f[SR_DRAM][d] = 1;
    }
    sched_cost c;
    hw_err err;
    cr_assert_eq(sched_evaluate(&a, &l, &t, &c, &err), 0, "%s", err.msg);
    double macs = 2 * 3 * 3 * 4, I = 2 * 6, W = 2 * 3 * 3, O = 3 * 4;
    cr_assert_float_eq(c.access[SR_DRAM][ST_I], I, 1e-9);
    cr_assert_float_eq(c.access[SR_DRAM][ST_W], W, 1e-9);
    cr_assert_float_eq(c.access[SR_DRAM][ST_O], O, 1e-9);
    /* GB: filled with I and W once, read by every MAC; O: MACs updates + (MACs - O) reads */
    cr_assert_float_eq(c.fills[SR_GB][ST_I], I, 1e-9);
    cr_assert_float_eq(c.reads[SR_GB][ST_I], macs, 1e-9);
    cr_assert_float_eq(c.access[SR_GB][ST_W], W + macs, 1e-9);
    cr_assert_float_eq(c.updates[SR_GB][ST_O], macs, 1e-9);
    cr_assert_float_eq(c.reads[SR_GB][ST_O], macs - O, 1e-9);
    cr_assert_float_eq(c.fills[SR_GB][ST_O], 0, 1e-9);
    cr_assert_float_eq(c.updates[SR_DRAM][ST_O], O, 1e-9);
    cr_assert_float_eq(c.reads[SR_DRAM][ST_O], 0, 1e-9);
    double e = macs * 1 + (I + W + O) * 100 + (I + W + 4 * macs - O) * 3;
    cr_assert_float_eq(c.energy_pj, e, 1e-6);
}

Test(sched_model, weight_stationary_reuse_at_lb) {
    /* LB keeps W; its loops are WS (B, P, Q innermost): W is fetched from DRAM once per LB tile */
    sched_accel a;
    accel_from_text("{\"local_buffer\":{\"W\":2,\"dataflow\":\"WS\"},\"dram\":{\"dataflow\":\"OS\"}}", &a);
    sched_layer l = mklayer(1, 1, 1, 4, 1, 1, 8, 1, 1);
    sched_table t;
    sched_table_init(&l, &t);
    t.f[SR_LB][SD_P] = 8; /* 8 outputs per weight fetched into the LB */
    t.f[SR_DRAM][SD_P] = 1;
    sched_cost c;
    hw_err err;
    cr_assert_eq(sched_evaluate(&a, &l, &t, &c, &err), 0, "%s", err.msg);
    cr_assert_float_eq(c.access[SR_DRAM][ST_W], 4, 1e-9); /* each weight read once */
    cr_assert_float_eq(c.access[SR_LB][ST_W], 4 + 32, 1e-9); /* 4 fills + 32 MAC reads */
    /* everything in DRAM (OS order: K is the innermost loop with a factor): no reuse */
    sched_table_init(&l, &t);
    cr_assert_eq(sched_evaluate(&a, &l, &t, &c, &err), 0, "%s", err.msg);
    cr_assert_float_eq(c.access[SR_DRAM][ST_W], 32, 1e-9); /* no reuse: a fill per MAC */
}

static void expect_violation(const sched_accel *a, const sched_layer *l, const sched_table *t, const char *what) {
    hw_err err;
    sched_cost c;
    cr_assert_eq(sched_evaluate(a, l, t, &c, &err), -1, "expected '%s' to be rejected", what);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    cr_assert(strstr(err.msg, what), "message '%s' does not name '%s'", err.msg, what);
}

Test(sched_model, broken_constraints_are_named) {
    sched_accel a;
    builtin("eyeriss_v1", &a);
    sched_layer l = mklayer(1, 64, 1, 64, 3, 3, 56, 56, 1);
    sched_table t;
    sched_table_init(&l, &t);
    hw_err err;
    cr_assert_eq(sched_check(&a, &l, &t, &err), 0, "%s", err.msg);
    /* column product */
    t.f[SR_DRAM][SD_K] = 32;
    expect_violation(&a, &l, &t, "constraint column K: product 32 != layer K 64");
    /* spatial units: 16 > 14 PEs in X */
    sched_table_init(&l, &t);
    t.f[SR_PEX][SD_K] = 16;
    t.f[SR_DRAM][SD_K] = 4;
    expect_violation(&a, &l, &t,
                     "constraint spatial: couldn't map level MAC: mapped max Arithmetic X expansion 16 exceeds hardware instances 14");
    /* LB weight capacity: 448 B = 224 words; a 64x4 weight tile is 512 B (input tile 4 words fits) */
    sched_table_init(&l, &t);
    t.f[SR_LB][SD_K] = 64;
    t.f[SR_LB][SD_C] = 4;
    t.f[SR_DRAM][SD_K] = 1;
    t.f[SR_DRAM][SD_C] = 16;
    expect_violation(&a, &l, &t, "constraint capacity: couldn't map level LB_W: mapped tile size 256 exceeds buffer capacity 224");
    /* LB input capacity uses U, V from P, Q, R, S and stride: P=4, R=3 -> U=6 words = 12 B fits 14 B;
     * adding Q=2 -> V=2 -> 12 words = 24 B does not */
    sched_table_init(&l, &t);
    t.f[SR_LB][SD_P] = 4;
    t.f[SR_LB][SD_R] = 3;
    t.f[SR_DRAM][SD_P] = 14;
    t.f[SR_DRAM][SD_R] = 1;
    cr_assert_eq(sched_check(&a, &l, &t, &err), 0, "%s", err.msg);
    t.f[SR_LB][SD_Q] = 2;
    t.f[SR_DRAM][SD_Q] = 28;
    expect_violation(&a, &l, &t, "constraint capacity: couldn't map level LB_I: mapped tile size 12 exceeds buffer capacity 7");
    /* absent level */
    sched_table_init(&l, &t);
    t.f[SR_REG][SD_C] = 2;
    t.f[SR_DRAM][SD_C] = 32;
    expect_violation(&a, &l, &t, "constraint level REG: absent");
    /* shared global buffer: whole layer does not fit 108 KB */
    sched_table_init(&l, &t);
    for (int d = 0; d < SCHED_NDIM; d++) t.f[SR_GB][d] = l.d[d], t.f[SR_DRAM][d] = 1;
    expect_violation(&a, &l, &t, "constraint capacity: couldn't map level GB: mapped tile size");
}

/* Timeloop checks spatial expansion cumulatively: a fan-out may exceed its own row's units
 * when an outer fan-out leaves room (MAC_X = 4 on Eyeriss v2's 2-wide MAC row with PE_X = 1),
 * but not the mesh of any level below it. */
Test(sched_model, spatial_expansion_is_cumulative) {
    sched_accel a;
    builtin("eyeriss_v2", &a);
    sched_layer l = mklayer(1, 16, 1, 16, 1, 1, 8, 8, 1);
    sched_table t;
    sched_table_init(&l, &t);
    t.f[SR_MACX][SD_K] = 4;
    t.f[SR_DRAM][SD_K] = 4;
    hw_err err;
    cr_assert_eq(sched_check(&a, &l, &t, &err), 0, "%s", err.msg);
    /* 4 x 4 = 16 along X: the whole MAC mesh (16 wide) */
    t.f[SR_PEX][SD_C] = 4;
    t.f[SR_DRAM][SD_C] = 4;
    cr_assert_eq(sched_check(&a, &l, &t, &err), 0, "%s", err.msg);
    /* x2 more along X (chips) exceeds it; named at the arithmetic level */
    t.f[SR_CHX][SD_P] = 2;
    t.f[SR_DRAM][SD_P] = 4;
    expect_violation(&a, &l, &t, "constraint spatial: couldn't map level MAC: mapped max Arithmetic X expansion 32");
    /* PE_X = 8 on a 4-wide PE row: the LB level's X mesh (8 = 2 chips x 4) is what limits it */
    sched_table_init(&l, &t);
    t.f[SR_PEX][SD_K] = 8;
    t.f[SR_DRAM][SD_K] = 2;
    cr_assert_eq(sched_check(&a, &l, &t, &err), 0, "%s", err.msg);
    t.f[SR_PEX][SD_K] = 16;
    t.f[SR_DRAM][SD_K] = 1;
    expect_violation(&a, &l, &t, "constraint spatial: couldn't map level LB_W: mapped X expansion 16 exceeds available hardware instances 8");
}

Test(sched_model, input_tile_uses_stride) {
    /* LB.I = 14 B = 7 words. P=2, R=3, stride 2: U = (2-1)*2+3 = 5 words = 10 B fits; stride 3 -> 6 words = 12 B
     * fits; P=3, stride 2 -> U = 7 -> 14 B fits; P=3 stride 3 -> U = 9 -> 18 B does not */
    sched_accel a;
    builtin("eyeriss_v1", &a);
    for (int stride = 2; stride <= 3; stride++) {
        sched_layer l = mklayer(1, 1, 1, 1, 3, 1, 3, 1, stride);
        sched_table t;
        sched_table_init(&l, &t);
        t.f[SR_LB][SD_P] = 3;
        t.f[SR_LB][SD_R] = 3;
        t.f[SR_DRAM][SD_P] = 1;
        t.f[SR_DRAM][SD_R] = 1;
        hw_err err;
        int rc = sched_check(&a, &l, &t, &err);
        if (stride == 2) cr_assert_eq(rc, 0, "%s", err.msg);
        else {
            cr_assert_eq(rc, -1);
            cr_assert(strstr(err.msg, "constraint capacity: couldn't map level LB_I: mapped tile size 9 exceeds buffer capacity 7"),
                      "%s", err.msg);
        }
    }
}

/* --- brute force vs exhaustive enumeration --- */

static int factor3(int n, int out[][3]) {
    int k = 0;
    for (int a = 1; a <= n; a++)
        if (n % a == 0)
            for (int b = 1; b <= n / a; b++)
                if ((n / a) % b == 0) out[k][0] = a, out[k][1] = b, out[k][2] = n / a / b, k++;
    return k;
}

Test(sched_model, bruteforce_equals_exhaustive_enumeration) {
    /* a 3-level machine: every valid table varies only LB, PE_X and DRAM, so the brute force
     * over those three rows must find the optimum over ALL valid tables */
    sched_accel a;
    builtin("tests/data/sched/tiny_3level.json", &a); /* a user file, loaded by path */
    cr_assert_str_eq(a.name, "tiny_3level");
    cr_assert(a.present[SR_LB] && a.present[SR_PEX] && a.present[SR_DRAM] && !a.present[SR_GB] && !a.present[SR_PEY]);
    sched_layer l = mklayer(1, 4, 1, 4, 3, 1, 4, 2, 1);
    for (int obj = SOBJ_ENERGY; obj <= SOBJ_EDP; obj++) {
        int opt[SCHED_NDIM][64][3], cnt[SCHED_NDIM];
        long combos = 1;
        for (int d = 0; d < SCHED_NDIM; d++) {
            cnt[d] = factor3(l.d[d], opt[d]);
            combos *= cnt[d];
        }
        double best = INFINITY;
        long valid = 0;
        sched_table t;
        sched_table_init(&l, &t);
        for (long k = 0; k < combos; k++) {
            long x = k;
            for (int d = 0; d < SCHED_NDIM; d++) {
                int i = (int)(x % cnt[d]);
                x /= cnt[d];
                t.f[SR_LB][d] = opt[d][i][0];
                t.f[SR_PEX][d] = opt[d][i][1];
                t.f[SR_DRAM][d] = opt[d][i][2];
            }
            sched_cost c;
            if (sched_evaluate(&a, &l, &t, &c, NULL)) continue;
            valid++;
            double o = sched_objective(&c, obj);
            if (o < best) best = o;
        }
        cr_assert_gt(valid, 100);
        int rows[3] = {SR_LB, SR_PEX, SR_DRAM};
        sched_cost bc;
        sched_bf_stats st;
        /* without the bound: scores exactly the valid tables */
        sched_table_init(&l, &t);
        sched_bruteforce_nobound(&a, &l, &t, 3, rows, obj, -1, &bc, &st);
        cr_assert_float_eq(sched_objective(&bc, obj), best, 1e-9 * best, "obj %d: brute force %g, exhaustive %g", obj,
                           sched_objective(&bc, obj), best);
        cr_assert_eq(sched_check(&a, &l, &t, NULL), 0);
        cr_assert_eq(st.leaves, valid, "leaves %lld valid %ld", st.leaves, valid);
        cr_assert_gt(st.pruned, 0);
        /* with branch and bound (the env's step): same optimum, fewer leaves */
        sched_table_init(&l, &t);
        sched_bruteforce(&a, &l, &t, 3, rows, obj, -1, &bc, &st);
        cr_assert_float_eq(sched_objective(&bc, obj), best, 1e-9 * best, "obj %d (bound): %g, exhaustive %g", obj,
                           sched_objective(&bc, obj), best);
        cr_assert_eq(sched_check(&a, &l, &t, NULL), 0);
        cr_assert_leq(st.leaves, valid);
    }
}

Test(sched_model, bruteforce_never_worse_and_stays_valid) {
    const char *acc[] = {"eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba"};
    sched_layer layers[] = {mklayer(1, 64, 1, 64, 3, 3, 14, 14, 1), mklayer(1, 3, 1, 32, 3, 3, 26, 26, 2),
                            mklayer(1, 1, 24, 1, 3, 3, 28, 28, 1)};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    for (int ai = 0; ai < 4; ai++) {
        sched_accel a;
        builtin(acc[ai], &a);
        for (int li = 0; li < 3; li++)
            for (int obj = SOBJ_ENERGY; obj <= SOBJ_EDP; obj++) {
                sched_table t;
                sched_table_init(&layers[li], &t);
                sched_cost c;
                sched_cost_eval(&a, &layers[li], &t, &c);
                double cur = sched_objective(&c, obj);
                int r = SR_DRAM, steps = 0;
                while (steps < 5) {
                    int act = (int)gsl_rng_uniform_int(rng, SCHED_NACT);
                    r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
                    if (!sched_action_valid(&a, act, r)) continue;
                    int rows[3];
                    int n = sched_action_rows(act, r, rows);
                    sched_bruteforce(&a, &layers[li], &t, n, rows, obj, -1, &c, NULL);
                    double o = sched_objective(&c, obj);
                    cr_assert_leq(o, cur, "%s layer %d obj %d got worse: %g > %g", acc[ai], li, obj, o, cur);
                    hw_err err;
                    cr_assert_eq(sched_check(&a, &layers[li], &t, &err), 0, "%s", err.msg);
                    sched_cost c2;
                    sched_cost_eval(&a, &layers[li], &t, &c2);
                    cr_assert_float_eq(sched_objective(&c2, obj), o, 1e-9 * o);
                    cur = o;
                    steps++;
                }
            }
    }
    gsl_rng_free(rng);
}

Test(sched_model, masks_hide_absent_levels) {
    sched_accel a;
    builtin("eyeriss_v1", &a);
    int present[SCHED_NROW] = {0, 0, 0, 1, 1, 1, 1, 0, 0, 1};
    for (int r = 0; r < SCHED_NROW; r++) cr_assert_eq(a.present[r], present[r], "row %s", sched_row_names[r]);
    for (int r = 0; r < SCHED_NROW; r++)
        for (int act = 0; act < SCHED_NACT; act++) {
            int rows[3];
            int n = sched_action_rows(act, r, rows);
            int ok = present[r];
            for (int i = 0; i < n; i++) {
                ok &= present[rows[i]];
                for (int j = i + 1; j < n; j++) ok &= rows[i] != rows[j];
            }
            cr_assert_eq(sched_action_valid(&a, act, r), ok, "act %d r %d", act, r);
        }
    /* simba has every level */
    builtin("simba", &a);
    for (int r = 0; r < SCHED_NROW; r++) cr_assert(a.present[r], "simba row %s", sched_row_names[r]);
    /* the brute force refuses absent or repeated rows */
    builtin("eyeriss_v1", &a);
    sched_layer l = mklayer(1, 4, 1, 4, 1, 1, 4, 4, 1);
    sched_table t, t0;
    sched_table_init(&l, &t);
    t0 = t;
    int bad1[2] = {SR_REG, SR_DRAM}, bad2[2] = {SR_DRAM, SR_DRAM};
    cr_assert_eq(sched_bruteforce(&a, &l, &t, 2, bad1, SOBJ_ENERGY, -1, NULL, NULL), -1);
    cr_assert_eq(sched_bruteforce(&a, &l, &t, 2, bad2, SOBJ_ENERGY, -1, NULL, NULL), -1);
    cr_assert_eq(memcmp(&t, &t0, sizeof t), 0);
    /* action encoding: 0-9 pairs [i, r]; 10 = [0,1,r], 54 = [8,9,r] */
    int rows[3];
    cr_assert_eq(sched_action_rows(3, 9, rows), 2);
    cr_assert(rows[0] == 3 && rows[1] == 9);
    cr_assert_eq(sched_action_rows(10, 5, rows), 3);
    cr_assert(rows[0] == 0 && rows[1] == 1 && rows[2] == 5);
    cr_assert_eq(sched_action_rows(54, 2, rows), 3);
    cr_assert(rows[0] == 8 && rows[1] == 9 && rows[2] == 2);
}

static void expect_json_error(const char *text, const char *field) {
    json_t *j = json_loads(text, 0, NULL);
    cr_assert(j, "bad test JSON %s", text);
    sched_accel a;
    hw_err err;
    cr_assert_eq(sched_accel_from_json(j, "config.accelerator", &a, &err), -1, "accepted %s", text);
    json_decref(j);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, field), "'%s' does not name %s", err.msg, field);
}

Test(sched_model, accelerator_json_errors_name_the_field) {
    expect_json_error("{\"local_buffer\":{\"W\":\"big\"}}", "config.accelerator.local_buffer.W: expected a number");
    expect_json_error("{\"local_buffer\":{\"W\":1}}", "config.accelerator.local_buffer.W: 1 bytes is less than one");
    expect_json_error("{\"pe_array\":{\"x\":14,\"z\":2}}", "config.accelerator.pe_array.z: unknown field");
    expect_json_error("{\"pe_array\":{\"x\":0}}", "config.accelerator.pe_array.x: 0 out of range");
    expect_json_error("{\"global_buffer\":{\"dataflow\":\"XS\",\"bytes\":10}}", "config.accelerator.global_buffer.dataflow");
    expect_json_error("{\"global_buffer\":{}}", "config.accelerator.global_buffer.bytes: required");
    expect_json_error("{\"global_buffer\":{\"bytes\":64,\"bypass\":[\"X\"]}}", "config.accelerator.global_buffer.bypass");
    expect_json_error("{\"chips\":3}", "config.accelerator.chips: expected an object");
    expect_json_error("{\"registers\":{}}", "config.accelerator.registers: needs at least one of I, W, O");
    expect_json_error("{\"word_bytes\":2.5}", "config.accelerator.word_bytes");
    expect_json_error("{\"mac\":{\"x\":2},\"colour\":1}", "config.accelerator.colour: unknown field");
    /* unknown names and files */
    sched_accel a;
    hw_err err;
    json_t *s = json_string("eyeriss_v9");
    cr_assert_eq(sched_accel_resolve(s, "config.accelerator", &a, &err), -1);
    json_decref(s);
    cr_assert(strstr(err.msg, "config.accelerator: unknown accelerator 'eyeriss_v9'"), "%s", err.msg);
    s = json_string("/nonexistent/acc.json");
    cr_assert_eq(sched_accel_resolve(s, "config.accelerator", &a, &err), -1);
    json_decref(s);
    cr_assert(strstr(err.msg, "config.accelerator") && strstr(err.msg, "/nonexistent/acc.json"), "%s", err.msg);
}

Test(sched_model, builtin_accelerators_match_shipped_files) {
    /* the embedded strings and envs/sched/accelerators/NAME.json must stay identical (the test
     * runs from the repository root, as `make test` does) */
    cr_assert_eq(sched_builtin_count(), 5);
    for (int i = 0; i < sched_builtin_count(); i++) {
        char path[128];
        snprintf(path, sizeof path, "envs/sched/accelerators/%s.json", sched_builtin_name(i));
        json_error_t je;
        json_t *f = json_load_file(path, 0, &je);
        cr_assert(f, "%s: %s (run from the repository root)", path, je.text);
        json_t *b = json_loads(sched_builtin_json(i), 0, &je);
        cr_assert(b, "builtin %s: %s", sched_builtin_name(i), je.text);
        cr_assert(json_equal(f, b), "%s differs from the embedded copy in sched_builtin.c", path);
        /* the file loads through the path form too */
        json_t *p = json_string(path);
        sched_accel a1, a2;
        hw_err err;
        cr_assert_eq(sched_accel_resolve(p, "acc", &a1, &err), 0, "%s", err.msg);
        json_decref(p);
        json_t *nm = json_string(sched_builtin_name(i));
        cr_assert_eq(sched_accel_resolve(nm, "acc", &a2, &err), 0, "%s", err.msg);
        json_decref(nm);
        cr_assert_eq(memcmp(&a1, &a2, sizeof a1), 0);
        json_decref(f);
        json_decref(b);
    }
    /* Table 4 figures */
    sched_accel a;
    builtin("tpu_v3", &a);
    cr_assert_eq(a.units[SR_PEX], 256);
    cr_assert_eq(a.units[SR_PEY], 128);
    cr_assert_float_eq(a.cap[SR_LB][ST_W], 32768, 0);
    cr_assert_float_eq(a.cap_shared[SR_GB], 32.0 * 1024 * 1024, 0);
    builtin("simba", &a);
    cr_assert_eq(a.units[SR_MACX] * a.units[SR_MACY], 64);
    cr_assert_eq(a.units[SR_CHX] * a.units[SR_CHY], 36);
}

Test(sched_model, baselines_are_valid_and_improve) {
    sched_layer l = mklayer(1, 64, 1, 128, 3, 3, 28, 28, 1);
    const char *acc[] = {"eyeriss_v1", "simba"};
    for (int ai = 0; ai < 2; ai++) {
        sched_accel a;
        builtin(acc[ai], &a);
        sched_table t0;
        sched_table_init(&l, &t0);
        sched_cost c0;
        sched_cost_eval(&a, &l, &t0, &c0);
        for (int b = 0; b < 3; b++) {
            sched_table t;
            sched_cost c, c2;
            hw_err err;
            cr_assert_eq(sched_baseline(&a, &l, b, 3, 300, SOBJ_ENERGY, &t, &c, &err), 0, "%s", err.msg);
            cr_assert_eq(sched_evaluate(&a, &l, &t, &c2, &err), 0, "%s %s: %s", acc[ai], sched_baseline_names[b], err.msg);
            cr_assert_float_eq(c2.energy_pj, c.energy_pj, 1e-9 * c.energy_pj);
            cr_assert_lt(c.energy_pj, 0.5 * c0.energy_pj, "%s %s: %g vs all-in-DRAM %g", acc[ai], sched_baseline_names[b],
                         c.energy_pj, c0.energy_pj);
        }
        /* random-pruned is deterministic for a seed */
        sched_table ta, tb;
        sched_cost ca, cb;
        sched_baseline(&a, &l, SBASE_RANDOM, 9, 200, SOBJ_ENERGY, &ta, &ca, NULL);
        sched_baseline(&a, &l, SBASE_RANDOM, 9, 200, SOBJ_ENERGY, &tb, &cb, NULL);
        cr_assert_eq(memcmp(&ta, &tb, sizeof ta), 0);
    }
}

/* Fidelity band against the paper's Table 5 (NeuroSpector column, copied into
 * tests/data/sched/paper_tables.json): our NeuroSpector-like bottom-up baseline on Eyeriss v1
 * lands within 3x of the published network energies for YOLOv3 and ResNet-50 (docs/sched.md
 * "Fidelity" lists every pair; MobileNet-v3 on TPU v3 is the known outlier). */
Test(sched_model, network_energy_within_3x_of_paper, .timeout = 60) {
    json_error_t je;
    json_t *ref = json_load_file("tests/data/sched/paper_tables.json", 0, &je);
    cr_assert(ref, "%s", je.text);
    sched_accel a;
    builtin("eyeriss_v1", &a);
    const char *models[] = {"resnet50"};
    for (int m = 0; m < 1; m++) {
        double paper = json_number_value(json_array_get(json_object_get(json_object_get(json_object_get(ref, "energy"), "eyeriss"), models[m]), 0));
        cr_assert_gt(paper, 0);
        sched_layer *L;
        hw_err err;
        int n = sched_model_layers(models[m], &L, &err);
        cr_assert_gt(n, 0, "%s", err.msg);
        double e = 0;
        for (int i = 0; i < n; i++) {
            sched_table t;
            sched_cost c;
            cr_assert_eq(sched_baseline(&a, &L[i], SBASE_BOTTOMUP, 0, 1, SOBJ_ENERGY, &t, &c, &err), 0, "%s", err.msg);
            e += c.energy_pj;
        }
        free(L);
        cr_assert(e > paper / 3 && e < paper * 3, "%s: ours %g pJ vs paper %g pJ", models[m], e, paper);
    }
    json_decref(ref);
}

/* The branch-and-bound lower bound must never cut the optimum: compare with the unbounded
 * search on real layers, every built-in accelerator, every objective, random 2- and 3-row
 * actions: the same objective and the same table (ties keep the first table found). */
Test(sched_model, branch_and_bound_is_exact, .timeout = 120) {
    sched_layer layers[] = {mklayer(1, 32, 1, 64, 3, 3, 14, 14, 1), mklayer(1, 3, 1, 16, 3, 3, 20, 20, 2),
                            mklayer(1, 1, 32, 1, 3, 3, 14, 14, 1), mklayer(2, 96, 1, 24, 1, 1, 7, 7, 1),
                            mklayer(1, 64, 1, 64, 1, 1, 14, 14, 1), mklayer(1, 32, 1, 64, 1, 1, 7, 7, 2),
                            mklayer(2, 256, 1, 100, 1, 1, 1, 1, 1)};
    int nl = (int)(sizeof layers / sizeof layers[0]);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    long long lb = 0, lnb = 0;
    for (int ai = 0; ai < sched_builtin_count(); ai++) {
        sched_accel a;
        builtin(sched_builtin_name(ai), &a);
        for (int li = 0; li < nl; li++)
            for (int obj = SOBJ_ENERGY; obj <= SOBJ_EDP; obj++) {
                sched_table t;
                sched_table_init(&layers[li], &t);
                for (int steps = 0; steps < 2;) {
                    int act = (int)gsl_rng_uniform_int(rng, SCHED_NACT);
                    int r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
                    if (!sched_action_valid(&a, act, r)) continue;
                    int rows[3];
                    int n = sched_action_rows(act, r, rows);
                    sched_table t1 = t, t2 = t;
                    sched_cost c1, c2;
                    sched_bf_stats s1, s2;
                    sched_bruteforce(&a, &layers[li], &t1, n, rows, obj, -1, &c1, &s1);
                    sched_bruteforce_nobound(&a, &layers[li], &t2, n, rows, obj, -1, &c2, &s2);
                    double o1 = sched_objective(&c1, obj), o2 = sched_objective(&c2, obj);
                    cr_assert_eq(o1, o2, "%s layer %d obj %d act %d r %d: bound %.17g, exhaustive %.17g", a.name, li, obj,
                                 act, r, o1, o2);
                    cr_assert(!memcmp(t1.f, t2.f, sizeof t1.f), "%s layer %d obj %d act %d: another table", a.name, li,
                              obj, act);
                    lb += s1.leaves;
                    lnb += s2.leaves;
                    t = t2;
                    steps++;
                }
            }
    }
    cr_assert_lt(lb * 2, lnb, "the bound cut too little (%lld vs %lld leaves)", lb, lnb);
    gsl_rng_free(rng);
}

/* The bound itself (tl_eval_bound, sched_tl.h) against the tables it bounds: for a valid table T,
 * a 3-row action and any set of columns taken out of the selected rows (the partial table the
 * search holds while those columns are unassigned), the bound must not exceed T's energy or DRAM
 * words, because T is one of its completions. */
Test(sched_model, bound_never_above_a_completion, .timeout = 120) {
    sched_layer layers[] = {mklayer(1, 64, 1, 64, 1, 1, 14, 14, 1), mklayer(1, 32, 1, 32, 3, 3, 14, 14, 1),
                            mklayer(1, 16, 1, 32, 3, 3, 7, 7, 2),    mklayer(1, 32, 1, 64, 1, 1, 7, 7, 2),
                            mklayer(1, 1, 32, 1, 3, 3, 14, 14, 1),   mklayer(2, 256, 1, 100, 1, 1, 1, 1, 1)};
    int nl = (int)(sizeof layers / sizeof layers[0]);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 26);
    long checked = 0, per_mac = 0;
    for (int ai = 0; ai < sched_builtin_count(); ai++) {
        sched_accel a;
        builtin(sched_builtin_name(ai), &a);
        for (int li = 0; li < nl; li++)
            for (int rep = 0; rep < 12; rep++) {
                /* a valid table with factors spread over the levels: random two-row steps */
                sched_table t;
                sched_table_init(&layers[li], &t);
                for (int s = 0; s < 6;) {
                    int act = (int)gsl_rng_uniform_int(rng, 10), r = (int)gsl_rng_uniform_int(rng, SCHED_NROW), rows[3];
                    if (!sched_action_valid(&a, act, r)) continue;
                    int n = sched_action_rows(act, r, rows);
                    sched_bruteforce(&a, &layers[li], &t, n, rows, (int)gsl_rng_uniform_int(rng, 3), -1, NULL, NULL);
                    s++;
                }
                cr_assert_eq(sched_check(&a, &layers[li], &t, NULL), 0);
                sched_cost full;
                sched_cost_eval(&a, &layers[li], &t, &full);
                double dram = 0;
                for (int ten = 0; ten < SCHED_NT; ten++) dram += full.access[SR_DRAM][ten];
                int act, r, rows[3];
                do act = 10 + (int)gsl_rng_uniform_int(rng, SCHED_NACT - 10), r = (int)gsl_rng_uniform_int(rng, SCHED_NROW);
                while (!sched_action_valid(&a, act, r));
                int n = sched_action_rows(act, r, rows);
                for (int sub = 0; sub < 8; sub++) {
                    sched_table p = t;
                    tl_bound_in b = {{1, 1, 1}, 1, 1, 0};
                    for (int d = 0; d < SCHED_NDIM; d++) {
                        if (gsl_rng_uniform_int(rng, 2)) continue;
                        int prod = 1;
                        for (int i = 0; i < n; i++) prod *= t.f[rows[i]][d], p.f[rows[i]][d] = 1;
                        b.all *= prod;
                        for (int ten = 0; ten < SCHED_NT; ten++) b.mul[ten] *= sched_bound_mul(&layers[li], ten, d, prod);
                    }
                    tl_spec s;
                    sched_tl_from_table(&a, &layers[li], &p, &s);
                    for (int i = 0; i < n; i++)
                        if (s.rowsp[rows[i]] && s.rowlvl[rows[i]] >= 0) b.fan |= 1u << s.rowlvl[rows[i]];
                    double out[4], weak[4];
                    tl_eval_bound(&s, &b, out);
                    cr_assert_leq(out[0], full.energy_pj * (1 + 1e-12), "%s layer %d rows %d %d %d: bound %.17g > %.17g",
                                  a.name, li, rows[0], rows[1], rows[2], out[0], full.energy_pj);
                    cr_assert_leq(out[3], dram * (1 + 1e-12), "%s layer %d: DRAM bound %g > %g", a.name, li, out[3], dram);
                    /* the per-MAC terms: off when every level may fan out */
                    b.fan = ~0u;
                    tl_eval_bound(&s, &b, weak);
                    cr_assert_leq(weak[0], out[0] * (1 + 1e-12));
                    per_mac += out[0] > weak[0] * (1 + 1e-9);
                    checked++;
                }
            }
    }
    gsl_rng_free(rng);
    /* not vacuous: the per-MAC terms tightened a good share of the bounds checked */
    cr_assert_gt(per_mac, checked / 10, "per-MAC terms tightened %ld of %ld bounds", per_mac, checked);
}
