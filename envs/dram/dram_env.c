/* dram_env.c - the dram-v0 environment (DRAM-Gym on the native controller model).
 * Action: the 10 memory-controller parameters of the MARL-DRAM paper's Table 1 (MultiDiscrete
 * with names and labels; "tdm": one parameter per step; "box": [-1,1]^10 binned as ArchGym's
 * "sa" form). Observation: [latency, power, energy]. Reward: the paper's Eq. 1, capped.
 * Config fields and semantics: docs/dram.md. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/env_limits.h"
#include "common/hw_files.h"
#include "dram_model.h"
#include "env.h"

#define NP 10
#define MAXCH 16

enum { P_PAGE = 0, P_SCHED, P_BUF, P_RBS, P_RESP, P_REF, P_POST, P_PULL, P_ARB, P_MAT };
static const char *const pnames[NP] = {"PagePolicy", "Scheduler", "SchedulerBuffer", "RequestBufferSize", "RespQueue",
                                       "RefreshPolicy", "RefreshMaxPostponed", "RefreshMaxPulledin", "Arbiter",
                                       "MaxActiveTransactions"};

enum { AS_MD = 0, AS_TDM, AS_BOX };
static const char *const as_names[] = {"multidiscrete", "tdm", "box", NULL};
enum { OBJ_LAT = 0, OBJ_POW, OBJ_EN, OBJ_JOINT };
static const char *const obj_names[] = {"latency", "power", "energy", "joint", NULL};
enum { LAT_MEAN = 0, LAT_TOTAL };
static const char *const lat_names[] = {"mean", "total_time", NULL};
static const char *const range_names[] = {"paper", "archgym", NULL};
/* archgym_*: ArchGym DRAM-Gym style traces, all reads, one request per cycle (defaults of
 * read_ratio 1 and interval 1; either may still be given) */
enum { WL_STREAM = 0, WL_RANDOM, WL_MIXED, WL_FILE, WL_AG_STREAM, WL_AG_RANDOM };
static const char *const wl_names[] = {"stream", "random", "mixed", "file", "archgym_stream", "archgym_random", NULL};

typedef struct dram_state {
    int started;
    int64_t t;        /* steps taken in the episode */
    int tdm_k;        /* tdm: parameter index to choose next */
    int64_t partial[NP];
    double obs[4];
    uint64_t trace_seed;
    gsl_rng *rng;
} dram_state;

typedef struct dram_env {
    dram_memspec ms;
    dram_addrmap am;
    dram_ctrl base;
    int as, objective, lat_metric, ranges, workload;
    int64_t episode_length;
    double target[3]; /* latency (ns), power (mW), energy (pJ) */
    double reward_cap;
    bool fixed_trace;
    uint64_t fixed_seed;
    dram_gen gen;
    dram_trace trace;       /* current trace */
    uint64_t trace_for;     /* seed the current trace was generated with */
    int have_trace;
    /* choices per parameter: values (numbers) or enum indices */
    int nch[NP];
    int val[NP][MAXCH];
    const char *lab[NP][MAXCH];
    char labbuf[NP][MAXCH][12];
    hw_space *aspace, *ospace;
    dram_state st;
    double obs_buf[4];
} dram_env;

typedef struct dram_snap {
    dram_state st;
} dram_snap;

static void set_enum_param(dram_env *e, int p, const char *const *names, const int *order, int n) {
    e->nch[p] = n;
    for (int i = 0; i < n; i++) {
        e->val[p][i] = order ? order[i] : i;
        e->lab[p][i] = names[order ? order[i] : i];
    }
}

static void set_num_param(dram_env *e, int p, const int *vals, int n) {
    e->nch[p] = n;
    for (int i = 0; i < n; i++) {
        e->val[p][i] = vals[i];
        snprintf(e->labbuf[p][i], sizeof e->labbuf[p][i], "%d", vals[i]);
        e->lab[p][i] = e->labbuf[p][i];
    }
}

