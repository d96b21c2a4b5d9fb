/* sched_env.c - the sched-v0 env family (see sched.h, docs/sched.md). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/env_limits.h"
#include "common/hw_files.h"
#include "common/config.h"
#include "common/info_out.h"
#include "sched.h"
#include "sched_bfcache.h"
#include "sched_internal.h"

enum { MODE_LAYER, MODE_NETWORK };
static const char *const mode_names[] = {"layer", "network", NULL};
static const char *const obj_names[] = {"energy", "cycles", "edp", NULL};
static const char *const obs_names[] = {"box", "dict", NULL};

#define OBS_TABLE (SCHED_NROW * SCHED_NDIM)
#define OBS_LAYER (SCHED_NDIM + 1)
#define OBS_N (OBS_TABLE + SCHED_NROW + OBS_LAYER + 2)

typedef struct sched_state {
    int started, li, t, r, nmulti, done;
    sched_table tab;
    sched_cost_brief cost; /* the table's (the step needs these four, not the whole cost) */
    double init_obj, init_energy, init_cycles;
    double net_energy, net_cycles; /* finished layers (network mode) */
} sched_state;

/* what the last reset/step's info reports (env.h info_pack packs it after the call) */
typedef struct sched_last {
    int step; /* 0: a reset */
    int invalid, n, rows[3];
    sched_bf_stats bs;
    int finished; /* the step finished a layer that is not the last (network mode) */
    int fin_li;
    sched_table fin_tab;
    double fin_energy, fin_cycles;
} sched_last;

/* The table's rows as fill_obs last saw them, with what is made of each: its observation entries
 * (in obs) and its info bytes (a msgpack list of 8 ints, what hw_info_item_ints packs). A step
 * changes 2 or 3 rows: only rows that differ from the copy are made again (docs/sched.md "Speed").
 * The info packs these bytes only while the copy equals the state's table. */
enum { ROW_BYTES = 1 + 5 * SCHED_NDIM }; /* fixarray, then up to 5 bytes an int (uint32) */
typedef struct sched_rows {
    int f[SCHED_NROW][SCHED_NDIM];
    unsigned char len[SCHED_NROW]; /* bytes of b[r]; 0: row r is not made (a negative factor) */
    unsigned char b[SCHED_NROW][ROW_BYTES];
} sched_rows;

typedef struct sched_env {
    sched_accel acc;
    sched_layer *layers;
    int nlayers, mode, obj, dict_obs;
    int64_t steps;
    double penalty;
    int64_t max_samples; /* operator cap on evaluate's "samples" (env_limits.h) */
    hw_space *aspace, *ospace;
    sched_bfcache *cache; /* memo of brute-force steps (config.step_cache slots; NULL: off) */
    sched_state st;
    float obs[OBS_N];
    int obs_li;             /* the layer whose part of obs (and logd) is filled; -1: none */
    double logd[SCHED_NDIM]; /* log of that layer's dimensions (fill_obs) */
    sched_rows rows;        /* the rows obs holds and their info bytes (valid with obs_li) */
    sched_last last;
    /* sched_action_valid(&acc, a, r) for every row and action, filled at create (the accelerator
     * does not change afterwards): the step's check and the info's action_mask */
    uint8_t valid[SCHED_NROW][SCHED_NACT];
} sched_env;

static void env_destroy(void *p) {
    sched_env *e = p;
    if (!e) return;
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    free(e->layers);
    sched_bfcache_free(e->cache);
    free(e);
}

static int first_row(const sched_accel *a) {
    for (int r = 0; r < SCHED_NROW; r++)
        if (a->present[r]) return r;
    return SR_DRAM;
}

static int next_row(const sched_accel *a, int r) {
    for (int k = 1; k <= SCHED_NROW; k++) {
        int q = (r + k) % SCHED_NROW;
        if (a->present[q]) return q;
    }
    return r;
}

static const sched_layer default_layer = {"resnet50_conv3_3x3", {1, 128, 1, 128, 3, 3, 28, 28}, 1};

