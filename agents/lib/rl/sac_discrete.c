/* sac_discrete.c - see sac_discrete.h. */
#include "sac_discrete.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

sacd_cfg sacd_cfg_default(void) {
    sacd_cfg c;
    memset(&c, 0, sizeof c);
    c.actor = gnn_cfg_default(1, 1);
    c.critic = gnn_cfg_default(1, 1);
    c.actor_lr = 1e-3;
    c.critic_lr = 1e-3;
    c.gamma = 0.99;
    c.tau = 1e-3;
    c.alpha = 0.05;
    c.reward_scale = 5;
    c.batch = 24;
    c.chunk = 1;
    c.buffer = 100000;
    c.noise_std = 0.1;
    c.noise_clip = 0.2;
    return c;
}

void sacd_group_softmax(const double *logits, int rows, int nsub, int nch, double *probs) {
    for (int i = 0; i < rows * nsub; i++) {
        const double *z = logits + (size_t)i * nch;
        double *p = probs + (size_t)i * nch, mx = z[0], s = 0;
        for (int j = 1; j < nch; j++)
            if (z[j] > mx) mx = z[j];
        for (int j = 0; j < nch; j++) s += p[j] = exp(z[j] - mx);
        for (int j = 0; j < nch; j++) p[j] /= s;
    }
}

sacd *sacd_new(const sacd_cfg *cfg, const gnn_graph *g, const double *feat, int F, int nsub, int nch, uint64_t seed,
               hw_err *err) {
    sacd_cfg c = *cfg;
    if (c.batch < 1) c.batch = 1;
    if (c.buffer < c.batch) c.buffer = c.batch;
    int nact = nsub * nch;
    if (nsub < 1 || nch < 2 || nact > 64) {
        hw_fail(err, HW_E_BAD_CONFIG, "sacd: %d sub-actions x %d choices (need 1..64 logits per node, >= 2 choices)", nsub, nch);
        return NULL;
    }
    c.actor.in = F;
    c.actor.n_out = nact;
    c.critic.in = F + nact;
    c.critic.n_out = 1;
    if (gnn_cfg_check(&c.actor, err) || gnn_cfg_check(&c.critic, err)) return NULL;
    sacd *s = calloc(1, sizeof *s);
    s->cfg = c;
    s->N = g->n;
    s->F = F;
    s->nsub = nsub;
    s->nch = nch;
    s->nact = nact;
    s->g = g;
    if (c.chunk < 1 || c.chunk > c.batch) c.chunk = c.batch;
    s->cfg.chunk = c.chunk;
    s->gb = gnn_graph_batch(g, c.chunk);
    s->gtail = c.batch % c.chunk ? gnn_graph_batch(g, c.batch % c.chunk) : NULL;
    s->feat = malloc(sizeof(double) * (size_t)g->n * F);
    memcpy(s->feat, feat, sizeof(double) * (size_t)g->n * F);
    s->actor = gnn_new(&c.actor);
    s->q1 = gnn_new(&c.critic);
    s->q2 = gnn_new(&c.critic);
    s->q1t = gnn_new(&c.critic);
    s->q2t = gnn_new(&c.critic);
    gsl_rng *r = ag_rng_new(ag_rng_derive(seed, 301));
    gnn_init(s->actor, r);
    gnn_init(s->q1, r);
    gnn_init(s->q2, r);
    gsl_rng_free(r);
    memcpy(s->q1t->params, s->q1->params, sizeof(double) * s->q1->nparams);
    memcpy(s->q2t->params, s->q2->params, sizeof(double) * s->q2->nparams);
    s->opt_actor = nnet_adam_new(s->actor->nparams, c.actor_lr);
    s->opt_q1 = nnet_adam_new(s->q1->nparams, c.critic_lr);
    s->opt_q2 = nnet_adam_new(s->q2->nparams, c.critic_lr);
    s->opt_actor->eps = s->opt_q1->eps = s->opt_q2->eps = 1e-8; /* torch's default */
    s->cap = c.buffer;
    s->r_act = malloc((size_t)s->cap * (size_t)g->n * nsub);
    s->r_rew = calloc((size_t)s->cap, sizeof(double));
    s->r_done = calloc((size_t)s->cap, 1);
    size_t rows = (size_t)c.batch * g->n;
    s->Xc = malloc(sizeof(double) * rows * (size_t)(F + nact));
    s->Xa = malloc(sizeof(double) * (size_t)g->n * (size_t)(F + nact));
    s->dXa = malloc(sizeof(double) * (size_t)g->n * (size_t)(F + nact));
    s->dq = malloc(sizeof(double) * rows);
    s->probs = malloc(sizeof(double) * (size_t)g->n * nact);
    s->dz = malloc(sizeof(double) * (size_t)g->n * nact);
    s->y = malloc(sizeof(double) * (size_t)c.batch);
    s->idx = malloc(sizeof(int64_t) * (size_t)c.batch);
    return s;
}

