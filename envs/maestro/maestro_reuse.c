/* maestro_reuse.c - the per-case reuse analysis of the MAESTRO cost model: the iteration states
 * (Init/Steady/Edge) of each directive at a level, and from a case's states the data each PE and
 * each spatial step receives (ingress), sends (egress), the partial sums it computes and the
 * dimensions its sub-clusters see. Pure functions of (level, case); see maestro_internal.h. */
#include <string.h>

#include "maestro_internal.h"

void maestro_iteration_states(const level *L, const dimtab *D, itab *it) {
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int dim = D->dims[d->dim], size = d->size, ofs = d->ofs;
        int n = 0;
        istate *s = it->st[k];
        if (d->kind == MDIR_TEMPORAL) {
            s[n++] = (istate){POS_INIT, dim <= size, dim < size, 0, dim < size, 1};
            int ns = (dim - size) / ofs;
            bool init_edge = dim < size;
            if (size < dim && ns > 0) s[n++] = (istate){POS_STEADY, 0, 0, 0, 0, ns};
            if (!init_edge && ns * ofs + size < dim) s[n++] = (istate){POS_EDGE, 0, 0, 0, 1, 1};
        } else {
            int nsub = L->csize;
            int cov = size + ofs * (nsub - 1);
            bool iu = dim <= cov, ie = dim < cov;
            s[n++] = (istate){POS_INIT, iu, ie, ie, ie, 1};
            int ns = ((dim - size) / ofs + 1) / nsub - 1;
            bool has_edge = !iu && ((long)(ns + 1) * (ofs * nsub) + cov > dim) && ((long)ns * (ofs * nsub) + cov != dim);
            if (cov < dim && ns > 0) s[n++] = (istate){POS_STEADY, 0, 0, 0, 0, ns};
            int rem = dim - (ns + 1) * ofs * nsub;
            int act = rem < size ? 1 : (rem - size) / ofs + 1;
            bool ee = false;
            if ((act - 1) * ofs + size < rem) ee = true;
            if (!ie && has_edge) s[n++] = (istate){POS_EDGE, 0, 0, ee, 1, 1};
        }
        it->nst[k] = n;
    }
}

/* ---------- reuse analysis ----------
 * MAESTRO's per-PE volumes are products of one size per directive (or per output variable),
 * each picked by the case's states and by which PE is asked about: the first PE of a spatial step
 * (first), the edge-of-edge PE (ee) and, for the output, whether reuse applies at an edge
 * (reuse_edge). MAESTRO asks up to twelve such questions a case, each a pass over the level; here
 * one pass per tensor answers every flag combination at once (p[first][ee], egress_tab), from the
 * per-variable states the case walker (maestro_cases_begin, maestro_case_next) sets. tests/c/maestro/test_reuse.c checks
 * every answer against MAESTRO's one-question-a-pass definitions on random mappings. */
int maestro_cases_begin(const level *L, const itab *it, corder *o, icase *cs, long *ncases) {
    int nm = 0;
    for (int k = 0; k < L->nd; k++)
        if (it->nst[k] > 1) o->mk[nm++] = (unsigned char)k;
    long n = 1; /* the later directives' state counts (a single-state directive's is 1) */
    for (int j = nm - 1; j >= 0; j--) {
        int k = o->mk[j], v = L->d[k].dim;
        o->freq[j] = (int)n;
        n *= it->nst[k];
        if (n > MAX_CASES) return -1;
        o->mv[j] = (unsigned char)(L->last[v] == k ? v : MD_NDIM);
        o->ctr[j] = 0, o->next[j] = 0;
    }
    *ncases = n;
    o->nm = nm;
    o->c = 0;
    for (int i = 0; i < L->nvar; i++) { /* a single-state directive's state is Init */
        int v = L->var[i];
        cs->sv[v] = &it->st[L->last[v]][0];
    }
    o->vars = L->vmask;
    cs->chg = -1;
    return 0;
}

