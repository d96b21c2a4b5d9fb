/* worker.c - see worker.h */
#include "worker.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "common/env_limits.h"
#include "policy.h"
#include "registry.h"
#include "reply.h"

double hw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

/* ---------------------------------------------------------------- replies */

static void send_back(worker *w, task *t) {
    while (zmq_send(w->push, &t, sizeof t, 0) < 0 && errno == EINTR) {
    }
}

static void pack_space(msgpack_packer *pk, const hw_space *s) {
    json_t *j = hw_space_to_json(s);
    hw_pack_json(pk, j);
    json_decref(j);
}

static void pack_info(msgpack_packer *pk, json_t *info) {
    if (info) hw_pack_json(pk, info);
    else msgpack_pack_map(pk, 0);
}

/* ---------------------------------------------------------------- env cache */

static void *cached_env(worker *w, const char *env_id, const json_t *config, const hw_env_family **fam, hw_err *err) {
    char *cfg = config ? json_dumps(config, JSON_SORT_KEYS | JSON_COMPACT) : strdup("{}");
    size_t kl = strlen(env_id) + strlen(cfg) + 2;
    char *key = xcalloc(kl, 1);
    snprintf(key, kl, "%s\n%s", env_id, cfg);
    free(cfg);
    int victim = 0;
    for (int i = 0; i < WORKER_CACHE; i++) {
        if (w->cache[i].key && strcmp(w->cache[i].key, key) == 0) {
            w->cache[i].used = ++w->tick;
            free(key);
            *fam = w->cache[i].fam;
            return w->cache[i].env;
        }
        if (w->cache[i].used < w->cache[victim].used) victim = i;
    }
    hw_env_ctx ctx = hw_policy_ctx(w->opts, &w->files, env_id);
    void *env = hw_env_create_ctx(env_id, config, &ctx, fam, err);
    if (!env) {
        free(key);
        return NULL;
    }
    if (w->cache[victim].env) w->cache[victim].fam->destroy(w->cache[victim].env);
    free(w->cache[victim].key);
    w->cache[victim].key = key;
    w->cache[victim].fam = *fam;
    w->cache[victim].env = env;
    w->cache[victim].used = ++w->tick;
    return env;
}

/* ---------------------------------------------------------------- session lifetime */

static void snap_free(session *s, snap_rec *r) {
    for (int i = 0; i < s->num_envs; i++)
        if (r->snaps[i]) s->fam->snapshot_free(r->snaps[i]);
    free(r->snaps);
    free(r->started);
    free(r->needs_reset);
}

void session_destroy_envs(session *s) {
    if (s->snap_ctr) atomic_fetch_sub(s->snap_ctr, s->nsnaps);
    for (int k = 0; k < s->nsnaps; k++) snap_free(s, &s->snaps[k]);
    free(s->snaps);
    s->snaps = NULL;
    s->nsnaps = 0;
    if (s->envs) {
        for (int i = 0; i < s->num_envs; i++)
            if (s->envs[i]) s->fam->destroy(s->envs[i]);
    }
    free(s->envs);
    s->envs = NULL;
    free(s->started);
    free(s->needs_reset);
    free(s->ibuf);
    free(s->fbuf);
    for (int f = 0; f < HW_OBS_MAX_FIELDS; f++) free(s->stack[f]);
    free(s->rewards);
    free(s->terms);
    free(s->truncs);
    if (s->infos) {
        for (int i = 0; i < s->num_envs; i++) json_decref(s->infos[i]);
        free(s->infos);
    }
    for (int a = 0; a < s->nagents; a++) {
        free(s->agents[a].dims);
        hw_space_free(s->agents[a].space);
    }
    free(s->agents);
    s->agents = NULL;
    s->nagents = 0;
    s->dead = true;
}

static void barrier_unlink(worker *w, session *s) {
    for (session **p = &w->barriers; *p; p = &(*p)->barrier_next)
        if (*p == s) {
            *p = s->barrier_next;
            break;
        }
    s->barrier_next = NULL;
}

/* Answers every held part of the open barrier with the error and clears the barrier. */
static void barrier_fail(worker *w, session *s, const hw_err *e) {
    for (int a = 0; a < s->nagents; a++) {
        task *h = s->agents[a].held;
        if (!h) continue;
        s->agents[a].held = NULL;
        s->agents[a].has_seed = false;
        reply_error(h, e);
        send_back(w, h);
    }
    if (s->barrier_op) barrier_unlink(w, s);
    s->barrier_op = 0;
    s->nparts = 0;
}

static void op_close(worker *w, task *t, bool reply) {
    session *s = t->s;
    if (s->barrier_op) {
        hw_err e;
        hw_fail(&e, HW_E_UNKNOWN_SESSION, "session %s was closed while this agent waited", s->token);
        barrier_fail(w, s, &e);
    }
    session_destroy_envs(s);
    atomic_fetch_sub(&w->nsessions, 1);
    if (reply) reply_begin(t, 0);
}

/* ---------------------------------------------------------------- make */

