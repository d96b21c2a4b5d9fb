/* maestro_env.c - maestro-v0: map one DNN layer onto a MAESTRO-style accelerator.
 * Action spaces: marl10 (the MARL paper's 10 agents) and gamma17 (GAMMA/ArchGym genome); every
 * action decodes deterministically into MAESTRO directives, scored by maestro_eval().
 * Observation: Box [latency, power, energy, area]. Reward: 1/X for the objective, 0 when
 * infeasible (info.reason says why). See docs/maestro.md. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/hw_files.h"
#include "common/info_out.h"
#include "common/zoo.h"
#include "env.h"
#include "maestro.h"

enum { AS_MARL10 = 0, AS_GAMMA17 = 1 };
enum { OBJ_LATENCY = 0, OBJ_ENERGY, OBJ_EDP, OBJ_AREA };
static const char *const as_names[] = {"marl10", "gamma17", NULL};
static const char *const obj_names[] = {"latency", "energy", "edp", "area", NULL};
static const unsigned char obj_lens[] = {7, 6, 3, 4}; /* strlen(obj_names[i]): a step's info writes one */

/* loop dims the agents see, in this order: K C Y X R S */
enum { LK = 0, LC, LY, LX, LR, LS, NL };
static const int loop_md[NL] = {MD_K, MD_C, MD_Y, MD_X, MD_R, MD_S};
static const char loop_ch[NL] = {'K', 'C', 'Y', 'X', 'R', 'S'};
/* GAMMA's tile order: S R K C X Y */
static const int gamma_tile_order[NL] = {LS, LR, LK, LC, LX, LY};

#define MAXCH 64
#define NPERM 720

typedef struct {
    int n;
    int v[MAXCH];
} choices;

/* A directive an action can decode to, with its text (maestro_mapping_to_text's of it alone): made
 * once at create, so a step copies its directives and joins their texts with " " instead of
 * deriving and formatting them again. */
typedef struct {
    maestro_directive d;
    unsigned char n; /* text length */
    char text[51];
} dfrag;

typedef struct menv {
    int as, objective;
    int64_t episode_length;
    int64_t max_pes;
    bool enforce_buffers;
    maestro_layer layer;
    bool layer_ok; /* maestro_layer_ok(&layer): the steps' evaluations skip its checks */
    maestro_hw hw;
    int extent[NL]; /* loop extent per dim (Y/X in output rows/cols) */
    choices tile[NL], clusters, pes;
    dfrag *frag[NL]; /* [2 * tile index + spatial]: the directive of loop dim ld at that tile */
    dfrag *clfrag;   /* [cluster index]: Cluster(n, P) */
    size_t nfrag;    /* of the block frag[LK] starts */
    hw_space *aspace, *ospace;
    int nparams;
    /* episode state */
    int64_t t;
    bool started;
    double obs[4];
    /* what the last reset/step's info reports (info_pack packs it after the call) */
    bool last_step;
    maestro_mapping last_m;
    const dfrag *last_fl[MAESTRO_MAX_DIRS]; /* last_m's directives and texts */
    dfrag last_cl;                          /* gamma17's cluster, made per step */
    int last_pes;
    maestro_result last_r;
} menv;

typedef struct {
    int64_t t;
    bool started;
    double obs[4];
} msnap;

/* ---------- helpers ---------- */
static void divisors(int n, choices *c) {
    c->n = 0;
    int small[MAXCH], large[MAXCH], ns = 0, nl = 0;
    for (int d = 1; (long)d * d <= n; d++)
        if (n % d == 0) {
            if (ns < MAXCH) small[ns++] = d;
            if (d != n / d && nl < MAXCH) large[nl++] = n / d;
        }
    for (int i = 0; i < ns && c->n < MAXCH; i++) c->v[c->n++] = small[i];
    for (int i = nl - 1; i >= 0 && c->n < MAXCH; i--) c->v[c->n++] = large[i];
    if (c->n == MAXCH && c->v[c->n - 1] != n) c->v[c->n - 1] = n; /* keep the full extent reachable */
}

static void pow2_upto(int64_t n, choices *c) {
    c->n = 0;
    for (int64_t v = 1; v <= n && c->n < MAXCH; v *= 2) c->v[c->n++] = (int)v;
    if (c->v[c->n - 1] != n && c->n < MAXCH) c->v[c->n++] = (int)n;
}

/* permutation index -> order of loop dims (lexicographic over K C Y X R S) */
static void perm_decode(int idx, int out[NL]) {
    int pool[NL] = {0, 1, 2, 3, 4, 5}, np = NL;
    int fact[NL] = {120, 24, 6, 2, 1, 1};
    for (int i = 0; i < NL; i++) {
        int k = idx / fact[i];
        idx %= fact[i];
        out[i] = pool[k];
        for (int j = k; j < np - 1; j++) pool[j] = pool[j + 1];
        np--;
    }
}

/* every step decodes one or two permutations: all 720, 3 bits a position, decoded once a process */
static uint32_t perm_table[NPERM];
static pthread_once_t perm_once = PTHREAD_ONCE_INIT;