long maestro_case_next(const itab *it, corder *o, icase *cs) {
    const int nm = o->nm;
    int j0 = 0; /* the first moving directive whose state changed */
    unsigned moved = o->vars;
    if (o->c == 0) { /* every directive in its Init state */
        o->pocc[0] = 1;
    } else {
        const int prev = o->c - 1;
        moved = 0;
        j0 = nm;
        while (j0 > 0 && o->next[j0 - 1] == prev) { /* a suffix moves: the odometer's carry */
            int j = --j0, k = o->mk[j];
            o->ctr[j] = (unsigned char)(o->ctr[j] + 1 == it->nst[k] ? 0 : o->ctr[j] + 1);
            o->next[j] += o->freq[j];
        }
    }
    for (int j = j0; j < nm; j++) {
        const istate *s = &it->st[o->mk[j]][o->ctr[j]];
        o->pocc[j + 1] = o->pocc[j] * s->occ;
        if (o->mv[j] < MD_NDIM) {
            cs->sv[o->mv[j]] = s;
            moved |= 1u << o->mv[j];
        }
    }
    int chg = -1; /* state 0 is Init, the others are not; the last one wins */
    for (int j = nm - 1; j >= 0; j--)
        if (o->ctr[j] && o->mv[j] < MD_NDIM) {
            chg = o->mk[j];
            break;
        }
    cs->chg = chg;
    cs->moved = moved;
    o->c++;
    return o->pocc[nm];
}

/* The data one PE receives of input tensor t in case cs, p[first][ee]; -1 where MAESTRO
 * terminates (the same for every flag combination). The factors all four share (the
 * TemporalMaps', and a SpatialMap's where the flags do not matter) go into one product, pc. */
static inline __attribute__((always_inline)) int pe_ingress4(const level *L, int t, const icase *cs, long p[2][2]) {
    const ltensor *T = &L->lt[t];
    long pc = 1, p00 = 1, p01 = 1, p10 = 1, p11 = 1;
    const int chg = cs->chg, nk = T->nk;
    const unsigned char *tk = T->k;
    if (chg == -1) { /* every variable in its Init state: the mapped volume */
        const int na = L->nedge;
        for (int i = 0; i < nk; i++) {
            const maestro_directive *d = &L->d[tk[i]];
            int v = d->dim;
            const istate *s = cs->sv[v];
            if (!is_edge(s)) pc *= L->mapped[v];
            else if (d->kind == MDIR_TEMPORAL) pc *= L->medge[v];
            else if (na == 1) { /* the first or the edge-of-edge PE gets the edge size */
                p01 *= L->medge[v], p10 *= L->medge[v], p11 *= L->medge[v];
            } else if (na > 1) {
                p00 *= L->mapped[v], p10 *= L->mapped[v], p01 *= L->medge[v], p11 *= L->medge[v];
            }
        }
        p[0][0] = pc * p00, p[0][1] = pc * p01, p[1][0] = pc * p10, p[1][1] = pc * p11;
        return 0;
    }
    if (!((T->mask >> L->d[chg].dim) & 1u)) { /* the changing directive is not over this tensor */
        p[0][0] = p[0][1] = p[1][0] = p[1][1] = 0;
        return 0;
    }
    /* the directives before the changing one (a SpatialMap there: the mapped size, the edge size
     * for the edge-of-edge PE), the ones after it (whose states say whether the tensor is
     * `inited`: a later directive restarts, in Init and not unrolled), then the changing one */
    int i = 0;
    for (; tk[i] < chg; i++) {
        const maestro_directive *d = &L->d[tk[i]];
        int v = d->dim;
        const istate *s = cs->sv[v];
        if (d->kind == MDIR_TEMPORAL) pc *= s->pos != POS_INIT ? L->mapped[v] : is_edge(s) ? L->medge[v] : L->mapped[v];
        else p00 *= L->mapped[v], p01 *= L->medge[v];
    }
    p10 = p00, p11 = p01;
    bool inited = false;
    for (i++; i < nk; i++) {
        const maestro_directive *d = &L->d[tk[i]];
        int v = d->dim;
        const istate *s = cs->sv[v];
        bool init = s->pos == POS_INIT;
        if (init && !s->unroll) inited = true;
        if (d->kind == MDIR_TEMPORAL) {
            pc *= !init ? L->mapped[v] : is_edge(s) ? L->medge[v] : L->mapped[v];
            continue;
        }
        p10 *= L->mapped[v], p11 *= L->medge[v]; /* a PE after the first gets the new part only */
        p00 *= init ? L->unique[v] : L->mapped[v];
        p01 *= init ? L->uedge[v] : L->medge[v];
    }
    const maestro_directive *d = &L->d[chg]; /* over this tensor, not in its Init state */
    int v = d->dim;
    if (d->kind == MDIR_TEMPORAL) {
        if (!inited) {
            if (L->unique[v] == 0) return -1; /* MAESTRO terminates here */
            pc *= L->unique[v];
        } else {
            pc *= L->mapped[v];
        }
    } else {
        p10 *= L->mapped[v], p11 *= L->medge[v];
        p00 *= !inited ? L->unique[v] : L->mapped[v];
        p01 *= !inited ? L->uedge[v] : L->medge[v];
    }
    p[0][0] = pc * p00, p[0][1] = pc * p01, p[1][0] = pc * p10, p[1][1] = pc * p11;
    return 0;
}

