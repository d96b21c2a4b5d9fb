/* mcts.c - see mcts.h. Includes gsl_randist.h (Dirichlet, Gumbel): never cblas.h here. */
#include "mcts.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

mcts_cfg mcts_cfg_default(void) {
    mcts_cfg c = {400, 1.25, 19652, 0.9999, 0.03, 0.25, 0.01, MCTS_Q_NODE, 0, false, false, 3, 50, 0.1};
    return c;
}

mcts_tree *mcts_tree_new(int cap) {
    mcts_tree *t = calloc(1, sizeof *t);
    t->cap = cap < 2 ? 2 : cap;
    t->nodes = calloc((size_t)t->cap, sizeof(mcts_node));
    return t;
}

void mcts_tree_free(mcts_tree *t) {
    if (!t) return;
    free(t->nodes);
    free(t);
}

static int32_t new_node(mcts_tree *t, int32_t parent, int action) {
    if (t->n >= t->cap) {
        t->cap *= 2;
        t->nodes = realloc(t->nodes, sizeof(mcts_node) * (size_t)t->cap);
    }
    int32_t id = t->n++;
    mcts_node *nd = &t->nodes[id];
    memset(nd, 0, sizeof *nd);
    nd->child[0] = nd->child[1] = nd->child[2] = -1;
    nd->parent = parent;
    nd->action = (uint8_t)action;
    return id;
}

static void set_prior(mcts_node *nd, const double *p, uint8_t mask) {
    if (!(mask & 7)) mask = 7;
    nd->mask = mask;
    double s = 0;
    for (int a = 0; a < MCTS_NACT; a++) s += (mask >> a & 1) ? (p[a] > 0 ? p[a] : 0) : 0;
    for (int a = 0; a < MCTS_NACT; a++) {
        if (!(mask >> a & 1)) nd->prior[a] = 0;
        else nd->prior[a] = s > 0 ? (p[a] > 0 ? p[a] : 0) / s : 1.0 / __builtin_popcount(mask);
    }
}

