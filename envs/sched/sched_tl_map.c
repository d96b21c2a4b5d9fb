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

static const char *const tnames[SCHED_NT] = {"I", "W", "O"};
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
    snprintf(v->name, sizeof v->name, "%s", name);
    v->row = -1;
    for (int d = 0; d < SCHED_NDIM; d++) {
        v->tf[d] = v->sf[d] = 1;
        v->tperm[d] = d;
    }
    return v;
}

void sched_tl_from_table(const sched_accel *a, const sched_layer *l, const sched_table *t, tl_spec *s) {
    s->nl = 0;
    for (int r = 0; r < SCHED_NROW; r++) s->rowlvl[r] = -1, s->rowsp[r] = 0;
    memcpy(s->dims, l->d, sizeof s->dims);
    s->stride = l->stride;
    s->e_mac = a->e_mac;
    double hx[TL_MAXLV], hy[TL_MAXLV];
    int pend = -1; /* spatial row waiting for its parent (single-axis group or the Y row) */
    static const int storage[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
    static const int group_above[4] = {0, 1, 2, -1}; /* spatial group between storage k and k+1 */
    static const char *const gname[3] = {"MAC", "PE", "CHIP"};
    for (int k = 0; k < 4; k++) {
        int r = storage[k];
        if (a->present[r]) {
            int first = 1;
            for (int i = 0; i < SCHED_NT; i++) {
                int ten = sub_order[i];
                if (!a->keeps[r][ten] && !(r == SR_GB || r == SR_DRAM)) continue;
                if ((r == SR_GB || r == SR_DRAM) && !first) break;
                char nm[TL_NAMELEN];
                if (r == SR_GB || r == SR_DRAM) snprintf(nm, sizeof nm, "%s", sched_row_names[r]);
                else snprintf(nm, sizeof nm, "%s_%s", sched_row_names[r], tnames[ten]);
                tl_level *v = push(s, nm);
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
                    for (int d = 0; d < SCHED_NDIM; d++) v->tf[d] = t->f[r][d];
                    sched_table_order(a, t, r, v->tperm);
                    if (pend >= 0) {
                        s->rowlvl[pend] = li;
                        s->rowsp[pend] = 1;
                        int ax = (pend == SR_MACY || pend == SR_PEY || pend == SR_CHY);
                        for (int d = 0; d < SCHED_NDIM; d++) {
                            v->sf[d] = t->f[pend][d];
                            v->saxis[d] = ax;
                        }
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
            char nm[TL_NAMELEN];
            snprintf(nm, sizeof nm, "%s_XDUMMY", gname[gi]);
            /* a pending row (absent parent) cannot be carried by a dummy: drop to the dummy's X */
            tl_level *v = push(s, nm);
            int li = s->nl - 1;
            v->entries = 0;
            hx[li] = a->units[gx];
            hy[li] = 1;
            for (int d = 0; d < SCHED_NDIM; d++) v->sf[d] = t->f[gx][d];
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
