/* diag.c - see diag.h */
#include "common/env_limits.h"
#include "diag.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "common/info_out.h"

enum { AS_MULTIDISCRETE, AS_DISCRETE, AS_BOX, AS_MULTIBINARY };
static const char *const as_names[] = {"multidiscrete", "discrete", "box", "multibinary", NULL};
static const char *const obs_names[] = {"box", "dict", NULL};

typedef struct diag_state {
    int64_t t;
    int started;
    double noise;
    float last[64];
} diag_state;

typedef struct diag_env {
    int as, dict_obs, mask;
    int64_t dims, choices, len, step_us;
    double target[64]; /* in action units (index, or [-1,1] for box) */
    /* integer spaces: score()'s term of element i at value x, fabs(x - target[i]) / span, at
     * term[i][x] for x in [0, choices) (the same operation on the same operands: the same bits),
     * so the batch entry (eval_many) adds table entries instead of dividing per element */
    double term[64][64];
    hw_space *aspace, *ospace;
    gsl_rng *rng;
    diag_state st;
    /* observation buffers */
    float obs_box[66];
    float obs_last[64];
    double obs_noise;
    int64_t obs_t;
    uint8_t maskbuf[64 * 64];
    /* what the last reset/step's info reports (env.h info_pack packs it after the call) */
    int last_step;
    double last_dist;
} diag_env;

typedef struct diag_snap {
    diag_state st;
    gsl_rng *rng;
} diag_snap;

/* Spins for `us` microseconds; gives up with HW_E_TIMEOUT at the server's request deadline. */
static int burn(int64_t us, hw_err *err) {
    if (us <= 0) return 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000 >= us) return 0;
        if (hw_deadline_check("diag step_us", err)) return -1;
    }
}

static void diag_destroy(void *p) {
    diag_env *e = p;
    if (!e) return;
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    if (e->rng) gsl_rng_free(e->rng);
    free(e);
}

static void *diag_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"action_space", "dims", "choices", "episode_length", "obs", "target_seed",
                                       "step_us", "action_mask", NULL};
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    diag_env *e = calloc(1, sizeof *e);
    if (!e) abort();
    int64_t tseed;
    bool mask;
    if (hw_cfg_enum(cfg, "action_space", as_names, AS_MULTIDISCRETE, &e->as, err) ||
        hw_cfg_int(cfg, "dims", 4, 1, 64, &e->dims, err) || hw_cfg_int(cfg, "choices", 8, 2, 64, &e->choices, err) ||
        hw_cfg_int(cfg, "episode_length", 16, 1, 1000000, &e->len, err) ||
        hw_cfg_enum(cfg, "obs", obs_names, 0, &e->dict_obs, err) ||
        hw_cfg_int(cfg, "target_seed", 0, 0, INT64_MAX, &tseed, err) ||
        hw_cfg_int_capped(cfg, ctx, "step_us", 0, 0, 10000000, 1000000, &e->step_us, err) || hw_cfg_bool(cfg, "action_mask", false, &mask, err)) {
        free(e);
        return NULL;
    }
    e->mask = mask;
    if (e->as == AS_DISCRETE) e->dims = 1;
    if (e->as == AS_MULTIBINARY) e->choices = 2;
    e->rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(e->rng, (unsigned long)tseed);
    for (int64_t i = 0; i < e->dims; i++) {
        int64_t k = (int64_t)gsl_rng_uniform_int(e->rng, (unsigned long)e->choices);
        e->target[i] = e->as == AS_BOX ? 2.0 * (double)k / (double)(e->choices - 1) - 1.0 : (double)k;
    }
    gsl_rng_set(e->rng, 0);
    if (e->as != AS_BOX)
        for (int64_t i = 0; i < e->dims; i++)
            for (int64_t x = 0; x < e->choices; x++) e->term[i][x] = fabs((double)x - e->target[i]) / (double)(e->choices - 1);
    int64_t nv[64];
    for (int64_t i = 0; i < e->dims; i++) nv[i] = e->choices;
    switch (e->as) {
    case AS_MULTIDISCRETE: e->aspace = hw_space_multidiscrete(e->dims, nv); break;
    case AS_DISCRETE: e->aspace = hw_space_discrete(e->choices); break;
    case AS_BOX: e->aspace = hw_space_box_uniform(1, &e->dims, -1, 1, HW_DT_FLOAT32); break;
    case AS_MULTIBINARY: e->aspace = hw_space_multibinary(e->dims); break;
    }
    for (int64_t i = 0; i < e->dims; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "p%lld", (long long)i);
        hw_space_set_name(e->aspace, i, nm);
    }
    if (e->as == AS_MULTIDISCRETE || e->as == AS_DISCRETE) {
        const char *labels[64];
        char store[64][24];
        for (int64_t k = 0; k < e->choices; k++) {
            snprintf(store[k], sizeof store[k], "v%lld", (long long)k);
            labels[k] = store[k];
        }
        for (int64_t i = 0; i < e->dims; i++) hw_space_set_labels(e->aspace, i, (int)e->choices, labels);
    }
    if (e->dict_obs) {
        e->ospace = hw_space_dict();
        hw_space_dict_add(e->ospace, "last_action", hw_space_box_uniform(1, &e->dims, 0, 1, HW_DT_FLOAT32));
        int64_t one = 1;
        hw_space_dict_add(e->ospace, "noise", hw_space_box_uniform(1, &one, 0, 1, HW_DT_FLOAT64));
        hw_space *ts = hw_space_box_uniform(0, NULL, 0, (double)e->len, HW_DT_INT64);
        hw_space_dict_add(e->ospace, "t", ts);
    } else {
        int64_t n = e->dims + 2;
        e->ospace = hw_space_box_uniform(1, &n, 0, 1, HW_DT_FLOAT32);
        hw_space_set_name(e->ospace, e->dims, "noise");
        hw_space_set_name(e->ospace, e->dims + 1, "progress");
    }
    return e;
}

