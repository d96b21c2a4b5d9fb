/* test_obsspace.c - every env family, in its default config and each documented config form,
 * played with random legal actions: every observation (reset and step) lies in the declared
 * observation space (shape, dtype range, Box bounds, integer ranges, Dict keys), and every
 * info "action_mask" has one entry per choice of the action space (the sum of the choices of an
 * integer space) with at least one legal choice per element. This is what Gymnasium's
 * check_env asserts; issue 11 found mmap-v0's `benefit` column far below its declared low. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "env.h"
#include "hw_space.h"
#include "registry.h"

typedef struct form {
    const char *env, *config;
    int steps; /* env steps to play */
} form;

static const form FORMS[] = {
    {"diag-v0", "{}", 40},
    {"diag-v0", "{\"dims\":3,\"choices\":5,\"episode_length\":4}", 40},
    {"maestro-v0", "{}", 40},
    {"maestro-v0", "{\"action_space\":\"gamma17\"}", 40},
    {"maestro-v0", "{\"model\":\"vgg16\",\"layer\":2,\"objective\":\"edp\"}", 40},
    {"maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":3,\"objective\":\"area\",\"enforce_buffers\":false}", 40},
    {"maestro-v0", "{\"preset\":\"archgym\"}", 40},
    {"dram-v0", "{}", 20},
    {"dram-v0", "{\"action_space\":\"tdm\"}", 40},
    {"dram-v0", "{\"action_space\":\"box\",\"objective\":\"joint\"}", 20},
    {"dram-v0", "{\"ranges\":\"archgym\",\"latency_metric\":\"total_time\",\"objective\":\"power\"}", 20},
    {"dram-v0", "{\"workload\":\"random\",\"objective\":\"energy\"}", 20},
    {"mmap-v0", "{}", 300},
    {"mmap-v0", "{\"problem\":\"mlp_train_batch_16\"}", 300},
    {"mmap-v0", "{\"problem\":\"inference_lstm\",\"memory_map\":false,\"k\":2,\"l\":3}", 300},
    {"placement-v0", "{}", 10},
    {"placement-v0", "{\"features\":\"log1p\",\"episode_steps\":5}", 10},
    {"placement-v0", "{\"workload\":\"bert_base\",\"features\":\"normalized\"}", 10},
    /* every sched-v0 step runs a brute-force search (single steps take up to ~15 s under ASan):
     * 20 steps are one whole 16-step episode, the reset after it and, in network mode, ten
     * layer changes. One Test per form, so that Criterion runs them side by side. */
    {"sched-v0", "{}", 20},
    {"sched-v0", "{\"obs\":\"dict\",\"objective\":\"cycles\"}", 20},
    {"sched-v0", "{\"model\":\"vgg16\",\"mode\":\"network\",\"objective\":\"edp\",\"steps_per_layer\":2}", 20},
};

/* value fits the element type of the space (Box: float32/float64 range and its bounds) */
static void check_array(const char *what, const hw_space *sp, const hw_array *a) {
    int64_t n = hw_array_numel(a), want = hw_space_numel(sp);
    cr_assert_eq(n, want, "%s: %lld values, the space has %lld", what, (long long)n, (long long)want);
    for (int64_t i = 0; i < n; i++) {
        double v = hw_array_get_f64(a, i);
        switch (sp->type) {
        case HW_SPACE_BOX: {
            double lo = sp->low[i], hi = sp->high[i];
            if (sp->dtype == HW_DT_FLOAT32) { /* what a float32 Box holds after the cast */
                lo = (double)(float)lo;
                hi = (double)(float)hi;
            }
            cr_assert(!isnan(v) && v >= lo && v <= hi, "%s: element %lld%s%s = %.9g outside [%.9g, %.9g]", what,
                      (long long)i, sp->names && sp->names[i] ? " " : "", sp->names && sp->names[i] ? sp->names[i] : "", v,
                      lo, hi);
            break;
        }
        case HW_SPACE_DISCRETE:
            cr_assert(v == floor(v) && v >= (double)sp->start && v < (double)(sp->start + sp->n), "%s: %g not in Discrete(%lld)",
                      what, v, (long long)sp->n);
            break;
        case HW_SPACE_MULTIDISCRETE:
            cr_assert(v == floor(v) && v >= 0 && v < (double)sp->nvec[i], "%s: element %lld = %g, nvec %lld", what, (long long)i,
                      v, (long long)sp->nvec[i]);
            break;
        case HW_SPACE_MULTIBINARY:
            cr_assert(v == 0 || v == 1, "%s: element %lld = %g not binary", what, (long long)i, v);
            break;
        default:
            cr_assert_fail("%s: nested Dict", what);
        }
    }
}

