/* zoo.c - see zoo.h. Model lookup, layer arithmetic, validation and the zoo file format
 * (reader and writer). The built-in tables are in zoo_models.c (generated). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hw_files.h"
#include "zoo_internal.h"

#define ZOO_MAX_LAYERS 100000
#define ZOO_MAX_FILE (64L << 20)

static const char *const op_names[HW_OP_COUNT] = {
    [HW_OP_CONV] = "conv",       [HW_OP_DWCONV] = "dwconv",   [HW_OP_FC] = "fc",
    [HW_OP_MATMUL] = "matmul",   [HW_OP_POOL] = "pool",       [HW_OP_ELTWISE] = "eltwise",
    [HW_OP_SOFTMAX] = "softmax", [HW_OP_NORM] = "norm",       [HW_OP_CONCAT] = "concat",
    [HW_OP_UPSAMPLE] = "upsample", [HW_OP_EMBED] = "embed",
};

static const struct {
    const char *name;
    hw_op op;
} op_aliases[] = {
    {"dsconv", HW_OP_DWCONV},    {"depthwise", HW_OP_DWCONV}, {"dw", HW_OP_DWCONV},
    {"gemm", HW_OP_FC},          {"linear", HW_OP_FC},        {"dense", HW_OP_FC},
    {"bmm", HW_OP_MATMUL},       {"add", HW_OP_ELTWISE},      {"mul", HW_OP_ELTWISE},
    {"maxpool", HW_OP_POOL},     {"avgpool", HW_OP_POOL},     {"layernorm", HW_OP_NORM},
    {"batchnorm", HW_OP_NORM},   {"embedding", HW_OP_EMBED},  {"resize", HW_OP_UPSAMPLE},
};

const char *hw_op_name(hw_op op) {
    if ((int)op < 0 || op >= HW_OP_COUNT) return "?";
    return op_names[op];
}

int hw_op_from_name(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < HW_OP_COUNT; i++)
        if (!strcasecmp(name, op_names[i])) return i;
    for (size_t i = 0; i < sizeof op_aliases / sizeof op_aliases[0]; i++)
        if (!strcasecmp(name, op_aliases[i].name)) return (int)op_aliases[i].op;
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Model lookup */

static const struct {
    const char *alias; /* normalized: lower case, letters and digits only */
    int model;
} model_aliases[] = {
    {"mbv2", 0},          {"vgg", 1},           {"bert", 6},       {"bertbaseuncased", 6},
    {"yolo", 7},          {"inception", 8},     {"mobilenetv3large", 9}, {"mbv3", 9},
    {"mobilenetv3l", 9},
};

static void normalize(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (isalnum((unsigned char)*s)) out[n++] = (char)tolower((unsigned char)*s);
    out[n] = 0;
}

int hw_zoo_count(void) { return HW_ZOO_NBUILTIN; }

const hw_model *hw_zoo_at(int i) {
    if (i < 0 || i >= HW_ZOO_NBUILTIN) return NULL;
    return &hw_zoo_builtin[i];
}

const hw_model *hw_zoo_find(const char *name) {
    if (!name) return NULL;
    char want[96], have[96];
    if (strlen(name) >= sizeof want) return NULL;
    normalize(name, want, sizeof want);
    if (!want[0]) return NULL;
    for (int i = 0; i < HW_ZOO_NBUILTIN; i++) {
        normalize(hw_zoo_builtin[i].name, have, sizeof have);
        if (!strcmp(want, have)) return &hw_zoo_builtin[i];
    }
    for (size_t i = 0; i < sizeof model_aliases / sizeof model_aliases[0]; i++)
        if (!strcmp(want, model_aliases[i].alias)) return &hw_zoo_builtin[model_aliases[i].model];
    return NULL;
}

