/* ckpt.c - hwgym-egrl's checkpoints and --resume (agents/lib/run/checkpoint.h, docs/egrl.md):
 * the whole run state at a generation boundary (before an evaluate_batch): the RNG, the
 * population (GNN weights, Boltzmann priors and temperatures, fitness), the SAC-discrete
 * learner (actor, twin critics and targets, the three Adam optimisers) and its shared replay,
 * the Greedy-DP position, the counters and the best GNN policy, plus the --curve file's length.
 * A resumed run continues with the same trials as an uninterrupted one (tested). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "egrl.h"

static const char *key(char *buf, size_t cap, const char *a, int j, const char *b) {
    if (j >= 0) snprintf(buf, cap, "egrl.%s.%d.%s", a, j, b);
    else snprintf(buf, cap, "egrl.%s.%s", a, b);
    return buf;
}

static void put_adam(ag_ckpt *k, const char *name, const nnet_adam *a) {
    char b[96];
    ag_ckpt_put_f64(k, key(b, sizeof b, "sac", -1, name), a->m, a->n);
    snprintf(b, sizeof b, "egrl.sac.%s.v", name);
    ag_ckpt_put_f64(k, b, a->v, a->n);
    snprintf(b, sizeof b, "egrl.sac.%s.t", name);
    ag_ckpt_put_int(k, b, a->t);
}

static int get_adam(const ag_ckpt *k, const char *name, nnet_adam *a, hw_err *err) {
    char b[96];
    int64_t t = 0;
    if (ag_ckpt_get_f64(k, key(b, sizeof b, "sac", -1, name), a->m, a->n, err)) return -1;
    snprintf(b, sizeof b, "egrl.sac.%s.v", name);
    if (ag_ckpt_get_f64(k, b, a->v, a->n, err)) return -1;
    snprintf(b, sizeof b, "egrl.sac.%s.t", name);
    if (ag_ckpt_get_int(k, b, &t, err)) return -1;
    a->t = (long)t;
    return 0;
}

static void put_state(eg_ctx *c, ag_ckpt *k) {
    char b[96];
    ag_ckpt_put_rng(k, "egrl.rng", c->rng);
    int64_t cnt[6] = {c->gens, c->updates, c->calls, c->valid, c->evals, c->dp_node};
    ag_ckpt_put_i64(k, "egrl.counters", cnt, 6);
    double re[7] = {c->upd_acc, c->best_gnn_fit, c->curve_best, c->last.q_loss, c->last.pi_loss, c->last.entropy, c->last.q_pi};
    ag_ckpt_put_f64(k, "egrl.reals", re, 7);
    if (c->best_gnn) ag_ckpt_put_f64(k, "egrl.best_gnn", c->best_gnn, c->best_gnn_n);
    ag_ckpt_put_int(k, "egrl.curve_bytes", c->curve ? (int64_t)ftell(c->curve) : 0);
    for (int j = 0; c->pop && j < c->npop; j++) {
        const eg_member *m = &c->pop[j];
        if (m->kind == 0) ag_ckpt_put_f64(k, key(b, sizeof b, "pop", j, "params"), m->net->params, m->net->nparams);
        else {
            ag_ckpt_put_f64(k, key(b, sizeof b, "pop", j, "prior"), m->bz->prior, (size_t)m->bz->nd * (size_t)m->bz->nc);
            ag_ckpt_put_f64(k, key(b, sizeof b, "pop", j, "temp"), m->bz->temp, (size_t)m->bz->nd);
        }
        ag_ckpt_put_f64(k, key(b, sizeof b, "pop", j, "fitness"), &m->fitness, 1);
    }
    if (c->pg) {
        sacd *s = c->pg;
        gnn_net *nets[5] = {s->actor, s->q1, s->q2, s->q1t, s->q2t};
        const char *nn[5] = {"actor", "q1", "q2", "q1t", "q2t"};
        for (int i = 0; i < 5; i++) ag_ckpt_put_f64(k, key(b, sizeof b, "sac", -1, nn[i]), nets[i]->params, nets[i]->nparams);
        put_adam(k, "adam_actor", s->opt_actor);
        put_adam(k, "adam_q1", s->opt_q1);
        put_adam(k, "adam_q2", s->opt_q2);
        int64_t rp[2] = {s->size, s->pos};
        ag_ckpt_put_i64(k, "egrl.sac.replay_at", rp, 2);
        size_t L = (size_t)s->N * (size_t)s->nsub;
        ag_ckpt_put_u8(k, "egrl.sac.replay_act", s->r_act, (size_t)s->size * L);
        ag_ckpt_put_f64(k, "egrl.sac.replay_rew", s->r_rew, (size_t)s->size);
        ag_ckpt_put_u8(k, "egrl.sac.replay_done", s->r_done, (size_t)s->size);
    }
    if (c->dp_cur) {
        ag_ckpt_put_i64(k, "egrl.dp.cur", c->dp_cur, (size_t)c->D);
        ag_ckpt_put_f64(k, "egrl.dp.r", &c->dp_r, 1);
    }
}

int eg_ckpt_restore(eg_ctx *c, hw_err *err) {
    const ag_ckpt *k = c->ctl ? c->ctl->resume : NULL;
    if (!k) return 0;
    char b[96];
    int64_t cnt[6];
    double re[7];
    if (ag_ckpt_get_rng(k, "egrl.rng", c->rng, err) || ag_ckpt_get_i64(k, "egrl.counters", cnt, 6, err) ||
        ag_ckpt_get_f64(k, "egrl.reals", re, 7, err))
        return -1;
    c->gens = cnt[0], c->updates = cnt[1], c->calls = cnt[2], c->valid = cnt[3], c->evals = cnt[4], c->dp_node = cnt[5];
    c->upd_acc = re[0], c->best_gnn_fit = re[1], c->curve_best = re[2];
    c->last = (sacd_stats){re[3], re[4], re[5], re[6]};
    int64_t nb = ag_ckpt_len(k, "egrl.best_gnn");
    if (nb > 0) {
        c->best_gnn = realloc(c->best_gnn, sizeof(double) * (size_t)nb);
        c->best_gnn_n = (size_t)nb;
        if (ag_ckpt_get_f64(k, "egrl.best_gnn", c->best_gnn, (size_t)nb, err)) return -1;
    }
    for (int j = 0; c->pop && j < c->npop; j++) {
        eg_member *m = &c->pop[j];
        int bad = m->kind == 0 ? ag_ckpt_get_f64(k, key(b, sizeof b, "pop", j, "params"), m->net->params, m->net->nparams, err)
                               : ag_ckpt_get_f64(k, key(b, sizeof b, "pop", j, "prior"), m->bz->prior,
                                                 (size_t)m->bz->nd * (size_t)m->bz->nc, err) ||
                                     ag_ckpt_get_f64(k, key(b, sizeof b, "pop", j, "temp"), m->bz->temp, (size_t)m->bz->nd, err);
        if (bad || ag_ckpt_get_f64(k, key(b, sizeof b, "pop", j, "fitness"), &m->fitness, 1, err)) return -1;
    }
    if (c->pg) {
        sacd *s = c->pg;
        gnn_net *nets[5] = {s->actor, s->q1, s->q2, s->q1t, s->q2t};
        const char *nn[5] = {"actor", "q1", "q2", "q1t", "q2t"};
        for (int i = 0; i < 5; i++)
            if (ag_ckpt_get_f64(k, key(b, sizeof b, "sac", -1, nn[i]), nets[i]->params, nets[i]->nparams, err)) return -1;
        if (get_adam(k, "adam_actor", s->opt_actor, err) || get_adam(k, "adam_q1", s->opt_q1, err) ||
            get_adam(k, "adam_q2", s->opt_q2, err))
            return -1;
        int64_t rp[2];
        if (ag_ckpt_get_i64(k, "egrl.sac.replay_at", rp, 2, err)) return -1;
        if (rp[0] < 0 || rp[0] > s->cap || rp[1] < 0 || rp[1] >= s->cap)
            return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: replay size %lld / position %lld outside the capacity %lld",
                           (long long)rp[0], (long long)rp[1], (long long)s->cap);
        s->size = rp[0], s->pos = rp[1];
        size_t L = (size_t)s->N * (size_t)s->nsub;
        if (ag_ckpt_get_u8(k, "egrl.sac.replay_act", s->r_act, (size_t)s->size * L, err) ||
            ag_ckpt_get_f64(k, "egrl.sac.replay_rew", s->r_rew, (size_t)s->size, err) ||
            ag_ckpt_get_u8(k, "egrl.sac.replay_done", s->r_done, (size_t)s->size, err))
            return -1;
    }
    if (ag_ckpt_len(k, "egrl.dp.cur") >= 0) {
        if (!c->dp_cur) c->dp_cur = calloc((size_t)c->D, sizeof(int64_t));
        if (ag_ckpt_get_i64(k, "egrl.dp.cur", c->dp_cur, (size_t)c->D, err) || ag_ckpt_get_f64(k, "egrl.dp.r", &c->dp_r, 1, err))
            return -1;
    }
    int64_t cb = 0;
    if (ag_ckpt_get_int(k, "egrl.curve_bytes", &cb, err)) return -1;
    if (c->curve && cb > 0) { /* drop the lines written after the checkpoint (they are written again) */
        fflush(c->curve);
        if (ftruncate(fileno(c->curve), (off_t)cb) || fseek(c->curve, (long)cb, SEEK_SET))
            return hw_fail(err, HW_E_IO, "--curve: cannot cut the file back to the checkpoint (%lld bytes)", (long long)cb);
    }
    return 0;
}

int eg_ckpt_point(eg_ctx *c) {
    if (!c->ctl || !ag_ckpt_due(c->ctl, ag_run_samples(c->run))) return 0;
    if (c->curve) fflush(c->curve);
    ag_ckpt *k = ag_ckpt_new();
    put_state(c, k);
    int rc = ag_ckpt_commit(c->ctl, k, c->run, ag_run_samples(c->run), &c->err);
    ag_ckpt_free(k);
    return rc;
}