static void build_params(dram_env *e) {
    set_enum_param(e, P_PAGE, dram_pp_names, NULL, 4);
    /* ArchGym's scheduler_mapper is {0: Fifo, 1: FrFcfsGrp, 2: FrFcfs}; the paper's Table 1 and
     * DRAMSys list Fifo, FrFcfs, FrFcfsGrp. The other enums have the same order in both. */
    static const int sched_archgym[] = {0, 2, 1};
    set_enum_param(e, P_SCHED, dram_sched_names, e->ranges == 1 ? sched_archgym : NULL, 3);
    set_enum_param(e, P_BUF, dram_buf_names, NULL, 3);
    set_enum_param(e, P_RESP, dram_resp_names, NULL, 2);
    set_enum_param(e, P_REF, dram_ref_names, NULL, 2);
    set_enum_param(e, P_ARB, dram_arb_names, NULL, 3);
    static const int one8[] = {1, 2, 3, 4, 5, 6, 7, 8}, pow2[] = {1, 2, 4, 8, 16, 32, 64, 128}, pow2_8[] = {1, 2, 4, 8};
    set_num_param(e, P_MAT, pow2, 8);
    if (e->ranges == 0) { /* paper Table 1 */
        set_num_param(e, P_RBS, one8, 8);
        set_num_param(e, P_POST, one8, 8);
        set_num_param(e, P_PULL, one8, 8);
    } else { /* ArchGym DRAMEnv mappers */
        set_num_param(e, P_RBS, pow2, 8);
        set_num_param(e, P_POST, pow2_8, 4);
        set_num_param(e, P_PULL, pow2_8, 4);
    }
}

static void dram_destroy(void *p) {
    dram_env *e = p;
    if (!e) return;
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    if (e->st.rng) gsl_rng_free(e->st.rng);
    dram_trace_free(&e->trace);
    free(e);
}

static int load_memspec(dram_env *e, const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    json_t *m = json_object_get(cfg, "memspec");
    char *text = NULL;
    size_t len = 0;
    bool from_file;
    if (hw_files_cfg_text(ctx->files, cfg, "memspec_file", &text, &len, &from_file, err)) return -1;
    if (text && m) {
        free(text);
        return hw_fail(err, HW_E_BAD_CONFIG, "config.memspec_file: give memspec or memspec_file, not both");
    }
    if (text) {
        json_t *j = hw_files_parse_json(ctx->files, "config.memspec_file", text, len, from_file, err);
        free(text);
        if (!j) return -1;
        int rc = dram_memspec_from_json(j, &e->ms, err);
        json_decref(j);
        if (rc) {
            hw_err_prefix(err, "config.memspec_file");
            hw_files_redact(ctx->files, from_file, "config.memspec_file", "memspec", err);
        }
        return rc;
    }
    if (!m || json_is_null(m)) return dram_memspec_builtin("DDR4-2400", &e->ms, err);
    if (json_is_string(m)) {
        if (dram_memspec_builtin(json_string_value(m), &e->ms, err)) {
            hw_err_prefix(err, "config");
            return -1;
        }
        return 0;
    }
    if (json_is_object(m)) {
        if (dram_memspec_from_json(m, &e->ms, err)) {
            hw_err_prefix(err, "config");
            return -1;
        }
        return 0;
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "config.memspec: expected a built-in name (DDR4-2400, DDR3-1600) or a memspec object");
}

