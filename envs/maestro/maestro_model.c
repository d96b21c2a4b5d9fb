/* maestro_model.c - MAESTRO's data-centric cost model, reimplemented from its description
 * (MAESTRO paper + the reference notes). This file owns the per-level engine: the iteration
 * cases of a level, per-case delays with double buffering, traffic and buffer requirements,
 * the memo of sub-cluster results, and maestro_eval() (input checks, energy, area and power).
 * Cluster construction is in maestro_levels.c, the reuse analysis in maestro_reuse.c (the
 * shared types in maestro_internal.h). No allocation on the evaluation path.
 * The quirks of MAESTRO that change its printed numbers are reproduced on purpose (they are
 * marked "MAESTRO:" in these files); the two crashes/bugs we do not reproduce are documented in
 * docs/maestro.md ("Deliberate differences"). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "maestro_internal.h"

static inline long noc_delay(const maestro_hw *h, long t) {
    long sends = t / h->noc_bw + (t % h->noc_bw != 0);
    return h->noc_latency + sends - 1;
}

/* ---------- the per-level engine ---------- */
static int analyze_level(ctx *c, int li, const dimtab *D, lres *R);

/* A sub-cluster level's result on dimensions D (li > 0), memoised: *out points into the memo, or
 * at the level's scratch result when the memo is full (read it before the next call). */
static int analyze_sub(ctx *c, int li, const dimtab *D, const sres **out) {
    for (int i = 0; i < c->nmemo; i++) {
        const struct memo *e = &c->memo[i];
        if (e->li == li && e->has == D->has && memcmp(e->dims, D->dims, sizeof e->dims) == 0) {
            *out = &e->r;
            return 0;
        }
    }
    lres R;
    if (analyze_level(c, li, D, &R)) return -1;
    sres *S = &c->scratch[li];
    S->runtime = R.runtime, S->avg_active = R.avg_active;
    *out = S;
    if (c->nmemo < MEMO_N) {
        struct memo *e = &c->memo[c->nmemo++];
        e->li = li, e->has = D->has, e->r = *S;
        memcpy(e->dims, D->dims, sizeof e->dims);
        *out = &e->r;
    }
    return 0;
}

/* A call's sub-cluster results, per ee (the edge-of-edge sub-cluster's or not): the dimensions of
 * the last case that asked, brought up to date with the variables that moved since (pend), and
 * that case's result. A result is a function of the dimensions alone: a case whose dimensions did
 * not change takes the last one's without looking it up. */
typedef struct {
    bool made[2];
    unsigned pend[2];
    dimtab sd[2];
    sres r[2];
} subcache;

/* sub_result when the dimensions may have changed */
static int sub_result_made(ctx *c, int li, const icase *cs, bool ee, subcache *sc) {
    const level *L = &c->lv[li];
    if (!sc->made[ee]) {
        maestro_sub_dims(L, cs, ee, &sc->sd[ee]);
        sc->made[ee] = true;
    } else if (!sc->pend[ee] || !maestro_sub_dims_update(L, cs, ee, sc->pend[ee], &sc->sd[ee])) {
        sc->pend[ee] = 0;
        return 0;
    }
    sc->pend[ee] = 0;
    const sres *r;
    if (analyze_sub(c, li + 1, &sc->sd[ee], &r)) return -1;
    sc->r[ee] = *r;
    return 0;
}

/* The sub-clusters' result in case cs (ee: the edge-of-edge sub-cluster's), into sc->r[ee]: inline,
 * a case whose moves left the dimensions as they were returns at once. */
static inline int sub_result(ctx *c, int li, const icase *cs, bool ee, subcache *sc, const sres **out) {
    *out = &sc->r[ee];
    if (sc->made[ee] && !sc->pend[ee]) return 0;
    return sub_result_made(c, li, cs, ee, sc);
}

/* A call's memo of case answers keyed by a pattern: a key (the changing directive, or none) and
 * the states of the moving directives j[0..n) over the given variables, in mixed radix (m[q]: the
 * product of the earlier ones' state counts). On when the slots fit in PM_SLOTS and the call has
 * more cases than patterns of those states (else no case could find another's answer). */