/* A spatial step at an edge: its first PE's volume (a), the full PEs' (full) and, when the step
 * has an edge-of-edge sub-cluster (hee), that one's (ee); ne PEs are active. */
static long edge_step(long ne, bool hee, long a, long full, long ee) {
    if (ne <= 1) return a;
    long nee = hee ? 1 : 0, nf = ne - nee - 1;
    if (nf < 0) nf = 0;
    return a + nf * full + nee * ee;
}

static bool any_edge_sp(const ltensor *T, const icase *cs) {
    for (int i = 0; i < T->nsp; i++)
        if (is_edge(cs->sv[T->sp[i]])) return true;
    return false;
}

static inline int spatial_ingress(const level *L, int t, const icase *cs, long *out) {
    const ltensor *T = &L->lt[t];
    long p[2][2];
    if (pe_ingress4(L, t, cs, p)) return -1;
    if (!T->nsp) {
        *out = p[1][0];
        return 0;
    }
    long nc = L->csize, ne = L->nedge;
    if (!any_edge_sp(T, cs)) {
        *out = p[1][0] + (nc - 1) * p[0][0];
        return 0;
    }
    bool hee = cs->sv[T->sp[T->nsp - 1]]->spee;
    *out = edge_step(ne, hee, p[1][ne == 1 && hee], p[0][0], p[0][1]);
    return 0;
}

int maestro_spatial_ingress(const level *L, int t, const icase *cs, long *out) { return spatial_ingress(L, t, cs, out); }

int maestro_case_ingress(const level *L, const icase *cs, long ing[2]) {
    if (spatial_ingress(L, MT_IN, cs, &ing[0])) return -1;
    return spatial_ingress(L, MT_W, cs, &ing[1]);
}

static inline long nz(long x) { return x != 0 ? x : 1; } /* MAESTRO skips a zero unique size */

/* A SpatialMap's size factors of the partial-sum part (variable v outside the output, state s):
 * f[first][ee]. */
static inline void ps_factors(const level *L, int v, const istate *s, long f[2][2]) {
    switch (s->pos) {
    case POS_INIT:
        f[1][0] = L->mapped[v], f[0][0] = nz(L->unique[v]);
        if (is_edge(s)) f[1][1] = f[0][1] = L->medge[v]; /* edge-of-edge PE: edge size either way */
        else f[1][1] = f[1][0], f[0][1] = f[0][0];
        return;
    case POS_STEADY:
        f[1][0] = f[1][1] = L->mapped[v], f[0][0] = f[0][1] = nz(L->unique[v]);
        return;
    default:
        if (L->nedge == 1) f[1][0] = f[1][1] = f[0][1] = L->medge[v], f[0][0] = 1;
        else if (L->nedge > 1) f[1][1] = f[0][1] = L->uedge[v], f[1][0] = L->mapped[v], f[0][0] = nz(L->unique[v]);
        else f[0][0] = f[0][1] = f[1][0] = f[1][1] = 1;
    }
}