static void perm_table_fill(void) {
    for (int p = 0; p < NPERM; p++) {
        int o[NL];
        perm_decode(p, o);
        uint32_t code = 0;
        for (int i = 0; i < NL; i++) code |= (uint32_t)o[i] << (3 * i);
        perm_table[p] = code;
    }
}

static void perm_from_index(int idx, int out[NL]) {
    pthread_once(&perm_once, perm_table_fill);
    uint32_t code = perm_table[idx];
    for (int i = 0; i < NL; i++) out[i] = (int)((code >> (3 * i)) & 7u);
}

static const struct {
    const char *name;
    int pes, l1, l2, bw, obw;
} presets[] = {
    {"hw_256pe_bw32", 256, 512, 108000, 32, 32},
    {"hw_1024pe_bw64", 1024, 512, 432000, 64, 64},
    {"hw_168pe_bw16", 168, 512, 108000, 16, 16},
    {"hw_accelerator_1", 256, 100, 3000, 1000, 50},
};

static int hw_from_config(const json_t *cfg, const hw_env_ctx *ctx, maestro_hw *h, hw_err *err) {
    maestro_hw_default(h);
    json_t *v = cfg ? json_object_get(cfg, "hardware") : NULL;
    if (!v || json_is_string(v)) {
        const char *s = v ? json_string_value(v) : "hw_256pe_bw32";
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
            if (strcmp(s, presets[i].name) == 0) {
                h->num_pes = presets[i].pes, h->l1_size = presets[i].l1, h->l2_size = presets[i].l2;
                h->noc_bw = presets[i].bw, h->offchip_bw = presets[i].obw;
                return 0;
            }
        if (strchr(s, '/') || strstr(s, ".m")) {
            char *text = hw_files_read(ctx->files, "config.hardware", s, NULL, err);
            if (!text) return -1;
            int rc = maestro_parse_hw(text, h, err);
            free(text);
            if (rc) {
                hw_err_prefix(err, "config.hardware");
                hw_files_redact(ctx->files, true, "config.hardware", "MAESTRO HW", err);
            }
            return rc;
        }
        return hw_fail(err, HW_E_BAD_CONFIG,
                       "config.hardware: unknown preset '%s' (hw_256pe_bw32, hw_1024pe_bw64, hw_168pe_bw16, "
                       "hw_accelerator_1, a MAESTRO HW file path, or an object)", s);
    }
    if (!json_is_object(v)) return hw_fail(err, HW_E_BAD_CONFIG, "config.hardware: expected a preset name, a path or an object");
    static const char *const keys[] = {"num_pes", "l1_size", "l2_size", "noc_bw", "offchip_bw", "noc_latency", "simd_lanes", NULL};
    if (hw_cfg_check_keys(v, keys, err)) {
        hw_err_prefix(err, "config.hardware");
        return -1;
    }
    int64_t pes, l1, l2, bw, obw, lat, simd;
    if (hw_cfg_int(v, "num_pes", 256, 1, 1 << 20, &pes, err) || hw_cfg_int(v, "l1_size", 512, 1, INT64_C(1) << 40, &l1, err) ||
        hw_cfg_int(v, "l2_size", 108000, 1, INT64_C(1) << 40, &l2, err) || hw_cfg_int(v, "noc_bw", 32, 1, 1 << 24, &bw, err) ||
        hw_cfg_int(v, "offchip_bw", 32, 1, 1 << 24, &obw, err) || hw_cfg_int(v, "noc_latency", 1, 0, 1 << 20, &lat, err) ||
        hw_cfg_int(v, "simd_lanes", 1, 1, 1024, &simd, err)) {
        hw_err_prefix(err, "config.hardware");
        return -1;
    }
    h->num_pes = (int)pes, h->l1_size = (long)l1, h->l2_size = (long)l2, h->noc_bw = (int)bw;
    h->offchip_bw = (int)obw, h->noc_latency = (int)lat, h->simd = (int)simd;
    return 0;
}

static int layer_from_zoo(const hw_layer *z, bool pad_input, maestro_layer *l, hw_err *err) {
    maestro_ltype t;
    switch (z->op) {
    case HW_OP_CONV:
    case HW_OP_FC:
    case HW_OP_MATMUL: t = MAESTRO_CONV; break;
    case HW_OP_DWCONV: t = MAESTRO_DSCONV; break;
    default:
        return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: layer %s is a %s layer; maestro-v0 maps CONV, DWCONV, FC and MATMUL layers",
                       z->name, hw_op_name(z->op));
    }
    maestro_layer_init(l, t, z->name);
    l->dim[MD_K] = t == MAESTRO_DSCONV ? 1 : z->K;
    l->dim[MD_C] = z->C;
    l->dim[MD_R] = z->R > 0 ? z->R : 1;
    l->dim[MD_S] = z->S > 0 ? z->S : 1;
    l->dim[MD_Y] = (z->Y > 0 ? z->Y : 1) + (pad_input ? 2 * z->pad : 0);
    l->dim[MD_X] = (z->X > 0 ? z->X : 1) + (pad_input ? 2 * z->pad_x : 0);
    l->stride_x = l->stride_y = z->stride > 0 ? z->stride : 1;
    if (z->N > 1) l->dim[MD_N] = z->N, l->has_n = true;
    if (l->dim[MD_Y] < l->dim[MD_R]) l->dim[MD_Y] = l->dim[MD_R];
    if (l->dim[MD_X] < l->dim[MD_S]) l->dim[MD_X] = l->dim[MD_S];
    maestro_layer_finish(l);
    return 0;
}

