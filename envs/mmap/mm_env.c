/* mm_env.c - the mmap-v0 env (hw_family_mmap) over the MMapGame engine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/env_limits.h"
#include "common/hw_files.h"
#include "common/info_out.h"
#include "env.h"
#include "mmap.h"

#define NF 10 /* buffer features */
#define NG 6  /* global features */
#define NA 4  /* per-action features */

typedef struct mm_env {
    mm_problem *p;
    mm_game *g, *scratch;
    int k, l, map, window, profile_len, supply_window;
    bool use_map, started, illegal_end;
    double heur_latency;
    hw_space *aspace, *ospace;
    /* observation storage */
    float *obs_buf, *obs_sup, obs_act[MM_NACT * NA], obs_glob[NG];
    uint8_t *obs_map, *obs_prof;
    uint64_t *occ;
    /* memory-map cache: per time step, the map rows occupied (mwords words), valid when
     * colvalid[t] == epoch; kept up to date by OR-ing the pieces of each forward step */
    uint64_t *colcache;
    uint32_t *colvalid, epoch;
    int32_t mwords, last_t, vlo, vhi; /* cache entries are trusted only inside [vlo, vhi] */
    uint32_t last_plog;
    bool sync_ok;
    int last_illegal; /* the action of the last step when it was illegal (its info says so), else -1 */
    /* the memory map's rows as last written: row c is the expansion of map_prev[c] (mwords words,
     * bit j -> byte j); a row whose words did not change is not written again. map_rows_ok is
     * false until every row has been written (create; and reset and restore rewrite every row,
     * though map_prev and the rows agree whatever the game's state) */
    uint64_t *map_prev;
    bool map_rows_ok;
    int32_t *col_lo, *col_hi; /* [map] row c covers time steps t0 + col_lo[c] .. t0 + col_hi[c] */
} mm_env;

typedef struct mm_snap {
    int32_t n;
    bool started, illegal_end;
    uint8_t acts[];
} mm_snap;

static void mm_env_destroy(void *pv) {
    mm_env *e = pv;
    if (!e) return;
    mm_game_free(e->g);
    mm_game_free(e->scratch);
    mm_problem_free(e->p);
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    free(e->obs_buf);
    free(e->obs_sup);
    free(e->obs_map);
    free(e->obs_prof);
    free(e->occ);
    free(e->colcache);
    free(e->colvalid);
    free(e->map_prev);
    free(e->col_lo);
    free(e->col_hi);
    free(e);
}

/* config.problem: a dataset name, a .json/.msgpack path (read under the caller's file policy),
 * {"text": "<problem JSON>"} or the problem document itself as an object. */
static mm_problem *open_problem(const json_t *cfg, const hw_env_ctx *ctx, const char *name, uint64_t seed, hw_err *err) {
    json_t *v = cfg ? json_object_get(cfg, "problem") : NULL;
    if (v && json_is_object(v) && !json_object_get(v, "text")) return mm_problem_from_json(v, err);
    if (v && json_is_object(v)) {
        char *text = NULL;
        size_t n = 0;
        if (hw_files_cfg_text(ctx->files, cfg, "problem", &text, &n, NULL, err)) return NULL;
        mm_problem *p = mm_problem_parse(text, n, false, err);
        free(text);
        return p;
    }
    if (!mm_problem_is_path(name)) return mm_problem_open(name, seed, err);
    size_t n = 0;
    char *data = hw_files_read(ctx->files, "file", name, &n, err);
    if (!data) return NULL;
    mm_problem *p = mm_problem_parse(data, n, mm_problem_is_msgpack_path(name), err);
    free(data);
    if (!p) hw_files_redact(ctx->files, true, "file", "mmap problem", err);
    return p;
}

