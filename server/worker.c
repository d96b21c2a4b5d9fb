/* worker.c - see worker.h */
#include "worker.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch_slice.h"
#include "cache_files.h"
#include "common/env_limits.h"
#include "multi.h"
#include "policy.h"
#include "registry.h"
#include "reply.h"
#include "snapshot.h"
#include "worker_int.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

/* ---------------------------------------------------------------- session lifetime */

void session_destroy_envs(session *s) {
    if (s->mem_ctr) atomic_fetch_sub(s->mem_ctr, (long long)s->mem_est); /* the make's reservation */
    s->mem_ctr = NULL;
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
            if (est > (double)w->opts->server_mem) { /* one session alone past the whole server's budget */
                hw_fail(&err, HW_E_LIMIT, "make: %lld envs of about %.1f MiB each exceed this server's memory budget of %.0f MiB for all sessions (--server-mem-mb)",
                        (long long)num_envs, (double)hw_env_mem_bytes(s->fam, s->envs[0]) / 1048576.0, (double)w->opts->server_mem / 1048576.0);
                goto fail;
            }
            /* the server-wide budget holds for the sum, not only once it is reached: the
             * estimate is reserved atomically against every worker's makes, and released when
             * the session's envs are destroyed (session_destroy_envs) */
            if (w->mem_used) {
                long long want = (long long)s->mem_est, cur = atomic_load(w->mem_used);
                do {
                    if (cur + want > (long long)w->opts->server_mem) {
                        hw_fail(&err, HW_E_LIMIT, "make: the server's sessions hold an estimated %.1f MiB and this one needs %.1f MiB more, past the memory budget of %.0f MiB for all sessions (--server-mem-mb); close some first",
                                (double)cur / 1048576.0, (double)want / 1048576.0, (double)w->opts->server_mem / 1048576.0);
                        goto fail;
                    }
                } while (!atomic_compare_exchange_weak(w->mem_used, &cur, cur + want));
                s->mem_ctr = w->mem_used;
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
        /* a failed or timed-out make (a vector one may have built thousands of envs) gives its
         * memory back to the system before replying, so retries do not pile up (issue 28) */
        malloc_trim(0);
    }
    s->dead = true;
    reply_error(t, &err);
}

/* ---------------------------------------------------------------- reset / step */

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

/* infos[i] NULL: env i packs the info of its last reset/step itself (info_packed) */
static void pack_infos(msgpack_packer *pk, session *s) {
    msgpack_pack_array(pk, (size_t)s->num_envs);
    for (int i = 0; i < s->num_envs; i++) {
        pack_env_info(pk, s, i, s->infos[i]);
        json_decref(s->infos[i]);
        s->infos[i] = NULL;
    }
}