static int load_layers(sched_env *e, const json_t *cfg, hw_err *err) {
    const char *model;
    if (hw_cfg_str(cfg, "model", NULL, &model, err)) return -1;
    json_t *lv = cfg ? json_object_get(cfg, "layer") : NULL;
    json_t *ls = cfg ? json_object_get(cfg, "layers") : NULL;
    if (lv && json_is_null(lv)) lv = NULL;
    if (ls && json_is_null(ls)) ls = NULL;
    if (ls) {
        if (model) return hw_fail(err, HW_E_BAD_CONFIG, "config.layers: give either model or layers, not both");
        if (!json_is_array(ls) || !json_array_size(ls) || json_array_size(ls) > 100000)
            return hw_fail(err, HW_E_BAD_CONFIG, "config.layers: expected a non-empty array of layer objects");
        e->nlayers = (int)json_array_size(ls);
        e->layers = calloc((size_t)e->nlayers, sizeof *e->layers);
        if (!e->layers) abort();
        for (int i = 0; i < e->nlayers; i++) {
            char p[64];
            snprintf(p, sizeof p, "config.layers[%d]", i);
            if (sched_layer_from_json(json_array_get(ls, (size_t)i), p, &e->layers[i], err)) return -1;
        }
    } else if (model) {
        sched_layer *v;
        int n = sched_model_layers(model, &v, err);
        if (n < 0) return -1;
        e->layers = v;
        e->nlayers = n;
    } else if (lv && json_is_object(lv)) {
        e->nlayers = 1;
        e->layers = calloc(1, sizeof *e->layers);
        if (!e->layers) abort();
        return sched_layer_from_json(lv, "config.layer", &e->layers[0], err);
    } else {
        if (lv) return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: without config.model, expected a layer object {B,C,G,K,R,S,P,Q,stride}");
        e->nlayers = 1;
        e->layers = calloc(1, sizeof *e->layers);
        if (!e->layers) abort();
        e->layers[0] = default_layer;
        return 0;
    }
    /* select one layer of the list in layer mode */
    if (e->mode == MODE_LAYER) {
        int idx = 0;
        if (lv) {
            idx = -1;
            if (json_is_integer(lv)) idx = (int)json_integer_value(lv);
            else if (json_is_string(lv)) {
                const char *s = json_string_value(lv);
                char *end;
                long x = strtol(s, &end, 10);
                if (*s && !*end) idx = (int)x;
                else
                    for (int i = 0; i < e->nlayers; i++)
                        if (!strcmp(e->layers[i].name, s)) idx = i;
                if (idx < 0) return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: unknown layer '%s'", s);
            } else
                return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: expected a layer name or index");
            if (idx < 0 || idx >= e->nlayers)
                return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: index %d out of range [0, %d]", idx, e->nlayers - 1);
        }
        if (idx) e->layers[0] = e->layers[idx];
        e->nlayers = 1;
    } else if (lv) {
        return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: not used in network mode (every layer is visited)");
    }
    return 0;
}

/* config.accelerator under the caller's file policy: a path string is read here (hw_files.h)
 * and handed to sched_accel_resolve as an object; {"text": ...} is parsed inline. */
