/* mmap-v0 through the env vtable: config errors, spaces and observations, masks and info,
 * rewards and end-of-episode metrics, illegal actions, snapshot/restore, evaluate. */
#include "mm_fixture.h"

#include <stdio.h>
#include <unistd.h>

#include "../common/hwtest_env.h"
#include "registry.h"

static void *mk(const char *cfg_text, const hw_env_family **f) { return hwtest_env_make("mmap-v0", cfg_text, f); }

static void bad_cfg(const char *text, const char *field) { hwtest_env_refuses("mmap-v0", text, field); }

static int step(const hw_env_family *f, void *env, int a, hw_step_out *o, json_t *info) {
    int64_t ai = a;
    hw_act act = {1, &ai, NULL};
    return f->step(env, &act, o, info, NULL);
}

static char *fx_file(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mmap_fx_XXXXXX.json");
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(mmap_env, bad_config_names_field) {
    bad_cfg("{\"problem\":\"nope\"}", "config.problem");
    bad_cfg("{\"k\":-1}", "config.k");
    bad_cfg("{\"profile_len\":0}", "config.profile_len");
    bad_cfg("{\"colour\":1}", "config.colour");
    bad_cfg("{\"problem\":\"/nonexistent.json\"}", "config.problem");
}

Test(mmap_env, spaces_and_observation_shapes) {
    const hw_env_family *f;
    void *env = mk("{\"problem\":\"inference_resnet\",\"k\":5,\"l\":3,\"profile_len\":64,\"supply_window\":32}", &f);
    const hw_space *as = f->action_space(env), *os = f->observation_space(env);
    cr_assert_eq(as->type, HW_SPACE_DISCRETE);
    cr_assert_eq(as->n, 3);
    cr_assert_str_eq(as->labels[0][1], "NoCopy");
    cr_assert_eq(os->type, HW_SPACE_DICT);
    hw_obs obs;
    json_t *info = json_object();
    uint64_t seed = 1;
    cr_assert_eq(f->reset(env, &seed, NULL, &obs, info, NULL), 0);
    cr_assert_eq(obs.n, os->nchild);
    for (int i = 0; i < obs.n; i++) {
        cr_assert_str_eq(obs.keys[i], os->keys[i]);
        cr_assert_eq(obs.arr[i].ndim, os->child[i]->ndim, "%s", obs.keys[i]);
        for (int d = 0; d < obs.arr[i].ndim; d++) cr_assert_eq(obs.arr[i].shape[d], os->child[i]->shape[d], "%s dim %d", obs.keys[i], d);
        cr_assert_eq(obs.arr[i].dtype, os->child[i]->dtype, "%s", obs.keys[i]);
    }
    cr_assert_str_eq(obs.keys[1], "buffers");
    cr_assert_eq(obs.arr[1].shape[0], 1 + 5 + 3);
    cr_assert_str_eq(obs.keys[3], "memory_map");
    cr_assert_eq(obs.arr[3].shape[0], 128);
    json_t *m = json_object_get(info, "action_mask");
    cr_assert(json_is_array(m) && json_array_size(m) == 3);
    cr_assert(json_is_true(json_object_get(info, "backup_safe")));
    /* the action features' legality column equals the mask */
    const float *af = obs.arr[0].data;
    for (int a = 0; a < 3; a++) cr_assert_eq((int)af[a * 4], (int)json_integer_value(json_array_get(m, (size_t)a)));
    json_decref(info);
    f->destroy(env);
}

Test(mmap_env, fixture_episode_rewards_info_and_observation) {
    const hw_env_family *f;
    char cfg[160];
    char path[64];
    snprintf(path, sizeof path, "%s", fx_file(FX2));
    snprintf(cfg, sizeof cfg, "{\"problem\":\"%s\",\"profile_len\":5,\"supply_window\":4,\"k\":1,\"l\":1}", path);
    void *env = mk(cfg, &f);
    hw_obs obs;
    hw_step_out o;
    cr_assert_eq(step(f, env, 0, &o, NULL), -1, "step before reset fails");
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    /* buffer 0 features: A, output, size 2, t=0, live [0,3], demand 2, benefit 2 */
    const float *bf = obs.arr[1].data;
    cr_assert_eq(bf[0], 1);
    cr_assert_eq(bf[1], 2);
    cr_assert_eq(bf[2], 1);
    cr_assert_eq(bf[7], 3);
    cr_assert_eq(bf[8], 2);
    cr_assert_eq(bf[9], 2);
    /* next same-tensor buffer of A is buffer 3 (t=3) */
    cr_assert_eq(bf[2 * 10 + 3], 3);
    int acts[5] = {MM_NOCOPY, MM_COPY, MM_COPY, MM_NOCOPY, MM_NOCOPY};
    double rew[5] = {2, 2, 1, 2, 1};
    for (int i = 0; i < 5; i++) {
        json_t *info = json_object();
        cr_assert_eq(step(f, env, acts[i], &o, info), 0);
        cr_assert_float_eq(o.reward, rew[i], 1e-9, "step %d", i);
        cr_assert_eq(o.terminated, i == 4);
        if (i == 0) {
            /* at B (t=1): A occupies granules 0-1 -> profile 1 1 0 0 0; supply window around t=1 */
            const uint8_t *prof = o.obs.arr[4].data;
            uint8_t exp[5] = {1, 1, 0, 0, 0};
            cr_assert_eq(memcmp(prof, exp, 5), 0);
            const float *sup = o.obs.arr[5].data;
            cr_assert_eq(sup[0], 0); /* t = -1 */
            cr_assert_eq(sup[1], 10);
        }
        if (i == 2) cr_assert(json_is_false(json_object_get(info, "backup_safe")));
        if (i == 4) {
            cr_assert(json_is_true(json_object_get(info, "feasible")));
            cr_assert_float_eq(json_real_value(json_object_get(info, "program_latency")), 15, 1e-9);
            cr_assert_float_eq(json_real_value(json_object_get(info, "latency_all_hbm")), 23, 1e-9);
            cr_assert_float_eq(json_real_value(json_object_get(info, "speedup_over_hbm")), 23.0 / 15, 1e-9);
            cr_assert(json_object_get(info, "speedup_over_heuristic"));
            cr_assert_float_eq(json_real_value(json_object_get(info, "return")), 8, 1e-9);
        }
        json_decref(info);
    }
    cr_assert_eq(step(f, env, 0, &o, NULL), -1, "step after the end fails");
    f->destroy(env);
    unlink(path);
}

Test(mmap_env, illegal_action_loses_with_zero_return) {
    const hw_env_family *f;
    char cfg[160];
    char *path = fx_file(FX2);
    snprintf(cfg, sizeof cfg, "{\"problem\":\"%s\"}", path);
    void *env = mk(cfg, &f);
    hw_obs obs;
    hw_step_out o;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    step(f, env, MM_NOCOPY, &o, NULL);
    json_t *info = json_object();
    cr_assert_eq(step(f, env, MM_NOCOPY, &o, info), 0); /* B has no earlier allocation */
    cr_assert(o.terminated);
    cr_assert_float_eq(o.reward, -2, 1e-9);
    cr_assert_str_eq(json_string_value(json_object_get(info, "illegal_action")), "NoCopy");
    cr_assert(json_is_false(json_object_get(info, "feasible")));
    json_decref(info);
    cr_assert_eq(step(f, env, MM_DROP, &o, NULL), -1);
    f->destroy(env);
    unlink(path);
}

static uint64_t obs_hash(const hw_obs *o) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < o->n; i++) {
        const uint8_t *d = o->arr[i].data;
        for (size_t k = 0; k < hw_array_nbytes(&o->arr[i]); k++) h = (h ^ d[k]) * 1099511628211ULL;
    }
    return h;
}