static void *mm_env_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"problem", "seed", "k", "l", "profile_len", "map_size", "map_window", "supply_window",
                                       "memory_map", NULL};
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    const char *prob;
    int64_t seed, k, l, prof, map, win, sw;
    bool use_map;
    json_t *pv = cfg ? json_object_get(cfg, "problem") : NULL;
    prob = "alexnet_train_batch_32";
    if (pv && json_is_string(pv)) prob = json_string_value(pv);
    else if (pv && !json_is_null(pv) && !json_is_object(pv))
        return hw_fail(err, HW_E_BAD_CONFIG, "config.problem: expected a name, a path, {\"text\": ...} or a problem object"), NULL;
    if ( hw_cfg_int(cfg, "seed", 0, 0, INT64_MAX, &seed, err) ||
        hw_cfg_int(cfg, "k", 5, 0, 64, &k, err) || hw_cfg_int(cfg, "l", 5, 0, 64, &l, err) ||
        hw_cfg_int(cfg, "profile_len", 256, 1, MM_MAX_GRANULES, &prof, err) || hw_cfg_int(cfg, "map_size", 128, 8, 512, &map, err) ||
        hw_cfg_int_capped(cfg, ctx, "map_window", 128, 1, 1 << 20, 1 << 16, &win, err) ||
        hw_cfg_int(cfg, "supply_window", 64, 1, 1 << 16, &sw, err) ||
        hw_cfg_bool(cfg, "memory_map", true, &use_map, err))
        return NULL;
    mm_problem *p = open_problem(cfg, ctx, prob, (uint64_t)seed, err);
    if (!p) {
        hw_err_prefix(err, "config.problem");
        if (err) err->code = HW_E_BAD_CONFIG;
        return NULL;
    }
    mm_env *e = calloc(1, sizeof *e);
    if (!e) abort();
    e->p = p;
    e->k = (int)k;
    e->l = (int)l;
    e->profile_len = (int)prof;
    e->map = (int)map;
    e->window = (int)win;
    e->supply_window = (int)sw;
    e->use_map = use_map;
    e->g = mm_game_new(p);
    e->scratch = mm_game_new(p);
    e->heur_latency = mm_heuristic_latency(p);
    int rows = 1 + e->k + e->l;
    e->obs_buf = calloc((size_t)rows * NF, sizeof(float));
    e->obs_sup = calloc((size_t)e->supply_window, sizeof(float));
    e->obs_map = calloc((size_t)e->map * (size_t)e->map + 64, 1);
    e->obs_prof = calloc((size_t)e->profile_len, 1);
    e->occ = calloc((size_t)e->g->words, sizeof(uint64_t));
    e->mwords = (e->map + 63) / 64;
    e->colcache = calloc((size_t)p->T * (size_t)e->mwords, sizeof(uint64_t));
    e->colvalid = calloc((size_t)p->T, sizeof(uint32_t));
    e->map_prev = calloc((size_t)e->map * (size_t)e->mwords, sizeof(uint64_t));
    e->col_lo = calloc((size_t)e->map, sizeof(int32_t));
    e->col_hi = calloc((size_t)e->map, sizeof(int32_t));
    if (!e->col_lo || !e->col_hi) abort();
    for (int c = 0; c < e->map; c++) { /* time bin c of the map's window (fill_obs) */
        int32_t a = (int32_t)((int64_t)c * e->window / e->map), z = (int32_t)((int64_t)(c + 1) * e->window / e->map) - 1;
        e->col_lo[c] = a;
        e->col_hi[c] = z < a ? a : z;
    }
    e->epoch = 1;
    e->vlo = 0;
    e->vhi = -1;
    if (!e->colcache || !e->colvalid || !e->map_prev) abort();
    if (!e->obs_buf || !e->obs_sup || !e->obs_map || !e->obs_prof || !e->occ) abort();
    e->aspace = hw_space_discrete(MM_NACT);
    hw_space_set_name(e->aspace, 0, "action");
    hw_space_set_labels(e->aspace, 0, MM_NACT, mm_action_names);
    e->ospace = hw_space_dict();
    int64_t bs[2] = {rows, NF};
    hw_space *b = hw_space_box_uniform(2, bs, -1, INFINITY, HW_DT_FLOAT32);
    static const char *const fn[NF] = {"valid", "size", "is_output", "target_time", "tensor_id", "alias_id", "live_start",
                                       "live_end", "demand", "benefit"};
    for (int r = 0; r < rows; r++)
        for (int f = 0; f < NF; f++) {
            char nm[48];
            snprintf(nm, sizeof nm, "%s%d.%s", r == 0 ? "cur" : r <= e->k ? "next" : "same_tensor", r == 0 ? 0 : r <= e->k ? r : r - e->k,
                     fn[f]);
            hw_space_set_name(b, r * NF + f, nm);
            /* benefit = L(operands in CMEM) - L(+ this buffer): measured latencies with noise, so
             * it is negative whenever the buffer makes the instruction slower (issue 11: -462.8) */
            if (f == NF - 1) b->low[r * NF + f] = -INFINITY;
        }
    hw_space_dict_add(e->ospace, "buffers", b);
    int64_t as[2] = {MM_NACT, NA};
    hw_space *a = hw_space_box_uniform(2, as, -1, INFINITY, HW_DT_FLOAT32);
    static const char *const an[NA] = {"legal", "start", "end", "offset"};
    for (int i = 0; i < MM_NACT; i++)
        for (int f = 0; f < NA; f++) {
            char nm[48];
            snprintf(nm, sizeof nm, "%s.%s", mm_action_names[i], an[f]);
            hw_space_set_name(a, i * NA + f, nm);
        }
    hw_space_dict_add(e->ospace, "actions", a);
    int64_t gs = NG;
    hw_space *gl = hw_space_box_uniform(1, &gs, -INFINITY, INFINITY, HW_DT_FLOAT32);
    static const char *const gn[NG] = {"move", "buffer_index", "alias_pos", "alias_remaining", "return", "backup_safe"};
    for (int i = 0; i < NG; i++) hw_space_set_name(gl, i, gn[i]);
    hw_space_dict_add(e->ospace, "global", gl);
    if (e->use_map) {
        int64_t ms[2] = {e->map, e->map};
        hw_space_dict_add(e->ospace, "memory_map", hw_space_box_uniform(2, ms, 0, 1, HW_DT_UINT8));
    }
    int64_t ps = e->profile_len;
    hw_space_dict_add(e->ospace, "memory_profile", hw_space_box_uniform(1, &ps, 0, 1, HW_DT_UINT8));
    int64_t ss = e->supply_window;
    hw_space_dict_add(e->ospace, "supply", hw_space_box_uniform(1, &ss, 0, INFINITY, HW_DT_FLOAT32));
    return e;
}

