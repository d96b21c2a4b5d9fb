/* agent_sess.c - the agent session (agent_common.h): the same calls over libhwgym (a server)
 * or over an env created in this process ("local" endpoint). With several endpoints
 * ("tcp://a:5555,tcp://b:5555") the session is made on every server: reset/step/evaluate go to
 * one of them (ag_sess_spread_index), evaluate_batch is split into contiguous chunks, one per
 * server, sent at the same time (one thread per server) and gathered in order. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agent_common.h"
#include "hwgym_client.h"
#include "registry.h"

typedef struct sess_impl {
    /* remote */
    hwc_client *cli;
    hwc_session hs;
    bool owner; /* made (not joined): close on free */
    /* local */
    const hw_env_family *fam;
    void *env;
    int64_t *ibuf;
    double *fbuf;
    /* joined agent: positions of its choices inside the full env's flat action mask */
    int64_t *mask_map;
    int64_t mask_map_len;
    /* several endpoints: one client + session per server (sub[primary] is cli/hs above) */
    int nsub, primary;
    hwc_client **sub_cli;
    hwc_session *sub_hs;
    /* local snapshots: id -> the env's snapshot */
    struct local_snap { int64_t id; void *snap; } *snaps;
    int nsnap, capsnap;
    int64_t next_snap;
} sess_impl;

int ag_endpoint_count(const char *endpoint) {
    if (!endpoint || !*endpoint) return 0;
    int n = 1;
    for (const char *p = endpoint; *p; p++) n += *p == ',';
    return n;
}

int ag_endpoint_nth(const char *endpoint, int k, char *out, size_t cap) {
    const char *p = endpoint;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return -1;
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 0 || n >= cap) return -1;
    memcpy(out, p, n);
    out[n] = 0;
    return 0;
}

int ag_sess_spread_index(int n) {
    const char *vars[] = {"HWGYM_SPREAD_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_PROCID", NULL};
    if (n <= 1) return 0;
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            long long x = strtoll(v, NULL, 10);
            return (int)((x % n + n) % n);
        }
    }
    return 0;
}

int ag_run_spread_index(int n, int64_t seed) {
    const char *vars[] = {"HWGYM_SPREAD_INDEX", "SLURM_ARRAY_TASK_ID", NULL};
    if (n <= 1) return 0;
    long long x = (long long)(seed % n);
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            x = strtoll(v, NULL, 10) % n;
            break;
        }
    }
    return (int)((x + n) % n);
}

static bool is_local(const char *ep) { return ep && (!strcmp(ep, "local") || !strcmp(ep, "inproc")); }

static void set_info(ag_sess *s, json_t *info /* stolen */) {
    json_decref(s->info);
    s->info = info ? info : json_object();
    free(s->mask);
    s->mask = NULL;
    s->mask_len = 0;
    json_t *m = json_object_get(s->info, "action_mask");
    if (!json_is_array(m)) return;
    /* flatten (nested lists allowed) */
    size_t cap = 64, n = 0;
    uint8_t *buf = malloc(cap);
    json_t *stack[8];
    size_t pos[8];
    int sp = 0;
    stack[0] = m;
    pos[0] = 0;
    while (sp >= 0) {
        if (pos[sp] >= json_array_size(stack[sp])) {
            sp--;
            continue;
        }
        json_t *v = json_array_get(stack[sp], pos[sp]++);
        if (json_is_array(v) && sp < 7) {
            sp++;
            stack[sp] = v;
            pos[sp] = 0;
            continue;
        }
        if (n == cap) buf = realloc(buf, cap *= 2);
        buf[n++] = json_is_true(v) || (json_is_number(v) && json_number_value(v) != 0);
    }
    sess_impl *im = s->impl;
    if (im && im->mask_map) {
        uint8_t *sl = malloc((size_t)im->mask_map_len + 1);
        for (int64_t i = 0; i < im->mask_map_len; i++) sl[i] = im->mask_map[i] < (int64_t)n ? buf[im->mask_map[i]] : 1;
        free(buf);
        buf = sl;
        n = (size_t)im->mask_map_len;
    }
    s->mask = buf;
    s->mask_len = (int64_t)n;
}

static ag_sess *alloc_sess(void) {
    ag_sess *s = calloc(1, sizeof *s);
    s->impl = calloc(1, sizeof(sess_impl));
    s->reward = NAN;
    return s;
}

