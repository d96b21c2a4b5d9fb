/* dram-v0 through the env vtable: spaces, reward (Eq. 1), action forms, seeds, snapshots,
 * evaluate() and config errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../common/hwtest.h"
#include "../common/hwtest_env.h"
#include "dram/dram_model.h"
#include "registry.h"

static void *mk(const char *cfg_text, const hw_env_family **f) { return hwtest_env_make("dram-v0", cfg_text, f); }

static void mk_err(const char *cfg_text, const char *needle) { hwtest_env_refuses("dram-v0", cfg_text, needle); }

#define SMALL "\"count\":2000"

Test(dram_env, spaces_have_names_and_labels) {
    const hw_env_family *f;
    void *env = mk("{" SMALL "}", &f);
    const hw_space *a = f->action_space(env);
    cr_assert_eq(a->type, HW_SPACE_MULTIDISCRETE);
    cr_assert_eq(hw_space_numel(a), 10);
    cr_assert_str_eq(a->names[0], "PagePolicy");
    cr_assert_str_eq(a->names[9], "MaxActiveTransactions");
    cr_assert_eq(a->nvec[0], 4);
    cr_assert_eq(a->nvec[1], 3);
    cr_assert_eq(a->nvec[3], 8);
    cr_assert_str_eq(a->labels[0][2], "Closed");
    cr_assert_str_eq(a->labels[9][7], "128");
    cr_assert_str_eq(a->labels[6][0], "1"); /* paper: RefreshMaxPostponed 1..8 */
    const hw_space *o = f->observation_space(env);
    cr_assert_eq(hw_space_numel(o), 3);
    cr_assert_str_eq(o->names[0], "latency_ns");
    cr_assert_str_eq(o->names[1], "power_mW");
    cr_assert_str_eq(o->names[2], "energy_pJ");
    f->destroy(env);
    env = mk("{" SMALL ",\"ranges\":\"archgym\",\"latency_metric\":\"total_time\"}", &f);
    a = f->action_space(env);
    cr_assert_str_eq(a->labels[3][7], "128"); /* ArchGym RequestBufferSize 1..128 */
    cr_assert_eq(a->nvec[6], 4);
    cr_assert_str_eq(f->observation_space(env)->names[0], "total_time_ns");
    /* ArchGym's scheduler_mapper order: {0: Fifo, 1: FrFcfsGrp, 2: FrFcfs}; index 1 simulates FrFcfsGrp */
    cr_assert_str_eq(a->labels[1][0], "Fifo");
    cr_assert_str_eq(a->labels[1][1], "FrFcfsGrp");
    cr_assert_str_eq(a->labels[1][2], "FrFcfs");
    json_t *pt = json_pack("[iiiiiiiiii]", 0, 1, 0, 3, 0, 1, 0, 0, 0, 7), *m = json_object();
    double rew;
    hw_err err;
    cr_assert_eq(f->evaluate(env, pt, &rew, m, &err), 0, "%s", err.msg);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "config"), "Scheduler")), "FrFcfsGrp");
    json_decref(pt);
    json_decref(m);
    f->destroy(env);
    env = mk("{" SMALL "}", &f);
    cr_assert_str_eq(f->action_space(env)->labels[1][1], "FrFcfs"); /* the paper's Table 1 order */
    f->destroy(env);
}

