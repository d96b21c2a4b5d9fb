/* Issue 29: an env that packs its step info straight into the reply (env.h info_pack) answers
 * byte for byte what the JSON path answers. Three servers take the same requests: `json` builds
 * every info as a JSON object (--info-json, the pre-issue-29 path), `inl` packs infos on the
 * router thread (inline), `wrk` packs them on a worker (--inline-us 0). Every reply (reset and
 * step; single, vector with autoresets, multi-agent) must be the same bytes on all three; on a
 * difference the test names the first field that differs. Actions are random, over configs whose
 * mappings are valid, infeasible (reason) and invalid (no metrics), so every branch of the info's
 * key count is taken. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "harness.h"
#include "hw_codec.h"

enum { J = 0, INL, WRK, NS };
static const char *const names[NS] = {"--info-json", "inline", "worker"};

static srv S[NS];
static void *clients[NS]; /* one per server */

static void start3(void) {
    for (int k = 0; k < NS; k++) {
        hw_server_opts o;
        hw_server_default_opts(&o);
        o.workers = 2;
        o.inline_us = k == WRK ? 0 : 1e6; /* inl: every measured op inline, however loaded the machine */
        o.info_json = k == J;
        srv_start_opts(&S[k], &o);
        clients[k] = cli_new(S[k].ep);
    }
}

static void stop3(void) {
    for (int k = 0; k < NS; k++) {
        cli_close(clients[k]);
        cr_assert_eq(srv_stop(&S[k]), 0);
    }
}

static json_t *to_json(bytes b) {
    hw_msg m;
    hw_err e;
    json_t *j = NULL;
    if (hw_msg_decode(&m, b.data, b.n, NULL, &e) == 0) j = hw_mp_to_json(m.root, &e);
    hw_msg_free(&m);
    return j;
}

/* The first field of `a`'s info (or of the reply) whose value differs in `b`, as text. */
static void first_difference(json_t *a, json_t *b, char *out, size_t cap) {
    if (!a || !b) {
        snprintf(out, cap, "a reply does not decode as one msgpack map (a map's key count is wrong?)");
        return;
    }
    snprintf(out, cap, "same fields, different bytes (key order or number encoding)");
    const char *k;
    json_t *v;
    json_object_foreach(a, k, v) {
        json_t *w = json_object_get(b, k);
        if (!strcmp(k, "info") && json_is_object(v) && json_is_object(w)) {
            const char *ik;
            json_t *iv;
            json_object_foreach(v, ik, iv) if (!json_equal(iv, json_object_get(w, ik))) {
                snprintf(out, cap, "info.%s", ik);
                return;
            }
            if (json_object_size(v) != json_object_size(w)) {
                snprintf(out, cap, "info has %zu keys against %zu", json_object_size(v), json_object_size(w));
                return;
            }
        }
        if (!json_equal(v, w)) {
            snprintf(out, cap, "%s", k);
            return;
        }
    }
}

/* Compares the three replies byte for byte; returns the first one (caller frees), decoded. */
static json_t *same_bytes(bytes *r, const char *what) {
    for (int k = 1; k < NS; k++) {
        if (r[k].n == r[J].n && !memcmp(r[k].data, r[J].data, r[J].n)) continue;
        json_t *a = to_json(r[J]), *b = to_json(r[k]);
        char field[256];
        first_difference(a, b, field, sizeof field);
        char *ta = json_dumps(a, JSON_COMPACT), *tb = json_dumps(b, JSON_COMPACT);
        cr_assert_fail("%s: the %s server's reply (%zu B) differs from the %s one's (%zu B): %s\n%s\n%s", what, names[k], r[k].n, names[J], r[J].n,
                field, ta, tb);
    }
    json_t *j = to_json(r[J]);
    for (int k = 0; k < NS; k++) free(r[k].data);
    return j;
}

/* make on every server: the session tokens differ, so they are kept per server */
static void make_all(void **c, const char *make, char tok[NS][64]) {
    for (int k = 0; k < NS; k++) {
        json_t *r = call(c[k], "%s", make);
        cr_assert_null(err_code(r), "%s", err_msg(r));
        snprintf(tok[k], 64, "%s", json_string_value(json_object_get(r, "session")));
        json_decref(r);
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static int64_t rnd(int64_t n) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

/* one random action; copies > 1: a list of that many (a vector session's) */
static json_t *random_action(const json_t *nvec, int copies) {
    json_t *all = json_array();
    for (int c = 0; c < copies; c++) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(nvec); i++) json_array_append_new(a, json_integer(rnd(json_integer_value(json_array_get(nvec, i)))));
        if (copies == 1) {
            json_decref(all);
            return a;
        }
        json_array_append_new(all, a);
    }
    return all;
}

