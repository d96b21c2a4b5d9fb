/* mz_env.c - see mz_env.h. */
#include "mz_env.h"

#include <stdlib.h>
#include <string.h>

#include "hw_space.h"
#include "hwgym_client.h"
#include "registry.h"

typedef struct snap_rec {
    int64_t id;
    void *local;          /* env snapshot (local) */
    mz_env_state st;
} snap_rec;

typedef struct env_impl {
    hwc_client *cli;
    hwc_session hs;
    const hw_env_family *fam;
    void *env;
    snap_rec *snaps;
    int nsnap, capsnap;
    int64_t next_id;
} env_impl;

static bool is_local(const char *ep) { return ep && (!strcmp(ep, "local") || !strcmp(ep, "inproc")); }

static void state_copy(mz_env_state *dst, const mz_env_state *src, int dim) {
    double *o = dst->obs;
    *dst = *src;
    dst->obs = o;
    memcpy(dst->obs, src->obs, sizeof(double) * (size_t)dim);
}

mz_env *mz_env_open(const char *endpoint, const json_t *config, hw_err *err) {
    mz_env *e = calloc(1, sizeof *e);
    env_impl *im = calloc(1, sizeof *im);
    e->impl = im;
    im->next_id = 1;
    hw_space *os = NULL;
    if (is_local(endpoint)) {
        e->local = true;
        im->env = hw_env_create("mmap-v0", config, &im->fam, err);
        if (!im->env) goto fail;
        os = hw_space_clone(im->fam->observation_space(im->env));
    } else {
        im->cli = hwc_connect(NULL, endpoint, 120000, err);
        if (!im->cli) goto fail;
        if (hwc_make(im->cli, "mmap-v0", config, NULL, &im->hs, err)) goto fail;
        os = hw_space_from_json(im->hs.observation_space, err);
        if (!os) goto fail;
    }
    if (mz_layout_from_space(os, &e->L, err)) goto fail;
    hw_space_free(os);
    os = NULL;
    e->st.obs = calloc((size_t)e->L.obs_dim + 1, sizeof(double));
    e->info = json_object();
    return e;
fail:
    hw_space_free(os);
    mz_env_free(e);
    return NULL;
}

void mz_env_free(mz_env *e) {
    if (!e) return;
    env_impl *im = e->impl;
    for (int i = 0; i < im->nsnap; i++) {
        if (im->snaps[i].local) im->fam->snapshot_free(im->snaps[i].local);
        free(im->snaps[i].st.obs);
    }
    free(im->snaps);
    if (im->cli) {
        hw_err x;
        if (im->hs.token[0]) hwc_close(im->cli, &im->hs, &x);
        hwc_session_free(&im->hs);
        hwc_disconnect(im->cli);
    }
    if (im->env) im->fam->destroy(im->env);
    free(im);
    free(e->st.obs);
    json_decref(e->info);
    free(e);
}

static void parse_info(mz_env *e) {
    json_t *m = json_object_get(e->info, "action_mask");
    e->st.mask = 0;
    for (int a = 0; a < MZ_NACT; a++) {
        json_t *v = json_array_get(m, (size_t)a);
        if (json_is_true(v) || (json_is_number(v) && json_number_value(v) != 0)) e->st.mask |= (uint8_t)(1u << a);
    }
    e->st.backup_safe = json_is_true(json_object_get(e->info, "backup_safe"));
    e->st.buffer = (int)json_integer_value(json_object_get(e->info, "buffer"));
    e->st.nbuf = (int)json_integer_value(json_object_get(e->info, "num_buffers"));
    e->lost = json_is_true(json_object_get(e->info, "lost"));
    const double *G = e->st.obs + e->L.off_global;
    e->st.ret = G[4];
    e->st.alias_cur = (int)e->st.obs[e->L.off_buffers + 5];
}

static void take(mz_env *e, hwc_result *r) {
    size_t n = r->obs_len < (size_t)e->L.obs_dim ? r->obs_len : (size_t)e->L.obs_dim;
    memcpy(e->st.obs, r->obs, n * sizeof(double));
    e->reward = r->num > 0 && r->reward ? r->reward[0] : 0;
    e->terminated = r->num > 0 && r->terminated ? r->terminated[0] : false;
    json_decref(e->info);
    e->info = json_is_object(r->info) ? json_incref(r->info) : json_object();
    hwc_result_free(r);
    parse_info(e);
}