static int layer_from_dims(const json_t *o, maestro_layer *l, hw_err *err) {
    static const char *const keys[] = {"type", "name", "N", "K", "C", "R", "S", "Y", "X", "stride", NULL};
    if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_CONFIG, "config.layer_dims: expected an object");
    if (hw_cfg_check_keys(o, keys, err)) goto bad;
    static const char *const types[] = {"CONV", "DSCONV", "FC", NULL};
    int ty;
    const char *name;
    int64_t N, K, C, R, S, Y, X, st;
    if (hw_cfg_enum(o, "type", types, 0, &ty, err) || hw_cfg_str(o, "name", "custom", &name, err) ||
        hw_cfg_int(o, "N", 1, 1, 1 << 20, &N, err) || hw_cfg_int(o, "K", 1, 1, 1 << 24, &K, err) ||
        hw_cfg_int(o, "C", 1, 1, 1 << 24, &C, err) || hw_cfg_int(o, "R", 1, 1, 1 << 12, &R, err) ||
        hw_cfg_int(o, "S", 1, 1, 1 << 12, &S, err) || hw_cfg_int(o, "Y", R, 1, 1 << 20, &Y, err) ||
        hw_cfg_int(o, "X", S, 1, 1 << 20, &X, err) || hw_cfg_int(o, "stride", 1, 1, 64, &st, err))
        goto bad;
    if (Y < R || X < S) return hw_fail(err, HW_E_BAD_CONFIG, "config.layer_dims: Y/X (input size) must be >= R/S");
    maestro_layer_init(l, ty == 1 ? MAESTRO_DSCONV : MAESTRO_CONV, name);
    l->dim[MD_K] = ty == 1 ? 1 : (int)K, l->dim[MD_C] = (int)C, l->dim[MD_R] = (int)R, l->dim[MD_S] = (int)S;
    l->dim[MD_Y] = (int)Y, l->dim[MD_X] = (int)X;
    l->stride_x = l->stride_y = (int)st;
    if (N > 1) l->dim[MD_N] = (int)N, l->has_n = true;
    maestro_layer_finish(l);
    return 0;
bad:
    hw_err_prefix(err, "config.layer_dims");
    return -1;
}

static int layer_from_config(const json_t *cfg, const hw_env_ctx *ctx, maestro_layer *l, hw_err *err) {
    json_t *dims = cfg ? json_object_get(cfg, "layer_dims") : NULL;
    if (dims) return layer_from_dims(dims, l, err);
    const char *model;
    bool pad, from_file = false;
    char *mtext = NULL;
    size_t mlen = 0;
    if (hw_cfg_str(cfg, "model", "mobilenet_v2", &model, err) || hw_cfg_bool(cfg, "pad_input", false, &pad, err) ||
        hw_files_cfg_text(ctx->files, cfg, "model_file", &mtext, &mlen, &from_file, err))
        return -1;
    const hw_model *m = mtext ? NULL : hw_zoo_find(model);
    hw_model *owned = NULL;
    const char *mkey = mtext ? "config.model_file" : "config.model";
    if (!mtext && !m && hw_files_is_path(model)) {
        mtext = hw_files_read(ctx->files, "config.model", model, &mlen, err);
        if (!mtext) return -1;
        from_file = true;
    }
    if (mtext) {
        json_t *mf = cfg ? json_object_get(cfg, "model_file") : NULL;
        const char *name = mf && json_is_string(mf) ? json_string_value(mf) : mf ? "model" : model;
        owned = hw_zoo_parse(mtext, mlen, name, err);
        free(mtext);
        if (!owned) {
            hw_err_prefix(err, mkey);
            hw_files_redact(ctx->files, from_file, mkey, "model (zoo CSV)", err);
            return -1;
        }
        m = owned;
    }
    if (!m) return hw_fail(err, HW_E_BAD_CONFIG, "config.model: unknown model '%s'", model);
    json_t *lv = cfg ? json_object_get(cfg, "layer") : NULL;
    char buf[64];
    const char *ls = "2";
    if (lv && json_is_integer(lv)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(lv));
        ls = buf;
    } else if (lv && json_is_string(lv)) {
        ls = json_string_value(lv);
    } else if (lv) {
        hw_zoo_free(owned);
        return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: expected a layer name or index");
    }
    int idx = hw_zoo_layer_index(m, ls, err);
    int rc = idx < 0 ? -1 : layer_from_zoo(&m->layers[idx], pad, l, err);
    hw_zoo_free(owned);
    return rc;
}

