/* muzero_train.c - see muzero_train.h. */
#include "muzero_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ replay */
mz_replay *mz_replay_new(int cap, int F) {
    mz_replay *r = calloc(1, sizeof *r);
    r->cap = cap;
    r->F = F;
    r->feat = calloc((size_t)cap * (size_t)F, sizeof(float));
    r->act = calloc((size_t)cap, 1);
    r->mask = calloc((size_t)cap, 1);
    r->done = calloc((size_t)cap, 1);
    r->demo = calloc((size_t)cap, 1);
    r->rew = calloc((size_t)cap, sizeof(float));
    r->pol = calloc((size_t)cap * MZ_NACT, sizeof(float));
    r->pw = calloc((size_t)cap, sizeof(float));
    r->val = calloc((size_t)cap, sizeof(float));
    r->seg = calloc((size_t)cap, sizeof(int64_t));
    r->game = calloc((size_t)cap, sizeof(int64_t));
    r->tail = calloc((size_t)cap, sizeof(float));
    r->retp = calloc((size_t)cap, sizeof(float));
    r->fin = calloc((size_t)cap, sizeof(float));
    r->buf = calloc((size_t)cap, sizeof(int32_t));
    for (int i = 0; i < cap; i++) r->seg[i] = r->game[i] = -1, r->tail[i] = r->fin[i] = NAN;
    return r;
}

void mz_replay_free(mz_replay *r) {
    if (!r) return;
    free(r->feat);
    free(r->act);
    free(r->mask);
    free(r->done);
    free(r->demo);
    free(r->rew);
    free(r->pol);
    free(r->pw);
    free(r->val);
    free(r->seg);
    free(r->game);
    free(r->tail);
    free(r->retp);
    free(r->fin);
    free(r->buf);
    free(r);
}

int mz_replay_add(mz_replay *r, const mz_pos *pos, int n, bool demo) {
    int first = r->head;
    int64_t sg = r->next_seg++;
    /* a segment longer than the ring keeps its last cap positions */
    if (n > r->cap) {
        pos += n - r->cap;
        n = r->cap;
    }
    for (int i = 0; i < n; i++) {
        int j = r->head;
        for (int f = 0; f < r->F; f++) r->feat[(size_t)j * (size_t)r->F + (size_t)f] = (float)pos[i].feat[f];
        r->act[j] = (uint8_t)pos[i].action;
        r->mask[j] = pos[i].mask;
        r->done[j] = pos[i].done;
        r->demo[j] = demo;
        r->rew[j] = (float)pos[i].reward;
        for (int a = 0; a < MZ_NACT; a++) r->pol[j * MZ_NACT + a] = (float)pos[i].policy[a];
        r->pw[j] = (float)pos[i].pweight;
        r->val[j] = (float)pos[i].value;
        r->seg[j] = sg;
        r->game[j] = pos[i].game;
        r->tail[j] = pos[i].has_tail ? (float)pos[i].tail : NAN;
        r->retp[j] = (float)pos[i].retp;
        r->fin[j] = pos[i].has_fin ? (float)pos[i].fin : NAN;
        r->buf[j] = pos[i].buf;
        r->head = (r->head + 1) % r->cap;
        if (r->n < r->cap) r->n++;
    }
    return first;
}

void mz_replay_clear(mz_replay *r) {
    r->n = r->head = 0;
    r->next_seg = 0;
    for (int i = 0; i < r->cap; i++) r->seg[i] = r->game[i] = -1, r->tail[i] = r->fin[i] = NAN;
}

void mz_replay_finish(mz_replay *r, int64_t game, double fin) {
    for (int i = 0; i < r->n; i++)
        if (r->game[i] == game) r->fin[i] = (float)fin;
}

int mz_replay_next(const mz_replay *r, int idx, int k) {
    if (idx < 0) return -1;
    int64_t sg = r->seg[idx];
    int j = idx;
    for (int i = 0; i < k; i++) {
        int nx = (j + 1) % r->cap;
        if (nx == r->head || r->seg[nx] != sg) return -1;
        j = nx;
    }
    return j;
}

mz_train_cfg mz_train_cfg_default(void) {
    mz_train_cfg c = {5, 10, 0.9999, 0.5, 2e-4, 1e-4, 0, MZ_VT_TD, NULL, 0};
    return c;
}

double mz_vbase(const double *vbase, int nbase, int b) {
    return vbase && b >= 0 && b < nbase ? vbase[b] : 0;
}