static const hw_space *mm_env_aspace(const void *pv) { return ((const mm_env *)pv)->aspace; }
static const hw_space *mm_env_ospace(const void *pv) { return ((const mm_env *)pv)->ospace; }

static void buf_feat(const mm_env *e, int32_t b, float *out) {
    if (b < 0 || b >= e->p->nbuf) {
        memset(out, 0, sizeof(float) * NF);
        return;
    }
    const mm_buffer *B = &e->p->buf[b];
    out[0] = 1;
    out[1] = (float)B->size;
    out[2] = (float)B->is_output;
    out[3] = (float)B->time;
    out[4] = (float)B->tensor;
    out[5] = (float)B->alias;
    out[6] = (float)B->lr_start;
    out[7] = (float)B->lr_end;
    out[8] = (float)B->demand;
    out[9] = (float)mm_game_benefit(e->g, b);
}

/* Granule o of G maps to rows [o*M/G, max(that+1, (o+1)*M/G)) of an M-row downsampling. */
static inline int32_t row_lo(int32_t o, int32_t G, int32_t M) { return (int32_t)((int64_t)o * M / G); }
static inline int32_t row_hi(int32_t o, int32_t G, int32_t M) {
    int32_t a = row_lo(o, G, M), b = (int32_t)((int64_t)(o + 1) * M / G);
    return b > a ? b : a + 1;
}

static void set_bits(uint64_t *w, int32_t a, int32_t b) { /* bits [a, b) */
    for (int32_t i = a; i < b;) {
        if ((i & 63) == 0 && i + 64 <= b) {
            w[i >> 6] = ~0ULL;
            i += 64;
        } else {
            w[i >> 6] |= 1ULL << (i & 63);
            i++;
        }
    }
}

