/* sched_model.c - accelerators, layers, table constraints and the Timeloop-style cost model.
 * See sched.h and docs/sched.md ("Cost model") for the equations implemented here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/zoo.h"
#include "sched.h"
#include "sched_internal.h"
#include "sched_tl.h"


const char *const sched_dim_names[SCHED_NDIM] = {"B", "C", "G", "K", "R", "S", "P", "Q"};
const char *const sched_row_names[SCHED_NROW] = {"REG",  "MAC_X", "MAC_Y",  "LB",     "PE_X",
                                                 "PE_Y", "GB",    "CHIP_X", "CHIP_Y", "DRAM"};
const char *const sched_tensor_names[SCHED_NT] = {"I", "W", "O"};

/* relevance of each dimension to each tensor (Table 1 of the paper; R, S, P, Q reach the
 * input through U = (P-1)*stride + R and V = (Q-1)*stride + S) */
const int sched_rel[SCHED_NT][SCHED_NDIM] = {
    /*        B  C  G  K  R  S  P  Q */
    /* I */ {1, 1, 1, 0, 1, 1, 1, 1},
    /* W */ {0, 1, 1, 1, 1, 1, 0, 0},
    /* O */ {1, 0, 1, 1, 0, 0, 1, 1},
};
/* loop order at a storage level, innermost first */
const int sched_order[3][SCHED_NDIM] = {
    /* WS */ {SD_B, SD_P, SD_Q, SD_C, SD_R, SD_S, SD_K, SD_G},
    /* OS */ {SD_C, SD_R, SD_S, SD_K, SD_B, SD_P, SD_Q, SD_G},
    /* IS */ {SD_K, SD_C, SD_R, SD_S, SD_B, SD_P, SD_Q, SD_G},
};
const int sched_storage_rows[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
/* spatial groups: X row, Y row (REG < MAC < LB < PE < GB < CHIP < DRAM) */
const int sched_groups[3][2] = {{SR_MACX, SR_MACY}, {SR_PEX, SR_PEY}, {SR_CHX, SR_CHY}};

int sched_is_spatial(int row) {
    return row == SR_MACX || row == SR_MACY || row == SR_PEX || row == SR_PEY || row == SR_CHX || row == SR_CHY;
}

/* ------------------------------------------------------------------ accelerators */

/* Per-word access energy (pJ, 16-bit word) of an SRAM/register file of `bytes` bytes: an
 * Accelergy-spirit fit, growing with the square root of the bank size, banks capped at 256 KB. */
double sched_sram_energy(double bytes) {
    if (bytes > 262144) bytes = 262144;
    return 0.06 + 0.35 * sqrt(bytes / 1024.0);
}

static int fail_field(hw_err *err, const char *prefix, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_field(hw_err *err, const char *prefix, const char *field, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hw_fail(err, HW_E_BAD_CONFIG, "%s%s%s: %s", prefix, field[0] ? "." : "", field, msg);
}

static int check_keys(const json_t *o, const char *const *allowed, const char *prefix, hw_err *err) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (!strcmp(k, allowed[i])) ok = 1;
        if (!ok) {
            char known[256] = "";
            for (int i = 0; allowed[i]; i++) {
                if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
                strncat(known, allowed[i], sizeof known - strlen(known) - 1);
            }
            return fail_field(err, prefix, k, "unknown field (known: %s)", known);
        }
    }
    return 0;
}

static int get_num(const json_t *o, const char *key, double def, double lo, double hi, const char *prefix, double *out,
                   hw_err *err) {
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v)) return fail_field(err, prefix, key, "expected a number");
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) return fail_field(err, prefix, key, "%g out of range [%g, %g]", x, lo, hi);
    *out = x;
    return 0;
}

static int get_int(const json_t *o, const char *key, int def, int lo, int hi, const char *prefix, int *out, hw_err *err) {
    double x;
    if (get_num(o, key, def, lo, hi, prefix, &x, err)) return -1;
    if (x != floor(x)) return fail_field(err, prefix, key, "expected an integer, got %g", x);
    *out = (int)x;
    return 0;
}