Test(dram_env, step_reward_is_eq1) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"objective\":\"latency\",\"targets\":{\"latency\":30,\"power\":400,\"energy\":1e8}}", &f);
    hw_obs obs;
    uint64_t seed = 1;
    cr_assert_eq(f->reset(env, &seed, NULL, &obs, NULL, NULL), 0);
    int64_t a[10] = {0, 1, 0, 7, 0, 1, 0, 0, 0, 7};
    hw_act act = {10, a, NULL};
    hw_step_out out;
    json_t *info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
    const double *o = out.obs.arr[0].data;
    cr_assert_gt(o[0], 0);
    cr_assert_gt(o[1], 0);
    cr_assert_gt(o[2], 0);
    cr_assert_float_eq(out.reward, 30.0 / fabs(30.0 - o[0]), 1e-9);
    cr_assert_float_eq(o[0], json_real_value(json_object_get(info, "avg_latency_ns")), 1e-12);
    cr_assert_float_eq(o[1], json_real_value(json_object_get(info, "power_mW")), 1e-12);
    cr_assert_float_eq(o[2], json_real_value(json_object_get(info, "energy_pJ")), 1e-12);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(info, "config"), "PagePolicy")), "Open");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(info, "config"), "RequestBufferSize")), 8);
    json_decref(info);
    f->destroy(env);
    /* joint = r_power * r_latency */
    env = mk("{" SMALL ",\"objective\":\"joint\",\"targets\":{\"latency\":30,\"power\":400}}", &f);
    f->reset(env, &seed, NULL, &obs, NULL, NULL);
    f->step(env, &act, &out, NULL, NULL);
    o = out.obs.arr[0].data;
    cr_assert_float_eq(out.reward, 30.0 / fabs(30 - o[0]) * 400.0 / fabs(400 - o[1]), 1e-9);
    f->destroy(env);
}

Test(dram_env, exact_hit_is_capped) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"objective\":\"power\"}", &f);
    json_t *pt = json_loads("{}", 0, NULL);
    json_t *m = json_object();
    double r;
    cr_assert_eq(f->evaluate(env, pt, &r, m, NULL), 0);
    double p = json_real_value(json_object_get(m, "power_mW"));
    f->destroy(env);
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{" SMALL ",\"objective\":\"power\",\"reward_cap\":77,\"targets\":{\"power\":%.17g}}", p);
    env = mk(cfg, &f);
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
    cr_assert_float_eq(r, 77, 1e-12);
    cr_assert(isfinite(r));
    json_decref(pt);
    json_decref(m);
    f->destroy(env);
}

Test(dram_env, same_seed_same_result_and_seed_drives_trace) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"workload\":\"random\"}", &f);
    hw_obs obs;
    int64_t a[10] = {1, 2, 1, 3, 1, 1, 2, 2, 1, 4};
    hw_act act = {10, a, NULL};
    hw_step_out o1, o2, o3;
    double v1[3], v2[3], v3[3];
    uint64_t s = 42;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o1, NULL, NULL);
    memcpy(v1, o1.obs.arr[0].data, sizeof v1);
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o2, NULL, NULL);
    memcpy(v2, o2.obs.arr[0].data, sizeof v2);
    cr_assert_eq(memcmp(v1, v2, sizeof v1), 0, "same seed + action must be bit-identical");
    cr_assert_eq(o1.reward, o2.reward);
    s = 43;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o3, NULL, NULL);
    memcpy(v3, o3.obs.arr[0].data, sizeof v3);
    cr_assert_neq(memcmp(v1, v3, sizeof v1), 0, "another seed gives another random trace");
    f->destroy(env);
    /* a fixed trace_seed makes the trace independent of the reset seed */
    env = mk("{" SMALL ",\"workload\":\"random\",\"trace_seed\":5}", &f);
    s = 1;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o1, NULL, NULL);
    memcpy(v1, o1.obs.arr[0].data, sizeof v1);
    s = 2;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o2, NULL, NULL);
    cr_assert_eq(memcmp(v1, o2.obs.arr[0].data, sizeof v1), 0);
    f->destroy(env);
}

Test(dram_env, snapshot_restore_is_exact) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"workload\":\"mixed\",\"episode_length\":4}", &f);
    hw_obs obs;
    uint64_t s = 9;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    int64_t a[10] = {2, 0, 2, 1, 0, 1, 3, 3, 2, 2};
    hw_act act = {10, a, NULL};
    hw_step_out o1, o2;
    f->step(env, &act, &o1, NULL, NULL);
    void *snap = f->snapshot(env, NULL);
    /* move on: new episode with another seed (another trace) */
    s = 10;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    f->step(env, &act, &o2, NULL, NULL);
    cr_assert_eq(f->restore(env, snap, NULL), 0);
    hw_step_out r1, r2;
    f->step(env, &act, &r1, NULL, NULL);
    double x1[3];
    memcpy(x1, r1.obs.arr[0].data, sizeof x1);
    cr_assert_eq(f->restore(env, snap, NULL), 0);
    f->step(env, &act, &r2, NULL, NULL);
    cr_assert_eq(memcmp(x1, r2.obs.arr[0].data, sizeof x1), 0);
    cr_assert_float_eq(x1[0], ((double *)o1.obs.arr[0].data)[0], 0); /* same trace as before the snapshot */
    cr_assert_eq(r2.terminated, false);
    cr_assert_eq(r2.truncated, false);
    f->snapshot_free(snap);
    f->destroy(env);
}

