/* The maestro cost model's tabled reuse analysis (maestro_reuse.c: every flag combination of a
 * case from one pass) against MAESTRO's own one-question-a-pass definitions, kept here as the
 * reference (the model's code before the tables), on every iteration case of every cluster level of
 * random mappings; and the model's hand-written formatters (reasons, mapping text) against snprintf. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "maestro/maestro_internal.h"

/* ---------- the reference: MAESTRO's definitions, one pass per question ---------- */
static const istate *stv(const level *L, const icase *cs, int v) {
    (void)L;
    return cs->sv[v]; /* the state of v's last directive */
}

/* pe_mapped's factor: a directive's size when every variable is in its Init state */
static long mapped_factor(const level *L, const maestro_directive *d, const istate *s, bool first, bool ee) {
    int v = d->dim, na = L->nedge;
    if (d->kind == MDIR_TEMPORAL) return is_edge(s) ? L->medge[v] : L->mapped[v];
    if (!is_edge(s)) return L->mapped[v];
    if (na == 1 && (first || ee)) return L->medge[v];
    if (na > 1) return ee ? L->medge[v] : L->mapped[v];
    return 1;
}

static int pe_ingress(const level *L, const varlist *cv, const icase *cs, bool first, bool ee, long *out) {
    int chg = -1;
    for (int k = 0; k < L->nd; k++)
        if (stv(L, cs, L->d[k].dim)->pos != POS_INIT) chg = k;
    if (chg == -1) { /* pe_mapped */
        long r = 1;
        for (int k = 0; k < L->nd; k++)
            if (in_list(cv, L->d[k].dim)) r *= mapped_factor(L, &L->d[k], stv(L, cs, L->d[k].dim), first, ee);
        *out = r;
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

static int ref_spatial_ingress(const level *L, const varlist *cv, const icase *cs, long *out) {
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

/* a SpatialMap's factor in pe_egress: variable v, its sizes read at a (the partial sums: a = v,
 * without reuse at an edge) */
static long ref_sp_factor(const level *L, const istate *s, int v, int a, bool first, bool ee, bool reuse_edge) {
    long r = 1;
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
    return r;
}

static long ref_pe_egress(const level *L, const varlist *ov, const icase *cs, bool psums, bool first, bool ee, bool reuse_edge) {
    long r = 1;
    if (psums) {
        for (int k = 0; k < L->nd; k++) {
            const maestro_directive *d = &L->d[k];
            int v = d->dim;
            if (in_list(ov, v)) continue;
            const istate *s = stv(L, cs, v);
            if (d->kind == MDIR_TEMPORAL) r *= is_edge(s) ? L->medge[v] : L->mapped[v];
            else r *= ref_sp_factor(L, s, v, v, first, ee, false);
        }
    }
    for (int i = 0; i < ov->n; i++) {
        int v = ov->v[i];
        const maestro_directive *d = &L->d[L->first[v]];
        const istate *s = stv(L, cs, v);
        int a = !L->conv ? v : v == MD_Y ? MD_YP : v == MD_X ? MD_XP : v;
        if (d->kind != MDIR_TEMPORAL) r *= ref_sp_factor(L, s, v, a, first, ee, reuse_edge);
        else if (s->pos == POS_INIT) r *= is_edge(s) ? L->medge[a] : L->mapped[a];
        else if (s->pos == POS_STEADY) r *= L->mapped[a];
        else r *= L->medge[a];
    }
    return r;
}

/* the edge step's sum, as MAESTRO adds it (first PE, full PEs, edge-of-edge PE) */
static long ref_edge_step(long ne, bool hee, long a, long full, long ee) {
    long r = a;
    if (ne > 1) {
        long nee = hee ? 1 : 0, nf = ne - nee - 1;
        if (nf < 0) nf = 0;
        r += nf * full;
        r += nee * ee;
    }
    return r;
}

static long ref_spatial_egress(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps;
    bool spm = sp_info(L, ov, cs, &sps);
    if (!spm) return ref_pe_egress(L, ov, cs, false, true, false, true);
    long nc = L->csize, ne = L->nedge;
    if (!any_edge_sp(L, ov, cs))
        return ref_pe_egress(L, ov, cs, false, true, false, true) + (nc - 1) * ref_pe_egress(L, ov, cs, false, false, false, true);
    bool hee = sps->spee;
    return ref_edge_step(ne, hee, ref_pe_egress(L, ov, cs, false, true, ne == 1 && hee, true), ref_pe_egress(L, ov, cs, false, false, false, true),
                         ref_pe_egress(L, ov, cs, false, false, true, true));
}

static long ref_crit_psums(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps;
    bool spm = sp_info(L, ov, cs, &sps);
    if (!spm) return ref_pe_egress(L, ov, cs, true, true, false, true);
    if (!any_edge_sp(L, ov, cs)) return ref_pe_egress(L, ov, cs, true, true, false, true);
    return ref_pe_egress(L, ov, cs, true, true, L->nedge == 1 && sps->spee, true);
}

static long ref_psum_mapping_size(const level *L, const varlist *ov, const icase *cs) {
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
    if (!spm) return nc * ref_pe_egress(L, ov, cs, true, true, false, true);
    if (!spe) return nc * ref_pe_egress(L, ov, cs, true, true, false, true);
    bool hee = sps->spee;
    return ref_edge_step(ne, hee, ref_pe_egress(L, ov, cs, true, true, ne == 1 && hee, true), ref_pe_egress(L, ov, cs, true, true, false, true),
                         ref_pe_egress(L, ov, cs, true, false, true, false));
}

/* ---------- random layers and mappings (well-formed enough that most reach the analysis) ---------- */
static unsigned long long rs;
static unsigned rnd(unsigned n) {
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static void random_case(maestro_layer *l, maestro_hw *h, maestro_mapping *m) {
    maestro_ltype t = (maestro_ltype)rnd(4);
    maestro_layer_init(l, t, "r");
    static const int sz[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 56};
    for (int v = 0; v < MD_NDIM; v++) l->dim[v] = sz[rnd(13)];
    l->dim[MD_R] = 1 + (int)rnd(5), l->dim[MD_S] = 1 + (int)rnd(5);
    if (l->dim[MD_Y] < l->dim[MD_R]) l->dim[MD_Y] = l->dim[MD_R] + (int)rnd(8);
    if (l->dim[MD_X] < l->dim[MD_S]) l->dim[MD_X] = l->dim[MD_S] + (int)rnd(8);
    if (t == MAESTRO_GEMM) l->dim[MD_R] = l->dim[MD_S] = l->dim[MD_X] = 1;
    if (t != MAESTRO_NGCONV) l->dim[MD_G] = 1;
    l->has_n = t != MAESTRO_GEMM && rnd(3) == 0;
    if (!l->has_n) l->dim[MD_N] = 1;
    if (t == MAESTRO_DSCONV) l->dim[MD_K] = 1;
    l->stride_x = l->stride_y = 1 + (rnd(4) == 0);
    maestro_layer_finish(l);
    maestro_hw_default(h);
    h->num_pes = 64 << rnd(5);
    m->n = 0;
    int nlv = 1 + (int)rnd(3);
    for (int lv = 0; lv < nlv; lv++) {
        if (lv) m->d[m->n++] = (maestro_directive){MDIR_CLUSTER, 0, 0, 1 << rnd(4), 0};
        int dims[8], nds = 0;
        if (t == MAESTRO_GEMM) dims[nds++] = MD_Y, dims[nds++] = MD_K, dims[nds++] = MD_C;
        else {
            static const int base[] = {MD_K, MD_C, MD_R, MD_S, MD_Y, MD_X};
            for (int q = 0; q < 6; q++) dims[nds++] = base[q];
            if (l->has_n) dims[nds++] = MD_N;
            if (t == MAESTRO_NGCONV) dims[nds++] = MD_G;
        }
        for (int q = nds - 1; q > 0; q--) {
            int j = (int)rnd((unsigned)q + 1), x = dims[q];
            dims[q] = dims[j], dims[j] = x;
        }
        int keep = lv ? 1 + (int)rnd((unsigned)nds) : nds, sp1 = (int)rnd((unsigned)keep), sp2 = rnd(3) == 0 ? (int)rnd((unsigned)keep) : -1;
        for (int q = 0; q < keep; q++) {
            maestro_directive *d = &m->d[m->n++];
            d->kind = (q == sp1 || q == sp2) ? MDIR_SPATIAL : MDIR_TEMPORAL;
            d->dim = (unsigned char)dims[q];
            d->logical = 0;
            int full = l->dim[d->dim];
            d->size = rnd(3) == 0 ? full : 1 + (int)rnd((unsigned)full + 1);
            d->ofs = rnd(3) ? d->size : 1 + (int)rnd((unsigned)d->size);
            if (d->kind == MDIR_TEMPORAL && (d->dim == MD_R || d->dim == MD_S)) d->size = d->ofs = full;
        }
    }
}

/* the states of the moving directives over the variables vars, in mixed radix; -1 past PAT_MAX */
#define PAT_MAX 4096
static long pattern(const itab *it, const corder *o, unsigned vars) {
    long p = 0, m = 1;
    for (int j = 0; j < o->nm; j++)
        if (o->mv[j] < MD_NDIM && ((vars >> o->mv[j]) & 1u)) p += o->ctr[j] * m, m *= it->nst[o->mk[j]];
    return m > PAT_MAX ? -1 : p;
}

/* every case of level L on dimensions D: the tabled answers equal the reference's */
static long check_level(const ctx *c, const level *L, const dimtab *D) {
    for (int k = 0; k < L->nd; k++)
        if (!dim_has(D, L->d[k].dim)) return 0;
    itab it;
    maestro_iteration_states(L, D, &it);
    long ncases, occ_sum = 0, want_occ = 1;
    corder o;
    icase cs;
    if (maestro_cases_begin(L, &it, &o, &cs, &ncases) || ncases > 5000) return 0;
    for (int k = 0; k < L->nd; k++) { /* every combination of states once: the occurrences' sum is this product */
        long s = 0;
        for (int q = 0; q < it.nst[k]; q++) {
            const istate *st = &it.st[k][q];
            s += st->occ;
            cr_assert_eq(st->edge, st->pos == POS_EDGE || st->iedge, "directive %d state %d: edge flag %d", k, q, st->edge);
            if (L->d[k].kind == MDIR_TEMPORAL && it.nst[k] > 1) /* maestro_moving_vars' *in relies on it */
                cr_assert(!it.st[k][0].edge, "directive %d: a moving TemporalMap starts at an edge", k);
        }
        want_occ *= s;
    }
    const istate *prev[MD_NDIM] = {0};
    dimtab sub[2];
    unsigned pend[2] = {0, 0}, subvars, egvars, ingvars, moving = maestro_moving_vars(L, &it, &o, &subvars, &egvars, &ingvars);
    long prev_out[3] = {0, 0, 0};
    static long egk[PAT_MAX][3], ingk[LV_DIRS + 1][PAT_MAX][2]; /* the answers kept per pattern */
    static bool egmade[PAT_MAX], ingmade[LV_DIRS + 1][PAT_MAX];
    memset(egmade, 0, sizeof egmade), memset(ingmade, 0, sizeof ingmade);
    for (long cid = 0; cid < ncases; cid++) {
        occ_sum += maestro_case_next(&it, &o, &cs);
        unsigned moved = 0; /* the variables whose state differs from the previous case's */
        for (int i = 0; i < L->nvar; i++) {
            int v = L->var[i];
            if (cs.sv[v] != prev[v]) moved |= 1u << v;
            prev[v] = cs.sv[v];
        }
        cr_assert_eq(cs.moved, moved, "case %ld: moved %#x, want %#x", cid, cs.moved, moved);
        cr_assert(cid == 0 || !(moved & ~moving), "case %ld: %#x moved, outside the moving variables %#x", cid, moved, moving);
        for (int ee = 0; ee < 2; ee++) { /* sub dimensions brought up to date: every case, or every third with the moves since */
            pend[ee] |= cs.moved & subvars; /* the moves of the other variables leave them as they are */
            if (ee && cid % 3 != 2 && cid) continue;
            dimtab want;
            maestro_sub_dims(L, &cs, ee, &want);
            if (cid == 0) sub[ee] = want;
            dimtab before = sub[ee];
            bool changed = maestro_sub_dims_update(L, &cs, ee, pend[ee], &sub[ee]);
            pend[ee] = 0;
            cr_assert_eq(memcmp(&sub[ee], &want, sizeof want), 0, "case %ld ee %d: updated sub dimensions differ", cid, ee);
            cr_assert_eq(changed, memcmp(&before, &want, sizeof want) != 0, "case %ld ee %d: changed %d", cid, ee, changed);
        }
        int chg = -1;
        for (int k = 0; k < L->nd; k++) {
            int v = L->d[k].dim, lk = L->last[v];
            cr_assert(cs.sv[v] >= &it.st[lk][0] && cs.sv[v] < &it.st[lk][it.nst[lk]], "case %ld: %d's state is not its last directive's", cid, v);
            if (stv(L, &cs, v)->pos != POS_INIT) chg = k;
        }
        cr_assert_eq(cs.chg, chg);
        for (int t = 0; t < 2; t++) {
            long want = 0, got = 0;
            int rw = ref_spatial_ingress(L, &c->tv[t], &cs, &want), rg = maestro_spatial_ingress(L, t, &cs, &got);
            cr_assert_eq(rg, rw, "tensor %d case %ld", t, cid);
            if (!rw) cr_assert_eq(got, want, "tensor %d case %ld: ingress %ld, MAESTRO's %ld", t, cid, got, want);
        }
        const varlist *ov = &c->tv[MT_OUT];
        egress_tab e;
        maestro_egress_tab(L, &cs, &e);
        for (int q = 0; q < 16; q++) {
            bool ps = q & 1, first = q & 2, ee = q & 4, reuse = q & 8;
            cr_assert_eq((ps ? e.ps[first][ee] : 1) * e.ov[first][ee][reuse], ref_pe_egress(L, ov, &cs, ps, first, ee, reuse),
                         "pe_egress(%d,%d,%d,%d) case %ld", ps, first, ee, reuse, cid);
        }
        cr_assert_eq(maestro_spatial_egress(L, &cs, &e), ref_spatial_egress(L, ov, &cs));
        cr_assert_eq(maestro_crit_psums(L, &cs, &e), ref_crit_psums(L, ov, &cs));
        cr_assert_eq(maestro_psum_mapping_size(L, &cs, &e), ref_psum_mapping_size(L, ov, &cs));
        long eg = -7, np = -7, pm = -7, np2 = -7, eg2 = -7; /* the case loop's one-pass answers */
        maestro_case_out(L, &cs, &eg, &np, &pm);
        cr_assert_eq(eg, ref_spatial_egress(L, ov, &cs), "case %ld: case_out's egress", cid);
        cr_assert_eq(np, ref_crit_psums(L, ov, &cs), "case %ld: case_out's partial sums", cid);
        cr_assert_eq(pm, ref_psum_mapping_size(L, ov, &cs), "case %ld: case_out's psum mapping size", cid);
        maestro_case_out(L, &cs, &eg2, &np2, NULL);
        cr_assert(eg2 == eg && np2 == np, "case %ld: case_out without psmap", cid);
        if (cid && !(cs.moved & egvars)) /* the case loop keeps the last case's answers */
            cr_assert(eg == prev_out[0] && np == prev_out[1] && pm == prev_out[2], "case %ld: moves %#x outside %#x changed case_out", cid, cs.moved, egvars);
        prev_out[0] = eg, prev_out[1] = np, prev_out[2] = pm;
        long ep = pattern(&it, &o, egvars); /* case_out's answers are a function of the egvars variables' states */
        if (ep >= 0 && egmade[ep]) cr_assert(egk[ep][0] == eg && egk[ep][1] == np && egk[ep][2] == pm, "case %ld: case_out differs from pattern %ld's", cid, ep);
        if (ep >= 0) egk[ep][0] = eg, egk[ep][1] = np, egk[ep][2] = pm, egmade[ep] = true;
        long ing[2], want[2];
        int rw = ref_spatial_ingress(L, &c->tv[MT_IN], &cs, &want[0]);
        if (!rw) rw = ref_spatial_ingress(L, &c->tv[MT_W], &cs, &want[1]);
        int rg = maestro_case_ingress(L, &cs, ing);
        cr_assert_eq(rg, rw, "case %ld: case_ingress fails %d, MAESTRO %d", cid, rg, rw);
        if (!rw) cr_assert(ing[0] == want[0] && ing[1] == want[1], "case %ld: case_ingress %ld %ld, MAESTRO's %ld %ld", cid, ing[0], ing[1], want[0], want[1]);
        /* the ingress is a function of the changing directive and the ingvars variables' states */
        long ip = pattern(&it, &o, ingvars);
        if (ip >= 0 && ingmade[cs.chg + 1][ip])
            cr_assert(!rw && ingk[cs.chg + 1][ip][0] == want[0] && ingk[cs.chg + 1][ip][1] == want[1], "case %ld: ingress differs from pattern %ld's (directive %d)", cid, ip, cs.chg);
        if (ip >= 0 && !rw) ingk[cs.chg + 1][ip][0] = want[0], ingk[cs.chg + 1][ip][1] = want[1], ingmade[cs.chg + 1][ip] = true;
    }
    cr_assert_eq(occ_sum, want_occ, "the cases' occurrences sum to %ld, want %ld", occ_sum, want_occ);
    return ncases;
}

Test(maestro_reuse, tables_answer_what_maestros_definitions_answer, .timeout = 60) {
    rs = 0x9e3779b97f4a7c15ull;
    long cases = 0, levels = 0;
    for (int it = 0; it < 4000; it++) {
        maestro_layer l;
        maestro_hw h;
        maestro_mapping m;
        random_case(&l, &h, &m);
        char reason[200] = "";
        ctx c;
        memset(&c, 0, sizeof c);
        c.l = &l, c.h = &h, c.reason = reason;
        if (maestro_build_levels(&c, &m)) continue;
        for (int li = 0; li < c.nlv; li++) {
            dimtab D = c.lv[li].sd; /* the level's static dimensions (the top level's: the layer's) */
            long n = check_level(&c, &c.lv[li], &D);
            cases += n, levels += n > 0;
        }
    }
    cr_assert_gt(levels, 2000, "only %ld levels analysed", levels);
    cr_assert_gt(cases, 20000, "only %ld cases compared", cases);
}

/* the reasons' formatter: snprintf's bytes and return value, truncation included */
Test(maestro_reuse, reasons_format_as_snprintf_does) {
    static const long long vals[] = {0, 1, -1, 9, 10, 99, 12345, -987654, INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, LLONG_MAX, LLONG_MIN};
    size_t nv = sizeof vals / sizeof vals[0];
    for (size_t i = 0; i < nv; i++)
        for (size_t cap = 0; cap < 70; cap += 3) {
            char want[80], got[80];
            memset(want, 'x', sizeof want), memset(got, 'x', sizeof got);
            int a = (int)vals[i], b = (int)vals[(i + 3) % nv];
            long lv = (long)vals[(i + 5) % nv];
            long long llv = vals[(i + 7) % nv];
            int rw = snprintf(want, cap, "need %ld PEs, %d of %d; %lld%% at %s level %d", lv, a, b, llv, "Y'", a);
            int rg = maestro_format(got, cap, "need %ld PEs, %d of %d; %lld%% at %s level %d", lv, a, b, llv, "Y'", a);
            cr_assert_eq(rg, rw);
            cr_assert_eq(memcmp(got, want, sizeof want), 0, "cap %zu: '%.*s' vs '%.*s'", cap, (int)(cap ? cap - 1 : 0), got, (int)(cap ? cap - 1 : 0), want);
        }
    for (size_t i = 0; i < nv; i++) /* the two-number reasons, truncation included */
        for (size_t cap = 1; cap < 90; cap += 4) {
            char want[100], got[100];
            memset(want, 'x', sizeof want), memset(got, 'x', sizeof got);
            long long x = vals[i], y = vals[(i + 4) % nv];
            int rw = snprintf(want, cap, "L1 requirement %lld exceeds L1 size %lld", x, y);
            int rg = MAESTRO_FORMAT_NN(got, cap, "L1 requirement ", x, " exceeds L1 size ", y, "");
            cr_assert_eq(rg, rw, "cap %zu", cap);
            cr_assert_eq(memcmp(got, want, sizeof want), 0, "cap %zu: '%s' vs '%s'", cap, got, want);
            rw = snprintf(want, cap, "need %lld PEs, more than the %lld the hardware has", x, y);
            rg = MAESTRO_FORMAT_NN(got, cap, "need ", x, " PEs, more than the ", y, " the hardware has");
            cr_assert_eq(rg, rw, "cap %zu", cap);
            cr_assert_eq(memcmp(got, want, sizeof want), 0, "cap %zu: '%s' vs '%s'", cap, got, want);
        }
    char want[200], got[200]; /* a conversion it does not write itself goes to vsnprintf */
    cr_assert_eq(maestro_format(got, sizeof got, "layer too large (%.3g MAC-loop iterations; %5d)", 2.5e15, 42),
                 snprintf(want, sizeof want, "layer too large (%.3g MAC-loop iterations; %5d)", 2.5e15, 42));
    cr_assert_str_eq(got, want);
}

/* the mapping text: what snprintf writes of each directive, truncated as snprintf truncates */
static int text_by_snprintf(const maestro_mapping *m, maestro_ltype t, char *buf, size_t cap) {
    char all[MAESTRO_MAX_DIRS * 64] = "";
    size_t n = 0;
    for (int i = 0; i < m->n; i++) {
        const maestro_directive *d = &m->d[i];
        if (d->kind == MDIR_CLUSTER)
            n += (size_t)snprintf(all + n, sizeof all - n, "%sCluster(%d, %s);", i ? " " : "", d->size, d->logical ? "L" : "P");
        else
            n += (size_t)snprintf(all + n, sizeof all - n, "%s%s(%d,%d) %s;", i ? " " : "", d->kind == MDIR_SPATIAL ? "SpatialMap" : "TemporalMap",
                                  d->size, d->ofs, maestro_dim_name_for(d->dim, t));
    }
    return snprintf(buf, cap, "%s", all) < (int)cap ? 0 : -1;
}

Test(maestro_reuse, mapping_text_is_snprintfs) {
    rs = 12345;
    for (int it = 0; it < 3000; it++) {
        maestro_layer l;
        maestro_hw h;
        maestro_mapping m;
        random_case(&l, &h, &m);
        if (it % 3 == 0) /* extreme sizes and logical clusters */
            for (int i = 0; i < m.n; i++) {
                if (m.d[i].kind == MDIR_CLUSTER) m.d[i].logical = (unsigned char)rnd(2);
                else m.d[i].size = rnd(2) ? INT_MIN : INT_MAX - (int)rnd(100), m.d[i].ofs = -(int)rnd(100000);
            }
        size_t caps[] = {4096, rnd(160), 0, 1, 2, (size_t)m.n * 48, (size_t)m.n * 48 + 1};
        for (size_t q = 0; q < sizeof caps / sizeof caps[0]; q++) {
            char want[4096], got[4096];
            memset(want, 'x', sizeof want), memset(got, 'x', sizeof got);
            int rw = text_by_snprintf(&m, l.type, want, caps[q]), rg = maestro_mapping_to_text_for(&m, l.type, got, caps[q]);
            cr_assert_eq(rg, rw, "cap %zu", caps[q]);
            cr_assert_eq(memcmp(got, want, sizeof want), 0, "cap %zu: %s vs %s", caps[q], got, want);
        }
    }
}

/* The tensors' variables (maestro_levels.c: made once a process per layer type and N, copied by
 * each evaluation) are MAESTRO's for every type, with and without N: input, weight, output, and
 * the input variables sorted by MAESTRO's names; evaluations of types in turn get each their own. */
static void expect_vars(const varlist *vl, const int *want, int n, const char *what) {
    cr_assert_eq(vl->n, n, "%s: %d variables, want %d", what, vl->n, n);
    unsigned mask = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(vl->v[i], want[i], "%s: variable %d is %d, want %d", what, i, vl->v[i], want[i]);
        mask |= 1u << want[i];
    }
    cr_assert_eq(vl->mask, mask, "%s: mask", what);
}

Test(maestro_reuse, tensor_variables_are_maestros_per_layer_type) {
    enum { C = MD_C, K = MD_K, Y = MD_Y, X = MD_X, R = MD_R, S = MD_S, N = MD_N, G = MD_G, E = -1 };
    /* [type][has N][tensor or invars (3)]: the variables, E-terminated */
    static const int want[4][2][4][10] = {
        [MAESTRO_CONV] = {{{C, Y, X, E}, {K, C, R, S, E}, {K, Y, X, E}, {C, K, R, S, X, Y, E}},
                          {{N, C, Y, X, E}, {K, C, R, S, E}, {N, K, Y, X, E}, {C, K, N, R, S, X, Y, E}}},
        [MAESTRO_DSCONV] = {{{C, Y, X, E}, {C, R, S, E}, {C, Y, X, E}, {C, R, S, X, Y, E}},
                            {{N, C, Y, X, E}, {C, R, S, E}, {N, C, Y, X, E}, {C, N, R, S, X, Y, E}}},
        [MAESTRO_GEMM] = {{{Y, C, E}, {C, K, E}, {Y, K, E}, {C, Y, K, E}}, {{Y, C, E}, {C, K, E}, {Y, K, E}, {C, Y, K, E}}},
        [MAESTRO_NGCONV] = {{{G, C, Y, X, E}, {G, K, C, R, S, E}, {G, K, C, Y, X, E}, {C, G, K, R, S, X, Y, E}},
                            {{N, G, C, Y, X, E}, {G, K, C, R, S, E}, {N, G, K, C, Y, X, E}, {C, G, K, N, R, S, X, Y, E}}},
    };
    static ctx c;
    char reason[256];
    maestro_hw h;
    maestro_hw_default(&h);
    for (int round = 0; round < 2; round++)
        for (int ty = 3; ty >= 0; ty--)
            for (int hn = 0; hn < 2; hn++) {
                maestro_layer l;
                maestro_layer_init(&l, (maestro_ltype)ty, "t");
                for (int v = 0; v < MD_NDIM; v++) l.dim[v] = 4;
                l.has_n = hn;
                maestro_layer_finish(&l);
                maestro_mapping m = {1, {{MDIR_SPATIAL, MD_C, 0, 1, 1}}};
                c.l = &l, c.h = &h, c.reason = reason;
                reason[0] = 0;
                cr_assert_eq(maestro_build_levels(&c, &m), 0, "type %d N %d: %s", ty, hn, reason);
                static const char *const names[4] = {"input", "weight", "output", "input variables"};
                for (int t = 0; t < 4; t++) {
                    int n = 0;
                    while (want[ty][hn][t][n] != E) n++;
                    char what[64];
                    snprintf(what, sizeof what, "type %d N %d %s", ty, hn, names[t]);
                    expect_vars(t < 3 ? &c.tv[t] : &c.invars, want[ty][hn][t], n, what);
                }
            }
}

/* maestro_layer_ok is true exactly when maestro_eval's layer checks pass, and for such a layer
 * maestro_eval_brief (the env's steps: the checks skipped, the fields maestro-v0 does not report
 * left 0) gives maestro_eval's result with those fields 0, byte for byte, on random mappings (valid, infeasible and rejected ones); layers that fail each check
 * (a zero or negative dimension, Y below R, more than 1e15 iterations) are not ok, also with an
 * empty mapping, whose reason comes between two of the checks. */
Test(maestro_reuse, checked_layer_evaluates_as_maestro_eval) {
    rs = 777;
    int ok = 0, valid = 0;
    for (int it = 0; it < 1500; it++) {
        struct {
            maestro_layer l;
            maestro_hw h;
            maestro_mapping m;
        } k; /* a random case, then maybe one check broken */
        random_case(&k.l, &k.h, &k.m);
        maestro_layer l = k.l;
        maestro_mapping m = k.m;
        const maestro_hw h = k.h;
        int bad = it % 10 == 9 ? (int)rnd(4) : -1;
        if (bad == 0) l.dim[MD_C] = -(int)rnd(3);
        if (bad == 1) l.dim[MD_Y] = l.dim[MD_R] - 1;
        if (bad == 2) l.dim[MD_K] = 1 << 20, l.dim[MD_C] = 1 << 20, l.dim[MD_Y] = 1 << 12;
        if (bad == 3) m.n = 0;
        static maestro_result want, got;
        maestro_eval(&l, &h, &m, &want);
        static const char *const layer_reasons[] = {"layer dimension", "input Y/X smaller", "layer too large"};
        bool layer_fails = false;
        for (int k = 0; k < 3; k++) layer_fails |= !strncmp(want.reason, layer_reasons[k], strlen(layer_reasons[k]));
        if (m.n == 0 && !layer_fails) { /* the empty mapping's reason hides the size check */
            maestro_mapping one = {1, {{MDIR_SPATIAL, MD_C, 0, 1, 1}}};
            maestro_result w1;
            maestro_eval(&l, &h, &one, &w1);
            layer_fails = !strncmp(w1.reason, "layer too large", 15);
        }
        cr_assert_eq(maestro_layer_ok(&l), !layer_fails, "case %d (bad %d): ok %d, maestro_eval's reason '%s'", it, bad,
                     maestro_layer_ok(&l), want.reason);
        if (layer_fails) continue;
        ok++;
        valid += want.valid;
        maestro_eval_brief(&l, &h, &m, &got);
        want.compute_cycles = 0, want.avg_bw = 0, want.arith_intensity = 0;
        for (int t = 0; t < 3; t++) want.delay_min[t] = want.delay_max[t] = want.delay_avg[t] = 0;
        cr_assert_eq(memcmp(&got, &want, sizeof got), 0, "case %d: results differ (%s / %s)", it, got.reason, want.reason);
    }
    cr_assert_gt(ok, 1200);
    cr_assert_gt(1500 - ok, 60, "only %d layers failed a check", 1500 - ok);
    cr_assert_gt(valid, 100, "only %d valid mappings", valid);
}