static const hw_space *diag_aspace(const void *p) { return ((const diag_env *)p)->aspace; }
static const hw_space *diag_ospace(const void *p) { return ((const diag_env *)p)->ospace; }

static void fill_obs(diag_env *e, hw_obs *obs) {
    if (!obs) return;
    memset(obs, 0, sizeof *obs);
    if (e->dict_obs) {
        memcpy(e->obs_last, e->st.last, sizeof(float) * (size_t)e->dims);
        e->obs_noise = e->st.noise;
        e->obs_t = e->st.t;
        obs->n = 3;
        obs->keys[0] = "last_action";
        obs->arr[0] = (hw_array){HW_DT_FLOAT32, 1, {e->dims}, e->obs_last};
        obs->keys[1] = "noise";
        obs->arr[1] = (hw_array){HW_DT_FLOAT64, 1, {1}, &e->obs_noise};
        obs->keys[2] = "t";
        obs->arr[2] = (hw_array){HW_DT_INT64, 0, {0}, &e->obs_t};
    } else {
        memcpy(e->obs_box, e->st.last, sizeof(float) * (size_t)e->dims);
        e->obs_box[e->dims] = (float)e->st.noise;
        e->obs_box[e->dims + 1] = (float)e->st.t / (float)e->len;
        obs->n = 1;
        obs->arr[0] = (hw_array){HW_DT_FLOAT32, 1, {e->dims + 2}, e->obs_box};
    }
}

static bool has_mask(const diag_env *e) { return e->mask && e->as != AS_BOX; }

/* the info of the last reset (distance and t only after a step) and the all-ones mask */
static void put_info(const diag_env *e, hw_info_out *o) {
    if (e->last_step) {
        hw_info_real(o, "distance", e->last_dist);
        hw_info_int(o, "t", e->st.t);
    }
    if (!has_mask(e)) return;
    hw_info_out m = hw_info_list(o, "action_mask", (size_t)(e->dims * e->choices));
    for (int64_t i = 0; i < e->dims * e->choices; i++) hw_info_item_int(&m, 1);
}

static void diag_info_pack(const void *p, struct msgpack_packer *pk) {
    const diag_env *e = p;
    hw_info_out o = hw_info_packer(pk, (size_t)(2 * e->last_step + has_mask(e)));
    put_info(e, &o);
}

static int diag_reset(void *p, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)options;
    (void)err;
    diag_env *e = p;
    if (seed) gsl_rng_set(e->rng, (unsigned long)*seed);
    e->st.t = 0;
    e->st.started = 1;
    memset(e->st.last, 0, sizeof e->st.last);
    e->st.noise = gsl_rng_uniform(e->rng);
    fill_obs(e, obs);
    e->last_step = 0;
    hw_info_out o = hw_info_json(info);
    put_info(e, &o);
    return 0;
}

/* Reward and distance of an action given as doubles in action units. */
static double score(const diag_env *e, const double *a, double *dist) {
    double d = 0;
    double span = e->as == AS_BOX ? 2.0 : (double)(e->choices - 1);
    for (int64_t i = 0; i < e->dims; i++) d += fabs(a[i] - e->target[i]) / span;
    d /= (double)e->dims;
    *dist = d;
    return 1.0 - d;
}

static void act_to_double(const diag_env *e, const hw_act *act, double *a) {
    for (int64_t i = 0; i < e->dims; i++) a[i] = act->i ? (double)act->i[i] : act->f[i];
}