Test(dram_env, tdm_rewards_at_the_end) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"action_space\":\"tdm\",\"episode_length\":1}", &f);
    const hw_space *a = f->action_space(env);
    cr_assert_eq(a->type, HW_SPACE_DISCRETE);
    cr_assert_eq(a->n, 8);
    cr_assert_eq(hw_space_numel(f->observation_space(env)), 4);
    hw_obs obs;
    uint64_t s = 3;
    f->reset(env, &s, NULL, &obs, NULL, NULL);
    int64_t choice[10] = {2, 0, 0, 7, 0, 1, 0, 0, 0, 7};
    hw_step_out out;
    for (int k = 0; k < 10; k++) {
        hw_act act = {1, &choice[k], NULL};
        cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
        const double *o = out.obs.arr[0].data;
        if (k < 9) {
            cr_assert_eq(out.reward, 0);
            cr_assert_eq(out.terminated || out.truncated, false);
            cr_assert_eq(o[3], k + 1);
        }
    }
    cr_assert_gt(out.reward, 0);
    cr_assert(out.truncated && !out.terminated, "the horizon (episode_length designs) is a time limit");
    /* same design through evaluate gives the same reward */
    json_t *pt = json_loads("[2,0,0,7,0,1,0,0,0,7]", 0, NULL);
    double r;
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
    cr_assert_float_eq(r, out.reward, 1e-12);
    json_decref(pt);
    hw_act act = {1, &choice[0], NULL};
    hw_err err;
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    f->destroy(env);
}

Test(dram_env, box_bins_like_archgym_sa) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"action_space\":\"box\"}", &f);
    const hw_space *a = f->action_space(env);
    cr_assert_eq(a->type, HW_SPACE_BOX);
    cr_assert_eq(hw_space_numel(a), 10);
    /* -1 -> first choice, +1 -> last, 0.1 -> bin floor(1.1/2 * n) */
    json_t *pt = json_loads("[0.1, -1, -1, 1, -1, 1, -1, -1, -1, 1]", 0, NULL);
    json_t *m = json_object();
    double r;
    cr_assert_eq(f->evaluate(env, pt, &r, m, NULL), 0);
    json_t *c = json_object_get(m, "config");
    cr_assert_str_eq(json_string_value(json_object_get(c, "PagePolicy")), "Closed"); /* floor(0.55*4) = 2 */
    cr_assert_eq(json_integer_value(json_object_get(c, "RequestBufferSize")), 8);
    cr_assert_str_eq(json_string_value(json_object_get(c, "Scheduler")), "Fifo");
    cr_assert_eq(json_integer_value(json_object_get(c, "MaxActiveTransactions")), 128);
    json_decref(pt);
    json_decref(m);
    hw_obs obs;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    double x[10] = {0.1, -1, -1, 1, -1, 1, -1, -1, -1, 1};
    hw_act act = {10, NULL, x};
    hw_step_out out;
    cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
    f->destroy(env);
}

