/* Units of server/peers.c: the fair queue's round robin, the least-recently-used idle session of
 * a peer and the heaviest holder, the reclaimed-token memory and the cost memory. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

static task *mk_task(peer *p, int id) {
    task *t = calloc(1, sizeof *t);
    t->peer = p;
    t->slice = id; /* a tag for the test */
    return t;
}

static bool any(const task *t, void *ud) {
    (void)t;
    (void)ud;
    return true;
}

static bool odd_only(const task *t, void *ud) {
    (void)ud;
    return t->slice % 2 == 1;
}

Test(peers, the_fair_queue_serves_peers_round_robin_and_each_in_order) {
    peers P = {0};
    peer *a = peers_get(&P, 1, "a", true), *b = peers_get(&P, 2, "b", true);
    cr_assert_eq(peers_get(&P, 1, NULL, false), a);
    /* a queues 4 tasks before b queues 2: they still alternate */
    for (int i = 0; i < 4; i++) peers_push(&P, mk_task(a, 10 + i));
    for (int i = 0; i < 2; i++) peers_push(&P, mk_task(b, 20 + i));
    int want[] = {10, 20, 11, 21, 12, 13};
    for (int i = 0; i < 6; i++) {
        task *t = peers_pick(&P, any, NULL);
        cr_assert(t);
        cr_assert_eq(t->slice, want[i], "pick %d: got %d", i, t->slice);
        free(t);
    }
    cr_assert_null(peers_pick(&P, any, NULL));
    cr_assert_eq(P.nqueued, 0);
    /* a predicate that refuses a peer's head skips that peer, not the others */
    peers_push(&P, mk_task(a, 30));
    peers_push(&P, mk_task(b, 31));
    task *t = peers_pick(&P, odd_only, NULL);
    cr_assert_eq(t->slice, 31);
    free(t);
    cr_assert_null(peers_pick(&P, odd_only, NULL));
    free(peers_pick(&P, any, NULL));
    peers_gc(&P, a);
    cr_assert_null(peers_get(&P, 1, NULL, false), "a peer holding nothing is freed");
    peers_free_all(&P);
}

Test(peers, lru_idle_sessions_and_the_heaviest_holder) {
    peers P = {0};
    peer *a = peers_get(&P, 1, "a", true), *b = peers_get(&P, 2, "b", true);
    session s[5];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 3; i++) {
        peers_session_add(a, &s[i]);
        peers_session_touch(&s[i], 10.0 + i); /* a: s0 at 10, s1 at 11, s2 at 12 */
    }
    for (int i = 3; i < 5; i++) {
        peers_session_add(b, &s[i]);
        peers_session_touch(&s[i], 5.0); /* b: older, but holds fewer */
    }
    cr_assert_eq(peers_lru_idle(a, 20.0, 1.0), &s[0]);
    s[0].inflight = 1; /* busy: skipped */
    cr_assert_eq(peers_lru_idle(a, 20.0, 1.0), &s[1]);
    s[0].inflight = 0;
    cr_assert_null(peers_lru_idle(a, 10.5, 1.0), "nothing idle for a second yet");
    peers_session_touch(&s[0], 13.0); /* used again: now the most recent */
    cr_assert_eq(peers_lru_idle(a, 20.0, 1.0), &s[1]);
    cr_assert_eq(peers_heaviest_idle(&P, 20.0, 1.0), a, "a holds 3, b 2");
    cr_assert_eq(peers_heaviest_idle(&P, 12.5, 1.0), a, "a's s1 has been idle 1.5 s");
    cr_assert_eq(peers_heaviest_idle(&P, 11.5, 1.0), b, "only b has a session idle long enough");
    peers_session_del(&s[1]);
    cr_assert_eq(a->sessions, 2);
    cr_assert_eq(peers_lru_idle(a, 20.0, 1.0), &s[2]);
    peers_free_all(&P);
}

