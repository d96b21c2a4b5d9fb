/* sched-v0 through the env vtable: spaces, masks, rewards and penalty, episodes, network mode,
 * evaluate(), snapshots, config errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hw_codec.h"
#include "registry.h"
#include "sched/sched.h"

static void *mk(const char *cfg_text, const hw_env_family **f) {
    json_error_t je;
    json_t *cfg = cfg_text ? json_loads(cfg_text, 0, &je) : NULL;
    if (cfg_text) cr_assert(cfg, "bad test JSON: %s", je.text);
    hw_err err;
    void *env = hw_env_create("sched-v0", cfg, f, &err);
    json_decref(cfg);
    cr_assert(env, "create failed: %s", err.msg);
    return env;
}

static void bad_config(const char *cfg_text, const char *field) {
    json_t *cfg = json_loads(cfg_text, 0, NULL);
    cr_assert(cfg);
    hw_err err;
    void *env = hw_env_create("sched-v0", cfg, NULL, &err);
    json_decref(cfg);
    cr_assert_null(env, "accepted %s", cfg_text);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, field), "'%s' does not name %s", err.msg, field);
}

static int mask_at(json_t *info, int a) { return (int)json_integer_value(json_array_get(json_object_get(info, "action_mask"), (size_t)a)); }

static int first_valid(json_t *info, int from_multi) {
    for (int a = from_multi ? 10 : 0; a < SCHED_NACT; a++)
        if (mask_at(info, a)) return a;
    return -1;
}

Test(sched_env, spaces_and_mask) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"eyeriss_v1\"}", &f);
    const hw_space *as = f->action_space(env);
    cr_assert_eq(as->type, HW_SPACE_DISCRETE);
    cr_assert_eq(as->n, 55);
    const hw_space *os = f->observation_space(env);
    cr_assert_eq(os->type, HW_SPACE_BOX);
    cr_assert_eq(hw_space_numel(os), 80 + 10 + 9 + 2);
    hw_obs obs;
    json_t *info = json_object();
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, info, NULL), 0);
    /* Eyeriss v1 has LB, PE_X, PE_Y, GB, DRAM; r starts at LB: 4 pairs + C(4,2) triples */
    cr_assert_str_eq(json_string_value(json_object_get(info, "row")), "LB");
    int n = 0;
    for (int a = 0; a < SCHED_NACT; a++) n += mask_at(info, a);
    cr_assert_eq(n, 4 + 6);
    cr_assert_eq(mask_at(info, SR_REG), 0);
    cr_assert_eq(mask_at(info, SR_LB), 0); /* i == r */
    cr_assert_eq(mask_at(info, SR_PEX), 1);
    /* initial observation: everything in DRAM -> table row DRAM is 1 for every dim > 1 */
    const float *o = obs.arr[0].data;
    cr_assert_float_eq(o[SR_DRAM * SCHED_NDIM + SD_K], 1.0f, 1e-6);
    cr_assert_float_eq(o[SR_LB * SCHED_NDIM + SD_K], 0.0f, 1e-6);
    cr_assert_float_eq(o[80 + SR_LB], 1.0f, 1e-6);
    cr_assert_float_eq(o[99], 1.0f, 1e-6); /* energy ratio */
    json_decref(info);
    f->destroy(env);
}

Test(sched_env, step_improves_and_r_moves_on) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"eyeriss_v1\",\"steps_per_layer\":4,\"objective\":\"energy\"}", &f);
    hw_obs obs;
    json_t *info = json_object();
    f->step(env, &(hw_act){1, (int64_t[]){0}, NULL}, &(hw_step_out){0}, NULL, NULL); /* before reset: error */
    f->reset(env, NULL, NULL, &obs, info, NULL);
    double e0 = json_real_value(json_object_get(info, "energy_pj"));
    json_decref(info);
    /* [DRAM, LB] with r = LB: moves tiles from DRAM into the LB */
    int64_t a = SR_DRAM;
    hw_act act = {1, &a, NULL};
    hw_step_out out;
    info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
    double e1 = json_real_value(json_object_get(info, "energy_pj"));
    cr_assert_lt(e1, e0);
    cr_assert_float_eq(out.reward, (e0 - e1) / e0, 1e-9);
    cr_assert_str_eq(json_string_value(json_object_get(info, "row")), "PE_X");
    cr_assert(!out.terminated && !out.truncated);
    json_decref(info);
    for (int i = 0; i < 3; i++) {
        info = json_object();
        a = first_valid(info, 0);
        json_decref(info);
        a = SR_DRAM;
        cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
    }
    cr_assert(out.truncated && !out.terminated, "the step budget is a time limit: truncated");
    hw_err err;
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    f->destroy(env);
}