static int read_targets(dram_env *e, const json_t *cfg, hw_err *err) {
    e->target[0] = e->lat_metric == LAT_MEAN ? 20.0 : 1.0e6;
    e->target[1] = 500.0;
    e->target[2] = 1.0e9;
    json_t *t = json_object_get(cfg, "targets");
    if (!t || json_is_null(t)) return 0;
    if (!json_is_object(t)) return hw_fail(err, HW_E_BAD_CONFIG, "config.targets: expected an object {latency, power, energy}");
    static const char *const keys[] = {"latency", "power", "energy", NULL};
    if (hw_cfg_check_keys(t, keys, err)) {
        hw_err_prefix(err, "config.targets");
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (hw_cfg_num(t, keys[i], e->target[i], 1e-12, 1e300, &e->target[i], err)) {
            hw_err_prefix(err, "config.targets");
            return -1;
        }
    return 0;
}

static int read_workload(dram_env *e, const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    int64_t count, interval;
    double rr, span, base, sf, clk;
    if (hw_cfg_enum(cfg, "workload", wl_names, WL_STREAM, &e->workload, err)) return -1;
    bool ag = e->workload == WL_AG_STREAM || e->workload == WL_AG_RANDOM;
    if (ag) e->workload = e->workload == WL_AG_STREAM ? WL_STREAM : WL_RANDOM;
    if (hw_cfg_int_capped(cfg, ctx, "count", 10000, 1, 10000000, 1000000, &count, err) ||
        hw_cfg_num(cfg, "read_ratio", ag ? 1.0 : 2.0 / 3.0, 0, 1, &rr, err) ||
        hw_cfg_num(cfg, "span", 1073741824.0, 64, 1.8e19, &span, err) ||
        hw_cfg_num(cfg, "base", 0, 0, 1.8e19, &base, err) ||
        hw_cfg_int(cfg, "interval", ag ? 1 : 16, 0, 1000000000, &interval, err) ||
        hw_cfg_num(cfg, "stream_frac", 0.5, 0, 1, &sf, err) ||
        hw_cfg_num(cfg, "trace_clk_mhz", 1e6 / e->ms.tck_ps, 1, 100000, &clk, err))
        return -1;
    e->gen = (dram_gen){e->workload == WL_RANDOM ? DRAM_GEN_RANDOM : e->workload == WL_MIXED ? DRAM_GEN_MIXED : DRAM_GEN_STREAM,
                        count, rr, (uint64_t)base, (uint64_t)span, interval, 0, sf, clk};
    json_t *ts = json_object_get(cfg, "trace_seed");
    if (ts && !json_is_null(ts)) {
        if (!json_is_integer(ts) || json_integer_value(ts) < 0)
            return hw_fail(err, HW_E_BAD_CONFIG, "config.trace_seed: expected a non-negative integer or null");
        e->fixed_trace = true;
        e->fixed_seed = (uint64_t)json_integer_value(ts);
    }
    char *file = NULL;
    size_t flen = 0;
    if (hw_files_cfg_text(ctx->files, cfg, "trace_file", &file, &flen, NULL, err)) return -1;
    if (e->workload == WL_FILE) {
        if (!file) return hw_fail(err, HW_E_BAD_CONFIG, "config.trace_file: required when workload is \"file\"");
        dram_trace_init(&e->trace, clk);
        int rc = dram_trace_parse(file, flen, &e->trace, err);
        free(file);
        if (rc) { /* trace errors give line numbers only, never content */
            hw_err_prefix(err, "config.trace_file");
            return -1;
        }
        if (e->trace.n == 0) return hw_fail(err, HW_E_BAD_CONFIG, "config.trace_file: the trace has no requests");
        int64_t cap = hw_env_limit(ctx, "count", 1000000);
        if (e->trace.n > cap)
            return hw_fail(err, HW_E_LIMIT, "config.trace_file: %lld requests exceed this server's limit of %lld (the 'count' limit)",
                           (long long)e->trace.n, (long long)cap);
        e->have_trace = 1;
        e->fixed_trace = true;
    } else if (file) {
        free(file);
        return hw_fail(err, HW_E_BAD_CONFIG, "config.trace_file: only with workload \"file\"");
    }
    return 0;
}

static void *dram_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"memspec", "memspec_file", "address_mapping", "workload", "count", "read_ratio",
                                       "span", "base", "interval", "stream_frac", "trace_clk_mhz", "trace_seed",
                                       "trace_file", "action_space", "ranges", "objective", "latency_metric", "targets",
                                       "reward_cap", "episode_length", "jedec_act_act", NULL};
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    dram_env *e = calloc(1, sizeof *e);
    if (!e) abort();
    dram_ctrl_default(&e->base);
    bool jedec;
    if (load_memspec(e, cfg, ctx, err)) goto fail;
    json_t *am = json_object_get(cfg, "address_mapping");
    if (am && !json_is_null(am)) {
        if (dram_addrmap_from_json(am, &e->ms, &e->am, err)) {
            hw_err_prefix(err, "config");
            goto fail;
        }
    } else
        dram_addrmap_default(&e->ms, &e->am);
    e->base.req_bytes = e->ms.bl * e->ms.width * e->ms.devices / 8;
    if (hw_cfg_enum(cfg, "action_space", as_names, AS_MD, &e->as, err) ||
        hw_cfg_enum(cfg, "ranges", range_names, 0, &e->ranges, err) ||
        hw_cfg_enum(cfg, "objective", obj_names, OBJ_LAT, &e->objective, err) ||
        hw_cfg_enum(cfg, "latency_metric", lat_names, LAT_MEAN, &e->lat_metric, err) ||
        hw_cfg_num(cfg, "reward_cap", 1e4, 1e-9, 1e300, &e->reward_cap, err) ||
        hw_cfg_int(cfg, "episode_length", 10, 1, 1000000, &e->episode_length, err) ||
        hw_cfg_bool(cfg, "jedec_act_act", false, &jedec, err) || read_targets(e, cfg, err) || read_workload(e, cfg, ctx, err))
        goto fail;
    e->base.jedec_act_act = jedec;
    build_params(e);
    int64_t nv[NP];
    for (int p = 0; p < NP; p++) nv[p] = e->nch[p];
    if (e->as == AS_MD) e->aspace = hw_space_multidiscrete(NP, nv);
    else if (e->as == AS_BOX) {
        int64_t n = NP;
        e->aspace = hw_space_box_uniform(1, &n, -1, 1, HW_DT_FLOAT32);
    } else {
        int64_t mx = 0;
        for (int p = 0; p < NP; p++) mx = nv[p] > mx ? nv[p] : mx;
        e->aspace = hw_space_discrete(mx);
        hw_space_set_name(e->aspace, 0, "parameter_value");
    }
    if (e->as != AS_TDM)
        for (int p = 0; p < NP; p++) hw_space_set_name(e->aspace, p, pnames[p]);
    if (e->as == AS_MD)
        for (int p = 0; p < NP; p++) hw_space_set_labels(e->aspace, p, e->nch[p], e->lab[p]);
    int64_t no = e->as == AS_TDM ? 4 : 3;
    double lo[4] = {0, 0, 0, 0}, hi[4] = {INFINITY, INFINITY, INFINITY, NP}; /* unbounded: inf, not a large number */
    e->ospace = hw_space_box(1, &no, lo, hi, HW_DT_FLOAT64);
    hw_space_set_name(e->ospace, 0, e->lat_metric == LAT_MEAN ? "latency_ns" : "total_time_ns");
    hw_space_set_name(e->ospace, 1, "power_mW");
    hw_space_set_name(e->ospace, 2, "energy_pJ");
    if (e->as == AS_TDM) hw_space_set_name(e->ospace, 3, "parameter_index");
    e->st.rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!e->st.rng) abort();
    gsl_rng_set(e->st.rng, 0);
    return e;