static int diag_step(void *p, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    diag_env *e = p;
    if (!e->st.started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    if (e->st.t >= e->len) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    if (burn(e->step_us, err)) return -1;
    double a[64] = {0}, dist;
    act_to_double(e, act, a);
    out->reward = score(e, a, &dist);
    double span = e->as == AS_BOX ? 2.0 : (double)(e->choices - 1);
    for (int64_t i = 0; i < e->dims; i++) e->st.last[i] = (float)((e->as == AS_BOX ? a[i] + 1.0 : a[i]) / span);
    e->st.t++;
    e->st.noise = gsl_rng_uniform(e->rng);
    /* the horizon is a time limit, not a terminal state of the task: truncated (Gymnasium's definition) */
    out->terminated = false;
    out->truncated = e->st.t >= e->len;
    fill_obs(e, &out->obs);
    e->last_step = 1;
    e->last_dist = dist;
    hw_info_out o = hw_info_json(info);
    put_info(e, &o);
    return 0;
}

static void *diag_snapshot(const void *p, hw_err *err) {
    (void)err;
    const diag_env *e = p;
    diag_snap *s = malloc(sizeof *s);
    if (!s) abort();
    s->st = e->st;
    s->rng = gsl_rng_clone(e->rng);
    return s;
}

static int diag_restore(void *p, const void *snap, hw_err *err) {
    (void)err;
    diag_env *e = p;
    const diag_snap *s = snap;
    e->st = s->st;
    gsl_rng_memcpy(e->rng, s->rng);
    return 0;
}

static void diag_snap_free(void *snap) {
    diag_snap *s = snap;
    if (!s) return;
    gsl_rng_free(s->rng);
    free(s);
}

static int diag_evaluate(void *p, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    diag_env *e = p;
    if (!json_is_array(point)) return hw_fail(err, HW_E_BAD_ACTION, "point: expected an array of %lld numbers", (long long)e->dims);
    if ((int64_t)json_array_size(point) != e->dims)
        return hw_fail(err, HW_E_BAD_ACTION, "point: %zu elements, expected %lld", json_array_size(point), (long long)e->dims);
    double a[64];
    for (int64_t i = 0; i < e->dims; i++) {
        json_t *v = json_array_get(point, (size_t)i);
        if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_ACTION, "point[%lld]: expected a number", (long long)i);
        a[i] = json_number_value(v);
        double lo = e->as == AS_BOX ? -1 : 0, hi = e->as == AS_BOX ? 1 : (double)(e->choices - 1);
        if (!(a[i] >= lo && a[i] <= hi))
            return hw_fail(err, HW_E_BAD_ACTION, "point[%lld] (p%lld): %g out of range [%g, %g]", (long long)i, (long long)i, a[i], lo, hi);
        if (e->as != AS_BOX && a[i] != floor(a[i])) return hw_fail(err, HW_E_BAD_ACTION, "point[%lld]: %g is not an integer", (long long)i, a[i]);
    }
    if (burn(e->step_us, err)) return -1;
    double dist;
    *reward = score(e, a, &dist);
    if (metrics) {
        json_object_set_new(metrics, "distance", json_real(dist));
        json_object_set_new(metrics, "feasible", json_true());
    }
    return 0;
}

static void *diag_create(const json_t *cfg, hw_err *err) { return diag_create_ctx(cfg, &hw_env_ctx_local, err); }

/* the env (its term table and mask buffer are inline) and its GSL generator; the spaces are
 * counted by the registry (issue 28 finding 1: tests/c/security test_memest.c) */
static size_t diag_mem_bytes(const void *p) {
    const diag_env *e = p;
    return sizeof *e + sizeof(gsl_rng) + gsl_rng_size(e->rng) + 64;
}

const hw_env_family hw_family_diag = {
    .id = "diag-v0",
    .summary = "diagnostic env for tests and benchmarks (not a hardware model): find a hidden target vector",
    HW_ENV_OPS(diag),
    .info_pack = diag_info_pack,
};

/* Hook for the lean batch entry (diag_lean.c): scores an action already validated against the
 * action space, as evaluate() does, with no JSON. */
int diag_env_eval_action(void *p, const hw_act *act, double *reward, double *dist, hw_err *err);
int diag_env_eval_action(void *p, const hw_act *act, double *reward, double *dist, hw_err *err) {
    diag_env *e = p;
    double a[64];
    act_to_double(e, act, a);
    if (burn(e->step_us, err)) return -1; /* TIMEOUT with its message (issue 28 finding 2) */
    *reward = score(e, a, dist);
    return 0;
}

