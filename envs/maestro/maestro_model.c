/* maestro_model.c - MAESTRO's data-centric cost model, reimplemented from its description
 * (MAESTRO paper + the reference notes): cluster construction, iteration states
 * (Init/Steady/Edge), reuse analysis per tensor, per-case delays with double buffering,
 * buffer requirements, energy, area and power. No allocation on the evaluation path.
 * The quirks of MAESTRO that change its printed numbers are reproduced on purpose (they are
 * marked "MAESTRO:" below); the two crashes/bugs we do not reproduce are documented in
 * docs/maestro.md ("Deliberate differences"). */
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maestro.h"

#define LV_DIRS 40
#define MEMO_N 32
#define MAX_CASES 1000000
#define MAX_STATES 3

enum { POS_INIT = 0, POS_STEADY = 1, POS_EDGE = 2 };

typedef struct {
    int dims[MD_NDIM];
    bool has[MD_NDIM];
} dimtab;

typedef struct {
    int nd;
    maestro_directive d[LV_DIRS];
    int csize;  /* number of sub-clusters at this level */
    int nedge;  /* active sub-clusters in a spatial edge step (static analysis) */
    dimtab sd;  /* static dimensions of this level */
    int ostride[MD_NDIM];
    int first[MD_NDIM], last[MD_NDIM];
    int spidx;  /* first SpatialMap */
    bool conv;  /* Y/R and X/S overlap (CONV, DSCONV); false for GEMM */
    long mapped[MD_NDIM], unique[MD_NDIM], medge[MD_NDIM], uedge[MD_NDIM];
} level;

typedef struct {
    int n;
    int v[MD_NDIM];
    unsigned mask; /* bit v set when v is in the list */
} varlist;

typedef struct {
    unsigned char pos, unroll, iedge, spee;
    long occ;
} istate;

typedef struct {
    long long runtime, macs, compute_sum;
    long long l2rd[MT_N], l2wr[MT_N], l1rd[MT_N], l1wr[MT_N], upreq[MT_N], downreq[MT_N];
    long double avg_active;
    long long sp_occ;
    long long peak_bw, offchip;
    long double avg_bw;
    long double dmin[3], dmax[3], davg[3];
    double ai;
} lres;

typedef struct {
    const maestro_layer *l;
    const maestro_hw *h;
    int nlv;
    level lv[MAESTRO_MAX_LEVELS];
    varlist tv[MT_N];  /* coupled variables per tensor */
    varlist invars;    /* sorted input-tensor variables */
    bool leaf_seen;
    long long leaf_downreq[MT_N];
    char *reason;
    /* sub-cluster results depend only on (level, dimensions): memoised per evaluation */
    int nmemo;
    struct memo {
        int li;
        int dims[MD_NDIM];
        unsigned has;
        lres r;
    } memo[MEMO_N];
} ctx;

static const char *const dim_names[MD_NDIM] = {"N", "K", "C", "R", "S", "Y", "X", "Y'", "X'", "G"};

const char *maestro_dim_name(int d) { return (d >= 0 && d < MD_NDIM) ? dim_names[d] : "?"; }

const char *maestro_dim_name_for(int d, maestro_ltype t) {
    if (t == MAESTRO_GEMM) {
        if (d == MD_Y) return "M";
        if (d == MD_K) return "N";
        if (d == MD_C) return "K";
    }
    return maestro_dim_name(d);
}

int maestro_dim_from_name(const char *s) {
    for (int i = 0; i < MD_NDIM; i++)
        if (strcmp(s, dim_names[i]) == 0) return i;
    return -1;
}

void maestro_layer_init(maestro_layer *l, maestro_ltype type, const char *name) {
    memset(l, 0, sizeof *l);
    l->type = type;
    snprintf(l->name, sizeof l->name, "%s", name ? name : "layer");
    for (int i = 0; i < MD_NDIM; i++) l->dim[i] = 1;
    l->stride_x = l->stride_y = 1;
}

void maestro_layer_finish(maestro_layer *l) {
    l->dim[MD_YP] = l->dim[MD_Y] - l->dim[MD_R] + 1;
    l->dim[MD_XP] = l->dim[MD_X] - l->dim[MD_S] + 1;
}

void maestro_hw_default(maestro_hw *h) {
    memset(h, 0, sizeof *h);
    h->num_pes = 64;
    h->simd = 1;
    h->l1_size = 512;
    h->l2_size = 108000;
    h->noc_bw = 32;
    h->noc_latency = 1;
    h->offchip_bw = 32;
    h->e_l1 = 1.68;
    h->e_l2 = 18.61;
    h->e_mac = 1.0;
    h->mac_energy_nj = 0.00023;
}

static int fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->reason, 200, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---------- overlap: Y/R and X/S (Y, X reference; R, S sliding) ---------- */
static inline bool is_ref_c(bool conv, int v) { return conv && (v == MD_Y || v == MD_X); }
static inline bool is_overlapped_c(bool conv, int v) { return conv && (v == MD_Y || v == MD_X || v == MD_R || v == MD_S); }
static inline int counterpart(int v) {
    switch (v) {
    case MD_Y: return MD_R;
    case MD_X: return MD_S;
    case MD_R: return MD_Y;
    case MD_S: return MD_X;
    default: return v;
    }
}
static inline bool in_list(const varlist *vl, int v) { return (vl->mask >> v) & 1u; }