Test(sched_env, penalty_for_consecutive_multirow_actions_without_gain) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"eyeriss_v1\",\"penalty\":0.5}", &f);
    hw_obs obs;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    /* triples that leave DRAM out touch only 1s at the start: no gain possible */
    int64_t a;
    hw_act act = {1, &a, NULL};
    hw_step_out out;
    /* r = LB: [PE_X, PE_Y, LB] (pair index of (4,5)) */
    int rows[3];
    int found = -1;
    for (int k = 10; k < SCHED_NACT; k++) {
        sched_action_rows(k, 0, rows);
        if (rows[0] == SR_PEX && rows[1] == SR_PEY) found = k;
    }
    cr_assert_geq(found, 10);
    a = found;
    cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
    cr_assert_float_eq(out.reward, -0.5, 1e-12);
    /* r = PE_X now: [LB, GB, PE_X], still all ones -> second consecutive: -2 * 0.5 */
    for (int k = 10; k < SCHED_NACT; k++) {
        sched_action_rows(k, 0, rows);
        if (rows[0] == SR_LB && rows[1] == SR_GB) found = k;
    }
    a = found;
    cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
    cr_assert_float_eq(out.reward, -1.0, 1e-12);
    /* a pair action resets the count; with no gain a pair costs nothing */
    a = SR_GB; /* [GB, PE_Y] */
    cr_assert_eq(f->step(env, &act, &out, NULL, NULL), 0);
    cr_assert_float_eq(out.reward, 0.0, 1e-12);
    /* a masked action is a no-op with -penalty */
    a = SR_REG;
    json_t *info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
    cr_assert_float_eq(out.reward, -0.5, 1e-12);
    cr_assert(json_is_true(json_object_get(info, "invalid_action")));
    json_decref(info);
    f->destroy(env);
}

Test(sched_env, network_mode_walks_layers) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"simba\",\"mode\":\"network\",\"steps_per_layer\":3,\"layers\":["
                   "{\"name\":\"a\",\"C\":16,\"K\":32,\"R\":3,\"S\":3,\"P\":14,\"Q\":14},"
                   "{\"name\":\"b\",\"C\":32,\"K\":64,\"P\":7,\"Q\":7}]}",
                   &f);
    hw_obs obs;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    int64_t a = SR_DRAM;
    hw_act act = {1, &a, NULL};
    hw_step_out out;
    int steps = 0, layer1_seen = 0;
    double net = 0, layer0_final = -1, en = 0;
    for (;;) {
        json_t *info = json_object();
        /* [DRAM, r]; when r is DRAM the action is masked (a no-op), which is fine here */
        a = SR_DRAM;
        cr_assert_eq(f->step(env, &act, &out, info, NULL), 0);
        if (json_integer_value(json_object_get(info, "layer")) == 1) layer1_seen = 1;
        net = json_real_value(json_object_get(info, "network_energy_pj"));
        en = json_real_value(json_object_get(info, "energy_pj"));
        if (json_object_get(info, "finished_layer")) layer0_final = net - en; /* finished + layer 1's initial */
        json_decref(info);
        steps++;
        cr_assert(!out.terminated);
        if (out.truncated) break;
        cr_assert_lt(steps, 10);
    }
    cr_assert_eq(steps, 6);
    cr_assert(layer1_seen);
    cr_assert_gt(layer0_final, 0);
    /* the final total is layer 0's final energy plus layer 1's, each counted once */
    cr_assert_float_eq(net, layer0_final + en, 1e-9 * net);
    /* the network baseline sums both layers */
    json_t *pt = json_pack("{s:s}", "baseline", "top-down");
    json_t *m = json_object();
    double r;
    hw_err err;
    cr_assert_eq(f->evaluate(env, pt, &r, m, &err), 0, "%s", err.msg);
    cr_assert_eq(json_array_size(json_object_get(m, "layers")), 2);
    double e0 = json_real_value(json_object_get(json_array_get(json_object_get(m, "layers"), 0), "energy_pj"));
    double e1 = json_real_value(json_object_get(json_array_get(json_object_get(m, "layers"), 1), "energy_pj"));
    cr_assert_float_eq(json_real_value(json_object_get(m, "energy_pj")), e0 + e1, 1e-6 * (e0 + e1));
    cr_assert_gt(r, 0);
    json_decref(pt);
    json_decref(m);
    f->destroy(env);
}