void sacd_free(sacd *s) {
    if (!s) return;
    gnn_graph_free(s->gb);
    gnn_graph_free(s->gtail);
    gnn_free(s->actor), gnn_free(s->q1), gnn_free(s->q2), gnn_free(s->q1t), gnn_free(s->q2t);
    nnet_adam_free(s->opt_actor), nnet_adam_free(s->opt_q1), nnet_adam_free(s->opt_q2);
    free(s->feat), free(s->r_act), free(s->r_rew), free(s->r_done);
    free(s->Xc), free(s->Xa), free(s->dXa), free(s->dq), free(s->probs), free(s->dz), free(s->y), free(s->idx);
    free(s);
}

void sacd_add(sacd *s, const int64_t *action, double reward, bool terminated) {
    size_t L = (size_t)s->N * s->nsub;
    uint8_t *dst = s->r_act + (size_t)s->pos * L;
    for (size_t k = 0; k < L; k++) dst[k] = (uint8_t)action[k];
    s->r_rew[s->pos] = reward;
    s->r_done[s->pos] = terminated;
    s->pos = (s->pos + 1) % s->cap;
    if (s->size < s->cap) s->size++;
}

const double *sacd_logits(sacd *s) { return gnn_forward(s->actor, s->g, s->feat); }

void sacd_posterior(sacd *s, double *post) { sacd_group_softmax(sacd_logits(s), s->N, s->nsub, s->nch, post); }

void sacd_act(sacd *s, gsl_rng *rng, double sigma, int64_t *action) {
    const double *z = sacd_logits(s);
    for (int i = 0; i < s->N * s->nsub; i++) {
        int best = 0;
        double bv = -INFINITY;
        for (int j = 0; j < s->nch; j++) {
            double v = z[(size_t)i * s->nch + j] + (sigma > 0 ? sigma * ag_rng_normal(rng) : 0);
            if (v > bv) bv = v, best = j;
        }
        action[i] = best;
    }
}

/* rows of [feat_i, enc_i] for one graph copy */
static void fill_input(const sacd *s, double *X, const double *enc) {
    int W = s->F + s->nact;
    for (int i = 0; i < s->N; i++) {
        memcpy(X + (size_t)i * W, s->feat + (size_t)i * s->F, sizeof(double) * (size_t)s->F);
        memcpy(X + (size_t)i * W + s->F, enc + (size_t)i * s->nact, sizeof(double) * (size_t)s->nact);
    }
}

static double mean_rows(const double *y, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) m += y[i];
    return m / n;
}

/* min_j Q_j(s, pi) with the given networks; *which gets 0/1 (the smaller). */
static double q_of_policy(sacd *s, gnn_net *a, gnn_net *b, int *which) {
    double qa = mean_rows(gnn_forward(a, s->g, s->Xa), s->N);
    double qb = mean_rows(gnn_forward(b, s->g, s->Xa), s->N);
    if (which) *which = qb < qa;
    return qb < qa ? qb : qa;
}

static double entropy_of(const sacd *s, const double *p) {
    double H = 0;
    for (size_t k = 0; k < (size_t)s->N * s->nact; k++)
        if (p[k] > 0) H -= p[k] * log(p[k]);
    return H / s->N;
}

double sacd_actor_loss(sacd *s, bool grad, double *entropy) {
    const double *z = gnn_forward(s->actor, s->g, s->feat);
    sacd_group_softmax(z, s->N, s->nsub, s->nch, s->probs);
    fill_input(s, s->Xa, s->probs);
    int which = 0;
    double q = q_of_policy(s, s->q1, s->q2, &which);
    double H = entropy_of(s, s->probs), al = s->cfg.alpha;
    if (entropy) *entropy = H;
    double L = -q - al * H;
    if (!grad) return L;
    gnn_net *qn = which ? s->q2 : s->q1;
    /* each network caches its own last forward: dL/dQ = -1 spread over the node mean */
    for (int i = 0; i < s->N; i++) s->dq[i] = -1.0 / s->N;
    gnn_backward(qn, s->dq, s->dXa);
    int W = s->F + s->nact;
    for (int i = 0; i < s->N; i++)
        for (int g = 0; g < s->nsub; g++) {
            size_t o = (size_t)i * s->nact + (size_t)g * s->nch;
            const double *p = s->probs + o;
            double dP[64], dot = 0;
            for (int j = 0; j < s->nch; j++) {
                dP[j] = s->dXa[(size_t)i * W + s->F + g * s->nch + j];
                if (p[j] > 0) dP[j] += al * (log(p[j]) + 1.0) / s->N;
                dot += p[j] * dP[j];
            }
            for (int j = 0; j < s->nch; j++) s->dz[o + j] = p[j] * (dP[j] - dot);
        }
    gnn_zero_grad(s->actor);
    gnn_backward(s->actor, s->dz, NULL);
    return L;
}

