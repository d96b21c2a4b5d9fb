/* maestro-v0 through the env vtable. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "hw_codec.h"
#include "maestro/maestro.h"
#include "../common/hwtest_env.h"
#include "registry.h"

static void *mk(const char *cfg_text, const hw_env_family **f) { return hwtest_env_make("maestro-v0", cfg_text, f); }

static void bad_config(const char *cfg_text, const char *field) { hwtest_env_refuses("maestro-v0", cfg_text, field); }

Test(maestro_env, spaces_and_step) {
    const hw_env_family *f;
    void *env = mk("{\"model\":\"mobilenet_v2\",\"layer\":\"Bottleneck3_2_1\",\"hardware\":\"hw_256pe_bw32\",\"episode_length\":2}", &f);
    const hw_space *as = f->action_space(env), *os = f->observation_space(env);
    cr_assert_eq(hw_space_numel(as), 10);
    cr_assert_eq(hw_space_choices(as, 0), 720);
    cr_assert_eq(hw_space_choices(as, 1), 6);
    cr_assert_eq(hw_space_numel(os), 4);
    json_t *sj = hw_space_to_json(as);
    char *txt = json_dumps(sj, JSON_COMPACT);
    cr_assert(strstr(txt, "loop_order") && strstr(txt, "tile_K") && strstr(txt, "num_pes") && strstr(txt, "KCYXRS"), "%s", txt);
    free(txt);
    json_decref(sj);

    int64_t a[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    hw_act act = {10, a, NULL};
    hw_step_out out;
    hw_err err = {0};
    cr_assert_neq(f->step(env, &act, &out, NULL, &err), 0);
    cr_assert_eq(err.code, HW_E_BAD_STATE);
    hw_obs obs;
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, NULL, &err), 0);
    /* K tiles of 16 over 32 PEs... pick: order KCYXRS, parallel K, tile K = 1 (index 0), all PEs */
    a[9] = hw_space_choices(as, 9) - 1; /* 256 PEs */
    json_t *info = json_object();
    cr_assert_eq(f->step(env, &act, &out, info, &err), 0, "%s", err.msg);
    cr_assert(json_is_true(json_object_get(info, "feasible")), "%s", json_string_value(json_object_get(info, "reason")));
    const char *mapping = json_string_value(json_object_get(info, "mapping"));
    cr_assert(mapping && strstr(mapping, "SpatialMap(1,1) K;"), "%s", mapping);
    double rt = (double)json_integer_value(json_object_get(info, "runtime"));
    cr_assert_gt(rt, 0);
    cr_assert_float_eq(out.reward, 1.0 / rt, 1e-15);
    const double *o = out.obs.arr[0].data;
    cr_assert_float_eq(o[0], rt, 1e-9);
    cr_assert_float_eq(o[2], json_real_value(json_object_get(info, "energy")), 1e-6);
    cr_assert_float_eq(o[3], json_real_value(json_object_get(info, "area")), 1e-6);
    cr_assert(!out.terminated && !out.truncated);
    /* the mapping text in info scores the same through evaluate({"directives": ...}) */
    json_t *pt = json_pack("{s:s, s:i}", "directives", mapping, "num_pes", 256);
    double r2;
    json_t *met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &r2, met, &err), 0, "%s", err.msg);
    cr_assert_float_eq(r2, out.reward, 1e-15);
    json_decref(pt);
    json_decref(met);
    json_decref(info);
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), 0);
    cr_assert(out.truncated && !out.terminated, "episode_length is a time limit: truncated");
    cr_assert_neq(f->step(env, &act, &out, NULL, &err), 0);
    f->destroy(env);
}

