/* placement_env.c - see placement_env.h */
#include "placement_env.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/config.h"
#include "common/hw_files.h"
#include "common/info_out.h"
#include "common/zoo.h"

/* A constant run of info bytes (see put_result); n = 0: not packed (the writers run instead). */
typedef struct {
    unsigned char b[64];
    size_t n;
} pl_chunk;

typedef struct pl_env {
    pl_model *m;
    pl_scratch *s;
    hw_space *aspace, *ospace;
    int64_t steps;
    double invalid_scale;
    int invalid_const;    /* 1: invalid reward is invalid_value */
    double invalid_value;
    int started;
    int64_t t;
    uint8_t *cur;      /* [nt] last rectified mapping (observation) */
    uint8_t *act;      /* [nt] action buffer */
    int64_t *obs_map;  /* [nt] */
    /* what the last reset/step's info reports (env.h info_pack packs it after the call) */
    int last_step;
    pl_result last;
    /* the constant runs of a step's info, packed at create (see put_result) */
    pl_chunk rect_head, mem_head[PL_MAX_MEMS], mem_const[PL_MAX_MEMS];
    bool prepacked; /* every chunk above fits (else put_result writes them key by key) */
} pl_env;

enum { OCC_KEYS = 7 };
static void prepack_info(pl_env *e);

typedef struct pl_snap {
    int started;
    int64_t t;
    uint8_t cur[];
} pl_snap;

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

const pl_model *pl_env_model(const void *env) { return ((const pl_env *)env)->m; }

static void env_destroy(void *p) {
    pl_env *e = p;
    if (!e) return;
    pl_model_free(e->m);
    pl_scratch_free(e->s);
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    free(e->cur);
    free(e->act);
    free(e->obs_map);
    free(e);
}

/* A JSON object given inline (key) or as a file (key_file: a path read under the caller's
 * file policy, or {"text": "<JSON>"}); NULL when neither. *from_file: read from a file. */
static json_t *obj_or_file(const json_t *cfg, const hw_env_ctx *ctx, const char *key, const char *fkey, int *failed, bool *from_file,
                           hw_err *err) {
    *failed = 0;
    *from_file = false;
    json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    char *text = NULL;
    size_t len = 0;
    char what[48];
    snprintf(what, sizeof what, "config.%s", fkey);
    if (hw_files_cfg_text(ctx->files, cfg, fkey, &text, &len, from_file, err)) {
        *failed = 1;
        return NULL;
    }
    if (v && !json_is_null(v) && text) {
        free(text);
        *failed = 1;
        hw_fail(err, HW_E_BAD_CONFIG, "config.%s: give either %s or %s, not both", fkey, key, fkey);
        return NULL;
    }
    if (v && !json_is_null(v)) return json_incref(v);
    if (!text) return NULL;
    json_t *j = hw_files_parse_json(ctx->files, what, text, len, *from_file, err);
    free(text);
    if (!j) *failed = 1;
    return j;
}