static int resolve_accel(sched_env *e, const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    json_t *v = cfg ? json_object_get(cfg, "accelerator") : NULL;
    const char *s = v && json_is_string(v) ? json_string_value(v) : NULL;
    size_t n = s ? strlen(s) : 0;
    bool is_text = v && json_is_object(v) && json_object_size(v) == 1 && json_object_get(v, "text");
    if (!is_text && !(s && (strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json")))))
        return sched_accel_resolve(v, "config.accelerator", &e->acc, err);
    char *text = NULL;
    size_t len = 0;
    bool from_file;
    if (hw_files_cfg_text(ctx->files, cfg, "accelerator", &text, &len, &from_file, err)) return -1;
    json_t *j = hw_files_parse_json(ctx->files, "config.accelerator", text, len, from_file, err);
    free(text);
    if (!j) return -1;
    int rc = json_is_object(j) ? sched_accel_resolve(j, "config.accelerator", &e->acc, err)
                               : hw_fail(err, HW_E_BAD_CONFIG, "config.accelerator: the file must hold a JSON object");
    json_decref(j);
    if (rc) hw_files_redact(ctx->files, from_file, "config.accelerator", "accelerator JSON", err);
    return rc;
}

/* log(f) of the factors a table holds (below LOG_TAB), computed once a process: log is a pure
 * function, so these are the bits a call returns (a step's observation took a dozen calls) */
enum { LOG_TAB = 1024 };
static double log_tab[LOG_TAB];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_tab_fill(void) {
    for (int f = 1; f < LOG_TAB; f++) log_tab[f] = log((double)f);
}

static double log_of(int f) { return f > 0 && f < LOG_TAB ? log_tab[f] : log((double)f); }

static void *env_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"accelerator", "model", "layer", "layers", "mode", "objective",
                                       "steps_per_layer", "penalty", "obs", "step_cache", NULL};
    pthread_once(&log_once, log_tab_fill);
    if (cfg && !json_is_object(cfg)) {
        hw_fail(err, HW_E_BAD_CONFIG, "config: expected an object");
        return NULL;
    }
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    sched_env *e = calloc(1, sizeof *e);
    int64_t cache_slots = 0;
    if (!e) return hw_fail(err, HW_E_LIMIT, "out of memory"), NULL;
    e->max_samples = hw_env_limit(ctx, "samples", 100000);
    if (hw_cfg_enum(cfg, "mode", mode_names, MODE_LAYER, &e->mode, err) ||
        hw_cfg_enum(cfg, "objective", obj_names, SOBJ_ENERGY, &e->obj, err) ||
        hw_cfg_int(cfg, "steps_per_layer", 16, 1, 100000, &e->steps, err) ||
        hw_cfg_num(cfg, "penalty", 0.01, 0, 1e6, &e->penalty, err) || hw_cfg_enum(cfg, "obs", obs_names, 0, &e->dict_obs, err) ||
        hw_cfg_int(cfg, "step_cache", 16384, 0, 1 << 20, &cache_slots, err) ||
        resolve_accel(e, cfg, ctx, err) ||
        load_layers(e, cfg, err)) {
        env_destroy(e);
        return NULL;
    }
    for (int i = 0; i < e->nlayers; i++) {
        sched_table t;
        sched_table_init(&e->layers[i], &t);
        hw_err e2;
        if (sched_check(&e->acc, &e->layers[i], &t, &e2)) {
            hw_fail(err, HW_E_BAD_CONFIG, "config.accelerator: layer %d (%s) does not fit even with every loop in DRAM: %s", i,
                    e->layers[i].name, e2.msg);
            env_destroy(e);
            return NULL;
        }
    }
    for (int r = 0; r < SCHED_NROW; r++)
        for (int a = 0; a < SCHED_NACT; a++) e->valid[r][a] = (uint8_t)sched_action_valid(&e->acc, a, r);
    e->obs_li = -1;
    if (cache_slots > 0 && !(e->cache = sched_bfcache_new((long)cache_slots))) {
        hw_fail(err, HW_E_LIMIT, "config.step_cache: out of memory for %lld slots", (long long)cache_slots);
        env_destroy(e);
        return NULL;
    }
    e->aspace = hw_space_discrete(SCHED_NACT);
    {
        char store[SCHED_NACT][24];
        const char *labels[SCHED_NACT];
        for (int a = 0; a < SCHED_NACT; a++) {
            int rows[3];
            int n = sched_action_rows(a, 0, rows);
            if (n == 2) snprintf(store[a], sizeof store[a], "[%s,r]", sched_row_names[rows[0]]);
            else snprintf(store[a], sizeof store[a], "[%s,%s,r]", sched_row_names[rows[0]], sched_row_names[rows[1]]);
            labels[a] = store[a];
        }
        hw_space_set_name(e->aspace, 0, "rows");
        hw_space_set_labels(e->aspace, 0, SCHED_NACT, labels);
    }
    int64_t sh_t[2] = {SCHED_NROW, SCHED_NDIM}, sh_r = SCHED_NROW, sh_l = OBS_LAYER, sh_m = 2, sh_n = OBS_N;
    if (e->dict_obs) {
        e->ospace = hw_space_dict();
        hw_space_dict_add(e->ospace, "layer", hw_space_box_uniform(1, &sh_l, 0, 1, HW_DT_FLOAT32));
        hw_space_dict_add(e->ospace, "metrics", hw_space_box_uniform(1, &sh_m, 0, 1e6, HW_DT_FLOAT32));
        hw_space_dict_add(e->ospace, "row", hw_space_box_uniform(1, &sh_r, 0, 1, HW_DT_FLOAT32));
        hw_space_dict_add(e->ospace, "table", hw_space_box_uniform(2, sh_t, 0, 1, HW_DT_FLOAT32));
    } else {
        double lo[OBS_N], hi[OBS_N];
        for (int i = 0; i < OBS_N; i++) lo[i] = 0, hi[i] = i >= OBS_N - 2 ? 1e6 : 1;
        e->ospace = hw_space_box(1, &sh_n, lo, hi, HW_DT_FLOAT32);
        char nm[32];
        for (int r = 0; r < SCHED_NROW; r++)
            for (int d = 0; d < SCHED_NDIM; d++) {
                snprintf(nm, sizeof nm, "table.%s.%s", sched_row_names[r], sched_dim_names[d]);
                hw_space_set_name(e->ospace, r * SCHED_NDIM + d, nm);
            }
        for (int r = 0; r < SCHED_NROW; r++) {
            snprintf(nm, sizeof nm, "row.%s", sched_row_names[r]);
            hw_space_set_name(e->ospace, OBS_TABLE + r, nm);
        }
        for (int d = 0; d <= SCHED_NDIM; d++) {
            snprintf(nm, sizeof nm, "layer.%s", d < SCHED_NDIM ? sched_dim_names[d] : "stride");
            hw_space_set_name(e->ospace, OBS_TABLE + SCHED_NROW + d, nm);
        }
        hw_space_set_name(e->ospace, OBS_N - 2, "energy_ratio");
        hw_space_set_name(e->ospace, OBS_N - 1, "cycles_ratio");
    }
    return e;
}

static const hw_space *env_aspace(const void *p) { return ((const sched_env *)p)->aspace; }
static const hw_space *env_ospace(const void *p) { return ((const sched_env *)p)->ospace; }

/* row r's info bytes: a fixarray of its 8 factors, each as msgpack_pack_int64 packs it */
static void pack_row(sched_rows *w, int r) {
    unsigned char *b = w->b[r];
    size_t k = 1;
    hw_put_list_head(b, SCHED_NDIM); /* a fixarray: one byte */
    for (int d = 0; d < SCHED_NDIM; d++) {
        if (w->f[r][d] < 0) {
            w->len[r] = 0;
            return;
        }
        k += hw_put_uint(b + k, (uint64_t)w->f[r][d]);
    }
    w->len[r] = (unsigned char)k;
}

/* the table's rows that differ from e->rows (all of them after a layer change): their observation
 * entries and info bytes made again */
static void sync_rows(sched_env *e, bool all) {
    const sched_state *s = &e->st;
    const sched_layer *l = &e->layers[s->li];
    sched_rows *w = &e->rows;
    float *o = e->obs;
    for (int r = 0; r < SCHED_NROW; r++) {
        if (!all && !memcmp(w->f[r], s->tab.f[r], sizeof w->f[r])) continue;
        memcpy(w->f[r], s->tab.f[r], sizeof w->f[r]);
        pack_row(w, r);
        /* log(1) is 0 exactly: most factors are 1, and 0 / log(d) = 0 */
        for (int d = 0; d < SCHED_NDIM; d++) {
            int f = s->tab.f[r][d];
            o[r * SCHED_NDIM + d] = l->d[d] > 1 && f != 1 ? (float)(log_of(f) / e->logd[d]) : 0.0f;
        }
    }
}

static void fill_obs(sched_env *e, hw_obs *obs) {
    const sched_state *s = &e->st;
    const sched_layer *l = &e->layers[s->li];
    float *o = e->obs;
    bool all = e->obs_li != s->li;
    if (all) { /* the layer's own part, once per layer */
        for (int d = 0; d < SCHED_NDIM; d++) {
            e->logd[d] = log((double)l->d[d]);
            o[OBS_TABLE + SCHED_NROW + d] = (float)(log2((double)l->d[d]) / 16.0);
        }
        o[OBS_TABLE + SCHED_NROW + SCHED_NDIM] = (float)(l->stride / 64.0);
        e->obs_li = s->li;
    }
    sync_rows(e, all);
    if (!obs) return;
    memset(o + OBS_TABLE, 0, SCHED_NROW * sizeof *o); /* the current row, one-hot */
    o[OBS_TABLE + s->r] = 1.0f;
    o[OBS_N - 2] = (float)(s->cost.energy_pj / s->init_energy);
    o[OBS_N - 1] = (float)(s->cost.cycles / s->init_cycles);
    if (e->dict_obs) { /* only the first n fields are read: the struct (a kilobyte) is not cleared */
        obs->n = 4;
        obs->keys[0] = "layer";
        obs->arr[0] = (hw_array){HW_DT_FLOAT32, 1, {OBS_LAYER}, o + OBS_TABLE + SCHED_NROW};
        obs->keys[1] = "metrics";
        obs->arr[1] = (hw_array){HW_DT_FLOAT32, 1, {2}, o + OBS_N - 2};
        obs->keys[2] = "row";
        obs->arr[2] = (hw_array){HW_DT_FLOAT32, 1, {SCHED_NROW}, o + OBS_TABLE};
        obs->keys[3] = "table";
        obs->arr[3] = (hw_array){HW_DT_FLOAT32, 2, {SCHED_NROW, SCHED_NDIM}, o};
    } else {
        obs->n = 1;
        obs->keys[0] = NULL;
        obs->arr[0] = (hw_array){HW_DT_FLOAT32, 1, {OBS_N}, o};
    }
}

static void start_layer(sched_env *e, int li) {
    sched_state *s = &e->st;
    s->li = li;
    s->t = 0;
    s->nmulti = 0;
    s->r = first_row(&e->acc);
    sched_table_init(&e->layers[li], &s->tab);
    sched_cost c;
    sched_cost_eval(&e->acc, &e->layers[li], &s->tab, &c);
    sched_cost_brief_of(&c, &s->cost);
    s->init_obj = sched_brief_objective(&s->cost, e->obj);
    s->init_energy = s->cost.energy_pj;
    s->init_cycles = s->cost.cycles;
}

static void put_table(hw_info_out *o, const char *key, const sched_table *t) {
    hw_info_out rows = hw_info_list(o, key, SCHED_NROW);
    for (int r = 0; r < SCHED_NROW; r++) {
        hw_info_out row = hw_info_item_list(&rows, SCHED_NDIM);
        hw_info_item_ints(&row, t->f[r], SCHED_NDIM);
    }
}

/* the state's table: into a gathering sink, the rows' bytes fill_obs kept when they are the
 * table's (put_table's bytes); else put_table */
static void put_state_table(const sched_env *e, hw_info_out *o) {
    hw_info_gather *g = hw_info_gathering(o);
    const sched_rows *w = &e->rows;
    if (g && e->obs_li == e->st.li && !memcmp(w->f, e->st.tab.f, sizeof w->f) && !memchr(w->len, 0, sizeof w->len)) {
        /* the key, the list's header and each row's bytes, straight into the buffer (with room
         * for every row's ROW_BYTES copied whole; its first len[r] bytes count) */
        unsigned char *q = hw_info_gather_key(g, HW_KEY("table"), 1 + SCHED_NROW * ROW_BYTES), *p = q + 1;
        hw_put_list_head(q, SCHED_NROW); /* a fixarray: one byte */
        for (int r = 0; r < SCHED_NROW; r++) {
            memcpy(p, w->b[r], ROW_BYTES);
            p += w->len[r];
        }
        g->out.n += (size_t)(p - q);
        return;
    }
    put_table(o, "table", &e->st.tab);
}

/* the info keys of the state (after a reset or a step) */
static size_t state_keys(const sched_env *e) { return 9 + 2 * (e->mode == MODE_NETWORK); }
static void put_state(const sched_env *e, hw_info_out *info) {
    const sched_state *s = &e->st;
    hw_info_list_u8_k(info, HW_KEY("action_mask"), e->valid[s->r], SCHED_NACT);
    hw_info_real_k(info, HW_KEY("energy_pj"), s->cost.energy_pj);
    hw_info_real_k(info, HW_KEY("cycles"), s->cost.cycles);
    hw_info_real_k(info, HW_KEY("edp"), s->cost.edp);
    hw_info_real_k(info, HW_KEY("utilisation"), s->cost.utilisation);
    hw_info_int_k(info, HW_KEY("layer"), s->li);
    hw_info_str_k(info, HW_KEY("layer_name"), e->layers[s->li].name);
    hw_info_str_k(info, HW_KEY("row"), sched_row_names[s->r]);
    put_state_table(e, info);
    if (e->mode == MODE_NETWORK) {
        hw_info_real_k(info, HW_KEY("network_energy_pj"), s->net_energy + (s->done ? 0 : s->cost.energy_pj));
        hw_info_real_k(info, HW_KEY("network_cycles"), s->net_cycles + (s->done ? 0 : s->cost.cycles));
    }
}

/* the info of the last reset/step: a step's own keys, a finished layer's, then the state's */
static void put_info(const sched_env *e, hw_info_out *info) {
    const sched_last *l = &e->last;
    if (l->step) {
        hw_info_bool_k(info, HW_KEY("invalid_action"), l->invalid);
        hw_info_out rj = hw_info_list_k(info, HW_KEY("rows"), (size_t)l->n);
        for (int i = 0; i < l->n; i++) hw_info_item_str(&rj, sched_row_names[l->rows[i]]);
        hw_info_int_k(info, HW_KEY("bf_leaves"), l->bs.leaves);
        hw_info_int_k(info, HW_KEY("bf_pruned"), l->bs.pruned);
        hw_info_int_k(info, HW_KEY("bf_bounded"), l->bs.bounded);
        hw_info_bool_k(info, HW_KEY("bf_cache_hit"), l->bs.cache_hits > 0);
    }
    if (l->step && l->finished) {
        hw_info_int_k(info, HW_KEY("finished_layer"), l->fin_li);
        put_table(info, "finished_layer_table", &l->fin_tab);
        hw_info_real_k(info, HW_KEY("finished_layer_energy_pj"), l->fin_energy);
        hw_info_real_k(info, HW_KEY("finished_layer_cycles"), l->fin_cycles);
    }
    put_state(e, info);
}

static void env_info_pack(const void *p, struct msgpack_packer *pk) {
    const sched_env *e = p;
    hw_info_gather g; /* written before it is read: not cleared */
    hw_info_out o = hw_info_gatherer(&g, pk, (e->last.step ? 6 + 4 * (size_t)e->last.finished : 0) + state_keys(e));
    put_info(e, &o);
    hw_info_gather_flush(&g);
}

static void add_info(sched_env *e, json_t *info) {
    hw_info_out o = hw_info_json(info);
    if (info) put_info(e, &o);
}

static int env_reset(void *p, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)seed; /* the env is deterministic: steps use no randomness */
    (void)options;
    (void)err;
    sched_env *e = p;
    memset(&e->st, 0, sizeof e->st);
    e->st.started = 1;
    start_layer(e, 0);
    fill_obs(e, obs);
    e->last.step = 0;
    add_info(e, info);
    return 0;
}