static void index_level(level *L) {
    for (int v = 0; v < MD_NDIM; v++) L->first[v] = L->last[v] = -1;
    for (int i = 0; i < L->nd; i++) {
        int v = L->d[i].dim;
        if (L->first[v] < 0) L->first[v] = i;
        L->last[v] = i;
    }
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

static void mapping_sizes(level *L) {
    memset(L->mapped, 0, sizeof L->mapped);
    memset(L->unique, 0, sizeof L->unique);
    memset(L->medge, 0, sizeof L->medge);
    memset(L->uedge, 0, sizeof L->uedge);
    for (int i = 0; i < L->nd; i++) {
        const maestro_directive *d = &L->d[i];
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
    for (int i = 0; i < L->nd; i++) {
        const maestro_directive *d = &L->d[i];
        int v = d->dim;
        if (!is_ref_c(L->conv, v)) continue;
        int sl = counterpart(v), out = v == MD_Y ? MD_YP : MD_XP;
        L->mapped[out] = L->mapped[v] - L->mapped[sl] + 1;
        L->unique[out] = d->ofs < d->size ? d->ofs : d->size;
        L->medge[out] = L->medge[v] - L->medge[sl] + 1;
        L->uedge[out] = d->ofs < L->medge[out] ? d->ofs : L->medge[out];
    }
}

static int build_levels(ctx *c, const maestro_mapping *m) {
    const maestro_layer *ly = c->l;
    int ncl = 0;
    long U = 1;
    for (int i = 0; i < m->n; i++)
        if (m->d[i].kind == MDIR_CLUSTER) {
            ncl++;
            if (m->d[i].size <= 0) return fail(c, "Cluster size must be positive (directive %d)", i);
            U *= m->d[i].size;
            if (U > (long)INT_MAX) return fail(c, "Cluster sizes overflow (directive %d)", i);
        }
    if (ncl >= MAESTRO_MAX_LEVELS)
        return fail(c, "%d Cluster directives: MAESTRO supports at most 3 (4 NoC levels)", ncl);
    if (c->h->num_pes / U < 1)
        return fail(c, "the Cluster sizes need %ld PEs, more than the %d the hardware has", U, c->h->num_pes);
    /* tensors */
    bool dw = ly->type == MAESTRO_DSCONV, gemm = ly->type == MAESTRO_GEMM, conv = !gemm;
    varlist *in = &c->tv[MT_IN], *w = &c->tv[MT_W], *o = &c->tv[MT_OUT];
    in->n = w->n = o->n = 0;
    if (gemm) { /* MAESTRO: input {M,K}, weight {K,N}, output {M,N} */
        in->v[in->n++] = MD_Y, in->v[in->n++] = MD_C;
        w->v[w->n++] = MD_C, w->v[w->n++] = MD_K;
        o->v[o->n++] = MD_Y, o->v[o->n++] = MD_K;
    } else if (ly->type == MAESTRO_NGCONV) { /* MAESTRO: {N,G,C,Y,X}, {G,K,C,R,S}, {N,G,K,C,Y,X} */
        if (ly->has_n) in->v[in->n++] = MD_N, o->v[o->n++] = MD_N;
        in->v[in->n++] = MD_G, in->v[in->n++] = MD_C, in->v[in->n++] = MD_Y, in->v[in->n++] = MD_X;
        w->v[w->n++] = MD_G, w->v[w->n++] = MD_K, w->v[w->n++] = MD_C, w->v[w->n++] = MD_R, w->v[w->n++] = MD_S;
        o->v[o->n++] = MD_G, o->v[o->n++] = MD_K, o->v[o->n++] = MD_C, o->v[o->n++] = MD_Y, o->v[o->n++] = MD_X;
    } else {
        if (ly->has_n) in->v[in->n++] = MD_N, o->v[o->n++] = MD_N;
        in->v[in->n++] = MD_C, in->v[in->n++] = MD_Y, in->v[in->n++] = MD_X;
        if (!dw) w->v[w->n++] = MD_K;
        w->v[w->n++] = MD_C, w->v[w->n++] = MD_R, w->v[w->n++] = MD_S;
        o->v[o->n++] = dw ? MD_C : MD_K, o->v[o->n++] = MD_Y, o->v[o->n++] = MD_X;
    }
    for (int t = 0; t < MT_N; t++) {
        c->tv[t].mask = 0;
        for (int i = 0; i < c->tv[t].n; i++) c->tv[t].mask |= 1u << c->tv[t].v[i];
    }
    /* sorted unique input vars by MAESTRO's names: C G K N R S X Y, or for GEMM K M N */
    static const int order[] = {MD_C, MD_G, MD_K, MD_N, MD_R, MD_S, MD_X, MD_Y};
    static const int order_gemm[] = {MD_C, MD_Y, MD_K};
    const int *ord = gemm ? order_gemm : order;
    int nord = gemm ? 3 : 8;
    c->invars.n = 0;
    c->invars.mask = 0;
    for (int i = 0; i < nord; i++)
        if (in_list(in, ord[i]) || in_list(w, ord[i])) c->invars.v[c->invars.n++] = ord[i], c->invars.mask |= 1u << ord[i];

    /* full dimensions */
    dimtab full;
    int ostr[MD_NDIM];
    for (int v = 0; v < MD_NDIM; v++) {
        full.dims[v] = ly->dim[v];
        full.has[v] = true;
        ostr[v] = 1;
    }
    full.has[MD_N] = ly->has_n;
    full.has[MD_G] = ly->type == MAESTRO_NGCONV;
    if (gemm) full.has[MD_N] = full.has[MD_R] = full.has[MD_S] = full.has[MD_X] = full.has[MD_YP] = full.has[MD_XP] = false;
    ostr[MD_Y] = ostr[MD_YP] = ly->stride_y;
    ostr[MD_X] = ostr[MD_XP] = ly->stride_x;

    dimtab cur = full;
    int cur_ostr[MD_NDIM];
    memcpy(cur_ostr, ostr, sizeof ostr);
    maestro_directive buf[LV_DIRS];
    int nb = 0;
    const level *prev = NULL;
    int lvl = 0;
    int next_size = c->h->num_pes / (int)U;
    for (int i = 0; i <= m->n; i++) {
        bool closing = (i == m->n) || m->d[i].kind == MDIR_CLUSTER;
        if (!closing) {
            if (nb >= LV_DIRS - 20) return fail(c, "too many directives in cluster level %d", lvl);
            buf[nb++] = m->d[i];
            continue;
        }
        level *L = &c->lv[lvl];
        memset(L, 0, sizeof *L);
        /* ConvertToInputCentric: Y'/X' become Y/X when the level has no Y/X */
        {
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
            if (conv && !has_x && ixp >= 0) buf[ixp].dim = MD_X, buf[ixp].size += ssz - 1;
            if (conv && !has_y && iyp >= 0) buf[iyp].dim = MD_Y, buf[iyp].size += rsz - 1;
        }
        /* InheritMissingDirectives: front-inserted TemporalMaps copied from the level above */
        int nd = 0;
        maestro_directive tmp[LV_DIRS];
        if (prev) {
            maestro_directive front[MD_NDIM * 2];
            int nf = 0;
            for (int k = 0; k < prev->nd; k++) {
                int v = prev->d[k].dim;
                bool found = false;
                for (int q = 0; q < nb && !found; q++) found = buf[q].dim == v;
                for (int q = 0; q < nf && !found; q++) found = front[q].dim == v;
                if (!found) {
                    maestro_directive t = {MDIR_TEMPORAL, (unsigned char)v, 0, prev->d[k].size, prev->d[k].ofs};
                    front[nf++] = t;
                }
            }
            for (int q = nf - 1; q >= 0; q--) tmp[nd++] = front[q];
        }
        for (int q = 0; q < nb; q++) tmp[nd++] = buf[q];
        /* UnrollMissingDirectives */
        for (int k = 0; k < c->invars.n; k++) {
            int v = c->invars.v[k];
            bool found = false;
            for (int q = 0; q < nd && !found; q++) found = tmp[q].dim == v;
            if (!found && cur.has[v]) {
                maestro_directive t = {MDIR_TEMPORAL, (unsigned char)v, 0, cur.dims[v], cur.dims[v]};
                tmp[nd++] = t;
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
        memcpy(L->d, tmp, sizeof(maestro_directive) * (size_t)nd);
        L->csize = next_size;
        L->conv = conv;
        L->sd = cur;
        memcpy(L->ostride, cur_ostr, sizeof cur_ostr);
        index_level(L);
        /* checks MAESTRO makes (it terminates) */
        int nsp = 0;
        L->spidx = -1;
        for (int k = 0; k < nd; k++) {
            if (L->d[k].kind == MDIR_SPATIAL) {
                if (L->spidx < 0) L->spidx = k;
                nsp++;
            }
            if (L->d[k].dim == MD_YP || L->d[k].dim == MD_XP)
                return fail(c, "directive over %s at cluster level %d: give Y/X or Y'/X', not both", maestro_dim_name_for(L->d[k].dim, ly->type), lvl);
            if (!cur.has[L->d[k].dim])
                return fail(c, "dimension %s is not defined at cluster level %d", maestro_dim_name_for(L->d[k].dim, ly->type), lvl);
        }
        if (nsp == 0) return fail(c, "no SpatialMap at cluster level %d (MAESTRO: NoSpatialMap)", lvl);
        if (nsp > 2) return fail(c, "more than two SpatialMaps at cluster level %d (MAESTRO: MultiParallelismInSingleCluster)", lvl);
        if (L->csize <= 0) return fail(c, "cluster level %d has no sub-clusters", lvl);
        spatial_edge_clusters(L);
        mapping_sizes(L);
        lvl++;
        if (i == m->n) break;
        /* lower-level dimensions: the mapping sizes of this level */
        dimtab low;
        memset(&low, 0, sizeof low);
        for (int k = 0; k < c->invars.n; k++) {
            int v = c->invars.v[k];
            int sz = L->d[L->first[v]].size;
            low.dims[v] = sz < cur.dims[v] ? sz : cur.dims[v];
            low.has[v] = true;
        }
        cur = low;
        next_size = m->d[i].size;
        prev = L;
        nb = 0;
    }
    c->nlv = lvl;
    return 0;
}

/* ---------- iteration analysis (per call, on the call's dimensions) ---------- */
typedef struct {
    int nst[LV_DIRS];
    istate st[LV_DIRS][MAX_STATES];
} itab;

static void iteration_states(const level *L, const dimtab *D, itab *it) {
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int dim = D->dims[d->dim], size = d->size, ofs = d->ofs;
        int n = 0;
        istate *s = it->st[k];
        if (d->kind == MDIR_TEMPORAL) {
            s[n++] = (istate){POS_INIT, dim <= size, dim < size, 0, 1};
            int ns = (dim - size) / ofs;
            bool init_edge = dim < size;
            if (size < dim && ns > 0) s[n++] = (istate){POS_STEADY, 0, 0, 0, ns};
            if (!init_edge && ns * ofs + size < dim) s[n++] = (istate){POS_EDGE, 0, 0, 0, 1};
        } else {
            int nsub = L->csize;
            int cov = size + ofs * (nsub - 1);
            bool iu = dim <= cov, ie = dim < cov;
            s[n++] = (istate){POS_INIT, iu, ie, ie, 1};
            int ns = ((dim - size) / ofs + 1) / nsub - 1;
            bool has_edge = !iu && ((long)(ns + 1) * (ofs * nsub) + cov > dim) && ((long)ns * (ofs * nsub) + cov != dim);
            if (cov < dim && ns > 0) s[n++] = (istate){POS_STEADY, 0, 0, 0, ns};
            int rem = dim - (ns + 1) * ofs * nsub;
            int act = rem < size ? 1 : (rem - size) / ofs + 1;
            bool ee = false;
            if ((act - 1) * ofs + size < rem) ee = true;
            if (!ie && has_edge) s[n++] = (istate){POS_EDGE, 0, 0, ee, 1};
        }
        it->nst[k] = n;
    }
}

/* one iteration case: the state of every directive */
typedef struct {
    const istate *s[LV_DIRS];
} icase;

static inline const istate *stv(const level *L, const icase *cs, int v) { return cs->s[L->last[v]]; }
static inline bool is_edge(const istate *s) { return s->pos == POS_EDGE || s->iedge; }

/* ---------- reuse analysis ---------- */
static long pe_mapped(const level *L, const varlist *cv, const icase *cs, bool first, bool ee) {
    long r = 1;
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int v = d->dim;
        if (!in_list(cv, v)) continue;
        const istate *s = stv(L, cs, v);
        if (d->kind == MDIR_TEMPORAL) {
            r *= is_edge(s) ? L->medge[v] : L->mapped[v];
        } else if (is_edge(s)) {
            int na = L->nedge;
            if (na == 1 && (first || ee)) r *= L->medge[v];
            else if (na > 1) r *= ee ? L->medge[v] : L->mapped[v];
        } else {
            r *= L->mapped[v];
        }
    }
    return r;
}

static int pe_ingress(const level *L, const varlist *cv, const icase *cs, bool first, bool ee, long *out) {
    int chg = -1;
    for (int k = 0; k < L->nd; k++)
        if (stv(L, cs, L->d[k].dim)->pos != POS_INIT) chg = k;
    if (chg == -1) {
        *out = pe_mapped(L, cv, cs, first, ee);
        return 0;
    }
    bool inited = false;
    for (int k = chg + 1; k < L->nd; k++) {
        const istate *s = stv(L, cs, L->d[k].dim);
        if (s->pos == POS_INIT && in_list(cv, L->d[k].dim) && !s->unroll) {
            inited = true;
            break;
        }
    }
    bool changing = false;
    long r = 1;
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int v = d->dim;
        if (!in_list(cv, v)) continue;
        const istate *s = stv(L, cs, v);
        bool is_chg = k == chg, is_reset = k > chg;
        if (is_chg) changing = true;
        if (d->kind == MDIR_TEMPORAL) {
            if (s->pos == POS_INIT) {
                r *= is_edge(s) ? L->medge[v] : L->mapped[v];
            } else if (is_chg && !inited) {
                if (L->unique[v] == 0) return -1; /* MAESTRO terminates here */
                r *= L->unique[v];
            } else {
                r *= L->mapped[v];
            }
        } else {
            long mm = ee ? L->medge[v] : L->mapped[v];
            long uu = ee ? L->uedge[v] : L->unique[v];
            if (first) r *= mm;
            else if (s->pos == POS_INIT) r *= (!is_reset) ? mm : uu;
            else r *= (!inited && is_chg) ? uu : mm;
        }
    }
    *out = changing ? r : 0;
    return 0;
}

static bool sp_info(const level *L, const varlist *cv, const icase *cs, const istate **sps) {
    bool spm = false;
    *sps = NULL;
    for (int i = 0; i < cv->n; i++) {
        int v = cv->v[i];
        if (L->d[L->first[v]].kind == MDIR_SPATIAL) {
            spm = true;
            *sps = stv(L, cs, v);
        }
    }
    return spm;
}
static bool any_edge_sp(const level *L, const varlist *cv, const icase *cs) {
    for (int i = 0; i < cv->n; i++) {
        int v = cv->v[i];
        if (L->d[L->first[v]].kind == MDIR_SPATIAL && is_edge(stv(L, cs, v))) return true;
    }
    return false;
}

static int spatial_ingress(const level *L, const varlist *cv, const icase *cs, long *out) {
    const istate *sps;
    bool spm = sp_info(L, cv, cs, &sps);
    long a = 0, b = 0;
    if (!spm) return pe_ingress(L, cv, cs, true, false, out);
    long nc = L->csize, ne = L->nedge;
    if (!any_edge_sp(L, cv, cs)) {
        if (pe_ingress(L, cv, cs, true, false, &a) || pe_ingress(L, cv, cs, false, false, &b)) return -1;
        *out = a + (nc - 1) * b;
        return 0;
    }
    bool hee = sps->spee;
    if (pe_ingress(L, cv, cs, true, ne == 1 && hee, &a)) return -1;
    long r = a;
    if (ne > 1) {
        long nee = hee ? 1 : 0, nf = ne - nee - 1;
        if (nf < 0) nf = 0;
        if (pe_ingress(L, cv, cs, false, false, &b)) return -1;
        r += nf * b;
        if (nee) {
            if (pe_ingress(L, cv, cs, false, true, &b)) return -1;
            r += nee * b;
        }
    }
    *out = r;
    return 0;
}

static long pe_egress(const level *L, const varlist *ov, const icase *cs, bool psums, bool first, bool ee, bool reuse_edge) {
    long r = 1;
    if (psums) {
        for (int k = 0; k < L->nd; k++) {
            const maestro_directive *d = &L->d[k];
            int v = d->dim;
            if (in_list(ov, v)) continue;
            const istate *s = stv(L, cs, v);
            if (d->kind == MDIR_TEMPORAL) {
                r *= is_edge(s) ? L->medge[v] : L->mapped[v];
                continue;
            }
            int na = L->nedge;
            switch (s->pos) {
            case POS_INIT:
                if (is_edge(s) && ee) r *= L->medge[v]; /* edge-of-edge PE: edge size either way */
                else if (first) r *= L->mapped[v];
                else if (L->unique[v] != 0) r *= L->unique[v];
                break;
            case POS_STEADY:
                if (first) r *= L->mapped[v];
                else if (L->unique[v] != 0) r *= L->unique[v];
                break;
            default:
                if (na == 1 && (first || ee)) r *= L->medge[v];
                else if (na > 1) {
                    if (ee) r *= L->uedge[v];
                    else if (first) r *= L->mapped[v];
                    else if (L->unique[v] != 0) r *= L->unique[v];
                }
            }
        }
    }
    for (int i = 0; i < ov->n; i++) {
        int v = ov->v[i];
        const maestro_directive *d = &L->d[L->first[v]];
        const istate *s = stv(L, cs, v);
        int a = !L->conv ? v : v == MD_Y ? MD_YP : v == MD_X ? MD_XP : v;
        if (d->kind == MDIR_TEMPORAL) {
            if (s->pos == POS_INIT) r *= is_edge(s) ? L->medge[a] : L->mapped[a];
            else if (s->pos == POS_STEADY) r *= L->mapped[a];
            else r *= L->medge[a];
            continue;
        }
        int na = L->nedge;
        switch (s->pos) {
        case POS_INIT:
            if (is_edge(s) && ee) {
                if (na == 1) r *= L->medge[a];
                else r *= reuse_edge ? L->uedge[a] : L->medge[a];
            } else if (first) r *= L->mapped[a];
            else if (L->unique[a] != 0) r *= L->unique[a];
            break;
        case POS_STEADY:
            if (first) r *= L->mapped[a];
            else if (L->unique[a] != 0) r *= L->unique[a];
            break;
        default:
            if (na == 1 && (first || ee)) r *= L->medge[v]; /* MAESTRO: input-centric name here */
            else if (na > 1) {
                if (ee) r *= L->uedge[a];
                else if (first) r *= L->mapped[a];
                else if (L->unique[a] != 0) r *= L->unique[a];
            }
        }
    }
    return r;
}

static long spatial_egress(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps;
    bool spm = sp_info(L, ov, cs, &sps);
    if (!spm) return pe_egress(L, ov, cs, false, true, false, true);
    long nc = L->csize, ne = L->nedge;
    if (!any_edge_sp(L, ov, cs))
        return pe_egress(L, ov, cs, false, true, false, true) + (nc - 1) * pe_egress(L, ov, cs, false, false, false, true);
    bool hee = sps->spee;
    long r = pe_egress(L, ov, cs, false, true, ne == 1 && hee, true);
    if (ne > 1) {
        long nee = hee ? 1 : 0, nf = ne - nee - 1;
        if (nf < 0) nf = 0;
        r += nf * pe_egress(L, ov, cs, false, false, false, true);
        r += nee * pe_egress(L, ov, cs, false, false, true, true);
    }
    return r;
}

static long crit_psums(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps;
    bool spm = sp_info(L, ov, cs, &sps);
    if (!spm) return pe_egress(L, ov, cs, true, true, false, true);
    if (!any_edge_sp(L, ov, cs)) return pe_egress(L, ov, cs, true, true, false, true);
    return pe_egress(L, ov, cs, true, true, L->nedge == 1 && sps->spee, true);
}

static long psum_mapping_size(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps = NULL;
    bool spm = false, spe = false;
    for (int i = 0; i < ov->n; i++) { /* output-coupled spatial maps */
        int v = ov->v[i];
        if (L->d[L->first[v]].kind == MDIR_SPATIAL) {
            spm = true;
            sps = stv(L, cs, v);
            if (is_edge(sps)) spe = true;
        }
    }
    for (int k = 0; k < L->nd; k++) /* for partial sums: every spatial map */
        if (L->d[k].kind == MDIR_SPATIAL) {
            spm = true;
            sps = stv(L, cs, L->d[k].dim);
            if (is_edge(sps)) spe = true;
        }
    long nc = L->csize, ne = L->nedge;
    if (!spm) return nc * pe_egress(L, ov, cs, true, true, false, true);
    if (!spe) return nc * pe_egress(L, ov, cs, true, true, false, true);
    bool hee = sps->spee;
    long r = pe_egress(L, ov, cs, true, true, ne == 1 && hee, true);
    if (ne > 1) {
        long nee = hee ? 1 : 0, nf = ne - nee - 1;
        if (nf < 0) nf = 0;
        r += nf * pe_egress(L, ov, cs, true, true, false, true);
        r += nee * pe_egress(L, ov, cs, true, false, true, false);
    }
    return r;
}

static long mapped_volume(const level *L, const varlist *cv) {
    long r = 1;
    for (int i = 0; i < cv->n; i++) r *= L->mapped[cv->v[i]];
    return r;
}

static void sub_dims(const level *L, const icase *cs, bool ee, dimtab *out) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int v = d->dim;
        if (out->has[v]) continue; /* first insertion wins */
        const istate *s = stv(L, cs, v);
        int sz;
        if (d->kind == MDIR_TEMPORAL) sz = is_edge(s) ? L->medge[v] : L->mapped[v];
        else if (s->pos == POS_INIT) sz = (is_edge(s) && (L->nedge == 1 || ee)) ? L->medge[v] : L->mapped[v];
        else if (s->pos == POS_STEADY) sz = L->mapped[v];
        else sz = (L->nedge == 1 || ee) ? L->medge[v] : L->mapped[v];
        out->dims[v] = sz;
        out->has[v] = true;
    }
    if (!L->conv) return;
    if (out->has[MD_Y]) out->dims[MD_YP] = out->dims[MD_Y] - out->dims[MD_R] + 1, out->has[MD_YP] = true;
    if (out->has[MD_X]) out->dims[MD_XP] = out->dims[MD_X] - out->dims[MD_S] + 1, out->has[MD_XP] = true;
}