static void *env_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"workload", "zoo_file", "graph", "graph_file", "hw", "hw_file", "episode_steps",
                                       "features", "invalid_reward_scale", "invalid_reward", NULL};
    static const char *const feats[] = {"raw", "log1p", "normalized", NULL};
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    const char *workload;
    int64_t steps;
    int features;
    double scale;
    if (hw_cfg_str(cfg, "workload", "resnet50", &workload, err) ||
        hw_cfg_int(cfg, "episode_steps", 1, 1, 1000000000, &steps, err) ||
        hw_cfg_enum(cfg, "features", feats, PL_FEAT_RAW, &features, err) ||
        hw_cfg_num(cfg, "invalid_reward_scale", 1.0, 0.0, 1e6, &scale, err))
        return NULL;
    /* invalid_reward: "eps" (Algorithm 1: -scale * eps) or a constant (Table 2 lists -1) */
    int inv_const = 0;
    double inv_value = 0;
    json_t *ir = cfg ? json_object_get(cfg, "invalid_reward") : NULL;
    if (ir && !json_is_null(ir)) {
        if (json_is_number(ir) && isfinite(json_number_value(ir))) {
            inv_const = 1;
            inv_value = json_number_value(ir);
        } else if (!json_is_string(ir) || strcmp(json_string_value(ir), "eps") != 0) {
            return hw_fail(err, HW_E_BAD_CONFIG, "config.invalid_reward: expected \"eps\" or a number"), NULL;
        }
    }
    int failed;
    bool hw_ff, g_ff, z_ff;
    pl_hw hw;
    json_t *hj = obj_or_file(cfg, ctx, "hw", "hw_file", &failed, &hw_ff, err);
    if (failed) return NULL;
    int rc = pl_hw_from_json(hj, json_object_get(cfg, "hw") ? "config.hw" : "config.hw_file", &hw, err);
    json_decref(hj);
    if (rc) {
        hw_files_redact(ctx->files, hw_ff, "config.hw_file", "placement hw JSON", err);
        return NULL;
    }
    pl_graph g;
    json_t *gj = obj_or_file(cfg, ctx, "graph", "graph_file", &failed, &g_ff, err);
    if (failed) return NULL;
    char *zoo_file = NULL;
    size_t zlen = 0;
    if (hw_files_cfg_text(ctx->files, cfg, "zoo_file", &zoo_file, &zlen, &z_ff, err)) {
        json_decref(gj);
        return NULL;
    }
    int nsrc = (gj != NULL) + (zoo_file != NULL) +
               (cfg && json_object_get(cfg, "workload") && !json_is_null(json_object_get(cfg, "workload")));
    if (nsrc > 1) {
        json_decref(gj);
        free(zoo_file);
        return hw_fail(err, HW_E_BAD_CONFIG, "config.workload: give one of workload, zoo_file, graph or graph_file"), NULL;
    }
    if (zoo_file) {
        json_t *zv = json_object_get(cfg, "zoo_file");
        hw_model *zm = hw_zoo_parse(zoo_file, zlen, json_is_string(zv) ? json_string_value(zv) : "zoo_file", err);
        free(zoo_file);
        if (!zm) {
            hw_err_prefix(err, "config.zoo_file");
            if (err && err->code != HW_E_LIMIT) err->code = HW_E_BAD_CONFIG;
            hw_files_redact(ctx->files, z_ff, "config.zoo_file", "model (zoo CSV)", err);
            return NULL;
        }
        rc = pl_graph_from_hw_model(zm, &g, err);
        hw_zoo_free(zm);
    } else if (gj) {
        rc = pl_graph_from_json(gj, json_object_get(cfg, "graph") ? "config.graph" : "config.graph_file", &g, err);
        json_decref(gj);
        if (rc) hw_files_redact(ctx->files, g_ff, "config.graph_file", "graph JSON", err);
    } else {
        rc = pl_graph_from_zoo(workload, &g, err);
    }
    if (rc) return NULL;
    pl_model *m = pl_model_build(&g, &hw, features, err);
    pl_graph_free(&g);
    if (!m) {
        if (err && strncmp(err->msg, "hw.", 3) == 0) {
            char tmp[HW_ERR_MSG];
            snprintf(tmp, sizeof tmp, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "config.%.*s", (int)sizeof tmp - 16, tmp);
        }
        return NULL;
    }
    pl_env *e = xcalloc(1, sizeof *e);
    e->m = m;
    e->s = pl_scratch_new(m);
    e->steps = steps;
    e->invalid_scale = scale;
    e->invalid_const = inv_const;
    e->invalid_value = inv_value;
    e->cur = xcalloc((size_t)m->nt, 1);
    e->act = xcalloc((size_t)m->nt, 1);
    e->obs_map = xcalloc((size_t)m->nt, sizeof(int64_t));
    prepack_info(e);
    /* action space */
    int64_t *nv = xcalloc((size_t)m->nt, sizeof(int64_t));
    for (int t = 0; t < m->nt; t++) nv[t] = m->hw.n_mem;
    e->aspace = hw_space_multidiscrete(m->nt, nv);
    free(nv);
    const char *labels[PL_MAX_MEMS];
    for (int k = 0; k < m->hw.n_mem; k++) labels[k] = m->hw.mem[k].name;
    for (int i = 0; i < m->n; i++) {
        char nm[96];
        snprintf(nm, sizeof nm, "%s.weights", m->g.nodes[i].name);
        hw_space_set_name(e->aspace, 2 * i, nm);
        snprintf(nm, sizeof nm, "%s.act", m->g.nodes[i].name);
        hw_space_set_name(e->aspace, 2 * i + 1, nm);
        hw_space_set_labels(e->aspace, 2 * i, m->hw.n_mem, labels);
        hw_space_set_labels(e->aspace, 2 * i + 1, m->hw.n_mem, labels);
    }
    /* observation space */
    e->ospace = hw_space_dict();
    int64_t es[2] = {m->ne, 2}, ms[2] = {m->n, 2}, fs[2] = {m->n, PL_NFEAT};
    hw_space_dict_add(e->ospace, "edges", hw_space_box_uniform(2, es, 0, m->n - 1, HW_DT_INT64));
    hw_space_dict_add(e->ospace, "mapping", hw_space_box_uniform(2, ms, 0, m->hw.n_mem - 1, HW_DT_INT64));
    hw_space_dict_add(e->ospace, "node_features",
                      hw_space_box_uniform(2, fs, 0, features == PL_FEAT_NORMALIZED ? 1.0 : INFINITY, HW_DT_FLOAT32));
    return e;
}

