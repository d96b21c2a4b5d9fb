/* ckpt.c - checkpoint and --resume of hwgym-muzero, following checkpoint.h's rule.
 *
 * When: at the top of the play loop (every game between two steps), once --checkpoint-every env
 * steps passed; the first one right after the heuristic's demonstration game (so a resumed run
 * never replays the demonstration).
 * What: the RNG (the only one: MCTS noise, sampling, training batches, rollouts, ES), the
 * counters, the best game, the networks and their Adam moments, the replay (features as raw
 * float bytes), the ES state, and per game in flight: its trajectory since the last flush, its
 * action prefix, the buffer indices of its Drop-backup states (the backup_safe one and the
 * pre-open restore points), its forced Drops and counters.
 * Games in flight: mmap-v0's state is a function of its action prefix (its own snapshots are
 * prefixes), so a resumed run opens fresh sessions and replays each game's prefix into them,
 * taking the Drop-backup snapshots again at the recorded buffer indices. These replayed steps
 * rebuild state the checkpoint already counts: they are not trials and are not logged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mz_agent.h"

#define NCTR 12

static const char *kf(char *b, size_t n, int g, const char *f) {
    snprintf(b, n, "g%d.%s", g, f);
    return b;
}

static void put_floats(ag_ckpt *c, const char *name, const float *a, size_t n) {
    ag_ckpt_put_u8(c, name, (const uint8_t *)a, n * sizeof(float));
}

static int get_floats(const ag_ckpt *c, const char *name, float *a, size_t n, hw_err *err) {
    return ag_ckpt_get_u8(c, name, (uint8_t *)a, n * sizeof(float), err);
}

static void put_learning(const mz_agent *A, ag_ckpt *c) {
    nnet_mlp *m[3] = {A->net->repr, A->net->dyn, A->net->pred};
    char k[64];
    for (int i = 0; i < 3; i++) {
        const nnet_adam *ad = A->tr->adam[i];
        snprintf(k, sizeof k, "net%d.params", i);
        ag_ckpt_put_f64(c, k, m[i]->params, m[i]->nparams);
        snprintf(k, sizeof k, "net%d.adam_m", i);
        ag_ckpt_put_f64(c, k, ad->m, ad->n);
        snprintf(k, sizeof k, "net%d.adam_v", i);
        ag_ckpt_put_f64(c, k, ad->v, ad->n);
        snprintf(k, sizeof k, "net%d.adam_t", i);
        ag_ckpt_put_int(c, k, ad->t);
    }
    ag_ckpt_put_int(c, "trainer.steps", A->tr->steps);
    const mz_replay *r = A->rb;
    size_t n = (size_t)r->n;
    int64_t hd[3] = {r->n, r->head, r->next_seg};
    ag_ckpt_put_i64(c, "replay.state", hd, 3);
    put_floats(c, "replay.feat", r->feat, n * (size_t)r->F);
    put_floats(c, "replay.rew", r->rew, n);
    put_floats(c, "replay.pol", r->pol, n * MZ_NACT);
    put_floats(c, "replay.pw", r->pw, n);
    put_floats(c, "replay.val", r->val, n);
    ag_ckpt_put_u8(c, "replay.act", r->act, n);
    ag_ckpt_put_u8(c, "replay.mask", r->mask, n);
    ag_ckpt_put_u8(c, "replay.done", r->done, n);
    ag_ckpt_put_u8(c, "replay.demo", r->demo, n);
    ag_ckpt_put_i64(c, "replay.seg", r->seg, n);
    ag_ckpt_put_i64(c, "replay.game", r->game, n);
    put_floats(c, "replay.tail", r->tail, n);
    put_floats(c, "replay.retp", r->retp, n);
    put_floats(c, "replay.fin", r->fin, n);
    int64_t *b = malloc(sizeof(int64_t) * (n + 1));
    for (size_t i = 0; i < n; i++) b[i] = r->buf[i];
    ag_ckpt_put_i64(c, "replay.buf", b, n);
    free(b);
}

static int get_learning(mz_agent *A, const ag_ckpt *c, hw_err *err) {
    nnet_mlp *m[3] = {A->net->repr, A->net->dyn, A->net->pred};
    char k[64];
    for (int i = 0; i < 3; i++) {
        nnet_adam *ad = A->tr->adam[i];
        int64_t t = 0;
        snprintf(k, sizeof k, "net%d.params", i);
        if (ag_ckpt_get_f64(c, k, m[i]->params, m[i]->nparams, err)) return -1;
        snprintf(k, sizeof k, "net%d.adam_m", i);
        if (ag_ckpt_get_f64(c, k, ad->m, ad->n, err)) return -1;
        snprintf(k, sizeof k, "net%d.adam_v", i);
        if (ag_ckpt_get_f64(c, k, ad->v, ad->n, err)) return -1;
        snprintf(k, sizeof k, "net%d.adam_t", i);
        if (ag_ckpt_get_int(c, k, &t, err)) return -1;
        ad->t = (long)t;
    }
    mz_net_params_changed(A->net);
    int64_t st = 0, hd[3];
    if (ag_ckpt_get_int(c, "trainer.steps", &st, err) || ag_ckpt_get_i64(c, "replay.state", hd, 3, err)) return -1;
    A->tr->steps = (long)st;
    mz_replay *r = A->rb;
    if (hd[0] < 0 || hd[0] > r->cap || hd[1] < 0 || hd[1] >= r->cap)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: replay.state does not fit --replay %d", r->cap);
    r->n = (int)hd[0];
    r->head = (int)hd[1];
    r->next_seg = hd[2];
    size_t n = (size_t)r->n;
    if (get_floats(c, "replay.feat", r->feat, n * (size_t)r->F, err) || get_floats(c, "replay.rew", r->rew, n, err) ||
        get_floats(c, "replay.pol", r->pol, n * MZ_NACT, err) || get_floats(c, "replay.pw", r->pw, n, err) ||
        get_floats(c, "replay.val", r->val, n, err) || ag_ckpt_get_u8(c, "replay.act", r->act, n, err) ||
        ag_ckpt_get_u8(c, "replay.mask", r->mask, n, err) || ag_ckpt_get_u8(c, "replay.done", r->done, n, err) ||
        ag_ckpt_get_u8(c, "replay.demo", r->demo, n, err) || ag_ckpt_get_i64(c, "replay.seg", r->seg, n, err) ||
        ag_ckpt_get_i64(c, "replay.game", r->game, n, err) || get_floats(c, "replay.tail", r->tail, n, err) ||
        get_floats(c, "replay.retp", r->retp, n, err) || get_floats(c, "replay.fin", r->fin, n, err))
        return -1;
    int64_t *b = malloc(sizeof(int64_t) * (n + 1));
    int rc = ag_ckpt_get_i64(c, "replay.buf", b, n, err);
    for (size_t i = 0; i < n && !rc; i++) r->buf[i] = (int32_t)b[i];
    free(b);
    return rc;
}

static void put_game(const mz_agent *A, const mz_game *g, ag_ckpt *c) {
    char k[64];
    int i = g->idx;
    int64_t st[12] = {g->episode, g->restores, g->backup >= 0 ? g->backup_buf : -1, g->backup_len, g->flushed, g->n,
                     g->env->st.buffer, g->nforced, g->nopen, g->stretch_losses, g->opens_missed, g->gid};
    ag_ckpt_put_i64(c, kf(k, sizeof k, i, "state"), st, 12);
    size_t n = (size_t)g->n;
    ag_ckpt_put_f64(c, kf(k, sizeof k, i, "feat"), g->feat, n * (size_t)g->F);
    ag_ckpt_put_u8(c, kf(k, sizeof k, i, "act"), g->act, n);
    ag_ckpt_put_u8(c, kf(k, sizeof k, i, "mask"), g->mask, n);
    ag_ckpt_put_f64(c, kf(k, sizeof k, i, "rew"), g->rew, n);
    ag_ckpt_put_f64(c, kf(k, sizeof k, i, "pol"), g->pol, n * MZ_NACT);
    ag_ckpt_put_f64(c, kf(k, sizeof k, i, "val"), g->val, n);
    ag_ckpt_put_f64(c, kf(k, sizeof k, i, "retp"), g->retp, n);
    ag_ckpt_put_u8(c, kf(k, sizeof k, i, "fz"), g->fz, n);
    ag_ckpt_put_u8(c, kf(k, sizeof k, i, "prefix"), g->prefix, (size_t)A->nbuf + 1);
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(g->nforced + 3 * g->nopen + 1));
    for (int j = 0; j < g->nforced; j++) v[j] = g->forced[j];
    ag_ckpt_put_i64(c, kf(k, sizeof k, i, "forced"), v, (size_t)g->nforced);
    for (int j = 0; j < g->nopen; j++) {
        v[3 * j] = g->opens[j].alias;
        v[3 * j + 1] = g->opens[j].n;
        v[3 * j + 2] = g->opens[j].buf;
    }
    ag_ckpt_put_i64(c, kf(k, sizeof k, i, "opens"), v, 3 * (size_t)g->nopen);
    free(v);
}

/* Replays g's prefix into its (fresh) session, taking the Drop-backup snapshots on the way. */
static int rebuild_env(mz_agent *A, mz_game *g, int cur, hw_err *err) {
    mz_env *e = g->env;
    if (mz_env_reset(e, err)) return -1;
    for (int b = 0; b <= cur; b++) {
        if (b == g->backup_buf && mz_env_snapshot(e, &g->backup, err)) return -1;
        for (int j = 0; j < g->nopen; j++)
            if (g->opens[j].buf == b && mz_env_snapshot(e, &g->opens[j].snap, err)) return -1;
        if (b == cur) break;
        int a = g->prefix[b];
        if (a >= MZ_NACT || !(e->st.mask >> a & 1) || mz_env_step(e, a, err)) {
            if (!err->msg[0]) hw_fail(err, HW_E_BAD_STATE, "checkpoint: game %d does not replay at buffer %d", g->idx, b);
            return -1;
        }
        if (e->terminated) return hw_fail(err, HW_E_BAD_STATE, "checkpoint: game %d ends while replaying buffer %d", g->idx, b);
    }
    if (e->st.buffer != cur) return hw_fail(err, HW_E_BAD_STATE, "checkpoint: game %d replays to buffer %d, not %d", g->idx, e->st.buffer, cur);
    mz_game_encode(A, g);
    return 0;
}

