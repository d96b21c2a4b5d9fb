/* sched_tl_map.c - a sched-v0 accelerator + scheduling table as a Timeloop architecture and
 * mapping (NOTES.md section 2, docs/sched.md "Timeloop architecture"):
 *   REG   -> one level per kept tensor (REG_W), the row's temporal loops on the first
 *   MAC_X/MAC_Y, PE_X/PE_Y, CHIP_X/CHIP_Y -> the fan-out below LB, GB, DRAM. When a group has
 *            both X and Y units, the parent fans out along Y (the Y row) and a zero-capacity
 *            level <GROUP>_XDUMMY below it fans out along X (the X row); a single axis is
 *            carried by the parent.
 *   LB    -> LB_W, LB_I, LB_O (kept tensors, in that order); the row's loops on the innermost
 *   GB, DRAM -> one level each.
 * Loop orders: the table's per-row order when set, else the accelerator's dataflow order. */
#include <string.h>

#include "sched_internal.h"
#include "sched_tl.h"

static const int sub_order[SCHED_NT] = {ST_W, ST_I, ST_O};

void sched_table_order(const sched_accel *a, const sched_table *t, int row, int ord[SCHED_NDIM]) {
    if (t->ord[row][0]) {
        for (int i = 0; i < SCHED_NDIM; i++) ord[i] = t->ord[row][i] - 1;
        return;
    }
    for (int i = 0; i < SCHED_NDIM; i++) ord[i] = sched_order[a->df[row]][i];
}

static tl_level *push(tl_spec *s, const char *name) {
    tl_level *v = &s->lv[s->nl++];
    memset(v, 0, sizeof *v);
    size_t n = strlen(name);
    memcpy(v->name, name, n < TL_NAMELEN ? n + 1 : TL_NAMELEN - 1);
    v->row = -1;
    for (int d = 0; d < SCHED_NDIM; d++) {
        v->tf[d] = v->sf[d] = 1;
        v->tperm[d] = d;
    }
    return v;
}

/* level names: no snprintf, the map is rebuilt for every sched_cost_eval */
static const char *const sub_names[SCHED_NROW][SCHED_NT] = {
    [SR_REG] = {"REG_I", "REG_W", "REG_O"},
    [SR_LB] = {"LB_I", "LB_W", "LB_O"},
};
static const char *const dummy_names[3] = {"MAC_XDUMMY", "PE_XDUMMY", "CHIP_XDUMMY"};

