/* test_pipeline.c - issue 18: big lean batches as pipelined chunk requests, and diag-v0's
 * vectorised lean entries.
 *  - diag-v0's eval_many (int64 points) and eval_many8 (int8 points, as sent on the wire) give
 *    the per-point lean entry's numbers bit for bit, and decline what they do not take;
 *  - a batch sent by libhwgym as several requests in flight gives the same reply, bit for bit
 *    and error for error, as the same batch sent as one request, through a real server;
 *  - against a scripted ROUTER that answers the chunks out of order, and answers one chunk with
 *    an error: results land at the caller's indices, the call fails with the server's error, and
 *    the next call skips the replies left in flight by the failed one;
 *  - the result arrays libhwgym keeps for the next call carry nothing over. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "env_lean.h"
#include "batch_srv.h"
#include "hw_codec.h"
#include "hwgym_client.h"
#include "registry.h"
#include "server.h"

static int counter;

/* ---------------------------------------------------------------- diag-v0's batch entries */

static void *diag(const char *cfgs, const hw_env_family **fam) {
    hw_err e;
    json_t *cfg = json_loads(cfgs, 0, NULL);
    cr_assert(cfg, "%s", cfgs);
    void *env = hw_env_create("diag-v0", cfg, fam, &e);
    cr_assert(env, "%s: %s", cfgs, e.msg);
    json_decref(cfg);
    return env;
}

Test(diag_many, bit_identical_to_the_per_point_entry) {
    const hw_env_lean *L = hw_env_lean_find("diag-v0");
    cr_assert(L && L->eval_many && L->eval_many8);
    static const char *spaces[] = {"multidiscrete", "discrete", "multibinary"};
    static const int dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 64};
    static const int choices[] = {2, 3, 8, 64};
    enum { N = 300 };
    unsigned seed = 11;
    for (size_t s = 0; s < 3; s++)
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
            for (size_t ci = 0; ci < sizeof choices / sizeof choices[0]; ci++) {
                char cfgs[160];
                snprintf(cfgs, sizeof cfgs, "{\"action_space\":\"%s\",\"dims\":%d,\"choices\":%d,\"target_seed\":%u}", spaces[s], dims[di],
                         choices[ci], (unsigned)(di * 7 + ci));
                const hw_env_family *fam;
                void *env = diag(cfgs, &fam);
                const hw_space *as = fam->action_space(env);
                int64_t d = hw_space_numel(as), c = s == 2 ? 2 : choices[ci];
                int64_t *p = malloc(sizeof(int64_t) * N * (size_t)d);
                int8_t *p8 = malloc((size_t)(N * d));
                for (int64_t i = 0; i < N * d; i++) p8[i] = (int8_t)(p[i] = rand_r(&seed) % c);
                double r[N], r8[N], dist[N], dist8[N];
                uint8_t f[N], f8[N];
                cr_assert_eq(L->eval_many(env, NULL, p, N, d, r, f, dist), 0, "%s", cfgs);
                cr_assert_eq(L->eval_many8(env, NULL, p8, N, d, r8, f8, dist8), 0, "%s", cfgs);
                for (int k = 0; k < N; k++) {
                    hw_act act = {(size_t)d, p + k * d, NULL};
                    double rk, dk;
                    bool fk;
                    hw_err e;
                    cr_assert_eq(L->eval(env, NULL, &act, &rk, &fk, &dk, &e), 0);
                    cr_assert(!memcmp(&rk, &r[k], 8) && !memcmp(&dk, &dist[k], 8), "%s point %d: %.17g/%.17g, per point %.17g/%.17g", cfgs,
                              k, r[k], dist[k], rk, dk);
                    cr_assert(!memcmp(&rk, &r8[k], 8) && !memcmp(&dk, &dist8[k], 8), "%s point %d (int8)", cfgs, k);
                    cr_assert(f[k] && f8[k] && fk);
                }
                /* out of the space (too big, negative): declined, for the server to name the point */
                int64_t keep = p[N * d / 2];
                p[N * d / 2] = p8[N * d / 2] = (int8_t)c;
                cr_assert_eq(L->eval_many(env, NULL, p, N, d, r, f, NULL), -1);
                cr_assert_eq(L->eval_many8(env, NULL, p8, N, d, r8, f8, NULL), -1);
                p[N * d - 1] = p8[N * d - 1] = -1;
                p[N * d / 2] = p8[N * d / 2] = (int8_t)keep;
                cr_assert_eq(L->eval_many(env, NULL, p, N, d, r, f, NULL), -1);
                cr_assert_eq(L->eval_many8(env, NULL, p8, N, d, r8, f8, NULL), -1);
                cr_assert_eq(L->eval_many8(env, NULL, p8, N, d + 1, r8, f8, NULL), -1, "a point of another length");
                free(p);
                free(p8);
                fam->destroy(env);
            }
    /* step_us (the deadline is honoured point by point) and a Box space: declined */
    const hw_env_family *fam;
    int64_t p[4] = {0, 1, 2, 3};
    int8_t p8[4] = {0, 1, 2, 3};
    double r;
    uint8_t f;
    void *env = diag("{\"step_us\":1}", &fam);
    cr_assert_eq(L->eval_many(env, NULL, p, 1, 4, &r, &f, NULL), -1);
    cr_assert_eq(L->eval_many8(env, NULL, p8, 1, 4, &r, &f, NULL), -1);
    fam->destroy(env);
    env = diag("{\"action_space\":\"box\"}", &fam);
    cr_assert_eq(L->eval_many(env, NULL, p, 1, 4, &r, &f, NULL), -1);
    cr_assert_eq(L->eval_many8(env, NULL, p8, 1, 4, &r, &f, NULL), -1);
    fam->destroy(env);
}