/* Calls fn(a, b) for each run [a, b) of set bits of an occupancy mask of G granules. */
#define FOR_RUNS(mask, G, A, B, BODY)                                                        \
    for (int32_t A = 0, B; A < (G); A = B) {                                                 \
        while (A < (G) && !((mask)[A >> 6] >> (A & 63) & 1)) {                               \
            if ((A & 63) == 0 && !(mask)[A >> 6]) A += 64;                                   \
            else A++;                                                                        \
        }                                                                                    \
        if (A >= (G)) break;                                                                 \
        B = A;                                                                               \
        while (B < (G) && ((mask)[B >> 6] >> (B & 63) & 1)) B++;                             \
        BODY;                                                                                \
    }

/* The 8 bits of byte x as 8 bytes of 0/1 (bit k -> byte k, in memory order). */
static inline uint64_t spread_byte(uint64_t x) {
    uint64_t r = (x * 0x0101010101010101ULL) & 0x8040201008040201ULL; /* byte k keeps bit k */
    r = ((r + 0x7f7f7f7f7f7f7f7fULL) >> 7) & 0x0101010101010101ULL;   /* non-zero byte -> 1 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    r = __builtin_bswap64(r);
#endif
    return r;
}

/* Row of M bytes from its bits w (bit j -> byte j); writes exactly M bytes. */
static void expand_row(uint8_t *row, const uint64_t *w, int M) {
    int j = 0;
    for (; j + 8 <= M; j += 8) {
        uint64_t v = spread_byte(w[j >> 6] >> (j & 63) & 0xff);
        memcpy(row + j, &v, 8);
    }
    if (j < M) {
        uint64_t v = spread_byte(w[j >> 6] >> (j & 63) & 0xff);
        memcpy(row + j, &v, (size_t)(M - j));
    }
}

/* Map rows occupied at time t (cached). */
static const uint64_t *map_col(mm_env *e, int32_t t) {
    uint64_t *c = e->colcache + (size_t)t * (size_t)e->mwords;
    if (e->colvalid[t] == e->epoch) return c;
    const mm_problem *p = e->p;
    memset(c, 0, sizeof(uint64_t) * (size_t)e->mwords);
    mm_game_occupancy(e->g, t, t, e->occ);
    FOR_RUNS(e->occ, p->G, a, b, set_bits(c, row_lo(a, p->G, e->map), row_hi(b - 1, p->G, e->map)));
    e->colvalid[t] = e->epoch;
    return c;
}

/* Brings the cache in line with the game: after one forward step, OR in its new pieces;
 * otherwise (reset, restore) invalidate everything. */
static void map_sync(mm_env *e) {
    const mm_game *g = e->g;
    if (e->sync_ok && g->t == e->last_t + 1 && g->plog_n >= e->last_plog) {
        for (uint32_t i = e->last_plog; i < g->plog_n; i++) {
            const mm_piece *pc = &g->plog[i];
            int32_t a = row_lo(pc->off, e->p->G, e->map), b = row_hi(pc->off + pc->n - 1, e->p->G, e->map);
            int32_t lo = pc->s > e->vlo ? pc->s : e->vlo, hi = pc->e < e->vhi ? pc->e : e->vhi;
            for (int32_t t = lo; t <= hi; t++)
                if (e->colvalid[t] == e->epoch) set_bits(e->colcache + (size_t)t * (size_t)e->mwords, a, b);
        }
    } else if (!(e->sync_ok && g->t == e->last_t && g->plog_n == e->last_plog)) {
        e->epoch++;
    }
    e->sync_ok = true;
    e->last_t = g->t;
    e->last_plog = g->plog_n;
}

/* Rows of the memory map from the cached columns: row c ORs the time steps of its bin (col_lo,
 * col_hi from t0); rows whose bits did not change are left as they are. Inlined per word count. */
static inline __attribute__((always_inline)) void map_rows(mm_env *e, int32_t t0, const int mw) {
    const int M = e->map;
    const int32_t T = e->p->T;
    for (int c = 0; c < M; c++) {
        int32_t a = t0 + e->col_lo[c], z = t0 + e->col_hi[c];
        if (a < 0) a = 0;
        if (z >= T) z = T - 1;
        uint64_t colw[8];
        for (int w = 0; w < mw; w++) colw[w] = 0;
        for (int32_t t = a; t <= z; t++) {
            const uint64_t *cc = map_col(e, t);
            for (int w = 0; w < mw; w++) colw[w] |= cc[w];
        }
        /* row c of the map = time bin c; byte j = offset bin j */
        uint64_t *prev = e->map_prev + (size_t)c * (size_t)mw;
        uint64_t diff = !e->map_rows_ok;
        for (int w = 0; w < mw; w++) diff |= prev[w] ^ colw[w];
        if (!diff) continue;
        for (int w = 0; w < mw; w++) prev[w] = colw[w];
        expand_row(e->obs_map + (size_t)c * (size_t)M, colw, M);
    }
}

static void fill_obs(mm_env *e, hw_obs *obs) {
    if (!obs) return;
    const mm_game *g = e->g;
    const mm_problem *p = e->p;
    int32_t cur = g->t < p->nbuf ? g->t : -1;
    int32_t tt = cur >= 0 ? p->buf[cur].time : p->T - 1;
    int rows = 1 + e->k + e->l;
    buf_feat(e, cur, e->obs_buf);
    for (int i = 1; i <= e->k; i++) buf_feat(e, cur >= 0 && cur + i < p->nbuf ? cur + i : -1, e->obs_buf + i * NF);
    int32_t nx = cur >= 0 ? p->next_same_tensor[cur] : -1;
    for (int i = 0; i < e->l; i++) {
        buf_feat(e, nx, e->obs_buf + (1 + e->k + i) * NF);
        if (nx >= 0) nx = p->next_same_tensor[nx];
    }
    for (int a = 0; a < MM_NACT; a++) {
        const mm_option *o = &g->opt[a];
        float *f = e->obs_act + a * NA;
        f[0] = mm_game_legal(g, a);
        f[1] = o->legal && a != MM_DROP ? (float)o->s : -1;
        f[2] = o->legal && a != MM_DROP ? (float)o->e : -1;
        f[3] = o->legal && a != MM_DROP ? (float)((double)o->off * (double)p->granule) : -1;
    }
    int32_t gpos = cur >= 0 ? p->buf[cur].group_pos : 0;
    int32_t gsz = cur >= 0 ? p->gstart[p->buf[cur].alias + 1] - p->gstart[p->buf[cur].alias] : 0;
    e->obs_glob[0] = (float)g->t;
    e->obs_glob[1] = (float)(cur >= 0 ? cur : p->nbuf);
    e->obs_glob[2] = (float)gpos;
    e->obs_glob[3] = (float)(gsz - gpos - (cur >= 0 ? 1 : 0));
    e->obs_glob[4] = (float)mm_game_return(g);
    e->obs_glob[5] = mm_game_backup_safe(g);
    /* memory map: window of map_window steps centred on target_time, map x map cells:
     * memory_map[i][j] = 1 when offset bin j is occupied at some step of time bin i */
    if (e->use_map) {
        int32_t t0 = tt - e->window / 2;
        map_sync(e);
        /* entries entering the trusted range may be stale: recompute them */
        int32_t nlo = t0 < 0 ? 0 : t0, nhi = t0 + e->window - 1 >= p->T ? p->T - 1 : t0 + e->window - 1;
        for (int32_t t = nlo; t <= nhi; t++)
            if (t < e->vlo || t > e->vhi) e->colvalid[t] = 0;
        e->vlo = nlo;
        e->vhi = nhi;
        int mw = e->mwords;
        if (mw == 2) map_rows(e, t0, 2); /* map_size 65..128 (the default 128): constant word counts */
        else if (mw == 1) map_rows(e, t0, 1);
        else map_rows(e, t0, mw);
        e->map_rows_ok = true;
    }
    mm_game_occupancy(g, tt, tt, e->occ);
    memset(e->obs_prof, 0, (size_t)e->profile_len);
    FOR_RUNS(e->occ, p->G, a, b, memset(e->obs_prof + row_lo(a, p->G, e->profile_len), 1,
                                        (size_t)(row_hi(b - 1, p->G, e->profile_len) - row_lo(a, p->G, e->profile_len))));
    for (int i = 0; i < e->supply_window; i++) {
        int32_t t = tt - e->supply_window / 2 + i;
        e->obs_sup[i] = t >= 0 && t < p->T ? (float)g->W[t] : 0;
    }
    memset(obs, 0, sizeof *obs);
    int n = 0;
    obs->keys[n] = "actions";
    obs->arr[n++] = (hw_array){HW_DT_FLOAT32, 2, {MM_NACT, NA}, e->obs_act};
    obs->keys[n] = "buffers";
    obs->arr[n++] = (hw_array){HW_DT_FLOAT32, 2, {rows, NF}, e->obs_buf};
    obs->keys[n] = "global";
    obs->arr[n++] = (hw_array){HW_DT_FLOAT32, 1, {NG}, e->obs_glob};
    if (e->use_map) {
        obs->keys[n] = "memory_map";
        obs->arr[n++] = (hw_array){HW_DT_UINT8, 2, {e->map, e->map}, e->obs_map};
    }
    obs->keys[n] = "memory_profile";
    obs->arr[n++] = (hw_array){HW_DT_UINT8, 1, {e->profile_len}, e->obs_prof};
    obs->keys[n] = "supply";
    obs->arr[n++] = (hw_array){HW_DT_FLOAT32, 1, {e->supply_window}, e->obs_sup};
    obs->n = n;
}

/* Final metrics of a finished game (metrics_keys of them) into o. */
static size_t metrics_keys(const mm_game *g, bool illegal) { return 9 + (g->done && !g->lost && !illegal ? 3 : 1); }
static void add_metrics(const mm_env *e, const mm_game *g, bool illegal, hw_info_out *o) {
    const mm_problem *p = e->p;
    bool ok = g->done && !g->lost && !illegal;
    hw_info_bool(o, "feasible", ok);
    hw_info_bool(o, "lost", !ok);
    hw_info_real(o, "return", illegal ? 0 : mm_game_return(g));
    hw_info_real(o, "latency_all_hbm", p->lat_hbm);
    hw_info_real(o, "latency_heuristic", e->heur_latency);
    hw_info_int(o, "copies", g->ncopy);
    hw_info_int(o, "nocopies", g->nnocopy);
    hw_info_int(o, "drops", g->ndrop);
    hw_info_int(o, "steps", g->t);
    if (ok) {
        double L = mm_game_latency(g);
        hw_info_real(o, "program_latency", L);
        hw_info_real(o, "speedup_over_hbm", p->lat_hbm / L);
        hw_info_real(o, "speedup_over_heuristic", e->heur_latency / L);
    } else {
        hw_info_str(o, "reason", illegal ? "illegal action: the game is lost" : "no legal action (alias group cannot be completed): the game is lost");
    }
}

/* The info of the last reset/step (info_keys of them): the illegal action of a losing step, the
 * action mask and position, and the final metrics once the game is over. */
static size_t info_keys(const mm_env *e) {
    bool over = e->g->done || e->illegal_end;
    return (e->last_illegal >= 0) + 4 + (over ? metrics_keys(e->g, e->illegal_end) : 0);
}
static void put_info(const mm_env *e, hw_info_out *o) {
    if (e->last_illegal >= 0) hw_info_str(o, "illegal_action", mm_action_names[e->last_illegal]);
    uint8_t mask[MM_NACT];
    for (int a = 0; a < MM_NACT; a++) mask[a] = (uint8_t)(!e->illegal_end && mm_game_legal(e->g, a));
    hw_info_list_u8(o, "action_mask", mask, MM_NACT);
    hw_info_bool(o, "backup_safe", mm_game_backup_safe(e->g));
    hw_info_int(o, "buffer", e->g->t);
    hw_info_int(o, "num_buffers", e->p->nbuf);
    if (e->g->done || e->illegal_end) add_metrics(e, e->g, e->illegal_end, o);
}

static void add_info(const mm_env *e, json_t *info) {
    hw_info_out o = hw_info_json(info);
    if (info) put_info(e, &o);
}

static void mm_env_info_pack(const void *pv, struct msgpack_packer *pk) {
    const mm_env *e = pv;
    hw_info_out o = hw_info_packer(pk, info_keys(e));
    put_info(e, &o);
}

static int mm_env_reset(void *pv, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)seed;
    (void)options;
    (void)err;
    mm_env *e = pv;
    mm_game_reset(e->g);
    e->sync_ok = false;
    e->map_rows_ok = false;
    e->started = true;
    e->illegal_end = false;
    e->last_illegal = -1;
    fill_obs(e, obs);
    add_info(e, info);
    return 0;
}

