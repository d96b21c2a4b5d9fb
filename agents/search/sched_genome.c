/* sched_genome.c - sched-v0 scheduling tables as design points for hwgym-search (search.h,
 * hs_sched_genome_space). A layer's dimension D = p1*p2*...*pk (primes) gets one gene per prime;
 * gene value j puts that prime in the j-th usable row (the accelerator's present storage rows
 * and its spatial rows with more than one unit), so every genome is a table whose columns
 * multiply to the layer: the Timeloop-style random-pruned space of docs/sched.md. The env
 * scores {"table": ...}; tables that break a capacity or spatial constraint score 0 (infeasible),
 * which GA and random search simply select against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "search.h"

typedef struct genome {
    int nrows, rows[SCHED_NROW]; /* usable rows */
    int ngene, gdim[128], gprime[128];
} genome;

static json_t *encode(const hs_space *s, const double *x) {
    const genome *g = s->enc;
    int f[SCHED_NROW][SCHED_NDIM];
    for (int r = 0; r < SCHED_NROW; r++)
        for (int d = 0; d < SCHED_NDIM; d++) f[r][d] = 1;
    for (int i = 0; i < g->ngene; i++) {
        int j = (int)x[i];
        if (j < 0) j = 0;
        if (j >= g->nrows) j = g->nrows - 1;
        f[g->rows[j]][g->gdim[i]] *= g->gprime[i];
    }
    json_t *t = json_array();
    for (int r = 0; r < SCHED_NROW; r++) {
        json_t *row = json_array();
        for (int d = 0; d < SCHED_NDIM; d++) json_array_append_new(row, json_integer(f[r][d]));
        json_array_append_new(t, row);
    }
    return json_pack("{so}", "table", t);
}

hs_space *hs_sched_genome_space(const json_t *cfg, hw_err *err) {
    const json_t *mode = cfg ? json_object_get(cfg, "mode") : NULL;
    if (json_is_string(mode) && strcmp(json_string_value(mode), "layer"))
        return hw_fail(err, HW_E_NOT_SUPPORTED,
                       "sched-v0: hwgym-search scores one layer's table at a time; config.mode \"%s\" is not supported "
                       "(run one search per layer, or hwgym-rlsched for network mode)",
                       json_string_value(mode)),
               NULL;
    if (cfg && json_object_get(cfg, "layers"))
        return hw_fail(err, HW_E_NOT_SUPPORTED, "sched-v0: hwgym-search takes one layer (config.model + config.layer, "
                                                "or a layer object), not config.layers"),
               NULL;
    /* The env itself resolves the accelerator and the layer, exactly as the server will. */
    void *env = hw_family_sched.create(cfg, err);
    if (!env) return NULL;
    hw_obs obs;
    json_t *info = json_object();
    uint64_t seed = 0;
    int rc = hw_family_sched.reset(env, &seed, NULL, &obs, info, err);
    /* the starting table is all-in-DRAM: its DRAM row is the layer */
    json_t *tab = json_object_get(info, "table"), *acc = json_object_get(info, "action_mask");
    (void)acc;
    genome *g = calloc(1, sizeof *g);
    hs_space *h = NULL;
    if (rc || !json_is_array(tab) || json_array_size(tab) != SCHED_NROW) {
        if (!rc) hw_fail(err, HW_E_INTERNAL, "sched-v0: no starting table in the reset info");
        goto out;
    }
    /* usable rows: a storage row is present when some action names it; read presence from a
     * probe of the actions: pair action i (i != current row) is valid iff row i is present */
    const json_t *mask = json_object_get(info, "action_mask");
    const json_t *rowname = json_object_get(info, "row");
    int cur = -1;
    for (int r = 0; r < SCHED_NROW; r++)
        if (json_is_string(rowname) && !strcmp(json_string_value(rowname), sched_row_names[r])) cur = r;
    for (int r = 0; r < SCHED_NROW; r++) {
        int present = r == cur || (json_is_array(mask) && json_integer_value(json_array_get(mask, (size_t)r)) == 1);
        if (present) g->rows[g->nrows++] = r;
    }
    json_t *dram = json_array_get(tab, SR_DRAM);
    for (int d = 0; d < SCHED_NDIM; d++) {
        int n = (int)json_integer_value(json_array_get(dram, (size_t)d));
        for (int p = 2; (long)p * p <= n; p++)
            while (n % p == 0 && g->ngene < 128) {
                g->gdim[g->ngene] = d;
                g->gprime[g->ngene++] = p;
                n /= p;
            }
        if (n > 1 && g->ngene < 128) {
            g->gdim[g->ngene] = d;
            g->gprime[g->ngene++] = n;
        }
    }
    if (g->ngene == 0 || g->nrows < 2) {
        hw_fail(err, HW_E_NOT_SUPPORTED, "sched-v0: the layer has nothing to place (every dimension is 1)");
        goto out;
    }
    h = calloc(1, sizeof *h);
    h->dim = g->ngene;
    h->card = calloc((size_t)h->dim, sizeof *h->card);
    h->low = calloc((size_t)h->dim, sizeof(double));
    h->high = calloc((size_t)h->dim, sizeof(double));
    h->names = calloc((size_t)h->dim, sizeof(char *));
    h->labels = calloc((size_t)h->dim, sizeof(char **));
    for (int i = 0; i < h->dim; i++) {
        h->card[i] = g->nrows;
        h->high[i] = g->nrows - 1;
        char nm[32];
        snprintf(nm, sizeof nm, "%s:%d#%d", sched_dim_names[g->gdim[i]], g->gprime[i], i);
        h->names[i] = strdup(nm);
        h->labels[i] = calloc((size_t)g->nrows, sizeof(char *));
        for (int j = 0; j < g->nrows; j++) h->labels[i][j] = strdup(sched_row_names[g->rows[j]]);
    }
    h->encode = encode;
    h->enc = g;
    h->enc_free = free;
    g = NULL;
out:
    free(g);
    json_decref(info);
    hw_family_sched.destroy(env);
    return h;
}