static void check_obs(const char *what, const hw_space *os, const hw_obs *obs) {
    if (os->type != HW_SPACE_DICT) {
        cr_assert_eq(obs->n, 1, "%s: %d arrays for a non-Dict space", what, obs->n);
        check_array(what, os, &obs->arr[0]);
        return;
    }
    cr_assert_eq(obs->n, os->nchild, "%s: %d arrays, the Dict has %d keys", what, obs->n, os->nchild);
    for (int f = 0; f < obs->n; f++) {
        int k = -1;
        for (int c = 0; c < os->nchild; c++)
            if (obs->keys[f] && !strcmp(obs->keys[f], os->keys[c])) k = c;
        cr_assert(k >= 0, "%s: key %s is not in the Dict space", what, obs->keys[f] ? obs->keys[f] : "(null)");
        char w[256];
        snprintf(w, sizeof w, "%s[%s]", what, obs->keys[f]);
        check_array(w, os->child[k], &obs->arr[f]);
    }
}

/* returns the flat mask (caller frees) or NULL; checks its length against the action space */
static uint8_t *check_mask(const char *what, const hw_space *as, const json_t *info) {
    const json_t *m = json_object_get(info, "action_mask");
    if (!m) return NULL;
    cr_assert(hw_space_is_integer(as), "%s: action_mask on a %s action space", what, hw_space_type_name(as->type));
    cr_assert(json_is_array(m), "%s: action_mask is not a list", what);
    int64_t D = hw_space_numel(as), total = 0;
    for (int64_t d = 0; d < D; d++) total += hw_space_choices(as, d);
    cr_assert_eq((int64_t)json_array_size(m), total, "%s: action_mask has %zu entries, the action space %lld choices", what,
                 json_array_size(m), (long long)total);
    uint8_t *mask = malloc((size_t)total + 1);
    for (int64_t i = 0; i < total; i++) {
        const json_t *v = json_array_get(m, (size_t)i);
        cr_assert(json_is_boolean(v) || json_is_integer(v), "%s: action_mask[%lld] is not 0/1", what, (long long)i);
        mask[i] = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
    }
    return mask;
}