int hw_zoo_layer_index(const hw_model *m, const char *s, hw_err *err) {
    if (!m) return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: no model");
    const char *mn = m->name ? m->name : "model";
    if (!s || !*s)
        return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: empty; give a layer name or an index 0..%d of %s",
                       m->n - 1, mn);
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    int numeric = *p != 0;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q)) numeric = 0;
    if (numeric) {
        errno = 0;
        long v = strtol(s, NULL, 10);
        if (errno || v < 0 || v >= m->n)
            return hw_fail(err, HW_E_BAD_CONFIG, "config.layer: index %s out of range for %s (0..%d)", s, mn,
                           m->n - 1);
        return (int)v;
    }
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->layers[i].name, s)) return i;
    for (int i = 0; i < m->n; i++)
        if (!strcasecmp(m->layers[i].name, s)) return i;
    return hw_fail(err, HW_E_BAD_CONFIG,
                   "config.layer: no layer named '%.64s' in %s (%d layers; give a layer name or an index 0..%d)", s,
                   mn, m->n, m->n - 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Layer arithmetic */

static int is_mac_op(hw_op op) { return op == HW_OP_CONV || op == HW_OP_DWCONV || op == HW_OP_FC || op == HW_OP_MATMUL; }

long long hw_layer_macs(const hw_layer *l) {
    if (!l || !is_mac_op(l->op)) return 0;
    long long cg = l->C;
    if ((l->op == HW_OP_CONV || l->op == HW_OP_DWCONV) && l->groups > 1) cg = l->C / l->groups;
    /* CONV/DWCONV: N*K*(C/G)*R*S*Yo*Xo.  FC: N*K*C*Yo*Xo (R=S=1; Yo = rows).  MATMUL: N*Y*C*K. */
    return (long long)l->N * l->K * cg * l->R * l->S * l->Yo * l->Xo;
}

long long hw_layer_weight_elems(const hw_layer *l) {
    if (!l) return 0;
    switch (l->op) {
    case HW_OP_CONV:
    case HW_OP_DWCONV:
        return (long long)l->K * (l->groups > 1 ? l->C / l->groups : l->C) * l->R * l->S;
    case HW_OP_FC:
    case HW_OP_EMBED:
        return (long long)l->K * l->C;
    case HW_OP_NORM:
        return 2LL * l->C;
    default:
        return 0;
    }
}

long long hw_layer_input_elems(const hw_layer *l) {
    if (!l) return 0;
    long long a = (long long)l->N * l->C * l->Y * l->X;
    switch (l->op) {
    case HW_OP_MATMUL:
        return a + (long long)l->N * l->C * l->K; /* A (N x Y x C) and B (N x C x K) */
    case HW_OP_ELTWISE:
        return a * (l->n_in > 1 ? l->n_in : 1);
    case HW_OP_EMBED:
        return (long long)l->N * l->Y * l->X; /* token ids */
    default:
        return a;
    }
}

long long hw_layer_output_elems(const hw_layer *l) {
    if (!l) return 0;
    return (long long)l->N * l->K * l->Yo * l->Xo;
}

long long hw_layer_ops(const hw_layer *l) {
    if (!l) return 0;
    if (is_mac_op(l->op)) return hw_layer_macs(l);
    if (l->op == HW_OP_POOL) return hw_layer_output_elems(l) * l->R * l->S;
    return hw_layer_output_elems(l);
}

/* ---------------------------------------------------------------------------------------- */
/* Validation */

int hw_layer_validate(const hw_layer *l, int index, hw_err *err) {
    if (!l) return hw_fail(err, HW_E_BAD_CONFIG, "layer %d: missing", index);
    const char *nm = l->name;
    if (!nm[0] || !memchr(nm, 0, sizeof l->name))
        return hw_fail(err, HW_E_BAD_CONFIG, "layer %d: field 'name': empty or too long", index);
#define BAD(...) hw_fail(err, HW_E_BAD_CONFIG, __VA_ARGS__)
    if ((int)l->op < 0 || l->op >= HW_OP_COUNT) return BAD("layer %d '%s': field 'op': invalid (%d)", index, nm, (int)l->op);
    const struct {
        const char *f;
        int v, lo;
    } pos[] = {{"N", l->N, 1},        {"K", l->K, 1},           {"C", l->C, 1},           {"R", l->R, 1},
               {"S", l->S, 1},        {"Y", l->Y, 1},           {"X", l->X, 1},
               {"stride", l->stride, 1}, {"pad", l->pad, 0},       {"pad_x", l->pad_x, 0},
               {"dilation", l->dilation, 1}, {"groups", l->groups, 1}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v < pos[i].lo)
            return BAD("layer %d '%s': field '%s': %d, must be >= %d", index, nm, pos[i].f, pos[i].v, pos[i].lo);
    switch (l->op) {
    case HW_OP_CONV:
        if (l->C % l->groups || l->K % l->groups)
            return BAD("layer %d '%s': field 'groups': %d does not divide C=%d and K=%d", index, nm, l->groups, l->C,
                       l->K);
        break;
    case HW_OP_DWCONV:
        if (l->K != l->C || l->groups != l->C)
            return BAD("layer %d '%s': field 'groups': a dwconv needs K == C == groups (K=%d C=%d groups=%d)", index,
                       nm, l->K, l->C, l->groups);
        break;
    case HW_OP_FC:
    case HW_OP_MATMUL:
    case HW_OP_EMBED:
        if (l->R != 1 || l->S != 1) return BAD("layer %d '%s': field 'R': %s needs R = S = 1", index, nm, hw_op_name(l->op));
        break;
    default:
        if (l->K != l->C) return BAD("layer %d '%s': field 'K': %s needs K == C (K=%d C=%d)", index, nm, hw_op_name(l->op), l->K, l->C);
        break;
    }
    long long ey, ex;
    const char *rule;
    if (l->op == HW_OP_CONV || l->op == HW_OP_DWCONV || l->op == HW_OP_POOL) {
        long long ny = (long long)l->Y + 2LL * l->pad - (long long)l->dilation * (l->R - 1) - 1;
        long long nx = (long long)l->X + 2LL * l->pad_x - (long long)l->dilation * (l->S - 1) - 1;
        if (ny < 0) return BAD("layer %d '%s': field 'R': filter rows %d larger than padded input Y=%d", index, nm, l->R, l->Y);
        if (nx < 0) return BAD("layer %d '%s': field 'S': filter cols %d larger than padded input X=%d", index, nm, l->S, l->X);
        ey = ny / l->stride + 1;
        ex = nx / l->stride + 1;
        rule = "(Y+2*pad-dilation*(R-1)-1)/stride+1";
    } else if (l->op == HW_OP_UPSAMPLE) {
        ey = (long long)l->Y * l->stride;
        ex = (long long)l->X * l->stride;
        rule = "Y*stride";
    } else {
        ey = l->Y;
        ex = l->X;
        rule = "Y (shape-preserving op)";
    }
    if (l->Yo != ey) return BAD("layer %d '%s': field 'Yo': %d but %s = %lld", index, nm, l->Yo, rule, ey);
    if (l->Xo != ex) return BAD("layer %d '%s': field 'Xo': %d but the same rule on X gives %lld", index, nm, l->Xo, ex);
    if (l->n_in < 1 || l->n_in > HW_LAYER_MAX_IN)
        return BAD("layer %d '%s': field 'inputs': %d inputs, must be 1..%d", index, nm, l->n_in, HW_LAYER_MAX_IN);
    for (int j = 0; j < l->n_in; j++)
        if (l->in[j] < -1 || l->in[j] >= index)
            return BAD("layer %d '%s': field 'inputs': %d is not an earlier layer (or -1 = graph input)", index, nm,
                       l->in[j]);
#undef BAD
    return 0;
}

int hw_zoo_validate(const hw_model *m, hw_err *err) {
    if (!m || !m->layers || m->n < 1) return hw_fail(err, HW_E_BAD_CONFIG, "model: no layers");
    for (int i = 0; i < m->n; i++)
        if (hw_layer_validate(&m->layers[i], i, err)) {
            if (m->name) hw_err_prefix(err, m->name);
            return -1;
        }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* File format */

enum { F_NAME, F_OP, F_N, F_K, F_C, F_R, F_S, F_Y, F_X, F_YO, F_XO, F_STRIDE, F_PAD, F_PADX, F_DIL, F_GROUPS, F_INPUTS, F_COUNT };
static const char *const col_names[F_COUNT] = {"name", "op", "N", "K", "C", "R", "S", "Y", "X", "Yo", "Xo",
                                               "stride", "pad", "pad_x", "dilation", "groups", "inputs"};
/* Columns that must be in the header; the others default (docs/zoo.md). */
static const int col_required[F_COUNT] = {[F_NAME] = 1, [F_OP] = 1, [F_K] = 1, [F_C] = 1, [F_Y] = 1, [F_X] = 1};

typedef struct zoo_owned {
    hw_model m; /* first member: hw_zoo_free casts back */
    char name[64];
    hw_layer layers[];
} zoo_owned;

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

/* Splits s in place on sep; returns the count (at most cap) or cap + 1 when there are more. */
static int split(char *s, char sep, char **out, int cap) {
    int n = 0;
    for (;;) {
        if (n == cap) return cap + 1;
        out[n++] = s;
        char *c = strchr(s, sep);
        if (!c) break;
        *c = 0;
        s = c + 1;
    }
    for (int i = 0; i < n; i++) out[i] = trim(out[i]);
    return n;
}

static int parse_int(const char *s, long *v) {
    if (!*s) return -1;
    char *e;
    errno = 0;
    long x = strtol(s, &e, 10);
    if (errno || *e || x < INT_MIN || x > INT_MAX) return -1;
    *v = x;
    return 0;
}

static void base_name(const char *path, char *out, size_t cap) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n >= cap) n = cap - 1;
    memcpy(out, b, n);
    out[n] = 0;
}