/* A SpatialMap's size factors of output variable v (sizes read at a, state s): f[first][ee] with
 * reuse at an edge, and f0[first] for the edge-of-edge PE without it. */
static inline void ov_factors(const level *L, int v, int a, const istate *s, long f[2][2], long f0[2]) {
    switch (s->pos) {
    case POS_INIT:
        f[1][0] = L->mapped[a], f[0][0] = nz(L->unique[a]);
        if (is_edge(s)) {
            f[1][1] = f[0][1] = L->nedge == 1 ? L->medge[a] : L->uedge[a];
            f0[1] = f0[0] = L->medge[a];
        } else {
            f[1][1] = f0[1] = f[1][0], f[0][1] = f0[0] = f[0][0];
        }
        return;
    case POS_STEADY:
        f[1][0] = f[1][1] = f0[1] = L->mapped[a], f[0][0] = f[0][1] = f0[0] = nz(L->unique[a]);
        return;
    default:
        if (L->nedge == 1) f[1][0] = f[1][1] = f[0][1] = L->medge[v], f[0][0] = 1; /* MAESTRO: input-centric name here */
        else if (L->nedge > 1) f[1][1] = f[0][1] = L->uedge[a], f[1][0] = L->mapped[a], f[0][0] = nz(L->unique[a]);
        else f[0][0] = f[0][1] = f[1][0] = f[1][1] = 1;
        f0[1] = f[1][1], f0[0] = f[0][1];
    }
}

/* The output tensor's egress as partial products: of the TemporalMaps' factors outside the
 * output (pc) and over it (oc), which no flag changes, and of the SpatialMaps' per flag
 * combination: outside the output ps[first][ee], over it ov[first][ee] with reuse at an edge and
 * ov0[first] the edge-of-edge PE's without. */
typedef struct {
    long pc, oc, ps[2][2], ov[2][2], ov0[2];
} eprod;

/* multiplies in a partial-sum directive k's factors */
static void eprod_add_pk(const level *L, const icase *cs, int k, eprod *e) {
    const maestro_directive *d = &L->d[k];
    int v = d->dim;
    const istate *s = cs->sv[v];
    if (d->kind == MDIR_TEMPORAL) {
        e->pc *= is_edge(s) ? L->medge[v] : L->mapped[v];
        return;
    }
    long f[2][2];
    ps_factors(L, v, s, f);
    e->ps[0][0] *= f[0][0], e->ps[0][1] *= f[0][1], e->ps[1][0] *= f[1][0], e->ps[1][1] *= f[1][1];
}

/* multiplies in output variable L->ov[i]'s factors */
static void eprod_add_ov(const level *L, const icase *cs, int i, eprod *e) {
    int v = L->ov[i], a = L->oa[i];
    const istate *s = cs->sv[v];
    if (!L->osp[i]) {
        e->oc *= s->pos == POS_INIT ? (is_edge(s) ? L->medge[a] : L->mapped[a]) : s->pos == POS_STEADY ? L->mapped[a] : L->medge[a];
        return;
    }
    long f[2][2], f0[2];
    ov_factors(L, v, a, s, f, f0);
    e->ov[0][0] *= f[0][0], e->ov[0][1] *= f[0][1], e->ov[1][0] *= f[1][0], e->ov[1][1] *= f[1][1];
    e->ov0[0] *= f0[0], e->ov0[1] *= f0[1];
}

static inline void eprod_of(const level *L, const icase *cs, eprod *p) {
    *p = (eprod){1, 1, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}, {1, 1}};
    for (int i = 0; i < L->npk; i++) eprod_add_pk(L, cs, L->pk[i], p);
    for (int i = 0; i < L->nov; i++) eprod_add_ov(L, cs, i, p);
}