Test(mmap_env, snapshot_restore_is_exact) {
    const hw_env_family *f;
    void *env = mk("{\"problem\":\"rnn_2\"}", &f);
    const mm_game *g = mm_env_game(env);
    hw_obs obs;
    hw_step_out o;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 4);
    for (int i = 0; i < 200; i++) step(f, env, mm_policy_random(g, rng), &o, NULL);
    void *snap = f->snapshot(env, NULL);
    int acts[60];
    double r1[60];
    uint64_t h1[60];
    for (int i = 0; i < 60; i++) {
        acts[i] = mm_policy_random(g, rng);
        step(f, env, acts[i], &o, NULL);
        r1[i] = o.reward;
        h1[i] = obs_hash(&o.obs);
    }
    /* diverge further, then restore and replay */
    for (int i = 0; i < 300 && !g->done; i++) step(f, env, mm_policy_random(g, rng), &o, NULL);
    cr_assert_eq(f->restore(env, snap, NULL), 0);
    cr_assert_eq(g->t, 200);
    for (int i = 0; i < 60; i++) {
        step(f, env, acts[i], &o, NULL);
        cr_assert_eq(o.reward, r1[i], "step %d reward", i);
        cr_assert_eq(obs_hash(&o.obs), h1[i], "step %d observation", i);
    }
    /* restore after a reset (no common prefix) also works */
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    cr_assert_eq(f->restore(env, snap, NULL), 0);
    step(f, env, acts[0], &o, NULL);
    cr_assert_eq(o.reward, r1[0]);
    f->snapshot_free(snap);
    gsl_rng_free(rng);
    f->destroy(env);
}