static int parse_agents(session *s, const msgpack_object *arr, hw_err *err) {
    if (arr->type != MSGPACK_OBJECT_ARRAY || arr->via.array.size == 0)
        return hw_fail(err, HW_E_BAD_REQUEST, "field 'agents' must be a non-empty list of {name, dims}");
    if (!hw_space_is_integer(s->aspace) || s->aspace->type == HW_SPACE_DISCRETE)
        return hw_fail(err, HW_E_NOT_SUPPORTED, "multi-agent sessions need a MultiDiscrete or MultiBinary action space; %s has %s",
                       s->fam->id, hw_space_type_name(s->aspace->type));
    uint32_t na = arr->via.array.size;
    if (na > 1024) return hw_fail(err, HW_E_LIMIT, "agents: %u agents exceed the limit of 1024", na);
    s->agents = xcalloc(na, sizeof *s->agents);
    s->nagents = (int)na;
    int64_t n = s->anumel;
    int *owner = xcalloc((size_t)n, sizeof *owner);
    for (int64_t i = 0; i < n; i++) owner[i] = -1;
    int rc = 0;
    for (uint32_t a = 0; a < na && !rc; a++) {
        const msgpack_object *ag = &arr->via.array.ptr[a];
        agent *A = &s->agents[a];
        hw_err e2;
        if (ag->type != MSGPACK_OBJECT_MAP) {
            rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u]: expected a map {name, dims}", a);
            break;
        }
        if (hw_mp_str(ag, "name", NULL, A->name, sizeof A->name, &e2)) {
            rc = hw_fail(err, e2.code, "agents[%u]: %s", a, e2.msg);
            break;
        }
        for (uint32_t b = 0; b < a; b++)
            if (strcmp(s->agents[b].name, A->name) == 0) rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u]: duplicate agent name '%s'", a, A->name);
        const msgpack_object *d = hw_mp_get(ag, "dims");
        if (!rc && (!d || d->type != MSGPACK_OBJECT_ARRAY || d->via.array.size == 0))
            rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u].dims: expected a non-empty list of action element indices", a);
        if (rc) break;
        A->ndims = (int)d->via.array.size;
        if (A->ndims > n) {
            rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u].dims: %d dims but the action has %lld elements", a, A->ndims, (long long)n);
            break;
        }
        A->dims = xcalloc((size_t)A->ndims, sizeof(int));
        for (int k = 0; k < A->ndims; k++) {
            const msgpack_object *x = &d->via.array.ptr[k];
            if (x->type != MSGPACK_OBJECT_POSITIVE_INTEGER || x->via.u64 >= (uint64_t)n) {
                rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u].dims[%d]: expected an element index in [0, %lld)", a, k, (long long)n);
                break;
            }
            int dim = (int)x->via.u64;
            if (owner[dim] >= 0) {
                rc = hw_fail(err, HW_E_BAD_REQUEST, "agents[%u].dims[%d]: element %d already belongs to agent '%s'", a, k, dim,
                             s->agents[owner[dim]].name);
                break;
            }
            owner[dim] = (int)a;
            A->dims[k] = dim;
        }
        if (!rc) A->space = hw_space_select(s->aspace, A->ndims, A->dims);
    }
    for (int64_t i = 0; !rc && i < n; i++)
        if (owner[i] < 0) {
            const char *nm = s->aspace->names && s->aspace->names[i] ? s->aspace->names[i] : "";
            rc = hw_fail(err, HW_E_BAD_REQUEST, "agents: action element %lld (%s) belongs to no agent; the dims must partition the action", (long long)i, nm);
        }
    free(owner);
    return rc;
}

static void op_make(worker *w, task *t) {
    session *s = t->s;
    const msgpack_object *root = t->msg.root;
    hw_err err;
    int64_t num_envs = 1;
    const msgpack_object *ne = hw_mp_get(root, "num_envs");
    const msgpack_object *ag = hw_mp_get(root, "agents");
    if (ag && ag->type == MSGPACK_OBJECT_NIL) ag = NULL;
    if (ne && ne->type != MSGPACK_OBJECT_NIL) {
        if (hw_mp_int(root, "num_envs", true, 1, 1, w->opts->max_envs, &num_envs, &err)) {
            if (err.code == HW_E_BAD_REQUEST && strstr(err.msg, "out of range")) err.code = HW_E_LIMIT;
            goto fail;
        }
        s->kind = SK_VECTOR;
    }
    if (ag) {
        if (s->kind == SK_VECTOR) {
            hw_fail(&err, HW_E_NOT_SUPPORTED, "a session cannot be both vector (num_envs) and multi-agent (agents)");
            goto fail;
        }
        s->kind = SK_MULTI;
        if (hw_mp_int(root, "agent_timeout_ms", false, 30000, 1, 86400000, &s->timeout_ms, &err)) goto fail;
    }
    {   /* the config is converted here, not on the router thread, with a bound on its size */
        const msgpack_object *c = hw_mp_get(root, "config");
        if (c && c->type != MSGPACK_OBJECT_NIL) {
            if (c->type != MSGPACK_OBJECT_MAP) {
                hw_fail(&err, HW_E_BAD_CONFIG, "config: expected a map, got another type");
                goto fail;
            }
            json_t *cfg = hw_mp_to_json_max(c, w->opts->max_config_values, &err);
            if (!cfg) {
                hw_err_prefix(&err, "config");
                if (err.code != HW_E_LIMIT) err.code = HW_E_BAD_CONFIG;
                goto fail;
            }
            s->config = cfg;
        }
    }
    s->num_envs = (int)num_envs;
    s->envs = xcalloc((size_t)num_envs, sizeof(void *));
    hw_env_ctx ctx = hw_policy_ctx(w->opts, &w->files, s->env_id);
    for (int i = 0; i < num_envs; i++) {
        s->envs[i] = hw_env_create_ctx(s->env_id, s->config, &ctx, &s->fam, &err);
        if (!s->envs[i]) goto fail;
        if (i == 0) { /* per-session memory budget, checked before the other envs exist */
            double est = (double)hw_env_mem_bytes(s->fam, s->envs[0]) * (double)num_envs;
            s->mem_est = (size_t)est;
            if (est > (double)w->opts->session_mem) {
                hw_fail(&err, HW_E_LIMIT, "make: %lld envs of about %.1f MiB each exceed this server's per-session memory budget of %.0f MiB (--session-mem-mb)",
                        (long long)num_envs, (double)hw_env_mem_bytes(s->fam, s->envs[0]) / 1048576.0, (double)w->opts->session_mem / 1048576.0);
                goto fail;
            }
        }
        if (hw_deadline_check("make", &err)) goto fail;
    }
    s->aspace = s->fam->action_space(s->envs[0]);
    s->ospace = s->fam->observation_space(s->envs[0]);
    s->anumel = s->aspace->type == HW_SPACE_DICT ? 0 : hw_space_numel(s->aspace);
    s->started = xcalloc((size_t)num_envs, sizeof(bool));
    s->needs_reset = xcalloc((size_t)num_envs, sizeof(bool));
    s->ibuf = xcalloc((size_t)(num_envs * (s->anumel + 1)), sizeof(int64_t));
    s->fbuf = xcalloc((size_t)(num_envs * (s->anumel + 1)), sizeof(double));
    s->max_snapshots = w->opts->max_snapshots;
    s->snap_ctr = &w->nsnapshots;
    s->max_values = w->opts->max_config_values;
    if (s->kind == SK_VECTOR) {
        s->rewards = xcalloc((size_t)num_envs, sizeof(double));
        s->terms = xcalloc((size_t)num_envs, 1);
        s->truncs = xcalloc((size_t)num_envs, 1);
        s->infos = xcalloc((size_t)num_envs, sizeof(json_t *));
    }
    if (s->kind == SK_MULTI && parse_agents(s, ag, &err)) goto fail;
    atomic_fetch_add(&w->nsessions, 1);
    {
        msgpack_packer pk = reply_begin(t, s->kind == SK_MULTI ? 7 : 6);
        hw_pack_kv_str(&pk, "session", s->token);
        hw_pack_kv_str(&pk, "env", s->env_id);
        hw_pack_kv_str(&pk, "kind", s->kind == SK_SINGLE ? "single" : s->kind == SK_VECTOR ? "vector" : "multi");
        hw_pack_cstr(&pk, "num_envs");
        msgpack_pack_int(&pk, s->num_envs);
        hw_pack_cstr(&pk, "action_space");
        pack_space(&pk, s->aspace);
        hw_pack_cstr(&pk, "observation_space");
        pack_space(&pk, s->ospace);
        if (s->kind == SK_MULTI) {
            hw_pack_cstr(&pk, "agents");
            msgpack_pack_array(&pk, (size_t)s->nagents);
            for (int a = 0; a < s->nagents; a++) {
                msgpack_pack_map(&pk, 3);
                hw_pack_kv_str(&pk, "name", s->agents[a].name);
                hw_pack_cstr(&pk, "dims");
                msgpack_pack_array(&pk, (size_t)s->agents[a].ndims);
                for (int k = 0; k < s->agents[a].ndims; k++) msgpack_pack_int(&pk, s->agents[a].dims[k]);
                hw_pack_cstr(&pk, "action_space");
                pack_space(&pk, s->agents[a].space);
            }
        }
    }
    return;
fail:
    if (s->fam || s->envs) {
        if (!s->fam && s->envs) { /* no env was created */
            free(s->envs);
            s->envs = NULL;
        }
        if (s->envs) session_destroy_envs(s);
    }
    s->dead = true;
    reply_error(t, &err);
}

