/* resume.c - checkpoints and resume of hwgym-search (search.h, checkpoint.h).
 * Every algorithm is a deterministic function of its seed and of the rewards it was given, so
 * its whole state (RNG, population, pheromones, GP data, ES mean, counters) is a function of the
 * seed and the reward sequence. A checkpoint therefore stores the rewards of every sample so far
 * (NaN kept), a hash of the points proposed, and the run's counters and best; --resume re-runs
 * the algorithm from its seed, answering the first S objective calls from the checkpoint
 * (no server calls, no trials logged), checks that it proposed exactly the logged points (the
 * hash), and goes on live from sample S. Checkpoints are written before an objective call, when
 * no evaluation is in flight. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "search.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int ck_eval(void *ctx, int n, const double *x, double *rewards, json_t **metrics, hw_err *err) {
    hs_ckpt_obj *o = ctx;
    const size_t d = (size_t)o->space->dim;
    if (o->done < o->replay_n) {
        if (o->done + n > o->replay_n)
            return hw_fail(err, HW_E_BAD_STATE, "resume: a batch of %d points at sample %lld crosses the checkpoint at %lld "
                                                "(was --batch changed?)",
                           n, (long long)o->done, (long long)o->replay_n);
        for (int i = 0; i < n; i++) {
            rewards[i] = o->rewards[o->done + i];
            metrics[i] = NULL;
        }
        o->hash = fnv(o->hash, x, sizeof(double) * d * (size_t)n);
        o->done += n;
        if (o->done == o->replay_n && o->hash != o->replay_hash)
            return hw_fail(err, HW_E_BAD_STATE, "resume: replaying the checkpoint proposed other points than the logged run "
                                                "(another hwgym-search version?)");
        return 0;
    }
    if (ag_ckpt_due(o->ctl, o->done)) {
        ag_ckpt *c = ag_ckpt_new();
        ag_ckpt_put_f64(c, "search.rewards", o->rewards, (size_t)o->done);
        ag_ckpt_put_i64(c, "search.hash", (const int64_t *)&o->hash, 1);
        int rc = ag_ckpt_commit(o->ctl, c, o->run, o->done, err);
        ag_ckpt_free(c);
        if (rc) return -1;
    }
    if (o->inner.eval(o->inner.ctx, n, x, rewards, metrics, err)) return -1;
    if (o->done + n > o->cap) {
        while (o->done + n > o->cap) o->cap = o->cap ? 2 * o->cap : 1024;
        o->rewards = realloc(o->rewards, sizeof(double) * (size_t)o->cap);
        if (!o->rewards) abort();
    }
    memcpy(o->rewards + o->done, rewards, sizeof(double) * (size_t)n);
    o->hash = fnv(o->hash, x, sizeof(double) * d * (size_t)n);
    o->done += n;
    return 0;
}

int hs_ckpt_obj_init(hs_ckpt_obj *o, hs_objective inner, const hs_space *space, ag_ckpt_ctl *ctl, ag_run *run,
                     hw_err *err) {
    memset(o, 0, sizeof *o);
    o->inner = inner;
    o->space = space;
    o->ctl = ctl;
    o->run = run;
    o->hash = 1469598103934665603ULL;
    if (!ctl->resume) return 0;
    int64_t n = ag_ckpt_len(ctl->resume, "search.rewards");
    if (n < 0) return hw_fail(err, HW_E_BAD_CONFIG, "--resume: %s holds no hwgym-search state", ctl->path);
    o->cap = n > 0 ? n : 1;
    o->rewards = malloc(sizeof(double) * (size_t)o->cap);
    if (!o->rewards) abort();
    if (ag_ckpt_get_f64(ctl->resume, "search.rewards", o->rewards, (size_t)n, err) ||
        ag_ckpt_get_i64(ctl->resume, "search.hash", (int64_t *)&o->replay_hash, 1, err))
        return -1;
    o->replay_n = n;
    return 0;
}

void hs_ckpt_obj_free(hs_ckpt_obj *o) {
    free(o->rewards);
    o->rewards = NULL;
}

hs_objective hs_ckpt_objective(hs_ckpt_obj *o) { return (hs_objective){o, ck_eval}; }