static int finish_spaces(ag_sess *s, const json_t *as, const json_t *os, hw_err *err) {
    if (as) {
        s->act_space = hw_space_from_json(as, err);
        if (!s->act_space) return -1;
    }
    if (os) {
        s->obs_space = hw_space_from_json(os, err);
        if (!s->obs_space) return -1;
    }
    s->act_dim = hw_space_numel(s->act_space);
    s->obs_dim = s->obs_space ? hw_space_numel(s->obs_space) : 0;
    s->obs = calloc((size_t)(s->obs_dim > 0 ? s->obs_dim : 1), sizeof(double));
    return 0;
}

static int make_spread(ag_sess *s, const char *endpoint, int n, const char *env, const json_t *config, hw_err *err) {
    sess_impl *im = s->impl;
    im->sub_cli = calloc((size_t)n, sizeof *im->sub_cli);
    im->sub_hs = calloc((size_t)n, sizeof *im->sub_hs);
    im->nsub = n;
    im->primary = ag_sess_spread_index(n);
    for (int k = 0; k < n; k++) {
        char ep[1024];
        if (ag_endpoint_nth(endpoint, k, ep, sizeof ep) || is_local(ep))
            return hw_fail(err, HW_E_BAD_CONFIG, "--endpoint: item %d of '%s' is not a server endpoint", k + 1, endpoint);
        im->sub_cli[k] = hwc_connect(NULL, ep, 120000, err);
        if (!im->sub_cli[k]) return -1;
        if (hwc_make(im->sub_cli[k], env, config, NULL, &im->sub_hs[k], err)) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            return hw_fail(err, err->code, "%s: %s", ep, m);
        }
    }
    /* the primary's client and session are the ones reset/step/evaluate use */
    im->cli = im->sub_cli[im->primary];
    im->hs = im->sub_hs[im->primary];
    return 0;
}

ag_sess *ag_sess_make(const char *endpoint, const char *env, const json_t *config, const json_t *agents,
                      int agent_timeout_ms, hw_err *err) {
    if (!env) {
        hw_fail(err, HW_E_BAD_REQUEST, "no env given (--env)");
        return NULL;
    }
    ag_sess *s = alloc_sess();
    sess_impl *im = s->impl;
    snprintf(s->env, sizeof s->env, "%s", env);
    if (is_local(endpoint)) {
        if (agents) {
            hw_fail(err, HW_E_NOT_SUPPORTED, "multi-agent sessions need a server (--endpoint tcp://... not local)");
            goto fail;
        }
        s->local = true;
        im->env = hw_env_create(env, config, &im->fam, err);
        if (!im->env) goto fail;
        s->act_space = hw_space_clone(im->fam->action_space(im->env));
        s->obs_space = hw_space_clone(im->fam->observation_space(im->env));
        if (finish_spaces(s, NULL, NULL, err)) goto fail;
        im->ibuf = calloc((size_t)s->act_dim + 1, sizeof(int64_t));
        im->fbuf = calloc((size_t)s->act_dim + 1, sizeof(double));
        snprintf(s->token, sizeof s->token, "local");
        s->info = json_object();
        return s;
    }
    int nep = agents ? 1 : ag_endpoint_count(endpoint);
    if (nep > 1) {
        if (make_spread(s, endpoint, nep, env, config, err)) goto fail;
    } else {
        char ep1[1024];
        if (ag_endpoint_nth(endpoint, 0, ep1, sizeof ep1)) {
            hw_fail(err, HW_E_BAD_CONFIG, "--endpoint: '%s' is not an endpoint", endpoint ? endpoint : "");
            goto fail;
        }
        im->cli = hwc_connect(NULL, ep1, 120000, err);
        if (!im->cli) goto fail;
        hwc_make_opts mo = {0};
        mo.agents = agents;
        mo.agent_timeout_ms = agent_timeout_ms;
        if (hwc_make(im->cli, env, config, &mo, &im->hs, err)) goto fail;
    }
    im->owner = true;
    snprintf(s->token, sizeof s->token, "%s", im->hs.token);
    s->make_reply = json_incref(im->hs.reply);
    if (finish_spaces(s, im->hs.action_space, im->hs.observation_space, err)) goto fail;
    s->info = json_object();
    return s;
fail:
    ag_sess_free(s);
    return NULL;
}