/* ---------------------------------------------------------------- a real server */



static bool same_f64(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* every field of two lean results equal, bit for bit and error for error */
static void same_results(const hwc_lean *a, const hwc_lean *b) {
    cr_assert_eq(a->n, b->n);
    cr_assert_eq(a->nerrors, b->nerrors);
    cr_assert_eq(a->nmetrics, b->nmetrics);
    for (int j = 0; j < a->nmetrics; j++) cr_assert_str_eq(a->names[j], b->names[j]);
    for (size_t k = 0; k < a->n; k++) {
        cr_assert(same_f64(a->reward[k], b->reward[k]), "point %zu: reward %.17g vs %.17g", k, a->reward[k], b->reward[k]);
        cr_assert_eq(a->feasible[k], b->feasible[k], "point %zu", k);
        cr_assert_eq(a->cache_hit[k], b->cache_hit[k], "point %zu", k);
        for (int j = 0; j < a->nmetrics; j++) cr_assert(same_f64(a->vals[(size_t)j * a->n + k], b->vals[(size_t)j * b->n + k]), "point %zu", k);
        cr_assert_eq(!a->error[k], !b->error[k], "point %zu: %s vs %s", k, a->error[k], b->error[k]);
        if (a->error[k]) cr_assert_str_eq(a->error[k], b->error[k]);
    }
}

Test(pipeline, chunks_answer_as_one_request) {
    enum { N = 120000, D = 3 }; /* three chunks of 40,000 in flight, or one request ("all" metrics) */
    int64_t *p = malloc(sizeof(int64_t) * N * D);
    unsigned seed = 5;
    for (int i = 0; i < N * D; i++) p[i] = rand_r(&seed) % 8;
    static const int bad[] = {5, 39999, 40000, 119999}; /* about the chunks' edges */
    for (int i = 0; i < 4; i++) p[bad[i] * D + i % D] = 8 + i;
    srv s;
    hwc_client *c = srv_up(&s, 0, NULL, 200000); /* max_batch: the whole batch as one request too */
    json_t *cfg = json_pack("{s:i}", "dims", D);
    hw_array a = {HW_DT_INT64, 2, {N, D}, p};
    const char *dist[] = {"distance"};
    hwc_lean piped, one;
    hw_err e;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, dist, 1, &piped, &e), 0, "%s", e.msg);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, NULL, -1, &one, &e), 0, "%s", e.msg);
    cr_assert_eq(one.nmetrics, 1);
    same_results(&piped, &one);
    cr_assert_eq(piped.nerrors, 4);
    for (int i = 0; i < 4; i++) {
        char want[96];
        snprintf(want, sizeof want, "BAD_ACTION: points[%d]: action element %d (p%d): %d out of range", bad[i], i % D, i % D, 8 + i);
        cr_assert(piped.error[bad[i]] && strstr(piped.error[bad[i]], want), "%s (want '%s')", piped.error[bad[i]], want);
    }
    hwc_lean_free(&one);
    /* a second call while the first's results are alive, then after freeing them: the kept
     * block must start clean (no error carried over) */
    for (int i = 0; i < 4; i++) p[bad[i] * D + i % D] = 1;
    hwc_lean clean;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, dist, 1, &clean, &e), 0, "%s", e.msg);
    cr_assert(piped.reward != clean.reward);
    cr_assert_eq(clean.nerrors, 0);
    hwc_lean_free(&piped);
    hwc_lean_free(&clean);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, dist, 1, &clean, &e), 0, "%s", e.msg);
    cr_assert_eq(clean.nerrors, 0);
    for (size_t k = 0; k < clean.n; k++) cr_assert(!clean.error[k] && !isnan(clean.reward[k]) && clean.feasible[k], "point %zu", k);
    hwc_lean_free(&clean);
    json_decref(cfg);
    free(p);
    srv_down(&s, c);
}

