/* tl_ref.c - see tl_ref.h */
#include "tl_ref.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splits one CSV record in place (double-quoted fields may hold commas) */
static int split_csv(char *line, char **f, int maxf) {
    int n = 0;
    char *p = line;
    while (n < maxf) {
        if (*p == '"') {
            p++;
            f[n++] = p;
            char *w = p;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                *w++ = *p++;
            }
            if (*p == '"') p++;
            *w = 0;
            /* skip to the comma (w may lag p) */
        } else {
            f[n++] = p;
        }
        char *c = strchr(p, ',');
        if (!c) {
            p[strcspn(p, "\r\n")] = 0;
            break;
        }
        *c = 0;
        p = c + 1;
    }
    return n;
}

static int col(char **hdr, int nh, const char *name) {
    for (int i = 0; i < nh; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

int tl_ref_load(const char *path, tl_ref_row **out) {
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    static char hline[8192];
    char *line = malloc(1 << 16);
    char *hdr[256], *f[256];
    if (!fgets(hline, sizeof hline, fp)) {
        fclose(fp);
        free(line);
        return -1;
    }
    int nh = split_csv(hline, hdr, 256);
    int cap = 1024, n = 0;
    tl_ref_row *v = calloc((size_t)cap, sizeof *v);
    static const char *const rows[4] = {"REG", "LB", "GB", "DRAM"};
    static const char *const kinds[3] = {"reads", "fills", "updates"};
    static const char *const perms[4] = {"perm_REG", "perm_LB", "perm_GB", "perm_DRAM"};
    static const int prow[4] = {SR_REG, SR_LB, SR_GB, SR_DRAM};
    while (fgets(line, 1 << 16, fp)) {
        int nf = split_csv(line, f, 256);
        if (nf < nh) continue;
        if (n == cap) {
            cap *= 2;
            v = realloc(v, (size_t)cap * sizeof *v);
        }
        tl_ref_row *r = &v[n];
        memset(r, 0, sizeof *r);
        r->id = atoi(f[col(hdr, nh, "row_id")]);
        snprintf(r->family, sizeof r->family, "%s", f[col(hdr, nh, "family")]);
        snprintf(r->accel, sizeof r->accel, "%s", f[col(hdr, nh, "accelerator")]);
        snprintf(r->reason, sizeof r->reason, "%s", f[col(hdr, nh, "tl_reason")]);
        snprintf(r->bound, sizeof r->bound, "%s", f[col(hdr, nh, "tl_bound")]);
        snprintf(r->layer.name, sizeof r->layer.name, "%s", f[col(hdr, nh, "layer")]);
        for (int d = 0; d < SCHED_NDIM; d++) r->layer.d[d] = atoi(f[col(hdr, nh, sched_dim_names[d])]);
        r->layer.stride = atoi(f[col(hdr, nh, "stride")]);
        json_t *tj = json_loads(f[col(hdr, nh, "table")], 0, NULL);
        hw_err err;
        if (!tj || sched_table_from_json(tj, &r->table, &err)) {
            json_decref(tj);
            continue;
        }
        json_decref(tj);
        for (int k = 0; k < 4; k++) {
            const char *p = f[col(hdr, nh, perms[k])];
            if (*p) sched_order_parse(p, r->table.ord[prow[k]]);
        }
        r->ok = !strcmp(f[col(hdr, nh, "tl_status")], "ok");
        r->cycles = atof(f[col(hdr, nh, "tl_cycles")]);
        r->energy = atof(f[col(hdr, nh, "tl_energy_pj")]);
        r->util = atof(f[col(hdr, nh, "tl_utilization")]);
        static const char *const parts[8] = {"MAC", "REG", "LB", "GB", "DRAM", "net_MAC", "net_PE", "net_CHIP"};
        for (int k = 0; k < 8; k++) {
            char name[64];
            snprintf(name, sizeof name, "tl_e_%s_pj", parts[k]);
            int c = col(hdr, nh, name);
            r->e[k] = (c >= 0 && *f[c]) ? atof(f[c]) : 0;
        }
        for (int k = 0; k < 4; k++)
            for (int t = 0; t < SCHED_NT; t++)
                for (int q = 0; q < 3; q++) {
                    char name[64];
                    snprintf(name, sizeof name, "tl_%s_%s_%s", rows[k], sched_tensor_names[t], kinds[q]);
                    int c = col(hdr, nh, name);
                    r->cnt[k][t][q] = (c >= 0 && *f[c]) ? atof(f[c]) : -1;
                }
        n++;
    }
    fclose(fp);
    free(line);
    *out = v;
    return n;
}