#define PM_SLOTS 64
typedef struct {
    bool on;
    int n, np, j[MD_NDIM], m[MD_NDIM];
    unsigned long long ok; /* bit slot: made */
} pmemo;

static void pmemo_init(pmemo *p, const itab *it, const corder *o, unsigned vars, int nkeys, long ncases) {
    p->n = 0, p->np = 1, p->ok = 0;
    for (int j = 0; j < o->nm && p->np <= PM_SLOTS; j++)
        if (o->mv[j] < MD_NDIM && ((vars >> o->mv[j]) & 1u)) p->j[p->n] = j, p->m[p->n++] = p->np, p->np *= it->nst[o->mk[j]];
    p->on = (long)p->np * nkeys <= PM_SLOTS && ncases > p->np;
}

static inline int pmemo_slot(const pmemo *p, const corder *o, int key) {
    int slot = key * p->np;
    for (int q = 0; q < p->n; q++) slot += o->ctr[p->j[q]] * p->m[q];
    return slot;
}

/* the first of tensor t's variables missing from D, or -1 */
static int missing_var(const varlist *tv, const dimtab *D) {
    if (!(tv->mask & ~D->has)) return -1;
    for (int i = 0; i < tv->n; i++)
        if (!dim_has(D, tv->v[i])) return tv->v[i];
    return -1;
}

/* One level's result on dimensions D. The top level (li 0) fills all of *R (with c->brief, not the
 * delays, avg_bw, ai and compute_sum: those are left 0, the extreme delays +-1e300); a sub-cluster
 * level only what the level above reads (runtime, avg_active) and, at the leaf, downreq: the rest
 * of *R is not written. */