static void soft_update(gnn_net *t, const gnn_net *n, double tau) {
    for (size_t i = 0; i < n->nparams; i++) t->params[i] = tau * n->params[i] + (1 - tau) * t->params[i];
}

static double critic_step(sacd *s, gnn_net *q, nnet_adam *opt) {
    int B = s->cfg.batch, N = s->N, W = s->F + s->nact, C = s->cfg.chunk;
    double loss = 0;
    gnn_zero_grad(q);
    for (int b0 = 0; b0 < B; b0 += C) {
        int nb = B - b0 < C ? B - b0 : C;
        const gnn_graph *gc = nb == C ? s->gb : s->gtail;
        const double *out = gnn_forward(q, gc, s->Xc + (size_t)b0 * N * W);
        for (int b = 0; b < nb; b++) {
            double e = mean_rows(out + (size_t)b * N, N) - s->y[b0 + b];
            loss += e * e / B;
            for (int i = 0; i < N; i++) s->dq[(size_t)b * N + i] = 2.0 * e / B / N;
        }
        gnn_backward(q, s->dq, NULL);
    }
    nnet_adam_step(opt, q->params, q->grads);
    return loss;
}

int sacd_update(sacd *s, gsl_rng *rng, sacd_stats *st) {
    int B = s->cfg.batch, N = s->N, W = s->F + s->nact;
    if (s->size < B) return 0;
    for (int b = 0; b < B; b++) s->idx[b] = ag_rng_int(rng, s->size);
    /* bootstrap term (only needed when some transition did not terminate) */
    int any_cont = 0;
    for (int b = 0; b < B; b++) any_cont |= !s->r_done[s->idx[b]];
    double boot = 0;
    if (any_cont) {
        const double *z = gnn_forward(s->actor, s->g, s->feat);
        sacd_group_softmax(z, N, s->nsub, s->nch, s->probs);
        fill_input(s, s->Xa, s->probs);
        boot = q_of_policy(s, s->q1t, s->q2t, NULL) + s->cfg.alpha * entropy_of(s, s->probs);
    }
    double enc[64];
    for (int b = 0; b < B; b++) {
        int64_t t = s->idx[b];
        s->y[b] = s->cfg.reward_scale * s->r_rew[t] + (s->r_done[t] ? 0.0 : s->cfg.gamma * boot);
        const uint8_t *a = s->r_act + (size_t)t * N * s->nsub;
        double *Xb = s->Xc + (size_t)b * N * W;
        for (int i = 0; i < N; i++) {
            memcpy(Xb + (size_t)i * W, s->feat + (size_t)i * s->F, sizeof(double) * (size_t)s->F);
            for (int g = 0; g < s->nsub; g++)
                for (int j = 0; j < s->nch; j++) {
                    double e = s->cfg.noise_std * ag_rng_normal(rng);
                    if (e > s->cfg.noise_clip) e = s->cfg.noise_clip;
                    if (e < -s->cfg.noise_clip) e = -s->cfg.noise_clip;
                    enc[g * s->nch + j] = (a[i * s->nsub + g] == j ? 1.0 : 0.0) + e;
                }
            memcpy(Xb + (size_t)i * W + s->F, enc, sizeof(double) * (size_t)s->nact);
        }
    }
    double ql = critic_step(s, s->q1, s->opt_q1) + critic_step(s, s->q2, s->opt_q2);
    double H = 0;
    double pl = sacd_actor_loss(s, true, &H);
    nnet_adam_step(s->opt_actor, s->actor->params, s->actor->grads);
    soft_update(s->q1t, s->q1, s->cfg.tau);
    soft_update(s->q2t, s->q2, s->cfg.tau);
    if (st) {
        st->q_loss = ql;
        st->pi_loss = pl;
        st->entropy = H;
        st->q_pi = -pl - s->cfg.alpha * H;
    }
    return 1;
}