double mz_replay_target(const mz_replay *r, int idx, const mz_train_cfg *c) {
    if (c->value_target == MZ_VT_MC && isfinite(r->fin[idx])) return (double)r->fin[idx] - (double)r->retp[idx];
    double sum = 0, g = 1;
    int j = idx;
    for (int i = 0; i < c->td_steps; i++) {
        int nx = mz_replay_next(r, j, 1);
        if (!r->done[j] && nx < 0) { /* truncated segment: its tail value, or the last root value */
            if (isfinite(r->tail[j])) return sum + g * (r->rew[j] + c->gamma * r->tail[j]);
            return sum + g * r->val[j];
        }
        sum += g * r->rew[j];
        if (r->done[j]) return sum;
        g *= c->gamma;
        j = nx;
    }
    return sum + g * r->val[j];
}

/* ------------------------------------------------------------------ batch */
mz_batch *mz_batch_new(int B, int K, int F, int V) {
    mz_batch *b = calloc(1, sizeof *b);
    b->B = B, b->K = K, b->F = F, b->V = V;
    size_t s = (size_t)B * (size_t)(K + 1);
    b->feat = calloc((size_t)B * (size_t)F, sizeof(double));
    b->act = calloc((size_t)B * (size_t)(K > 0 ? K : 1), sizeof(int));
    b->pol = calloc(s * MZ_NACT, sizeof(double));
    b->polw = calloc(s, sizeof(double));
    b->val = calloc(s, sizeof(double));
    b->valw = calloc(s, sizeof(double));
    b->rew = calloc(s, sizeof(double));
    b->reww = calloc(s, sizeof(double));
    return b;
}

void mz_batch_free(mz_batch *b) {
    if (!b) return;
    free(b->feat);
    free(b->act);
    free(b->pol);
    free(b->polw);
    free(b->val);
    free(b->valw);
    free(b->rew);
    free(b->reww);
    free(b);
}

void mz_batch_fill(mz_batch *b, int i, const mz_replay *r, int idx, const mz_train_cfg *c) {
    int K = b->K, F = b->F;
    for (int f = 0; f < F; f++) b->feat[(size_t)i * (size_t)F + (size_t)f] = r->feat[(size_t)idx * (size_t)r->F + (size_t)f];
    size_t base = (size_t)i * (size_t)(K + 1);
    bool absorbing = false, ended = false;
    int prev = idx;
    for (int k = 0; k <= K; k++) {
        size_t s = base + (size_t)k;
        int p = k == 0 ? idx : (prev >= 0 ? mz_replay_next(r, prev, 1) : -1);
        b->polw[s] = b->valw[s] = b->reww[s] = 0;
        b->val[s] = b->rew[s] = 0;
        for (int a = 0; a < MZ_NACT; a++) b->pol[s * MZ_NACT + (size_t)a] = 1.0 / MZ_NACT;
        if (k > 0) {
            int *ak = &b->act[(size_t)i * (size_t)K + (size_t)(k - 1)];
            if (prev >= 0 && !ended) {
                *ak = r->act[prev];
                b->rew[s] = r->rew[prev];
                b->reww[s] = 1;
                if (r->done[prev]) absorbing = true;
            } else {
                *ak = 0;
                if (absorbing) b->reww[s] = 1; /* absorbing: reward 0 */
            }
        }
        if (p >= 0 && !absorbing) {
            b->val[s] = mz_replay_target(r, p, c) - mz_vbase(c->vbase, c->nbase, r->buf[p]);
            b->valw[s] = 1;
            for (int a = 0; a < MZ_NACT; a++) b->pol[s * MZ_NACT + (size_t)a] = r->pol[p * MZ_NACT + a];
            b->polw[s] = r->pw[p];
        } else if (absorbing) {
            b->valw[s] = 1; /* value 0 */
            ended = true;
        } else {
            ended = true;
        }
        prev = absorbing ? -1 : p;
    }
}

/* ------------------------------------------------------------------ trainer */
static nnet_mlp *clone_net(const nnet_mlp *m) {
    nnet_mlp *c = nnet_new(m->nlayers, m->sizes, m->act);
    memcpy(c->params, m->params, sizeof(double) * m->nparams);
    return c;
}

mz_trainer *mz_trainer_new(mz_net *net, const mz_train_cfg *c) {
    mz_trainer *t = calloc(1, sizeof *t);
    t->c = *c;
    t->net = net;
    t->K = c->K;
    t->dyn = calloc((size_t)t->K + 1, sizeof(nnet_mlp *));
    t->pred = calloc((size_t)t->K + 1, sizeof(nnet_mlp *));
    for (int k = 0; k <= t->K; k++) {
        t->pred[k] = clone_net(net->pred);
        t->dyn[k] = clone_net(net->dyn);
    }
    nnet_mlp *m[3] = {net->repr, net->dyn, net->pred};
    for (int i = 0; i < 3; i++) {
        nnet_adam *a = nnet_adam_new(m[i]->nparams, c->lr);
        a->eps = 1e-8;
        t->adam[i] = a;
    }
    return t;
}