Test(peers, reclaimed_tokens_and_costs_are_remembered) {
    peers P = {0};
    peers_remember(&P, "0123abcd", 'p');
    peers_remember(&P, "ffff0000", 't');
    cr_assert_eq(peers_reclaimed(&P, "0123abcd"), 'p');
    cr_assert_eq(peers_reclaimed(&P, "ffff0000"), 't');
    cr_assert_eq(peers_reclaimed(&P, "00000000"), 0);
    peer *a = peers_get(&P, 1, "a", true);
    double c, su;
    uint64_t k1 = peers_work_key("diag-v0", "tok1", NULL), k2 = peers_work_key("diag-v0", "tok2", NULL);
    cr_assert_neq(k1, k2);
    cr_assert_not(peers_cost_get(a, k1, &c, &su));
    peers_cost_put(a, k1, 0.5, 0.1);
    cr_assert(peers_cost_get(a, k1, &c, &su) && c == 0.5 && su == 0.1);
    for (int i = 0; i < PEER_COSTS; i++) peers_cost_put(a, 100 + (uint64_t)i * 2 + 1, 1e-6, 0);
    cr_assert_not(peers_cost_get(a, k1, &c, &su), "the oldest of more than PEER_COSTS is forgotten");
    cr_assert_not(peers_cost_get(a, 0, &c, &su), "key 0 is never remembered");
    peers_free_all(&P);
}

/* a session-less batch's key hashes its config's msgpack: equal configs give equal keys, others
 * differ, and a config of more than 64 KiB gives 0 (not remembered) after packing at most 64 KiB
 * of it, so a batch of any size can be keyed (big batches start from the remembered cost) */
static msgpack_object unpacked(msgpack_sbuffer *sb, msgpack_zone *z) {
    msgpack_object o;
    size_t off = 0;
    cr_assert_eq(msgpack_unpack(sb->data, sb->size, &off, z, &o), MSGPACK_UNPACK_SUCCESS);
    return o;
}

Test(peers, work_key_of_a_config_is_bounded) {
    msgpack_sbuffer a, b, big;
    msgpack_zone z;
    msgpack_zone_init(&z, 1 << 16);
    msgpack_sbuffer *sbs[] = {&a, &b, &big};
    for (int i = 0; i < 3; i++) {
        msgpack_sbuffer_init(sbs[i]);
        msgpack_packer pk;
        msgpack_packer_init(&pk, sbs[i], msgpack_sbuffer_write);
        msgpack_pack_map(&pk, 1);
        msgpack_pack_str(&pk, 4);
        msgpack_pack_str_body(&pk, "dims", 4);
        if (i < 2) msgpack_pack_int(&pk, 4 + i);
        else { /* a list of 70,000 small numbers: ~70 KB of msgpack */
            msgpack_pack_array(&pk, 70000);
            for (int j = 0; j < 70000; j++) msgpack_pack_int(&pk, j & 63);
        }
    }
    msgpack_object oa = unpacked(&a, &z), ob = unpacked(&b, &z), obig = unpacked(&big, &z);
    uint64_t ka = peers_work_key("diag-v0", NULL, &oa), kb = peers_work_key("diag-v0", NULL, &ob);
    cr_assert_neq(ka, 0);
    cr_assert_eq(ka, peers_work_key("diag-v0", NULL, &oa), "the same config gives the same key");
    cr_assert_neq(ka, kb);
    cr_assert_neq(ka, peers_work_key("sched-v0", NULL, &oa), "the env is part of the key");
    cr_assert_neq(peers_work_key("diag-v0", NULL, NULL), 0, "no config: the env's key");
    cr_assert_eq(peers_work_key("diag-v0", NULL, &obig), 0, "a config over 64 KiB is not remembered");
    for (int i = 0; i < 3; i++) msgpack_sbuffer_destroy(sbs[i]);
    msgpack_zone_destroy(&z);
}
