/* maestro_parse.c - parsers for MAESTRO's inputs: dataflow directive text, network (.m)
 * files and HW files. Tokens are separated by " ,->():\t;" as in MAESTRO, plus braces. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hw_files.h"
#include "maestro.h"

#define TOK_MAX 48

#define MAX_CONST 64

typedef struct {
    const char *p;
    int line;
    char tok[TOK_MAX];
    int nconst; /* `Constant NAME VALUE;` declarations */
    char cname[MAX_CONST][TOK_MAX];
    int cval[MAX_CONST];
} lexer;

/* dimension names as a layer type spells them (GEMM: M, N, K) */
static int dim_for(const char *name, const maestro_layer *l) {
    if (l && l->type == MAESTRO_GEMM) {
        if (strcmp(name, "M") == 0) return MD_Y;
        if (strcmp(name, "N") == 0) return MD_K;
        if (strcmp(name, "K") == 0) return MD_C;
        return -1;
    }
    return maestro_dim_from_name(name);
}

static bool is_sep(char ch) { return strchr(" ,->():\t;\r\n", ch) != NULL; }

/* next token into lx->tok; returns false at the end */
static bool lex_next(lexer *lx) {
    for (;;) {
        while (*lx->p && is_sep(*lx->p)) {
            if (*lx->p == '\n') lx->line++;
            lx->p++;
        }
        if (lx->p[0] == '/' && lx->p[1] == '/') {
            while (*lx->p && *lx->p != '\n') lx->p++;
            continue;
        }
        break;
    }
    if (!*lx->p) return false;
    size_t n = 0;
    if (*lx->p == '{' || *lx->p == '}') {
        lx->tok[n++] = *lx->p++;
    } else {
        while (*lx->p && !is_sep(*lx->p) && *lx->p != '{' && *lx->p != '}' && !(lx->p[0] == '/' && lx->p[1] == '/')) {
            if (n + 1 < TOK_MAX) lx->tok[n++] = *lx->p;
            lx->p++;
        }
    }
    lx->tok[n] = 0;
    return true;
}

static bool parse_int(const char *s, long *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno) return false;
    *out = v;
    return true;
}

/* an integer literal or a declared Constant */
static bool value_of(const lexer *lx, const char *tok, long *out) {
    for (int i = 0; i < lx->nconst; i++)
        if (strcmp(tok, lx->cname[i]) == 0) {
            *out = lx->cval[i];
            return true;
        }
    return parse_int(tok, out);
}

/* size or offset: an integer or Sz(D) */
static int parse_amount(lexer *lx, const maestro_layer *l, const char *what, int *out, hw_err *err) {
    if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: missing %s", lx->line, what);
    if (strcmp(lx->tok, "Sz") == 0) {
        if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Sz() needs a dimension", lx->line);
        int d = dim_for(lx->tok, l);
        if (d < 0 || !l) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Sz(%s): unknown dimension", lx->line, lx->tok);
        *out = l->dim[d];
        return 0;
    }
    long v;
    for (int i = 0; i < lx->nconst; i++)
        if (strcmp(lx->tok, lx->cname[i]) == 0) {
            *out = lx->cval[i];
            return 0;
        }
    if (!parse_int(lx->tok, &v) || v <= 0 || v > 1000000000)
        return hw_fail(err, HW_E_BAD_CONFIG, "line %d: %s '%s' must be a positive integer", lx->line, what, lx->tok);
    *out = (int)v;
    return 0;
}

static bool is_dir_kw(const char *t) {
    return strcmp(t, "SpatialMap") == 0 || strcmp(t, "TemporalMap") == 0 || strcmp(t, "Cluster") == 0;
}