static const hw_space *env_aspace(const void *p) { return ((const pl_env *)p)->aspace; }
static const hw_space *env_ospace(const void *p) { return ((const pl_env *)p)->ospace; }

static void fill_obs(pl_env *e, hw_obs *obs) {
    if (!obs) return;
    const pl_model *m = e->m;
    const uint8_t *cur = e->cur; /* locals: a store through obs_map may alias e's fields */
    int64_t *om = e->obs_map;
    const int nt = m->nt;
    int t = 0;
    for (; t + 4 <= nt; t += 4) /* four at a time: half the loop's own instructions */
        om[t] = cur[t], om[t + 1] = cur[t + 1], om[t + 2] = cur[t + 2], om[t + 3] = cur[t + 3];
    for (; t < nt; t++) om[t] = cur[t];
    obs->n = 3; /* only the first n fields are read: the struct (a kilobyte) is not cleared */
    obs->keys[0] = "edges";
    obs->arr[0] = (hw_array){HW_DT_INT64, 2, {m->ne, 2}, m->edges};
    obs->keys[1] = "mapping";
    obs->arr[1] = (hw_array){HW_DT_INT64, 2, {m->n, 2}, e->obs_map};
    obs->keys[2] = "node_features";
    obs->arr[2] = (hw_array){HW_DT_FLOAT32, 2, {m->n, PL_NFEAT}, m->feat};
}

enum { STATIC_KEYS = 8, STEP_KEYS = 11 };
static void add_static_info(const pl_model *m, hw_info_out *info) {
    hw_info_str_k(info, HW_KEY("workload"), m->g.name);
    hw_info_int_k(info, HW_KEY("nodes"), m->n);
    hw_info_int_k(info, HW_KEY("edges"), m->ne);
    hw_info_real_k(info, HW_KEY("baseline_latency_us"), m->baseline * 1e6);
    hw_info_out names = hw_info_list(info, "memories", (size_t)m->hw.n_mem);
    for (int k = 0; k < m->hw.n_mem; k++) hw_info_item_str(&names, m->hw.mem[k].name);
    hw_info_out caps = hw_info_list(info, "capacity_bytes", (size_t)m->hw.n_mem);
    for (int k = 0; k < m->hw.n_mem; k++) hw_info_item_int(&caps, (int64_t)m->hw.mem[k].capacity);
    hw_info_out banks = hw_info_list(info, "banks", (size_t)m->hw.n_mem);
    for (int k = 0; k < m->hw.n_mem; k++) hw_info_item_int(&banks, m->hw.mem[k].banks);
    hw_info_int_k(info, HW_KEY("element_bytes"), m->hw.element_bytes);
}