static int mm_env_step(void *pv, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    mm_env *e = pv;
    if (!e->started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    if (e->g->done || e->illegal_end) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    int a = (int)act->i[0];
    out->truncated = false;
    e->last_illegal = -1;
    if (!mm_game_legal(e->g, a)) {
        /* the paper: choosing an invalid action loses the game (return brought to 0) */
        e->illegal_end = true;
        e->last_illegal = a;
        out->reward = -mm_game_return(e->g);
        out->terminated = true;
    } else {
        out->reward = mm_game_step(e->g, a);
        out->terminated = e->g->done;
    }
    fill_obs(e, &out->obs);
    add_info(e, info);
    return 0;
}

static void *mm_env_snapshot(const void *pv, hw_err *err) {
    (void)err;
    const mm_env *e = pv;
    mm_snap *s = malloc(sizeof *s + (size_t)e->g->t + 1);
    if (!s) abort();
    s->n = e->g->t;
    s->started = e->started;
    s->illegal_end = e->illegal_end;
    memcpy(s->acts, e->g->act, (size_t)e->g->t);
    return s;
}

static int mm_env_restore(void *pv, const void *sv, hw_err *err) {
    mm_env *e = pv;
    const mm_snap *s = sv;
    if (s->n > e->p->nbuf) return hw_fail(err, HW_E_BAD_STATE, "snapshot does not belong to this problem");
    e->sync_ok = false;
    e->map_rows_ok = false;
    if (mm_game_goto(e->g, s->acts, s->n)) return hw_fail(err, HW_E_BAD_STATE, "snapshot does not replay on this problem");
    e->started = s->started;
    e->illegal_end = s->illegal_end;
    e->last_illegal = -1;
    e->sync_ok = false;
    return 0;
}

static void mm_env_snap_free(void *s) { free(s); }

/* Parses an action list (array of 0/1/2 or "Copy"/"NoCopy"/"Drop", or a string of digits). */
static int parse_actions(const json_t *v, uint8_t **out, int32_t *n, hw_err *err) {
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = strlen(s);
        *out = malloc(len + 1);
        if (!*out) abort();
        for (size_t i = 0; i < len; i++) {
            if (s[i] < '0' || s[i] > '2') {
                free(*out);
                return hw_fail(err, HW_E_BAD_ACTION, "point.actions[%zu]: character %zu is not 0 (Copy), 1 (NoCopy) or 2 (Drop)", i, i);
            }
            (*out)[i] = (uint8_t)(s[i] - '0');
        }
        *n = (int32_t)len;
        return 0;
    }
    if (!json_is_array(v)) return hw_fail(err, HW_E_BAD_ACTION, "point: expected an array of actions or {\"policy\": ...}");
    size_t len = json_array_size(v);
    *out = malloc(len + 1);
    if (!*out) abort();
    for (size_t i = 0; i < len; i++) {
        json_t *x = json_array_get(v, i);
        int a = -1;
        if (json_is_integer(x)) a = (int)json_integer_value(x);
        else if (json_is_string(x))
            for (int k = 0; k < MM_NACT; k++)
                if (strcmp(json_string_value(x), mm_action_names[k]) == 0) a = k;
        if (a < 0 || a >= MM_NACT) {
            free(*out);
            return hw_fail(err, HW_E_BAD_ACTION, "point[%zu]: expected 0/1/2 or \"Copy\"/\"NoCopy\"/\"Drop\"", i);
        }
        (*out)[i] = (uint8_t)a;
    }
    *n = (int32_t)len;
    return 0;
}