Test(maestro_env, evaluate_directives_matches_model) {
    const hw_env_family *f;
    void *env = mk("{\"layer_dims\":{\"K\":64,\"C\":32,\"R\":3,\"S\":3,\"Y\":30,\"X\":30},\"hardware\":{\"num_pes\":64,\"noc_bw\":32,"
                   "\"offchip_bw\":32,\"l1_size\":4096,\"l2_size\":1000000},\"objective\":\"edp\"}",
                   &f);
    const char *d = "SpatialMap(1,1) K; TemporalMap(8,8) C; TemporalMap(Sz(R),Sz(R)) R; TemporalMap(Sz(S),Sz(S)) S; "
                    "TemporalMap(3,1) Y; TemporalMap(3,1) X;";
    json_t *pt = json_pack("{s:s}", "directives", d);
    double rw;
    hw_err err = {0};
    json_t *met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &rw, met, &err), 0, "%s", err.msg);
    maestro_layer l;
    maestro_layer_init(&l, MAESTRO_CONV, "x");
    l.dim[MD_K] = 64, l.dim[MD_C] = 32, l.dim[MD_R] = 3, l.dim[MD_S] = 3, l.dim[MD_Y] = 30, l.dim[MD_X] = 30;
    maestro_layer_finish(&l);
    maestro_hw h;
    maestro_hw_default(&h);
    h.num_pes = 64, h.noc_bw = 32, h.offchip_bw = 32, h.l1_size = 4096, h.l2_size = 1000000;
    maestro_mapping m;
    cr_assert_eq(maestro_parse_directives(d, &l, &m, &err), 0);
    maestro_result r;
    maestro_eval(&l, &h, &m, &r);
    cr_assert(r.feasible);
    cr_assert_float_eq(rw, 1.0 / (r.energy * (double)r.runtime), 1e-9 * rw);
    cr_assert_eq(json_integer_value(json_object_get(met, "runtime")), r.runtime);
    cr_assert_eq(json_integer_value(json_object_get(met, "l1_size")), r.l1_req_total);
    json_t *ec = json_object_get(met, "energy_components");
    cr_assert_float_eq(json_real_value(json_object_get(ec, "mac")), r.e_mac, 1e-6);
    json_decref(pt);
    json_decref(met);
    /* a bad directive is a BAD_ACTION naming the point */
    pt = json_pack("{s:s}", "directives", "SpatialMap(1,1) Q;");
    cr_assert_neq(f->evaluate(env, pt, &rw, NULL, &err), 0);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    cr_assert(strstr(err.msg, "point.directives"), "%s", err.msg);
    json_decref(pt);
    f->destroy(env);
}

Test(maestro_env, infeasible_scores_zero_with_reason) {
    const hw_env_family *f;
    void *env = mk("{\"layer_dims\":{\"K\":64,\"C\":64,\"Y\":16,\"X\":16},\"hardware\":\"hw_256pe_bw32\",\"l1_size\":1}", &f);
    json_t *pt = json_pack("{s:s}", "directives", "SpatialMap(1,1) K; TemporalMap(64,64) C; TemporalMap(1,1) Y; TemporalMap(1,1) X;");
    double rw = -1;
    hw_err err = {0};
    json_t *met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &rw, met, &err), 0, "%s", err.msg);
    cr_assert_eq(rw, 0.0);
    cr_assert(json_is_false(json_object_get(met, "feasible")));
    cr_assert(strstr(json_string_value(json_object_get(met, "reason")), "L1"));
    json_decref(met);
    /* a mapping MAESTRO rejects */
    json_decref(pt);
    pt = json_pack("{s:s}", "directives", "TemporalMap(1,1) K; TemporalMap(1,1) C;");
    met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &rw, met, &err), 0);
    cr_assert_eq(rw, 0.0);
    cr_assert(strstr(json_string_value(json_object_get(met, "reason")), "SpatialMap"));
    json_decref(met);
    json_decref(pt);
    f->destroy(env);
}

Test(maestro_env, bad_configs_name_the_field) {
    bad_config("{\"bogus\":1}", "bogus");
    bad_config("{\"objective\":\"speed\"}", "objective");
    bad_config("{\"hardware\":\"hw_nonexistent\"}", "hardware");
    bad_config("{\"hardware\":{\"num_pes\":0}}", "num_pes");
    bad_config("{\"model\":\"nosuchnet\"}", "model");
    bad_config("{\"model\":\"mobilenet_v2\",\"layer\":\"nosuchlayer\"}", "layer");
    bad_config("{\"layer_dims\":{\"K\":4,\"R\":3,\"Y\":2}}", "layer_dims");
    bad_config("{\"action_space\":\"marl11\"}", "action_space");
    bad_config("{\"model_file\":\"/nonexistent/model.csv\"}", "model_file");
}

