/* mz_search.c - see mz_search.h. */
#include "mz_search.h"

#include "muzero_train.h"

#include <stdlib.h>
#include <string.h>

void lm_reserve(lm_ctx *c, int ntrees, int cap) {
    if (ntrees <= c->ntrees && cap <= c->cap) return;
    c->ntrees = ntrees > c->ntrees ? ntrees : c->ntrees;
    c->cap = cap > c->cap ? cap : c->cap;
    free(c->pool);
    free(c->dep);
    c->pool = malloc(sizeof(double) * (size_t)c->ntrees * (size_t)c->cap * (size_t)c->E);
    c->dep = calloc((size_t)c->ntrees * (size_t)c->cap, sizeof(int));
    free(c->rootb);
    c->rootb = calloc((size_t)c->ntrees, sizeof(int));
    if (c->room < c->ntrees) {
        c->room = c->ntrees;
        free(c->in);
        free(c->out);
        free(c->rew);
        free(c->logit);
        free(c->val);
        free(c->act);
        c->in = malloc(sizeof(double) * (size_t)c->room * (size_t)c->E);
        c->out = malloc(sizeof(double) * (size_t)c->room * (size_t)c->E);
        c->rew = malloc(sizeof(double) * (size_t)c->room);
        c->logit = malloc(sizeof(double) * (size_t)c->room * MZ_NACT);
        c->val = malloc(sizeof(double) * (size_t)c->room);
        c->act = malloc(sizeof(int) * (size_t)c->room);
    }
}

void lm_free(lm_ctx *c) {
    free(c->pool);
    free(c->dep);
    free(c->rootb);
    free(c->in);
    free(c->out);
    free(c->rew);
    free(c->logit);
    free(c->val);
    free(c->act);
}

double *lm_emb(lm_ctx *c, int tree, int node) {
    return c->pool + ((size_t)tree * (size_t)c->cap + (size_t)node) * (size_t)c->E;
}

void lm_root(lm_ctx *c, int tree, int b) {
    c->rootb[tree] = b;
    c->dep[(size_t)tree * (size_t)c->cap] = 0;
}

void lm_eval(void *ctx, mcts_leaf *L, int n) {
    lm_ctx *c = ctx;
    for (int i = 0; i < n; i++) {
        memcpy(c->in + (size_t)i * (size_t)c->E, lm_emb(c, L[i].tree, L[i].parent), sizeof(double) * (size_t)c->E);
        c->act[i] = L[i].action;
    }
    mz_net_recurrent(c->net, c->in, c->act, n, c->out, c->rew, c->logit, c->val);
    for (int i = 0; i < n; i++) {
        memcpy(lm_emb(c, L[i].tree, L[i].node), c->out + (size_t)i * (size_t)c->E, sizeof(double) * (size_t)c->E);
        L[i].reward = c->rew[i];
        L[i].value = c->val[i];
        if (c->vbase) {
            size_t t = (size_t)L[i].tree * (size_t)c->cap;
            int d = c->dep[t + (size_t)L[i].parent] + 1;
            c->dep[t + (size_t)L[i].node] = d;
            L[i].value += mz_vbase(c->vbase, c->nbase, c->rootb[L[i].tree] + d);
        }
        mz_softmax(c->logit + (size_t)i * MZ_NACT, MZ_NACT, L[i].prior);
        L[i].mask = 7;
        L[i].terminal = false;
    }
}


ts_ctx *ts_new(const mm_problem *p, int n, int cap, int rollout, double rscale, gsl_rng *rng) {
    ts_ctx *s = calloc(1, sizeof *s);
    s->p = p;
    s->n = n;
    s->gm = calloc((size_t)n, sizeof(mm_game *));
    s->trees = calloc((size_t)n, sizeof(mcts_tree *));
    s->path = calloc((size_t)n, sizeof(uint8_t *));
    s->prefix = calloc((size_t)n, sizeof(uint8_t *));
    s->plen = calloc((size_t)n, sizeof(int));
    s->rootret = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        s->gm[i] = mm_game_new(p);
        mm_game_reset(s->gm[i]);
        s->trees[i] = mcts_tree_new(cap);
        s->path[i] = malloc((size_t)p->nbuf + 1);
    }
    s->rng = rng;
    s->rollout = rollout;
    s->rscale = rscale;
    return s;
}