/* ---------- decoding an action into directives ---------- */
static maestro_directive dir_of(const maestro_layer *l, int ld, int tile, bool spatial) {
    int size = tile, ofs = tile;
    if (ld == LY || ld == LX) { /* tile in output rows/cols -> input-centric window */
        int R = l->dim[ld == LY ? MD_R : MD_S], st = ld == LY ? l->stride_y : l->stride_x;
        size = (tile - 1) * st + R;
        ofs = tile * st;
    } else if ((ld == LR || ld == LS) && !spatial) { /* MAESTRO: a TemporalMap must cover R/S */
        size = ofs = l->dim[loop_md[ld]];
    }
    return (maestro_directive){spatial ? MDIR_SPATIAL : MDIR_TEMPORAL, (unsigned char)loop_md[ld], 0, size, ofs};
}

static void frag_make(dfrag *f, maestro_directive d) {
    maestro_mapping one;
    one.n = 1, one.d[0] = d;
    f->d = d;
    memset(f->text, 0, sizeof f->text); /* join_frags copies 48 bytes of it (a text is at most 40) */
    maestro_mapping_to_text(&one, f->text, sizeof f->text);
    f->n = (unsigned char)strlen(f->text);
}

/* every directive an action can make, a block of e->nfrag (the tile lists ascend: index 0 is 1) */
static void build_frags(menv *e) {
    size_t n = (size_t)e->clusters.n;
    for (int ld = 0; ld < NL; ld++) n += 2 * (size_t)e->tile[ld].n;
    dfrag *b = malloc(n * sizeof *b);
    if (!b) abort();
    e->nfrag = n;
    for (int ld = 0; ld < NL; ld++) {
        e->frag[ld] = b;
        for (int i = 0; i < e->tile[ld].n; i++)
            for (int sp = 0; sp < 2; sp++) frag_make(b++, dir_of(&e->layer, ld, e->tile[ld].v[i], sp));
    }
    e->clfrag = b;
    for (int i = 0; i < e->clusters.n; i++) frag_make(b++, (maestro_directive){MDIR_CLUSTER, 0, 0, e->clusters.v[i], e->clusters.v[i]});
}

/* the mapping text of directives fl[0..n): their texts joined with " " (buf: MAESTRO_MAX_DIRS * 52;
 * each text is copied as a whole 48 bytes, a constant-size copy, then the next one overwrites the
 * tail); returns its length */
static size_t join_frags(const dfrag *const *fl, int n, char *buf) {
    char *p = buf;
    for (int i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        memcpy(p, fl[i]->text, 48);
        p += fl[i]->n;
    }
    *p = 0;
    return (size_t)(p - buf);
}

static bool skip_dim(const menv *e, int ld) { return ld == LK && e->layer.type == MAESTRO_DSCONV; }

static void add_frag(maestro_mapping *m, const dfrag **fl, const dfrag *f) {
    fl[m->n] = f;
    m->d[m->n++] = f->d;
}

/* the level's directives: loop dims in order, each at its tile (index into e->tile), par spatial */
static void emit_level(const menv *e, maestro_mapping *m, const dfrag **fl, const int order[NL], int par, const int tidx[NL]) {
    if (skip_dim(e, par)) par = LC;
    for (int i = 0; i < NL; i++) {
        int ld = order[i];
        if (skip_dim(e, ld)) continue;
        add_frag(m, fl, &e->frag[ld][2 * tidx[ld] + (ld == par)]);
    }
}

/* action ints -> mapping (fl[i]: directive i and its text; *clt holds a gamma17 cluster's) and PE
 * count */
static void decode(const menv *e, const int64_t *a, maestro_mapping *m, const dfrag **fl, dfrag *clt, int *num_pes) {
    m->n = 0;
    int order[NL], tidx[NL];
    if (e->as == AS_MARL10) {
        perm_from_index((int)a[0], order);
        int par = (int)a[1];
        for (int i = 0; i < NL; i++) tidx[i] = (int)a[2 + i];
        int cl = e->clusters.v[a[8]];
        *num_pes = e->pes.v[a[9]];
        emit_level(e, m, fl, order, par, tidx);
        if (cl > 1) {
            add_frag(m, fl, &e->clfrag[a[8]]);
            int p2 = -1;
            for (int i = 0; i < NL && p2 < 0; i++) {
                int ld = order[i];
                if (ld != (skip_dim(e, par) ? LC : par) && !skip_dim(e, ld) && ld != LR && ld != LS) p2 = ld;
            }
            add_frag(m, fl, &e->frag[p2][1]); /* tile 1 (index 0), spatial */
        }
        return;
    }
    /* gamma17: [l2 order, l2 par, l2 tiles S R K C X Y, l1 tiles S R K C X Y, l1 order, l1 par, num_pe] */
    perm_from_index((int)a[0], order);
    int par = (int)a[1];
    int t1idx[NL];
    for (int i = 0; i < NL; i++) { /* the l1 tile at most the l2 one: the lists ascend, so the lower index */
        int ld = gamma_tile_order[i];
        tidx[ld] = (int)a[2 + i];
        t1idx[ld] = a[8 + i] < a[2 + i] ? (int)a[8 + i] : (int)a[2 + i];
    }
    int order1[NL];
    perm_from_index((int)a[14], order1);
    int par1 = (int)a[15];
    *num_pes = e->pes.v[a[16]];
    emit_level(e, m, fl, order, par, tidx);
    int p1 = skip_dim(e, par1) ? LC : par1;
    int t1 = e->tile[p1].v[t1idx[p1]];
    int cl = t1 > 0 ? e->tile[p1].v[tidx[p1]] / t1 : 1;
    if (cl < 1) cl = 1;
    if (cl > *num_pes) cl = *num_pes;
    frag_make(clt, (maestro_directive){MDIR_CLUSTER, 0, 0, cl, cl});
    add_frag(m, fl, clt);
    emit_level(e, m, fl, order1, par1, t1idx);
}