/* Random actions in both spaces decode deterministically, never crash, mostly evaluate. */
static void random_sweep(const char *cfg, int nparams) {
    const hw_env_family *f;
    void *env = mk(cfg, &f);
    const hw_space *as = f->action_space(env);
    cr_assert_eq(hw_space_numel(as), nparams);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    int feasible = 0, n = 200;
    for (int k = 0; k < n; k++) {
        json_t *pt = json_array();
        for (int i = 0; i < nparams; i++)
            json_array_append_new(pt, json_integer((json_int_t)gsl_rng_uniform_int(rng, (unsigned long)hw_space_choices(as, i))));
        double r1, r2;
        hw_err err = {0};
        json_t *m1 = json_object(), *m2 = json_object();
        cr_assert_eq(f->evaluate(env, pt, &r1, m1, &err), 0, "%s", err.msg);
        cr_assert_eq(f->evaluate(env, pt, &r2, m2, &err), 0, "%s", err.msg);
        cr_assert_eq(r1, r2, "same action, different reward");
        cr_assert(json_equal(m1, m2));
        /* the action's mapping text (joined from the env's directive table) is its mapping: given
         * as directives, it parses, evaluates and prints back to the same metrics */
        json_t *dp = json_pack("{s:O,s:O}", "directives", json_object_get(m1, "mapping"), "num_pes", json_object_get(m1, "num_pes"));
        json_t *m3 = json_object();
        double r3;
        cr_assert_eq(f->evaluate(env, dp, &r3, m3, &err), 0, "%s: %s", json_string_value(json_object_get(m1, "mapping")), err.msg);
        cr_assert_eq(r3, r1, "%s", json_string_value(json_object_get(m1, "mapping")));
        cr_assert(json_equal(m1, m3), "%s", json_string_value(json_object_get(m1, "mapping")));
        json_decref(m3);
        json_decref(dp);
        if (json_is_true(json_object_get(m1, "feasible"))) {
            feasible++;
            cr_assert_gt(r1, 0);
        } else {
            cr_assert_eq(r1, 0);
            cr_assert(json_string_value(json_object_get(m1, "reason")));
        }
        json_decref(m1);
        json_decref(m2);
        json_decref(pt);
    }
    cr_assert_gt(feasible, n / 10, "only %d/%d random designs feasible", feasible, n);
    gsl_rng_free(rng);
    f->destroy(env);
}

Test(maestro_env, marl10_random_sweep) {
    random_sweep("{\"model\":\"mobilenet_v2\",\"layer\":2,\"enforce_buffers\":false}", 10);
}

Test(maestro_env, gamma17_random_sweep) {
    random_sweep("{\"model\":\"vgg16\",\"layer\":\"CONV2\",\"action_space\":\"gamma17\",\"enforce_buffers\":false}", 17);
}

Test(maestro_env, snapshot_restore) {
    const hw_env_family *f;
    void *env = mk("{\"episode_length\":3}", &f);
    hw_obs obs;
    hw_err err = {0};
    cr_assert_eq(f->reset(env, NULL, NULL, &obs, NULL, &err), 0);
    int64_t a[10] = {5, 1, 0, 0, 0, 0, 0, 0, 0, 3};
    hw_act act = {10, a, NULL};
    hw_step_out out;
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), 0);
    void *s = f->snapshot(env, &err);
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), 0);
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), 0);
    cr_assert(out.truncated);
    cr_assert_eq(f->restore(env, s, &err), 0);
    cr_assert_eq(f->step(env, &act, &out, NULL, &err), 0);
    cr_assert(!out.truncated);
    f->snapshot_free(s);
    f->destroy(env);
}

/* A zoo layer is MAESTRO's own layer: MobileNet-v2 layer 2 (Bottleneck1_1_2) with the shipped
 * depthwise dataflow on hw_256pe_bw32 takes 217809 cycles in MAESTRO's reference table. */