static inline long noc_delay(const maestro_hw *h, long t) {
    long sends = t / h->noc_bw + (t % h->noc_bw != 0);
    return h->noc_latency + sends - 1;
}

/* ---------- the per-level engine ---------- */
static unsigned has_mask(const dimtab *D) {
    unsigned m = 0;
    for (int v = 0; v < MD_NDIM; v++) m |= (unsigned)D->has[v] << v;
    return m;
}

static int analyze_level(ctx *c, int li, const dimtab *D, lres *R);

static int analyze(ctx *c, int li, const dimtab *D, lres *R) {
    unsigned hm = has_mask(D);
    if (li > 0)
        for (int i = 0; i < c->nmemo; i++) {
            const struct memo *e = &c->memo[i];
            if (e->li == li && e->has == hm && memcmp(e->dims, D->dims, sizeof e->dims) == 0) {
                *R = e->r;
                return 0;
            }
        }
    if (analyze_level(c, li, D, R)) return -1;
    if (li > 0 && c->nmemo < MEMO_N) {
        struct memo *e = &c->memo[c->nmemo++];
        e->li = li, e->has = hm, e->r = *R;
        memcpy(e->dims, D->dims, sizeof e->dims);
    }
    return 0;
}

static int analyze_level(ctx *c, int li, const dimtab *D, lres *R) {
    const level *L = &c->lv[li];
    memset(R, 0, sizeof *R);
    R->sp_occ = 1;
    for (int t = 0; t < 3; t++) R->dmin[t] = 1e300L, R->dmax[t] = -1e300L;
    for (int k = 0; k < L->nd; k++)
        if (!D->has[L->d[k].dim]) return fail(c, "dimension %s missing at cluster level %d", maestro_dim_name(L->d[k].dim), li);
    itab it;
    iteration_states(L, D, &it);
    int nd = L->nd;
    long ncases = 1;
    long freq[LV_DIRS];
    for (int k = nd - 1; k >= 0; k--) {
        freq[k] = ncases;
        ncases *= it.nst[k];
        if (ncases > MAX_CASES) return fail(c, "more than %d iteration cases at cluster level %d", MAX_CASES, li);
    }
    int ctr[LV_DIRS];
    memset(ctr, 0, sizeof ctr);
    const varlist *ov = &c->tv[MT_OUT];
    const bool leaf = li == c->nlv - 1;
    long long total_occ = 0;
    int case_id = 0;
    icase cs;
    for (long cid = 0; cid < ncases; cid++) {
        long occ = 1;
        for (int k = 0; k < nd; k++) {
            int si = ctr[k];
            cs.s[k] = &it.st[k][si];
            occ *= it.st[k][si].occ;
            if (cid % freq[k] == 0) ctr[k] = (si + 1 == it.nst[k]) ? 0 : si + 1;
        }
        bool all_init = true;
        for (int v = 0; v < MD_NDIM; v++)
            if (L->last[v] >= 0 && cs.s[L->last[v]]->pos != POS_INIT) all_init = false;
        if (case_id == 0) { /* buffer requirements (MAESTRO: only the first counted case) */
            for (int t = 0; t < 2; t++) {
                long long size = 1;
                for (int i = 0; i < c->tv[t].n; i++) {
                    int v = c->tv[t].v[i];
                    if (!D->has[v]) return fail(c, "dimension %s missing at cluster level %d", maestro_dim_name(v), li);
                    size *= D->dims[v];
                }
                long ing;
                if (spatial_ingress(L, &c->tv[t], &cs, &ing)) return fail(c, "reuse analysis failed (MAESTRO terminates) at cluster level %d", li);
                R->upreq[t] += 2 * ing;
                R->l2wr[t] = size;
                R->downreq[t] += 2 * mapped_volume(L, &c->tv[t]);
            }
            long long size = 1;
            for (int i = 0; i < ov->n; i++) {
                int v = ov->v[i];
                size *= is_overlapped_c(L->conv, v) ? (D->dims[v] - D->dims[counterpart(v)] + 1) : D->dims[v];
            }
            R->upreq[MT_OUT] = 2 * spatial_egress(L, ov, &cs);
            R->l2rd[MT_OUT] = size;
            R->downreq[MT_OUT] = 2 * mapped_volume(L, ov);
        }
        long egress = spatial_egress(L, ov, &cs);
        long psmap = psum_mapping_size(L, ov, &cs);
        R->l2wr[MT_OUT] += occ * egress;
        R->l1wr[MT_OUT] += occ * psmap;
        R->l1rd[MT_OUT] += occ * psmap;
        long npsums = crit_psums(L, ov, &cs);
        if (npsums <= 0) continue; /* MAESTRO: "Skipping Invalid case" */
        long ingress = 0;
        for (int t = 0; t < 2; t++) {
            long ing;
            if (spatial_ingress(L, &c->tv[t], &cs, &ing)) return fail(c, "reuse analysis failed (MAESTRO terminates) at cluster level %d", li);
            ingress += ing;
            R->l2rd[t] += occ * ing;
            R->l1wr[t] = R->l2rd[t]; /* MAESTRO: L1 write = L2 read */
            R->l1rd[t] += occ * psmap;
        }
        R->ai = (double)psmap / (double)ingress;
        long comp = 0;
        const istate *sps = cs.s[L->last[L->d[L->spidx].dim]];
        long nact = is_edge(sps) ? L->nedge : L->csize;
        long double act_units = 0;
        if (!leaf) {
            dimtab sd;
            lres sr;
            if (is_edge(sps)) {
                if (sps->spee) {
                    sub_dims(L, &cs, true, &sd);
                    if (analyze(c, li + 1, &sd, &sr)) return -1;
                    comp = sr.runtime;
                    act_units += sr.avg_active * 1;
                    long rem = L->nedge - 1;
                    if (rem > 0) {
                        sub_dims(L, &cs, false, &sd);
                        if (analyze(c, li + 1, &sd, &sr)) return -1;
                        if (sr.runtime > comp) comp = sr.runtime;
                        act_units += sr.avg_active * rem;
                    }
                } else {
                    sub_dims(L, &cs, false, &sd);
                    if (analyze(c, li + 1, &sd, &sr)) return -1;
                    comp = sr.runtime;
                    act_units += sr.avg_active * L->nedge;
                }
            } else {
                sub_dims(L, &cs, false, &sd);
                if (analyze(c, li + 1, &sd, &sr)) return -1;
                comp = sr.runtime;
                act_units += sr.avg_active * L->csize;
            }
        } else {
            comp = (npsums + c->h->simd - 1) / c->h->simd;
        }
        long din = noc_delay(c->h, ingress), deg = noc_delay(c->h, egress);
        long od;
        if (all_init) od = comp + din;
        else {
            od = comp > din ? comp : din;
            if (deg > od) od = deg;
        }
        if (li == 0) {
            long long ob = R->upreq[MT_OUT] / c->h->offchip_bw;
            long long ib = (R->upreq[MT_IN] + R->upreq[MT_W]) / c->h->offchip_bw;
            ib /= 2;
            ob /= 2;
            if (ib > od) od = ib;
            if (ob > od) od = ob;
            long cd = comp > 0 ? comp : 1; /* MAESTRO divides by zero here (SIGFPE) */
            long long ofr = R->offchip;
            if (R->upreq[MT_OUT] / cd > ofr) ofr = R->upreq[MT_OUT] / cd;
            if ((R->upreq[MT_IN] + R->upreq[MT_W]) / cd > ofr) ofr = (R->upreq[MT_IN] + R->upreq[MT_W]) / cd;
            R->offchip = ofr / 2;
        }
        R->runtime += occ * od;
        R->compute_sum += occ * comp;
        R->macs += occ * psmap;
        if (act_units == 0) act_units = nact;
        R->avg_active += act_units * occ;
        if (comp == 0) comp = 1;
        long mx = ingress > egress ? ingress : egress;
        if (mx / comp > R->peak_bw) R->peak_bw = mx / comp;
        R->avg_bw += (occ * mx) / comp;
        long dl[3] = {din, deg, comp};
        for (int t = 0; t < 3; t++) {
            R->davg[t] += occ * dl[t];
            if (dl[t] < R->dmin[t]) R->dmin[t] = dl[t];
            if (dl[t] > R->dmax[t]) R->dmax[t] = dl[t];
        }
        total_occ += occ;
        case_id++;
    }
    if (leaf && !c->leaf_seen) { /* MAESTRO prints the L1 needs of the first finished leaf call */
        c->leaf_seen = true;
        for (int t = 0; t < MT_N; t++) c->leaf_downreq[t] = R->downreq[t];
    }
    if (total_occ) {
        R->avg_bw /= total_occ;
        R->avg_active /= total_occ;
        for (int t = 0; t < 3; t++) R->davg[t] /= total_occ;
    }
    return 0;
}