fail:
    dram_destroy(e);
    return NULL;
}

static const hw_space *dram_aspace(const void *p) { return ((const dram_env *)p)->aspace; }
static const hw_space *dram_ospace(const void *p) { return ((const dram_env *)p)->ospace; }

/* Makes the current trace the one for `seed` (no-op for fixed traces already built). */
static void ensure_trace(dram_env *e, uint64_t seed) {
    if (e->workload == WL_FILE) return;
    if (e->fixed_trace) seed = e->fixed_seed;
    if (e->have_trace && e->trace_for == seed) return;
    dram_trace_free(&e->trace);
    dram_trace_init(&e->trace, e->gen.clk_mhz);
    dram_gen g = e->gen;
    g.seed = seed;
    dram_generate(&g, &e->trace);
    e->trace_for = seed;
    e->have_trace = 1;
}

static void fill_obs(dram_env *e, hw_obs *obs) {
    if (!obs) return;
    memset(obs, 0, sizeof *obs);
    memcpy(e->obs_buf, e->st.obs, sizeof e->obs_buf);
    e->obs_buf[3] = e->st.tdm_k;
    obs->n = 1;
    obs->arr[0] = (hw_array){HW_DT_FLOAT64, 1, {e->as == AS_TDM ? 4 : 3}, e->obs_buf};
}