/* parses directives until '}' (consumed) or the end; *closed says which */
static int parse_dirs(lexer *lx, const maestro_layer *l, maestro_mapping *m, bool *closed, hw_err *err) {
    m->n = 0;
    *closed = false;
    bool have = lex_next(lx);
    while (have) {
        if (strcmp(lx->tok, "}") == 0) {
            *closed = true;
            return 0;
        }
        if (!is_dir_kw(lx->tok))
            return hw_fail(err, HW_E_BAD_CONFIG, "line %d: expected SpatialMap, TemporalMap or Cluster, got '%s'", lx->line, lx->tok);
        if (m->n >= MAESTRO_MAX_DIRS) return hw_fail(err, HW_E_LIMIT, "more than %d directives", MAESTRO_MAX_DIRS);
        maestro_directive *d = &m->d[m->n];
        memset(d, 0, sizeof *d);
        if (strcmp(lx->tok, "Cluster") == 0) {
            d->kind = MDIR_CLUSTER;
            if (parse_amount(lx, l, "cluster size", &d->size, err)) return -1;
            d->ofs = d->size;
            have = lex_next(lx);
            if (have && (strcmp(lx->tok, "P") == 0 || strcmp(lx->tok, "L") == 0)) {
                d->logical = lx->tok[0] == 'L';
                have = lex_next(lx);
            }
            m->n++;
            continue;
        }
        d->kind = strcmp(lx->tok, "SpatialMap") == 0 ? MDIR_SPATIAL : MDIR_TEMPORAL;
        if (parse_amount(lx, l, "map size", &d->size, err)) return -1;
        if (parse_amount(lx, l, "map offset", &d->ofs, err)) return -1;
        if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: directive without a dimension", lx->line);
        int dim = dim_for(lx->tok, l);
        if (dim < 0) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: unknown dimension '%s'", lx->line, lx->tok);
        d->dim = (unsigned char)dim;
        /* MAESTRO's parse-time rule (DFSL parser): a TemporalMap over R or S must cover it */
        if (d->kind == MDIR_TEMPORAL && (dim == MD_R || dim == MD_S)) {
            if (d->size != d->ofs)
                return hw_fail(err, HW_E_BAD_CONFIG,
                               "Invalid mapping: Tile size of %s(%d) should be equal to tile offset of %s(%d)",
                               lx->tok, d->size, lx->tok, d->ofs);
            if (l && l->dim[dim] != d->size)
                return hw_fail(err, HW_E_BAD_CONFIG,
                               "Invalid mapping: Tile size of %s(%d) should be equal to dimension size of %s(%d)",
                               lx->tok, d->size, lx->tok, l->dim[dim]);
        }
        m->n++;
        have = lex_next(lx);
    }
    return 0;
}

int maestro_parse_directives(const char *text, const maestro_layer *l, maestro_mapping *m, hw_err *err) {
    lexer lx = {.p = text, .line = 1};
    bool closed;
    if (parse_dirs(&lx, l, m, &closed, err)) return -1;
    if (closed) return hw_fail(err, HW_E_BAD_CONFIG, "unexpected '}' in directives");
    if (m->n == 0) return hw_fail(err, HW_E_BAD_CONFIG, "no directives");
    return 0;
}

int maestro_mapping_to_text(const maestro_mapping *m, char *buf, size_t cap) {
    return maestro_mapping_to_text_for(m, MAESTRO_CONV, buf, cap);
}

/* The mapping text is in every maestro-v0 step's info: written by hand (snprintf was a fifth of
 * a step's instructions), straight into buf when it has room for the longest text the directives
 * can make (DIR_TEXT_MAX each), else into a local buffer copied over truncated as snprintf
 * truncates. */
#define DIR_TEXT_MAX 48 /* " TemporalMap(-2147483648,-2147483648) Y';" is 41 bytes */

static char *put_lit(char *p, const char *s, size_t n) {
    memcpy(p, s, n);
    return p + n;
}

static inline __attribute__((always_inline)) char *put_i(char *p, int v) {
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    if (v < 0) *p++ = '-';
    if (u < 10) {
        *p++ = (char)('0' + u);
        return p;
    }
    if (u < 100) {
        p[0] = (char)('0' + u / 10), p[1] = (char)('0' + u % 10);
        return p + 2;
    }
    if (u < 1000) {
        p[0] = (char)('0' + u / 100), p[1] = (char)('0' + u / 10 % 10), p[2] = (char)('0' + u % 10);
        return p + 3;
    }
    char t[12];
    int n = 0;
    do t[n++] = (char)('0' + u % 10);
    while (u /= 10);
    while (n) *p++ = t[--n];
    return p;
}

/* a directive's text after its offset, ") <dimension name>;", per dimension and layer kind
 * (maestro_dim_name_for's names; "?" out of range), 4 or 5 bytes */
typedef struct {
    char s[8];
    unsigned char n;
} dir_tail;
static const dir_tail tail_conv[MD_NDIM + 1] = {{") N;", 4},  {") K;", 4},   {") C;", 4},   {") R;", 4}, {") S;", 4}, {") Y;", 4},
                                                {") X;", 4},  {") Y';", 5},  {") X';", 5},  {") G;", 4}, {") ?;", 4}};