Test(maestro_env, zoo_layer_matches_maestro_reference) {
    const hw_env_family *f;
    void *env = mk("{\"model\":\"MobileNet-v2\",\"layer\":2,\"hardware\":\"hw_256pe_bw32\"}", &f);
    json_t *pt = json_pack("{s:s}", "directives",
                           "SpatialMap(1,1) C; TemporalMap(Sz(R),1) Y; TemporalMap(Sz(S),1) X; TemporalMap(Sz(R),Sz(R)) R; "
                           "TemporalMap(Sz(S),Sz(S)) S;");
    double rw;
    hw_err err = {0};
    json_t *met = json_object();
    cr_assert_eq(f->evaluate(env, pt, &rw, met, &err), 0, "%s", err.msg);
    cr_assert_eq(json_integer_value(json_object_get(met, "runtime")), 217809);
    cr_assert_float_eq(rw, 1.0 / 217809, 1e-15);
    json_decref(met);
    json_decref(pt);
    f->destroy(env);
}

/* The packed info (info_pack, what the server sends) is, byte for byte, the JSON info packed:
 * over random actions of both action spaces (feasible, infeasible with a reason, rejected), the
 * reset's info, and a long reason (a tiny L1: the "L1 requirement" text). */
static void info_pack_is_json_info(const char *cfg, int nparams) {
    const hw_env_family *f;
    void *env = mk(cfg, &f);
    cr_assert(f->info_pack);
    const hw_space *as = f->action_space(env);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    msgpack_sbuffer a, b;
    msgpack_sbuffer_init(&a), msgpack_sbuffer_init(&b);
    int valid = 0, reasons = 0;
    for (int k = 0; k < 400; k++) {
        hw_err err = {0};
        json_t *info = json_object();
        hw_obs obs;
        hw_step_out out;
        int64_t act[17];
        for (int i = 0; i < nparams; i++) act[i] = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)hw_space_choices(as, i));
        hw_act ha = {(size_t)nparams, act, NULL};
        if (k % 50 == 0) cr_assert_eq(f->reset(env, NULL, NULL, &obs, info, &err), 0, "%s", err.msg);
        else cr_assert_eq(f->step(env, &ha, &out, info, &err), 0, "%s", err.msg);
        valid += json_object_get(info, "runtime") != NULL;
        reasons += json_object_get(info, "reason") != NULL;
        msgpack_sbuffer_clear(&a), msgpack_sbuffer_clear(&b);
        msgpack_packer pa, pb;
        msgpack_packer_init(&pa, &a, msgpack_sbuffer_write), msgpack_packer_init(&pb, &b, msgpack_sbuffer_write);
        hw_pack_json(&pa, info);
        f->info_pack(env, &pb);
        cr_assert_eq(b.size, a.size, "step %d: packed info %zu bytes, the JSON info %zu", k, b.size, a.size);
        cr_assert_eq(memcmp(a.data, b.data, a.size), 0, "step %d: packed info differs from the JSON info", k);
        json_decref(info);
    }
    cr_assert_gt(valid, 20, "valid %d", valid);
    cr_assert_gt(reasons, 20, "infeasible or rejected %d", reasons);
    msgpack_sbuffer_destroy(&a), msgpack_sbuffer_destroy(&b);
    gsl_rng_free(rng);
    f->destroy(env);
}

Test(maestro_env, info_pack_is_json_info) {
    info_pack_is_json_info("{\"model\":\"mobilenet_v2\",\"layer\":2,\"episode_length\":100000}", 10);
    info_pack_is_json_info("{\"model\":\"mobilenet_v2\",\"layer\":2,\"objective\":\"energy\",\"episode_length\":100000}", 10); /* each objective's name */
    info_pack_is_json_info("{\"model\":\"mobilenet_v2\",\"layer\":3,\"objective\":\"area\",\"episode_length\":100000}", 10);
    info_pack_is_json_info("{\"model\":\"vgg16\",\"layer\":\"CONV2\",\"action_space\":\"gamma17\",\"objective\":\"edp\",\"l1_size\":8,"
                           "\"episode_length\":100000}", 17);
}
