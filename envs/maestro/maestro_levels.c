/* maestro_levels.c - cluster construction for the MAESTRO cost model: splits a mapping at its
 * Cluster directives into levels and applies MAESTRO's rewrites per level (input-centric Y/X,
 * inherited and unrolled missing directives, outer stride), then the static per-level analysis
 * (edge sub-clusters, mapped/unique sizes). Also fixes the tensors' coupled variables for the
 * layer type. Runs once per evaluation; see maestro_internal.h for the types. */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "maestro_internal.h"

/* snprintf for the model's reasons, without stdio for the conversions they use (%d, %ld, %lld,
 * %s): a rejected or infeasible mapping's reason is in every such step's info, and formatting it
 * with vsnprintf was a twentieth of maestro-v0's step. Any other conversion (a width, %g) goes to
 * vsnprintf. Truncates as snprintf does and returns what snprintf returns. */
static int vformat(char *dst, size_t cap, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    size_t n = 0;
    for (const char *f = fmt; *f; f++) {
        char num[24];
        const char *s = num;
        size_t len;
        if (*f != '%') { /* the text up to the next conversion */
            s = f, len = (size_t)(strchrnul(f, '%') - f);
            f += len - 1;
        } else {
            int longs = 0;
            for (f++; *f == 'l' && longs < 2; f++) longs++;
            if (*f == 'd') {
                long long v = longs == 0 ? va_arg(ap, int) : longs == 1 ? va_arg(ap, long) : va_arg(ap, long long);
                len = (size_t)format_digits(v), s = num + sizeof num - len;
                format_put(num + sizeof num, v);
            } else if (*f == 's' && !longs) {
                s = va_arg(ap, const char *);
                if (!s) s = "(null)";
                len = strlen(s);
            } else if (*f == '%' && !longs) {
                s = f, len = 1;
            } else {
                int r = vsnprintf(dst, cap, fmt, again);
                va_end(again);
                return r;
            }
        }
        if (n < cap) memcpy(dst + n, s, len < cap - n ? len : cap - n);
        n += len;
    }
    va_end(again);
    if (cap) dst[n < cap ? n : cap - 1] = 0;
    return (int)n;
}

int maestro_format(char *dst, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vformat(dst, cap, fmt, ap);
    va_end(ap);
    return r;
}

/* Sets the context's rejection reason (every check of the model, here and in maestro_model.c,
 * fails through it; it lives in this lower file so the model calls down only). */