Test(dram_env, evaluate_named_object_reports_everything) {
    const hw_env_family *f;
    void *env = mk("{" SMALL ",\"latency_metric\":\"total_time\"}", &f);
    json_t *pt = json_loads("{\"PagePolicy\":\"Closed\",\"Scheduler\":\"FrFcfs\",\"RequestBufferSize\":4,"
                            "\"Arbiter\":\"Fifo\",\"MaxActiveTransactions\":16,\"RefreshMaxPostponed\":0}", 0, NULL);
    json_t *m = json_object();
    double r;
    hw_err err;
    cr_assert_eq(f->evaluate(env, pt, &r, m, &err), 0, "%s", err.msg);
    static const char *const keys[] = {"total_time_ns", "avg_latency_ns", "p99_latency_ns", "p99_read_latency_ns",
                                       "bandwidth_GBps", "energy_pJ", "power_mW", "commands", "row_hit_rate",
                                       "energy_breakdown_pJ", "feasible", "latency", "reward", NULL};
    for (int i = 0; keys[i]; i++) cr_assert(json_object_get(m, keys[i]), "metric %s missing", keys[i]);
    cr_assert_float_eq(json_real_value(json_object_get(m, "latency")), json_real_value(json_object_get(m, "total_time_ns")), 0);
    json_t *cmds = json_object_get(m, "commands");
    cr_assert_eq(json_integer_value(json_object_get(cmds, "RD")) + json_integer_value(json_object_get(cmds, "WR")), 0);
    cr_assert_eq(json_integer_value(json_object_get(cmds, "RDA")) + json_integer_value(json_object_get(cmds, "WRA")), 2000);
    cr_assert_eq(json_real_value(json_object_get(m, "row_hit_rate")), 0);
    json_decref(pt);
    json_decref(m);
    /* errors name the parameter */
    pt = json_loads("{\"PagePolicy\":\"Half\"}", 0, NULL);
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, &err), -1);
    cr_assert(strstr(err.msg, "point.PagePolicy"), "%s", err.msg);
    json_decref(pt);
    pt = json_loads("{\"Banks\":3}", 0, NULL);
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, &err), -1);
    cr_assert(strstr(err.msg, "point.Banks"), "%s", err.msg);
    json_decref(pt);
    pt = json_loads("[0,0,0,8,0,0,0,0,0,0]", 0, NULL);
    cr_assert_eq(f->evaluate(env, pt, &r, NULL, &err), -1);
    cr_assert(strstr(err.msg, "RequestBufferSize"), "%s", err.msg);
    json_decref(pt);
    f->destroy(env);
}

Test(dram_env, step_before_reset_fails) {
    const hw_env_family *f;
    void *env = mk("{" SMALL "}", &f);
    int64_t a[10] = {0};
    hw_act act = {10, a, NULL};
    hw_step_out out;
    hw_err err;
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    f->destroy(env);
}

Test(dram_env, bad_configs_name_the_field) {
    mk_err("{\"bogus\":1}", "config.bogus");
    mk_err("{\"objective\":\"speed\"}", "config.objective");
    mk_err("{\"memspec\":\"DDR5-6400\"}", "memspec");
    mk_err("{\"targets\":{\"latency\":-1}}", "config.targets");
    mk_err("{\"targets\":{\"area\":1}}", "config.targets");
    mk_err("{\"workload\":\"file\"}", "config.trace_file");
    mk_err("{\"workload\":\"file\",\"trace_file\":\"/nonexistent.stl\"}", "config.trace_file");
    mk_err("{\"address_mapping\":{\"ROW_BIT\":[1]}}", "addressmapping");
    mk_err("{\"memspec\":{\"memoryType\":\"DDR4\"}}", "memspec.memarchitecturespec");
    mk_err("{\"count\":0}", "config.count");
}

Test(dram_env, ddr3_and_shipped_trace_file) {
    const hw_env_family *f;
    char path[1024], cfg[1200];
    cr_assert(hwtest_repo_file("envs/dram/data/stream_10k.stl", path, sizeof path));
    snprintf(cfg, sizeof cfg, "{\"memspec\":\"DDR3-1600\",\"workload\":\"file\",\"trace_file\":\"%s\"}", path);
    void *env = mk(cfg, &f);
    json_t *pt = json_loads("{}", 0, NULL);
    json_t *m = json_object();
    double r;
    hw_err err;
    cr_assert_eq(f->evaluate(env, pt, &r, m, &err), 0, "%s", err.msg);
    cr_assert_eq(json_integer_value(json_object_get(m, "n_requests")), 10000);
    cr_assert_str_eq(json_string_value(json_object_get(m, "memspec")), "MICRON_1Gb_DDR3-1600_8bit_G");
    json_decref(pt);
    json_decref(m);
    f->destroy(env);
}