void mz_trainer_use_f32(mz_trainer *t, bool on) {
    nnet_train32(t->net->repr, on);
    for (int k = 0; k <= t->K; k++) {
        nnet_train32(t->pred[k], on);
        nnet_train32(t->dyn[k], on);
    }
}

void mz_trainer_free(mz_trainer *t) {
    if (!t) return;
    for (int k = 0; k <= t->K; k++) {
        nnet_free(t->dyn[k]);
        nnet_free(t->pred[k]);
    }
    free(t->dyn);
    free(t->pred);
    free(t->emb);
    free(t->din);
    free(t->dres);
    free(t->gemb);
    for (int i = 0; i < 3; i++) nnet_adam_free(t->adam[i]);
    free(t);
}

static void ensure(mz_trainer *t, int B) {
    if (B <= t->cap) return;
    t->cap = B;
    int E = t->net->c.E, V = t->net->V;
    free(t->emb);
    free(t->din);
    free(t->dres);
    free(t->gemb);
    t->emb = malloc(sizeof(double) * (size_t)(t->K + 1) * (size_t)B * (size_t)E);
    t->din = malloc(sizeof(double) * (size_t)B * (size_t)(E + MZ_NACT));
    size_t w = (size_t)(E + V) > (size_t)(MZ_NACT + V) ? (size_t)(E + V) : (size_t)(MZ_NACT + V);
    if (w < (size_t)(E + MZ_NACT)) w = (size_t)(E + MZ_NACT);
    t->dres = malloc(sizeof(double) * (size_t)B * w * 2);
    t->gemb = malloc(sizeof(double) * (size_t)B * (size_t)E * 2);
}

/* Cross-entropy of target distribution tgt against softmax(logits); writes
 * w * (softmax - tgt) * scale into g (if g) and returns w * CE. */
static double ce(const double *logits, const double *tgt, int n, double w, double scale, double *g) {
    double sm[256];
    mz_softmax(logits, n, sm);
    double l = 0;
    for (int i = 0; i < n; i++)
        if (tgt[i] > 0) l -= tgt[i] * log(sm[i] > 1e-300 ? sm[i] : 1e-300);
    if (g)
        for (int i = 0; i < n; i++) g[i] = w * scale * (sm[i] - tgt[i]);
    return w * l;
}