static int dram_reset(void *p, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)options;
    (void)err;
    dram_env *e = p;
    if (seed) gsl_rng_set(e->st.rng, (unsigned long)*seed);
    /* 53 bits, so the seed reported in info survives JSON number handling everywhere */
    e->st.trace_seed = (((uint64_t)gsl_rng_get(e->st.rng) << 32) | (uint64_t)gsl_rng_get(e->st.rng)) & ((1ULL << 53) - 1);
    ensure_trace(e, e->st.trace_seed);
    e->st.started = 1;
    e->st.t = 0;
    e->st.tdm_k = 0;
    memset(e->st.obs, 0, sizeof e->st.obs);
    memset(e->st.partial, 0, sizeof e->st.partial);
    fill_obs(e, obs);
    if (info) {
        json_object_set_new(info, "n_requests", json_integer(e->trace.n));
        json_object_set_new(info, "trace_seed", json_integer((json_int_t)(e->fixed_trace ? e->fixed_seed : e->st.trace_seed)));
    }
    return 0;
}

static double reward_of(const dram_env *e, const double *o) {
    double r[3];
    for (int i = 0; i < 3; i++) {
        double d = fabs(e->target[i] - o[i]);
        r[i] = d > 0 ? e->target[i] / d : e->reward_cap;
        if (r[i] > e->reward_cap) r[i] = e->reward_cap;
    }
    switch (e->objective) {
    case OBJ_LAT: return r[0];
    case OBJ_POW: return r[1];
    case OBJ_EN: return r[2];
    default: return r[0] * r[1];
    }
}

/* Simulates controller c on the current trace: obs[0..2], metrics into m (may be NULL). */
static int run_design(dram_env *e, const dram_ctrl *c, double *obs, double *reward, json_t *m, hw_err *err) {
    dram_result r;
    memset(&r, 0, sizeof r);
    if (dram_simulate(&e->ms, &e->am, c, &e->trace, &r, err)) return -1;
    obs[0] = e->lat_metric == LAT_MEAN ? r.avg_lat_ns : r.total_time_ns;
    obs[1] = r.power_mW;
    obs[2] = r.energy_pJ;
    *reward = reward_of(e, obs);
    if (m) {
        dram_result_json(c, &r, m);
        json_object_set_new(m, "memspec", json_string(e->ms.id));
        json_object_set_new(m, "latency", json_real(obs[0]));
        json_object_set_new(m, "latency_metric", json_string(lat_names[e->lat_metric]));
        json_object_set_new(m, "objective", json_string(obj_names[e->objective]));
        json_object_set_new(m, "reward", json_real(*reward));
        json_object_set_new(m, "feasible", json_true());
    }
    return 0;
}

static int box_bin(double x, int n) {
    if (!(x >= -1)) x = -1;
    if (x > 1) x = 1;
    int k = (int)floor((x + 1) / 2 * n);
    return k >= n ? n - 1 : k;
}

