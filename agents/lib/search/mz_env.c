/* mz_env.c - see mz_env.h. The session (reset, step, snapshot/restore/drop, evaluate, over a
 * server or in this process) is ag_sess's; this layer keeps what Drop-backup needs on top of it:
 * the parsed state and an observation saved with every snapshot. */
#include "mz_env.h"

#include <stdlib.h>
#include <string.h>

#include "agent_common.h"

typedef struct snap_rec {
    int64_t id;
    mz_env_state st;
} snap_rec;

typedef struct env_impl {
    ag_sess *s;
    snap_rec *snaps;
    int nsnap, capsnap;
} env_impl;

static void state_copy(mz_env_state *dst, const mz_env_state *src, int dim) {
    double *o = dst->obs;
    *dst = *src;
    dst->obs = o;
    memcpy(dst->obs, src->obs, sizeof(double) * (size_t)dim);
}

mz_env *mz_env_open(const char *endpoint, const json_t *config, hw_err *err) {
    mz_env *e = calloc(1, sizeof *e);
    env_impl *im = calloc(1, sizeof *im);
    if (!e || !im) abort();
    e->impl = im;
    im->s = ag_sess_make(endpoint, "mmap-v0", config, NULL, 0, err);
    if (!im->s) goto fail;
    e->local = im->s->local;
    if (mz_layout_from_space(im->s->obs_space, &e->L, err)) goto fail;
    e->st.obs = im->s->obs; /* the session's flattened observation (obs_dim values) */
    e->info = im->s->info;
    return e;
fail:
    mz_env_free(e);
    return NULL;
}

void mz_env_free(mz_env *e) {
    if (!e) return;
    env_impl *im = e->impl;
    for (int i = 0; i < im->nsnap; i++) free(im->snaps[i].st.obs);
    free(im->snaps);
    ag_sess_free(im->s);
    free(im);
    free(e);
}

/* After reset / step: the state's fields from the session's info and observation. */
static void take(mz_env *e, bool step) {
    ag_sess *s = ((env_impl *)e->impl)->s;
    e->info = s->info;
    e->reward = step ? s->reward : 0;
    e->terminated = step && s->terminated;
    e->st.mask = 0;
    for (int a = 0; a < MZ_NACT && a < s->mask_len; a++)
        if (s->mask[a]) e->st.mask |= (uint8_t)(1u << a);
    e->st.backup_safe = json_is_true(json_object_get(e->info, "backup_safe"));
    e->st.buffer = (int)json_integer_value(json_object_get(e->info, "buffer"));
    e->st.nbuf = (int)json_integer_value(json_object_get(e->info, "num_buffers"));
    e->lost = json_is_true(json_object_get(e->info, "lost"));
    e->st.ret = e->st.obs[e->L.off_global + 4];
    e->st.alias_cur = (int)e->st.obs[e->L.off_buffers + 5];
}

int mz_env_reset(mz_env *e, hw_err *err) {
    uint64_t seed = 0;
    if (ag_sess_reset(((env_impl *)e->impl)->s, &seed, err)) return -1;
    take(e, false);
    return 0;
}

int mz_env_step(mz_env *e, int action, hw_err *err) {
    int64_t a = action;
    e->steps++;
    if (ag_sess_step_i64(((env_impl *)e->impl)->s, &a, err)) return -1;
    take(e, true);
    return 0;
}

static snap_rec *find(env_impl *im, int64_t id) {
    for (int i = 0; i < im->nsnap; i++)
        if (im->snaps[i].id == id) return &im->snaps[i];
    return NULL;
}

int mz_env_snapshot(mz_env *e, int64_t *id, hw_err *err) {
    env_impl *im = e->impl;
    if (im->nsnap == im->capsnap) {
        im->capsnap = im->capsnap ? 2 * im->capsnap : 4;
        im->snaps = realloc(im->snaps, sizeof(snap_rec) * (size_t)im->capsnap);
        if (!im->snaps) abort();
    }
    snap_rec *s = &im->snaps[im->nsnap];
    memset(s, 0, sizeof *s);
    if (ag_sess_snapshot(im->s, &s->id, err)) return -1;
    s->st.obs = malloc(sizeof(double) * (size_t)(e->L.obs_dim + 1));
    if (!s->st.obs) abort();
    state_copy(&s->st, &e->st, e->L.obs_dim);
    im->nsnap++;
    *id = s->id;
    return 0;
}

int mz_env_restore(mz_env *e, int64_t id, hw_err *err) {
    env_impl *im = e->impl;
    snap_rec *s = find(im, id);
    if (!s) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    if (ag_sess_restore(im->s, id, err)) return -1;
    state_copy(&e->st, &s->st, e->L.obs_dim); /* e->st.obs is the session's: it now shows the state */
    e->terminated = e->lost = false;
    e->reward = 0;
    return 0;
}

int mz_env_drop(mz_env *e, int64_t id, hw_err *err) {
    env_impl *im = e->impl;
    snap_rec *s = find(im, id);
    if (!s) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    int rc = ag_sess_drop_snapshot(im->s, id, err);
    free(s->st.obs);
    *s = im->snaps[--im->nsnap];
    return rc;
}

int mz_env_evaluate(mz_env *e, const json_t *point, double *reward, json_t **metrics, hw_err *err) {
    return ag_sess_evaluate(((env_impl *)e->impl)->s, point, reward, metrics, err);
}