static double run(mz_trainer *t, const mz_batch *b, double parts[3], bool grad) {
    mz_net *n = t->net;
    int B = b->B, K = b->K, E = n->c.E, V = n->V, S = n->c.S;
    if (K > t->K) K = t->K;
    ensure(t, B);
    for (int k = 0; k <= K; k++) {
        memcpy(t->pred[k]->params, n->pred->params, sizeof(double) * n->pred->nparams);
        memcpy(t->dyn[k]->params, n->dyn->params, sizeof(double) * n->dyn->nparams);
    }
    double lp = 0, lv = 0, lr = 0;
    double cat[256];
    /* forward */
    const double *Y = nnet_forward(n->repr, b->feat, B);
    double *s0 = t->emb;
    for (size_t i = 0; i < (size_t)B * (size_t)E; i++) s0[i] = tanh(Y[i]);
    nnet_forward(t->pred[0], s0, B);
    for (int k = 1; k <= K; k++) {
        const double *sp = t->emb + (size_t)(k - 1) * (size_t)B * (size_t)E;
        double *sk = t->emb + (size_t)k * (size_t)B * (size_t)E;
        for (int i = 0; i < B; i++) {
            double *x = t->din + (size_t)i * (size_t)(E + MZ_NACT);
            memcpy(x, sp + (size_t)i * (size_t)E, sizeof(double) * (size_t)E);
            x[E] = x[E + 1] = x[E + 2] = 0;
            x[E + b->act[(size_t)i * (size_t)b->K + (size_t)(k - 1)]] = 1;
        }
        const double *Yd = nnet_forward(t->dyn[k], t->din, B);
        for (int i = 0; i < B; i++)
            for (int e = 0; e < E; e++) sk[(size_t)i * (size_t)E + (size_t)e] = tanh(Yd[(size_t)i * (size_t)(E + V) + (size_t)e]);
        nnet_forward(t->pred[k], sk, B);
    }
    /* losses (and backward, last step first) */
    if (grad) {
        nnet_zero_grad(n->repr);
        nnet_zero_grad(n->dyn);
        nnet_zero_grad(n->pred);
    }
    double *carry = t->gemb, *ds = t->gemb + (size_t)B * (size_t)E; /* gradient wrt s_k from step k+1 */
    memset(carry, 0, sizeof(double) * (size_t)B * (size_t)E);
    double *dP = t->dres, *dD = t->dres + (size_t)B * (size_t)((E + V) > (MZ_NACT + V) ? (E + V) : (MZ_NACT + V));
    for (int k = K; k >= 0; k--) {
        double scale = (k == 0 ? 1.0 : 1.0 / K) / B;
        const nnet_mlp *pm = t->pred[k];
        const double *P = pm->h[pm->nlayers];
        for (int i = 0; i < B; i++) {
            size_t s = (size_t)i * (size_t)(b->K + 1) + (size_t)k;
            const double *pl = P + (size_t)i * (size_t)(MZ_NACT + V);
            double *g = dP + (size_t)i * (size_t)(MZ_NACT + V);
            lp += scale * B * ce(pl, b->pol + s * MZ_NACT, MZ_NACT, b->polw[s], scale, grad ? g : NULL);
            mz_to_cat(b->val[s], S, cat);
            lv += scale * B * ce(pl + MZ_NACT, cat, V, b->valw[s], scale, grad ? g + MZ_NACT : NULL);
        }
        if (!grad) {
            if (k > 0) {
                const double *Yd = t->dyn[k]->h[t->dyn[k]->nlayers];
                for (int i = 0; i < B; i++) {
                    size_t s = (size_t)i * (size_t)(b->K + 1) + (size_t)k;
                    mz_to_cat(b->rew[s], S, cat);
                    lr += scale * B * ce(Yd + (size_t)i * (size_t)(E + V) + E, cat, V, b->reww[s], scale, NULL);
                }
            }
            continue;
        }
        nnet_backward(t->pred[k], dP, ds);
        for (size_t i = 0; i < (size_t)B * (size_t)E; i++) ds[i] += carry[i];
        const double *sk = t->emb + (size_t)k * (size_t)B * (size_t)E;
        if (k > 0) {
            const double *Yd = t->dyn[k]->h[t->dyn[k]->nlayers];
            for (int i = 0; i < B; i++) {
                size_t s = (size_t)i * (size_t)(b->K + 1) + (size_t)k;
                double *g = dD + (size_t)i * (size_t)(E + V);
                for (int e = 0; e < E; e++) {
                    double sv = sk[(size_t)i * (size_t)E + (size_t)e];
                    g[e] = ds[(size_t)i * (size_t)E + (size_t)e] * (1 - sv * sv);
                }
                mz_to_cat(b->rew[s], S, cat);
                lr += scale * B * ce(Yd + (size_t)i * (size_t)(E + V) + E, cat, V, b->reww[s], scale, g + E);
            }
            nnet_backward(t->dyn[k], dD, t->din);
            for (int i = 0; i < B; i++)
                for (int e = 0; e < E; e++)
                    carry[(size_t)i * (size_t)E + (size_t)e] = t->c.grad_scale * t->din[(size_t)i * (size_t)(E + MZ_NACT) + (size_t)e];
        } else {
            for (size_t i = 0; i < (size_t)B * (size_t)E; i++) ds[i] *= 1 - sk[i] * sk[i];
            nnet_backward(n->repr, ds, NULL);
        }
    }
    if (grad) {
        for (int k = 0; k <= K; k++) {
            for (size_t i = 0; i < n->pred->nparams; i++) n->pred->grads[i] += t->pred[k]->grads[i];
            if (k > 0)
                for (size_t i = 0; i < n->dyn->nparams; i++) n->dyn->grads[i] += t->dyn[k]->grads[i];
            nnet_zero_grad(t->pred[k]);
            nnet_zero_grad(t->dyn[k]);
        }
    }
    if (parts) {
        parts[0] = lp / B;
        parts[1] = lv / B;
        parts[2] = lr / B;
    }
    return (lp + lv + lr) / B;
}

double mz_loss_grad(mz_trainer *t, const mz_batch *b, double parts[3]) { return run(t, b, parts, true); }
double mz_loss(mz_trainer *t, const mz_batch *b) { return run(t, b, NULL, false); }

void mz_trainer_apply(mz_trainer *t) {
    nnet_mlp *m[3] = {t->net->repr, t->net->dyn, t->net->pred};
    if (t->c.max_grad_norm > 0) {
        double *g[3] = {m[0]->grads, m[1]->grads, m[2]->grads};
        size_t len[3] = {m[0]->nparams, m[1]->nparams, m[2]->nparams};
        nnet_clip_grad_norm(g, len, 3, t->c.max_grad_norm);
    }
    for (int i = 0; i < 3; i++) {
        for (size_t j = 0; j < m[i]->nparams; j++) m[i]->grads[j] += t->c.weight_decay * m[i]->params[j];
        nnet_adam_step(t->adam[i], m[i]->params, m[i]->grads);
    }
    mz_net_params_changed(t->net);
    t->steps++;
}