static int dram_step(void *p, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    dram_env *e = p;
    if (!e->st.started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    int64_t steps = e->as == AS_TDM ? e->episode_length * NP : e->episode_length;
    if (e->st.t >= steps) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    int64_t idx[NP];
    bool full = true;
    if (e->as == AS_TDM) {
        int k = e->st.tdm_k;
        int64_t v = act->i[0];
        if (v >= e->nch[k]) v = e->nch[k] - 1;
        e->st.partial[k] = v;
        e->st.tdm_k = (k + 1) % NP;
        full = e->st.tdm_k == 0;
        memcpy(idx, e->st.partial, sizeof idx);
    } else if (e->as == AS_BOX)
        for (int q = 0; q < NP; q++) idx[q] = box_bin(act->f[q], e->nch[q]);
    else
        for (int q = 0; q < NP; q++) idx[q] = act->i[q];
    out->reward = 0;
    if (full) {
        dram_ctrl c = e->base;
        for (int q = 0; q < NP; q++) dram_ctrl_set(&c, q, e->val[q][idx[q]]);
        if (run_design(e, &c, e->st.obs, &out->reward, info, err)) return -1;
    }
    e->st.t++;
    /* the horizon is a time limit, not a terminal state of the task: truncated (Gymnasium's definition) */
    out->terminated = false;
    out->truncated = e->st.t >= steps;
    fill_obs(e, &out->obs);
    if (info) {
        json_object_set_new(info, "t", json_integer(e->st.t));
        if (!full) json_object_set_new(info, "parameter_index", json_integer(e->st.tdm_k));
    }
    return 0;
}

static void *dram_snapshot(const void *p, hw_err *err) {
    (void)err;
    const dram_env *e = p;
    dram_snap *s = malloc(sizeof *s);
    if (!s) abort();
    s->st = e->st;
    s->st.rng = gsl_rng_clone(e->st.rng);
    return s;
}

static int dram_restore(void *p, const void *snap, hw_err *err) {
    (void)err;
    dram_env *e = p;
    const dram_snap *s = snap;
    gsl_rng *keep = e->st.rng;
    e->st = s->st;
    e->st.rng = keep;
    gsl_rng_memcpy(e->st.rng, s->st.rng);
    if (e->st.started) ensure_trace(e, e->st.trace_seed);
    return 0;
}

static void dram_snap_free(void *snap) {
    dram_snap *s = snap;
    if (!s) return;
    gsl_rng_free(s->st.rng);
    free(s);
}

static int dram_evaluate(void *p, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    dram_env *e = p;
    dram_ctrl c = e->base;
    if (json_is_object(point)) {
        if (dram_ctrl_apply_json(point, &c, err)) return -1;
    } else if (json_is_array(point)) {
        if (json_array_size(point) != NP)
            return hw_fail(err, HW_E_BAD_ACTION, "point: %zu elements, expected %d (one per parameter)", json_array_size(point), NP);
        for (int q = 0; q < NP; q++) {
            json_t *v = json_array_get(point, (size_t)q);
            if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_ACTION, "point[%d] (%s): expected a number", q, pnames[q]);
            double x = json_number_value(v);
            int ix;
            if (e->as == AS_BOX) {
                if (!(x >= -1 && x <= 1)) return hw_fail(err, HW_E_BAD_ACTION, "point[%d] (%s): %g out of [-1, 1]", q, pnames[q], x);
                ix = box_bin(x, e->nch[q]);
            } else {
                if (x != floor(x) || x < 0 || x >= e->nch[q])
                    return hw_fail(err, HW_E_BAD_ACTION, "point[%d] (%s): %g is not a choice index in [0, %d]", q, pnames[q], x,
                                   e->nch[q] - 1);
                ix = (int)x;
            }
            dram_ctrl_set(&c, q, e->val[q][ix]);
        }
    } else
        return hw_fail(err, HW_E_BAD_ACTION, "point: expected an array of %d choice indices or an object of named parameters", NP);
    if (!e->have_trace) ensure_trace(e, e->fixed_trace ? e->fixed_seed : 0);
    double obs[3];
    return run_design(e, &c, obs, reward, metrics, err);
}

static void *dram_create(const json_t *cfg, hw_err *err) { return dram_create_ctx(cfg, &hw_env_ctx_local, err); }

/* the trace (given or generated): cycle + address + flag per request, plus the simulator's
 * per-request scratch (about as much again) */
static size_t dram_mem_bytes(const void *p) {
    const dram_env *e = p;
    int64_t n = e->have_trace ? e->trace.n : e->gen.count;
    return sizeof *e + (size_t)n * 2 * (2 * sizeof(uint64_t) + 1);
}

const hw_env_family hw_family_dram = {
    .id = "dram-v0",
    .summary = "DRAM memory-controller tuning (MARL-DRAM / DRAM-Gym) on a native DRAMSys-like DDR3/DDR4 model",
    HW_ENV_OPS(dram),
};