static double qnorm(const mcts_tree *t, const mcts_cfg *c, double q) {
    if (!(t->qmax >= t->qmin)) return 0;
    double range = t->qmax - t->qmin;
    if (range < c->minmax_floor) range = c->minmax_floor;
    double v = (q - t->qmin) / range;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* MCTS_Q_NODE: the completed, normalised Q of node's children (parent and siblings). */
static void node_qn(const mcts_tree *t, const mcts_cfg *c, int32_t node, double qn[MCTS_NACT]) {
    const mcts_node *nd = &t->nodes[node];
    double pv = nd->N > 0 ? nd->W / nd->N : 0, q[MCTS_NACT], lo = pv, hi = pv;
    for (int a = 0; a < MCTS_NACT; a++) {
        int32_t ch = nd->child[a];
        q[a] = ch >= 0 && t->nodes[ch].N > 0 ? t->nodes[ch].R + c->gamma * t->nodes[ch].W / t->nodes[ch].N : pv;
        if (!(nd->mask >> a & 1)) continue;
        if (q[a] < lo) lo = q[a];
        if (q[a] > hi) hi = q[a];
    }
    double range = hi - lo > c->minmax_floor ? hi - lo : c->minmax_floor;
    for (int a = 0; a < MCTS_NACT; a++) qn[a] = range > 0 ? (q[a] - lo) / range : 0;
}

/* MCTS_Q_NODE, Gumbel root: mctx's completed-by-mix-value Q of the root's children, min-max
 * normalised over the legal children with the floor. */
static void root_completed(const mcts_tree *t, const mcts_cfg *c, double qn[MCTS_NACT]) {
    const mcts_node *r = &t->nodes[0];
    double q[MCTS_NACT], sumn = 0, pq = 0, ps = 0;
    bool vis[MCTS_NACT];
    for (int a = 0; a < MCTS_NACT; a++) {
        int32_t ch = r->child[a];
        vis[a] = ch >= 0 && t->nodes[ch].N > 0;
        q[a] = vis[a] ? t->nodes[ch].R + c->gamma * t->nodes[ch].W / t->nodes[ch].N : 0;
        if (!vis[a]) continue;
        sumn += t->nodes[ch].N;
        pq += r->prior[a] * q[a];
        ps += r->prior[a];
    }
    double mix = ps > 0 ? (t->root_value + sumn * pq / ps) / (1 + sumn) : t->root_value;
    double lo = INFINITY, hi = -INFINITY;
    for (int a = 0; a < MCTS_NACT; a++) {
        if (!vis[a]) q[a] = mix;
        if (!(r->mask >> a & 1)) continue;
        if (q[a] < lo) lo = q[a];
        if (q[a] > hi) hi = q[a];
    }
    double range = hi - lo > c->minmax_floor ? hi - lo : c->minmax_floor;
    for (int a = 0; a < MCTS_NACT; a++) qn[a] = isfinite(lo) && range > 0 ? (q[a] - lo) / range : 0;
}

static void minmax(mcts_tree *t, double q) {
    if (q < t->qmin) t->qmin = q;
    if (q > t->qmax) t->qmax = q;
}

static double child_q(const mcts_tree *t, const mcts_cfg *c, const mcts_node *ch) {
    (void)t;
    return ch->R + c->gamma * (ch->N > 0 ? ch->W / ch->N : 0);
}

void mcts_root(mcts_tree *t, const mcts_cfg *c, const double prior[MCTS_NACT], double value, uint8_t mask, gsl_rng *rng) {
    t->n = 0;
    t->qmin = INFINITY;
    t->qmax = -INFINITY;
    int32_t r = new_node(t, -1, 0);
    mcts_node *nd = &t->nodes[r];
    set_prior(nd, prior, mask);
    nd->expanded = true;
    t->root_value = value;
    if (c->qmode == MCTS_Q_NODE) { /* mctx: the root starts with its value as one visit */
        nd->N = 1;
        nd->W = value;
    }
    int legal[MCTS_NACT], nl = 0;
    for (int a = 0; a < MCTS_NACT; a++)
        if (nd->mask >> a & 1) legal[nl++] = a;
    if (c->root_mix > 0 && nl > 0)
        for (int i = 0; i < nl; i++) nd->prior[legal[i]] = (1 - c->root_mix) * nd->prior[legal[i]] + c->root_mix / nl;
    if (c->gumbel) {
        /* Gumbel-top-m over legal actions */
        double key[MCTS_NACT];
        for (int a = 0; a < MCTS_NACT; a++) {
            t->logit[a] = nd->prior[a] > 0 ? log(nd->prior[a]) : -1e9;
            t->g[a] = (nd->mask >> a & 1) && !c->greedy ? gsl_ran_gumbel1(rng, 1.0, 1.0) : 0;
            key[a] = t->g[a] + t->logit[a];
        }
        int m = c->gumbel_m < nl ? c->gumbel_m : nl;
        /* sort legal by key descending */
        for (int i = 0; i < nl; i++)
            for (int j = i + 1; j < nl; j++)
                if (key[legal[j]] > key[legal[i]]) {
                    int tmp = legal[i];
                    legal[i] = legal[j];
                    legal[j] = tmp;
                }
        t->nrem = m;
        for (int i = 0; i < m; i++) t->rem[i] = legal[i];
        int phases = 0;
        for (int k = 1; k < m; k *= 2) phases++;
        t->phases_left = phases > 0 ? phases : 1;
        t->sims_left = c->sims;
        int per = t->sims_left / (t->phases_left * t->nrem);
        t->target = per > 0 ? per : 1;
    } else if (c->dir_frac > 0 && nl > 1 && !c->greedy) {
        double alpha[MCTS_NACT], noise[MCTS_NACT];
        for (int i = 0; i < nl; i++) alpha[i] = c->dir_alpha;
        gsl_ran_dirichlet(rng, (size_t)nl, alpha, noise);
        for (int i = 0; i < nl; i++) {
            int a = legal[i];
            nd->prior[a] = (1 - c->dir_frac) * nd->prior[a] + c->dir_frac * noise[i];
        }
    }
}

static double sigma(const mcts_tree *t, const mcts_cfg *c, double qn) {
    int maxn = 0;
    const mcts_node *r = &t->nodes[0];
    for (int a = 0; a < MCTS_NACT; a++)
        if (r->child[a] >= 0 && t->nodes[r->child[a]].N > maxn) maxn = t->nodes[r->child[a]].N;
    return (c->c_visit + maxn) * c->c_scale * qn;
}

static double root_child_qn(const mcts_tree *t, const mcts_cfg *c, int a, double fallback) {
    const mcts_node *r = &t->nodes[0];
    if (r->child[a] < 0 || t->nodes[r->child[a]].N == 0) return fallback;
    return qnorm(t, c, child_q(t, c, &t->nodes[r->child[a]]));
}

static int child_n(const mcts_tree *t, int32_t node, int a) {
    int32_t ch = t->nodes[node].child[a];
    return ch >= 0 ? t->nodes[ch].N : 0;
}

/* Gumbel root: the survivor below this phase's target with the fewest visits; halve when done. */
static int gumbel_root_action(mcts_tree *t, const mcts_cfg *c) {
    for (;;) {
        int best = -1, bn = 0;
        for (int i = 0; i < t->nrem; i++) {
            int n = child_n(t, 0, t->rem[i]);
            if (n < t->target && (best < 0 || n < bn)) best = t->rem[i], bn = n;
        }
        if (best >= 0 || t->nrem <= 1) return best >= 0 ? best : t->rem[0];
        /* phase over: keep the better half by g + logit + sigma(qn) */
        double sc[MCTS_NACT], qc[MCTS_NACT];
        if (c->qmode == MCTS_Q_NODE) root_completed(t, c, qc);
        for (int i = 0; i < t->nrem; i++) {
            int a = t->rem[i];
            double q = c->qmode == MCTS_Q_NODE ? qc[a] : root_child_qn(t, c, a, 0);
            sc[a] = t->g[a] + t->logit[a] + sigma(t, c, q);
        }
        for (int i = 0; i < t->nrem; i++)
            for (int j = i + 1; j < t->nrem; j++)
                if (sc[t->rem[j]] > sc[t->rem[i]]) {
                    int tmp = t->rem[i];
                    t->rem[i] = t->rem[j];
                    t->rem[j] = tmp;
                }
        t->nrem = (t->nrem + 1) / 2;
        if (t->phases_left > 1) t->phases_left--;
        int per = t->sims_left / (t->phases_left * t->nrem);
        int cur = child_n(t, 0, t->rem[0]);
        t->target = cur + (per > 0 ? per : 1);
        if (t->nrem == 1) t->target = 1 << 30;
    }
}

static int puct(const mcts_tree *t, const mcts_cfg *c, int32_t node) {
    const mcts_node *nd = &t->nodes[node];
    double sq = sqrt((double)nd->N);
    double pb = c->c1 + log(((double)nd->N + c->c2 + 1.0) / c->c2);
    int best = -1;
    double bs = -INFINITY, qn[MCTS_NACT];
    if (c->qmode == MCTS_Q_NODE) node_qn(t, c, node, qn);
    for (int a = 0; a < MCTS_NACT; a++) {
        if (!(nd->mask >> a & 1)) continue;
        int32_t ch = nd->child[a];
        int n = ch >= 0 ? t->nodes[ch].N : 0;
        double q = c->qmode == MCTS_Q_NODE ? qn[a] : n > 0 ? qnorm(t, c, child_q(t, c, &t->nodes[ch])) : 0;
        double s = q + nd->prior[a] * sq / (1.0 + n) * pb;
        if (s > bs || (s == bs && best >= 0 && nd->prior[a] > nd->prior[best])) bs = s, best = a;
    }
    return best < 0 ? 2 : best;
}

static void backup(mcts_tree *t, const mcts_cfg *c, int32_t node, double v) {
    double G = v;
    while (node >= 0) {
        mcts_node *nd = &t->nodes[node];
        nd->W += G;
        nd->N++;
        if (nd->parent >= 0) minmax(t, nd->R + c->gamma * nd->W / nd->N);
        G = nd->R + c->gamma * G;
        node = nd->parent;
    }
}

void mcts_run(mcts_tree **trees, int G, const mcts_cfg *c, mcts_eval_fn fn, void *ctx) {
    mcts_leaf *leaves = malloc(sizeof(mcts_leaf) * (size_t)(G > 0 ? G : 1));
    for (int s = 0; s < c->sims; s++) {
        int nl = 0;
        for (int g = 0; g < G; g++) {
            mcts_tree *t = trees[g];
            int32_t node = 0;
            for (;;) {
                mcts_node *nd = &t->nodes[node];
                if (nd->terminal) {
                    backup(t, c, node, 0);
                    node = -1;
                    break;
                }
                int a = (node == 0 && c->gumbel) ? gumbel_root_action(t, c) : puct(t, c, node);
                int32_t ch = t->nodes[node].child[a];
                if (ch < 0) {
                    ch = new_node(t, node, a);
                    t->nodes[node].child[a] = ch;
                    mcts_leaf *L = &leaves[nl++];
                    memset(L, 0, sizeof *L);
                    L->tree = g;
                    L->parent = node;
                    L->node = ch;
                    L->action = a;
                    L->mask = 7;
                    break;
                }
                node = ch;
            }
            if (c->gumbel) t->sims_left--;
        }
        if (nl == 0) continue;
        fn(ctx, leaves, nl);
        for (int i = 0; i < nl; i++) {
            mcts_leaf *L = &leaves[i];
            mcts_tree *t = trees[L->tree];
            mcts_node *nd = &t->nodes[L->node];
            nd->R = L->reward;
            nd->expanded = true;
            nd->terminal = L->terminal;
            set_prior(nd, L->prior, L->mask);
            backup(t, c, L->node, L->terminal ? 0 : L->value);
        }
    }
    free(leaves);
}

int mcts_path(const mcts_tree *t, int32_t node, uint8_t *acts, int cap) {
    int d = 0;
    for (int32_t n = node; n > 0; n = t->nodes[n].parent) d++;
    if (d > cap) return -1;
    int i = d;
    for (int32_t n = node; n > 0; n = t->nodes[n].parent) acts[--i] = t->nodes[n].action;
    return d;
}

int mcts_act(const mcts_tree *t, const mcts_cfg *c, double temperature, gsl_rng *rng, double policy[MCTS_NACT],
             double *root_value) {
    const mcts_node *r = &t->nodes[0];
    double rv = r->N > 0 ? r->W / r->N : 0;
    if (root_value) *root_value = rv;
    int n[MCTS_NACT], tot = 0;
    for (int a = 0; a < MCTS_NACT; a++) tot += n[a] = child_n(t, 0, a);
    if (c->gumbel) {
        double fb = qnorm(t, c, rv), qc[MCTS_NACT];
        if (c->qmode == MCTS_Q_NODE) root_completed(t, c, qc);
        else
            for (int a = 0; a < MCTS_NACT; a++) qc[a] = root_child_qn(t, c, a, fb);
        int best = -1;
        double bs = -INFINITY;
        for (int i = 0; i < t->nrem; i++) {
            int a = t->rem[i];
            double s = t->g[a] + t->logit[a] + sigma(t, c, qc[a]);
            if (s > bs) bs = s, best = a;
        }
        if (policy) {
            double z[MCTS_NACT], mx = -INFINITY, sum = 0;
            for (int a = 0; a < MCTS_NACT; a++) {
                z[a] = (r->mask >> a & 1) ? t->logit[a] + sigma(t, c, qc[a]) : -INFINITY;
                if (z[a] > mx) mx = z[a];
            }
            for (int a = 0; a < MCTS_NACT; a++) sum += policy[a] = isfinite(z[a]) ? exp(z[a] - mx) : 0;
            for (int a = 0; a < MCTS_NACT; a++) policy[a] /= sum;
        }
        return best >= 0 ? best : 2;
    }
    if (policy)
        for (int a = 0; a < MCTS_NACT; a++) policy[a] = tot > 0 ? (double)n[a] / tot : r->prior[a];
    if (tot == 0) {
        int best = 2;
        for (int a = 0; a < MCTS_NACT; a++)
            if ((r->mask >> a & 1) && r->prior[a] > (r->mask >> best & 1 ? r->prior[best] : -1)) best = a;
        return best;
    }
    if (temperature <= 0.01) {
        int best = -1;
        for (int a = 0; a < MCTS_NACT; a++)
            if ((r->mask >> a & 1) && (best < 0 || n[a] > n[best])) best = a;
        return best;
    }
    double w[MCTS_NACT], s = 0, mx = 0;
    for (int a = 0; a < MCTS_NACT; a++)
        if (n[a] > mx) mx = n[a];
    for (int a = 0; a < MCTS_NACT; a++) s += w[a] = (r->mask >> a & 1) && n[a] > 0 ? pow(n[a] / mx, 1.0 / temperature) : 0;
    double u = gsl_rng_uniform(rng) * s;
    for (int a = 0; a < MCTS_NACT; a++) {
        if (w[a] <= 0) continue;
        if (u < w[a]) return a;
        u -= w[a];
    }
    for (int a = MCTS_NACT - 1; a >= 0; a--)
        if (w[a] > 0) return a;
    return 2;
}