Test(dram_env, shipped_traces_equal_the_generators) {
    /* envs/dram/data/{stream,random}_10k.stl are the built-in generators' output for seed 1 */
    const char *files[2] = {"envs/dram/data/stream_10k.stl", "envs/dram/data/random_10k.stl"};
    for (int k = 0; k < 2; k++) {
        dram_trace a, b;
        dram_trace_init(&a, 1200);
        hw_err err;
        char path[1024];
        cr_assert(hwtest_repo_file(files[k], path, sizeof path), "%s missing", files[k]);
        cr_assert_eq(dram_trace_load(path, &a, &err), 0, "%s", err.msg);
        dram_gen g = {k ? DRAM_GEN_RANDOM : DRAM_GEN_STREAM, 10000, 2.0 / 3, 0, 1ULL << 30, 16, 1, 0.5, 1200};
        dram_trace_init(&b, 1200);
        dram_generate(&g, &b);
        cr_assert_eq(a.n, b.n);
        cr_assert_eq(memcmp(a.addr, b.addr, (size_t)a.n * 8), 0);
        cr_assert_eq(memcmp(a.write, b.write, (size_t)a.n), 0);
        cr_assert_eq(memcmp(a.cycle, b.cycle, (size_t)a.n * 8), 0);
        dram_trace_free(&a);
        dram_trace_free(&b);
    }
}

Test(dram_env, shipped_memspec_files_equal_the_builtins) {
    const char *files[2] = {"envs/dram/data/memspecs/JEDEC_4Gb_DDR4-2400_8bit_A.json",
                            "envs/dram/data/memspecs/MICRON_1Gb_DDR3-1600_8bit_G.json"};
    const char *names[2] = {"DDR4-2400", "DDR3-1600"};
    for (int k = 0; k < 2; k++) {
        char path[1024], cfg[1200];
        cr_assert(hwtest_repo_file(files[k], path, sizeof path), "%s missing", files[k]);
        json_t *j = json_load_file(path, 0, NULL);
        cr_assert(j);
        dram_memspec a, b;
        hw_err err;
        cr_assert_eq(dram_memspec_from_json(j, &a, &err), 0, "%s", err.msg);
        json_decref(j);
        cr_assert_eq(dram_memspec_builtin(names[k], &b, &err), 0);
        cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "%s differs from the built-in %s", files[k], names[k]);
        /* and the env takes it as memspec_file */
        snprintf(cfg, sizeof cfg, "{\"memspec_file\":\"%s\",\"count\":500}", path);
        const hw_env_family *f;
        void *env = mk(cfg, &f);
        f->destroy(env);
    }
}

/* ArchGym DRAM-Gym style traces: all reads, one per cycle (read_ratio 1, interval 1 by default) */
Test(dram_env, archgym_style_workloads) {
    const char *wl[] = {"archgym_stream", "archgym_random"};
    for (int i = 0; i < 2; i++) {
        char cfg[160];
        snprintf(cfg, sizeof cfg, "{\"count\":500,\"workload\":\"%s\",\"trace_seed\":1}", wl[i]);
        const hw_env_family *f;
        void *env = mk(cfg, &f);
        json_t *pt = json_pack("[iiiiiiiiii]", 0, 1, 0, 3, 0, 1, 0, 0, 0, 7), *m = json_object();
        double rew;
        hw_err err;
        cr_assert_eq(f->evaluate(env, pt, &rew, m, &err), 0, "%s", err.msg);
        cr_assert_eq(json_integer_value(json_object_get(m, "n_reads")), 500, "%s", wl[i]);
        cr_assert_eq(json_integer_value(json_object_get(m, "n_writes")), 0, "%s", wl[i]);
        /* one request per cycle: 500 requests cannot finish before 500 trace cycles (833 ps each) */
        cr_assert_geq(json_real_value(json_object_get(m, "total_time_ns")), 499 * 0.833, "%s", wl[i]);
        json_decref(pt);
        json_decref(m);
        f->destroy(env);
    }
}