static const dir_tail tail_gemm[MD_NDIM + 1] = {{") N;", 4},  {") N;", 4},   {") K;", 4},   {") R;", 4}, {") S;", 4}, {") M;", 4},
                                                {") X;", 4},  {") Y';", 5},  {") X';", 5},  {") G;", 4}, {") ?;", 4}};

int maestro_mapping_to_text_for(const maestro_mapping *m, maestro_ltype t, char *buf, size_t cap) {
    char local[MAESTRO_MAX_DIRS * DIR_TEXT_MAX + 1];
    int nd = m->n < 0 ? 0 : m->n > MAESTRO_MAX_DIRS ? MAESTRO_MAX_DIRS : m->n;
    char *start = cap > (size_t)nd * DIR_TEXT_MAX ? buf : local, *p = start;
    const dir_tail *tails = t == MAESTRO_GEMM ? tail_gemm : tail_conv;
    for (int i = 0; i < nd; i++) {
        const maestro_directive *d = &m->d[i];
        if (i) *p++ = ' ';
        if (d->kind == MDIR_CLUSTER) {
            p = put_lit(p, "Cluster(", 8);
            p = put_i(p, d->size);
            p = put_lit(p, d->logical ? ", L);" : ", P);", 5);
            continue;
        }
        /* the map's name, 12 bytes written, 11 or 12 kept (the size's digits follow) */
        memcpy(p, d->kind == MDIR_SPATIAL ? "SpatialMap((" : "TemporalMap(", 12);
        p += d->kind == MDIR_SPATIAL ? 11 : 12;
        p = put_i(p, d->size);
        *p++ = ',';
        p = put_i(p, d->ofs);
        const dir_tail *tl = &tails[d->dim < MD_NDIM ? d->dim : MD_NDIM];
        memcpy(p, tl->s, 4); /* nothing past the text is written (snprintf's contract) */
        if (tl->n == 5) p[4] = tl->s[4];
        p += tl->n;
    }
    size_t len = (size_t)(p - start);
    if (start == local && cap) {
        size_t n = len < cap ? len : cap - 1;
        memcpy(buf, local, n);
        buf[n] = 0;
    } else if (cap) {
        buf[len] = 0;
    }
    return len < cap ? 0 : -1;
}

static int expect(lexer *lx, const char *want, hw_err *err) {
    if (!lex_next(lx) || strcmp(lx->tok, want) != 0)
        return hw_fail(err, HW_E_BAD_CONFIG, "line %d: expected '%s'", lx->line, want);
    return 0;
}