static int env_reset(void *p, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)seed;
    (void)options;
    (void)err;
    pl_env *e = p;
    e->started = 1;
    e->t = 0;
    memset(e->cur, 0, (size_t)e->m->nt); /* the paper's initial mapping: everything in DRAM */
    fill_obs(e, obs);
    e->last_step = 0;
    hw_info_out o = hw_info_json(info);
    if (info) add_static_info(e->m, &o);
    return 0;
}

static double reward_of(const pl_env *e, const pl_result *r) {
    const pl_model *m = e->m;
    return r->reassigned_bytes == 0 ? m->baseline / r->latency : e->invalid_const ? e->invalid_value : -e->invalid_scale * r->eps;
}

/* The constant runs of a step's info, each written by one function below for any sink (JSON or
 * packed); for a gathered info (the server's step reply) put_result copies their bytes, packed
 * once at create by the same functions, instead of writing them key by key:
 *  - rect_head: "total_bytes" and the header of the "rectified" list (whose items, memory indices
 *    below 128, are packed as the bytes themselves: hw_info_list_u8);
 *  - mem_head[k]: memory k's object in "occupancy" up to its first key (memory 0's begins with
 *    the "occupancy" object itself);
 *  - mem_const[k]: its "capacity_bytes" and "banks". */
static hw_info_out w_rect_head(const pl_env *e, hw_info_out *o) {
    hw_info_int_k(o, HW_KEY("total_bytes"), e->m->total_bytes);
    return hw_info_list(o, "rectified", (size_t)e->m->nt);
}
static hw_info_out w_occupancy(const pl_env *e, hw_info_out *o) { return hw_info_map_k(o, HW_KEY("occupancy"), (size_t)e->m->hw.n_mem); }
static hw_info_out w_mem_head(const pl_env *e, int k, hw_info_out *occ) { return hw_info_map(occ, e->m->hw.mem[k].name, OCC_KEYS); }
static void w_mem_const(const pl_env *e, int k, hw_info_out *o) {
    hw_info_int_k(o, HW_KEY("capacity_bytes"), (int64_t)e->m->hw.mem[k].capacity);
    hw_info_int_k(o, HW_KEY("banks"), e->m->hw.mem[k].banks);
}

/* what=0: rect_head, 1: mem_head[k], 2: mem_const[k], packed by their writers */
static void prepack(pl_env *e, int what, int k, pl_chunk *c) {
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    hw_info_out o = {NULL, &pk, NULL}; /* packs keys and values only: no header of its own */
    if (what == 0) w_rect_head(e, &o);
    else if (what == 1 && k == 0) w_mem_head(e, 0, (hw_info_out[]){w_occupancy(e, &o)});
    else if (what == 1) w_mem_head(e, k, &o);
    else w_mem_const(e, k, &o);
    c->n = sb.size <= sizeof c->b ? sb.size : 0;
    memcpy(c->b, sb.data, c->n);
    msgpack_sbuffer_destroy(&sb);
}

static void prepack_info(pl_env *e) {
    prepack(e, 0, 0, &e->rect_head);
    e->prepacked = e->rect_head.n > 0;
    for (int k = 0; k < e->m->hw.n_mem; k++) {
        prepack(e, 1, k, &e->mem_head[k]);
        prepack(e, 2, k, &e->mem_const[k]);
        e->prepacked = e->prepacked && e->mem_head[k].n > 0 && e->mem_const[k].n > 0;
    }
}