ag_sess *ag_sess_join(const char *endpoint, const char *token, const char *agent, hw_err *err) {
    if (is_local(endpoint)) {
        hw_fail(err, HW_E_NOT_SUPPORTED, "joining a multi-agent session needs a server endpoint");
        return NULL;
    }
    ag_sess *s = alloc_sess();
    sess_impl *im = s->impl;
    char ep1[1024];
    if (ag_endpoint_nth(endpoint, 0, ep1, sizeof ep1)) {
        hw_fail(err, HW_E_BAD_CONFIG, "--endpoint: '%s' is not an endpoint", endpoint ? endpoint : "");
        goto fail;
    }
    im->cli = hwc_connect(NULL, ep1, 120000, err);
    if (!im->cli) goto fail;
    if (hwc_join(im->cli, token, agent, &im->hs, err)) goto fail;
    snprintf(s->token, sizeof s->token, "%s", im->hs.token);
    snprintf(s->env, sizeof s->env, "%s", im->hs.env);
    snprintf(s->agent, sizeof s->agent, "%s", agent);
    s->make_reply = json_incref(im->hs.reply);
    if (finish_spaces(s, im->hs.action_space, im->hs.observation_space, err)) goto fail;
    json_t *dims = json_object_get(im->hs.reply, "dims");
    s->ndims = (int)json_array_size(dims);
    s->dims = calloc((size_t)s->ndims + 1, sizeof(int64_t));
    for (int i = 0; i < s->ndims; i++) s->dims[i] = json_integer_value(json_array_get(dims, (size_t)i));
    /* map the full env's flat action mask onto this agent's dims */
    json_t *fas = NULL, *fos = NULL;
    if (s->ndims > 0 && hw_space_is_integer(s->act_space) &&
        hwc_spaces(im->cli, s->token, NULL, NULL, &fas, &fos, err) == 0) {
        hw_space *full = hw_space_from_json(fas, err);
        if (full) {
            int64_t fn = hw_space_numel(full), total = 0;
            int64_t *start = calloc((size_t)fn + 1, sizeof(int64_t));
            for (int64_t i = 0; i < fn; i++) {
                start[i] = total;
                total += hw_space_choices(full, i);
            }
            int64_t len = 0;
            for (int i = 0; i < s->ndims; i++)
                if (s->dims[i] >= 0 && s->dims[i] < fn) len += hw_space_choices(full, s->dims[i]);
            im->mask_map = calloc((size_t)len + 1, sizeof(int64_t));
            for (int i = 0; i < s->ndims; i++) {
                if (s->dims[i] < 0 || s->dims[i] >= fn) continue;
                for (int64_t j = 0; j < hw_space_choices(full, s->dims[i]); j++)
                    im->mask_map[im->mask_map_len++] = start[s->dims[i]] + j;
            }
            free(start);
            hw_space_free(full);
        }
    }
    json_decref(fas);
    json_decref(fos);
    if (err) hw_err_clear(err);
    s->info = json_object();
    return s;
fail:
    ag_sess_free(s);
    return NULL;
}

void ag_sess_free(ag_sess *s) {
    if (!s) return;
    sess_impl *im = s->impl;
    if (im) {
        if (im->nsub > 0) {
            for (int k = 0; k < im->nsub; k++) {
                if (!im->sub_cli[k]) continue;
                hw_err e;
                if (im->sub_hs[k].token[0]) hwc_close(im->sub_cli[k], &im->sub_hs[k], &e);
                hwc_session_free(&im->sub_hs[k]);
                hwc_disconnect(im->sub_cli[k]);
            }
            free(im->sub_cli);
            free(im->sub_hs);
            im->cli = NULL;
        }
        if (im->cli) {
            if (im->owner) {
                hw_err e;
                hwc_close(im->cli, &im->hs, &e);
            }
            hwc_session_free(&im->hs);
            hwc_disconnect(im->cli);
        }
        for (int i = 0; i < im->nsnap; i++) im->fam->snapshot_free(im->snaps[i].snap);
        free(im->snaps);
        if (im->env) im->fam->destroy(im->env);
        free(im->ibuf);
        free(im->fbuf);
        free(im->mask_map);
        free(im);
    }
    hw_space_free(s->act_space);
    hw_space_free(s->obs_space);
    free(s->obs);
    free(s->mask);
    free(s->dims);
    json_decref(s->info);
    json_decref(s->make_reply);
    free(s);
}

int ag_sess_choices(const ag_sess *s, int64_t *out) {
    if (!hw_space_is_integer(s->act_space)) return 0;
    for (int64_t i = 0; i < s->act_dim; i++) out[i] = hw_space_choices(s->act_space, i);
    return 1;
}