static int get_df(const json_t *o, const char *prefix, int def, int *out, hw_err *err) {
    json_t *v = json_object_get(o, "dataflow");
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    static const char *const n[] = {"WS", "OS", "IS"};
    if (json_is_string(v))
        for (int i = 0; i < 3; i++)
            if (!strcasecmp(json_string_value(v), n[i])) {
                *out = i;
                return 0;
            }
    return fail_field(err, prefix, "dataflow", "expected \"WS\", \"OS\" or \"IS\"");
}

static int section(const json_t *j, const char *key, const char *prefix, char *sub, size_t subn, const json_t **out,
                   hw_err *err) {
    json_t *v = json_object_get(j, key);
    snprintf(sub, subn, "%s.%s", prefix, key);
    if (!v || json_is_null(v)) {
        *out = NULL;
        return 0;
    }
    if (!json_is_object(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", sub);
    *out = v;
    return 0;
}

/* registers / local buffer: per-tensor capacities in bytes; an absent tensor is bypassed */
static int parse_split_level(const json_t *o, int row, const char *p, sched_accel *a, hw_err *err) {
    static const char *const keys[] = {"I", "W", "O", "dataflow", "bandwidth", "energy_pj", NULL};
    if (check_keys(o, keys, p, err)) return -1;
    double biggest = 0;
    int any = 0;
    for (int t = 0; t < SCHED_NT; t++) {
        double c;
        if (get_num(o, sched_tensor_names[t], 0, 0, 1e15, p, &c, err)) return -1;
        if (json_object_get(o, sched_tensor_names[t]) && !json_is_null(json_object_get(o, sched_tensor_names[t]))) {
            if (c < a->word_bytes)
                return fail_field(err, p, sched_tensor_names[t], "%g bytes is less than one %d-byte word", c, a->word_bytes);
            a->keeps[row][t] = 1;
            a->cap[row][t] = c;
            any = 1;
            if (c > biggest) biggest = c;
        }
    }
    if (!any) return hw_fail(err, HW_E_BAD_CONFIG, "%s: needs at least one of I, W, O (bytes)", p);
    a->present[row] = 1;
    if (get_df(o, p, row == SR_LB ? SDF_WS : SDF_OS, &a->df[row], err) ||
        get_num(o, "bandwidth", 0, 0, 1e12, p, &a->bw[row], err) ||
        get_num(o, "energy_pj", sched_sram_energy(biggest), 0, 1e6, p, &a->e_word[row], err))
        return -1;
    return 0;
}

static int parse_spatial(const json_t *o, int gx, const char *p, double def_e, sched_accel *a, hw_err *err) {
    static const char *const keys[] = {"x", "y", "energy_pj", NULL};
    if (o && check_keys(o, keys, p, err)) return -1;
    int x, y;
    if (get_int(o, "x", 1, 1, 1 << 20, p, &x, err) || get_int(o, "y", 1, 1, 1 << 20, p, &y, err) ||
        get_num(o, "energy_pj", def_e, 0, 1e6, p, &a->e_word[gx], err))
        return -1;
    a->e_word[gx + 1] = a->e_word[gx];
    a->units[gx] = x;
    a->units[gx + 1] = y;
    a->present[gx] = x > 1;
    a->present[gx + 1] = y > 1;
    return 0;
}

int sched_accel_from_json(const json_t *j, const char *prefix, sched_accel *a, hw_err *err) {
    memset(a, 0, sizeof *a);
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", prefix);
    static const char *const keys[] = {"name", "description", "word_bytes", "mac", "registers", "local_buffer",
                                       "pe_array", "global_buffer", "chips", "dram", NULL};
    if (check_keys(j, keys, prefix, err)) return -1;
    json_t *nm = json_object_get(j, "name");
    if (nm && !json_is_string(nm)) return fail_field(err, prefix, "name", "expected a string");
    snprintf(a->name, sizeof a->name, "%s", nm ? json_string_value(nm) : "custom");
    json_t *ds = json_object_get(j, "description");
    if (ds && !json_is_string(ds)) return fail_field(err, prefix, "description", "expected a string");
    if (get_int(j, "word_bytes", 2, 1, 16, prefix, &a->word_bytes, err)) return -1;
    char p[160];
    const json_t *o;
    /* MAC array inside a PE */
    if (section(j, "mac", prefix, p, sizeof p, &o, err) || parse_spatial(o, SR_MACX, p, 0.0, a, err)) return -1;
    {
        double em = 1.0;
        /* mac.energy_pj is the MAC energy; the MAC array itself has no network cost */
        if (o && get_num(o, "energy_pj", 1.0, 0, 1e6, p, &em, err)) return -1;
        a->e_mac = em;
        a->e_word[SR_MACX] = a->e_word[SR_MACY] = 0;
    }
    if (section(j, "registers", prefix, p, sizeof p, &o, err)) return -1;
    if (o && parse_split_level(o, SR_REG, p, a, err)) return -1;
    if (section(j, "local_buffer", prefix, p, sizeof p, &o, err)) return -1;
    if (o && parse_split_level(o, SR_LB, p, a, err)) return -1;
    if (section(j, "pe_array", prefix, p, sizeof p, &o, err) || parse_spatial(o, SR_PEX, p, 0.5, a, err)) return -1;
    if (section(j, "global_buffer", prefix, p, sizeof p, &o, err)) return -1;
    if (o) {
        static const char *const gk[] = {"bytes", "bypass", "dataflow", "bandwidth", "energy_pj", NULL};
        if (check_keys(o, gk, p, err)) return -1;
        double b;
        if (!json_object_get(o, "bytes")) return fail_field(err, p, "bytes", "required");
        if (get_num(o, "bytes", 0, 1, 1e15, p, &b, err)) return -1;
        a->present[SR_GB] = 1;
        a->cap_shared[SR_GB] = b;
        for (int t = 0; t < SCHED_NT; t++) a->keeps[SR_GB][t] = 1;
        json_t *bp = json_object_get(o, "bypass");
        if (bp && !json_is_null(bp)) {
            if (!json_is_array(bp)) return fail_field(err, p, "bypass", "expected an array of \"I\", \"W\", \"O\"");
            size_t i;
            json_t *x;
            json_array_foreach(bp, i, x) {
                int hit = -1;
                for (int t = 0; t < SCHED_NT; t++)
                    if (json_is_string(x) && !strcmp(json_string_value(x), sched_tensor_names[t])) hit = t;
                if (hit < 0) return fail_field(err, p, "bypass", "element %zu: expected \"I\", \"W\" or \"O\"", i);
                a->keeps[SR_GB][hit] = 0;
            }
        }
        if (get_df(o, p, SDF_OS, &a->df[SR_GB], err) || get_num(o, "bandwidth", 0, 0, 1e12, p, &a->bw[SR_GB], err) ||
            get_num(o, "energy_pj", sched_sram_energy(b), 0, 1e6, p, &a->e_word[SR_GB], err))
            return -1;
    }
    if (section(j, "chips", prefix, p, sizeof p, &o, err) || parse_spatial(o, SR_CHX, p, 20.0, a, err)) return -1;
    if (section(j, "dram", prefix, p, sizeof p, &o, err)) return -1;
    {
        static const char *const dk[] = {"dataflow", "bandwidth", "energy_pj", NULL};
        if (o && check_keys(o, dk, p, err)) return -1;
        a->present[SR_DRAM] = 1;
        for (int t = 0; t < SCHED_NT; t++) a->keeps[SR_DRAM][t] = 1;
        if ((o && get_df(o, p, SDF_OS, &a->df[SR_DRAM], err)) || get_num(o, "bandwidth", 0, 0, 1e12, p, &a->bw[SR_DRAM], err) ||
            get_num(o, "energy_pj", 128.0, 0, 1e6, p, &a->e_word[SR_DRAM], err))
            return -1;
        if (!o) a->df[SR_DRAM] = SDF_OS;
    }
    return 0;
}

int sched_accel_resolve(const json_t *v, const char *prefix, sched_accel *a, hw_err *err) {
    if (!v || json_is_null(v)) {
        json_t *j = json_loads(sched_builtin_json(0), 0, NULL);
        int rc = sched_accel_from_json(j, prefix, a, err);
        json_decref(j);
        return rc;
    }
    if (json_is_object(v)) return sched_accel_from_json(v, prefix, a, err);
    if (!json_is_string(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a built-in name, a JSON file path or an object", prefix);
    const char *s = json_string_value(v);
    for (int i = 0; i < sched_builtin_count(); i++) {
        if (!strcasecmp(s, sched_builtin_name(i))) {
            json_error_t je;
            json_t *j = json_loads(sched_builtin_json(i), 0, &je);
            if (!j) return hw_fail(err, HW_E_INTERNAL, "built-in accelerator %s: %s", s, je.text);
            int rc = sched_accel_from_json(j, prefix, a, err);
            json_decref(j);
            return rc;
        }
    }
    size_t n = strlen(s);
    if (strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"))) {
        hw_err e2;
        json_t *j = hw_json_load_file(s, &e2);
        if (!j) return hw_fail(err, HW_E_BAD_CONFIG, "%s: %s", prefix, e2.msg);
        char p2[200];
        snprintf(p2, sizeof p2, "%s (%s)", prefix, s);
        int rc = sched_accel_from_json(j, p2, a, err);
        json_decref(j);
        return rc;
    }
    char known[128] = "";
    for (int i = 0; i < sched_builtin_count(); i++) {
        if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, sched_builtin_name(i), sizeof known - strlen(known) - 1);
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "%s: unknown accelerator '%s' (built in: %s; or a .json path, or an object)",
                   prefix, s, known);
}

/* ------------------------------------------------------------------ layers */

int sched_layer_from_json(const json_t *j, const char *prefix, sched_layer *l, hw_err *err) {
    memset(l, 0, sizeof *l);
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object {B,C,G,K,R,S,P,Q,stride}", prefix);
    static const char *const keys[] = {"name", "B", "C", "G", "K", "R", "S", "P", "Q", "stride", NULL};
    if (check_keys(j, keys, prefix, err)) return -1;
    for (int d = 0; d < SCHED_NDIM; d++)
        if (get_int(j, sched_dim_names[d], 1, 1, 1 << 16, prefix, &l->d[d], err)) return -1;
    if (get_int(j, "stride", 1, 1, 64, prefix, &l->stride, err)) return -1;
    json_t *nm = json_object_get(j, "name");
    if (nm && !json_is_string(nm)) return fail_field(err, prefix, "name", "expected a string");
    snprintf(l->name, sizeof l->name, "%s", nm ? json_string_value(nm) : "custom");
    return 0;
}

double sched_layer_macs(const sched_layer *l) {
    double m = 1;
    for (int d = 0; d < SCHED_NDIM; d++) m *= l->d[d];
    return m;
}

int sched_model_layers(const char *model, sched_layer **out, hw_err *err) {
    *out = NULL;
    const hw_model *m = hw_zoo_find(model);
    if (!m) return hw_fail(err, HW_E_BAD_CONFIG, "config.model: unknown model '%s'", model);
    sched_layer *v = calloc((size_t)m->n + 1, sizeof *v);
    if (!v) abort();
    int n = 0;
    for (int i = 0; i < m->n; i++) {
        const hw_layer *z = &m->layers[i];
        /* layers with weights (Table 3 counts conv and fc layers); pooling, eltwise etc. are skipped */
        if (z->op != HW_OP_CONV && z->op != HW_OP_DWCONV && z->op != HW_OP_FC) continue;
        sched_layer *s = &v[n++];
        snprintf(s->name, sizeof s->name, "%s", z->name);
        int g = z->groups > 1 ? z->groups : 1;
        s->d[SD_B] = z->N > 0 ? z->N : 1;
        s->d[SD_G] = g;
        s->d[SD_C] = z->C / g > 0 ? z->C / g : 1;
        s->d[SD_K] = z->K / g > 0 ? z->K / g : 1;
        s->d[SD_R] = z->R > 0 ? z->R : 1;
        s->d[SD_S] = z->S > 0 ? z->S : 1;
        s->d[SD_P] = z->Yo > 0 ? z->Yo : 1;
        s->d[SD_Q] = z->Xo > 0 ? z->Xo : 1;
        s->stride = z->stride > 0 ? z->stride : 1;
    }
    if (!n) {
        free(v);
        return hw_fail(err, HW_E_BAD_CONFIG, "config.model: '%s' has no conv/fc layers", model);
    }
    *out = v;
    return n;
}

/* ------------------------------------------------------------------ table */

void sched_table_init(const sched_layer *l, sched_table *t) {
    memset(t->ord, 0, sizeof t->ord);
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) t->f[r][d] = r == SR_DRAM ? l->d[d] : 1;
}

double sched_tile_words(int t, const double *x, int stride) {
    switch (t) {
    case ST_I:
        return x[SD_B] * x[SD_G] * x[SD_C] * ((x[SD_P] - 1) * stride + x[SD_R]) * ((x[SD_Q] - 1) * stride + x[SD_S]);
    case ST_W: return x[SD_G] * x[SD_K] * x[SD_C] * x[SD_R] * x[SD_S];
    default: return x[SD_B] * x[SD_G] * x[SD_K] * x[SD_P] * x[SD_Q];
    }
}

void sched_cum(const sched_table *t, double cum[SCHED_NROW][SCHED_NDIM]) {
    for (int d = 0; d < SCHED_NDIM; d++) {
        double p = 1;
        for (int r = 0; r < SCHED_NROW; r++) {
            p *= t->f[r][d];
            cum[r][d] = p;
        }
    }
}

/* capacity of storage row `row`: 0 ok, else the failing tensor (0..2) or 3 for the shared pool;
 * *need and *have receive the bytes */
int sched_cap_fail(const sched_accel *a, const sched_layer *l, int row, const double *x, double *need, double *have) {
    double tot = 0;
    for (int t = 0; t < SCHED_NT; t++) {
        if (!a->keeps[row][t]) continue;
        double b = sched_tile_words(t, x, l->stride) * a->word_bytes;
        tot += b;
        if (a->cap[row][t] > 0 && b > a->cap[row][t]) {
            *need = b;
            *have = a->cap[row][t];
            return t + 1;
        }
    }
    if (a->cap_shared[row] > 0 && tot > a->cap_shared[row]) {
        *need = tot;
        *have = a->cap_shared[row];
        return 4;
    }
    return 0;
}

int sched_check(const sched_accel *a, const sched_layer *l, const sched_table *t, hw_err *err) {
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++)
            if (t->f[r][d] < 1)
                return hw_fail(err, HW_E_BAD_ACTION, "constraint value %s.%s: %d is not a positive integer",
                               sched_row_names[r], sched_dim_names[d], t->f[r][d]);
    for (int d = 0; d < SCHED_NDIM; d++) {
        double p = 1;
        for (int r = 0; r < SCHED_NROW; r++) p *= t->f[r][d];
        if (p != l->d[d])
            return hw_fail(err, HW_E_BAD_ACTION, "constraint column %s: product %.0f != layer %s %d", sched_dim_names[d], p,
                           sched_dim_names[d], l->d[d]);
    }
    for (int r = 0; r < SCHED_NROW; r++) {
        if (a->present[r]) continue;
        for (int d = 0; d < SCHED_NDIM; d++)
            if (t->f[r][d] != 1)
                return hw_fail(err, HW_E_BAD_ACTION, "constraint level %s: absent in %s but holds %s=%d", sched_row_names[r],
                               a->name, sched_dim_names[d], t->f[r][d]);
    }
    for (int r = 0; r < SCHED_NROW; r++) {
        if (!t->ord[r][0]) continue;
        unsigned seen = 0;
        for (int i = 0; i < SCHED_NDIM; i++) {
            int d = t->ord[r][i] - 1;
            if (d < 0 || d >= SCHED_NDIM || (seen & (1u << d)))
                return hw_fail(err, HW_E_BAD_ACTION, "constraint order %s: not a permutation of BCGKRSPQ", sched_row_names[r]);
            seen |= 1u << d;
        }
    }
    tl_result res;
    int cls = tl_check(sched_tl_spec_cached(a, l, t), &res);
    if (cls == TL_ECAPACITY) return hw_fail(err, HW_E_BAD_ACTION, "constraint capacity: %s", res.reason);
    if (cls == TL_ESPATIAL) return hw_fail(err, HW_E_BAD_ACTION, "constraint spatial: %s", res.reason);
    if (cls != TL_OK) return hw_fail(err, HW_E_BAD_ACTION, "constraint factors: %s", res.reason);
    return 0;
}

/* ------------------------------------------------------------------ cost */


/* The cost model is Timeloop's counting (sched_tl.c); these helpers turn its per-level result
 * into the table-row view of sched_cost. */

double sched_obj_of(const double out[4], int obj) {
    switch (obj) {
    case SOBJ_ENERGY: return out[0];
    case SOBJ_CYCLES: return out[1];
    case SOBJ_EDP: return out[0] * out[1];
    case SOBJ_DRAM: return out[3];
    default: return out[2];
    }
}

void sched_cost_from_tl(const tl_spec *s, const tl_result *r, sched_cost *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < s->nl; i++) {
        int row = s->lv[i].row;
        if (row < 0) continue;
        for (int t = 0; t < SCHED_NT; t++) {
            c->reads[row][t] += r->reads[i][t];
            c->fills[row][t] += r->fills[i][t];
            c->updates[row][t] += r->updates[i][t];
            c->access[row][t] += r->reads[i][t] + r->fills[i][t] + r->updates[i][t];
        }
        c->e_level[row] += r->e_level[i];
        if (row == SR_GB) c->e_level[SR_PEX] += r->e_net[i];
        if (row == SR_DRAM) c->e_level[SR_CHX] += r->e_net[i];
    }
    c->energy_pj = r->energy;
    c->cycles = r->cycles;
    c->compute_cycles = r->compute_cycles;
    c->edp = r->energy * r->cycles;
    c->macs = r->macs;
    c->utilisation = r->spatial_util;
    c->tl_utilization = r->utilization;
    c->bound_row = r->bound < 0 ? -1 : s->lv[r->bound].row;
}