static inline void put_bytes(hw_info_gather *g, const void *b, size_t n) {
    for (size_t q = 0; q < n;) { /* a piece at a time: no more than the gathering buffer holds */
        size_t w = n - q < sizeof g->out.b ? n - q : sizeof g->out.b;
        memcpy(hw_info_gather_room(g, w), (const char *)b + q, w);
        g->out.n += w;
        q += w;
    }
}

/* the info/metrics keys of a scored mapping (STEP_KEYS of them) */
static void put_result(const pl_env *e, const pl_result *r, hw_info_out *j) {
    const pl_model *m = e->m;
    const int valid = r->reassigned_bytes == 0;
    const double rect_speedup = m->baseline / r->latency;
    hw_info_bool_k(j, HW_KEY("valid"), valid);
    hw_info_real_k(j, HW_KEY("eps"), r->eps);
    hw_info_real_k(j, HW_KEY("speedup"), valid ? rect_speedup : 0.0);
    hw_info_real_k(j, HW_KEY("latency_us"), r->latency * 1e6);
    hw_info_real_k(j, HW_KEY("baseline_latency_us"), m->baseline * 1e6);
    hw_info_real_k(j, HW_KEY("rectified_speedup"), rect_speedup);
    hw_info_int_k(j, HW_KEY("reassigned_bytes"), r->reassigned_bytes);
    hw_info_int_k(j, HW_KEY("reassigned_tensors"), r->n_reassigned);
    hw_info_gather *g = hw_info_gathering(j);
    const bool fast = g && e->prepacked;
    hw_info_out occ = *j;
    if (fast) {
        put_bytes(g, e->rect_head.b, e->rect_head.n);
        put_bytes(g, r->rectified, (size_t)m->nt);
    } else {
        hw_info_out l = w_rect_head(e, j);
        for (int t = 0; t < m->nt; t++) hw_info_item_int(&l, r->rectified[t]);
        occ = w_occupancy(e, j);
    }
    for (int k = 0; k < m->hw.n_mem; k++) {
        hw_info_out o = *j;
        if (fast) put_bytes(g, e->mem_head[k].b, e->mem_head[k].n);
        else o = w_mem_head(e, k, &occ);
        hw_info_int_k(&o, HW_KEY("peak_bytes"), r->peak[k]);
        if (fast) put_bytes(g, e->mem_const[k].b, e->mem_const[k].n);
        else w_mem_const(e, k, &o);
        hw_info_int_k(&o, HW_KEY("weights_bytes"), r->weights_in[k]);
        hw_info_real_k(&o, HW_KEY("utilization"), (double)r->peak[k] / (double)m->hw.mem[k].capacity);
        hw_info_int_k(&o, HW_KEY("weight_tensors"), r->weight_tensors[k]);
        hw_info_int_k(&o, HW_KEY("activation_tensors"), r->act_tensors[k]);
    }
}

/* reward per Algorithm 1, and the info/metrics keys into j (NULL: none) */
static double score(const pl_env *e, const pl_result *r, json_t *j) {
    hw_info_out o = hw_info_json(j);
    if (j) put_result(e, r, &o);
    return reward_of(e, r);
}

static void put_info(const pl_env *e, hw_info_out *o) {
    if (!e->last_step) {
        add_static_info(e->m, o);
        return;
    }
    put_result(e, &e->last, o);
    hw_info_int_k(o, HW_KEY("t"), e->t);
}

static void env_info_pack(const void *p, struct msgpack_packer *pk) {
    const pl_env *e = p;
    hw_info_gather g; /* written before it is read: not cleared */
    hw_info_out o = hw_info_gatherer(&g, pk, e->last_step ? STEP_KEYS + 1 : STATIC_KEYS);
    put_info(e, &o);
    hw_info_gather_flush(&g);
}

