/* peers.h - clients told apart for fairness (docs/security.md, "Fairness between clients").
 * A peer is its CURVE public key when CURVE is on, else its address (ZeroMQ's Peer-Address: the
 * IP for tcp, "localhost:UID:GID:PID" for ipc), else (inproc) its connection. Connections are
 * free; peers are not.
 * Owns: the peer table (router thread only), each peer's sessions in least-recently-used order
 * (the per-peer session cap and the reclaim of idle sessions when a cap or the table is full),
 * its queued request bytes (--max-queued-peer-mb), and the fair queue: session-less work
 * (evaluate and spaces without a session, evaluate_batch) waits in its peer's FIFO and peers
 * with work are served round robin (peers_pick). Calls nothing of the router: a leaf. */
#ifndef HW_PEERS_H
#define HW_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "task.h"

#define PEER_COSTS 8 /* remembered costs of recent work per peer */

typedef struct peer {
    uint64_t key;
    char label[48];             /* printable: address, or the CURVE key's first characters */
    size_t sessions;
    session *lru_head, *lru_tail; /* its sessions, least recently used first */
    size_t queued;              /* request bytes of its requests in the server (queued or at workers) */
    int64_t holds;              /* its requests in the server (taken in on_request, let go in finish): it lives while > 0 */
    task *qhead, *qtail;        /* session-less work waiting for a worker */
    struct {
        uint64_t key;           /* env and config (peers_work_key) */
        double cost_s, setup_s; /* seconds per point, and to build the env, last measured */
    } costs[PEER_COSTS];        /* so its next batch of the same work starts sized right */
    int ncost;
    int running;                /* its session-less tasks at workers */
    struct peer *next;          /* hash chain */
    struct peer *rnext, *rprev; /* ring of peers with queued work */
    bool in_ring;
} peer;

#define PEER_BUCKETS 1024
#define PEER_RECLAIMED 4096 /* reclaimed session tokens remembered for the UNKNOWN_SESSION message */

typedef struct peers {
    peer *b[PEER_BUCKETS];
    size_t npeers;
    peer *ring;                 /* the next peer to serve */
    size_t nqueued;             /* tasks waiting in all queues */
    struct {
        char token[33];
        char why;               /* 'p': the peer's cap, 't': the table */
    } reclaimed[PEER_RECLAIMED];
    size_t nreclaimed;
} peers;

/* The peer a request came from (curve: the server runs CURVE; then User-Id is the key), and its
 * label for messages (label NULL: the key alone, without formatting one). */
uint64_t peers_key_of(task *t, bool curve, char *label, size_t cap);
/* The narrower identity cache_hit answers to (docs/cache.md): the CURVE key when CURVE is on,
 * else the connection, so two agents on one host do not learn each other's points. Never 0. */
uint64_t peers_client_of(task *t, bool curve);
/* Finds (create: makes) the peer with this key. */
peer *peers_get(peers *P, uint64_t key, const char *label, bool create);
/* Frees the peer when it holds nothing (no session, no task, nothing queued). */
void peers_gc(peers *P, peer *p);
void peers_free_all(peers *P);

/* LRU list of a peer's sessions: add at make, touch on activity, remove when it leaves the table. */
void peers_session_add(peer *p, session *s);
void peers_session_touch(session *s, double now);
void peers_session_del(session *s);
/* The least recently used session of p idle (no task in flight) for at least idle_s, or NULL. */
session *peers_lru_idle(peer *p, double now, double idle_s);
/* The peer holding the most sessions that has one idle for at least idle_s (ties: the longest idle). */
peer *peers_heaviest_idle(peers *P, double now, double idle_s);
/* Remembers a reclaimed token (why: 'p' or 't'); peers_reclaimed returns why, or 0. */
void peers_remember(peers *P, const char *token, char why);
char peers_reclaimed(const peers *P, const char *token);

/* The cost of a peer's work last time (key 0: not remembered); false when unknown. */
bool peers_cost_get(const peer *p, uint64_t key, double *cost_s, double *setup_s);
void peers_cost_put(peer *p, uint64_t key, double cost_s, double setup_s);
/* A key for "this env with this config": env_id with a session's token, or with the bytes of a
 * session-less request's config (msgpack); 0 (not remembered) for a config over 64 KiB (packing
 * it to be hashed stops there, so a request of any size costs at most 64 KiB of packing). */
uint64_t peers_work_key(const char *env_id, const char *token, const void *config_mp);

/* The fair queue. push appends t to its peer's FIFO (t->peer); pick takes the head task of the
 * next peer (round robin) for which ok(head, ud) holds, and moves the ring past that peer. */
void peers_push(peers *P, task *t);
task *peers_pick(peers *P, bool (*ok)(const task *t, void *ud), void *ud);

#endif