/* ---------- scoring ---------- */
static double reward_of(const menv *e, const maestro_result *r) {
    if (!r->feasible) return 0;
    double x;
    switch (e->objective) {
    case OBJ_ENERGY: x = r->energy; break;
    case OBJ_EDP: x = r->edp; break;
    case OBJ_AREA: x = r->area; break;
    default: x = (double)r->runtime;
    }
    return x > 0 ? 1.0 / x : 0;
}

static void score(const menv *e, const maestro_mapping *m, int num_pes, maestro_result *r) {
    maestro_hw h = e->hw;
    h.num_pes = num_pes;
    (e->layer_ok ? maestro_eval_brief : maestro_eval)(&e->layer, &h, m, r);
    if (r->valid && !e->enforce_buffers && (r->warn_l1 || r->warn_l2)) {
        r->feasible = true;
        r->reason[0] = 0;
    }
    if (r->valid && num_pes > e->max_pes) {
        r->feasible = false;
        snprintf(r->reason, sizeof r->reason, "%d PEs exceed the budget of %lld", num_pes, (long long)e->max_pes);
    }
}

/* The metrics of a scored mapping: a step's info and evaluate()'s metrics, into a JSON object or,
 * for info_pack, gathered on the stack and written to the reply at once (common/info_out.h; the
 * _k writers take constant-length keys). One writer for both, so they cannot drift apart;
 * tests/c/maestro/test_env.c compares the two. metric_keys() counts what put_metrics writes. */
static size_t metric_keys(const maestro_result *r) { return 3 + !r->feasible + (r->valid ? 15 : 0); }

/* fl: m's directives with their texts (decoded from an action), else NULL */
static void put_metrics(const menv *e, const maestro_mapping *m, const dfrag *const *fl, int num_pes, const maestro_result *r,
                        hw_info_out *o) {
    if (!hw_info_on(o)) return;
    char text[4096];
    size_t tn; /* the text's length */
    if (fl) tn = join_frags(fl, m->n, text);
    else maestro_mapping_to_text(m, text, sizeof text), tn = strlen(text);
    hw_info_strn_k(o, HW_KEY("mapping"), text, tn); /* ASCII by construction */
    hw_info_int_k(o, HW_KEY("num_pes"), num_pes);
    hw_info_bool_k(o, HW_KEY("feasible"), r->feasible);
    if (!r->feasible) hw_info_str_k(o, HW_KEY("reason"), r->reason[0] ? r->reason : "infeasible");
    if (!r->valid) return;
    hw_info_int_k(o, HW_KEY("runtime"), r->runtime);
    hw_info_int_k(o, HW_KEY("num_macs"), r->num_macs);
    hw_info_real_k(o, HW_KEY("throughput"), r->throughput);
    hw_info_real_k(o, HW_KEY("energy"), r->energy);
    hw_info_real_k(o, HW_KEY("energy_nj"), r->energy_nj);
    hw_info_out ec = hw_info_map_k(o, HW_KEY("energy_components"), 5);
    hw_info_real_k(&ec, HW_KEY("mac"), r->e_mac);
    hw_info_real_k(&ec, HW_KEY("l1"), r->e_l1);
    hw_info_real_k(&ec, HW_KEY("l2"), r->e_l2);
    hw_info_real_k(&ec, HW_KEY("noc"), r->e_noc);
    hw_info_real_k(&ec, HW_KEY("offchip"), r->e_offchip);
    hw_info_real_k(o, HW_KEY("power"), r->power);
    hw_info_real_k(o, HW_KEY("area"), r->area);
    hw_info_real_k(o, HW_KEY("edp"), r->edp);
    hw_info_int_k(o, HW_KEY("l1_size"), r->l1_req_total);
    hw_info_int_k(o, HW_KEY("l2_size"), r->l2_req_total);
    hw_info_int_k(o, HW_KEY("peak_noc_bw"), r->peak_bw);
    hw_info_int_k(o, HW_KEY("offchip_bw_req"), r->offchip_bw_req);
    hw_info_real_k(o, HW_KEY("avg_utilized_pes"), r->avg_util_pes);
    hw_info_strn_k(o, HW_KEY("objective"), obj_names[e->objective], obj_lens[e->objective]);
}