static hw_model *parse_owned(char *buf, size_t len, const char *path, hw_err *err);

hw_model *hw_zoo_load_file(const char *path, hw_err *err) {
    if (!path || !*path) {
        hw_fail(err, HW_E_BAD_CONFIG, "zoo file: no path given");
        return NULL;
    }
    size_t len = 0;
    char *buf = hw_files_read(&hw_files_local, path, path, &len, err); /* local tools; envs use hw_zoo_parse */
    if (!buf) return NULL;
    if ((long)len > ZOO_MAX_FILE) {
        free(buf);
        hw_fail(err, HW_E_BAD_CONFIG, "%s: larger than %ld bytes", path, ZOO_MAX_FILE);
        return NULL;
    }
    return parse_owned(buf, len, path, err);
}

hw_model *hw_zoo_parse(const char *text, size_t len, const char *name, hw_err *err) {
    if ((long)len > ZOO_MAX_FILE) {
        hw_fail(err, HW_E_LIMIT, "%s: larger than %ld bytes", name, ZOO_MAX_FILE);
        return NULL;
    }
    char *buf = malloc(len + 1);
    if (!buf) {
        hw_fail(err, HW_E_LIMIT, "%s: out of memory", name);
        return NULL;
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    return parse_owned(buf, len, name, err);
}

/* Parses (and frees) buf, len bytes; `path` names the model and prefixes errors. */
static hw_model *parse_owned(char *buf, size_t len, const char *path, hw_err *err) {
    hw_layer *L = NULL;
    int n = 0, lcap = 0;
    buf[len] = 0;
    if (memchr(buf, 0, len)) {
        free(buf);
        hw_fail(err, HW_E_BAD_CONFIG, "%s: binary file (NUL byte)", path);
        return NULL;
    }

    char mname[64];
    base_name(path, mname, sizeof mname);
    int colmap[F_COUNT + 1]; /* header position -> field */
    int ncols = 0, have_header = 0, lineno = 0;
    int hdr_line = 0;
    char *line = buf;
    if (!strncmp(line, "\xEF\xBB\xBF", 3)) line += 3; /* UTF-8 byte order mark */
#define LFAIL(...)                                                                                                     \
    do {                                                                                                               \
        char m_[HW_ERR_MSG];                                                                                           \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                                          \
        hw_fail(err, HW_E_BAD_CONFIG, "%s:%d: %s", path, lineno, m_);                                                  \
        goto fail;                                                                                                     \
    } while (0)
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *next = nl ? nl + 1 : NULL;
        lineno++;
        char *t = trim(line);
        line = next;
        if (!*t) continue;
        if (*t == '#') {
            if (!have_header) {
                char *v = t + 1;
                while (*v == ' ') v++;
                if (!strncmp(v, "model:", 6)) {
                    v = trim(v + 6);
                    if (!*v || strlen(v) >= sizeof mname) LFAIL("'# model:' needs a name of 1..63 characters");
                    strcpy(mname, v);
                }
            }
            continue;
        }
        char *cells[F_COUNT + 2];
        int nc = split(t, ',', cells, F_COUNT + 1);
        if (!have_header) {
            if (nc > F_COUNT) LFAIL("header: more than %d columns", F_COUNT);
            int seen[F_COUNT] = {0};
            for (int i = 0; i < nc; i++) {
                int fidx = -1;
                for (int k = 0; k < F_COUNT; k++)
                    if (!strcasecmp(cells[i], col_names[k])) fidx = k;
                if (fidx < 0) LFAIL("header: unknown column '%.40s' (known: name,op,N,K,C,R,S,Y,X,Yo,Xo,stride,pad,pad_x,dilation,groups,inputs)", cells[i]);
                if (seen[fidx]) LFAIL("header: column '%s' twice", col_names[fidx]);
                seen[fidx] = 1;
                colmap[i] = fidx;
            }
            for (int k = 0; k < F_COUNT; k++)
                if (col_required[k] && !seen[k]) LFAIL("header: missing column '%s'", col_names[k]);
            ncols = nc;
            have_header = 1;
            hdr_line = lineno;
            continue;
        }
        if (nc != ncols) LFAIL("expected %d fields (as in the header on line %d), got %d%s", ncols, hdr_line, nc > F_COUNT ? F_COUNT + 1 : nc, nc > F_COUNT ? " or more" : "");
        if (n >= ZOO_MAX_LAYERS) LFAIL("more than %d layers", ZOO_MAX_LAYERS);
        if (n == lcap) {
            lcap = lcap ? lcap * 2 : 64;
            hw_layer *nl2 = realloc(L, (size_t)lcap * sizeof *L);
            if (!nl2) goto oom;
            L = nl2;
        }
        hw_layer *l = &L[n];
        memset(l, 0, sizeof *l);
        const char *cell[F_COUNT];
        for (int k = 0; k < F_COUNT; k++) cell[k] = "";
        for (int i = 0; i < nc; i++) cell[colmap[i]] = cells[i];
        /* name, op */
        if (!*cell[F_NAME]) LFAIL("field 'name': empty");
        if (strlen(cell[F_NAME]) >= sizeof l->name) LFAIL("field 'name': longer than %zu characters", sizeof l->name - 1);
        if (strpbrk(cell[F_NAME], ";\"")) LFAIL("field 'name': may not contain ';' or '\"'");
        strcpy(l->name, cell[F_NAME]);
        int op = hw_op_from_name(cell[F_OP]);
        if (op < 0)
            LFAIL("field 'op': unknown op '%.32s' (conv, dwconv, fc, matmul, pool, eltwise, softmax, norm, concat, upsample, embed)",
                  cell[F_OP]);
        l->op = (hw_op)op;
        /* integers */
        static const int ints[] = {F_N, F_K, F_C, F_R, F_S, F_Y, F_X, F_YO, F_XO, F_STRIDE, F_PAD, F_PADX, F_DIL, F_GROUPS};
        long v[F_COUNT];
        int given[F_COUNT] = {0};
        for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
            int fi = ints[k];
            if (!*cell[fi]) {
                if (col_required[fi]) LFAIL("field '%s': empty", col_names[fi]);
                continue;
            }
            if (parse_int(cell[fi], &v[fi])) LFAIL("field '%s': expected an integer, got '%.32s'", col_names[fi], cell[fi]);
            given[fi] = 1;
        }
        l->N = given[F_N] ? (int)v[F_N] : 1;
        l->K = (int)v[F_K];
        l->C = (int)v[F_C];
        l->R = given[F_R] ? (int)v[F_R] : 1;
        l->S = given[F_S] ? (int)v[F_S] : 1;
        l->Y = (int)v[F_Y];
        l->X = (int)v[F_X];
        l->stride = given[F_STRIDE] ? (int)v[F_STRIDE] : 1;
        l->pad = given[F_PAD] ? (int)v[F_PAD] : 0;
        l->pad_x = given[F_PADX] ? (int)v[F_PADX] : l->pad;
        l->dilation = given[F_DIL] ? (int)v[F_DIL] : 1;
        l->groups = given[F_GROUPS] ? (int)v[F_GROUPS] : (l->op == HW_OP_DWCONV ? l->C : 1);
        /* Output size: computed when the cell is empty (validation below checks given ones). */
        long long ey = l->Y, ex = l->X;
        if (l->op == HW_OP_CONV || l->op == HW_OP_DWCONV || l->op == HW_OP_POOL) {
            if (l->stride > 0 && l->dilation > 0) {
                ey = ((long long)l->Y + 2LL * l->pad - (long long)l->dilation * (l->R - 1) - 1) / l->stride + 1;
                ex = ((long long)l->X + 2LL * l->pad_x - (long long)l->dilation * (l->S - 1) - 1) / l->stride + 1;
            }
        } else if (l->op == HW_OP_UPSAMPLE) {
            ey = (long long)l->Y * l->stride;
            ex = (long long)l->X * l->stride;
        }
        l->Yo = given[F_YO] ? (int)v[F_YO] : (ey > INT_MAX || ey < INT_MIN ? 0 : (int)ey);
        l->Xo = given[F_XO] ? (int)v[F_XO] : (ex > INT_MAX || ex < INT_MIN ? 0 : (int)ex);
        /* inputs */
        char ibuf[1024];
        if (strlen(cell[F_INPUTS]) >= sizeof ibuf) LFAIL("field 'inputs': too long");
        strcpy(ibuf, cell[F_INPUTS]);
        if (!ibuf[0]) {
            l->n_in = 1;
            l->in[0] = n - 1;
        } else {
            char *toks[HW_LAYER_MAX_IN + 1];
            int nt = split(ibuf, ';', toks, HW_LAYER_MAX_IN);
            if (nt > HW_LAYER_MAX_IN) LFAIL("field 'inputs': more than %d producers", HW_LAYER_MAX_IN);
            for (int j = 0; j < nt; j++) {
                long x;
                if (!*toks[j]) LFAIL("field 'inputs': empty producer in '%.64s'", cell[F_INPUTS]);
                if (!parse_int(toks[j], &x)) {
                    if (x < -1 || x >= n)
                        LFAIL("field 'inputs': %ld is not an earlier layer index (0..%d) or -1 (graph input)", x, n - 1);
                } else {
                    x = -2;
                    for (int q = n - 1; q >= 0; q--)
                        if (!strcmp(L[q].name, toks[j])) {
                            x = q;
                            break;
                        }
                    if (x == -2 && !strcasecmp(toks[j], "input")) x = -1;
                    if (x == -2) LFAIL("field 'inputs': no earlier layer named '%.63s'", toks[j]);
                }
                l->in[j] = (int)x;
            }
            l->n_in = nt;
        }
        hw_err e2;
        if (hw_layer_validate(l, n, &e2)) LFAIL("%s", e2.msg);
        n++;
    }
    if (!have_header) {
        lineno = 0;
        free(buf);
        free(L);
        hw_fail(err, HW_E_BAD_CONFIG, "%s: no header line (expected name,op,N,K,C,R,S,Y,X,Yo,Xo,stride,pad,dilation,groups,inputs)", path);
        return NULL;
    }
    if (n == 0) {
        free(buf);
        free(L);
        hw_fail(err, HW_E_BAD_CONFIG, "%s: no layers", path);
        return NULL;
    }
    zoo_owned *o = malloc(sizeof *o + (size_t)n * sizeof(hw_layer));
    if (!o) goto oom;
    memcpy(o->layers, L, (size_t)n * sizeof(hw_layer));
    strcpy(o->name, mname);
    o->m.name = o->name;
    o->m.n = n;
    o->m.layers = o->layers;
    free(buf);
    free(L);
    return &o->m;