static void take_local(mz_env *e, const hw_obs *obs, json_t *info) {
    int64_t k = 0;
    for (int f = 0; f < obs->n; f++) {
        const hw_array *a = &obs->arr[f];
        int64_t n = hw_array_numel(a);
        if (n > e->L.obs_dim - k) n = e->L.obs_dim - k;
        if (a->dtype == HW_DT_UINT8) { /* fast paths for the map (16k cells) and the vectors */
            const uint8_t *u = a->data;
            for (int64_t i = 0; i < n; i++) e->st.obs[k++] = u[i];
        } else if (a->dtype == HW_DT_FLOAT32) {
            const float *u = a->data;
            for (int64_t i = 0; i < n; i++) e->st.obs[k++] = u[i];
        } else {
            for (int64_t i = 0; i < n; i++) e->st.obs[k++] = hw_array_get_f64(a, i);
        }
    }
    json_decref(e->info);
    e->info = info;
    parse_info(e);
}

int mz_env_reset(mz_env *e, hw_err *err) {
    env_impl *im = e->impl;
    e->terminated = e->lost = false;
    e->reward = 0;
    if (e->local) {
        hw_obs obs = {0};
        json_t *info = json_object();
        uint64_t seed = 0;
        if (im->fam->reset(im->env, &seed, NULL, &obs, info, err)) {
            json_decref(info);
            return -1;
        }
        take_local(e, &obs, info);
        return 0;
    }
    hwc_result r = {0};
    int64_t seed = 0;
    if (hwc_reset(im->cli, &im->hs, &seed, NULL, &r, err)) return -1;
    take(e, &r);
    e->reward = 0;
    return 0;
}

int mz_env_step(mz_env *e, int action, hw_err *err) {
    env_impl *im = e->impl;
    int64_t a = action;
    e->steps++;
    if (e->local) {
        hw_array arr = {HW_DT_INT64, 0, {0}, &a};
        hw_act act = {0};
        int64_t ib[2];
        double fb[2];
        const hw_space *as = im->fam->action_space(im->env);
        if (hw_space_check_action(as, &arr, ib, fb, &act, err)) return -1;
        hw_step_out out = {0};
        json_t *info = json_object();
        if (im->fam->step(im->env, &act, &out, info, err)) {
            json_decref(info);
            return -1;
        }
        e->reward = out.reward;
        e->terminated = out.terminated;
        take_local(e, &out.obs, info);
        return 0;
    }
    hwc_result r = {0};
    if (hwc_step_i64(im->cli, &im->hs, &a, 1, &r, err)) return -1;
    take(e, &r);
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
    }
    snap_rec *s = &im->snaps[im->nsnap];
    memset(s, 0, sizeof *s);
    if (e->local) {
        s->local = im->fam->snapshot(im->env, err);
        if (!s->local) return -1;
        s->id = im->next_id++;
    } else {
        if (hwc_snapshot(im->cli, &im->hs, &s->id, err)) return -1;
    }
    s->st.obs = malloc(sizeof(double) * (size_t)(e->L.obs_dim + 1));
    state_copy(&s->st, &e->st, e->L.obs_dim);
    im->nsnap++;
    *id = s->id;
    return 0;
}

int mz_env_restore(mz_env *e, int64_t id, hw_err *err) {
    env_impl *im = e->impl;
    snap_rec *s = find(im, id);
    if (!s) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    if (e->local) {
        if (im->fam->restore(im->env, s->local, err)) return -1;
    } else if (hwc_restore(im->cli, &im->hs, id, err)) {
        return -1;
    }
    state_copy(&e->st, &s->st, e->L.obs_dim);
    e->terminated = e->lost = false;
    e->reward = 0;
    return 0;
}

int mz_env_drop(mz_env *e, int64_t id, hw_err *err) {
    env_impl *im = e->impl;
    snap_rec *s = find(im, id);
    if (!s) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    int rc = 0;
    if (e->local) im->fam->snapshot_free(s->local);
    else rc = hwc_drop_snapshot(im->cli, &im->hs, id, err);
    free(s->st.obs);
    *s = im->snaps[--im->nsnap];
    return rc;
}

int mz_env_evaluate(mz_env *e, const json_t *point, double *reward, json_t **metrics, hw_err *err) {
    env_impl *im = e->impl;
    if (metrics) *metrics = NULL;
    if (e->local) {
        json_t *m = json_object();
        if (im->fam->evaluate(im->env, point, reward, m, err)) {
            json_decref(m);
            return -1;
        }
        if (metrics) *metrics = m;
        else json_decref(m);
        return 0;
    }
    return hwc_evaluate(im->cli, im->hs.token, NULL, NULL, point, reward, metrics, err);
}
