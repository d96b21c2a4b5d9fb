/* hwgym_client.c - see hwgym_client.h */
#include "hwgym_client.h"

#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "hw_codec.h"
#include "hw_space.h"
#include "hwgym_client_int.h"
#include "hwgym_link.h"
#include "hwgym_spare.h"

#define MAX_ELEMS ((size_t)1 << 26)

struct hwc_ctx {
    void *z;
};

struct hwc_client {
    void *z;
    bool own_z;
    void *sock;
    char endpoint[512];
    int timeout_ms;
    uint64_t next_id;
    hwc_link link; /* sees a dropped or hung server (hwgym_link.h) */
    pthread_mutex_t mu;
};

hwc_ctx *hwc_ctx_new(void) {
    hwc_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->z = zmq_ctx_new();
    if (!c->z) {
        free(c);
        return NULL;
    }
    return c;
}

void hwc_ctx_free(hwc_ctx *c) {
    if (!c) return;
    zmq_ctx_term(c->z);
    free(c);
}

/* CURVE (server started with --curve-secret): HWGYM_CURVE_SERVERKEY is the server's Z85 public
 * key; HWGYM_CURVE_PUBLICKEY/HWGYM_CURVE_SECRETKEY are this client's keypair (allow-listed on
 * the server with --curve-allow); without them a fresh keypair is made per connection. */
static int curve_setup(void *sock, hw_err *err) {
    const char *server = getenv("HWGYM_CURVE_SERVERKEY");
    if (!server || !*server) return 0;
    const char *pub = getenv("HWGYM_CURVE_PUBLICKEY"), *sec = getenv("HWGYM_CURVE_SECRETKEY");
    char gp[41], gs[41];
    if (!pub || !sec || !*pub || !*sec) {
        if (zmq_curve_keypair(gp, gs) != 0) return hw_fail(err, HW_E_IO, "CURVE is not available in this libzmq");
        pub = gp;
        sec = gs;
    }
    if (strlen(server) != 40 || strlen(pub) != 40 || strlen(sec) != 40)
        return hw_fail(err, HW_E_IO, "HWGYM_CURVE_SERVERKEY/PUBLICKEY/SECRETKEY must be 40-character Z85 keys");
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server, 40) || zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, pub, 40) ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec, 40))
        return hw_fail(err, HW_E_IO, "CURVE keys rejected by libzmq: %s", zmq_strerror(zmq_errno()));
    return 0;
}