Test(sched_env, evaluate_tables_and_baselines) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"eyeriss_v1\",\"layer\":{\"C\":64,\"K\":64,\"R\":3,\"S\":3,\"P\":56,\"Q\":56}}", &f);
    /* the all-in-DRAM table: reward log(1) = 0 */
    json_t *t = json_array();
    for (int r = 0; r < SCHED_NROW; r++) {
        json_t *row = json_array();
        int v[SCHED_NDIM] = {1, 64, 1, 64, 3, 3, 56, 56};
        for (int d = 0; d < SCHED_NDIM; d++) json_array_append_new(row, json_integer(r == SR_DRAM ? v[d] : 1));
        json_array_append_new(t, row);
    }
    double rw;
    json_t *m = json_object();
    hw_err err;
    cr_assert_eq(f->evaluate(env, t, &rw, m, &err), 0, "%s", err.msg);
    cr_assert(json_is_true(json_object_get(m, "feasible")));
    cr_assert_float_eq(rw, 0.0, 1e-12);
    json_decref(m);
    /* too many PEs in X: infeasible, reason names the constraint */
    json_array_set_new(json_array_get(t, SR_PEX), SD_K, json_integer(16));
    json_array_set_new(json_array_get(t, SR_DRAM), SD_K, json_integer(4));
    m = json_object();
    cr_assert_eq(f->evaluate(env, t, &rw, m, &err), 0, "%s", err.msg);
    cr_assert(json_is_false(json_object_get(m, "feasible")));
    cr_assert(strstr(json_string_value(json_object_get(m, "reason")), "constraint spatial: couldn't map level MAC"),
              "%s", json_string_value(json_object_get(m, "reason")));
    json_decref(m);
    json_decref(t);
    /* malformed table: named element */
    t = json_loads("[[1,2,3]]", 0, NULL);
    cr_assert_eq(f->evaluate(env, t, &rw, NULL, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    json_decref(t);
    /* each baseline: feasible, better than all-in-DRAM, its table re-evaluates to the same energy */
    for (int b = 0; sched_baseline_names[b]; b++) {
        json_t *pt = json_pack("{s:s,s:i,s:i}", "baseline", sched_baseline_names[b], "seed", 4, "samples", 300);
        m = json_object();
        cr_assert_eq(f->evaluate(env, pt, &rw, m, &err), 0, "%s", err.msg);
        cr_assert_gt(rw, 1.0, "%s: reward %g", sched_baseline_names[b], rw);
        json_t *l0 = json_array_get(json_object_get(m, "layers"), 0);
        json_t *m2 = json_object();
        double rw2;
        cr_assert_eq(f->evaluate(env, json_object_get(l0, "table"), &rw2, m2, &err), 0, "%s", err.msg);
        cr_assert_float_eq(rw2, rw, 1e-9);
        json_decref(m2);
        json_decref(m);
        json_decref(pt);
    }
    json_t *pt = json_pack("{s:s}", "baseline", "greedy");
    cr_assert_eq(f->evaluate(env, pt, &rw, NULL, &err), -1);
    cr_assert(strstr(err.msg, "point.baseline"), "%s", err.msg);
    json_decref(pt);
    f->destroy(env);
}

Test(sched_env, snapshot_restore_and_dict_obs) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"tpu_v3\",\"obs\":\"dict\",\"objective\":\"edp\"}", &f);
    const hw_space *os = f->observation_space(env);
    cr_assert_eq(os->type, HW_SPACE_DICT);
    hw_obs obs;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    cr_assert_eq(obs.n, 4);
    cr_assert_str_eq(obs.keys[3], "table");
    cr_assert_eq(obs.arr[3].shape[0], 10);
    int64_t a = SR_DRAM;
    hw_act act = {1, &a, NULL};
    hw_step_out o1, o2;
    f->step(env, &act, &o1, NULL, NULL);
    void *snap = f->snapshot(env, NULL);
    a = SR_GB;
    f->step(env, &act, &o1, NULL, NULL);
    float t1[80];
    memcpy(t1, o1.obs.arr[3].data, sizeof t1);
    f->restore(env, snap, NULL);
    f->step(env, &act, &o2, NULL, NULL);
    cr_assert_eq(memcmp(t1, o2.obs.arr[3].data, sizeof t1), 0);
    cr_assert_eq(o1.reward, o2.reward);
    f->snapshot_free(snap);
    f->destroy(env);
}

