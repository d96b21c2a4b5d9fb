/* tl_stats.c - timeloop-model.stats.txt in Timeloop v3's layout (tl_stats.h). Lines whose value
 * the model does not compute (multicast breakdowns, hop counts, sparse metadata) are left out
 * rather than printed with a made-up value; every line printed carries the model's number. */
#include "tl_stats.h"

#include <string.h>

/* Timeloop prints the data spaces in problem-shape order: Weights, Inputs, Outputs */
static const int ds_order[SCHED_NT] = {ST_W, ST_I, ST_O};
static const char *const ds_name[SCHED_NT] = {"Inputs", "Weights", "Outputs"};

static double fanout_below(const tl_spec *s, const tl_result *r, int l) {
    double inner = l ? r->inst_used[l - 1] : r->spatial_util * s->mac_instances;
    return r->inst_used[l] > 0 ? inner / r->inst_used[l] : 0;
}

static void net_name(const tl_spec *s, int l, char *out, size_t n) {
    snprintf(out, n, "%s <==> %s", s->lv[l].name, l ? s->lv[l - 1].name : "MAC");
}

static void write_mac(FILE *f, const tl_spec *s, const tl_result *r) {
    fprintf(f, "Level 0\n-------\n=== MAC ===\n\n    SPECS\n    -----\n");
    fprintf(f, "    Instances             : %.0f (%.0f*%.0f)\n", s->mac_instances, s->mac_meshx, s->mac_instances / s->mac_meshx);
    fprintf(f, "    Energy-per-op         : %.2f pJ\n\n", s->e_mac);
    fprintf(f, "    STATS\n    -----\n");
    fprintf(f, "    Utilized instances      : %.0f\n", r->spatial_util * s->mac_instances);
    fprintf(f, "    Cycles                  : %.0f\n", r->cycles);
    fprintf(f, "    Energy (total)          : %.2f pJ\n", r->e_mac_total);
    fprintf(f, "    Area (total)            : 0.00 um^2\n\n");
}

/* the level's loops, outermost first, trivial ones left out (Timeloop's MAPPING block) */
static void write_loops(FILE *f, const tl_level *v) {
    fprintf(f, "    MAPPING\n    -------\n    Loop nest:\n");
    char ind[2 * (2 * SCHED_NDIM + 1) + 1] = "  ";
    size_t ni = 2;
    for (int i = SCHED_NDIM - 1; i >= 0; i--) {
        int d = v->tperm[i];
        if (v->tf[d] <= 1) continue;
        fprintf(f, "    %sfor %s in [0:%d)\n", ind, sched_dim_names[d], v->tf[d]);
        ind[ni++] = ' ', ind[ni++] = ' ', ind[ni] = 0;
    }
    for (int ax = 1; ax >= 0; ax--)
        for (int d = 0; d < SCHED_NDIM; d++) {
            if (v->sf[d] <= 1 || v->saxis[d] != ax) continue;
            fprintf(f, "    %sfor %s in [0:%d) (Spatial-%c)\n", ind, sched_dim_names[d], v->sf[d], ax ? 'Y' : 'X');
            ind[ni++] = ' ', ind[ni++] = ' ', ind[ni] = 0;
        }
    fprintf(f, "\n");
}

static void write_level(FILE *f, const tl_spec *s, const tl_result *r, int l) {
    const tl_level *v = &s->lv[l];
    fprintf(f, "Level %d\n-------\n=== %s ===\n\n    SPECS\n    -----\n", l + 1, v->name);
    fprintf(f, "        Technology                   : %s\n", v->dram ? "DRAM" : "SRAM");
    if (v->entries >= 0) fprintf(f, "        Data storage size            : %.0f\n", v->entries);
    else fprintf(f, "        Data storage size            : -\n");
    fprintf(f, "        Instances                    : %.0f (%.0f*%.0f)\n", v->instances, v->meshx, v->instances / v->meshx);
    if (v->bw > 0) fprintf(f, "        Shared bandwidth             : %.2f\n", v->bw);
    else fprintf(f, "        Shared bandwidth             : -\n");
    fprintf(f, "        Vector read energy           : %.2f pJ\n", v->e_read);
    fprintf(f, "        Vector write energy          : %.2f pJ\n", v->e_fill);
    fprintf(f, "        Area                         : 0.00 um^2\n\n");
    write_loops(f, v);
    double slow = r->level_cycles[l] > r->compute_cycles ? r->compute_cycles / r->level_cycles[l] : 1.0;
    fprintf(f, "    STATS\n    -----\n");
    fprintf(f, "    Cycles               : %.0f\n", r->cycles);
    fprintf(f, "    Bandwidth throttling : %.2f\n", slow);
    for (int k = 0; k < SCHED_NT; k++) {
        int t = ds_order[k];
        if (!v->keep[t]) continue;
        double n = r->inst_used[l];
        double acc = r->reads[l][t] + r->fills[l][t] + r->updates[l][t];
        double e = r->reads[l][t] * v->e_read + r->fills[l][t] * v->e_fill + r->updates[l][t] * v->e_update;
        fprintf(f, "    %s:\n", ds_name[t]);
        fprintf(f, "        Max utilized data storage capacity                          : %.0f\n", r->tile[l][t]);
        fprintf(f, "        Utilized instances (max)                                    : %.0f\n", n);
        fprintf(f, "        Utilized clusters (max)                                     : %.0f\n", n);
        static const char *const what[3] = {"reads", "fills", "updates"};
        const double cnt[3] = {r->reads[l][t], r->fills[l][t], r->updates[l][t]};
        for (int a = 0; a < 3; a++) {
            char k1[64], k2[64];
            snprintf(k1, sizeof k1, "Algorithmic scalar %s (per-instance)", what[a]);
            snprintf(k2, sizeof k2, "Actual scalar %s (per-instance)", what[a]);
            fprintf(f, "        %-60s: %.0f\n", k1, cnt[a] / n);
            fprintf(f, "        %-60s: %.0f\n", k2, cnt[a] / n);
        }
        fprintf(f, "        %-60s: %.2f pJ\n", "Energy (per-scalar-access)", acc > 0 ? e / acc : 0.0);
        fprintf(f, "        %-60s: %.2f pJ\n", "Energy (per-instance)", e / n);
        fprintf(f, "        %-60s: %.2f pJ\n", "Energy (total)", e);
    }
    fprintf(f, "\n");
}