/* ---------------------------------------------------------------- reset / step */

static int get_seed(const msgpack_object *o, uint64_t *out, hw_err *err, const char *what) {
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        *out = o->via.u64;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return hw_fail(err, HW_E_BAD_REQUEST, "%s: seeds must be non-negative integers", what);
    return hw_fail(err, HW_E_BAD_REQUEST, "%s: expected an integer seed", what);
}

static size_t max_values_of(const task *t) { return t->s && t->s->max_values ? t->s->max_values : ((size_t)1 << 20); }

static int get_options(task *t, json_t **opts, hw_err *err) {
    const msgpack_object *o = hw_mp_get(t->msg.root, "options");
    *opts = NULL;
    if (!o || o->type == MSGPACK_OBJECT_NIL) return 0;
    if (o->type != MSGPACK_OBJECT_MAP) return hw_fail(err, HW_E_BAD_REQUEST, "field 'options' must be a map");
    *opts = hw_mp_to_json_max(o, max_values_of(t), err);
    return *opts ? 0 : -1;
}

/* Copies one env's obs into the vector stacking buffers. */
static int stack_obs(session *s, int i, const hw_obs *obs, hw_err *err) {
    if (i == 0) s->obs_fields = obs->n;
    if (obs->n != s->obs_fields) return hw_fail(err, HW_E_INTERNAL, "env returned %d obs fields, expected %d", obs->n, s->obs_fields);
    for (int f = 0; f < obs->n; f++) {
        size_t nb = hw_array_nbytes(&obs->arr[f]);
        size_t need = nb * (size_t)s->num_envs;
        if (i == 0 && need > s->stack_cap[f]) {
            free(s->stack[f]);
            s->stack[f] = xcalloc(need, 1);
            s->stack_cap[f] = need;
        }
        if ((size_t)(i + 1) * nb > s->stack_cap[f]) return hw_fail(err, HW_E_INTERNAL, "env obs field %d changed size", f);
        memcpy(s->stack[f] + (size_t)i * nb, obs->arr[f].data, nb);
    }
    return 0;
}

static void pack_stacked_obs(msgpack_packer *pk, session *s, const hw_obs *proto) {
    if (proto->n == 1 && !proto->keys[0]) {
        hw_array a = proto->arr[0];
        a.data = s->stack[0];
        hw_pack_array(pk, &a, s->num_envs);
        return;
    }
    msgpack_pack_map(pk, (size_t)proto->n);
    for (int f = 0; f < proto->n; f++) {
        hw_pack_cstr(pk, proto->keys[f] ? proto->keys[f] : "");
        hw_array a = proto->arr[f];
        a.data = s->stack[f];
        hw_pack_array(pk, &a, s->num_envs);
    }
}

static void pack_infos(msgpack_packer *pk, session *s) {
    msgpack_pack_array(pk, (size_t)s->num_envs);
    for (int i = 0; i < s->num_envs; i++) {
        pack_info(pk, s->infos[i]);
        json_decref(s->infos[i]);
        s->infos[i] = NULL;
    }
}