/* the choices per action element: MultiDiscrete's nvec, or [n] for a Discrete space */
static json_t *nvec_of(void *c, const char *tok) {
    json_t *r = call(c, "{\"op\":\"spaces\",\"v\":1,\"session\":\"%s\"}", tok);
    json_t *as = json_object_get(r, "action_space"), *nv = json_object_get(as, "nvec");
    nv = nv ? json_incref(nv) : json_pack("[O]", json_object_get(as, "n"));
    json_decref(r);
    cr_assert(json_is_array(nv) && json_integer_value(json_array_get(nv, 0)) > 0, "no nvec or n in the action space");
    return nv;
}

/* One request to all three servers, each with its own session token. */
static json_t *req_all(void **c, char tok[NS][64], json_t *req, const char *what) {
    bytes r[NS];
    for (int k = 0; k < NS; k++) {
        json_object_set_new(req, "session", json_string(tok[k]));
        send_packed(c[k], req);
        r[k] = recv_bytes(c[k]);
    }
    json_decref(req);
    return same_bytes(r, what);
}

/* counts of the kinds of info seen: maestro-v0: a valid feasible mapping, an infeasible one, an
 * invalid one (no metrics); placement-v0: a valid placement, one the compiler rectified */
typedef struct {
    int feasible, infeasible, invalid, steps;
    int finished, illegal; /* sched-v0: steps that finished a layer, illegal actions */
} kinds;

static void count_kind(kinds *n, const json_t *info) {
    n->finished += json_object_get(info, "finished_layer") != NULL;
    n->illegal += json_is_true(json_object_get(info, "invalid_action"));
    json_t *v = json_object_get(info, "valid");
    if (v) {
        n->steps++;
        *(json_is_true(v) ? &n->feasible : &n->infeasible) += 1;
        return;
    }
    if (!json_object_get(info, "feasible")) return;
    n->steps++;
    if (!json_object_get(info, "runtime")) n->invalid++;
    else if (json_is_true(json_object_get(info, "feasible"))) n->feasible++;
    else n->infeasible++;
}

static void single_session(void **c, const char *env, const char *config, int steps, int episode, kinds *n) {
    char make[512], tok[NS][64];
    snprintf(make, sizeof make, "{\"op\":\"make\",\"v\":1,\"env\":\"%s\",\"config\":%s}", env, config);
    make_all(c, make, tok);
    json_t *nvec = nvec_of(c[0], tok[0]);
    for (int i = 0; i < steps; i++) {
        char what[600];
        json_t *req, *r;
        if (i % episode == 0) {
            snprintf(what, sizeof what, "%s: reset before step %d", config, i);
            r = req_all(c, tok, json_pack("{s:s,s:i,s:i,s:i}", "op", "reset", "v", 1, "id", i, "seed", i), what);
            json_decref(r);
        }
        req = json_pack("{s:s,s:i,s:i,s:o}", "op", "step", "v", 1, "id", i, "action", random_action(nvec, 1));
        char *at = json_dumps(json_object_get(req, "action"), JSON_COMPACT);
        snprintf(what, sizeof what, "%s: step %d, action %s", config, i, at);
        free(at);
        r = req_all(c, tok, req, what);
        cr_assert_null(err_code(r), "%s: %s", what, err_msg(r));
        count_kind(n, json_object_get(r, "info"));
        json_decref(r);
    }
    json_decref(nvec);
}

typedef struct {
    const char *env, *config;
    int steps, episode; /* steps taken, a reset every `episode` steps */
} scase;

/* maestro-v0: valid, infeasible (reason) and invalid (no metrics) mappings, both action spaces */
static const scase MAESTRO[] = {
    {"maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"episode_length\":25}", 150, 25},
    {"maestro-v0", "{\"model\":\"resnet50\",\"layer\":3,\"action_space\":\"gamma17\",\"objective\":\"edp\",\"max_pes\":64,"
                   "\"enforce_buffers\":false,\"episode_length\":40}", 150, 40},
    {"maestro-v0", "{\"model\":\"vgg16\",\"layer\":1,\"objective\":\"energy\",\"l1_size\":64,\"episode_length\":30}", 100, 30},
};
/* placement-v0 (info lists and nested per-memory objects): random placements on two memory
 * hierarchies, most of them rectified by the compiler; diag-v0 (distance and t, and an action
 * mask when asked for: its reset info is the mask or empty); sched-v0: legal and illegal actions
 * (random over the whole Discrete space), a layer's episode, and network mode, whose steps that
 * finish a layer carry its table and totals */