static void op_reset_vector(worker *w, task *t) {
    session *s = t->s;
    hw_err err;
    bool packed = info_packed(w, s);
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
        s->infos[i] = packed ? NULL : json_object();
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
    bool packed = info_packed(w, s);
    for (int i = 0; i < s->num_envs; i++)
        if (!s->started[i]) {
            reply_fail(t, HW_E_BAD_STATE, "step before reset (env %d of the vector session has not been reset)", i);
            return;
        }
    hw_array a;
    if (hw_mp_array(t->action_o, "action", t->msg.up.zone, (size_t)1 << 24, &a, &err) ||
        hw_space_check_actions(s->aspace, &a, s->num_envs, s->ibuf, s->fbuf, &err)) {
        reply_error(t, &err);
        return;
    }
    bool integer = hw_space_is_integer(s->aspace);
    hw_obs first = {0};
    for (int i = 0; i < s->num_envs; i++) {
        hw_step_out out;
        memset(&out, 0, sizeof out);
        /* an autoreset's info gains a key of the server's: that one stays JSON */
        s->infos[i] = packed && !s->needs_reset[i] ? NULL : json_object();
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
    if (hw_mp_array(t->action_o, "action", t->msg.up.zone, (size_t)1 << 24, &a, &err) ||
        hw_space_check_action(s->aspace, &a, s->ibuf, s->fbuf, &act, &err) || run_single(w, s, &act, NULL, NULL, &t, 1, &err))
        reply_error(t, &err);
}

/* ---------------------------------------------------------------- multi-agent */

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

/* ---------------------------------------------------------------- loop */

static bool handle_op(worker *w, task *t);
static bool worker_handle_timed(worker *w, task *t, bool on_router);

static bool handle_deadline(worker *w, task *t, bool on_router) {
    /* the request's deadline (env loops check it through env_limits.h); internal tasks that
     * free resources never time out */
    double dl = w->opts->request_timeout_s > 0 && t->op != OP_DESTROY && t->op != OP_CLOSE ? t->t0 + w->opts->request_timeout_s : 0;
    hw_deadline_set(dl);
    bool held = worker_handle_timed(w, t, on_router);
    hw_deadline_set(0);
    return held;
}

bool worker_handle(worker *w, task *t) { return handle_deadline(w, t, false); }

bool worker_handle_inline(worker *w, task *t) { return handle_deadline(w, t, true); }

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the op and updates the session's cost estimate for it, which the router's inline fast
 * path reads (see router.c). The estimate is in CPU time: envs are pure computation, so CPU
 * time is the op's cost, while wall time also counts the time the thread was preempted (on a
 * loaded machine a 6 us maestro-v0 step measured 25+ us of wall time, left the inline path and
 * paid two thread hand-offs). A worker reads its thread's CPU clock; the router's inline run
 * reads the wall clock instead, because the CPU clock is a system call (two per step, ~1-2 us
 * on a VM) while the wall clock is not: a wall time under --inline-us bounds the CPU time from
 * above and is recorded as it is; one over it may be preemption or real cost, so the session's
 * next op of that kind is timed on the CPU clock (cost_check, session_time_on_cpu), inline:
 * sending it to the worker to be measured cost two thread hand-offs, which on a loaded machine
 * sent half of placement-v0's ~15 us steps through a worker (bench_server, issue 29). */
static bool worker_handle_timed(worker *w, task *t, bool on_router) {
    session *s = t->s;
    /* multi-agent parts may hand `t` (and the other parts) back inside handle_op, after which
     * the router owns them: touch neither afterwards. Those sessions never run inline anyway. */
    if (!s || s->dead || s->kind == SK_MULTI || t->op < 0 || t->op >= OP_COUNT || t->op == OP_CLOSE) return handle_op(w, t);
    int op = t->op;
    bool cpu = session_time_on_cpu(s, op, on_router) || t->inline_alone;
    double t0 = cpu ? thread_cpu_s() : hw_now();
    bool held = handle_op(w, t);
    double t1 = cpu ? thread_cpu_s() : hw_now(), us = (t1 - t0) * 1e6;
    if (on_router && !cpu) t->done = t1; /* the router's own clock reading: after_op and finish take it */
    session_cost_record(s, op, us, !cpu, w->opts->inline_us);
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
        if (s->kind == SK_VECTOR) op_reset_vector(w, t);
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
        /* a blocking receive bounded by the next barrier deadline, then what else is queued:
         * the same order as zmq_poll then non-blocking receives, with fewer system calls (the
         * poll checked the socket's mailbox before and after waiting) */
        int to = timeout > INT_MAX ? INT_MAX : (int)timeout;
        zmq_setsockopt(w->pull, ZMQ_RCVTIMEO, &to, sizeof to);
        task *t;
        int rc = zmq_recv(w->pull, &t, sizeof t, 0);
        if (rc < 0 && errno != EINTR && errno != EAGAIN) break;
        for (int flags = 0; rc >= 0; flags = ZMQ_DONTWAIT) {
            if (flags && zmq_recv(w->pull, &t, sizeof t, flags) < 0) break;
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
    if (rc == 0) { /* top -H and /proc/PID/task/TID/comm tell the workers from the router */
        char name[16];
        snprintf(name, sizeof name, "hwgym-worker-%u", (unsigned)index % 100u);
        pthread_setname_np(w->th, name);
    }
    return rc == 0 ? 0 : -1;
}

void worker_join(worker *w) {
    pthread_join(w->th, NULL);
    zmq_close(w->pull);
    zmq_close(w->push);
}