Test(mmap_env, evaluate_policies_and_action_lists) {
    const hw_env_family *f;
    void *env = mk("{\"problem\":\"alexnet_train_batch_32\"}", &f);
    hw_obs obs;
    hw_step_out o;
    f->reset(env, NULL, NULL, &obs, NULL, NULL);
    step(f, env, MM_DROP, &o, NULL);
    double r;
    json_t *m = json_object();
    json_t *pt = json_pack("{s:s}", "policy", "heuristic");
    cr_assert_eq(f->evaluate(env, pt, &r, m, NULL), 0);
    cr_assert(json_is_true(json_object_get(m, "feasible")));
    cr_assert_float_eq(json_real_value(json_object_get(m, "speedup_over_heuristic")), 1.0, 1e-12);
    cr_assert(json_real_value(json_object_get(m, "speedup_over_hbm")) > 1.0);
    /* replaying the heuristic's action string gives the same reward */
    json_t *again = json_pack("{s:O}", "actions", json_object_get(m, "actions"));
    double r2;
    json_t *m2 = json_object();
    cr_assert_eq(f->evaluate(env, again, &r2, m2, NULL), 0);
    cr_assert_eq(r, r2);
    json_decref(again);
    json_decref(m2);
    json_decref(pt);
    json_decref(m);
    /* random policy with a seed is deterministic */
    pt = json_pack("{s:s,s:i}", "policy", "random", "seed", 3);
    double ra, rb;
    cr_assert_eq(f->evaluate(env, pt, &ra, NULL, NULL), 0);
    cr_assert_eq(f->evaluate(env, pt, &rb, NULL, NULL), 0);
    cr_assert_eq(ra, rb);
    json_decref(pt);
    /* errors name the point's field */
    hw_err err = {0};
    pt = json_pack("{s:s}", "policy", "greedy");
    cr_assert_neq(f->evaluate(env, pt, &r, NULL, &err), 0);
    cr_assert(strstr(err.msg, "point.policy"), "%s", err.msg);
    json_decref(pt);
    pt = json_pack("[iii]", 2, 2, 2);
    cr_assert_neq(f->evaluate(env, pt, &r, NULL, &err), 0);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    json_decref(pt);
    pt = json_pack("[s]", "Keep");
    cr_assert_neq(f->evaluate(env, pt, &r, NULL, &err), 0);
    cr_assert(strstr(err.msg, "point[0]"), "%s", err.msg);
    json_decref(pt);
    /* evaluate left the episode alone */
    cr_assert_eq(mm_env_game(env)->t, 1);
    f->destroy(env);
}