static void op_reset_vector(task *t) {
    session *s = t->s;
    hw_err err;
    const msgpack_object *sd = hw_mp_get(t->msg.root, "seed");
    uint64_t base = 0;
    bool seeded = sd && sd->type != MSGPACK_OBJECT_NIL;
    if (seeded && sd->type == MSGPACK_OBJECT_ARRAY) {
        if ((int)sd->via.array.size != s->num_envs) {
            reply_fail(t, HW_E_BAD_REQUEST, "field 'seed': %u seeds for num_envs=%d", sd->via.array.size, s->num_envs);
            return;
        }
        for (int i = 0; i < s->num_envs; i++) {
            uint64_t x;
            char what[32];
            snprintf(what, sizeof what, "seed[%d]", i);
            if (sd->via.array.ptr[i].type == MSGPACK_OBJECT_NIL) continue; /* that env keeps its stream */
            if (get_seed(&sd->via.array.ptr[i], &x, &err, what)) {
                reply_error(t, &err);
                return;
            }
        }
    } else if (seeded && get_seed(sd, &base, &err, "seed")) {
        reply_error(t, &err);
        return;
    }
    json_t *opts;
    if (get_options(t, &opts, &err)) {
        reply_error(t, &err);
        return;
    }
    /* options.reset_mask (Gymnasium 1.x): N booleans; only the envs marked true are reset, the
     * others keep their state and last obs (and answer an empty info). */
    json_t *rm = opts ? json_object_get(opts, "reset_mask") : NULL;
    if (rm) {
        bool any = false;
        if (!json_is_array(rm) || (int)json_array_size(rm) != s->num_envs) {
            json_decref(opts);
            reply_fail(t, HW_E_BAD_REQUEST, "options.reset_mask: expected a list of num_envs=%d booleans", s->num_envs);
            return;
        }
        for (int i = 0; i < s->num_envs; i++) {
            json_t *b = json_array_get(rm, (size_t)i);
            if (!json_is_boolean(b)) {
                json_decref(opts);
                reply_fail(t, HW_E_BAD_REQUEST, "options.reset_mask[%d]: expected a boolean", i);
                return;
            }
            any |= json_is_true(b);
            if (!json_is_true(b) && !s->started[i]) {
                json_decref(opts);
                reply_fail(t, HW_E_BAD_STATE, "options.reset_mask[%d] is false but env %d has never been reset", i, i);
                return;
            }
        }
        if (!any) {
            json_decref(opts);
            reply_fail(t, HW_E_BAD_REQUEST, "options.reset_mask: no env selected (all false)");
            return;
        }
        json_incref(rm);
        json_object_del(opts, "reset_mask"); /* the envs see the other options only */
    }
    hw_obs first = {0}, obs;
    bool have_first = false;
    for (int i = 0; i < s->num_envs; i++) {
        if (rm && !json_is_true(json_array_get(rm, (size_t)i))) {
            s->infos[i] = json_object();
            continue;
        }
        uint64_t seed = base + (uint64_t)i;
        bool this_seeded = seeded;
        if (seeded && sd->type == MSGPACK_OBJECT_ARRAY) {
            this_seeded = sd->via.array.ptr[i].type != MSGPACK_OBJECT_NIL;
            seed = sd->via.array.ptr[i].via.u64;
        }
        s->infos[i] = json_object();
        if (s->fam->reset(s->envs[i], this_seeded ? &seed : NULL, opts, &obs, s->infos[i], &err) || stack_obs(s, i, &obs, &err)) {
            json_decref(opts);
            json_decref(rm);
            reply_error(t, &err);
            for (int k = 0; k <= i; k++) {
                json_decref(s->infos[k]);
                s->infos[k] = NULL;
            }
            return;
        }
        if (!have_first) first = obs, have_first = true;
        s->started[i] = true;
        s->needs_reset[i] = false;
    }
    json_decref(opts);
    json_decref(rm);
    msgpack_packer pk = reply_begin(t, 2);
    hw_pack_cstr(&pk, "obs");
    pack_stacked_obs(&pk, s, &first);
    hw_pack_cstr(&pk, "info");
    pack_infos(&pk, s);
}

static void op_step_vector(worker *w, task *t) {
    session *s = t->s;
    hw_err err;
    for (int i = 0; i < s->num_envs; i++)
        if (!s->started[i]) {
            reply_fail(t, HW_E_BAD_STATE, "step before reset (env %d of the vector session has not been reset)", i);
            return;
        }
    hw_array a;
    if (hw_mp_array(hw_mp_get(t->msg.root, "action"), "action", t->msg.up.zone, (size_t)1 << 24, &a, &err) ||
        hw_space_check_actions(s->aspace, &a, s->num_envs, s->ibuf, s->fbuf, &err)) {
        reply_error(t, &err);
        return;
    }
    bool integer = hw_space_is_integer(s->aspace);
    hw_obs first = {0};
    for (int i = 0; i < s->num_envs; i++) {
        hw_step_out out;
        memset(&out, 0, sizeof out);
        s->infos[i] = json_object();
        int rc;
        if (s->needs_reset[i]) {
            rc = s->fam->reset(s->envs[i], NULL, NULL, &out.obs, s->infos[i], &err);
            json_object_set_new(s->infos[i], "autoreset", json_true());
            out.reward = 0;
            s->needs_reset[i] = false;
        } else {
            hw_act act = {(size_t)s->anumel, integer ? s->ibuf + (size_t)i * (size_t)s->anumel : NULL,
                          integer ? NULL : s->fbuf + (size_t)i * (size_t)s->anumel};
            rc = s->fam->step(s->envs[i], &act, &out, s->infos[i], &err);
            if (!rc && (out.terminated || out.truncated)) s->needs_reset[i] = true;
            atomic_fetch_add_explicit(&w->env_steps, 1, memory_order_relaxed);
        }
        if (rc || stack_obs(s, i, &out.obs, &err)) {
            for (int k = 0; k <= i; k++) {
                json_decref(s->infos[k]);
                s->infos[k] = NULL;
            }
            hw_err_prefix(&err, "env in vector session");
            reply_error(t, &err);
            return;
        }
        if (i == 0) first = out.obs;
        s->rewards[i] = out.reward;
        s->terms[i] = out.terminated;
        s->truncs[i] = out.truncated;
    }
    msgpack_packer pk = reply_begin(t, 5);
    hw_pack_cstr(&pk, "obs");
    pack_stacked_obs(&pk, s, &first);
    hw_array ra = {HW_DT_FLOAT64, 1, {s->num_envs}, s->rewards};
    hw_array ta = {HW_DT_BOOL, 1, {s->num_envs}, s->terms};
    hw_array ua = {HW_DT_BOOL, 1, {s->num_envs}, s->truncs};
    hw_pack_cstr(&pk, "reward");
    hw_pack_array(&pk, &ra, 0);
    hw_pack_cstr(&pk, "terminated");
    hw_pack_array(&pk, &ta, 0);
    hw_pack_cstr(&pk, "truncated");
    hw_pack_array(&pk, &ua, 0);
    hw_pack_cstr(&pk, "info");
    pack_infos(&pk, s);
}