static const scase OTHERS[] = {
    {"placement-v0", "{\"episode_steps\":20}", 60, 20},
    {"placement-v0", "{\"workload\":\"bert\",\"hw\":\"nnp-i\",\"episode_steps\":10}", 30, 10},
    {"diag-v0", "{\"dims\":4,\"episode_length\":16}", 50, 16},
    {"diag-v0", "{\"dims\":3,\"choices\":5,\"action_mask\":true,\"episode_length\":8}", 40, 8},
    {"sched-v0", "{\"steps_per_layer\":8}", 24, 8},
    {"sched-v0", "{\"mode\":\"network\",\"steps_per_layer\":3,\"model\":\"mobilenet_v3\"}", 40, 1000},
};

/* runs the cases on three fresh servers (stop3() after): the kinds of info seen */
static kinds run_cases(const scase *cs, size_t n) {
    start3();
    kinds k = {0};
    for (size_t i = 0; i < n; i++) single_session(clients, cs[i].env, cs[i].config, cs[i].steps, cs[i].episode, &k);
    return k;
}

Test(info_pack, maestro_steps_answer_the_json_paths_bytes, .timeout = 120) {
    kinds n = run_cases(MAESTRO, sizeof MAESTRO / sizeof *MAESTRO);
    /* the comparison covers every branch of the info's key count */
    cr_assert_eq(n.steps, 400);
    cr_assert_gt(n.feasible, 20, "%d feasible mappings", n.feasible);
    cr_assert_gt(n.infeasible, 20, "%d infeasible mappings", n.infeasible);
    cr_assert_gt(n.invalid, 5, "%d invalid mappings", n.invalid);
    stop3();
}

Test(info_pack, placement_diag_and_sched_steps_answer_the_json_paths_bytes, .timeout = 180) {
    kinds n = run_cases(OTHERS, sizeof OTHERS / sizeof *OTHERS);
    cr_assert_eq(n.steps, 90, "placement-v0 steps counted: %d", n.steps); /* only placement's infos have "valid" */
    cr_assert_gt(n.infeasible, 10, "%d rectified placements", n.infeasible);
    cr_assert_geq(n.finished, 10, "%d steps finished a layer", n.finished);
    cr_assert_geq(n.illegal, 5, "%d illegal actions", n.illegal);
    cr_assert_lt(n.illegal, 60, "%d illegal actions of 64", n.illegal);
    stop3();
}

/* vector sessions (infos as a list, with autoresets, whose info stays JSON) and a multi-agent
 * barrier (one step answered to two agents) */