/* The info of the last reset (last_step false) or step, from what that call kept in the env. */
static void put_info(const menv *e, hw_info_out *o) {
    if (!e->last_step) {
        hw_info_str_k(o, HW_KEY("layer"), e->layer.name);
        hw_info_strn_k(o, HW_KEY("objective"), obj_names[e->objective], obj_lens[e->objective]);
        return;
    }
    put_metrics(e, &e->last_m, e->last_fl, e->last_pes, &e->last_r, o);
    hw_info_int_k(o, HW_KEY("t"), e->t);
}

static void m_info_pack(const void *p, struct msgpack_packer *pk) {
    const menv *e = p;
    hw_info_gather g; /* the buffer is written before it is read: not cleared */
    hw_info_out o = hw_info_gatherer(&g, pk, e->last_step ? metric_keys(&e->last_r) + 1 : 2);
    put_info(e, &o);
    hw_info_gather_flush(&g);
}

static void set_obs(menv *e, const maestro_result *r) {
    if (r->valid) {
        e->obs[0] = (double)r->runtime, e->obs[1] = r->power, e->obs[2] = r->energy, e->obs[3] = r->area;
    } else {
        memset(e->obs, 0, sizeof e->obs);
    }
}

static void fill_obs(menv *e, hw_obs *obs) {
    if (!obs) return;
    obs->n = 1; /* only the first of its fields is read (not cleared: a kilobyte a step) */
    obs->keys[0] = NULL;
    obs->arr[0] = (hw_array){HW_DT_FLOAT64, 1, {4}, e->obs};
}

/* ---------- vtable ---------- */
static void m_destroy(void *p) {
    menv *e = p;
    if (!e) return;
    hw_space_free(e->aspace);
    hw_space_free(e->ospace);
    free(e->frag[LK]);
    free(e);
}

static void set_labels_int(hw_space *s, int64_t i, const choices *c) {
    char store[MAXCH][16];
    const char *lab[MAXCH];
    for (int k = 0; k < c->n; k++) {
        snprintf(store[k], sizeof store[k], "%d", c->v[k]);
        lab[k] = store[k];
    }
    hw_space_set_labels(s, i, c->n, lab);
}

static void build_spaces(menv *e) {
    char perm_store[NPERM][NL + 1]; /* labels are copied by hw_space_set_labels */
    const char *perm_lab[NPERM];
    for (int p = 0; p < NPERM; p++) {
        int o[NL];
        char s[NL + 1];
        perm_from_index(p, o);
        for (int i = 0; i < NL; i++) s[i] = loop_ch[o[i]];
        s[NL] = 0;
        memcpy(perm_store[p], s, sizeof s);
        perm_lab[p] = perm_store[p];
    }
    static const char *const dim_lab[NL] = {"K", "C", "Y", "X", "R", "S"};
    int64_t nv[17];
    if (e->as == AS_MARL10) {
        e->nparams = 10;
        nv[0] = NPERM, nv[1] = NL;
        for (int i = 0; i < NL; i++) nv[2 + i] = e->tile[i].n;
        nv[8] = e->clusters.n, nv[9] = e->pes.n;
        e->aspace = hw_space_multidiscrete(10, nv);
        static const char *const names[10] = {"loop_order", "parallel_dim", "tile_K", "tile_C", "tile_Y",
                                              "tile_X", "tile_R", "tile_S", "cluster_size", "num_pes"};
        for (int i = 0; i < 10; i++) hw_space_set_name(e->aspace, i, names[i]);
        hw_space_set_labels(e->aspace, 0, NPERM, perm_lab);
        hw_space_set_labels(e->aspace, 1, NL, dim_lab);
        for (int i = 0; i < NL; i++) set_labels_int(e->aspace, 2 + i, &e->tile[i]);
        set_labels_int(e->aspace, 8, &e->clusters);
        set_labels_int(e->aspace, 9, &e->pes);
    } else {
        e->nparams = 17;
        nv[0] = NPERM, nv[1] = NL;
        for (int i = 0; i < NL; i++) nv[2 + i] = nv[8 + i] = e->tile[gamma_tile_order[i]].n;
        nv[14] = NPERM, nv[15] = NL, nv[16] = e->pes.n;
        e->aspace = hw_space_multidiscrete(17, nv);
        static const char *const names[17] = {"l2_order", "l2_parallel_dim", "l2_tile_S", "l2_tile_R", "l2_tile_K",
                                              "l2_tile_C", "l2_tile_X", "l2_tile_Y", "l1_tile_S", "l1_tile_R",
                                              "l1_tile_K", "l1_tile_C", "l1_tile_X", "l1_tile_Y", "l1_order",
                                              "l1_parallel_dim", "num_pes"};
        for (int i = 0; i < 17; i++) hw_space_set_name(e->aspace, i, names[i]);
        hw_space_set_labels(e->aspace, 0, NPERM, perm_lab);
        hw_space_set_labels(e->aspace, 14, NPERM, perm_lab);
        hw_space_set_labels(e->aspace, 1, NL, dim_lab);
        hw_space_set_labels(e->aspace, 15, NL, dim_lab);
        for (int i = 0; i < NL; i++) {
            set_labels_int(e->aspace, 2 + i, &e->tile[gamma_tile_order[i]]);
            set_labels_int(e->aspace, 8 + i, &e->tile[gamma_tile_order[i]]);
        }
        set_labels_int(e->aspace, 16, &e->pes);
    }
    int64_t four = 4;
    e->ospace = hw_space_box_uniform(1, &four, 0, INFINITY, HW_DT_FLOAT64);
    static const char *const on[4] = {"latency", "power", "energy", "area"};
    for (int i = 0; i < 4; i++) hw_space_set_name(e->ospace, i, on[i]);
}