static int parse_layer(lexer *lx, maestro_net_layer *nl, hw_err *err) {
    maestro_layer *l = &nl->layer;
    char name[MAESTRO_NAME] = "Layer";
    /* MAESTRO keeps the last token before '{' ("Conv2d-1" is two tokens: the name is "1") */
    for (;;) {
        if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Layer without a body", lx->line);
        if (strcmp(lx->tok, "{") == 0) break;
        snprintf(name, sizeof name, "%s", lx->tok);
    }
    maestro_layer_init(l, MAESTRO_CONV, name);
    nl->map.n = 0;
    bool have_dims = false, have_oy = false, have_ox = false, have_y = false, have_x = false;
    int oy = 0, ox = 0;
    while (lex_next(lx)) {
        if (strcmp(lx->tok, "}") == 0) {
            if (!have_dims) return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: no Dimensions block", name);
            return 0;
        }
        if (strcmp(lx->tok, "Type") == 0) {
            if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Type without a value", lx->line);
            if (strcmp(lx->tok, "CONV") == 0 || strcmp(lx->tok, "FC") == 0) l->type = MAESTRO_CONV;
            else if (strcmp(lx->tok, "DSCONV") == 0) l->type = MAESTRO_DSCONV;
            else if (strcmp(lx->tok, "GEMM") == 0) l->type = MAESTRO_GEMM;
            else if (strcmp(lx->tok, "NGCONV") == 0) l->type = MAESTRO_NGCONV;
            else if (strcmp(lx->tok, "TRCONV") == 0) l->type = MAESTRO_CONV; /* MAESTRO: a CONV (its inner stride is unused) */
            else
                return hw_fail(err, HW_E_NOT_SUPPORTED, "layer %s: layer type %s is not supported (CONV, DSCONV, FC, GEMM, NGCONV, TRCONV)",
                               name, lx->tok);
        } else if (strcmp(lx->tok, "Stride") == 0) {
            if (have_dims) return hw_fail(err, HW_E_BAD_CONFIG, "[Error] Stride description must precede to dimension description (layer %s)", name);
            if (expect(lx, "{", err)) return -1;
            while (lex_next(lx) && strcmp(lx->tok, "}") != 0) {
                char dn[TOK_MAX];
                snprintf(dn, sizeof dn, "%s", lx->tok);
                long v;
                if (!lex_next(lx) || !value_of(lx, lx->tok, &v) || v < 1 || v > 1000000)
                    return hw_fail(err, HW_E_BAD_CONFIG, "[Error] Stride must be a positive integer value (layer %s)", name);
                if (strcmp(dn, "X") == 0) l->stride_x = (int)v;
                else if (strcmp(dn, "Y") == 0) l->stride_y = (int)v;
            }
        } else if (strcmp(lx->tok, "Dimensions") == 0) {
            if (expect(lx, "{", err)) return -1;
            while (lex_next(lx) && strcmp(lx->tok, "}") != 0) {
                int d = dim_for(lx->tok, l);
                char dn[TOK_MAX];
                snprintf(dn, sizeof dn, "%s", lx->tok);
                long v;
                if (!lex_next(lx) || !value_of(lx, lx->tok, &v))
                    return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: dimension %s needs a positive integer size", name, dn);
                if (v < 1 || v > 100000000)
                    return hw_fail(err, HW_E_BAD_CONFIG,
                                   "layer %s: dimension %s = %ld is out of range: sizes must be 1 .. 100000000 (1e8, "
                                   "this model's limit)",
                                   name, dn, v);
                if (d < 0) return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: unknown dimension %s", name, dn);
                if (d == MD_YP) have_oy = true, oy = (int)v;
                else if (d == MD_XP) have_ox = true, ox = (int)v;
                else {
                    l->dim[d] = (int)v;
                    if (d == MD_N && l->type != MAESTRO_GEMM) l->has_n = true;
                    if (d == MD_Y) have_y = true;
                    if (d == MD_X) have_x = true;
                }
            }
            if ((have_oy && have_y) || (have_ox && have_x))
                return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: give Y/X or Y'/X', not both (MAESTRO: DoubleDimDefinition)", name);
            if (have_oy) l->dim[MD_Y] = oy + l->dim[MD_R] - 1;
            if (have_ox) l->dim[MD_X] = ox + l->dim[MD_S] - 1;
            maestro_layer_finish(l);
            have_dims = true;
        } else if (strcmp(lx->tok, "Dataflow") == 0) {
            if (!have_dims) return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: Dataflow before Dimensions", name);
            if (expect(lx, "{", err)) return -1;
            bool closed;
            if (parse_dirs(lx, l, &nl->map, &closed, err)) {
                char tmp[HW_ERR_MSG];
                snprintf(tmp, sizeof tmp, "layer %s", name);
                hw_err_prefix(err, tmp);
                return -1;
            }
            if (!closed) return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: unterminated Dataflow block", name);
        } else {
            return hw_fail(err, HW_E_BAD_CONFIG, "line %d: unexpected '%s' in layer %s", lx->line, lx->tok, name);
        }
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "layer %s: unterminated", name);
}

static int parse_network_body(lexer *plx, maestro_net *net, hw_err *err);

int maestro_parse_network(const char *text, maestro_net *net, hw_err *err) {
    memset(net, 0, sizeof *net);
    static const lexer zero;
    lexer *lxp = malloc(sizeof *lxp);
    if (!lxp) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    *lxp = zero;
    lxp->p = text, lxp->line = 1;
    int rc = parse_network_body(lxp, net, err);
    free(lxp);
    return rc;
}

static int parse_constant(lexer *lx, hw_err *err) {
    char nm[TOK_MAX];
    long v;
    if (!lex_next(lx)) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Constant without a name", lx->line);
    snprintf(nm, sizeof nm, "%s", lx->tok);
    if (!lex_next(lx) || !parse_int(lx->tok, &v) || v <= 0 || v > 1000000000)
        return hw_fail(err, HW_E_BAD_CONFIG, "line %d: Constant %s needs a positive integer", lx->line, nm);
    if (lx->nconst >= MAX_CONST) return hw_fail(err, HW_E_LIMIT, "more than %d constants", MAX_CONST);
    snprintf(lx->cname[lx->nconst], TOK_MAX, "%s", nm);
    lx->cval[lx->nconst++] = (int)v;
    return 0;
}