static int get_game(mz_agent *A, mz_game *g, const ag_ckpt *c, hw_err *err) {
    char k[64];
    int i = g->idx;
    int64_t st[12];
    if (ag_ckpt_get_i64(c, kf(k, sizeof k, i, "state"), st, 12, err)) return -1;
    if (st[5] < 0 || st[6] < 0 || st[6] > A->nbuf || st[7] < 0 || st[8] < 0 || st[8] > 1 << 20)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: %s is out of range", k);
    g->episode = st[0];
    g->gid = st[11];
    g->restores = (int)st[1];
    g->stretch_losses = (int)st[9];
    g->opens_missed = st[10] != 0;
    g->backup_buf = (int)st[2];
    g->backup = -1;
    g->backup_len = (int)st[3];
    g->flushed = (int)st[4];
    int n = (int)st[5], cur = (int)st[6];
    g->cap = 0; /* sized afresh from 64, as a new game's arrays grow */
    mz_traj_reserve(g, n + 1);
    g->n = n;
    size_t z = (size_t)n;
    if (ag_ckpt_get_f64(c, kf(k, sizeof k, i, "feat"), g->feat, z * (size_t)g->F, err) ||
        ag_ckpt_get_u8(c, kf(k, sizeof k, i, "act"), g->act, z, err) || ag_ckpt_get_u8(c, kf(k, sizeof k, i, "mask"), g->mask, z, err) ||
        ag_ckpt_get_f64(c, kf(k, sizeof k, i, "rew"), g->rew, z, err) ||
        ag_ckpt_get_f64(c, kf(k, sizeof k, i, "pol"), g->pol, z * MZ_NACT, err) ||
        ag_ckpt_get_f64(c, kf(k, sizeof k, i, "val"), g->val, z, err) ||
        ag_ckpt_get_f64(c, kf(k, sizeof k, i, "retp"), g->retp, z, err) || ag_ckpt_get_u8(c, kf(k, sizeof k, i, "fz"), g->fz, z, err) ||
        ag_ckpt_get_u8(c, kf(k, sizeof k, i, "prefix"), g->prefix, (size_t)A->nbuf + 1, err))
        return -1;
    /* the trajectory is the chain of consecutive buffers that made the current state */
    for (int j = 0; j < n; j++) g->bix[j] = cur - n + j;
    int nf = (int)st[7], no = (int)st[8];
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(nf + 3 * no + 1));
    int rc = ag_ckpt_get_i64(c, kf(k, sizeof k, i, "forced"), v, (size_t)nf, err);
    if (!rc) {
        g->forced = realloc(g->forced, sizeof(int) * (size_t)(nf + 1));
        g->capforced = nf + 1;
        g->nforced = nf;
        for (int j = 0; j < nf; j++) g->forced[j] = (int)v[j];
        rc = ag_ckpt_get_i64(c, kf(k, sizeof k, i, "opens"), v, 3 * (size_t)no, err);
    }
    if (!rc) {
        g->opens = realloc(g->opens, sizeof *g->opens * (size_t)(no + 1));
        g->capopen = no + 1;
        g->nopen = no;
        for (int j = 0; j < no; j++) g->opens[j] = (struct mz_open){(int)v[3 * j], (int)v[3 * j + 1], (int)v[3 * j + 2], -1};
    }
    free(v);
    if (rc) return -1;
    return rebuild_env(A, g, cur, err);
}