static void flatten_obs(ag_sess *s, const hw_obs *obs) {
    int64_t k = 0;
    for (int f = 0; f < obs->n; f++) {
        const hw_array *a = &obs->arr[f];
        int64_t n = hw_array_numel(a);
        if (n > s->obs_dim - k) n = s->obs_dim - k;
        if (a->dtype == HW_DT_UINT8) { /* fast paths: large maps and images, float vectors */
            const uint8_t *u = a->data;
            for (int64_t i = 0; i < n; i++) s->obs[k++] = u[i];
        } else if (a->dtype == HW_DT_FLOAT32) {
            const float *u = a->data;
            for (int64_t i = 0; i < n; i++) s->obs[k++] = u[i];
        } else {
            for (int64_t i = 0; i < n; i++) s->obs[k++] = hw_array_get_f64(a, i);
        }
    }
}

static void take_result(ag_sess *s, hwc_result *r) {
    size_t n = r->obs_len < (size_t)s->obs_dim ? r->obs_len : (size_t)s->obs_dim;
    memcpy(s->obs, r->obs, n * sizeof(double));
    s->reward = r->num > 0 && r->reward ? r->reward[0] : NAN;
    s->terminated = r->num > 0 && r->terminated ? r->terminated[0] : false;
    s->truncated = r->num > 0 && r->truncated ? r->truncated[0] : false;
    json_t *info = json_is_object(r->info) ? json_incref(r->info) : NULL;
    set_info(s, info);
    hwc_result_free(r);
}

int ag_sess_reset(ag_sess *s, const uint64_t *seed, hw_err *err) {
    sess_impl *im = s->impl;
    if (s->local) {
        hw_obs obs = {0};
        json_t *info = json_object();
        if (im->fam->reset(im->env, seed, NULL, &obs, info, err)) {
            json_decref(info);
            return -1;
        }
        flatten_obs(s, &obs);
        s->reward = NAN;
        s->terminated = s->truncated = false;
        set_info(s, info);
        return 0;
    }
    hwc_result r = {0};
    int64_t sd = seed ? (int64_t)(*seed & 0x7fffffffffffffffULL) : 0;
    if (hwc_reset(im->cli, &im->hs, seed ? &sd : NULL, NULL, &r, err)) return -1;
    take_result(s, &r);
    s->reward = NAN;
    return 0;
}

static int local_step(ag_sess *s, const hw_array *a, hw_err *err) {
    sess_impl *im = s->impl;
    hw_act act;
    if (hw_space_check_action(s->act_space, a, im->ibuf, im->fbuf, &act, err)) return -1;
    hw_step_out out = {0};
    json_t *info = json_object();
    if (im->fam->step(im->env, &act, &out, info, err)) {
        json_decref(info);
        return -1;
    }
    flatten_obs(s, &out.obs);
    s->reward = out.reward;
    s->terminated = out.terminated;
    s->truncated = out.truncated;
    set_info(s, info);
    return 0;
}

int ag_sess_step_i64(ag_sess *s, const int64_t *action, hw_err *err) {
    sess_impl *im = s->impl;
    if (s->local) {
        hw_array a = {HW_DT_INT64, 1, {s->act_dim}, (void *)action};
        return local_step(s, &a, err);
    }
    hwc_result r = {0};
    if (hwc_step_i64(im->cli, &im->hs, action, (size_t)s->act_dim, &r, err)) return -1;
    take_result(s, &r);
    return 0;
}

int ag_sess_step_f64(ag_sess *s, const double *action, hw_err *err) {
    sess_impl *im = s->impl;
    if (s->local) {
        hw_array a = {HW_DT_FLOAT64, 1, {s->act_dim}, (void *)action};
        return local_step(s, &a, err);
    }
    hwc_result r = {0};
    if (hwc_step_f64(im->cli, &im->hs, action, (size_t)s->act_dim, &r, err)) return -1;
    take_result(s, &r);
    return 0;
}

int ag_sess_evaluate(ag_sess *s, const json_t *point, double *reward, json_t **metrics, hw_err *err) {
    sess_impl *im = s->impl;
    if (metrics) *metrics = NULL;
    if (s->local) {
        if (!im->fam->evaluate) return hw_fail(err, HW_E_NOT_SUPPORTED, "%s has no evaluate()", s->env);
        json_t *m = json_object();
        if (im->fam->evaluate(im->env, point, reward, m, err)) {
            json_decref(m);
            return -1;
        }
        if (metrics) *metrics = m;
        else json_decref(m);
        return 0;
    }
    return hwc_evaluate(im->cli, s->token, NULL, NULL, point, reward, metrics, err);
}