void sched_tl_arch(const sched_accel *a, const sched_layer *l, tl_spec *s) {
    /* the layer's part: sched_tl_spec_cached writes these two fields for every table */
    s->nl = 0;
    for (int r = 0; r < SCHED_NROW; r++) s->rowlvl[r] = -1, s->rowsp[r] = 0;
    memcpy(s->dims, l->d, sizeof s->dims);
    s->stride = l->stride;
    s->e_mac = a->e_mac;
    double hx[TL_MAXLV], hy[TL_MAXLV];
    int pend = -1; /* spatial row waiting for its parent (single-axis group or the Y row) */
    static const int storage[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
    static const int group_above[4] = {0, 1, 2, -1}; /* spatial group between storage k and k+1 */
    for (int k = 0; k < 4; k++) {
        int r = storage[k];
        if (a->present[r]) {
            int first = 1;
            for (int i = 0; i < SCHED_NT; i++) {
                int ten = sub_order[i];
                if (!a->keeps[r][ten] && !(r == SR_GB || r == SR_DRAM)) continue;
                if ((r == SR_GB || r == SR_DRAM) && !first) break;
                tl_level *v = push(s, (r == SR_GB || r == SR_DRAM) ? sched_row_names[r] : sub_names[r][ten]);
                int li = s->nl - 1;
                hx[li] = hy[li] = 1;
                v->row = r;
                if (r == SR_GB || r == SR_DRAM) {
                    for (int q = 0; q < SCHED_NT; q++) v->keep[q] = a->keeps[r][q];
                    v->entries = r == SR_DRAM ? -1 : (a->cap_shared[r] > 0 ? a->cap_shared[r] / a->word_bytes : -1);
                } else {
                    v->keep[ten] = 1;
                    v->entries = a->cap[r][ten] > 0 ? a->cap[r][ten] / a->word_bytes : -1;
                }
                v->bw = a->bw[r];
                v->e_read = v->e_fill = v->e_update = a->e_word[r];
                if (first) {
                    s->rowlvl[r] = li;
                    if (pend >= 0) {
                        s->rowlvl[pend] = li;
                        s->rowsp[pend] = 1;
                        int ax = (pend == SR_MACY || pend == SR_PEY || pend == SR_CHY);
                        for (int d = 0; d < SCHED_NDIM; d++) v->saxis[d] = ax;
                        if (ax) hy[li] = a->units[pend];
                        else hx[li] = a->units[pend];
                        pend = -1;
                    }
                }
                first = 0;
            }
        }
        int gi = group_above[k];
        if (gi < 0) break;
        int gx = sched_groups[gi][0], gy = sched_groups[gi][1];
        int px = a->present[gx], py = a->present[gy];
        if (px && py) {
            /* a pending row (absent parent) cannot be carried by a dummy: drop to the dummy's X */
            tl_level *v = push(s, dummy_names[gi]);
            int li = s->nl - 1;
            v->entries = 0;
            hx[li] = a->units[gx];
            hy[li] = 1;
            s->rowlvl[gx] = li;
            s->rowsp[gx] = 1;
            pend = gy;
        } else if (px) pend = gx;
        else if (py) pend = gy;
    }
    /* network energies: the PE array's network belongs to GB, the chips' to DRAM */
    for (int i = 0; i < s->nl; i++) {
        tl_level *v = &s->lv[i];
        if (v->row == SR_GB) v->e_ingress = (a->present[SR_PEX] || a->present[SR_PEY]) ? a->e_word[SR_PEX] : 0;
        v->dram = v->row == SR_DRAM;
        if (v->row == SR_DRAM) v->e_ingress = (a->present[SR_CHX] || a->present[SR_CHY]) ? a->e_word[SR_CHX] : 0;
    }
    /* instances and mesh from the hardware fan-outs above each level */
    double inst = 1, mx = 1;
    for (int i = s->nl - 1; i >= 0; i--) {
        s->lv[i].instances = inst;
        s->lv[i].meshx = mx;
        inst *= hx[i] * hy[i];
        mx *= hx[i];
    }
    s->mac_instances = inst;
    s->mac_meshx = mx;
}

void sched_tl_set_table(const sched_accel *a, const sched_table *t, tl_spec *s) {
    for (int r = 0; r < SCHED_NROW; r++) {
        int li = s->rowlvl[r];
        if (li < 0) continue;
        tl_level *v = &s->lv[li];
        if (s->rowsp[r]) {
            memcpy(v->sf, t->f[r], sizeof v->sf);
        } else {
            memcpy(v->tf, t->f[r], sizeof v->tf);
            sched_table_order(a, t, r, v->tperm);
        }
    }
}

void sched_tl_from_table(const sched_accel *a, const sched_layer *l, const sched_table *t, tl_spec *s) {
    sched_tl_arch(a, l, s);
    sched_tl_set_table(a, t, s);
}

/* per-thread spec of the last accelerator (the fields sched_tl_arch reads; the layer part is
 * two fields, written every time) */
static _Thread_local struct {
    int valid;
    sched_accel a;
    tl_spec s;
} spec_cache;

static int same_arch(const sched_accel *x, const sched_accel *y) {
    return x->word_bytes == y->word_bytes && x->e_mac == y->e_mac && !memcmp(x->present, y->present, sizeof x->present) &&
           !memcmp(x->units, y->units, sizeof x->units) && !memcmp(x->keeps, y->keeps, sizeof x->keeps) &&
           !memcmp(x->cap, y->cap, sizeof x->cap) && !memcmp(x->cap_shared, y->cap_shared, sizeof x->cap_shared) &&
           !memcmp(x->e_word, y->e_word, sizeof x->e_word) && !memcmp(x->bw, y->bw, sizeof x->bw);
}

tl_spec *sched_tl_spec_cached(const sched_accel *a, const sched_layer *l, const sched_table *t) {
    if (!spec_cache.valid || !same_arch(&spec_cache.a, a)) {
        sched_tl_arch(a, l, &spec_cache.s);
        spec_cache.a = *a;
        spec_cache.valid = 1;
    }
    memcpy(spec_cache.s.dims, l->d, sizeof spec_cache.s.dims);
    spec_cache.s.stride = l->stride;
    sched_tl_set_table(a, t, &spec_cache.s);
    return &spec_cache.s;
}