static int env_step(void *p, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    pl_env *e = p;
    const pl_model *m = e->m;
    if (!e->started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    if (e->t >= e->steps) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    if (!act->i || (int64_t)act->n != m->nt)
        return hw_fail(err, HW_E_BAD_ACTION, "action: expected %d memory indices", m->nt);
    /* the whole action checked in one branch-free pass: the largest index as unsigned (a negative
     * one is huge), two at a time (the first bad index found after) */
    const int64_t *ai = act->i;
    uint8_t *dst = e->act; /* locals: a byte store may alias anything the loop would reload */
    uint64_t mx = 0, mx2 = 0;
    const int nt = m->nt;
    int q = 0;
    for (; q + 2 <= nt; q += 2) {
        uint64_t v = (uint64_t)ai[q], v2 = (uint64_t)ai[q + 1];
        mx = v > mx ? v : mx;
        mx2 = v2 > mx2 ? v2 : mx2;
        dst[q] = (uint8_t)v, dst[q + 1] = (uint8_t)v2;
    }
    for (; q < nt; q++) {
        uint64_t v = (uint64_t)ai[q];
        mx = v > mx ? v : mx;
        dst[q] = (uint8_t)v;
    }
    const bool bad = (mx > mx2 ? mx : mx2) >= (uint64_t)m->hw.n_mem;
    for (int t = 0; bad && t < m->nt; t++) {
        int64_t v = act->i[t];
        if (v < 0 || v >= m->hw.n_mem)
            return hw_fail(err, HW_E_BAD_ACTION, "action[%d]: %lld out of range [0, %d]", t, (long long)v, m->hw.n_mem - 1);
    }
    pl_evaluate(m, e->act, e->s, &e->last);
    e->last_step = 1;
    out->reward = reward_of(e, &e->last);
    memcpy(e->cur, e->last.rectified, (size_t)m->nt);
    e->t++;
    /* the horizon is a time limit, not a terminal state of the task: truncated (Gymnasium's definition) */
    out->terminated = false;
    out->truncated = e->t >= e->steps;
    fill_obs(e, &out->obs);
    hw_info_out o = hw_info_json(info);
    if (info) put_info(e, &o);
    return 0;
}

static void *env_snapshot(const void *p, hw_err *err) {
    (void)err;
    const pl_env *e = p;
    pl_snap *s = xcalloc(1, sizeof *s + (size_t)e->m->nt);
    s->started = e->started;
    s->t = e->t;
    memcpy(s->cur, e->cur, (size_t)e->m->nt);
    return s;
}

static int env_restore(void *p, const void *snap, hw_err *err) {
    (void)err;
    pl_env *e = p;
    const pl_snap *s = snap;
    e->started = s->started;
    e->t = s->t;
    memcpy(e->cur, s->cur, (size_t)e->m->nt);
    return 0;
}

static void env_snap_free(void *snap) { free(snap); }

static int mem_from_json(const pl_model *m, const json_t *v, int *k) {
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || x >= m->hw.n_mem) return -1;
        *k = (int)x;
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d != floor(d) || d < 0 || d >= m->hw.n_mem) return -1;
        *k = (int)d;
        return 0;
    }
    if (json_is_string(v)) {
        for (int q = 0; q < m->hw.n_mem; q++)
            if (strcasecmp(m->hw.mem[q].name, json_string_value(v)) == 0) {
                *k = q;
                return 0;
            }
    }
    return -1;
}

static int random_map(const pl_model *m, uint64_t seed, uint8_t *map) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) abort();
    gsl_rng_set(rng, (unsigned long)seed);
    for (int t = 0; t < m->nt; t++) map[t] = (uint8_t)gsl_rng_uniform_int(rng, (unsigned long)m->hw.n_mem);
    gsl_rng_free(rng);
    return 0;
}

