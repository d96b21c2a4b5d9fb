/* test_placement_lean.c - placement-v0's lean evaluation entry (envs/placement/placement_lean.c),
 * which hwgym-egrl's generations go through: for random, heuristic-like and all-DRAM maps of
 * ResNet-50 its reward, feasible flag and every metric equal the JSON evaluate()'s; a bad
 * element is refused naming it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agent_common.h"
#include "env_lean.h"
#include "placement/placement_env.h"

Test(placement_lean, matches_the_json_evaluate) {
    const hw_env_lean *l = hw_env_lean_find("placement-v0");
    cr_assert_not_null(l, "placement-v0 has no lean entry");
    hw_err err = {0};
    json_t *cfg = json_pack("{ss}", "workload", "resnet50");
    void *env = hw_family_placement.create(cfg, &err);
    json_decref(cfg);
    cr_assert_not_null(env, "%s", err.msg);
    const int nt = pl_env_model(env)->nt;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)nt);
    gsl_rng *r = ag_rng_new(3);
    double v[32];
    int valid_seen = 0, invalid_seen = 0;
    for (int trial = 0; trial < 40; trial++) {
        for (int t = 0; t < nt; t++) a[t] = trial == 0 ? 0 : trial < 20 ? ag_rng_int(r, 3) : (ag_rng_uniform(r) < 0.8 ? 0 : ag_rng_int(r, 3));
        hw_act act = {(size_t)nt, a, NULL};
        double rl;
        bool f;
        cr_assert_eq(l->eval(env, NULL, &act, &rl, &f, v, &err), 0, "%s", err.msg);
        json_t *pt = ag_json_i64(a, nt), *m = json_object();
        double rj;
        cr_assert_eq(hw_family_placement.evaluate(env, pt, &rj, m, &err), 0, "%s", err.msg);
        cr_assert_eq(rl, rj, "trial %d: reward %.17g lean, %.17g JSON", trial, rl, rj);
        cr_assert_eq(f, json_is_true(json_object_get(m, "feasible")));
        for (int k = 0; k < l->nmetrics; k++) {
            json_t *x = json_object_get(m, l->metric_names[k]);
            cr_assert(x, "metric %s missing from the JSON", l->metric_names[k]);
            double want = json_is_boolean(x) ? json_is_true(x) : json_number_value(x);
            cr_assert_eq(v[k], want, "trial %d: %s %.17g lean, %.17g JSON", trial, l->metric_names[k], v[k], want);
        }
        valid_seen += f, invalid_seen += !f;
        json_decref(pt);
        json_decref(m);
    }
    cr_assert(valid_seen > 0 && invalid_seen > 0, "valid %d, invalid %d maps: both kinds must be compared", valid_seen, invalid_seen);
    a[7] = 3;
    hw_act act = {(size_t)nt, a, NULL};
    double rl;
    bool f;
    cr_assert_neq(l->eval(env, NULL, &act, &rl, &f, v, &err), 0);
    cr_assert(strstr(err.msg, "point[7]"), "%s", err.msg);
    gsl_rng_free(r);
    free(a);
    hw_family_placement.destroy(env);
}