hwc_client *hwc_connect(hwc_ctx *ctx, const char *endpoint, int timeout_ms, hw_err *err) {
    if (!endpoint || !*endpoint) return hw_fail(err, HW_E_IO, "endpoint: empty"), NULL;
    hwc_client *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->z = ctx ? ctx->z : zmq_ctx_new();
    c->own_z = !ctx;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
    snprintf(c->endpoint, sizeof c->endpoint, "%s", endpoint);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->next_id = ((uint64_t)ts.tv_nsec & 0xffff) << 16; /* ids distinct across reconnects */
    c->sock = zmq_socket(c->z, ZMQ_DEALER);
    int zero = 0;
    if (c->sock) zmq_setsockopt(c->sock, ZMQ_LINGER, &zero, sizeof zero);
    if (c->sock && curve_setup(c->sock, err)) {
        zmq_close(c->sock);
        if (c->own_z) zmq_ctx_term(c->z);
        free(c);
        return NULL;
    }
    if (c->sock) hwc_link_open(&c->link, c->z, c->sock);
    if (!c->sock || zmq_connect(c->sock, endpoint) != 0) {
        hw_fail(err, HW_E_IO, "endpoint %s: %s", endpoint, zmq_strerror(zmq_errno()));
        if (c->sock) hwc_link_close(&c->link, c->sock);
        if (c->sock) zmq_close(c->sock);
        if (c->own_z) zmq_ctx_term(c->z);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void hwc_disconnect(hwc_client *c) {
    if (!c) return;
    hwc_link_close(&c->link, c->sock);
    zmq_close(c->sock);
    if (c->own_z) zmq_ctx_term(c->z);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void hwc_set_timeout(hwc_client *c, int ms) {
    pthread_mutex_lock(&c->mu);
    c->timeout_ms = ms > 0 ? ms : 30000;
    pthread_mutex_unlock(&c->mu);
}

const char *hwc_endpoint(const hwc_client *c) { return c->endpoint; }

/* ---- requests and replies ---- */

/* Starts {"op","v", <nfields more>, "id"}: the id is appended by exchange(). */
void req_begin(req *q, const char *op, int nfields) {
    msgpack_sbuffer_init(&q->sb);
    msgpack_packer_init(&q->pk, &q->sb, msgpack_sbuffer_write);
    q->op = op;
    msgpack_pack_map(&q->pk, (size_t)nfields + 3);
    hw_pack_kv_str(&q->pk, "op", op);
    hw_pack_cstr(&q->pk, "v");
    msgpack_pack_int(&q->pk, HW_PROTOCOL_VERSION);
}

void rep_free(rep *r) {
    if (!r->have) return;
    hw_msg_free(&r->m);
    zmq_msg_close(&r->zm);
    r->have = false;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool id_is(const msgpack_object *root, uint64_t id) {
    const msgpack_object *o = hw_mp_get(root, "id");
    return o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 == id;
}

/* ZeroMQ is done with a big request's buffer: kept as the spare for the next one (hint: its size) */
static void free_sent(void *data, void *hint) { spare_give(SPARE_REQ, data, (size_t)(uintptr_t)hint); }

/* Sends q's buffer without waiting (ZMQ_DONTWAIT). A big request (a lean batch's points) is
 * handed to ZeroMQ as it is, not copied: the buffer is released from q and freed by ZeroMQ once
 * written. Returns zmq_send's result. */
static int send_req(hwc_client *c, req *q) {
    if (q->sb.size < ((size_t)32 << 10)) return zmq_send(c->sock, q->sb.data, q->sb.size, ZMQ_DONTWAIT);
    zmq_msg_t m;
    size_t n = q->sb.size, cap = q->sb.alloc;
    char *data = msgpack_sbuffer_release(&q->sb);
    if (zmq_msg_init_data(&m, data, n, free_sent, (void *)(uintptr_t)cap)) {
        free(data);
        return -1;
    }
    int rc = zmq_msg_send(&m, c->sock, ZMQ_DONTWAIT);
    if (rc < 0) {
        int e = zmq_errno();
        zmq_msg_close(&m); /* frees data */
        errno = e;
    }
    return rc;
}

/* Sends q (consumed) and waits for the reply with its id. On ok=false, fills err from the
 * reply and returns -1 (r is then freed). */
int exchange(hwc_client *c, req *q, rep *r, hw_err *err) {
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&c->mu);
    uint64_t id = ++c->next_id;
    hw_pack_cstr(&q->pk, "id");
    msgpack_pack_uint64(&q->pk, id);
    int timeout = c->timeout_ms;
    int64_t deadline = now_ms() + timeout;
    int rc = -1;
    if (hwc_link_before_send(&c->link, c->endpoint, q->op, err)) goto out;
    zmq_pollitem_t out = {c->sock, 0, ZMQ_POLLOUT, 0};
    if (zmq_poll(&out, 1, timeout) <= 0 || send_req(c, q) < 0) {
        hw_fail(err, HW_E_IO, "%s: cannot send to %s: %s", q->op, c->endpoint,
                zmq_errno() == EAGAIN ? "timed out" : zmq_strerror(zmq_errno()));
        goto out;
    }
    for (;;) {
        int64_t left = deadline - now_ms();
        int n = hwc_link_wait(&c->link, c->sock, left > 0 ? (long)left : 0, c->endpoint, q->op, err);
        if (n < 0) goto out;
        if (n == 0) {
            hw_fail(err, HW_E_IO, "timeout after %d ms waiting for the reply to %s from %s", timeout, q->op, c->endpoint);
            goto out;
        }
        zmq_msg_init(&r->zm);
        if (zmq_msg_recv(&r->zm, c->sock, 0) < 0) {
            zmq_msg_close(&r->zm);
            if (zmq_errno() == EINTR) continue;
            hw_fail(err, HW_E_IO, "%s: receive failed: %s", q->op, zmq_strerror(zmq_errno()));
            goto out;
        }
        hw_limits lim = hw_limits_default;
        lim.max_msg = (size_t)1 << 31;
        lim.max_elems = lim.max_total = MAX_ELEMS;
        lim.max_bin = (size_t)1 << 31;
        hw_err derr;
        if (hw_msg_decode(&r->m, zmq_msg_data(&r->zm), zmq_msg_size(&r->zm), &lim, &derr)) {
            zmq_msg_close(&r->zm); /* reported at once, not by waiting out the timeout (issue 28) */
            hw_fail(err, HW_E_IO, "%s: unreadable reply from %s: %s", q->op, c->endpoint, derr.msg);
            goto out;
        }
        r->have = true;
        if (!id_is(r->m.root, id)) { /* a stale reply to an earlier call that timed out */
            rep_free(r);
            continue;
        }
        break;
    }
    const msgpack_object *ok = hw_mp_get(r->m.root, "ok");
    if (ok && ok->type == MSGPACK_OBJECT_BOOLEAN && ok->via.boolean) {
        rc = 0;
        goto out;
    }
    const msgpack_object *e = hw_mp_get(r->m.root, "error");
    char code[64] = "INTERNAL", msg[HW_ERR_MSG] = "malformed error reply";
    if (e && e->type == MSGPACK_OBJECT_MAP) {
        hw_mp_str(e, "code", "INTERNAL", code, sizeof code, NULL);
        hw_mp_str(e, "message", "", msg, sizeof msg, NULL);
    }
    hw_fail(err, hw_code_from_name(code), "%s", msg);
    rep_free(r);
out:
    pthread_mutex_unlock(&c->mu);
    msgpack_sbuffer_destroy(&q->sb);
    return rc;
}

/* Pipelined calls (see hwgym_client_int.h). */
int exchange_pipe(hwc_client *c, int n, int window, void (*make)(void *ud, int i, req *q), int (*take)(void *ud, int i, rep *r, hw_err *err),
                  void *ud, hw_err *err) {
    pthread_mutex_lock(&c->mu);
    uint64_t base = c->next_id + 1;
    c->next_id += (uint64_t)n;
    int sent = 0, done = 0, rc = 0;
    while (done < n && rc == 0) {
        while (sent < n && sent - done < window) {
            req q;
            make(ud, sent, &q);
            hw_pack_cstr(&q.pk, "id");
            msgpack_pack_uint64(&q.pk, base + (uint64_t)sent);
            if (hwc_link_before_send(&c->link, c->endpoint, q.op, err)) {
                rc = -1;
                msgpack_sbuffer_destroy(&q.sb);
                goto out;
            }
            zmq_pollitem_t out = {c->sock, 0, ZMQ_POLLOUT, 0};
            if (zmq_poll(&out, 1, c->timeout_ms) <= 0 || send_req(c, &q) < 0) {
                rc = hw_fail(err, HW_E_IO, "%s: cannot send to %s: %s", q.op, c->endpoint,
                             zmq_errno() == EAGAIN ? "timed out" : zmq_strerror(zmq_errno()));
                msgpack_sbuffer_destroy(&q.sb);
                goto out;
            }
            msgpack_sbuffer_destroy(&q.sb);
            sent++;
        }
        int k = hwc_link_wait(&c->link, c->sock, c->timeout_ms, c->endpoint, "pipelined call", err);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (k == 0) {
            rc = hw_fail(err, HW_E_IO, "timeout after %d ms waiting for a reply from %s", c->timeout_ms, c->endpoint);
            break;
        }
        rep r;
        memset(&r, 0, sizeof r);
        zmq_msg_init(&r.zm);
        if (zmq_msg_recv(&r.zm, c->sock, 0) < 0) {
            zmq_msg_close(&r.zm);
            if (zmq_errno() == EINTR) continue;
            rc = hw_fail(err, HW_E_IO, "receive failed: %s", zmq_strerror(zmq_errno()));
            break;
        }
        hw_limits lim = hw_limits_default;
        lim.max_msg = (size_t)1 << 31;
        lim.max_elems = lim.max_total = MAX_ELEMS;
        lim.max_bin = (size_t)1 << 31;
        hw_err derr;
        if (hw_msg_decode(&r.m, zmq_msg_data(&r.zm), zmq_msg_size(&r.zm), &lim, &derr)) {
            zmq_msg_close(&r.zm);
            rc = hw_fail(err, HW_E_IO, "unreadable reply from %s: %s", c->endpoint, derr.msg);
            break;
        }
        r.have = true;
        const msgpack_object *id = hw_mp_get(r.m.root, "id");
        if (!id || id->type != MSGPACK_OBJECT_POSITIVE_INTEGER || id->via.u64 < base || id->via.u64 >= base + (uint64_t)sent) {
            rep_free(&r); /* a stale reply to an earlier call */
            continue;
        }
        const msgpack_object *ok = hw_mp_get(r.m.root, "ok");
        if (ok && ok->type == MSGPACK_OBJECT_BOOLEAN && ok->via.boolean) {
            rc = take(ud, (int)(id->via.u64 - base), &r, err);
        } else {
            const msgpack_object *e = hw_mp_get(r.m.root, "error");
            char code[64] = "INTERNAL", msg[HW_ERR_MSG] = "malformed error reply";
            if (e && e->type == MSGPACK_OBJECT_MAP) {
                hw_mp_str(e, "code", "INTERNAL", code, sizeof code, NULL);
                hw_mp_str(e, "message", "", msg, sizeof msg, NULL);
            }
            rc = hw_fail(err, hw_code_from_name(code), "%s", msg);
        }
        rep_free(&r);
        done++;
    }
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

json_t *rep_json(rep *r, hw_err *err) {
    json_t *j = hw_mp_to_json(r->m.root, err);
    if (!j) hw_err_prefix(err, "reply");
    return j;
}

int hwc_call(hwc_client *c, const char *op, const json_t *fields, json_t **reply, hw_err *err) {
    if (fields && !json_is_object(fields)) return hw_fail(err, HW_E_BAD_REQUEST, "hwc_call: fields must be an object");
    req q;
    int n = 0;
    const char *k;
    json_t *v;
    if (fields)
        json_object_foreach((json_t *)fields, k, v) if (strcmp(k, "op") && strcmp(k, "v") && strcmp(k, "id")) n++;
    req_begin(&q, op, n);
    if (fields)
        json_object_foreach((json_t *)fields, k, v) {
            if (!strcmp(k, "op") || !strcmp(k, "v") || !strcmp(k, "id")) continue;
            hw_pack_cstr(&q.pk, k);
            hw_pack_json(&q.pk, v);
        }
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    json_t *j = NULL;
    if (reply) {
        j = rep_json(&r, err);
        *reply = j;
    }
    rep_free(&r);
    return reply && !j ? -1 : 0;
}

int hwc_hello(hwc_client *c, json_t **reply, hw_err *err) {
    json_t *f = json_pack("{ss}", "client", "libhwgym/" HW_VERSION_STRING);
    json_t *j = NULL;
    int rc = hwc_call(c, "hello", f, &j, err);
    json_decref(f);
    if (rc) return -1;
    json_t *p = json_object_get(j, "protocol");
    if (!json_is_integer(p) || json_integer_value(p) != HW_PROTOCOL_VERSION) {
        json_decref(j);
        return hw_fail(err, HW_E_UNSUPPORTED_VERSION, "server at %s speaks protocol %lld; this client speaks %d", c->endpoint,
                       json_is_integer(p) ? (long long)json_integer_value(p) : -1LL, HW_PROTOCOL_VERSION);
    }
    if (reply) *reply = j;
    else json_decref(j);
    return 0;
}

int hwc_ping(hwc_client *c, double *server_time, hw_err *err) {
    json_t *j = NULL;
    if (hwc_call(c, "ping", NULL, &j, err)) return -1;
    if (server_time) *server_time = json_number_value(json_object_get(j, "time"));
    json_decref(j);
    return 0;
}

static int call_get(hwc_client *c, const char *op, const char *key, json_t **out, hw_err *err) {
    json_t *j = NULL;
    if (hwc_call(c, op, NULL, &j, err)) return -1;
    if (out) {
        if (key) {
            *out = json_incref(json_object_get(j, key));
            if (!*out) {
                json_decref(j);
                return hw_fail(err, HW_E_INTERNAL, "%s reply has no '%s'", op, key);
            }
        } else {
            *out = json_incref(j);
        }
    }
    json_decref(j);
    return 0;
}

int hwc_envs(hwc_client *c, json_t **envs, hw_err *err) { return call_get(c, "envs", "envs", envs, err); }
int hwc_stats(hwc_client *c, json_t **stats, hw_err *err) { return call_get(c, "stats", NULL, stats, err); }

/* ---- sessions ---- */

static int64_t space_numel(const json_t *sp) {
    if (!sp) return 0;
    hw_space *s = hw_space_from_json(sp, NULL);
    if (!s) return 0;
    int64_t n = hw_space_numel(s);
    hw_space_free(s);
    return n;
}

static void copy_str(char *dst, size_t cap, const json_t *j) {
    const char *s = json_string_value(j);
    snprintf(dst, cap, "%s", s ? s : "");
}

static int fill_session(hwc_session *s, json_t *j, hw_err *err) {
    memset(s, 0, sizeof *s);
    s->reply = j;
    copy_str(s->token, sizeof s->token, json_object_get(j, "session"));
    copy_str(s->env, sizeof s->env, json_object_get(j, "env"));
    copy_str(s->kind, sizeof s->kind, json_object_get(j, "kind"));
    json_t *ne = json_object_get(j, "num_envs");
    s->num_envs = json_is_integer(ne) && json_integer_value(ne) > 0 ? (int)json_integer_value(ne) : 1;
    s->action_space = json_incref(json_object_get(j, "action_space"));
    s->observation_space = json_incref(json_object_get(j, "observation_space"));
    s->act_numel = space_numel(s->action_space);
    s->obs_numel = space_numel(s->observation_space);
    if (!s->token[0]) {
        hwc_session_free(s);
        return hw_fail(err, HW_E_INTERNAL, "reply has no session token");
    }
    return 0;
}

int hwc_make(hwc_client *c, const char *env, const json_t *config, const hwc_make_opts *o, hwc_session *s, hw_err *err) {
    json_t *f = json_pack("{ss}", "env", env ? env : "");
    if (config) json_object_set(f, "config", (json_t *)config);
    if (o && o->num_envs > 0) json_object_set_new(f, "num_envs", json_integer(o->num_envs));
    if (o && o->agents) json_object_set(f, "agents", (json_t *)o->agents);
    if (o && o->agent_timeout_ms > 0) json_object_set_new(f, "agent_timeout_ms", json_integer(o->agent_timeout_ms));
    json_t *j = NULL;
    int rc = hwc_call(c, "make", f, &j, err);
    json_decref(f);
    if (rc) return -1;
    return fill_session(s, j, err);
}

int hwc_join(hwc_client *c, const char *token, const char *agent, hwc_session *s, hw_err *err) {
    json_t *f = json_pack("{ssss}", "session", token ? token : "", "agent", agent ? agent : "");
    json_t *j = NULL;
    int rc = hwc_call(c, "join", f, &j, err);
    json_decref(f);
    if (rc) return -1;
    if (!json_object_get(j, "session")) json_object_set_new(j, "session", json_string(token));
    if (!json_object_get(j, "kind")) json_object_set_new(j, "kind", json_string("multi"));
    if (fill_session(s, j, err)) return -1;
    snprintf(s->agent, sizeof s->agent, "%s", agent);
    return 0;
}

int hwc_spaces(hwc_client *c, const char *token, const char *env, const json_t *config, json_t **as, json_t **os,
               hw_err *err) {
    json_t *f = json_object();
    if (token) json_object_set_new(f, "session", json_string(token));
    if (env) json_object_set_new(f, "env", json_string(env));
    if (config) json_object_set(f, "config", (json_t *)config);
    json_t *j = NULL;
    int rc = hwc_call(c, "spaces", f, &j, err);
    json_decref(f);
    if (rc) return -1;
    if (as) *as = json_incref(json_object_get(j, "action_space"));
    if (os) *os = json_incref(json_object_get(j, "observation_space"));
    json_decref(j);
    return 0;
}

static int session_op(hwc_client *c, const hwc_session *s, const char *op, const char *k2, const json_t *v2, json_t **reply,
                      hw_err *err) {
    json_t *f = json_pack("{ss}", "session", s->token);
    if (k2) json_object_set(f, k2, (json_t *)v2);
    int rc = hwc_call(c, op, f, reply, err);
    json_decref(f);
    return rc;
}

int hwc_close(hwc_client *c, const hwc_session *s, hw_err *err) { return session_op(c, s, "close", NULL, NULL, NULL, err); }

void hwc_session_free(hwc_session *s) {
    if (!s) return;
    json_decref(s->action_space);
    json_decref(s->observation_space);
    json_decref(s->reply);
    s->action_space = s->observation_space = s->reply = NULL;
}

int hwc_snapshot(hwc_client *c, const hwc_session *s, int64_t *snap, hw_err *err) {
    json_t *j = NULL;
    if (session_op(c, s, "snapshot", NULL, NULL, &j, err)) return -1;
    json_t *v = json_object_get(j, "snapshot");
    bool ok = json_is_integer(v);
    if (snap) *snap = json_integer_value(v);
    json_decref(j);
    return ok ? 0 : hw_fail(err, HW_E_INTERNAL, "snapshot reply has no integer 'snapshot'");
}

int hwc_restore(hwc_client *c, const hwc_session *s, int64_t snap, hw_err *err) {
    json_t *v = json_integer(snap);
    int rc = session_op(c, s, "restore", "snapshot", v, NULL, err);
    json_decref(v);
    return rc;
}

int hwc_drop_snapshot(hwc_client *c, const hwc_session *s, int64_t snap, hw_err *err) {
    json_t *v = json_integer(snap);
    int rc = session_op(c, s, "drop_snapshot", "snapshot", v, NULL, err);
    json_decref(v);
    return rc;
}

/* ---- results ---- */

void hwc_result_free(hwc_result *r) {
    if (!r) return;
    free(r->obs);
    free(r->reward);
    free(r->terminated);
    free(r->truncated);
    json_decref(r->reply);
    memset(r, 0, sizeof *r);
}

static int cmp_kv(const void *a, const void *b) {
    const msgpack_object_kv *x = a, *y = b;
    size_t n = x->key.via.str.size < y->key.via.str.size ? x->key.via.str.size : y->key.via.str.size;
    int c = memcmp(x->key.via.str.ptr, y->key.via.str.ptr, n);
    if (c) return c;
    return (x->key.via.str.size > y->key.via.str.size) - (x->key.via.str.size < y->key.via.str.size);
}

static bool is_wire(const msgpack_object *o) {
    return o->type == MSGPACK_OBJECT_MAP && hw_mp_get(o, "dtype") && hw_mp_get(o, "data");
}

/* Flattens obs (wire array, list, or Dict map of those) into doubles, env-major. */
static int flatten_obs(const msgpack_object *o, int num, msgpack_zone *zone, double **out, size_t *len, hw_err *err) {
    *out = NULL;
    *len = 0;
    if (!o || o->type == MSGPACK_OBJECT_NIL) return 0;
    if (o->type != MSGPACK_OBJECT_MAP || is_wire(o)) {
        hw_array a;
        if (hw_mp_array(o, "obs", zone, MAX_ELEMS, &a, err)) return -1;
        int64_t n = hw_array_numel(&a);
        *out = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!*out) abort();
        for (int64_t i = 0; i < n; i++) (*out)[i] = hw_array_get_f64(&a, i);
        *len = (size_t)n;
        return 0;
    }
    uint32_t nk = o->via.map.size;
    msgpack_object_kv *kv = malloc(sizeof *kv * (nk ? nk : 1));
    if (!kv) abort();
    memcpy(kv, o->via.map.ptr, sizeof *kv * nk);
    for (uint32_t i = 0; i < nk; i++)
        if (kv[i].key.type != MSGPACK_OBJECT_STR) {
            free(kv);
            return hw_fail(err, HW_E_BAD_REQUEST, "obs: Dict keys must be strings");
        }
    qsort(kv, nk, sizeof *kv, cmp_kv);
    hw_array *arr = calloc(nk ? nk : 1, sizeof *arr);
    int64_t total = 0;
    for (uint32_t i = 0; i < nk; i++) {
        if (hw_mp_array(&kv[i].val, "obs field", zone, MAX_ELEMS, &arr[i], err)) {
            free(kv);
            free(arr);
            return -1;
        }
        total += hw_array_numel(&arr[i]);
    }
    double *d = malloc(sizeof(double) * (size_t)(total ? total : 1));
    if (!d) abort();
    size_t k = 0;
    for (int e = 0; e < num; e++)
        for (uint32_t i = 0; i < nk; i++) {
            int64_t per = hw_array_numel(&arr[i]) / num;
            for (int64_t j = 0; j < per; j++) d[k++] = hw_array_get_f64(&arr[i], (int64_t)e * per + j);
        }
    free(kv);
    free(arr);
    *out = d;
    *len = k;
    return 0;
}

/* reward/terminated/truncated: scalar or array of `num`. */
int get_nums(const msgpack_object *root, const char *key, int num, msgpack_zone *zone, double *out, hw_err *err) {
    const msgpack_object *o = hw_mp_get(root, key);
    for (int i = 0; i < num; i++) out[i] = 0;
    if (!o || o->type == MSGPACK_OBJECT_NIL) return 0;
    if (o->type == MSGPACK_OBJECT_BOOLEAN) {
        out[0] = o->via.boolean;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_ARRAY) { /* a plain list, maybe of bools */
        for (uint32_t i = 0; i < o->via.array.size && (int)i < num; i++) {
            const msgpack_object *x = &o->via.array.ptr[i];
            if (x->type == MSGPACK_OBJECT_BOOLEAN) out[i] = x->via.boolean;
            else if (x->type == MSGPACK_OBJECT_FLOAT32 || x->type == MSGPACK_OBJECT_FLOAT64) out[i] = x->via.f64;
            else if (x->type == MSGPACK_OBJECT_POSITIVE_INTEGER) out[i] = (double)x->via.u64;
            else if (x->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) out[i] = (double)x->via.i64;
            else if (x->type == MSGPACK_OBJECT_NIL) out[i] = NAN;
        }
        return 0;
    }
    hw_array a;
    if (hw_mp_array(o, key, zone, MAX_ELEMS, &a, err)) return -1;
    int64_t n = hw_array_numel(&a);
    for (int64_t i = 0; i < n && i < num; i++) out[i] = hw_array_get_f64(&a, i);
    return 0;
}

static int parse_result(rep *r, int num, hwc_result *res, hw_err *err) {
    memset(res, 0, sizeof *res);
    res->num = num;
    msgpack_zone *zone = r->m.up.zone;
    if (flatten_obs(hw_mp_get(r->m.root, "obs"), num, zone, &res->obs, &res->obs_len, err)) goto fail;
    res->reward = calloc((size_t)num, sizeof(double));
    res->terminated = calloc((size_t)num, sizeof(bool));
    res->truncated = calloc((size_t)num, sizeof(bool));
    double *tmp = calloc((size_t)num, sizeof(double));
    if (!res->reward || !res->terminated || !res->truncated || !tmp) abort();
    int rc = get_nums(r->m.root, "reward", num, zone, res->reward, err);
    if (!rc) rc = get_nums(r->m.root, "terminated", num, zone, tmp, err);
    for (int i = 0; i < num; i++) res->terminated[i] = tmp[i] != 0;
    if (!rc) rc = get_nums(r->m.root, "truncated", num, zone, tmp, err);
    for (int i = 0; i < num; i++) res->truncated[i] = tmp[i] != 0;
    free(tmp);
    if (rc) goto fail;
    res->reply = rep_json(r, err);
    if (!res->reply) goto fail;
    res->info = json_object_get(res->reply, "info");
    rep_free(r);
    return 0;
fail:
    rep_free(r);
    hwc_result_free(res);
    return -1;
}

static int session_header(req *q, const hwc_session *s, const char *op, int extra) {
    bool agent = s->agent[0] != 0;
    req_begin(q, op, 1 + agent + extra);
    hw_pack_kv_str(&q->pk, "session", s->token);
    if (agent) hw_pack_kv_str(&q->pk, "agent", s->agent);
    return 0;
}

int hwc_reset(hwc_client *c, const hwc_session *s, const int64_t *seed, const json_t *options, hwc_result *res, hw_err *err) {
    req q;
    session_header(&q, s, "reset", (seed != NULL) + (options != NULL));
    if (seed) {
        hw_pack_cstr(&q.pk, "seed");
        msgpack_pack_int64(&q.pk, *seed);
    }
    if (options) {
        hw_pack_cstr(&q.pk, "options");
        hw_pack_json(&q.pk, options);
    }
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    return parse_result(&r, s->agent[0] ? 1 : s->num_envs, res, err);
}

int hwc_step(hwc_client *c, const hwc_session *s, const hw_array *action, hwc_result *res, hw_err *err) {
    req q;
    session_header(&q, s, "step", 1);
    hw_pack_cstr(&q.pk, "action");
    hw_pack_array(&q.pk, action, 0);
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    return parse_result(&r, s->agent[0] ? 1 : s->num_envs, res, err);
}

static bool discrete(const hwc_session *s) {
    const char *t = json_string_value(json_object_get(s->action_space, "type"));
    return t && !strcmp(t, "Discrete");
}

static int step_flat(hwc_client *c, const hwc_session *s, hw_dtype dt, void *data, size_t n, hwc_result *res, hw_err *err) {
    hw_array a = {.dtype = dt, .data = data};
    int num = s->agent[0] ? 1 : s->num_envs;
    if (!strcmp(s->kind, "vector")) {
        if (num <= 0 || n % (size_t)num) return hw_fail(err, HW_E_BAD_ACTION, "action: %zu elements is not a multiple of num_envs %d", n, num);
        a.shape[0] = num;
        if (discrete(s) && n == (size_t)num) {
            a.ndim = 1;
        } else {
            a.ndim = 2;
            a.shape[1] = (int64_t)n / num;
        }
    } else if (discrete(s) && n == 1) {
        a.ndim = 0;
    } else {
        a.ndim = 1;
        a.shape[0] = (int64_t)n;
    }
    return hwc_step(c, s, &a, res, err);
}

int hwc_step_i64(hwc_client *c, const hwc_session *s, const int64_t *action, size_t n, hwc_result *r, hw_err *err) {
    return step_flat(c, s, HW_DT_INT64, (void *)action, n, r, err);
}

int hwc_step_f64(hwc_client *c, const hwc_session *s, const double *action, size_t n, hwc_result *r, hw_err *err) {
    return step_flat(c, s, HW_DT_FLOAT64, (void *)action, n, r, err);
}

int hwc_step_json(hwc_client *c, const hwc_session *s, const json_t *action, hwc_result *res, hw_err *err) {
    req q;
    session_header(&q, s, "step", 1);
    hw_pack_cstr(&q.pk, "action");
    hw_pack_json(&q.pk, action);
    rep r;
    if (exchange(c, &q, &r, err)) return -1;
    return parse_result(&r, s->agent[0] ? 1 : s->num_envs, res, err);
}