/* Single env reset/step; `act` NULL means reset. Packs into each task in `targets`. */
static int run_single(worker *w, session *s, const hw_act *act, const uint64_t *seed, const json_t *opts, task **targets,
                      int ntargets, hw_err *err) {
    json_t *info = json_object();
    hw_step_out out;
    memset(&out, 0, sizeof out);
    int rc = act ? s->fam->step(s->envs[0], act, &out, info, err) : s->fam->reset(s->envs[0], seed, opts, &out.obs, info, err);
    if (rc) {
        json_decref(info);
        return -1;
    }
    if (act) atomic_fetch_add_explicit(&w->env_steps, 1, memory_order_relaxed);
    else s->started[0] = true;
    for (int k = 0; k < ntargets; k++) {
        task *t = targets[k];
        bool joint = s->kind == SK_MULTI && act;
        msgpack_packer pk = reply_begin(t, act ? 5 + joint : 2);
        hw_pack_cstr(&pk, "obs");
        hw_pack_obs(&pk, &out.obs);
        if (act) {
            hw_pack_cstr(&pk, "reward");
            msgpack_pack_double(&pk, out.reward);
            hw_pack_cstr(&pk, "terminated");
            hw_pack_bool(&pk, out.terminated);
            hw_pack_cstr(&pk, "truncated");
            hw_pack_bool(&pk, out.truncated);
        }
        hw_pack_cstr(&pk, "info");
        pack_info(&pk, info);
        if (joint) {
            hw_pack_cstr(&pk, "action");
            msgpack_pack_array(&pk, act->n);
            for (size_t i = 0; i < act->n; i++) msgpack_pack_int64(&pk, act->i[i]);
        }
    }
    json_decref(info);
    return 0;
}

static void op_reset_single(worker *w, task *t) {
    session *s = t->s;
    hw_err err;
    const msgpack_object *sd = hw_mp_get(t->msg.root, "seed");
    uint64_t seed;
    bool seeded = sd && sd->type != MSGPACK_OBJECT_NIL;
    if (seeded && get_seed(sd, &seed, &err, "seed")) {
        reply_error(t, &err);
        return;
    }
    json_t *opts;
    if (get_options(t, &opts, &err)) {
        reply_error(t, &err);
        return;
    }
    if (run_single(w, s, NULL, seeded ? &seed : NULL, opts, &t, 1, &err)) reply_error(t, &err);
    json_decref(opts);
}

static void op_step_single(worker *w, task *t) {
    session *s = t->s;
    hw_err err;
    if (!s->started[0]) {
        reply_fail(t, HW_E_BAD_STATE, "step before reset");
        return;
    }
    hw_array a;
    hw_act act;
    if (hw_mp_array(hw_mp_get(t->msg.root, "action"), "action", t->msg.up.zone, (size_t)1 << 24, &a, &err) ||
        hw_space_check_action(s->aspace, &a, s->ibuf, s->fbuf, &act, &err) || run_single(w, s, &act, NULL, NULL, &t, 1, &err))
        reply_error(t, &err);
}

/* ---------------------------------------------------------------- multi-agent */