int maestro_fail(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vformat(c->reason, 200, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---------- static cluster analysis (once per mapping) ---------- */
static void spatial_edge_clusters(level *L) {
    const maestro_directive *sp = &L->d[L->spidx];
    int dim = L->sd.dims[sp->dim], size = sp->size, ofs = sp->ofs, cs = L->csize;
    int full = ofs * (cs - 1) + size;
    int ne = 1;
    if (dim > full) {
        int nsteady = ((dim - size) / ofs + 1) / cs - 1;
        int rem = dim - (nsteady + 1) * ofs * cs;
        ne = rem < size ? 1 : (rem - size) / ofs + 1;
    } else if (dim > size) {
        ne = (dim - size) / ofs + 1;
        if (ofs * (ne - 1) + size < dim) ne++;
    }
    if (dim <= size) ne = 1;
    L->nedge = ne;
}

/* a directive's mapped, unique and edge sizes (its variable's, the last directive over it wins) */
static void directive_sizes(level *L, const maestro_directive *d) {
    int v = d->dim, size = d->size, ofs = d->ofs, dim = L->sd.dims[v];
    int ns = (dim - size) / ofs;
    if (ns < 0) ns = 0;
    bool has_edge = (ns * ofs + size < dim) || (size > dim);
    L->mapped[v] = size;
    L->unique[v] = size < ofs ? size : ofs;
    if (d->kind == MDIR_TEMPORAL && dim <= size) L->unique[v] = 0;
    int em = dim - (ns + 1) * ofs;
    if (em < 0) em = dim;
    int oob = size - em;
    L->medge[v] = has_edge ? em : size;
    L->uedge[v] = ofs - oob > 0 ? ofs - oob : 0;
}

/* Y'/X' (out) from the last directive over Y/X (v) and the filter's sizes (CONV) */
static void output_sizes(level *L, int v) {
    const maestro_directive *d = &L->d[L->last[v]];
    int sl = counterpart(v), out = v == MD_Y ? MD_YP : MD_XP;
    L->mapped[out] = L->mapped[v] - L->mapped[sl] + 1;
    L->unique[out] = d->ofs < d->size ? d->ofs : d->size;
    L->medge[out] = L->medge[v] - L->medge[sl] + 1;
    L->uedge[out] = d->ofs < L->medge[out] ? d->ofs : L->medge[out];
}

/* The level's index (first, last, spidx), the checks MAESTRO makes of it (it terminates: -1 with
 * the reason), its edge sub-clusters, mapping sizes and per-case lookups (var, lt, pk, spd, ov, oa,
 * osp), from L->d, nd, csize, conv and sd: the lookups and checks in one pass over the
 * directives, the sizes in a second once the checks passed. */
static int scan_level(ctx *c, level *L, int lvl) {
    const varlist *tv = c->tv;
    ltensor *T = L->lt;
    memset(L->first, 0xff, sizeof L->first); /* -1 */
    memset(L->last, 0xff, sizeof L->last);
    const unsigned m0 = tv[0].mask, m1 = tv[1].mask, m2 = tv[2].mask;
    for (int t = 0; t < MT_N; t++) T[t].mask = tv[t].mask, T[t].nsp = 0;
    int n0 = 0, n1 = 0, n2 = 0, npk = 0; /* the lists' lengths */
    L->nspd = 0;
    L->spidx = -1;
    unsigned vars = 0;
    const unsigned ok = L->sd.has & ~(1u << MD_YP | 1u << MD_XP); /* the variables a directive may be over */
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int v = d->dim;
        if (d->kind == MDIR_SPATIAL) {
            if (L->spidx < 0) L->spidx = k;
            L->spd[L->nspd++] = (unsigned char)k;
        }
        unsigned bit = 1u << v;
        if (!(ok & bit)) {
            if (v == MD_YP || v == MD_XP)
                return maestro_fail(c, "directive over %s at cluster level %d: give Y/X or Y'/X', not both", maestro_dim_name_for(v, c->l->type), lvl);
            return maestro_fail(c, "dimension %s is not defined at cluster level %d", maestro_dim_name_for(v, c->l->type), lvl);
        }
        if (!(vars & bit)) L->first[v] = k;
        L->last[v] = k;
        vars |= bit;
        if (m0 & bit) T[0].k[n0++] = (unsigned char)k; /* each directive into the lists it belongs to */
        if (m1 & bit) T[1].k[n1++] = (unsigned char)k;
        if (m2 & bit) T[2].k[n2++] = (unsigned char)k;
        else L->pk[npk++] = (unsigned char)k;
    }
    T[0].nk = n0, T[1].nk = n1, T[2].nk = n2, L->npk = npk;
    if (L->nspd == 0) return maestro_fail(c, "no SpatialMap at cluster level %d (MAESTRO: NoSpatialMap)", lvl);
    if (L->nspd > 2) return maestro_fail(c, "more than two SpatialMaps at cluster level %d (MAESTRO: MultiParallelismInSingleCluster)", lvl);
    if (L->csize <= 0) return maestro_fail(c, "cluster level %d has no sub-clusters", lvl);
    spatial_edge_clusters(L);
    memset(L->mapped, 0, sizeof L->mapped);
    memset(L->unique, 0, sizeof L->unique);
    memset(L->medge, 0, sizeof L->medge);
    memset(L->uedge, 0, sizeof L->uedge);
    for (int k = 0; k < L->nd; k++) directive_sizes(L, &L->d[k]);
    if (L->conv && L->last[MD_Y] >= 0) output_sizes(L, MD_Y);
    if (L->conv && L->last[MD_X] >= 0) output_sizes(L, MD_X);
    int nvar = 0;
    L->vmask = vars;
    for (; vars; vars &= vars - 1) L->var[nvar++] = (unsigned char)__builtin_ctz(vars); /* ascending */
    L->nvar = nvar;
    unsigned spfirst = 0; /* the variables whose first directive is a SpatialMap */
    for (int i = 0; i < L->nspd; i++) {
        int k = L->spd[i], v = L->d[k].dim;
        if (L->first[v] == k) spfirst |= 1u << v;
    }
    for (int t = 0; t < MT_N; t++) {
        unsigned sp = spfirst & tv[t].mask;
        if (!(sp & (sp - 1))) { /* none or one: no order to keep */
            if (sp) T[t].sp[T[t].nsp++] = (unsigned char)__builtin_ctz(sp);
            continue;
        }
        for (int i = 0; i < tv[t].n; i++) { /* in the tensor's order */
            int v = tv[t].v[i];
            if ((spfirst >> v) & 1u) T[t].sp[T[t].nsp++] = (unsigned char)v;
        }
    }
    const varlist *ov = &tv[MT_OUT];
    L->nov = ov->n;
    for (int i = 0; i < ov->n; i++) {
        int v = ov->v[i];
        L->ov[i] = (unsigned char)v;
        L->oa[i] = (unsigned char)(!L->conv ? v : v == MD_Y ? MD_YP : v == MD_X ? MD_XP : v);
        L->osp[i] = (spfirst >> v) & 1u;
    }
    return 0;
}

/* ---------- the tensors' variables: a function of the layer type and N alone ---------- */
typedef struct {
    varlist tv[MT_N]; /* coupled variables per tensor */
    varlist invars;   /* sorted input-tensor variables */
} tensor_vars;

static void tensor_vars_of(maestro_ltype type, bool has_n, tensor_vars *tv) {
    bool dw = type == MAESTRO_DSCONV, gemm = type == MAESTRO_GEMM;
    varlist *in = &tv->tv[MT_IN], *w = &tv->tv[MT_W], *o = &tv->tv[MT_OUT];
    memset(tv, 0, sizeof *tv);
    if (gemm) { /* MAESTRO: input {M,K}, weight {K,N}, output {M,N} */
        in->v[in->n++] = MD_Y, in->v[in->n++] = MD_C;
        w->v[w->n++] = MD_C, w->v[w->n++] = MD_K;
        o->v[o->n++] = MD_Y, o->v[o->n++] = MD_K;
    } else if (type == MAESTRO_NGCONV) { /* MAESTRO: {N,G,C,Y,X}, {G,K,C,R,S}, {N,G,K,C,Y,X} */
        if (has_n) in->v[in->n++] = MD_N, o->v[o->n++] = MD_N;
        in->v[in->n++] = MD_G, in->v[in->n++] = MD_C, in->v[in->n++] = MD_Y, in->v[in->n++] = MD_X;
        w->v[w->n++] = MD_G, w->v[w->n++] = MD_K, w->v[w->n++] = MD_C, w->v[w->n++] = MD_R, w->v[w->n++] = MD_S;
        o->v[o->n++] = MD_G, o->v[o->n++] = MD_K, o->v[o->n++] = MD_C, o->v[o->n++] = MD_Y, o->v[o->n++] = MD_X;
    } else {
        if (has_n) in->v[in->n++] = MD_N, o->v[o->n++] = MD_N;
        in->v[in->n++] = MD_C, in->v[in->n++] = MD_Y, in->v[in->n++] = MD_X;
        if (!dw) w->v[w->n++] = MD_K;
        w->v[w->n++] = MD_C, w->v[w->n++] = MD_R, w->v[w->n++] = MD_S;
        o->v[o->n++] = dw ? MD_C : MD_K, o->v[o->n++] = MD_Y, o->v[o->n++] = MD_X;
    }
    for (int t = 0; t < MT_N; t++)
        for (int i = 0; i < tv->tv[t].n; i++) tv->tv[t].mask |= 1u << tv->tv[t].v[i];
    /* sorted unique input vars by MAESTRO's names: C G K N R S X Y, or for GEMM K M N */
    static const int order[] = {MD_C, MD_G, MD_K, MD_N, MD_R, MD_S, MD_X, MD_Y};
    static const int order_gemm[] = {MD_C, MD_Y, MD_K};
    const int *ord = gemm ? order_gemm : order;
    int nord = gemm ? 3 : 8;
    for (int i = 0; i < nord; i++)
        if (in_list(in, ord[i]) || in_list(w, ord[i])) tv->invars.v[tv->invars.n++] = ord[i], tv->invars.mask |= 1u << ord[i];
}

/* every (type, has N) pair's, made once a process: an evaluation copies its layer's */
static tensor_vars tvars[4][2];
static pthread_once_t tvars_once = PTHREAD_ONCE_INIT;

static void tvars_fill(void) {
    for (int t = 0; t < 4; t++)
        for (int n = 0; n < 2; n++) tensor_vars_of((maestro_ltype)t, n, &tvars[t][n]);
}

int maestro_build_levels(ctx *c, const maestro_mapping *m) {
    const maestro_layer *ly = c->l;
    int ncl = 0;
    long U = 1;
    for (int i = 0; i < m->n; i++)
        if (m->d[i].kind == MDIR_CLUSTER) {
            ncl++;
            if (m->d[i].size <= 0) return maestro_fail(c, "Cluster size must be positive (directive %d)", i);
            U *= m->d[i].size;
            if (U > (long)INT_MAX) return maestro_fail(c, "Cluster sizes overflow (directive %d)", i);
        }
    if (ncl >= MAESTRO_MAX_LEVELS)
        return maestro_fail(c, "%d Cluster directives: MAESTRO supports at most 3 (4 NoC levels)", ncl);
    if (c->h->num_pes / U < 1)
        return MAESTRO_FORMAT_NN(c->reason, 200, "the Cluster sizes need ", U, " PEs, more than the ", c->h->num_pes, " the hardware has"), -1;
    /* tensors */
    bool gemm = ly->type == MAESTRO_GEMM, conv = !gemm;
    tensor_vars own;
    const tensor_vars *tvs = &own;
    if ((unsigned)ly->type < 4) {
        pthread_once(&tvars_once, tvars_fill);
        tvs = &tvars[ly->type][ly->has_n];
    } else {
        tensor_vars_of(ly->type, ly->has_n, &own);
    }
    memcpy(c->tv, tvs->tv, sizeof c->tv);
    c->invars = tvs->invars;

    /* full dimensions */
    dimtab full;
    int ostr[MD_NDIM];
    for (int v = 0; v < MD_NDIM; v++) {
        full.dims[v] = ly->dim[v];
        ostr[v] = 1;
    }
    full.has = (1u << MD_NDIM) - 1;
    if (!ly->has_n) full.has &= ~(1u << MD_N);
    if (ly->type != MAESTRO_NGCONV) full.has &= ~(1u << MD_G);
    if (gemm) full.has &= ~(1u << MD_N | 1u << MD_R | 1u << MD_S | 1u << MD_X | 1u << MD_YP | 1u << MD_XP);
    ostr[MD_Y] = ostr[MD_YP] = ly->stride_y;
    ostr[MD_X] = ostr[MD_XP] = ly->stride_x;

    dimtab cur = full;
    int cur_ostr[MD_NDIM];
    memcpy(cur_ostr, ostr, sizeof ostr);
    maestro_directive buf_above[LV_DIRS]; /* a lower level's own directives, before the inherited ones go in front */
    maestro_directive *buf = c->lv[0].d;  /* the top level's: in place (nothing goes in front) */
    int nb = 0;
    unsigned segvars = 0; /* the variables of buf's directives (bit v) */
    const level *prev = NULL;
    int lvl = 0;
    int next_size = c->h->num_pes / (int)U;
    for (int i = 0; i <= m->n; i++) {
        bool closing = (i == m->n) || m->d[i].kind == MDIR_CLUSTER;
        if (!closing) {
            if (nb >= LV_DIRS - 20) return maestro_fail(c, "too many directives in cluster level %d", lvl);
            buf[nb++] = m->d[i];
            segvars |= 1u << m->d[i].dim;
            continue;
        }
        level *L = &c->lv[lvl]; /* every field is set below (no memset: a kilobyte a level) */
        unsigned present = segvars; /* the variables with a directive so far (bit v) */
        /* ConvertToInputCentric: Y'/X' become Y/X when the level has no Y/X */
        if (conv && (segvars & (1u << MD_YP | 1u << MD_XP))) {
            int has_y = 0, has_x = 0, iyp = -1, ixp = -1, rsz = cur.dims[MD_R], ssz = cur.dims[MD_S];
            for (int k = 0; k < nb; k++) {
                int v = buf[k].dim;
                if (v == MD_Y) has_y = 1;
                if (v == MD_X) has_x = 1;
                if (v == MD_YP && iyp < 0) iyp = k;
                if (v == MD_XP && ixp < 0) ixp = k;
                if (v == MD_R) rsz = buf[k].size;
                if (v == MD_S) ssz = buf[k].size;
            }
            if (!has_x && ixp >= 0) buf[ixp].dim = MD_X, buf[ixp].size += ssz - 1;
            if (!has_y && iyp >= 0) buf[iyp].dim = MD_Y, buf[iyp].size += rsz - 1;
            present = 0;
            for (int q = 0; q < nb; q++) present |= 1u << buf[q].dim;
        }
        /* InheritMissingDirectives: front-inserted TemporalMaps copied from the level above */
        int nd = 0;
        maestro_directive *tmp = L->d; /* the level's directives, made in place */
        if (!prev) nd = nb; /* already there */
        else {
            maestro_directive front[MD_NDIM * 2];
            int nf = 0;
            for (int k = 0; k < prev->nd; k++) {
                int v = prev->d[k].dim;
                if (!((present >> v) & 1u)) {
                    maestro_directive t = {MDIR_TEMPORAL, (unsigned char)v, 0, prev->d[k].size, prev->d[k].ofs};
                    front[nf++] = t;
                    present |= 1u << v;
                }
            }
            for (int q = nf - 1; q >= 0; q--) tmp[nd++] = front[q];
            for (int q = 0; q < nb; q++) tmp[nd++] = buf[q];
        }
        /* UnrollMissingDirectives */
        for (int k = 0; k < c->invars.n; k++) {
            int v = c->invars.v[k];
            if (!((present >> v) & 1u) && dim_has(&cur, v)) {
                maestro_directive t = {MDIR_TEMPORAL, (unsigned char)v, 0, cur.dims[v], cur.dims[v]};
                tmp[nd++] = t;
                present |= 1u << v;
            }
        }
        /* ApplyOuterStride (MAESTRO rescales a Y/X map >= the filter size when stride > 1) */
        bool top = lvl == 0;
        for (int q = 0; q < nd; q++) {
            int v = tmp[q].dim;
            if (!is_ref_c(conv, v) || cur_ostr[v] == 1) continue;
            int st = cur_ostr[v];
            int idx = 0;
            while (tmp[idx].dim != v) idx++;
            int sl = full.dims[counterpart(v)];
            int msz = tmp[q].size;
            if (msz >= sl) {
                int outm = (msz + st - sl) / st;
                int adj = outm * (st < sl ? st : sl) + (sl - st > 0 ? sl - st : 0);
                int aofs = outm * st;
                if (!top && sl < st) aofs = outm * sl;
                tmp[idx].size = adj;
                tmp[idx].ofs = aofs;
            }
        }
        L->nd = nd;
        L->csize = next_size;
        L->conv = conv;
        L->sd = cur;
        memcpy(L->ostride, cur_ostr, sizeof cur_ostr);
        if (scan_level(c, L, lvl)) return -1;
        lvl++;
        if (i == m->n) break;
        /* lower-level dimensions: the mapping sizes of this level */
        dimtab low;
        memset(&low, 0, sizeof low);
        for (int k = 0; k < c->invars.n; k++) {
            int v = c->invars.v[k];
            int sz = L->d[L->first[v]].size;
            low.dims[v] = sz < cur.dims[v] ? sz : cur.dims[v];
            low.has |= 1u << v;
        }
        cur = low;
        next_size = m->d[i].size;
        prev = L;
        nb = 0, segvars = 0, buf = buf_above;
    }
    c->nlv = lvl;
    return 0;
}