void maestro_egress_tab(const level *L, const icase *cs, egress_tab *e) {
    eprod p;
    eprod_of(L, cs, &p);
    for (int f = 0; f < 2; f++) {
        for (int x = 0; x < 2; x++) {
            e->ps[f][x] = p.pc * p.ps[f][x];
            e->ov[f][x][1] = p.oc * p.ov[f][x];
        }
        e->ov[f][0][0] = e->ov[f][0][1]; /* reuse at an edge matters to the edge-of-edge PE only */
        e->ov[f][1][0] = p.oc * p.ov0[f];
    }
}

/* maestro_spatial_egress, maestro_crit_psums and (psmap not NULL) maestro_psum_mapping_size of
 * one case from one pass (the products of the egress table that they read, each made once) */
void maestro_case_out(const level *L, const icase *cs, long *egress, long *npsums, long *psmap) {
    eprod p;
    eprod_of(L, cs, &p);
    const ltensor *T = &L->lt[MT_OUT];
    const long nc = L->csize, ne = L->nedge;
    const bool oedge = any_edge_sp(T, cs), hee = oedge && cs->sv[T->sp[T->nsp - 1]]->spee;
    const int x = ne == 1 && hee; /* the first PE's ee flag at an edge */
    const long o10 = p.oc * p.ov[1][0];
    if (!T->nsp) *egress = o10;
    else if (!oedge) *egress = o10 + (nc - 1) * (p.oc * p.ov[0][0]);
    else *egress = edge_step(ne, hee, p.oc * p.ov[1][x], p.oc * p.ov[0][0], p.oc * p.ov[0][1]);
    const long c10 = (p.pc * p.ps[1][0]) * o10;
    *npsums = oedge ? (p.pc * p.ps[1][x]) * (p.oc * p.ov[1][x]) : c10;
    if (!psmap) return;
    const istate *sps = T->nsp ? cs->sv[T->sp[T->nsp - 1]] : NULL;
    bool spe = oedge;
    for (int i = 0; i < L->nspd; i++) { /* for partial sums: every spatial map */
        sps = cs->sv[L->d[L->spd[i]].dim];
        if (is_edge(sps)) spe = true;
    }
    if (!sps || !spe) {
        *psmap = nc * c10;
        return;
    }
    const bool phee = sps->spee;
    const int px = ne == 1 && phee;
    *psmap = edge_step(ne, phee, (p.pc * p.ps[1][px]) * (p.oc * p.ov[1][px]), c10, (p.pc * p.ps[0][1]) * (p.oc * p.ov0[0]));
}

/* MAESTRO's pe_egress(psums, first, ee, reuse_edge): the output part, times the partial sums' */
static inline long pe_egress(const egress_tab *e, bool psums, bool first, bool ee, bool reuse_edge) {
    return (psums ? e->ps[first][ee] : 1) * e->ov[first][ee][reuse_edge];
}

long maestro_spatial_egress(const level *L, const icase *cs, const egress_tab *e) {
    const ltensor *T = &L->lt[MT_OUT];
    if (!T->nsp) return pe_egress(e, false, true, false, true);
    long nc = L->csize, ne = L->nedge;
    if (!any_edge_sp(T, cs)) return pe_egress(e, false, true, false, true) + (nc - 1) * pe_egress(e, false, false, false, true);
    bool hee = cs->sv[T->sp[T->nsp - 1]]->spee;
    return edge_step(ne, hee, pe_egress(e, false, true, ne == 1 && hee, true), pe_egress(e, false, false, false, true),
                     pe_egress(e, false, false, true, true));
}

long maestro_crit_psums(const level *L, const icase *cs, const egress_tab *e) {
    const ltensor *T = &L->lt[MT_OUT];
    if (!T->nsp || !any_edge_sp(T, cs)) return pe_egress(e, true, true, false, true);
    return pe_egress(e, true, true, L->nedge == 1 && cs->sv[T->sp[T->nsp - 1]]->spee, true);
}