static agent *find_agent(session *s, task *t, hw_err *err) {
    char name[64];
    if (hw_mp_str(t->msg.root, "agent", NULL, name, sizeof name, err)) {
        hw_err_prefix(err, "multi-agent session");
        return NULL;
    }
    for (int a = 0; a < s->nagents; a++)
        if (strcmp(s->agents[a].name, name) == 0) return &s->agents[a];
    char list[256] = "";
    size_t len = 0;
    for (int a = 0; a < s->nagents && len + 70 < sizeof list; a++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", a ? ", " : "", s->agents[a].name);
    hw_fail(err, HW_E_UNKNOWN_AGENT, "no agent '%s' in this session (agents: %s)", name, list);
    return NULL;
}

static void barrier_complete(worker *w, session *s) {
    task *targets[1024];
    int n = 0;
    for (int a = 0; a < s->nagents; a++) targets[n++] = s->agents[a].held;
    hw_err err;
    int rc;
    if (s->barrier_op == OP_RESET) {
        uint64_t seed = 0;
        bool seeded = false;
        for (int a = 0; a < s->nagents && !seeded; a++)
            if (s->agents[a].has_seed) {
                seed = s->agents[a].seed;
                seeded = true;
            }
        rc = run_single(w, s, NULL, seeded ? &seed : NULL, NULL, targets, n, &err);
    } else {
        hw_act act = {(size_t)s->anumel, s->ibuf, NULL};
        rc = run_single(w, s, &act, NULL, NULL, targets, n, &err);
    }
    barrier_unlink(w, s);
    s->barrier_op = 0;
    s->nparts = 0;
    for (int a = 0; a < s->nagents; a++) {
        task *h = s->agents[a].held;
        s->agents[a].held = NULL;
        s->agents[a].has_seed = false;
        if (rc) reply_error(h, &err);
        send_back(w, h);
    }
}

/* Returns true when the task is held (answered later). */
static bool op_multi_part(worker *w, task *t) {
    session *s = t->s;
    hw_err err;
    agent *A = find_agent(s, t, &err);
    if (!A) {
        reply_error(t, &err);
        return false;
    }
    int64_t part[1024];
    if (t->op == OP_STEP) {
        if (!s->started[0]) {
            reply_fail(t, HW_E_BAD_STATE, "step before reset (agent '%s')", A->name);
            return false;
        }
        hw_array a;
        hw_act act;
        double fb[1024];
        if (A->ndims > 1024) {
            reply_fail(t, HW_E_LIMIT, "agent part too large");
            return false;
        }
        if (hw_mp_array(hw_mp_get(t->msg.root, "action"), "action", t->msg.up.zone, 4096, &a, &err) ||
            hw_space_check_action(A->space, &a, part, fb, &act, &err)) {
            hw_err_prefix(&err, A->name);
            reply_error(t, &err);
            return false;
        }
    } else {
        const msgpack_object *sd = hw_mp_get(t->msg.root, "seed");
        if (sd && sd->type != MSGPACK_OBJECT_NIL) {
            if (get_seed(sd, &A->seed, &err, "seed")) {
                reply_error(t, &err);
                return false;
            }
            A->has_seed = true;
        } else {
            A->has_seed = false;
        }
    }
    if (s->barrier_op && s->barrier_op != t->op) {
        reply_fail(t, HW_E_BAD_STATE, "a %s barrier is in progress; agent '%s' sent %s", hw_op_name_of(s->barrier_op), A->name,
                   hw_op_name_of(t->op));
        return false;
    }
    if (!s->barrier_op) {
        s->barrier_op = t->op;
        s->deadline = hw_now() + (double)s->timeout_ms / 1000.0;
        s->barrier_next = w->barriers;
        w->barriers = s;
    }
    if (t->op == OP_STEP)
        for (int k = 0; k < A->ndims; k++) s->ibuf[A->dims[k]] = part[k];
    if (A->held) {
        task *old = A->held;
        reply_fail(old, HW_E_SUPERSEDED, "agent '%s' sent a newer %s; this one was replaced", A->name, hw_op_name_of(t->op));
        send_back(w, old);
    } else {
        s->nparts++;
    }
    A->held = t;
    if (s->nparts == s->nagents) barrier_complete(w, s);
    return true;
}

static void check_barrier_timeouts(worker *w) {
    double now = hw_now();
    session *s = w->barriers;
    while (s) {
        session *next = s->barrier_next;
        if (now >= s->deadline) {
            char missing[256] = "";
            size_t len = 0;
            for (int a = 0; a < s->nagents && len + 70 < sizeof missing; a++)
                if (!s->agents[a].held) len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", s->agents[a].name);
            hw_err e;
            hw_fail(&e, HW_E_TIMEOUT, "%s barrier timed out after %lld ms; missing agents: %s", hw_op_name_of(s->barrier_op),
                    (long long)s->timeout_ms, missing);
            barrier_fail(w, s, &e);
        }
        s = next;
    }
}

static void op_join(task *t) {
    session *s = t->s;
    hw_err err;
    if (s->kind != SK_MULTI) {
        reply_fail(t, HW_E_BAD_STATE, "join needs a multi-agent session (make with 'agents')");
        return;
    }
    agent *A = find_agent(s, t, &err);
    if (!A) {
        reply_error(t, &err);
        return;
    }
    msgpack_packer pk = reply_begin(t, 5);
    hw_pack_kv_str(&pk, "agent", A->name);
    hw_pack_cstr(&pk, "dims");
    msgpack_pack_array(&pk, (size_t)A->ndims);
    for (int k = 0; k < A->ndims; k++) msgpack_pack_int(&pk, A->dims[k]);
    hw_pack_cstr(&pk, "action_space");
    pack_space(&pk, A->space);
    hw_pack_cstr(&pk, "observation_space");
    pack_space(&pk, s->ospace);
    hw_pack_cstr(&pk, "agents");
    msgpack_pack_array(&pk, (size_t)s->nagents);
    for (int a = 0; a < s->nagents; a++) hw_pack_cstr(&pk, s->agents[a].name);
}

/* ---------------------------------------------------------------- snapshots */

static void op_snapshot(task *t) {
    session *s = t->s;
    hw_err err;
    if (!s->fam->snapshot) {
        reply_fail(t, HW_E_NOT_SUPPORTED, "%s does not support snapshots", s->fam->id);
        return;
    }
    if (s->nsnaps >= s->max_snapshots) {
        reply_fail(t, HW_E_LIMIT, "session holds %d snapshots (the limit); drop some first", s->nsnaps);
        return;
    }
    snap_rec r = {0};
    r.snaps = xcalloc((size_t)s->num_envs, sizeof(void *));
    for (int i = 0; i < s->num_envs; i++) {
        r.snaps[i] = s->fam->snapshot(s->envs[i], &err);
        if (!r.snaps[i]) {
            snap_free(s, &r);
            reply_error(t, &err);
            return;
        }
    }
    r.started = xcalloc((size_t)s->num_envs, sizeof(bool));
    r.needs_reset = xcalloc((size_t)s->num_envs, sizeof(bool));
    memcpy(r.started, s->started, (size_t)s->num_envs * sizeof(bool));
    memcpy(r.needs_reset, s->needs_reset, (size_t)s->num_envs * sizeof(bool));
    r.id = ++s->next_snap;
    s->snaps = realloc(s->snaps, (size_t)(s->nsnaps + 1) * sizeof *s->snaps);
    if (!s->snaps) abort();
    s->snaps[s->nsnaps++] = r;
    if (s->snap_ctr) atomic_fetch_add(s->snap_ctr, 1);
    msgpack_packer pk = reply_begin(t, 1);
    hw_pack_cstr(&pk, "snapshot");
    msgpack_pack_int64(&pk, r.id);
}

static int find_snap(session *s, task *t, hw_err *err) {
    int64_t id;
    if (hw_mp_int(t->msg.root, "snapshot", true, 0, INT64_MIN, INT64_MAX, &id, err)) return -1;
    for (int k = 0; k < s->nsnaps; k++)
        if (s->snaps[k].id == id) return k;
    return hw_fail(err, HW_E_UNKNOWN_SNAPSHOT, "no snapshot %lld in this session", (long long)id);
}

static void op_restore(task *t) {
    session *s = t->s;
    hw_err err;
    int k = find_snap(s, t, &err);
    if (k < 0) {
        reply_error(t, &err);
        return;
    }
    for (int i = 0; i < s->num_envs; i++)
        if (s->fam->restore(s->envs[i], s->snaps[k].snaps[i], &err)) {
            reply_error(t, &err);
            return;
        }
    memcpy(s->started, s->snaps[k].started, (size_t)s->num_envs * sizeof(bool));
    memcpy(s->needs_reset, s->snaps[k].needs_reset, (size_t)s->num_envs * sizeof(bool));
    reply_begin(t, 0);
}

static void op_drop_snapshot(task *t) {
    session *s = t->s;
    hw_err err;
    int k = find_snap(s, t, &err);
    if (k < 0) {
        reply_error(t, &err);
        return;
    }
    snap_free(s, &s->snaps[k]);
    s->snaps[k] = s->snaps[--s->nsnaps];
    if (s->snap_ctr) atomic_fetch_sub(s->snap_ctr, 1);
    reply_begin(t, 0);
}

/* ---------------------------------------------------------------- spaces / evaluate */

static void *task_env(worker *w, task *t, const hw_env_family **fam, hw_err *err) {
    if (t->s) {
        *fam = t->s->fam;
        return t->s->envs[0];
    }
    char env_id[64];
    if (hw_mp_str(t->msg.root, "env", NULL, env_id, sizeof env_id, err)) return NULL;
    const msgpack_object *c = hw_mp_get(t->msg.root, "config");
    json_t *cfg = NULL;
    if (c && c->type != MSGPACK_OBJECT_NIL) {
        if (c->type != MSGPACK_OBJECT_MAP) return hw_fail(err, HW_E_BAD_CONFIG, "config: expected a map"), NULL;
        cfg = hw_mp_to_json_max(c, w->opts->max_config_values, err);
        if (!cfg) {
            hw_err_prefix(err, "config");
            return NULL;
        }
    }
    void *env = cached_env(w, env_id, cfg, fam, err);
    json_decref(cfg);
    return env;
}

static void op_spaces(worker *w, task *t) {
    hw_err err;
    const hw_env_family *fam;
    void *env = task_env(w, t, &fam, &err);
    if (!env) {
        reply_error(t, &err);
        return;
    }
    msgpack_packer pk = reply_begin(t, 2);
    hw_pack_cstr(&pk, "action_space");
    pack_space(&pk, fam->action_space(env));
    hw_pack_cstr(&pk, "observation_space");
    pack_space(&pk, fam->observation_space(env));
}

static json_t *point_json(worker *w, const msgpack_object *o, hw_err *err) {
    if (!o) return hw_fail(err, HW_E_BAD_REQUEST, "field 'point' is required"), NULL;
    return hw_mp_to_json_max(o, w->opts->max_config_values, err);
}

static void op_evaluate(worker *w, task *t) {
    hw_err err;
    const hw_env_family *fam;
    void *env = task_env(w, t, &fam, &err);
    if (!env) {
        reply_error(t, &err);
        return;
    }
    if (!fam->evaluate) {
        reply_fail(t, HW_E_NOT_SUPPORTED, "%s has no one-shot evaluate", fam->id);
        return;
    }
    json_t *pt = point_json(w, hw_mp_get(t->msg.root, "point"), &err);
    if (!pt) {
        hw_err_prefix(&err, "point");
        reply_error(t, &err);
        return;
    }
    json_t *metrics = json_object();
    double r;
    if (fam->evaluate(env, pt, &r, metrics, &err)) {
        reply_error(t, &err);
    } else {
        msgpack_packer pk = reply_begin(t, 2);
        hw_pack_cstr(&pk, "reward");
        msgpack_pack_double(&pk, r);
        hw_pack_cstr(&pk, "metrics");
        hw_pack_json(&pk, metrics);
        atomic_fetch_add_explicit(&w->env_steps, 1, memory_order_relaxed);
    }
    json_decref(pt);
    json_decref(metrics);
}

static json_t *err_json(const hw_err *e) { return json_pack("{s:s, s:s}", "code", hw_code_name(e->code), "message", e->msg); }

static void op_batch_slice(worker *w, task *t) {
    batch *b = t->b;
    hw_err err;
    const hw_env_family *fam;
    json_t *own_cfg = NULL;
    void *env = NULL;
    if (!b->config && b->config_mp && b->config_mp->type != MSGPACK_OBJECT_NIL) { /* converted here, not on the router */
        if (b->config_mp->type != MSGPACK_OBJECT_MAP) hw_fail(&err, HW_E_BAD_CONFIG, "config: expected a map");
        else if (!(own_cfg = hw_mp_to_json_max(b->config_mp, w->opts->max_config_values, &err))) hw_err_prefix(&err, "config");
        if (own_cfg) env = cached_env(w, b->env_id, own_cfg, &fam, &err);
    } else {
        env = cached_env(w, b->env_id, b->config, &fam, &err);
    }
    json_decref(own_cfg);
    if (b->lean) { /* lean batch: batch.c scores todo[lo..hi) (points past the request deadline get TIMEOUT) */
        lean_run_slice(b->lean, t->slice, fam, env, &err, t->lo, t->hi);
        if (env) atomic_fetch_add_explicit(&w->env_steps, (unsigned long long)(t->hi - t->lo), memory_order_relaxed);
        return;
    }
    for (int64_t k = t->lo; k < t->hi; k++) {
        b->rewards[k] = NAN;
        if (env && hw_deadline_passed()) { /* the request's deadline: the rest is abandoned */
            t->failed = true;
            break;
        }
        if (!env) {
            b->errors[k] = err_json(&err);
            continue;
        }
        if (!fam->evaluate) {
            hw_fail(&err, HW_E_NOT_SUPPORTED, "%s has no one-shot evaluate", fam->id);
            b->errors[k] = err_json(&err);
            continue;
        }
        json_t *pt;
        if (b->list) {
            pt = hw_mp_to_json_max(&b->list->via.array.ptr[k], w->opts->max_config_values, &err);
        } else {
            pt = json_array();
            int64_t m = b->grid.shape[1];
            bool fl = b->grid.dtype == HW_DT_FLOAT32 || b->grid.dtype == HW_DT_FLOAT64;
            for (int64_t j = 0; j < m; j++)
                json_array_append_new(pt, fl ? json_real(hw_array_get_f64(&b->grid, k * m + j))
                                             : json_integer(hw_array_get_i64(&b->grid, k * m + j)));
        }
        if (!pt) {
            hw_err_prefix(&err, "point");
            b->errors[k] = err_json(&err);
            continue;
        }
        json_t *metrics = json_object();
        double r;
        if (fam->evaluate(env, pt, &r, metrics, &err)) {
            b->errors[k] = err_json(&err);
            json_decref(metrics);
        } else {
            b->rewards[k] = r;
            b->metrics[k] = metrics;
            atomic_fetch_add_explicit(&w->env_steps, 1, memory_order_relaxed);
        }
        json_decref(pt);
    }
}

/* ---------------------------------------------------------------- loop */

static bool handle_op(worker *w, task *t);
static bool worker_handle_timed(worker *w, task *t);

bool worker_handle(worker *w, task *t) {
    /* the request's deadline (env loops check it through env_limits.h); internal tasks that
     * free resources never time out */
    double dl = w->opts->request_timeout_s > 0 && t->op != OP_DESTROY && t->op != OP_CLOSE ? t->t0 + w->opts->request_timeout_s : 0;
    hw_deadline_set(dl);
    bool held = worker_handle_timed(w, t);
    hw_deadline_set(0);
    return held;
}

static bool worker_handle_timed(worker *w, task *t) {
    session *s = t->s;
    /* multi-agent parts may hand `t` (and the other parts) back inside handle_op, after which
     * the router owns them: touch neither afterwards. Those sessions never run inline anyway. */
    if (!s || s->dead || s->kind == SK_MULTI || t->op < 0 || t->op >= OP_COUNT || t->op == OP_CLOSE) return handle_op(w, t);
    int op = t->op;
    double t0 = hw_now();
    bool held = handle_op(w, t);
    double us = (hw_now() - t0) * 1e6;
    /* cost estimate used by the router's inline fast path (see router.c) */
    double *c = &s->cost_us[op];
    *c = *c > 1e8 ? us : 0.8 * *c + 0.2 * us;
    return held;
}

static bool handle_op(worker *w, task *t) {
    session *s = t->s;
    if (s && s->dead && t->op != OP_DESTROY) {
        reply_fail(t, HW_E_UNKNOWN_SESSION, "session %s is closed", s->token);
        return false;
    }
    switch (t->op) {
    case OP_MAKE: op_make(w, t); break;
    case OP_SPACES: op_spaces(w, t); break;
    case OP_RESET:
        if (s->kind == SK_MULTI) return op_multi_part(w, t);
        if (s->kind == SK_VECTOR) op_reset_vector(t);
        else op_reset_single(w, t);
        break;
    case OP_STEP:
        if (s->kind == SK_MULTI) return op_multi_part(w, t);
        if (s->kind == SK_VECTOR) op_step_vector(w, t);
        else op_step_single(w, t);
        break;
    case OP_CLOSE: op_close(w, t, true); break;
    case OP_DESTROY:
        if (!s->dead) op_close(w, t, false);
        break;
    case OP_SNAPSHOT: op_snapshot(t); break;
    case OP_RESTORE: op_restore(t); break;
    case OP_DROP_SNAPSHOT: op_drop_snapshot(t); break;
    case OP_EVALUATE: op_evaluate(w, t); break;
    case OP_BATCH_SLICE: op_batch_slice(w, t); break;
    case OP_JOIN: op_join(t); break;
    default: reply_fail(t, HW_E_INTERNAL, "worker got op %d", t->op); break;
    }
    return false;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    for (;;) {
        long timeout = -1;
        if (w->barriers) {
            double now = hw_now(), next = 1e300;
            for (session *s = w->barriers; s; s = s->barrier_next)
                if (s->deadline < next) next = s->deadline;
            timeout = next <= now ? 0 : (long)ceil((next - now) * 1000.0);
        }
        zmq_pollitem_t it = {w->pull, 0, ZMQ_POLLIN, 0};
        int rc = zmq_poll(&it, 1, timeout);
        if (rc < 0 && errno != EINTR) break;
        while (rc > 0) {
            task *t;
            int n = zmq_recv(w->pull, &t, sizeof t, ZMQ_DONTWAIT);
            if (n < 0) break;
            if (t->op == OP_STOP) {
                /* fail any held barrier parts, free the cache, hand the stop task back */
                hw_err e;
                hw_fail(&e, HW_E_SHUTTING_DOWN, "server is shutting down");
                while (w->barriers) barrier_fail(w, w->barriers, &e);
                for (int i = 0; i < WORKER_CACHE; i++) {
                    if (w->cache[i].env) w->cache[i].fam->destroy(w->cache[i].env);
                    free(w->cache[i].key);
                    w->cache[i].env = NULL;
                    w->cache[i].key = NULL;
                }
                send_back(w, t);
                return NULL;
            }
            if (!worker_handle(w, t)) send_back(w, t);
        }
        if (w->barriers) check_barrier_timeouts(w);
    }
    return NULL;
}

int worker_start(worker *w, int index, void *zctx, const hw_server_opts *opts) {
    w->index = index;
    hw_policy_files(opts, &w->files);
    w->zctx = zctx;
    w->opts = opts;
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://hwgym-worker-%d", index);
    /* router side: a PUSH per worker; worker side: PULL */
    w->pull = zmq_socket(zctx, ZMQ_PULL);
    if (!w->pull || zmq_bind(w->pull, ep) != 0) return -1;
    w->push = zmq_socket(zctx, ZMQ_PUSH);
    if (!w->push || zmq_connect(w->push, "inproc://hwgym-replies") != 0) return -1;
    int zero = 0;
    zmq_setsockopt(w->push, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt(w->pull, ZMQ_RCVHWM, &zero, sizeof zero);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals go to the router thread only */
    int rc = pthread_create(&w->th, NULL, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : -1;
}

void worker_join(worker *w) {
    pthread_join(w->th, NULL);
    zmq_close(w->pull);
    zmq_close(w->push);
}