Test(sched_env, zoo_models) {
    const hw_env_family *f;
    void *env = mk("{\"accelerator\":\"eyeriss_v2\",\"model\":\"resnet50\",\"layer\":\"layer1.0.conv2\"}", &f);
    hw_obs obs;
    json_t *info = json_object();
    f->reset(env, NULL, NULL, &obs, info, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(info, "layer_name")), "layer1.0.conv2");
    json_decref(info);
    f->destroy(env);
    env = mk("{\"model\":\"yolov3\",\"mode\":\"network\",\"steps_per_layer\":1}", &f);
    f->destroy(env);
}

Test(sched_env, config_errors_name_the_field) {
    bad_config("{\"accelerator\":{\"pe_array\":{\"x\":-1}}}", "config.accelerator.pe_array.x");
    bad_config("{\"accelerator\":\"tpu_v9\"}", "config.accelerator: unknown accelerator 'tpu_v9'");
    bad_config("{\"objective\":\"area\"}", "config.objective");
    bad_config("{\"mode\":\"all\"}", "config.mode");
    bad_config("{\"steps_per_layer\":0}", "config.steps_per_layer");
    bad_config("{\"colour\":1}", "config.colour: unknown field");
    bad_config("{\"model\":\"lenet\"}", "config.model");
    bad_config("{\"model\":\"resnet50\",\"layer\":\"nope\"}", "config.layer: unknown layer 'nope'");
    bad_config("{\"model\":\"resnet50\",\"layer\":999}", "config.layer: index 999 out of range");
    bad_config("{\"layer\":{\"C\":0}}", "config.layer.C");
    bad_config("{\"layer\":{\"C\":4,\"H\":3}}", "config.layer.H: unknown field");
    bad_config("{\"layers\":[{\"K\":2},{\"R\":\"x\"}],\"mode\":\"network\"}", "config.layers[1].R");
    bad_config("{\"model\":\"resnet50\",\"mode\":\"network\",\"layer\":3}", "config.layer: not used in network mode");
}

/* the (k mod n)-th of the n legal actions of info's mask; -1 when there is none */
static int kth_legal(json_t *info, int k) {
    int a = -1, nvalid = 0;
    for (int x = 0; x < SCHED_NACT; x++) nvalid += mask_at(info, x);
    for (int x = 0, j = k % (nvalid ? nvalid : 1); x < SCHED_NACT && a < 0; x++)
        if (mask_at(info, x) && j-- == 0) a = x;
    return a;
}

/* one step with action a: *out, and the step's JSON info in *info (the previous one released) */
static void step_with(const hw_env_family *f, void *env, int a, hw_step_out *out, json_t **info) {
    int64_t av = a;
    hw_act act = {1, &av, NULL};
    json_decref(*info);
    *info = json_object();
    hw_err err;
    cr_assert_eq(f->step(env, &act, out, *info, &err), 0, "%s", err.msg);
}

/* the observation's table part against the direct log(factor) / log(dimension) of info's table,
 * bit for bit, on a layer of dimensions dims; returns the count of factors above 1 */
static int expect_direct_logs(const hw_step_out *out, json_t *info, const int *dims, const char *what) {
    const float *o = out->obs.arr[0].data;
    json_t *tab = json_object_get(info, "table");
    int above = 0;
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) {
            int fct = (int)json_integer_value(json_array_get(json_array_get(tab, (size_t)r), (size_t)d));
            int D = dims[d];
            float want = D > 1 && fct != 1 ? (float)(log((double)fct) / log((double)D)) : 0.0f;
            cr_assert_eq(memcmp(&o[r * SCHED_NDIM + d], &want, sizeof want), 0, "%s row %d dim %d: %g, direct %g", what, r, d,
                         o[r * SCHED_NDIM + d], want);
            above += fct > 1;
        }
    return above;
}

/* The observation's table part, log(factor) / log(dimension), equals the direct computation bit for
 * bit (the env reads log of a factor below 1024 from a table computed once): over legal steps on a
 * layer whose dimensions go past 1024 (K = 2048: factors past the table too) and on the default. */