/* ---------------------------------------------------------------- a scripted server */

typedef struct fake {
    void *z, *sock;
    char ep[128];
    int failed_chunk; /* -1: none */
} fake;

typedef struct inreq {
    zmq_msg_t ident, body;
    hw_msg m;
    uint64_t id;
    hw_array pts;
    msgpack_zone zone;
} inreq;

static void recv_req(fake *f, inreq *q) {
    zmq_msg_init(&q->ident);
    zmq_msg_init(&q->body);
    cr_assert_geq(zmq_msg_recv(&q->ident, f->sock, 0), 0);
    cr_assert(zmq_msg_more(&q->ident));
    cr_assert_geq(zmq_msg_recv(&q->body, f->sock, 0), 0);
    hw_limits lim = hw_limits_default;
    lim.max_msg = lim.max_bin = (size_t)1 << 30;
    lim.max_elems = lim.max_total = (size_t)1 << 26;
    hw_err e;
    cr_assert_eq(hw_msg_decode(&q->m, zmq_msg_data(&q->body), zmq_msg_size(&q->body), &lim, &e), 0, "%s", e.msg);
    const msgpack_object *id = hw_mp_get(q->m.root, "id");
    cr_assert(id && id->type == MSGPACK_OBJECT_POSITIVE_INTEGER);
    q->id = id->via.u64;
    msgpack_zone_init(&q->zone, 1024);
    cr_assert_eq(hw_mp_array(hw_mp_get(q->m.root, "points"), "points", &q->zone, (size_t)1 << 26, &q->pts, &e), 0, "%s", e.msg);
}

static void send_body(fake *f, inreq *q, msgpack_sbuffer *sb) {
    zmq_msg_send(&q->ident, f->sock, ZMQ_SNDMORE);
    zmq_send(f->sock, sb->data, sb->size, 0);
    msgpack_sbuffer_destroy(sb);
    hw_msg_free(&q->m);
    zmq_msg_close(&q->body);
    msgpack_zone_destroy(&q->zone);
}

static void pack_vec(msgpack_packer *pk, const char *key, hw_dtype dt, int64_t n, const void *v) {
    hw_pack_cstr(pk, key);
    hw_array a = {dt, 1, {n}, (void *)v};
    hw_pack_array(pk, &a, 0);
}

/* reward = 100 x0 + x1 of each point; distance = -reward; feasible: x0 even; cache_hit: x1 odd;
 * the chunk's point 3 fails, named by its index in the chunk as a server does */
static void reply_ok(fake *f, inreq *q) {
    int64_t n = q->pts.shape[0];
    double *r = malloc(sizeof(double) * (size_t)(n + 1)), *dist = malloc(sizeof(double) * (size_t)(n + 1));
    uint8_t *fe = malloc((size_t)n + 1), *hit = malloc((size_t)n + 1);
    for (int64_t k = 0; k < n; k++) {
        int64_t x0 = hw_array_get_i64(&q->pts, 2 * k), x1 = hw_array_get_i64(&q->pts, 2 * k + 1);
        r[k] = (double)(100 * x0 + x1);
        dist[k] = -r[k];
        fe[k] = x0 % 2 == 0;
        hit[k] = x1 % 2 == 1;
    }
    r[3] = NAN;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 7);
    hw_pack_cstr(&pk, "id");
    msgpack_pack_uint64(&pk, q->id);
    hw_pack_cstr(&pk, "ok");
    msgpack_pack_true(&pk);
    pack_vec(&pk, "reward", HW_DT_FLOAT64, n, r);
    pack_vec(&pk, "feasible", HW_DT_BOOL, n, fe);
    hw_pack_cstr(&pk, "metrics");
    msgpack_pack_map(&pk, 1);
    pack_vec(&pk, "distance", HW_DT_FLOAT64, n, dist);
    pack_vec(&pk, "cache_hit", HW_DT_BOOL, n, hit);
    hw_pack_cstr(&pk, "errors");
    msgpack_pack_array(&pk, 1);
    msgpack_pack_map(&pk, 3);
    hw_pack_cstr(&pk, "index");
    msgpack_pack_int64(&pk, 3);
    hw_pack_kv_str(&pk, "code", "BAD_ACTION");
    hw_pack_kv_str(&pk, "message", "points[3]: scripted failure");
    send_body(f, q, &sb);
    free(r);
    free(dist);
    free(fe);
    free(hit);
}