/* The lean entry's vectorised form (env_lean.h eval_many): n integer points of e->dims elements
 * (int64_t or int8_t), already range-checked; score()'s numbers for each, without a call per
 * point: the same sum in the same order, of the terms tabulated at create (term[i][x]), so the
 * same bits. A point out of [0, choices) makes the call decline (-1), as do step_us (its burn
 * honours the request deadline, point by point through diag_env_eval_action) and a Box space.
 * The loop is compiled for each d from 1 to 8 (unrolled; dividing by 4 or 8 becomes a
 * multiplication by an exact reciprocal: the same bits), bigger d share the generic loop. */
#define DIAG_MANY(NAME, T)                                                                                                  \
    static inline __attribute__((always_inline)) void NAME(const diag_env *e, const T *restrict pts, int64_t n, int64_t d,     \
                                                           double *restrict reward, double *restrict dist, int64_t stride,     \
                                                           bool want) {                                                       \
        double dd = (double)d;                                                                                              \
        for (int64_t k = 0; k < n; k++) {                                                                                   \
            const T *x = pts + k * d;                                                                                       \
            double s = 0;                                                                                                   \
            _Pragma("GCC unroll 8") for (int64_t i = 0; i < d; i++) s += e->term[i][(uint64_t)(int64_t)x[i] & 63];          \
            s /= dd;                                                                                                        \
            reward[k] = 1.0 - s;                                                                                            \
            if (want) dist[k * stride] = s;                                                                                 \
        }                                                                                                                   \
    }
DIAG_MANY(many64, int64_t)
DIAG_MANY(many8, int8_t)
#undef DIAG_MANY

#define DIAG_CASE(F, D)                                                                                                     \
    case D:                                                                                                                 \
        if (dist) F(e, pts, n, D, reward, dist, dist_stride, true);                                                         \
        else F(e, pts, n, D, reward, NULL, 0, false);                                                                       \
        break;
#define DIAG_SWITCH(F)                                                                                                      \
    switch (d) {                                                                                                            \
        DIAG_CASE(F, 1)                                                                                                     \
        DIAG_CASE(F, 2)                                                                                                     \
        DIAG_CASE(F, 3)                                                                                                     \
        DIAG_CASE(F, 4)                                                                                                     \
        DIAG_CASE(F, 5)                                                                                                     \
        DIAG_CASE(F, 6)                                                                                                     \
        DIAG_CASE(F, 7)                                                                                                     \
        DIAG_CASE(F, 8)                                                                                                     \
    default: F(e, pts, n, d, reward, dist, dist_stride, dist != NULL); break;                                               \
    }

/* every element in [0, c): one pass before the scoring loop, in blocks of 16 with a fixed trip
 * count (GCC vectorises them at -O2) */
static bool all_below64(const int64_t *restrict x, size_t cnt, uint64_t c) {
    uint64_t bad[16] = {0}, any = 0;
    size_t i = 0;
    for (; i + 16 <= cnt; i += 16)
        for (int j = 0; j < 16; j++) bad[j] |= (uint64_t)x[i + j] >= c;
    for (; i < cnt; i++) any |= (uint64_t)x[i] >= c;
    for (int j = 0; j < 16; j++) any |= bad[j];
    return !any;
}
static bool all_below8(const int8_t *restrict x, size_t cnt, uint64_t c) {
    uint8_t mx[16] = {0}, m = 0; /* a negative value reads as 128 or more */
    size_t i = 0;
    for (; i + 16 <= cnt; i += 16)
        for (int j = 0; j < 16; j++) mx[j] = (uint8_t)x[i + j] > mx[j] ? (uint8_t)x[i + j] : mx[j];
    for (; i < cnt; i++) m = (uint8_t)x[i] > m ? (uint8_t)x[i] : m;
    for (int j = 0; j < 16; j++) m = mx[j] > m ? mx[j] : m;
    return m < c;
}

int diag_env_eval_many(void *p, const int64_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride);
int diag_env_eval_many(void *p, const int64_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride) {
    const diag_env *e = p;
    if (e->step_us > 0 || d != e->dims || e->as == AS_BOX || !all_below64(pts, (size_t)(n * d), (uint64_t)e->choices)) return -1;
    DIAG_SWITCH(many64)
    return 0;
}

/* the same on int8 points (the wire dtype of libhwgym's requests for diag-v0's spaces) */
int diag_env_eval_many8(void *p, const int8_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride);
int diag_env_eval_many8(void *p, const int8_t *pts, int64_t n, int64_t d, double *reward, double *dist, int64_t dist_stride) {
    const diag_env *e = p;
    if (e->step_us > 0 || d != e->dims || e->as == AS_BOX || !all_below8(pts, (size_t)(n * d), (uint64_t)e->choices)) return -1;
    DIAG_SWITCH(many8)
    return 0;
}
#undef DIAG_SWITCH
#undef DIAG_CASE