int pl_parse_point(const pl_model *m, const json_t *point, uint8_t *map, char *policy, size_t cap, hw_err *err) {
    char names[160] = "";
    for (int k = 0; k < m->hw.n_mem; k++) {
        if (k) strncat(names, ", ", sizeof names - strlen(names) - 1);
        strncat(names, m->hw.mem[k].name, sizeof names - strlen(names) - 1);
    }
    if (json_is_object(point) && json_object_get(point, "mapping")) point = json_object_get(point, "mapping");
    if (json_is_object(point)) {
        json_t *pol = json_object_get(point, "policy");
        json_t *sd = json_object_get(point, "seed");
        if (!json_is_string(pol) || strcasecmp(json_string_value(pol), "random") != 0 ||
            (sd && !json_is_integer(sd)) || json_object_size(point) > (size_t)(sd ? 2 : 1))
            return hw_fail(err, HW_E_BAD_ACTION,
                           "point: expected {\"policy\": \"random\", \"seed\": int} or {\"mapping\": [...]}");
        uint64_t seed = sd ? (uint64_t)json_integer_value(sd) : 0;
        random_map(m, seed, map);
        snprintf(policy, cap, "random(seed=%llu)", (unsigned long long)seed);
        return 0;
    }
    if (json_is_string(point)) {
        const char *s = json_string_value(point);
        if (strcasecmp(s, "heuristic") == 0) {
            memcpy(map, m->heuristic, (size_t)m->nt);
            snprintf(policy, cap, "heuristic");
            return 0;
        }
        if (strncasecmp(s, "all-", 4) == 0)
            for (int k = 0; k < m->hw.n_mem; k++)
                if (strcasecmp(s + 4, m->hw.mem[k].name) == 0) {
                    memset(map, k, (size_t)m->nt);
                    snprintf(policy, cap, "all-%s", m->hw.mem[k].name);
                    return 0;
                }
        if (strncasecmp(s, "random", 6) == 0 && (s[6] == 0 || s[6] == ':')) {
            uint64_t seed = 0;
            if (s[6] == ':') {
                char *end;
                seed = strtoull(s + 7, &end, 10);
                if (end == s + 7 || *end) return hw_fail(err, HW_E_BAD_ACTION, "point: '%s': expected random:<seed>", s);
            }
            random_map(m, seed, map);
            snprintf(policy, cap, "random(seed=%llu)", (unsigned long long)seed);
            return 0;
        }
        return hw_fail(err, HW_E_BAD_ACTION,
                       "point: unknown policy '%s' (expected \"heuristic\", \"all-<memory>\" with memory one of %s, "
                       "\"random\", \"random:<seed>\", or an array of %d memory choices)",
                       s, names, m->nt);
    }
    if (!json_is_array(point))
        return hw_fail(err, HW_E_BAD_ACTION, "point: expected an array of %d memory choices or a policy name", m->nt);
    size_t len = json_array_size(point);
    int pairs = len == (size_t)m->n && len > 0 && json_is_array(json_array_get(point, 0));
    if (!pairs && len != (size_t)m->nt)
        return hw_fail(err, HW_E_BAD_ACTION,
                       "point: %zu elements, expected %d (weights and activation memory of each of %d nodes) or %d "
                       "[weights, act] pairs",
                       len, m->nt, m->n, m->n);
    for (int t = 0; t < m->nt; t++) {
        const json_t *v;
        if (pairs) {
            json_t *pr = json_array_get(point, (size_t)(t / 2));
            if (!json_is_array(pr) || json_array_size(pr) != 2)
                return hw_fail(err, HW_E_BAD_ACTION, "point[%d] (%s): expected a [weights, act] pair", t / 2,
                               m->g.nodes[t / 2].name);
            v = json_array_get(pr, (size_t)(t & 1));
        } else {
            v = json_array_get(point, (size_t)t);
        }
        int k;
        if (mem_from_json(m, v, &k)) {
            char idx[32];
            if (pairs) snprintf(idx, sizeof idx, "%d][%d", t / 2, t & 1);
            else snprintf(idx, sizeof idx, "%d", t);
            return hw_fail(err, HW_E_BAD_ACTION, "point[%s] (%s.%s): expected a memory index in [0, %d] or a name (%s)",
                           idx, m->g.nodes[t / 2].name, (t & 1) ? "act" : "weights", m->hw.n_mem - 1, names);
        }
        map[t] = (uint8_t)k;
    }
    snprintf(policy, cap, "mapping");
    return 0;
}