static void reply_err(fake *f, inreq *q) {
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    const msgpack_object *id = hw_mp_get(q->m.root, "id");
    hw_pack_error(&pk, id, HW_E_LIMIT, "scripted: this chunk is refused");
    send_body(f, q, &sb);
}

/* call 1: three chunks answered last first; call 2: three chunks, the middle one refused and
 * answered first, the others after it (stale for the client); call 3: one request */
static void *fake_run(void *arg) {
    fake *f = arg;
    inreq q[3];
    for (int i = 0; i < 3; i++) recv_req(f, &q[i]);
    for (int i = 2; i >= 0; i--) reply_ok(f, &q[i]);
    for (int i = 0; i < 3; i++) recv_req(f, &q[i]);
    reply_err(f, &q[1]);
    reply_ok(f, &q[2]);
    reply_ok(f, &q[0]);
    recv_req(f, &q[0]);
    reply_ok(f, &q[0]);
    return NULL;
}

static void check_scripted(const hwc_lean *b, const int64_t *p, size_t n, size_t chunk) {
    cr_assert_eq(b->n, n);
    cr_assert_eq(b->nerrors, (n + chunk - 1) / chunk);
    for (size_t k = 0; k < n; k++) {
        if (k % chunk == 3) {
            char want[64];
            snprintf(want, sizeof want, "BAD_ACTION: points[%zu]: scripted failure", k);
            cr_assert(b->error[k] && !strcmp(b->error[k], want), "%s (want '%s')", b->error[k], want);
            cr_assert(isnan(b->reward[k]));
            continue;
        }
        int64_t x0 = p[2 * k], x1 = p[2 * k + 1];
        cr_assert_null(b->error[k], "point %zu: %s", k, b->error[k]);
        cr_assert_eq(b->reward[k], (double)(100 * x0 + x1), "point %zu: %g", k, b->reward[k]);
        cr_assert_eq(b->vals[k], -(double)(100 * x0 + x1), "point %zu", k);
        cr_assert_eq(b->feasible[k], x0 % 2 == 0, "point %zu", k);
        cr_assert_eq(b->cache_hit[k], x1 % 2 == 1, "point %zu", k);
    }
}

Test(pipeline, replies_out_of_order_and_stale_replies) {
    fake f = {0};
    f.z = zmq_ctx_new();
    f.sock = zmq_socket(f.z, ZMQ_ROUTER);
    snprintf(f.ep, sizeof f.ep, "ipc:///tmp/hwgym-tpipe-fake-%d-%d.sock", (int)getpid(), counter++);
    cr_assert_eq(zmq_bind(f.sock, f.ep), 0);
    pthread_t th;
    pthread_create(&th, NULL, fake_run, &f);
    hw_err e;
    hwc_client *c = hwc_connect(NULL, f.ep, 20000, &e);
    cr_assert(c, "%s", e.msg);
    enum { N = 150000 }; /* three chunks of 50,000 */
    int64_t *p = malloc(sizeof(int64_t) * N * 2);
    for (int k = 0; k < N; k++) p[2 * k] = k % 7, p[2 * k + 1] = (k / 7) % 11; /* no chunk starts like another */
    hw_array a = {HW_DT_INT64, 2, {N, 2}, p};
    const char *dist[] = {"distance"};
    hwc_lean b;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", NULL, &a, dist, 1, &b, &e), 0, "%s", e.msg);
    check_scripted(&b, p, N, 50000);
    hwc_lean_free(&b);
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", NULL, &a, dist, 1, &b, &e), -1);
    cr_assert_eq(e.code, HW_E_LIMIT);
    cr_assert_str_eq(e.msg, "scripted: this chunk is refused");
    cr_assert_null(b.reward, "a failed call holds no results");
    hw_array small = {HW_DT_INT64, 2, {40, 2}, p + 2 * 700}; /* one request; the two stale replies come first */
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "diag-v0", NULL, &small, dist, 1, &b, &e), 0, "%s", e.msg);
    check_scripted(&b, p + 2 * 700, 40, 40);
    hwc_lean_free(&b);
    pthread_join(th, NULL);
    hwc_disconnect(c);
    zmq_close(f.sock);
    zmq_ctx_term(f.z);
    free(p);
}
