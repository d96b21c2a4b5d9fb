/* Unit tests of diag-v0 through the env vtable. */
#include <criterion/criterion.h>
#include <string.h>

#include "diag/diag.h"
#include "registry.h"

static void *mk(const char *cfg_text, const hw_env_family **f) {
    json_t *cfg = cfg_text ? json_loads(cfg_text, 0, NULL) : NULL;
    hw_err err;
    void *env = hw_env_create("diag-v0", cfg, f, &err);
    json_decref(cfg);
    cr_assert(env, "create failed: %s", err.msg);
    return env;
}

Test(diag, optimum_is_one_at_target) {
    const hw_env_family *f;
    void *env = mk("{\"dims\":3,\"choices\":5}", &f);
    hw_obs obs;
    uint64_t seed = 7;
    cr_assert_eq(f->reset(env, &seed, NULL, &obs, NULL, NULL), 0);
    /* exhaustive search finds exactly one action with reward 1 */
    int hits = 0;
    double best = -1;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 5; c++) {
                json_t *pt = json_pack("[iii]", a, b, c);
                double r;
                cr_assert_eq(f->evaluate(env, pt, &r, NULL, NULL), 0);
                json_decref(pt);
                if (r > best) best = r;
                if (r == 1.0) hits++;
            }
    cr_assert_eq(hits, 1);
    cr_assert_float_eq(best, 1.0, 1e-12);
    f->destroy(env);
}

Test(diag, bad_config_names_field) {
    json_t *cfg = json_loads("{\"choices\":1}", 0, NULL);
    hw_err err;
    void *env = hw_env_create("diag-v0", cfg, NULL, &err);
    json_decref(cfg);
    cr_assert_null(env);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, "config.choices"), "%s", err.msg);
}

Test(diag, snapshot_restore_is_exact) {
    const hw_env_family *f;
    void *env = mk(NULL, &f);
    hw_obs obs;
    uint64_t seed = 3;
    f->reset(env, &seed, NULL, &obs, NULL, NULL);
    int64_t a[4] = {1, 2, 3, 4};
    hw_act act = {4, a, NULL};
    hw_step_out o1, o2;
    f->step(env, &act, &o1, NULL, NULL);
    void *snap = f->snapshot(env, NULL);
    f->step(env, &act, &o1, NULL, NULL);
    float first[6];
    memcpy(first, o1.obs.arr[0].data, sizeof first);
    f->restore(env, snap, NULL);
    f->step(env, &act, &o2, NULL, NULL);
    cr_assert_eq(memcmp(first, o2.obs.arr[0].data, sizeof first), 0);
    cr_assert_eq(o1.reward, o2.reward);
    f->snapshot_free(snap);
    f->destroy(env);
}