int mz_ckpt_maybe(mz_agent *A, hw_err *err) {
    if (!A->ctl || !ag_ckpt_due(A->ctl, A->env_steps)) return 0;
    ag_ckpt *c = ag_ckpt_new();
    ag_ckpt_put_rng(c, "mz.rng", A->rng);
    int64_t ctr[NCTR] = {A->env_steps, A->demo_steps, A->games_done, A->restores, A->losses,
                         A->rewound, A->train_steps, A->last_train_at, A->sims, A->next_gid, A->elite_due, A->elite_at};
    ag_ckpt_put_i64(c, "mz.counters", ctr, NCTR);
    ag_ckpt_put_real(c, "mz.best", A->best);
    ag_ckpt_put_f64(c, "mz.last_loss", A->last_loss, 3);
    ag_ckpt_put_real(c, "mz.elapsed", ag_now() - A->t0);
    ag_ckpt_put_real(c, "mz.cpu_elapsed", mz_cpu_now() - A->cpu0);
    if (A->best_actions) ag_ckpt_put_u8(c, "mz.best_actions", (const uint8_t *)A->best_actions, (size_t)A->nbuf);
    if (A->elite_actions) {
        ag_ckpt_put_u8(c, "mz.elite_actions", (const uint8_t *)A->elite_actions, (size_t)A->nbuf);
        ag_ckpt_put_real(c, "mz.elite_best", A->elite_best);
    }
    ag_ckpt_put_json(c, "mz.best_metrics", A->best_metrics);
    for (int i = 0; i < A->G; i++) put_game(A, A->games[i], c);
    uint8_t *ret = calloc(A->G > 0 ? (size_t)A->G : 1, 1);
    for (int i = 0; i < A->G; i++) ret[i] = A->games[i]->retired;
    ag_ckpt_put_u8(c, "mz.retired", ret, (size_t)A->G);
    ag_ckpt_put_int(c, "mz.retired_count", A->retired);
    free(ret);
    if (A->net) put_learning(A, c);
    if (A->o.mode == MODE_ES) mz_es_ckpt_put(A, c);
    int rc = ag_ckpt_commit(A->ctl, c, A->run, A->env_steps, err);
    ag_ckpt_free(c);
    return rc;
}