int mm_env_play_point(const mm_problem *p, mm_game *g, const json_t *point, bool *illegal, hw_err *err) {
    *illegal = false;
    const json_t *acts = point;
    if (json_is_object(point)) {
        static const char *const keys[] = {"policy", "seed", "actions", NULL};
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)point, k, v) {
            (void)v;
            int ok = 0;
            for (int i = 0; keys[i]; i++) ok |= strcmp(k, keys[i]) == 0;
            if (!ok) return hw_fail(err, HW_E_BAD_ACTION, "point.%s: unknown field (known: policy, seed, actions)", k);
        }
        json_t *pol = json_object_get(point, "policy");
        if (pol) {
            const char *ps = json_is_string(pol) ? json_string_value(pol) : "";
            int which = strcmp(ps, "heuristic") == 0 ? 0 : strcmp(ps, "random") == 0 ? 1 : -1;
            if (which < 0) return hw_fail(err, HW_E_BAD_ACTION, "point.policy: expected \"heuristic\" or \"random\"");
            json_t *sd = json_object_get(point, "seed");
            if (sd && (!json_is_integer(sd) || json_integer_value(sd) < 0))
                return hw_fail(err, HW_E_BAD_ACTION, "point.seed: expected a non-negative integer");
            mm_play(g, which, sd ? (uint64_t)json_integer_value(sd) : 0);
            return 0;
        }
        acts = json_object_get(point, "actions");
        if (!acts) return hw_fail(err, HW_E_BAD_ACTION, "point: expected \"policy\" or \"actions\"");
    }
    uint8_t *a = NULL;
    int32_t n = 0;
    if (parse_actions(acts, &a, &n, err)) return -1;
    mm_game_reset(g);
    int32_t i = 0;
    for (; i < n && !g->done; i++) {
        if (!mm_game_legal(g, a[i])) {
            *illegal = true;
            break;
        }
        mm_game_step(g, a[i]);
    }
    free(a);
    if (!g->done && !*illegal)
        return hw_fail(err, HW_E_BAD_ACTION, "point: %d actions, but the program has %d buffers", n, p->nbuf);
    return 0;
}