#undef LFAIL
oom:
    free(buf);
    free(L);
    hw_fail(err, HW_E_INTERNAL, "%s: out of memory", path);
    return NULL;
fail:
    free(buf);
    free(L);
    return NULL;
}

void hw_zoo_free(hw_model *m) {
    if (!m) return;
    if (m >= (hw_model *)hw_zoo_builtin && m < (hw_model *)hw_zoo_builtin + HW_ZOO_NBUILTIN) return;
    free((zoo_owned *)m);
}

int hw_zoo_write_file(const hw_model *m, const char *path, hw_err *err) {
    if (!m || !path) return hw_fail(err, HW_E_IO, "zoo write: no model or path");
    FILE *f = fopen(path, "w");
    if (!f) return hw_fail(err, HW_E_IO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "# model: %s\n", m->name ? m->name : "model");
    for (int k = 0; k < F_COUNT; k++) fprintf(f, "%s%s", k ? "," : "", col_names[k]);
    fputc('\n', f);
    for (int i = 0; i < m->n; i++) {
        const hw_layer *l = &m->layers[i];
        fprintf(f, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,", l->name, hw_op_name(l->op), l->N, l->K, l->C,
                l->R, l->S, l->Y, l->X, l->Yo, l->Xo, l->stride, l->pad, l->pad_x, l->dilation, l->groups);
        for (int j = 0; j < l->n_in && j < HW_LAYER_MAX_IN; j++) fprintf(f, "%s%d", j ? ";" : "", l->in[j]);
        fputc('\n', f);
    }
    if (fclose(f)) return hw_fail(err, HW_E_IO, "%s: write failed", path);
    return 0;
}