/* Keeps the curve's rows up to the checkpoint (a killed run may have written more) and reopens
 * it for appending. */
static int curve_truncate(mz_agent *A, int64_t steps, hw_err *err) {
    if (!A->o.curve) return 0;
    if (A->curve) fclose(A->curve);
    A->curve = NULL;
    FILE *f = fopen(A->o.curve, "r");
    char **keep = NULL, line[512];
    int nk = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *comma = strchr(line, ',');
        if (nk > 0 && (!comma || atoll(comma + 1) > steps)) continue;
        keep = realloc(keep, sizeof(char *) * (size_t)(nk + 1));
        keep[nk++] = strdup(line);
    }
    if (f) fclose(f);
    A->curve = fopen(A->o.curve, "w");
    if (!A->curve) {
        for (int i = 0; i < nk; i++) free(keep[i]);
        free(keep);
        return hw_fail(err, HW_E_BAD_REQUEST, "--curve: cannot write %s", A->o.curve);
    }
    if (nk == 0) fprintf(A->curve, "seconds,env_steps,return,best\n");
    for (int i = 0; i < nk; i++) {
        fputs(keep[i], A->curve);
        free(keep[i]);
    }
    free(keep);
    fflush(A->curve);
    return 0;
}

int mz_ckpt_restore(mz_agent *A, hw_err *err) {
    const ag_ckpt *c = A->ctl->resume;
    int64_t ctr[NCTR];
    double el = 0, cel = 0;
    if (ag_ckpt_get_rng(c, "mz.rng", A->rng, err) || ag_ckpt_get_i64(c, "mz.counters", ctr, NCTR, err) ||
        ag_ckpt_get_real(c, "mz.best", &A->best, err) || ag_ckpt_get_f64(c, "mz.last_loss", A->last_loss, 3, err) ||
        ag_ckpt_get_real(c, "mz.elapsed", &el, err) || ag_ckpt_get_real(c, "mz.cpu_elapsed", &cel, err))
        return -1;
    A->env_steps = ctr[0];
    A->demo_steps = ctr[1];
    A->games_done = ctr[2];
    A->restores = ctr[3];
    A->losses = ctr[4];
    A->rewound = ctr[5];
    A->train_steps = ctr[6];
    A->last_train_at = ctr[7];
    A->sims = ctr[8];
    A->next_gid = ctr[9];
    A->elite_due = ctr[10] != 0;
    A->elite_at = ctr[11];
    A->t0 = ag_now() - el;
    A->cpu0 = mz_cpu_now() - cel;
    free(A->best_actions);
    A->best_actions = NULL;
    if (ag_ckpt_len(c, "mz.best_actions") >= 0) {
        A->best_actions = calloc((size_t)A->nbuf + 1, 1);
        if (ag_ckpt_get_u8(c, "mz.best_actions", (uint8_t *)A->best_actions, (size_t)A->nbuf, err)) return -1;
    }
    free(A->elite_actions);
    A->elite_actions = NULL;
    if (ag_ckpt_len(c, "mz.elite_actions") >= 0) {
        A->elite_actions = calloc((size_t)A->nbuf + 1, 1);
        if (ag_ckpt_get_u8(c, "mz.elite_actions", (uint8_t *)A->elite_actions, (size_t)A->nbuf, err) ||
            ag_ckpt_get_real(c, "mz.elite_best", &A->elite_best, err))
            return -1;
    }
    if (mz_elite_fill(A, err)) return -1;
    json_decref(A->best_metrics);
    A->best_metrics = ag_ckpt_get_json(c, "mz.best_metrics", err);
    if (!A->best_metrics) return -1;
    if (json_is_null(A->best_metrics)) {
        json_decref(A->best_metrics);
        A->best_metrics = NULL;
    }
    if (A->net && get_learning(A, c, err)) return -1;
    if (A->o.mode == MODE_ES && mz_es_ckpt_get(A, c, err)) return -1;
    for (int i = 0; i < A->G; i++)
        if (get_game(A, A->games[i], c, err)) return -1;
    if (ag_ckpt_len(c, "mz.retired") >= 0) { /* checkpoints before --no-fit-games have none */
        uint8_t *ret = calloc(A->G > 0 ? (size_t)A->G : 1, 1);
        int rc = ag_ckpt_get_u8(c, "mz.retired", ret, (size_t)A->G, err) || ag_ckpt_get_int(c, "mz.retired_count", &A->retired, err);
        for (int i = 0; i < A->G && !rc; i++) A->games[i]->retired = ret[i] && i > 0;
        free(ret);
        if (rc) return -1;
    }
    if (curve_truncate(A, A->env_steps, err)) return -1;
    A->resumed = true;
    return 0;
}