static inline __attribute__((always_inline)) int level_body(ctx *c, int li, const dimtab *D, lres *R, const bool top, const bool full,
                                                           const bool leaf) {
    const level *L = &c->lv[li];
    if (top) {
        memset(R, 0, sizeof *R);
        R->sp_occ = 1;
        for (int t = 0; t < 3; t++) R->dmin[t] = 1e300L, R->dmax[t] = -1e300L;
    } else { /* what a sub-cluster level fills; the rest of *R is not read */
        R->runtime = 0, R->avg_active = 0;
        memset(R->downreq, 0, sizeof R->downreq);
    }
    if (L->vmask & ~D->has) /* the first directive whose variable D lacks */
        for (int k = 0; k < L->nd; k++)
            if (!dim_has(D, L->d[k].dim)) return maestro_fail(c, "dimension %s missing at cluster level %d", maestro_dim_name(L->d[k].dim), li);
    itab it;
    maestro_iteration_states(L, D, &it);
    long ncases;
    corder ord;
    icase cs;
    if (maestro_cases_begin(L, &it, &ord, &cs, &ncases)) return maestro_fail(c, "more than %d iteration cases at cluster level %d", MAX_CASES, li);
    const varlist *ov = &c->tv[MT_OUT];
    long long total_occ = 0;
    int case_id = 0;
    long dmin[3] = {LONG_MAX, LONG_MAX, LONG_MAX}, dmax[3] = {LONG_MIN, LONG_MIN, LONG_MIN};
    long long ob = 0, ib = 0;            /* the top level's off-chip delays (set at its first case) */
    const int spv = L->d[L->spidx].dim; /* the first SpatialMap's variable */
    subcache sc;
    sc.made[0] = sc.made[1] = false, sc.pend[0] = sc.pend[1] = 0;
    unsigned subvars = 0, egvars = 0, ingvars = 0; /* the moves that can change the sub-clusters' dimensions, the egress (case_out), the ingress */
    pmemo inm, egm;
    inm.on = egm.on = false;
    /* the ingress per changing directive and states of the variables with a SpatialMap (nothing
     * else it reads moves), the egress per states of the variables that can change it */
    if (ncases > 1) { /* one case: nothing moves */
        maestro_moving_vars(L, &it, &ord, &subvars, &egvars, &ingvars);
        pmemo_init(&inm, &it, &ord, ingvars, L->nd + 1, ncases);
        if (egvars) pmemo_init(&egm, &it, &ord, egvars, 1, ncases); /* else the first case's answers are every case's */
    }
    long ingc[PM_SLOTS][2], ing_t[2], egc[PM_SLOTS][3];
    long egress = 0, npsums = 0, psmap = 0;
    for (long cid = 0; cid < ncases; cid++) {
        long occ = maestro_case_next(&it, &ord, &cs);
        bool all_init = cs.chg == -1; /* every variable of the level in its Init state */
        sc.pend[0] |= cs.moved & subvars, sc.pend[1] |= cs.moved & subvars;
        if (cid == 0 || (cs.moved & egvars)) {
            int slot = egm.on ? pmemo_slot(&egm, &ord, 0) : 0;
            if (egm.on && ((egm.ok >> slot) & 1u)) {
                egress = egc[slot][0], npsums = egc[slot][1], psmap = egc[slot][2];
            } else {
                maestro_case_out(L, &cs, &egress, &npsums, top ? &psmap : NULL);
                if (egm.on) egc[slot][0] = egress, egc[slot][1] = npsums, egc[slot][2] = psmap, egm.ok |= 1ull << slot;
            }
        }
        bool have_ing = false;
        if (case_id == 0) { /* buffer requirements (MAESTRO: only the first counted case) */
            for (int t = 0; t < 2; t++) {
                int mv = missing_var(&c->tv[t], D);
                if (mv >= 0) return maestro_fail(c, "dimension %s missing at cluster level %d", maestro_dim_name(mv), li);
                if (maestro_spatial_ingress(L, t, &cs, &ing_t[t])) return maestro_fail(c, "reuse analysis failed (MAESTRO terminates) at cluster level %d", li);
                if (top) {
                    long long size = 1;
                    for (int i = 0; i < c->tv[t].n; i++) size *= D->dims[c->tv[t].v[i]];
                    R->upreq[t] += 2 * ing_t[t];
                    R->l2wr[t] = size;
                }
                if (leaf) R->downreq[t] += 2 * maestro_mapped_volume(L, &c->tv[t]);
            }
            have_ing = true;
            if (inm.on) {
                int slot = pmemo_slot(&inm, &ord, cs.chg + 1);
                ingc[slot][0] = ing_t[0], ingc[slot][1] = ing_t[1], inm.ok |= 1ull << slot;
            }
            if (top) {
                long long size = 1;
                for (int i = 0; i < ov->n; i++) {
                    int v = ov->v[i];
                    size *= is_overlapped_c(L->conv, v) ? (D->dims[v] - D->dims[counterpart(v)] + 1) : D->dims[v];
                }
                R->upreq[MT_OUT] = 2 * egress;
                R->l2rd[MT_OUT] = size;
                /* the off-chip transfers' delays: the buffer requirements are fixed from here on */
                ob = R->upreq[MT_OUT] / c->h->offchip_bw / 2;
                ib = (R->upreq[MT_IN] + R->upreq[MT_W]) / c->h->offchip_bw / 2;
            }
            if (leaf) R->downreq[MT_OUT] = 2 * maestro_mapped_volume(L, ov);
        }
        if (top) {
            R->l2wr[MT_OUT] += occ * egress;
            R->l1wr[MT_OUT] += occ * psmap;
            R->l1rd[MT_OUT] += occ * psmap;
        }
        if (npsums <= 0) continue; /* MAESTRO: "Skipping Invalid case" */
        if (!have_ing) {
            int slot = inm.on ? pmemo_slot(&inm, &ord, cs.chg + 1) : 0;
            if (inm.on && ((inm.ok >> slot) & 1u)) {
                ing_t[0] = ingc[slot][0], ing_t[1] = ingc[slot][1];
            } else {
                if (maestro_case_ingress(L, &cs, ing_t)) return maestro_fail(c, "reuse analysis failed (MAESTRO terminates) at cluster level %d", li);
                if (inm.on) ingc[slot][0] = ing_t[0], ingc[slot][1] = ing_t[1], inm.ok |= 1ull << slot;
            }
        }
        long ingress = ing_t[0] + ing_t[1];
        if (top)
            for (int t = 0; t < 2; t++) {
                R->l2rd[t] += occ * ing_t[t];
                R->l1wr[t] = R->l2rd[t]; /* MAESTRO: L1 write = L2 read */
                R->l1rd[t] += occ * psmap;
            }
        if (full) R->ai = (double)psmap / (double)ingress;
        long comp = 0;
        const istate *sps = cs.sv[spv];
        long nact = is_edge(sps) ? L->nedge : L->csize;
        long double act_units = 0;
        if (!leaf) {
            const sres *sr;
            if (is_edge(sps)) {
                if (sps->spee) {
                    if (sub_result(c, li, &cs, true, &sc, &sr)) return -1;
                    comp = sr->runtime;
                    act_units += sr->avg_active * 1;
                    long rem = L->nedge - 1;
                    if (rem > 0) {
                        if (sub_result(c, li, &cs, false, &sc, &sr)) return -1;
                        if (sr->runtime > comp) comp = sr->runtime;
                        act_units += sr->avg_active * rem;
                    }
                } else {
                    if (sub_result(c, li, &cs, false, &sc, &sr)) return -1;
                    comp = sr->runtime;
                    act_units += sr->avg_active * L->nedge;
                }
            } else {
                if (sub_result(c, li, &cs, false, &sc, &sr)) return -1;
                comp = sr->runtime;
                act_units += sr->avg_active * L->csize;
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
        if (top) {
            if (ib > od) od = ib;
            if (ob > od) od = ob;
            long cd = comp > 0 ? comp : 1; /* MAESTRO divides by zero here (SIGFPE) */
            long long ofr = R->offchip;
            if (R->upreq[MT_OUT] / cd > ofr) ofr = R->upreq[MT_OUT] / cd;
            if ((R->upreq[MT_IN] + R->upreq[MT_W]) / cd > ofr) ofr = (R->upreq[MT_IN] + R->upreq[MT_W]) / cd;
            R->offchip = ofr / 2;
            R->macs += occ * psmap;
        }
        R->runtime += occ * od;
        if (act_units == 0) act_units = nact;
        R->avg_active += act_units * occ;
        total_occ += occ;
        case_id++;
        if (!top) continue;
        if (full) R->compute_sum += occ * comp;
        if (comp == 0) comp = 1;
        long mx = ingress > egress ? ingress : egress;
        if (mx / comp > R->peak_bw) R->peak_bw = mx / comp;
        if (!full) continue;
        R->avg_bw += (occ * mx) / comp;
        long dl[3] = {din, deg, comp};
        for (int t = 0; t < 3; t++) {
            R->davg[t] += occ * dl[t];
            if (dl[t] < dmin[t]) dmin[t] = dl[t];
            if (dl[t] > dmax[t]) dmax[t] = dl[t];
        }
    }
    if (case_id && full) /* the extreme delays, exact in long double (64-bit mantissa) */
        for (int t = 0; t < 3; t++) R->dmin[t] = dmin[t], R->dmax[t] = dmax[t];
    if (leaf && !c->leaf_seen) { /* MAESTRO prints the L1 needs of the first finished leaf call */
        c->leaf_seen = true;
        for (int t = 0; t < MT_N; t++) c->leaf_downreq[t] = R->downreq[t];
    }
    if (total_occ) {
        R->avg_active /= total_occ;
        if (full) {
            R->avg_bw /= total_occ;
            for (int t = 0; t < 3; t++) R->davg[t] /= total_occ;
        }
    }
    return 0;
}

/* the body made once per kind of level, without the branches that do not apply to it: the top
 * level in full (maestro_eval) and brief (c->brief), a leaf or not; a sub-cluster level, a leaf
 * or not */
static int analyze_top(ctx *c, const dimtab *D, lres *R) {
    const bool leaf = c->nlv == 1;
    if (!c->brief) return level_body(c, 0, D, R, true, true, leaf);
    return leaf ? level_body(c, 0, D, R, true, false, true) : level_body(c, 0, D, R, true, false, false);
}
static int analyze_level(ctx *c, int li, const dimtab *D, lres *R) {
    return li == c->nlv - 1 ? level_body(c, li, D, R, false, false, true) : level_body(c, li, D, R, false, false, false);
}

/* the layer's MAC-loop iterations (maestro_eval's size limit) */
static double layer_volume(const maestro_layer *l) {
    double vol = 1;
    for (int v = MD_N; v <= MD_X; v++) vol *= l->dim[v];
    return vol * l->dim[MD_G];
}

bool maestro_layer_ok(const maestro_layer *l) {
    for (int v = MD_N; v < MD_NDIM; v++)
        if (l->dim[v] <= 0 && v != MD_YP && v != MD_XP) return false;
    return l->dim[MD_Y] >= l->dim[MD_R] && l->dim[MD_X] >= l->dim[MD_S] && !(layer_volume(l) > 1e15);
}

/* maestro_eval; brief: maestro_eval_brief (the layer passed maestro_layer_ok, so its checks are
 * skipped, and the fields the brief result leaves 0 are not computed) */
static void eval(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r, bool brief) {
    const bool layer_ok = brief;
    memset(r, 0, sizeof *r);
    ctx c; /* not cleared as a whole: the memo table is large and filled on demand */
    c.nlv = 0;
    c.leaf_seen = false;
    c.nmemo = 0;
    c.brief = brief;
    memset(c.leaf_downreq, 0, sizeof c.leaf_downreq);
    c.l = l;
    c.h = h;
    c.reason = r->reason;
    if (h->num_pes <= 0 || h->noc_bw <= 0 || h->offchip_bw <= 0 || h->simd <= 0) {
        snprintf(r->reason, sizeof r->reason, "hardware needs num_pes, noc_bw, offchip_bw and simd lanes > 0");
        return;
    }
    for (int v = MD_N; v < MD_NDIM && !layer_ok; v++)
        if (l->dim[v] <= 0 && v != MD_YP && v != MD_XP) {
            snprintf(r->reason, sizeof r->reason, "layer dimension %s must be positive", maestro_dim_name(v));
            return;
        }
    if (!layer_ok && (l->dim[MD_Y] < l->dim[MD_R] || l->dim[MD_X] < l->dim[MD_S])) {
        snprintf(r->reason, sizeof r->reason, "input Y/X smaller than the filter R/S");
        return;
    }
    if (m->n == 0) {
        snprintf(r->reason, sizeof r->reason, "empty mapping (no directives)");
        return;
    }
    double vol = layer_ok ? 0 : layer_volume(l);
    if (vol > 1e15) { /* keeps every count far from 64-bit overflow */
        snprintf(r->reason, sizeof r->reason, "layer too large (%.3g MAC-loop iterations; limit 1e15)", vol);
        return;
    }
    if (maestro_build_levels(&c, m)) return;
    r->num_levels = c.nlv;
    lres R;
    if (analyze_top(&c, &c.lv[0].sd, &R)) return; /* the top level's static dimensions: the layer's */
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
    for (int t = 0; t < 3 && !brief; t++) {
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
        MAESTRO_FORMAT_NN(r->reason, sizeof r->reason, "L1 requirement ", r->l1_req_total, " exceeds L1 size ", h->l1_size, "");
    else if (r->warn_l2)
        MAESTRO_FORMAT_NN(r->reason, sizeof r->reason, "L2 requirement ", r->l2_req_total, " exceeds L2 size ", h->l2_size, "");
    if (r->warn_l1 || r->warn_l2) r->feasible = false;
}

void maestro_eval(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r) { eval(l, h, m, r, false); }

void maestro_eval_brief(const maestro_layer *l, const maestro_hw *h, const maestro_mapping *m, maestro_result *r) {
    eval(l, h, m, r, true);
}