static void *m_create_cfg(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err);

static void *m_create_ctx(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    static const char *const keys[] = {"model", "model_file", "layer", "layer_dims", "pad_input", "hardware", "objective",
                                       "episode_length", "action_space", "max_pes", "l1_size", "l2_size",
                                       "enforce_buffers", "preset", NULL};
    if (hw_cfg_check_keys(cfg, keys, err)) return NULL;
    /* "preset": "archgym" reproduces ArchGym's MAESTRO harness (docs/maestro.md): 1024 PEs and
     * buffers so large that no mapping exceeds them; explicit keys still override it. */
    static const char *const presets_names[] = {"default", "archgym", NULL};
    int preset = 0;
    if (hw_cfg_enum(cfg, "preset", presets_names, 0, &preset, err)) return NULL;
    json_t *merged = NULL;
    if (preset == 1) {
        merged = cfg ? json_deep_copy(cfg) : json_object();
        if (!json_object_get(merged, "hardware"))
            json_object_set_new(merged, "hardware",
                                json_pack("{s:i,s:I,s:I,s:i,s:i}", "num_pes", 1024, "l1_size", (json_int_t)1 << 30, "l2_size",
                                          (json_int_t)1 << 30, "noc_bw", 64, "offchip_bw", 64));
        cfg = merged;
    }
    void *env = m_create_cfg(cfg, ctx, err);
    json_decref(merged);
    return env;
}

static void *m_create_cfg(const json_t *cfg, const hw_env_ctx *ctx, hw_err *err) {
    menv *e = calloc(1, sizeof *e);
    if (!e) abort();
    int64_t l1, l2;
    if (hw_cfg_enum(cfg, "action_space", as_names, AS_MARL10, &e->as, err) ||
        hw_cfg_enum(cfg, "objective", obj_names, OBJ_LATENCY, &e->objective, err) ||
        hw_cfg_int(cfg, "episode_length", 16, 1, 100000000, &e->episode_length, err) ||
        hw_cfg_bool(cfg, "enforce_buffers", true, &e->enforce_buffers, err) || hw_from_config(cfg, ctx, &e->hw, err) ||
        layer_from_config(cfg, ctx, &e->layer, err) ||
        hw_cfg_int(cfg, "max_pes", e->hw.num_pes, 1, 1 << 20, &e->max_pes, err) ||
        hw_cfg_int(cfg, "l1_size", e->hw.l1_size, 1, INT64_C(1) << 40, &l1, err) ||
        hw_cfg_int(cfg, "l2_size", e->hw.l2_size, 1, INT64_C(1) << 40, &l2, err)) {
        free(e);
        return NULL;
    }
    e->hw.l1_size = (long)l1, e->hw.l2_size = (long)l2;
    const maestro_layer *l = &e->layer;
    e->layer_ok = maestro_layer_ok(l);
    e->extent[LK] = l->dim[MD_K];
    e->extent[LC] = l->dim[MD_C];
    e->extent[LY] = (l->dim[MD_Y] - l->dim[MD_R]) / l->stride_y + 1;
    e->extent[LX] = (l->dim[MD_X] - l->dim[MD_S]) / l->stride_x + 1;
    e->extent[LR] = l->dim[MD_R];
    e->extent[LS] = l->dim[MD_S];
    for (int i = 0; i < NL; i++) divisors(e->extent[i], &e->tile[i]);
    pow2_upto(e->max_pes, &e->pes);
    pow2_upto(e->max_pes, &e->clusters);
    build_frags(e);
    build_spaces(e);
    return e;
}

static const hw_space *m_aspace(const void *p) { return ((const menv *)p)->aspace; }
static const hw_space *m_ospace(const void *p) { return ((const menv *)p)->ospace; }

static int m_reset(void *p, const uint64_t *seed, const json_t *options, hw_obs *obs, json_t *info, hw_err *err) {
    (void)seed, (void)options, (void)err;
    menv *e = p;
    e->t = 0;
    e->started = true;
    memset(e->obs, 0, sizeof e->obs);
    fill_obs(e, obs);
    e->last_step = false;
    hw_info_out o = hw_info_json(info);
    put_info(e, &o);
    return 0;
}