int ag_sess_snapshot(ag_sess *s, int64_t *id, hw_err *err) {
    sess_impl *im = s->impl;
    if (!s->local) return hwc_snapshot(im->cli, &im->hs, id, err);
    if (!im->fam->snapshot) return hw_fail(err, HW_E_NOT_SUPPORTED, "%s has no snapshot()", s->env);
    void *sn = im->fam->snapshot(im->env, err);
    if (!sn) return -1;
    if (im->nsnap == im->capsnap) {
        im->capsnap = im->capsnap ? 2 * im->capsnap : 8;
        im->snaps = realloc(im->snaps, sizeof *im->snaps * (size_t)im->capsnap);
        if (!im->snaps) abort();
    }
    im->snaps[im->nsnap++] = (struct local_snap){++im->next_snap, sn};
    *id = im->next_snap;
    return 0;
}

static int local_snap_index(const sess_impl *im, int64_t id) {
    for (int i = 0; i < im->nsnap; i++)
        if (im->snaps[i].id == id) return i;
    return -1;
}

int ag_sess_restore(ag_sess *s, int64_t id, hw_err *err) {
    sess_impl *im = s->impl;
    if (!s->local) return hwc_restore(im->cli, &im->hs, id, err);
    int i = local_snap_index(im, id);
    if (i < 0) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    return im->fam->restore(im->env, im->snaps[i].snap, err);
}

int ag_sess_drop_snapshot(ag_sess *s, int64_t id, hw_err *err) {
    sess_impl *im = s->impl;
    if (!s->local) return hwc_drop_snapshot(im->cli, &im->hs, id, err);
    int i = local_snap_index(im, id);
    if (i < 0) return hw_fail(err, HW_E_BAD_REQUEST, "snapshot %lld: unknown", (long long)id);
    im->fam->snapshot_free(im->snaps[i].snap);
    im->snaps[i] = im->snaps[--im->nsnap];
    return 0;
}

typedef struct chunk {
    hwc_client *cli;
    const char *token;
    json_t *points;
    hwc_batch b;
    hw_err err;
    int rc;
} chunk;

static void *chunk_run(void *arg) {
    chunk *c = arg;
    c->rc = hwc_evaluate_batch(c->cli, c->token, NULL, NULL, c->points, &c->b, &c->err);
    return NULL;
}

/* Contiguous chunks, one per server (sizes differ by at most one), evaluated concurrently. */
static int batch_spread(ag_sess *s, const json_t *points, double *rewards, json_t **metrics, hw_err *err) {
    sess_impl *im = s->impl;
    size_t n = json_array_size(points);
    int k = im->nsub < (int)n ? im->nsub : (int)n;
    chunk *cs = calloc((size_t)k, sizeof *cs);
    pthread_t *th = calloc((size_t)k, sizeof *th);
    size_t at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = n / (size_t)k + ((size_t)i < n % (size_t)k ? 1 : 0);
        int srv = (im->primary + i) % im->nsub;
        cs[i].cli = im->sub_cli[srv];
        cs[i].token = im->sub_hs[srv].token;
        cs[i].points = json_array();
        for (size_t j = 0; j < len; j++) json_array_append(cs[i].points, json_array_get(points, at + j));
        at += len;
        if (pthread_create(&th[i], NULL, chunk_run, &cs[i])) chunk_run(&cs[i]), th[i] = 0;
    }
    int rc = 0;
    json_t *list = metrics ? json_array() : NULL;
    at = 0;
    for (int i = 0; i < k; i++) {
        if (th[i]) pthread_join(th[i], NULL);
        size_t len = json_array_size(cs[i].points);
        if (cs[i].rc && !rc) {
            *err = cs[i].err;
            rc = -1;
        }
        for (size_t j = 0; j < len; j++) {
            rewards[at + j] = !cs[i].rc && j < cs[i].b.n ? cs[i].b.reward[j] : NAN;
            if (list) {
                json_t *m = cs[i].rc ? NULL : json_array_get(cs[i].b.metrics, j);
                json_array_append(list, m ? m : json_null());
            }
        }
        at += len;
        hwc_batch_free(&cs[i].b);
        json_decref(cs[i].points);
    }
    free(cs);
    free(th);
    if (rc) {
        json_decref(list);
        return -1;
    }
    if (metrics) *metrics = list;
    return 0;
}