void maestro_eval(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r) {
    memset(r, 0, sizeof *r);
    ctx c; /* not cleared as a whole: the memo table is large and filled on demand */
    c.nlv = 0;
    c.leaf_seen = false;
    c.nmemo = 0;
    memset(c.leaf_downreq, 0, sizeof c.leaf_downreq);
    c.l = l;
    c.h = h;
    c.reason = r->reason;
    if (h->num_pes <= 0 || h->noc_bw <= 0 || h->offchip_bw <= 0 || h->simd <= 0) {
        snprintf(r->reason, sizeof r->reason, "hardware needs num_pes, noc_bw, offchip_bw and simd lanes > 0");
        return;
    }
    for (int v = MD_N; v < MD_NDIM; v++)
        if (l->dim[v] <= 0 && v != MD_YP && v != MD_XP) {
            snprintf(r->reason, sizeof r->reason, "layer dimension %s must be positive", maestro_dim_name(v));
            return;
        }
    if (l->dim[MD_Y] < l->dim[MD_R] || l->dim[MD_X] < l->dim[MD_S]) {
        snprintf(r->reason, sizeof r->reason, "input Y/X smaller than the filter R/S");
        return;
    }
    if (m->n == 0) {
        snprintf(r->reason, sizeof r->reason, "empty mapping (no directives)");
        return;
    }
    double vol = 1;
    for (int v = MD_N; v <= MD_X; v++) vol *= l->dim[v];
    vol *= l->dim[MD_G];
    if (vol > 1e15) { /* keeps every count far from 64-bit overflow */
        snprintf(r->reason, sizeof r->reason, "layer too large (%.3g MAC-loop iterations; limit 1e15)", vol);
        return;
    }
    if (build_levels(&c, m)) return;
    r->num_levels = c.nlv;
    dimtab full;
    for (int v = 0; v < MD_NDIM; v++) full.dims[v] = l->dim[v], full.has[v] = true;
    full.has[MD_N] = l->has_n;
    full.has[MD_G] = l->type == MAESTRO_NGCONV;
    if (l->type == MAESTRO_GEMM) full.has[MD_N] = full.has[MD_R] = full.has[MD_S] = full.has[MD_X] = full.has[MD_YP] = full.has[MD_XP] = false;
    lres R;
    if (analyze(&c, 0, &full, &R)) return;
    if (R.runtime <= 0 || R.macs <= 0) {
        snprintf(r->reason, sizeof r->reason, "no valid iteration case (zero runtime or MACs)");
        r->degenerate = true;
        return;
    }
    for (int t = 0; t < MT_N; t++)
        if (R.l2rd[t] < 0 || R.l2wr[t] < 0 || R.l1rd[t] < 0 || R.l1wr[t] < 0 || R.upreq[t] < 0 || c.leaf_downreq[t] < 0) {
            /* MAESTRO prints such numbers; they come from tiles larger than the data they cover */
            snprintf(r->reason, sizeof r->reason, "degenerate mapping: negative traffic or buffer counts (a tile exceeds its dimension)");
            r->degenerate = true;
            return;
        }
    r->valid = true;
    r->runtime = R.runtime;
    r->num_macs = R.macs;
    r->compute_cycles = R.compute_sum;
    r->throughput = (double)R.macs / (double)R.runtime;
    double l2c = 0, l1c = 0;
    for (int t = 0; t < MT_N; t++) {
        r->l2_req[t] = R.upreq[t];
        r->l1_req[t] = c.leaf_downreq[t];
        r->l2_rd[t] = R.l2rd[t];
        r->l2_wr[t] = R.l2wr[t];
        r->l1_rd[t] = R.l1rd[t];
        r->l1_wr[t] = R.l1wr[t];
        r->l2_req_total += R.upreq[t];
        r->l1_req_total += c.leaf_downreq[t];
        l2c += (double)R.l2rd[t] + (double)R.l2wr[t];
        l1c += (double)R.l1rd[t] + (double)R.l1wr[t];
    }
    r->e_l2 = h->e_l2 * l2c;
    r->e_l1 = h->e_l1 * l1c;
    r->e_mac = h->e_mac * (double)R.macs;
    r->e_noc = 0;
    r->e_offchip = 0;
    r->energy = r->e_l2 + r->e_l1 + r->e_mac;
    r->energy_nj = r->energy * h->mac_energy_nj;
    r->edp = r->energy * (double)r->runtime;
    /* area and power (MAESTRO's DSE hardware modules) */
    double P = h->num_pes, l1 = (double)r->l1_req_total, l2 = (double)r->l2_req_total;
    if (l1 <= 0) l1 = 1;
    if (l2 <= 0) l2 = 1;
    double arb = 1.2886 * P * P + 5.5814 * P - 23.711;
    double bus = 14.662 * P + 28.895;
    double arb_a = 395.473 * arb < 395.473 ? 395.473 : 395.473 * arb;
    double arb_p = 0.34 * arb / 1000 < 0.34 ? 0.34 : 0.34 * arb / 1000;
    r->area = P * (283.0 * h->simd + 0.104 * l1) + 0.104 * l2 + 101.7938 * bus * h->noc_bw + arb_a;
    r->pe_power = P * 1.2223 * h->simd;
    r->l1_power = P * 0.00345 * l1;
    r->l2_power = 0.00345 * l2;
    r->noc_power = 0.8 * bus / 1000 * h->noc_bw + arb_p;
    r->power = r->pe_power + r->l1_power + r->l2_power + r->noc_power;
    r->peak_bw = R.peak_bw;
    r->avg_bw = (double)R.avg_bw;
    r->offchip_bw_req = R.offchip;
    for (int t = 0; t < 3; t++) {
        r->delay_min[t] = (double)R.dmin[t];
        r->delay_max[t] = (double)R.dmax[t];
        r->delay_avg[t] = (double)R.davg[t];
    }
    r->avg_util_pes = (double)R.avg_active;
    r->arith_intensity = R.ai;
    r->warn_l1 = r->l1_req_total > h->l1_size;
    r->warn_l2 = r->l2_req_total > h->l2_size;
    r->warn_noc_bw = R.peak_bw > h->noc_bw;
    r->warn_offchip_bw = R.offchip > h->offchip_bw;
    r->feasible = true;
    if (r->warn_l1)
        snprintf(r->reason, sizeof r->reason, "L1 requirement %lld exceeds L1 size %ld", r->l1_req_total, h->l1_size);
    else if (r->warn_l2)
        snprintf(r->reason, sizeof r->reason, "L2 requirement %lld exceeds L2 size %ld", r->l2_req_total, h->l2_size);
    if (r->warn_l1 || r->warn_l2) r->feasible = false;
}