void ts_free(ts_ctx *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        mm_game_free(s->gm[i]);
        mcts_tree_free(s->trees[i]);
        free(s->path[i]);
    }
    free(s->gm);
    free(s->trees);
    free(s->path);
    free(s->prefix);
    free(s->plen);
    free(s->rootret);
    free(s);
}

static uint8_t game_mask(const mm_game *g) {
    uint8_t m = 0;
    for (int a = 0; a < MCTS_NACT; a++)
        if (mm_game_legal(g, a)) m |= (uint8_t)(1u << a);
    return m;
}

uint8_t ts_root(ts_ctx *s, int i, const uint8_t *prefix, int len) {
    s->prefix[i] = prefix;
    s->plen[i] = len;
    mm_game_goto(s->gm[i], prefix, len);
    s->rootret[i] = mm_game_return(s->gm[i]);
    return game_mask(s->gm[i]);
}

void ts_eval(void *ctx, mcts_leaf *L, int n) {
    ts_ctx *s = ctx;
    for (int i = 0; i < n; i++) {
        int t = L[i].tree;
        mm_game *g = s->gm[t];
        uint8_t *path = s->path[t];
        memcpy(path, s->prefix[t], (size_t)s->plen[t]);
        int d = mcts_path(s->trees[t], L[i].node, path + s->plen[t], s->p->nbuf - s->plen[t]);
        mm_game_goto(g, path, s->plen[t] + d);
        double r = g->t > 0 ? g->reward[g->t - 1] : 0;
        L[i].prior[0] = L[i].prior[1] = L[i].prior[2] = 1.0 / 3;
        L[i].value = 0;
        if (g->lost) {
            /* local negative signal: lose what was gained since the search root */
            L[i].reward = -(g->retp[g->t - 1] - s->rootret[t]) * s->rscale;
            L[i].terminal = true;
            L[i].mask = 7;
            continue;
        }
        L[i].reward = r * s->rscale;
        if (g->done) {
            L[i].terminal = true;
            L[i].mask = 7;
            continue;
        }
        L[i].mask = game_mask(g);
        /* random legal rollout, then undo */
        double v = 0, gm = 1;
        int k = 0;
        for (; k < s->rollout && !g->done; k++) {
            double rr = mm_game_step(g, mm_policy_random(g, s->rng));
            if (g->lost) { /* a rollout that loses is worth nothing */
                v = 0;
                k++;
                break;
            }
            v += gm * rr * s->rscale;
            gm *= 0.9999;
        }
        for (int j = 0; j < k; j++) mm_game_undo(g);
        L[i].value = v;
    }
}


/* ------------------------------------------------------------------ AlphaZero mode */
az_ctx *az_new(mz_net *net, const char *endpoint, const json_t *config, int n, int nbuf, double rscale, hw_err *err) {
    az_ctx *s = calloc(1, sizeof *s);
    s->net = net;
    s->n = n;
    s->F = net->c.F;
    s->nbuf = nbuf;
    s->rscale = rscale;
    s->env = calloc((size_t)n, sizeof(mz_env *));
    s->snap = malloc(sizeof(int64_t) * (size_t)n);
    s->rprefix = calloc((size_t)n, sizeof(uint8_t *));
    s->rlen = calloc((size_t)n, sizeof(int));
    s->rootret = calloc((size_t)n, sizeof(double));
    s->path = malloc((size_t)nbuf + 1);
    s->feat = malloc(sizeof(double) * (size_t)n * (size_t)s->F);
    s->emb = malloc(sizeof(double) * (size_t)n * (size_t)net->c.E);
    s->logit = malloc(sizeof(double) * (size_t)n * MZ_NACT);
    s->val = malloc(sizeof(double) * (size_t)n);
    s->row = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        s->snap[i] = -1;
        s->rlen[i] = -1;
        s->rprefix[i] = malloc((size_t)nbuf + 1);
        s->env[i] = mz_env_open(endpoint, config, err);
        if (!s->env[i]) {
            az_free(s);
            return NULL;
        }
    }
    return s;
}