/* The cached, incrementally updated memory map equals a from-scratch computation. */
static void check_map(const mm_game *g, const hw_obs *obs, int M, int window) {
    const mm_problem *p = g->p;
    int32_t cur = g->t < p->nbuf ? g->t : -1;
    int32_t tt = cur >= 0 ? p->buf[cur].time : p->T - 1, t0 = tt - window / 2;
    const uint8_t *map = obs->arr[3].data;
    uint64_t occ[MM_MAX_GRANULES / 64];
    uint8_t *ref = calloc((size_t)M * (size_t)M, 1);
    for (int i = 0; i < M; i++) {
        int32_t a = t0 + (int32_t)((int64_t)i * window / M), z = t0 + (int32_t)((int64_t)(i + 1) * window / M) - 1;
        if (z < a) z = a;
        for (int32_t t = a; t <= z; t++) {
            if (t < 0 || t >= p->T) continue;
            mm_game_occupancy(g, t, t, occ);
            for (int32_t o = 0; o < p->G; o++)
                if (occ[o >> 6] >> (o & 63) & 1) {
                    int32_t lo = (int32_t)((int64_t)o * M / p->G), hi = (int32_t)((int64_t)(o + 1) * M / p->G);
                    if (hi <= lo) hi = lo + 1;
                    for (int32_t j = lo; j < hi; j++) ref[(size_t)i * M + j] = 1;
                }
        }
    }
    cr_assert_eq(memcmp(ref, map, (size_t)M * (size_t)M), 0, "memory map differs at buffer %d", g->t);
    free(ref);
}

/* The map's rows are only rewritten when their bits change (mm_env.c map_prev): every step is
 * checked in the third config (a row of 100 bytes is not a whole number of 8-byte words, so a
 * write past a row's end would show), across a restore and a reset. */
Test(mmap_env, memory_map_matches_scratch_computation) {
    const char *cfgs[3] = {"{\"problem\":\"rnn_2\"}", "{\"problem\":\"inference_lstm\",\"map_size\":64,\"map_window\":200}",
                           "{\"problem\":\"rnn_2\",\"map_size\":100,\"map_window\":90}"};
    int Ms[3] = {128, 64, 100}, Ws[3] = {128, 200, 90}, every[3] = {37, 37, 1};
    for (int c = 0; c < 3; c++) {
        const hw_env_family *f;
        void *env = mk(cfgs[c], &f);
        const mm_game *g = mm_env_game(env);
        hw_obs obs;
        hw_step_out o;
        f->reset(env, NULL, NULL, &obs, NULL, NULL);
        check_map(g, &obs, Ms[c], Ws[c]);
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(rng, 11);
        void *snap = NULL;
        for (int i = 0; i < 700 && !g->done; i++) {
            int64_t a = mm_policy_random(g, rng);
            hw_act act = {1, &a, NULL};
            f->step(env, &act, &o, NULL, NULL);
            if (i % every[c] == 0) check_map(g, &o.obs, Ms[c], Ws[c]);
            if (i == 150) snap = f->snapshot(env, NULL);
            if (i == 400) {
                f->restore(env, snap, NULL);
                a = mm_policy_random(g, rng);
                f->step(env, &act, &o, NULL, NULL);
                check_map(g, &o.obs, Ms[c], Ws[c]);
            }
            if (i == 550) {
                f->reset(env, NULL, NULL, &obs, NULL, NULL);
                check_map(g, &obs, Ms[c], Ws[c]);
            }
        }
        f->snapshot_free(snap);
        gsl_rng_free(rng);
        f->destroy(env);
    }
}