static int env_evaluate(void *p, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    pl_env *e = p;
    const pl_model *m = e->m;
    char policy[64];
    uint8_t *map = e->act; /* scratch, not episode state */
    if (pl_parse_point(m, point, map, policy, sizeof policy, err)) return -1;
    pl_result r;
    pl_evaluate(m, map, e->s, &r);
    *reward = score(e, &r, metrics);
    if (metrics) {
        json_object_set_new(metrics, "policy", json_string(policy));
        json_object_set_new(metrics, "feasible", json_boolean(r.reassigned_bytes == 0));
        if (r.reassigned_bytes) {
            char why[200];
            snprintf(why, sizeof why,
                     "mapping exceeds memory capacity: the compiler reassigned %d tensors (%lld bytes, eps=%.6g)",
                     r.n_reassigned, (long long)r.reassigned_bytes, r.eps);
            json_object_set_new(metrics, "reason", json_string(why));
        }
        json_object_set_new(metrics, "workload", json_string(m->g.name));
    }
    return 0;
}

int pl_env_eval_action(void *p, const hw_act *act, double *reward, pl_result *r, hw_err *err) {
    pl_env *e = p;
    const pl_model *m = e->m;
    if (!act->i || (int64_t)act->n != m->nt) return hw_fail(err, HW_E_BAD_ACTION, "point: expected %d memory indices", m->nt);
    for (int t = 0; t < m->nt; t++) {
        int64_t v = act->i[t];
        if (v < 0 || v >= m->hw.n_mem)
            return hw_fail(err, HW_E_BAD_ACTION, "point[%d]: %lld out of range [0, %d]", t, (long long)v, m->hw.n_mem - 1);
        e->act[t] = (uint8_t)v;
    }
    pl_evaluate(m, e->act, e->s, r);
    *reward = score(e, r, NULL);
    return 0;
}

static void *env_create(const json_t *cfg, hw_err *err) { return env_create_ctx(cfg, &hw_env_ctx_local, err); }

/* the model (graph copy, per-tensor and per-node tables, CSR lists, features), its scratch and
 * the env's per-tensor buffers (issue 28 finding 1: tests/c/security test_memest.c) */
static size_t env_mem_bytes(const void *p) {
    const pl_env *e = p;
    const pl_model *m = e->m;
    size_t n = (size_t)m->n, nt = (size_t)m->nt, ne = (size_t)m->ne;
    size_t nin = (size_t)m->in_off[m->n];
    size_t model = sizeof *m + n * sizeof(pl_node) + nt * (sizeof(int64_t) + 2 * sizeof(int) + 1) +
                   n * (4 * sizeof(int) + 2 * sizeof(double) + 3 * sizeof(int64_t) + PL_NFEAT * sizeof(float)) +
                   (n + 1) * 3 * sizeof(int) + (size_t)m->alive_off[m->n] * sizeof(int) + nin * (sizeof(int) + sizeof(int64_t)) +
                   ne * 2 * sizeof(int64_t) + (n + nin) * sizeof(pl_xfer) + ((size_t)m->nch + 1) * sizeof(int) +
                   (size_t)m->hw.n_mem * ((n + 1) + 2 * n * sizeof(int)) + 28 * 16;
    size_t scratch = sizeof(pl_scratch) + nt + 1 + ((size_t)m->nch * (size_t)m->nww + (size_t)m->doff[m->nch]) * sizeof(uint64_t) +
                     n * sizeof(double) + 4 * 16;
    return sizeof *e + model + scratch + nt * (2 + sizeof(int64_t)) + 4 * 16;
}

const hw_env_family hw_family_placement = {
    .id = "placement-v0",
    .summary = "tensor placement on DRAM/LLC/SRAM with compiler rectification (EGRL paper, NNP-I-like model)",
    HW_ENV_OPS(env),
    .info_pack = env_info_pack,
};