Test(sched_env, observation_logs_are_the_direct_ones) {
    static const char *const cfgs[2] = {
        "{\"layers\":[{\"name\":\"wide\",\"C\":96,\"K\":2048,\"R\":3,\"S\":3,\"P\":14,\"Q\":14}],\"steps_per_layer\":100000}",
        "{\"steps_per_layer\":100000}"};
    static const int dims[2][SCHED_NDIM] = {{1, 96, 1, 2048, 3, 3, 14, 14}, {1, 128, 1, 128, 3, 3, 28, 28}};
    for (int c = 0; c < 2; c++) {
        const hw_env_family *f;
        void *env = mk(cfgs[c], &f);
        hw_obs obs;
        json_t *info = json_object();
        cr_assert_eq(f->reset(env, NULL, NULL, &obs, info, NULL), 0);
        int checked = 0;
        for (int step = 0; step < 60; step++) {
            int a = kth_legal(info, step); /* a legal action, varied over the steps */
            cr_assert_geq(a, 0);
            hw_step_out out;
            step_with(f, env, a, &out, &info);
            char what[48];
            snprintf(what, sizeof what, "config %d step %d", c, step);
            checked += expect_direct_logs(&out, info, dims[c], what);
        }
        cr_assert_gt(checked, 100, "config %d: only %d factors above 1", c, checked);
        json_decref(info);
        f->destroy(env);
    }
}

/* The rows kept between steps (sched_env.c, sched_rows): a step makes the observation entries and
 * info bytes of the rows that changed again, and only those. Over network-mode episodes on layers
 * of three shapes (a layer change remakes every row), with legal and illegal actions and snapshots
 * restored mid-episode (the table jumps back, maybe to another layer), the observation's table is
 * the direct log ratio of the info's table, and info_pack packs exactly hw_pack_json of the step's
 * JSON info. */
Test(sched_env, kept_rows_equal_a_fresh_fill, .timeout = 60) {
    const hw_env_family *f;
    void *env = mk("{\"mode\":\"network\",\"steps_per_layer\":9,\"layers\":[{\"name\":\"a\",\"C\":32,\"K\":64,\"R\":3,\"S\":3,\"P\":14,"
                   "\"Q\":14},{\"name\":\"b\",\"C\":64,\"K\":2048,\"P\":7,\"Q\":7},{\"name\":\"c\",\"C\":16,\"K\":16,\"P\":56,\"Q\":56,"
                   "\"stride\":2}]}",
                   &f);
    static const int dims[3][SCHED_NDIM] = {{1, 32, 1, 64, 3, 3, 14, 14}, {1, 64, 1, 2048, 1, 1, 7, 7}, {1, 16, 1, 16, 1, 1, 56, 56}};
    cr_assert(f->info_pack);
    void *snap = NULL;
    int checked = 0, restores = 0;
    msgpack_sbuffer sa, sb;
    msgpack_sbuffer_init(&sa);
    msgpack_sbuffer_init(&sb);
    for (int ep = 0; ep < 3; ep++) {
        hw_obs obs;
        json_t *info = json_object();
        cr_assert_eq(f->reset(env, NULL, NULL, &obs, info, NULL), 0);
        for (int step = 0;; step++) {
            if (step % 7 == 3) {
                if (snap) f->snapshot_free(snap);
                snap = f->snapshot(env, NULL);
            }
            if (snap && step % 11 == 10) {
                cr_assert_eq(f->restore(env, snap, NULL), 0);
                restores++;
            }
            int a = kth_legal(info, 5 * step + ep);
            if (step % 13 == 12) a = first_valid(info, 0) == 0 ? 1 : 0; /* now and then a masked action */
            hw_step_out out;
            step_with(f, env, a, &out, &info);
            /* info_pack's bytes against the JSON info's */
            msgpack_sbuffer_clear(&sa);
            msgpack_sbuffer_clear(&sb);
            msgpack_packer pa, pb;
            msgpack_packer_init(&pa, &sa, msgpack_sbuffer_write);
            msgpack_packer_init(&pb, &sb, msgpack_sbuffer_write);
            f->info_pack(env, &pa);
            hw_pack_json(&pb, info);
            cr_assert(sa.size == sb.size && !memcmp(sa.data, sb.data, sa.size), "episode %d step %d: info_pack differs from the JSON info",
                      ep, step);
            int li = (int)json_integer_value(json_object_get(info, "layer"));
            char what[48];
            snprintf(what, sizeof what, "episode %d step %d layer %d", ep, step, li);
            checked += expect_direct_logs(&out, info, dims[li], what);
            if (out.truncated) break;
        }
        json_decref(info);
    }
    cr_assert_gt(restores, 3);
    cr_assert_gt(checked, 500, "only %d factors above 1", checked);
    msgpack_sbuffer_destroy(&sa);
    msgpack_sbuffer_destroy(&sb);
    if (snap) f->snapshot_free(snap);
    f->destroy(env);
}