static int env_step(void *p, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    sched_env *e = p;
    sched_state *s = &e->st;
    if (!s->started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    if (s->done) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    int a = (int)act->i[0];
    const sched_layer *l = &e->layers[s->li];
    double reward;
    int invalid = a < 0 || a >= SCHED_NACT || !e->valid[s->r][a];
    sched_last *last = &e->last;
    last->step = 1, last->finished = 0;
    sched_bf_stats bs = {0, 0, 0, 0, 0};
    int *rows = last->rows, n = 0;
    if (invalid) {
        reward = -e->penalty;
    } else {
        n = sched_action_rows(a, s->r, rows);
        double before = sched_brief_objective(&s->cost, e->obj);
        sched_bruteforce_cached_brief(e->cache, &e->acc, l, &s->tab, n, rows, e->obj, -1, &s->cost, &bs);
        /* the server's request deadline cut the search short (the table is still a valid one) */
        if (hw_deadline_check("sched-v0 brute-force step", err)) return -1;
        double after = sched_brief_objective(&s->cost, e->obj);
        double gain = before > 0 ? (before - after) / before : 0;
        if (n == 3) s->nmulti++;
        else s->nmulti = 0;
        reward = gain;
        if (n == 3 && !(gain > 0)) reward = -e->penalty * s->nmulti;
        s->r = next_row(&e->acc, s->r);
    }
    s->t++;
    out->terminated = false;
    out->truncated = false;
    out->reward = reward;
    last->invalid = invalid, last->n = n, last->bs = bs;
    if (s->t >= e->steps) {
        if (e->mode == MODE_NETWORK && s->li + 1 < e->nlayers) {
            s->net_energy += s->cost.energy_pj;
            s->net_cycles += s->cost.cycles;
            last->finished = 1, last->fin_li = s->li, last->fin_tab = s->tab;
            last->fin_energy = s->cost.energy_pj, last->fin_cycles = s->cost.cycles;
            start_layer(e, s->li + 1);
        } else {
            /* the step budget is a time limit (a table can always be refined further): truncated */
            out->truncated = true;
            if (e->mode == MODE_NETWORK) {
                s->net_energy += s->cost.energy_pj;
                s->net_cycles += s->cost.cycles;
            }
            s->done = 1; /* before add_info: the totals now include the last layer */
            add_info(e, info);
            fill_obs(e, &out->obs);
            return 0;
        }
    }
    fill_obs(e, &out->obs);
    add_info(e, info);
    return 0;
}

static void *env_snapshot(const void *p, hw_err *err) {
    (void)err;
    sched_state *s = malloc(sizeof *s);
    if (!s) abort();
    *s = ((const sched_env *)p)->st;
    return s;
}

static int env_restore(void *p, const void *snap, hw_err *err) {
    (void)err;
    ((sched_env *)p)->st = *(const sched_state *)snap;
    return 0;
}

static void env_snap_free(void *snap) { free(snap); }

static void cost_metrics(json_t *m, const sched_cost *c) {
    json_object_set_new(m, "energy_pj", json_real(c->energy_pj));
    json_object_set_new(m, "cycles", json_real(c->cycles));
    json_object_set_new(m, "edp", json_real(c->edp));
    json_object_set_new(m, "utilisation", json_real(c->utilisation));
    json_object_set_new(m, "dram_words", json_real(sched_objective(c, SOBJ_DRAM)));
    json_object_set_new(m, "bound", json_string(c->bound_row < 0 ? "compute" : sched_row_names[c->bound_row]));
    json_object_set_new(m, "utilization_with_stalls", json_real(c->tl_utilization));
    /* Timeloop's per-level per-tensor counts (all instances) */
    json_t *acc = json_object();
    for (int k = 0; k < 4; k++) {
        int r = sched_storage_rows[k];
        json_t *row = NULL;
        for (int t = 0; t < SCHED_NT; t++) {
            if (c->reads[r][t] == 0 && c->fills[r][t] == 0 && c->updates[r][t] == 0) continue;
            if (!row) row = json_object();
            json_t *x = json_object();
            json_object_set_new(x, "reads", json_real(c->reads[r][t]));
            json_object_set_new(x, "fills", json_real(c->fills[r][t]));
            json_object_set_new(x, "updates", json_real(c->updates[r][t]));
            json_object_set_new(row, sched_tensor_names[t], x);
        }
        if (row) json_object_set_new(acc, sched_row_names[r], row);
    }
    json_object_set_new(m, "accesses", acc);
}

/* reward of a one-shot evaluation: log(objective of the all-in-DRAM table / objective) */
static double eval_reward(const sched_env *e, const sched_layer *l, double obj) {
    sched_table t0;
    sched_cost c0;
    sched_table_init(l, &t0);
    sched_cost_eval(&e->acc, l, &t0, &c0);
    return log(sched_objective(&c0, e->obj) / obj);
}

static int env_evaluate(void *p, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    sched_env *e = p;
    int li = e->st.started ? e->st.li : 0;
    const sched_layer *l = &e->layers[li];
    const json_t *table = json_is_array(point) ? point : NULL;
    const json_t *orders = NULL;
    if (json_is_object(point) && json_object_get(point, "table")) {
        static const char *const k[] = {"table", "orders", NULL};
        if (hw_cfg_check_keys(point, k, err)) return hw_fail(err, HW_E_BAD_ACTION, "point: %s", err ? err->msg : "bad key");
        table = json_object_get(point, "table");
        orders = json_object_get(point, "orders");
    }
    if (table) {
        sched_table t;
        if (sched_table_from_json(table, &t, err) || sched_orders_from_json(orders, &t, err)) return -1;
        sched_cost c;
        hw_err e2;
        if (sched_evaluate(&e->acc, l, &t, &c, &e2)) {
            *reward = 0;
            if (metrics) {
                json_object_set_new(metrics, "feasible", json_false());
                json_object_set_new(metrics, "reason", json_string(e2.msg));
            }
            return 0;
        }
        *reward = eval_reward(e, l, sched_objective(&c, e->obj));
        if (metrics) {
            json_object_set_new(metrics, "feasible", json_true());
            json_object_set_new(metrics, "layer", json_string(l->name));
            json_object_set_new(metrics, "orders", sched_orders_to_json(&e->acc, &t));
            cost_metrics(metrics, &c);
        }
        return 0;
    }
    if (!json_is_object(point) || !json_object_get(point, "baseline"))
        return hw_fail(err, HW_E_BAD_ACTION,
                       "point: expected a table (array of %d rows of %d integers), {\"table\": [...], \"orders\": {\"LB\": \"BPQCRSKG\", ...}} or "
                       "{\"baseline\": \"random-pruned\"|\"bottom-up\"|\"top-down\"|\"cosa\", \"seed\": n, \"samples\": n}",
                       SCHED_NROW, SCHED_NDIM);
    static const char *const k[] = {"baseline", "seed", "samples", NULL};
    hw_err e3;
    int which;
    int64_t seed, samples;
    if (hw_cfg_check_keys(point, k, &e3) || hw_cfg_enum(point, "baseline", sched_baseline_names, 0, &which, &e3) ||
        hw_cfg_int(point, "seed", 0, 0, INT64_MAX, &seed, &e3) || hw_cfg_int(point, "samples", 2000, 1, 10000000, &samples, &e3)) {
        /* the config getters say "config.x": this is the point, not the config */
        const char *m = strncmp(e3.msg, "config.", 7) ? e3.msg : e3.msg + 7;
        return hw_fail(err, HW_E_BAD_ACTION, "point.%s", m);
    }
    if (samples > e->max_samples)
        return hw_fail(err, HW_E_LIMIT, "point.samples: %lld exceeds this server's limit of %lld (hwgym-server --env-limit sched-v0.samples=N)",
                       (long long)samples, (long long)e->max_samples);
    int first = e->mode == MODE_NETWORK ? 0 : li, last = e->mode == MODE_NETWORK ? e->nlayers : li + 1;
    double E = 0, C = 0, R = 0;
    json_t *per = json_array();
    for (int i = first; i < last; i++) {
        sched_table t;
        sched_cost c;
        if (sched_baseline(&e->acc, &e->layers[i], which, (uint64_t)seed, (int)samples, e->obj, &t, &c, err)) {
            json_decref(per);
            return -1;
        }
        E += c.energy_pj;
        C += c.cycles;
        R += eval_reward(e, &e->layers[i], sched_objective(&c, e->obj));
        json_t *o = json_object();
        json_object_set_new(o, "layer", json_string(e->layers[i].name));
        cost_metrics(o, &c);
        json_object_set_new(o, "table", sched_table_to_json(&t));
        json_array_append_new(per, o);
    }
    *reward = R / (last - first);
    if (metrics) {
        json_object_set_new(metrics, "feasible", json_true());
        json_object_set_new(metrics, "baseline", json_string(sched_baseline_names[which]));
        json_object_set_new(metrics, "energy_pj", json_real(E));
        json_object_set_new(metrics, "cycles", json_real(C));
        json_object_set_new(metrics, "edp", json_real(E * C));
        json_object_set_new(metrics, "layers", per);
    } else {
        json_decref(per);
    }
    return 0;
}

static void *env_create(const json_t *cfg, hw_err *err) { return env_create_ctx(cfg, &hw_env_ctx_local, err); }

static size_t env_mem_bytes(const void *p) {
    const sched_env *e = p;
    return sizeof *e + (size_t)e->nlayers * sizeof *e->layers + sched_bfcache_bytes(e->cache);
}

const hw_env_family hw_family_sched = {
    .id = "sched-v0",
    .summary = "RL-Scheduling scheduling table: pick 2-3 rows, brute-force their refactorisation (Timeloop-style model)",
    HW_ENV_OPS(env),
    .info_pack = env_info_pack,
};

/* Hook for the lean batch entry (sched_lean.c): what evaluate() scores a table against. */
void sched_env_lean_ctx(void *p, const sched_accel **acc, const sched_layer **layer, int *obj);
void sched_env_lean_ctx(void *p, const sched_accel **acc, const sched_layer **layer, int *obj) {
    sched_env *e = p;
    *acc = &e->acc;
    *layer = &e->layers[e->st.started ? e->st.li : 0];
    *obj = e->obj;
}