Test(info_pack, vector_and_multi_agent_replies_answer_the_json_paths_bytes, .timeout = 120) {
    start3();
    char tok[NS][64];
    make_all(clients, "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"num_envs\":3,\"config\":{\"model\":\"mobilenet_v2\",\"layer\":3,"
                "\"max_pes\":128,\"episode_length\":4}}",
             tok);
    json_t *nvec = nvec_of(clients[0], tok[0]);
    json_decref(req_all(clients, tok, json_pack("{s:s,s:i,s:i,s:i}", "op", "reset", "v", 1, "id", 0, "seed", 5), "vector reset"));
    int autoresets = 0;
    for (int i = 1; i <= 30; i++) {
        char what[64];
        snprintf(what, sizeof what, "vector step %d", i);
        json_t *r = req_all(clients, tok, json_pack("{s:s,s:i,s:i,s:o}", "op", "step", "v", 1, "id", i, "action", random_action(nvec, 3)), what);
        cr_assert_null(err_code(r), "%s: %s", what, err_msg(r));
        size_t e;
        json_t *info;
        json_array_foreach(json_object_get(r, "info"), e, info) autoresets += json_is_true(json_object_get(info, "autoreset"));
        json_decref(r);
    }
    cr_assert_geq(autoresets, 12, "autoresets: %d", autoresets);
    /* a vector reset of some envs only: the others answer an empty info */
    json_decref(req_all(clients, tok,
                        json_pack("{s:s,s:i,s:i,s:{s:[b,b,b]}}", "op", "reset", "v", 1, "id", 99, "options", "reset_mask", 1, 0, 1),
                        "vector reset with a mask"));

    /* multi-agent: agents a (loop order .. tiles) and b (the rest), one DEALER each per server */
    make_all(clients, "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"model\":\"mobilenet_v2\",\"layer\":3,\"max_pes\":128,\"episode_length\":1000},"
                "\"agents\":[{\"name\":\"a\",\"dims\":[0,1,2,3,4]},{\"name\":\"b\",\"dims\":[5,6,7,8,9]}]}",
             tok);
    void *ag[2][NS];
    const char *agent[2] = {"a", "b"};
    for (int k = 0; k < NS; k++)
        for (int a = 0; a < 2; a++) {
            ag[a][k] = cli_new(S[k].ep);
            json_t *r = call(ag[a][k], "{\"op\":\"join\",\"v\":1,\"session\":\"%s\",\"agent\":\"%s\"}", tok[k], agent[a]);
            cr_assert_null(err_code(r), "%s", err_msg(r));
            json_decref(r);
        }
    int steps = 0;
    for (int i = 0; i < 21; i++) {
        json_t *full = i ? random_action(nvec, 1) : NULL;
        for (int a = 0; a < 2; a++) { /* both parts sent before any reply: the barrier completes */
            json_t *req = i ? json_pack("{s:s,s:i,s:i,s:s}", "op", "step", "v", 1, "id", i, "agent", agent[a])
                            : json_pack("{s:s,s:i,s:i,s:s,s:i}", "op", "reset", "v", 1, "id", i, "agent", agent[a], "seed", 2);
            if (i) {
                json_t *part = json_array();
                for (int d = 5 * a; d < 5 * a + 5; d++) json_array_append(part, json_array_get(full, (size_t)d));
                json_object_set_new(req, "action", part);
            }
            for (int k = 0; k < NS; k++) {
                json_object_set_new(req, "session", json_string(tok[k]));
                send_packed(ag[a][k], req);
            }
            json_decref(req);
        }
        json_decref(full);
        for (int a = 0; a < 2; a++) {
            bytes r[NS];
            for (int k = 0; k < NS; k++) r[k] = recv_bytes(ag[a][k]);
            char what[64];
            snprintf(what, sizeof what, "multi-agent %s %d, agent %s", i ? "step" : "reset", i, agent[a]);
            json_t *j = same_bytes(r, what);
            cr_assert_null(err_code(j), "%s: %s", what, err_msg(j));
            steps += i && json_object_size(json_object_get(j, "info")) > 0;
            json_decref(j);
        }
    }
    cr_assert_eq(steps, 40);
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < NS; k++) cli_close(ag[a][k]);
    json_decref(nvec);
    stop3();
}

/* mmap-v0 (issue 29, its info packed too): steps choose a legal action from the reply's mask, and
 * now and then an illegal one, which loses the game (its info names the action and carries the
 * final metrics); games played to their end carry the metrics of a won or lost game. */
Test(info_pack, mmap_steps_answer_the_json_paths_bytes, .timeout = 180) {
    start3();
    char tok[NS][64];
    make_all(clients, "{\"op\":\"make\",\"v\":1,\"env\":\"mmap-v0\",\"config\":{\"problem\":\"rnn_2\"}}", tok);
    int ends = 0, illegal = 0, steps = 0, episode = 0;
    json_t *r = req_all(clients, tok, json_pack("{s:s,s:i,s:i}", "op", "reset", "v", 1, "seed", 0), "mmap-v0 reset");
    while (ends < 4 && steps < 20000) {
        json_t *m = json_object_get(json_object_get(r, "info"), "action_mask");
        int legal[3], nl = 0, bad[3], nb = 0;
        for (int a = 0; a < 3; a++) {
            if (json_integer_value(json_array_get(m, (size_t)a))) legal[nl++] = a;
            else bad[nb++] = a;
        }
        cr_assert_gt(nl, 0, "no legal action at step %d", steps);
        /* an illegal action once in the second game */
        int64_t a = episode == 1 && nb && !illegal ? bad[0] : legal[rnd(nl)];
        json_decref(r);
        char what[128];
        snprintf(what, sizeof what, "mmap-v0 step %d (game %d), action %lld", steps, episode, (long long)a);
        r = req_all(clients, tok, json_pack("{s:s,s:i,s:[I]}", "op", "step", "v", 1, "action", (json_int_t)a), what);
        cr_assert_null(err_code(r), "%s: %s", what, err_msg(r));
        steps++;
        json_t *info = json_object_get(r, "info");
        illegal += json_object_get(info, "illegal_action") != NULL;
        if (json_is_true(json_object_get(r, "terminated"))) {
            cr_assert(json_object_get(info, "feasible"), "%s: a finished game's info has no metrics", what);
            ends++, episode++;
            json_decref(r);
            r = req_all(clients, tok, json_pack("{s:s,s:i}", "op", "reset", "v", 1), "mmap-v0 reset");
        }
    }
    json_decref(r);
    cr_assert_eq(ends, 4, "%d games finished in %d steps", ends, steps);
    cr_assert_eq(illegal, 1);
    stop3();
}