void sched_cost_eval(const sched_accel *a, const sched_layer *l, const sched_table *t, sched_cost *c) {
    tl_result r;
    const tl_spec *s = sched_tl_spec_cached(a, l, t);
    tl_eval(s, &r);
    sched_cost_from_tl(s, &r, c);
}

int sched_evaluate(const sched_accel *a, const sched_layer *l, const sched_table *t, sched_cost *c, hw_err *err) {
    if (sched_check(a, l, t, err)) return -1;
    sched_cost_eval(a, l, t, c);
    return 0;
}

double sched_objective(const sched_cost *c, int obj) {
    switch (obj) {
    case SOBJ_ENERGY: return c->energy_pj;
    case SOBJ_CYCLES: return c->cycles;
    case SOBJ_EDP: return c->edp;
    case SOBJ_DRAM: return c->access[SR_DRAM][0] + c->access[SR_DRAM][1] + c->access[SR_DRAM][2];
    default: return c->compute_cycles;
    }
}

int sched_table_from_json(const json_t *j, sched_table *t, hw_err *err) {
    if (!json_is_array(j) || json_array_size(j) != SCHED_NROW)
        return hw_fail(err, HW_E_BAD_ACTION, "table: expected an array of %d rows (REG..DRAM) of %d integers (B C G K R S P Q)",
                       SCHED_NROW, SCHED_NDIM);
    for (int r = 0; r < SCHED_NROW; r++) {
        json_t *row = json_array_get(j, (size_t)r);
        if (!json_is_array(row) || json_array_size(row) != SCHED_NDIM)
            return hw_fail(err, HW_E_BAD_ACTION, "table[%d] (%s): expected %d integers", r, sched_row_names[r], SCHED_NDIM);
        for (int d = 0; d < SCHED_NDIM; d++) {
            json_t *v = json_array_get(row, (size_t)d);
            double x = json_is_number(v) ? json_number_value(v) : -1;
            if (x < 1 || x > (1 << 20) || x != floor(x))
                return hw_fail(err, HW_E_BAD_ACTION, "table[%d][%d] (%s.%s): expected a positive integer", r, d,
                               sched_row_names[r], sched_dim_names[d]);
            t->f[r][d] = (int)x;
        }
    }
    memset(t->ord, 0, sizeof t->ord);
    return 0;
}