long maestro_psum_mapping_size(const level *L, const icase *cs, const egress_tab *e) {
    const ltensor *T = &L->lt[MT_OUT];
    const istate *sps = NULL;
    bool spe = false;
    for (int i = 0; i < T->nsp; i++) { /* output-coupled spatial maps */
        sps = cs->sv[T->sp[i]];
        if (is_edge(sps)) spe = true;
    }
    for (int i = 0; i < L->nspd; i++) { /* for partial sums: every spatial map */
        sps = cs->sv[L->d[L->spd[i]].dim];
        if (is_edge(sps)) spe = true;
    }
    long nc = L->csize, ne = L->nedge;
    if (!sps || !spe) return nc * pe_egress(e, true, true, false, true);
    bool hee = sps->spee;
    return edge_step(ne, hee, pe_egress(e, true, true, ne == 1 && hee, true), pe_egress(e, true, true, false, true),
                     pe_egress(e, true, false, true, false));
}

unsigned maestro_moving_vars(const level *L, const itab *it, const corder *o, unsigned *sub, unsigned *out, unsigned *in) {
    unsigned sp = 0, moving = 0, edges = 0; /* sp: the variables with a SpatialMap here */
    for (int i = 0; i < L->nspd; i++) sp |= 1u << L->d[L->spd[i]].dim;
    for (int j = 0; j < o->nm; j++) {
        int v = o->mv[j];
        if (v == MD_NDIM) continue; /* not its variable's last directive */
        moving |= 1u << v;
        const istate *st = it->st[o->mk[j]];
        for (int q = 1; q < it->nst[o->mk[j]]; q++)
            if (st[q].edge != st[0].edge) edges |= 1u << v;
    }
    *sub = edges;
    *out = edges | (moving & sp);
    *in = moving & sp;
    return moving;
}

long maestro_mapped_volume(const level *L, const varlist *cv) {
    long r = 1;
    for (int i = 0; i < cv->n; i++) r *= L->mapped[cv->v[i]];
    return r;
}

/* a sub-cluster's size of variable v (its first directive d) in state s */
static inline int sub_size(const level *L, const maestro_directive *d, int v, const istate *s, bool ee) {
    if (d->kind == MDIR_TEMPORAL) return is_edge(s) ? L->medge[v] : L->mapped[v];
    if (s->pos == POS_INIT) return (is_edge(s) && (L->nedge == 1 || ee)) ? L->medge[v] : L->mapped[v];
    if (s->pos == POS_STEADY) return L->mapped[v];
    return (L->nedge == 1 || ee) ? L->medge[v] : L->mapped[v];
}

static inline void sub_out_sizes(const level *L, dimtab *out) {
    if (!L->conv) return;
    if (dim_has(out, MD_Y)) out->dims[MD_YP] = out->dims[MD_Y] - out->dims[MD_R] + 1, out->has |= 1u << MD_YP;
    if (dim_has(out, MD_X)) out->dims[MD_XP] = out->dims[MD_X] - out->dims[MD_S] + 1, out->has |= 1u << MD_XP;
}

void maestro_sub_dims(const level *L, const icase *cs, bool ee, dimtab *out) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < L->nd; k++) {
        const maestro_directive *d = &L->d[k];
        int v = d->dim;
        if (dim_has(out, v)) continue; /* first insertion wins */
        out->dims[v] = sub_size(L, d, v, cs->sv[v], ee);
        out->has |= 1u << v;
    }
    sub_out_sizes(L, out);
}

bool maestro_sub_dims_update(const level *L, const icase *cs, bool ee, unsigned vars, dimtab *out) {
    bool changed = false;
    for (; vars; vars &= vars - 1) {
        int v = __builtin_ctz(vars);
        int sz = sub_size(L, &L->d[L->first[v]], v, cs->sv[v], ee);
        changed |= out->dims[v] != sz;
        out->dims[v] = sz;
    }
    if (changed) sub_out_sizes(L, out);
    return changed;
}
