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

int maestro_spatial_ingress(const level *L, const varlist *cv, const icase *cs, long *out) {
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

long maestro_spatial_egress(const level *L, const varlist *ov, const icase *cs) {
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

long maestro_crit_psums(const level *L, const varlist *ov, const icase *cs) {
    const istate *sps;
    bool spm = sp_info(L, ov, cs, &sps);
    if (!spm) return pe_egress(L, ov, cs, true, true, false, true);
    if (!any_edge_sp(L, ov, cs)) return pe_egress(L, ov, cs, true, true, false, true);
    return pe_egress(L, ov, cs, true, true, L->nedge == 1 && sps->spee, true);
}

long maestro_psum_mapping_size(const level *L, const varlist *ov, const icase *cs) {
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

long maestro_mapped_volume(const level *L, const varlist *cv) {
    long r = 1;
    for (int i = 0; i < cv->n; i++) r *= L->mapped[cv->v[i]];
    return r;
}

void maestro_sub_dims(const level *L, const icase *cs, bool ee, dimtab *out) {
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