void az_free(az_ctx *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        mz_env_free(s->env[i]);
        free(s->rprefix[i]);
    }
    free(s->env);
    free(s->snap);
    free(s->rprefix);
    free(s->rlen);
    free(s->rootret);
    free(s->path);
    free(s->feat);
    free(s->emb);
    free(s->logit);
    free(s->val);
    free(s->row);
    free(s);
}

int az_root(az_ctx *s, int i, const uint8_t *prefix, int len, hw_err *err) {
    mz_env *e = s->env[i];
    int from = 0;
    bool extend = s->snap[i] >= 0 && s->rlen[i] <= len && !memcmp(s->rprefix[i], prefix, (size_t)s->rlen[i]);
    if (extend) {
        if (mz_env_restore(e, s->snap[i], err)) return -1;
        from = s->rlen[i];
    } else if (mz_env_reset(e, err)) {
        return -1;
    }
    for (int k = from; k < len; k++) {
        if (mz_env_step(e, prefix[k], err)) return -1;
        s->steps++;
        if (e->terminated) return hw_fail(err, HW_E_BAD_STATE, "AlphaZero search: the root's prefix ends the game at buffer %d", k);
    }
    if (s->snap[i] >= 0 && mz_env_drop(e, s->snap[i], err)) return -1;
    s->snap[i] = -1;
    if (mz_env_snapshot(e, &s->snap[i], err)) return -1;
    memcpy(s->rprefix[i], prefix, (size_t)len);
    s->rlen[i] = len;
    s->rootret[i] = e->st.ret;
    return 0;
}

/* One leaf: restore the root, step the path; fills reward, mask, terminal. Returns true when the
 * leaf needs the network (not terminal). */
static bool az_walk(az_ctx *s, mcts_leaf *L) {
    int t = L->tree;
    mz_env *e = s->env[t];
    L->prior[0] = L->prior[1] = L->prior[2] = 1.0 / 3;
    L->value = 0;
    L->mask = 7;
    int d = mcts_path(s->trees[t], L->node, s->path, s->nbuf);
    if (s->failed || d < 0 || mz_env_restore(e, s->snap[t], &s->err)) goto fail;
    double r0 = e->st.ret;
    for (int k = 0; k < d; k++) {
        r0 = e->st.ret;
        if (!(e->st.mask >> s->path[k] & 1)) { /* cannot happen: the tree masks illegal moves */
            L->reward = -(r0 - s->rootret[t]) * s->rscale;
            L->terminal = true;
            return false;
        }
        if (mz_env_step(e, s->path[k], &s->err)) goto fail;
        s->steps++;
        if (e->terminated) break;
    }
    if (e->terminated && e->lost) {
        L->reward = -(r0 - s->rootret[t]) * s->rscale;
        L->terminal = true;
        return false;
    }
    L->reward = e->reward * s->rscale;
    if (e->terminated) {
        L->terminal = true;
        return false;
    }
    L->mask = e->st.mask;
    L->terminal = false;
    return true;
fail:
    s->failed = true;
    L->reward = 0;
    L->terminal = true;
    return false;
}

void az_eval(void *ctx, mcts_leaf *L, int n) {
    az_ctx *s = ctx;
    int m = 0;
    for (int i = 0; i < n; i++) {
        s->row[i] = -1;
        if (!az_walk(s, &L[i])) continue;
        mz_env *e = s->env[L[i].tree];
        mzf_encode(&e->L, e->st.obs, s->nbuf, s->rscale, s->feat + (size_t)m * (size_t)s->F);
        s->row[i] = m++;
    }
    if (m == 0) return;
    mz_net_initial(s->net, s->feat, m, s->emb, s->logit, s->val);
    for (int i = 0; i < n; i++) {
        int r = s->row[i];
        if (r < 0) continue;
        mz_softmax(s->logit + (size_t)r * MZ_NACT, MZ_NACT, L[i].prior);
        L[i].value = s->val[r] + mz_vbase(s->vbase, s->nbase, s->env[L[i].tree]->st.buffer);
    }
}
