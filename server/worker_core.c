/* worker_core.c - what the files that run worker ops share (worker_int.h): the clock, handing a
 * task back to the router, packing spaces and infos, the worker's env cache, snapshot records,
 * seeds, and the single-env reset/step that multi-agent barriers also run. It sits below worker.c
 * (the op dispatch) and below multi.c, snapshot.c and batch_slice.c, and calls none of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_files.h"
#include "policy.h"
#include "registry.h"
#include "reply.h"
#include "worker_int.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

double hw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void session_cost_record(session *s, int op, double us, bool wall, double inline_us) {
    if (wall && us >= inline_us) {
        s->cost_check[op] = true;
        return;
    }
    s->cost_check[op] = false;
    double *c = &s->cost_us[op];
    *c = *c > 1e8 ? us : 0.8 * *c + 0.2 * us;
}

void send_back(worker *w, task *t) {
    while (zmq_send(w->push, &t, sizeof t, 0) < 0 && errno == EINTR) {
    }
}

void pack_space(msgpack_packer *pk, const hw_space *s) {
    json_t *j = hw_space_to_json(s);
    hw_pack_json(pk, j);
    json_decref(j);
}

void pack_info(msgpack_packer *pk, json_t *info) {
    if (info) hw_pack_json(pk, info);
    else msgpack_pack_map(pk, 0);
}

bool info_packed(const worker *w, const session *s) { return s->fam->info_pack && !w->opts->info_json; }

void pack_env_info(msgpack_packer *pk, const session *s, int i, json_t *info) {
    if (info) pack_info(pk, info);
    else s->fam->info_pack(s->envs[i], pk);
}

void *cached_env(worker *w, const char *env_id, const json_t *config, const hw_env_family **fam, hw_err *err) {
    char *cfg = config ? json_dumps(config, JSON_SORT_KEYS | JSON_COMPACT) : strdup("{}");
    /* and the identity of the data files it names: a changed file builds a new env (issue 28) */
    char *files = hw_cache_files_stamp(&w->files, config);
    if (!files && asprintf(&files, "\nnot reused %llu", (unsigned long long)++w->tick) < 0) abort(); /* too many paths to stamp */
    size_t kl = strlen(env_id) + strlen(cfg) + strlen(files) + 3;
    char *key = xcalloc(kl, 1);
    snprintf(key, kl, "%s\n%s\n%s", env_id, cfg, files);
    free(cfg);
    free(files);
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

void snap_free(session *s, snap_rec *r) {
    for (int i = 0; i < s->num_envs; i++)
        if (r->snaps[i]) s->fam->snapshot_free(r->snaps[i]);
    free(r->snaps);
    free(r->started);
    free(r->needs_reset);
}

int get_seed(const msgpack_object *o, uint64_t *out, hw_err *err, const char *what) {
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        *out = o->via.u64;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return hw_fail(err, HW_E_BAD_REQUEST, "%s: seeds must be non-negative integers", what);
    return hw_fail(err, HW_E_BAD_REQUEST, "%s: expected an integer seed", what);
}

/* pack_step_out's bytes, gathered into g */
static void step_out_gather(hw_gather *g, const hw_step_out *out, bool step) {
    static const char k_rew[] = "\xa6reward", k_term[] = "\xaaterminated", k_trunc[] = "\xa9truncated";
    unsigned char *p = hw_gather_room(g, 4);
    g->n += hw_put_fixstr(p, "obs", 3);
    hw_gather_obs(g, &out->obs);
    if (!step) return;
    unsigned char *p0 = p = hw_gather_room(g, sizeof k_rew + 9 + sizeof k_term + sizeof k_trunc);
    memcpy(p, k_rew, sizeof k_rew - 1), p += sizeof k_rew - 1;
    p += hw_put_double(p, out->reward);
    memcpy(p, k_term, sizeof k_term - 1), p += sizeof k_term - 1;
    *p++ = out->terminated ? 0xc3 : 0xc2;
    memcpy(p, k_trunc, sizeof k_trunc - 1), p += sizeof k_trunc - 1;
    *p++ = out->truncated ? 0xc3 : 0xc2;
    g->n += (size_t)(p - p0);
}

void pack_step_out(msgpack_packer *pk, const hw_step_out *out, bool step) {
    /* the bytes hw_pack_cstr("obs"), hw_pack_obs, then msgpack_pack_double and hw_pack_bool pack for
     * "reward": float 64 (0xcb then the IEEE bits big-endian), "terminated", "truncated", gathered
     * (hw_gather): a step with a small observation goes out in one write */
    hw_gather g; /* not zeroed: 2 KiB */
    g.pk = pk;
    g.n = 0;
    step_out_gather(&g, out, step);
    hw_gather_flush(&g);
}

/* Single env reset/step; `act` NULL means reset. Packs into each task in `targets`. */
int run_single(worker *w, session *s, const hw_act *act, const uint64_t *seed, const json_t *opts, task **targets,
                      int ntargets, hw_err *err) {
    /* a family that packs its info itself (env.h info_pack) gets no JSON object: its info goes
     * straight into each reply below */
    json_t *info = info_packed(w, s) ? NULL : json_object();
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
        /* the header, "obs" ... "truncated" and the "info" key gathered: one write for a small
         * observation (pack_step_out's bytes; reply_begin_sized's and hw_pack_cstr's before and after) */
        msgpack_packer pk;
        hw_gather g;
        reply_begin_gather(t, act ? 5 + joint : 2, s->reply_hint, &pk, &g);
        step_out_gather(&g, &out, act != NULL);
        g.n += hw_put_fixstr(hw_gather_room(&g, 5), "info", 4);
        hw_gather_flush(&g);
        pack_env_info(&pk, s, 0, info);
        if (joint) {
            hw_pack_cstr(&pk, "action");
            msgpack_pack_array(&pk, act->n);
            for (size_t i = 0; i < act->n; i++) msgpack_pack_int64(&pk, act->i[i]);
        }
    }
    if (ntargets > 0) s->reply_hint = targets[0]->reply.size + targets[0]->reply.size / 8 + 64;
    /* inline, the router thread frees the info only after sending the reply (task_free), which
     * takes a maestro-v0 step's info (19 keys, 5 nested; ~7% of the step's instructions on the router
     * thread) off the round trip; a worker frees it here, where it costs the router nothing */
    if (info && ntargets == 1 && targets[0]->inline_run && !targets[0]->info_hold) targets[0]->info_hold = info;
    else json_decref(info);
    return 0;
}