static int m_step(void *p, const hw_act *act, hw_step_out *out, json_t *info, hw_err *err) {
    menv *e = p;
    if (!e->started) return hw_fail(err, HW_E_BAD_STATE, "step before reset");
    if (e->t >= e->episode_length) return hw_fail(err, HW_E_BAD_STATE, "episode is over: call reset");
    if (!act->i || (int)act->n != e->nparams) return hw_fail(err, HW_E_BAD_ACTION, "expected %d integer parameters", e->nparams);
    maestro_mapping *m = &e->last_m;
    int *pes = &e->last_pes;
    maestro_result *r = &e->last_r;
    decode(e, act->i, m, e->last_fl, &e->last_cl, pes);
    score(e, m, *pes, r);
    set_obs(e, r);
    e->t++;
    e->last_step = true;
    out->reward = reward_of(e, r);
    /* the horizon is a time limit, not a terminal state of the task: truncated (Gymnasium's definition) */
    out->terminated = false;
    out->truncated = e->t >= e->episode_length;
    fill_obs(e, &out->obs);
    hw_info_out o = hw_info_json(info);
    put_info(e, &o);
    return 0;
}

static void *m_snapshot(const void *p, hw_err *err) {
    (void)err;
    const menv *e = p;
    msnap *s = malloc(sizeof *s);
    if (!s) abort();
    s->t = e->t, s->started = e->started;
    memcpy(s->obs, e->obs, sizeof s->obs);
    return s;
}

static int m_restore(void *p, const void *snap, hw_err *err) {
    (void)err;
    menv *e = p;
    const msnap *s = snap;
    e->t = s->t, e->started = s->started;
    memcpy(e->obs, s->obs, sizeof e->obs);
    return 0;
}

static void m_snap_free(void *s) { free(s); }

static int m_evaluate(void *p, const json_t *point, double *reward, json_t *metrics, hw_err *err) {
    menv *e = p;
    maestro_mapping m;
    const dfrag *fl[MAESTRO_MAX_DIRS], *const *text = NULL;
    dfrag clt;
    int pes = e->hw.num_pes;
    if (json_is_array(point)) {
        if ((int)json_array_size(point) != e->nparams)
            return hw_fail(err, HW_E_BAD_ACTION, "point: %zu elements, expected %d (%s)", json_array_size(point), e->nparams,
                           as_names[e->as]);
        int64_t a[17];
        for (int i = 0; i < e->nparams; i++) {
            json_t *v = json_array_get(point, (size_t)i);
            double x = json_is_number(v) ? json_number_value(v) : -1;
            int64_t n = hw_space_choices(e->aspace, i);
            if (!json_is_number(v) || x != floor(x) || x < 0 || x >= (double)n)
                return hw_fail(err, HW_E_BAD_ACTION, "point[%d]: expected an integer in [0, %lld)", i, (long long)n);
            a[i] = (int64_t)x;
        }
        decode(e, a, &m, fl, &clt, &pes);
        text = fl;
    } else if (json_is_object(point)) {
        static const char *const keys[] = {"directives", "num_pes", NULL};
        if (hw_cfg_check_keys(point, keys, err)) {
            hw_err_prefix(err, "point");
            return -1;
        }
        const char *text;
        int64_t np;
        if (hw_cfg_str(point, "directives", NULL, &text, err) || hw_cfg_int(point, "num_pes", e->hw.num_pes, 1, 1 << 20, &np, err)) {
            hw_err_prefix(err, "point");
            return -1;
        }
        if (!text) return hw_fail(err, HW_E_BAD_ACTION, "point.directives: missing");
        if (maestro_parse_directives(text, &e->layer, &m, err)) {
            hw_err_prefix(err, "point.directives");
            err->code = HW_E_BAD_ACTION;
            return -1;
        }
        pes = (int)np;
    } else {
        return hw_fail(err, HW_E_BAD_ACTION, "point: expected an action array or {\"directives\": \"...\"}");
    }
    maestro_result r;
    score(e, &m, pes, &r);
    *reward = reward_of(e, &r);
    hw_info_out mo = hw_info_json(metrics);
    put_metrics(e, &m, text, pes, &r, &mo);
    return 0;
}

static void *m_create(const json_t *cfg, hw_err *err) { return m_create_ctx(cfg, &hw_env_ctx_local, err); }

/* the env holds its layer, hardware and choice tables inline (issue 28 finding 1), and its
 * directives' block */
static size_t m_mem_bytes(const void *p) {
    const menv *e = p;
    return sizeof(menv) + 16 + e->nfrag * sizeof(dfrag) + 16;
}

const hw_env_family hw_family_maestro = {
    .id = "maestro-v0",
    .summary = "map a DNN layer onto a MAESTRO-style accelerator (native MAESTRO cost model; marl10/gamma17 actions)",
    HW_ENV_OPS(m),
    .info_pack = m_info_pack,
};

/* Hook for the lean batch entry (maestro_lean.c): scores an action already validated against
 * the action space, with no JSON. Returns the number of PEs the action selects. */
int maestro_env_eval_action(void *p, const int64_t *a, double *reward, maestro_result *r);
int maestro_env_eval_action(void *p, const int64_t *a, double *reward, maestro_result *r) {
    menv *e = p;
    maestro_mapping m;
    const dfrag *fl[MAESTRO_MAX_DIRS];
    dfrag clt;
    int pes = e->hw.num_pes;
    decode(e, a, &m, fl, &clt, &pes);
    score(e, &m, pes, r);
    *reward = reward_of(e, r);
    return pes;
}