static void play(const form *f) {
    json_error_t je;
    json_t *cfg = json_loads(f->config, 0, &je);
    cr_assert(cfg, "bad test config %s", f->config);
    hw_err err = {0};
    const hw_env_family *fam;
    void *env = hw_env_create(f->env, cfg, &fam, &err);
    cr_assert(env, "%s %s: %s", f->env, f->config, err.msg);
    const hw_space *as = fam->action_space(env), *os = fam->observation_space(env);
    int64_t D = hw_space_numel(as);
    int64_t *ibuf = calloc((size_t)D + 1, sizeof(int64_t));
    double *fbuf = calloc((size_t)D + 1, sizeof(double));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    char what[512];
    uint64_t seed = 1;
    bool need_reset = true;
    uint8_t *mask = NULL;
    for (int t = 0; t < f->steps; t++) {
        if (need_reset) {
            hw_obs obs = {0};
            json_t *info = json_object();
            cr_assert_eq(fam->reset(env, &seed, NULL, &obs, info, &err), 0, "%s reset: %s", f->env, err.msg);
            snprintf(what, sizeof what, "%s %s reset(seed %llu)", f->env, f->config, (unsigned long long)seed);
            check_obs(what, os, &obs);
            free(mask);
            mask = check_mask(what, as, info);
            json_decref(info);
            seed++;
            need_reset = false;
        }
        hw_act act = {(size_t)D, NULL, NULL};
        if (hw_space_is_integer(as)) {
            int64_t base = 0;
            for (int64_t d = 0; d < D; d++) {
                int64_t k = hw_space_choices(as, d), legal = 0;
                for (int64_t j = 0; j < k; j++) legal += !mask || mask[base + j];
                cr_assert(legal > 0, "%s: no legal choice for action element %lld", what, (long long)d);
                int64_t pick = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)legal), j = 0;
                for (;; j++)
                    if ((!mask || mask[base + j]) && pick-- == 0) break;
                ibuf[d] = j + (as->type == HW_SPACE_DISCRETE ? as->start : 0);
                base += k;
            }
            act.i = ibuf;
        } else {
            for (int64_t d = 0; d < D; d++) {
                double lo = isfinite(as->low[d]) ? as->low[d] : -1, hi = isfinite(as->high[d]) ? as->high[d] : 1;
                fbuf[d] = lo + (hi - lo) * gsl_rng_uniform(rng);
            }
            act.f = fbuf;
        }
        hw_step_out out = {0};
        json_t *info = json_object();
        cr_assert_eq(fam->step(env, &act, &out, info, &err), 0, "%s %s step %d: %s", f->env, f->config, t, err.msg);
        snprintf(what, sizeof what, "%s %s step %d", f->env, f->config, t);
        check_obs(what, os, &out.obs);
        free(mask);
        mask = check_mask(what, as, info);
        json_decref(info);
        need_reset = out.terminated || out.truncated;
    }
    free(mask);
    free(ibuf);
    free(fbuf);
    gsl_rng_free(rng);
    fam->destroy(env);
    json_decref(cfg);
}

#define NFORMS ((int)(sizeof FORMS / sizeof *FORMS))

/* Plays the forms of env (nth < 0: all of them; else only its nth form). */
static void family_form(const char *env, int nth) {
    int n = 0;
    for (int k = 0; k < NFORMS; k++)
        if (!strcmp(FORMS[k].env, env)) {
            if (nth < 0 || n == nth) play(&FORMS[k]);
            n++;
        }
    cr_assert(nth < 0 ? n > 0 : nth < n, "%s has %d forms", env, n);
}
static void family(const char *env) { family_form(env, -1); }

static int nforms(const char *env) {
    int n = 0;
    for (int k = 0; k < NFORMS; k++) n += !strcmp(FORMS[k].env, env);
    return n;
}

Test(obs_space, diag) { family("diag-v0"); }
Test(obs_space, maestro, .timeout = 120) { family("maestro-v0"); }
Test(obs_space, dram, .timeout = 120) { family("dram-v0"); }
Test(obs_space, mmap, .timeout = 120) { family("mmap-v0"); }
Test(obs_space, placement, .timeout = 120) { family("placement-v0"); }
Test(obs_space, sched, .timeout = 120) { family_form("sched-v0", 0); }
Test(obs_space, sched_dict_obs, .timeout = 120) { family_form("sched-v0", 1); }
Test(obs_space, sched_network, .timeout = 120) { family_form("sched-v0", 2); }
Test(obs_space, sched_every_form_has_a_test) { cr_assert_eq(nforms("sched-v0"), 3, "a new sched-v0 form needs its Test above"); }

/* every registered family has at least one form above */
Test(obs_space, covers_every_family) {
    for (int i = 0; i < hw_registry_count(); i++) {
        const char *id = hw_registry_at(i)->id;
        bool found = false;
        for (int k = 0; k < NFORMS; k++) found |= !strcmp(FORMS[k].env, id);
        cr_assert(found, "env family %s has no config form in the observation-space test", id);
    }
}