static int parse_network_body(lexer *plx, maestro_net *net, hw_err *err) {
#define lx (*plx)
    for (;;) {
        if (!lex_next(&lx)) return hw_fail(err, HW_E_BAD_CONFIG, "expected 'Network'");
        if (strcmp(lx.tok, "Constant") == 0) {
            if (parse_constant(&lx, err)) return -1;
            continue;
        }
        if (strcmp(lx.tok, "Network") != 0) return hw_fail(err, HW_E_BAD_CONFIG, "line %d: expected 'Network', got '%s'", lx.line, lx.tok);
        break;
    }
    for (;;) { /* MAESTRO keeps the last token before '{' as the name */
        if (!lex_next(&lx)) return hw_fail(err, HW_E_BAD_CONFIG, "Network without a body");
        if (strcmp(lx.tok, "{") == 0) break;
        snprintf(net->name, sizeof net->name, "%s", lx.tok);
    }
    int cap = 0;
    while (lex_next(&lx)) {
        if (strcmp(lx.tok, "}") == 0) return 0;
        if (strcmp(lx.tok, "Constant") == 0) {
            if (parse_constant(&lx, err)) {
                maestro_net_free(net);
                return -1;
            }
            continue;
        }
        if (strcmp(lx.tok, "Layer") != 0) {
            maestro_net_free(net);
            return hw_fail(err, HW_E_BAD_CONFIG, "line %d: expected 'Layer', got '%s'", lx.line, lx.tok);
        }
        if (net->n == cap) {
            cap = cap ? cap * 2 : 8;
            maestro_net_layer *nl = realloc(net->layers, sizeof *nl * (size_t)cap);
            if (!nl) {
                maestro_net_free(net);
                return hw_fail(err, HW_E_INTERNAL, "out of memory");
            }
            net->layers = nl;
        }
        if (parse_layer(&lx, &net->layers[net->n], err)) {
            maestro_net_free(net);
            return -1;
        }
        /* MAESTRO: a layer without a Dataflow block reuses the previous layer's directives */
        if (net->layers[net->n].map.n == 0 && net->n > 0) net->layers[net->n].map = net->layers[net->n - 1].map;
        net->n++;
    }
    maestro_net_free(net);
    return hw_fail(err, HW_E_BAD_CONFIG, "unterminated Network block");
#undef lx
}

/* local tools only (the hwgym maestro command); the env reads files through hw_files.h */
static char *slurp(const char *path, hw_err *err) { return hw_files_read(&hw_files_local, "file", path, NULL, err); }

int maestro_load_network(const char *path, maestro_net *net, hw_err *err) {
    char *t = slurp(path, err);
    if (!t) return -1;
    int rc = maestro_parse_network(t, net, err);
    free(t);
    return rc;
}

void maestro_net_free(maestro_net *net) {
    free(net->layers);
    net->layers = NULL;
    net->n = 0;
}

int maestro_parse_hw(const char *text, maestro_hw *h, hw_err *err) {
    lexer lx = {.p = text, .line = 1};
    while (lex_next(&lx)) {
        char key[TOK_MAX];
        snprintf(key, sizeof key, "%s", lx.tok);
        long v;
        if (!lex_next(&lx) || !parse_int(lx.tok, &v) || v < 0 || v > 2000000000L)
            return hw_fail(err, HW_E_BAD_CONFIG, "HW file line %d: %s needs a non-negative integer", lx.line, key);
        if (strcmp(key, "num_pes") == 0) h->num_pes = (int)v;
        else if (strcmp(key, "l1_size_cstr") == 0) h->l1_size = v;
        else if (strcmp(key, "l2_size_cstr") == 0) h->l2_size = v;
        else if (strcmp(key, "noc_bw_cstr") == 0) h->noc_bw = (int)v;
        else if (strcmp(key, "offchip_bw_cstr") == 0) h->offchip_bw = (int)v;
        else if (strcmp(key, "NoC_NumHops") == 0) h->noc_latency = (int)v;
        else return hw_fail(err, HW_E_BAD_CONFIG, "HW file line %d: unknown key '%s'", lx.line, key);
    }
    return 0;
}

int maestro_load_hw(const char *path, maestro_hw *h, hw_err *err) {
    char *t = slurp(path, err);
    if (!t) return -1;
    int rc = maestro_parse_hw(t, h, err);
    free(t);
    return rc;
}
