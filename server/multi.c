/* multi.c - see multi.h. Moved from worker.c unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multi.h"
#include "reply.h"
#include "worker_int.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
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
void barrier_fail(worker *w, session *s, const hw_err *e) {
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

int parse_agents(session *s, const msgpack_object *arr, hw_err *err) {
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
bool op_multi_part(worker *w, task *t) {
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

void check_barrier_timeouts(worker *w) {
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

void op_join(task *t) {
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