static int mm_env_evaluate(void *pv, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    mm_env *e = pv;
    bool illegal;
    if (mm_env_play_point(e->p, e->scratch, point, &illegal, err)) return -1;
    *reward = illegal ? 0 : mm_game_return(e->scratch);
    if (metrics) {
        hw_info_out o = hw_info_json(metrics);
        add_metrics(e, e->scratch, illegal, &o);
        char *s = malloc((size_t)e->scratch->t + 1);
        if (!s) abort();
        for (int32_t i = 0; i < e->scratch->t; i++) s[i] = (char)('0' + e->scratch->act[i]);
        s[e->scratch->t] = 0;
        json_object_set_new(metrics, "actions", json_string(s));
        free(s);
    }
    return 0;
}

/* Accessors for tools (renderer CLI, tests, benches). */
const mm_game *mm_env_game(const void *pv) { return ((const mm_env *)pv)->g; }

static void *mm_env_create(const json_t *cfg, hw_err *err) { return mm_env_create_ctx(cfg, &hw_env_ctx_local, err); }

/* the program, the two games (play and scratch), the observation buffers and the memory-map
 * cache: measured within 2x by tests/c/security test_memest.c (issue 28 finding 1) */
static size_t mm_env_mem_bytes(const void *p) {
    const mm_env *e = p;
    int rows = 1 + e->k + e->l;
    return sizeof *e + mm_problem_bytes(e->p) + mm_game_bytes(e->g) + mm_game_bytes(e->scratch) +
           (size_t)rows * NF * sizeof(float) + (size_t)e->supply_window * sizeof(float) + (size_t)e->map * (size_t)e->map + 64 +
           (size_t)e->profile_len + (size_t)e->g->words * sizeof(uint64_t) +
           (size_t)e->p->T * ((size_t)e->mwords * sizeof(uint64_t) + sizeof(uint32_t)) +
           (size_t)e->map * ((size_t)e->mwords * sizeof(uint64_t) + 2 * sizeof(int32_t));
}

const hw_env_family hw_family_mmap = {
    .id = "mmap-v0",
    .summary = "MMapGame (MMap-MuZero): map a program's buffers to fast CMEM with Copy/NoCopy/Drop (Appendix A rules)",
    HW_ENV_OPS(mm_env),
    .info_pack = mm_env_info_pack,
};