static void write_network(FILE *f, const tl_spec *s, const tl_result *r, int l, int id) {
    char nm[2 * TL_NAMELEN + 8];
    net_name(s, l, nm, sizeof nm);
    const tl_level *v = &s->lv[l];
    double n = r->inst_used[l];
    fprintf(f, "Network %d\n---------\n%s\n\n    SPECS\n    -----\n", id, nm);
    fprintf(f, "        Type            : Legacy\n");
    fprintf(f, "        Legacy sub-type : \n");
    fprintf(f, "        Router energy   : 0.00 pJ\n");
    fprintf(f, "        Wire energy     : 0.00 pJ/b/mm\n");
    fprintf(f, "        Energy per ingress : %.2f pJ\n\n", v->e_ingress);
    fprintf(f, "    STATS\n    -----\n");
    for (int k = 0; k < SCHED_NT; k++) {
        int t = ds_order[k];
        double in = r->ingress_t[l][t], e = in * v->e_ingress;
        fprintf(f, "    %s:\n", ds_name[t]);
        fprintf(f, "        %-40s: %.0f\n", "Fanout", fanout_below(s, r, l));
        fprintf(f, "        %-40s: %.0f\n", "Ingresses", in);
        fprintf(f, "        %-40s: 0.00\n", "Average number of hops");
        fprintf(f, "        %-40s: 0.00 fJ\n", "Energy (per-hop)");
        fprintf(f, "        %-40s: %.2f pJ\n", "Energy (per-instance)", n > 0 ? e / n : 0.0);
        fprintf(f, "        %-40s: %.2f pJ\n", "Energy (total)", e);
    }
    fprintf(f, "\n");
}

/* network indices in Timeloop's order (its std::map sorts the names) */
static void net_order(const tl_spec *s, int *ord) {
    char names[TL_MAXLV][2 * TL_NAMELEN + 8];
    for (int l = 0; l < s->nl; l++) net_name(s, l, names[l], sizeof names[l]), ord[l] = l;
    for (int i = 1; i < s->nl; i++)
        for (int j = i; j > 0 && strcmp(names[ord[j - 1]], names[ord[j]]) > 0; j--) {
            int x = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = x;
        }
}

static void write_summary(FILE *f, const tl_spec *s, const tl_result *r, const int *ord) {
    fprintf(f, "Summary Stats\n-------------\n");
    fprintf(f, "GFLOPs (@1GHz): %.2f\n", r->macs / r->cycles);
    fprintf(f, "Utilization: %.2f%%\n", 100 * r->utilization);
    fprintf(f, "Cycles: %.0f\n", r->cycles);
    fprintf(f, "Energy: %.2f uJ\n", r->energy / 1e6);
    fprintf(f, "EDP(J*cycle): %.2e\n", r->energy * 1e-12 * r->cycles);
    fprintf(f, "Area: 0.00 mm^2\n\n");
    size_t w = strlen("MAC");
    char nm[2 * TL_NAMELEN + 8];
    for (int l = 0; l < s->nl; l++) {
        net_name(s, l, nm, sizeof nm);
        if (strlen(nm) > w) w = strlen(nm);
    }
    int align = (int)w + 1;
    fprintf(f, "Computes = %.0f\npJ/Compute\n", r->macs);
    fprintf(f, "    %-*s= %.2f\n", align, "MAC", r->e_mac_total / r->macs);
    for (int l = 0; l < s->nl; l++) fprintf(f, "    %-*s= %.2f\n", align, s->lv[l].name, r->e_level[l] / r->macs);
    for (int i = 0; i < s->nl; i++) {
        net_name(s, ord[i], nm, sizeof nm);
        fprintf(f, "    %-*s= %.2f\n", align, nm, r->e_net[ord[i]] / r->macs);
    }
    fprintf(f, "    %-*s= %.2f\n", align, "Total", r->energy / r->macs);
}

void tl_stats_write(FILE *f, const tl_spec *s, const tl_result *r) {
    fprintf(f, "Buffer and Arithmetic Levels\n----------------------------\n");
    write_mac(f, s, r);
    for (int l = 0; l < s->nl; l++) write_level(f, s, r, l);
    int ord[TL_MAXLV];
    net_order(s, ord);
    fprintf(f, "Networks\n--------\n");
    for (int i = 0; i < s->nl; i++) write_network(f, s, r, ord[i], i);
    fprintf(f, "\nOperational Intensity Stats\n---------------------------\n");
    fprintf(f, "    %-40s: %.0f\n", "Total elementwise ops", r->macs);
    fprintf(f, "\n\n");
    write_summary(f, s, r, ord);
}