int ag_sess_evaluate_batch(ag_sess *s, const json_t *points, double *rewards, json_t **metrics, hw_err *err) {
    sess_impl *im = s->impl;
    size_t n = json_array_size(points);
    if (metrics) *metrics = NULL;
    if (s->local) {
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++) {
            double r = NAN;
            json_t *m = NULL;
            hw_err e = {0};
            if (ag_sess_evaluate(s, json_array_get(points, i), &r, &m, &e)) {
                rewards[i] = NAN;
                json_array_append_new(list, json_null());
            } else {
                rewards[i] = r;
                json_array_append_new(list, m);
            }
        }
        if (metrics) *metrics = list;
        else json_decref(list);
        return 0;
    }
    if (im->nsub > 1 && n > 1) return batch_spread(s, points, rewards, metrics, err);
    hwc_batch b = {0};
    if (hwc_evaluate_batch(im->cli, s->token, NULL, NULL, points, &b, err)) return -1;
    for (size_t i = 0; i < n; i++) rewards[i] = i < b.n ? b.reward[i] : NAN;
    if (metrics) *metrics = b.metrics ? json_incref(b.metrics) : json_array();
    hwc_batch_free(&b);
    return 0;
}

int ag_sess_evaluate_lean(ag_sess *s, int n, const double *x, double *rewards, json_t **metrics, hw_err *err) {
    sess_impl *im = s->impl;
    const int64_t d = s->act_dim;
    /* in process, or several servers (the JSON batch splits the points across them) */
    if (s->local || (im->nsub > 1 && n > 1)) {
        json_t *pts = json_array();
        bool integer = hw_space_is_integer(s->act_space);
        for (int i = 0; i < n; i++) {
            json_t *p = json_array();
            for (int64_t j = 0; j < d; j++) {
                double v = x[(size_t)i * (size_t)d + (size_t)j];
                json_array_append_new(p, integer ? json_integer((json_int_t)llround(v)) : json_real(v));
            }
            json_array_append_new(pts, p);
        }
        json_t *ml = NULL;
        int rc = ag_sess_evaluate_batch(s, pts, rewards, metrics ? &ml : NULL, err);
        json_decref(pts);
        for (int i = 0; metrics && i < n; i++) {
            json_t *m = rc ? NULL : json_array_get(ml, (size_t)i);
            metrics[i] = json_is_object(m) ? json_incref(m) : NULL;
            if (metrics[i]) json_object_set_new(metrics[i], "cache_hit", json_false());
        }
        json_decref(ml);
        return rc;
    }
    bool integer = hw_space_is_integer(s->act_space);
    void *buf = malloc((size_t)n * (size_t)d * 8 + 8);
    if (!buf) abort();
    for (size_t k = 0; k < (size_t)n * (size_t)d; k++) {
        if (integer) ((int64_t *)buf)[k] = (int64_t)llround(x[k]);
        else ((double *)buf)[k] = x[k];
    }
    hw_array a = {integer ? HW_DT_INT64 : HW_DT_FLOAT64, 2, {n, d}, buf};
    hwc_lean b;
    int rc = hwc_evaluate_lean(im->cli, s->token, NULL, NULL, &a, NULL, -1, &b, err);
    free(buf);
    if (rc) return -1;
    for (int i = 0; i < n; i++) {
        rewards[i] = (size_t)i < b.n ? b.reward[i] : NAN;
        if (!metrics) continue;
        if ((size_t)i >= b.n || b.error[i]) {
            metrics[i] = NULL;
            continue;
        }
        json_t *m = json_object();
        for (int j = 0; j < b.nmetrics; j++) {
            double v = b.vals[(size_t)j * b.n + (size_t)i];
            if (isnan(v)) continue;
            if (v == floor(v) && fabs(v) < 9e15) json_object_set_new(m, b.names[j], json_integer((json_int_t)v));
            else json_object_set_new(m, b.names[j], json_real(v));
        }
        json_object_set_new(m, "feasible", json_boolean(b.feasible[i]));
        json_object_set_new(m, "cache_hit", json_boolean(b.cache_hit[i]));
        metrics[i] = m;
    }
    hwc_lean_free(&b);
    return 0;
}
