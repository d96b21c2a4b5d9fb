/* workload.c - the workload graph from placement-v0's observation, the GNN's input features,
 * greedy GNN actions and the batched evaluation with trial logging (see egrl.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egrl.h"

#define NFEAT 19 /* placement-v0 node features (Table 1) */

int eg_workload(eg_ctx *c, hw_err *err) {
    uint64_t seed = c->o->seed;
    if (ag_sess_reset(c->sess, &seed, err)) return -1;
    json_t *jn = json_object_get(c->sess->info, "nodes"), *je = json_object_get(c->sess->info, "edges");
    if (!json_is_integer(jn) || !json_is_integer(je))
        return hw_fail(err, HW_E_BAD_CONFIG, "--env %s: reset info has no integer \"nodes\"/\"edges\" (hwgym-egrl needs placement-v0)",
                       c->sess->env);
    c->N = (int)json_integer_value(jn);
    c->E = (int)json_integer_value(je);
    c->D = (int)c->sess->act_dim;
    int64_t want = 2LL * c->E + 2LL * c->N + (int64_t)NFEAT * c->N;
    if (c->sess->obs_dim != want || c->D != 2 * c->N)
        return hw_fail(err, HW_E_BAD_CONFIG, "observation of %lld values / action of %d elements: expected %lld / %d (edges, mapping, node_features)",
                       (long long)c->sess->obs_dim, c->D, (long long)want, 2 * c->N);
    int64_t *ch = calloc((size_t)c->D, sizeof(int64_t));
    if (!ag_sess_choices(c->sess, ch)) {
        free(ch);
        return hw_fail(err, HW_E_BAD_CONFIG, "action space is not integer");
    }
    c->nmem = (int)ch[0];
    for (int i = 1; i < c->D; i++)
        if (ch[i] != c->nmem) {
            long long ci = (long long)ch[i];
            free(ch);
            return hw_fail(err, HW_E_BAD_CONFIG, "action element %d has %lld choices, element 0 %d", i, ci, c->nmem);
        }
    free(ch);
    if (c->nmem < 2 || 2 * c->nmem > 64) return hw_fail(err, HW_E_BAD_CONFIG, "%d memories (need 2..32)", c->nmem);
    int64_t *edges = malloc(sizeof(int64_t) * (size_t)(2 * c->E + 1));
    for (int k = 0; k < 2 * c->E; k++) edges[k] = (int64_t)llround(c->sess->obs[k]);
    c->g = gnn_graph_from_edges(c->N, edges, c->E, err);
    free(edges);
    if (!c->g) return -1;
    /* features: log(1 + x) / 10 of the raw Table 1 columns (sizes span 1 .. 1e9) */
    c->F = NFEAT;
    c->feat = malloc(sizeof(double) * (size_t)c->N * NFEAT);
    const double *nf = c->sess->obs + 2 * c->E + 2 * c->N;
    for (int k = 0; k < c->N * NFEAT; k++) c->feat[k] = log1p(fmax(nf[k], 0.0)) / 10.0;
    return 0;
}

/* squash a non-negative ratio into [0, 1): r / (1 + r), 0.5 at r = 1 */
static double squash(double r) { return r / (1.0 + r); }

int eg_capacity_features(eg_ctx *c, hw_err *err) {
    if (eg_decode_init(c, err)) return -1;
    const int N = c->N, K = c->nmem - 1, F = NFEAT + 3 * K + 2;
    double *feat = malloc(sizeof(double) * (size_t)N * (size_t)F), *wleft = malloc(sizeof(double) * (size_t)(N + 1));
    if (!feat || !wleft) {
        free(feat);
        free(wleft);
        return hw_fail(err, HW_E_INTERNAL, "out of memory");
    }
    wleft[N] = 0;
    for (int i = N - 1; i >= 0; i--) wleft[i] = wleft[i + 1] + (double)c->dec_bytes[2 * i];
    double onchip = 0;
    for (int k = 1; k <= K; k++) onchip += (double)c->dec_cap[k] * c->dec_banks[k];
    for (int i = 0; i < N; i++) {
        double *f = feat + (size_t)i * F;
        memcpy(f, c->feat + (size_t)i * NFEAT, sizeof(double) * NFEAT);
        for (int k = 1; k <= K; k++) {
            double cap = (double)c->dec_cap[k];
            f[NFEAT + 3 * (k - 1)] = squash((double)c->dec_bytes[2 * i] / cap);         /* weights / bank */
            f[NFEAT + 3 * (k - 1) + 1] = squash((double)c->dec_bytes[2 * i + 1] / cap); /* activation / bank */
            f[NFEAT + 3 * (k - 1) + 2] = squash(wleft[i] / (cap * c->dec_banks[k]));   /* weights from i on / memory */
        }
        f[F - 2] = squash(wleft[0] / onchip); /* the graph's weights / all on-chip memory */
        f[F - 1] = log1p((double)N) / 10.0;   /* graph size */
    }
    free(wleft);
    free(c->feat);
    c->feat = feat;
    c->F = F;
    return 0;
}

void eg_gnn_act(eg_ctx *c, gnn_net *n, int64_t *action) {
    const double *z = gnn_forward(n, c->g, c->feat);
    for (int i = 0; i < c->D; i++) {
        const double *zi = z + (size_t)i * c->nmem;
        int b = 0;
        for (int j = 1; j < c->nmem; j++)
            if (zi[j] > zi[b]) b = j;
        action[i] = b;
    }
}

void eg_gnn_posterior(eg_ctx *c, gnn_net *n, double *post) {
    sacd_group_softmax(gnn_forward(n, c->g, c->feat), c->N, 2, c->nmem, post);
}

int eg_evaluate(eg_ctx *c, int n, const int64_t *actions, const char *const *workers, double *rewards) {
    int64_t left = c->o->budget - ag_run_samples(c->run);
    if (n > left) n = (int)(left > 0 ? left : 0);
    if (n <= 0) return 0;
    /* the lean evaluate_batch: the points as one binary array, numbers-only metrics back (a
     * local session falls back to the JSON batch inside ag_sess_evaluate_lean) */
    size_t nd = (size_t)n * (size_t)c->D;
    double *x = malloc(sizeof(double) * nd);
    for (size_t k = 0; k < nd; k++) x[k] = (double)actions[k];
    json_t **metrics = calloc((size_t)n, sizeof(json_t *));
    int rc = ag_sess_evaluate_lean(c->sess, n, x, rewards, metrics, &c->err);
    free(x);
    if (rc) {
        free(metrics);
        return -1;
    }
    c->calls++;
    for (int k = 0; k < n && rc == 0; k++) {
        json_t *m = metrics[k];
        json_t *pt = ag_json_i64(actions + (size_t)k * c->D, c->D);
        if (ag_run_eval(c->run, workers[k], c->gens, pt, rewards[k], m, &c->err)) rc = -1;
        json_decref(pt);
        if (rc) break;
        c->evals++;
        double sp = m ? json_number_value(json_object_get(m, "speedup")) : 0.0;
        if (m && json_is_true(json_object_get(m, "feasible"))) c->valid++;
        if (isnan(rewards[k])) rewards[k] = -INFINITY;
        if (sp > c->curve_best) c->curve_best = sp;
        if (c->curve)
            fprintf(c->curve, "%lld,%lld,%s,%.6g,%.6g,%.6g\n", (long long)ag_run_samples(c->run), (long long)c->gens, workers[k],
                    rewards[k], sp, c->curve_best);
    }
    for (int k = 0; k < n; k++) json_decref(metrics[k]);
    free(metrics);
    return rc ? -1 : n;
}