int sched_order_parse(const char *s, unsigned char ord[SCHED_NDIM]) {
    if (!s || strlen(s) != SCHED_NDIM) return -1;
    unsigned seen = 0;
    for (int i = 0; i < SCHED_NDIM; i++) {
        int d = -1;
        for (int k = 0; k < SCHED_NDIM; k++)
            if (s[i] == sched_dim_names[k][0] || s[i] == sched_dim_names[k][0] + 32) d = k;
        if (d < 0 || (seen & (1u << d))) return -1;
        seen |= 1u << d;
        ord[i] = (unsigned char)(d + 1);
    }
    return 0;
}

int sched_orders_from_json(const json_t *j, sched_table *t, hw_err *err) {
    memset(t->ord, 0, sizeof t->ord);
    if (!j || json_is_null(j)) return 0;
    if (!json_is_object(j))
        return hw_fail(err, HW_E_BAD_ACTION, "orders: expected an object {\"REG\"|\"LB\"|\"GB\"|\"DRAM\": \"BPQCRSKG\"}");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v) {
        int row = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(k, sched_row_names[sched_storage_rows[i]])) row = sched_storage_rows[i];
        if (row < 0) return hw_fail(err, HW_E_BAD_ACTION, "orders.%s: not a storage row (REG, LB, GB, DRAM)", k);
        if (!json_is_string(v) || sched_order_parse(json_string_value(v), t->ord[row]))
            return hw_fail(err, HW_E_BAD_ACTION,
                           "orders.%s: expected a permutation of the 8 letters BCGKRSPQ, innermost first (e.g. \"BPQCRSKG\")", k);
    }
    return 0;
}

json_t *sched_orders_to_json(const sched_accel *a, const sched_table *t) {
    json_t *o = json_object();
    for (int i = 0; i < 4; i++) {
        int r = sched_storage_rows[i];
        if (!a->present[r]) continue;
        int ord[SCHED_NDIM];
        sched_table_order(a, t, r, ord);
        char buf[SCHED_NDIM + 1];
        for (int k = 0; k < SCHED_NDIM; k++) buf[k] = sched_dim_names[ord[k]][0];
        buf[SCHED_NDIM] = 0;
        json_object_set_new(o, sched_row_names[r], json_string(buf));
    }
    return o;
}

json_t *sched_table_to_json(const sched_table *t) {
    json_t *a = json_array();
    for (int r = 0; r < SCHED_NROW; r++) {
        json_t *row = json_array();
        for (int d = 0; d < SCHED_NDIM; d++) json_array_append_new(row, json_integer(t->f[r][d]));
        json_array_append_new(a, row);
    }
    return a;
}
