/* peers.c - see peers.h */
#include "peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static uint64_t bytes_hash(const void *p, size_t n, uint64_t h) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t peers_key_of(task *t, bool curve, char *label, size_t cap) {
    const char *uid = curve && t->has_body ? zmq_msg_gets(&t->body, "User-Id") : NULL;
    if (uid && *uid) {
        if (label) snprintf(label, cap, "key %.12s...", uid);
        return bytes_hash(uid, strlen(uid), 0x9e3779b97f4a7c15ull);
    }
    const char *addr = t->has_body ? zmq_msg_gets(&t->body, "Peer-Address") : NULL;
    if (addr && *addr) {
        if (label) snprintf(label, cap, "%s", addr);
        return bytes_hash(addr, strlen(addr), 1469598103934665603ull);
    }
    /* inproc: no address; the connection (routing id) is all there is */
    if (label) snprintf(label, cap, "connection");
    return t->nenv ? bytes_hash(zmq_msg_data(&t->env[0]), zmq_msg_size(&t->env[0]), 0x5bd1e9955bd1e995ull) : 0;
}

uint64_t peers_client_of(task *t, bool curve) {
    const char *uid = curve && t->has_body ? zmq_msg_gets(&t->body, "User-Id") : NULL;
    if (uid && *uid) return bytes_hash(uid, strlen(uid), 0x9e3779b97f4a7c15ull);
    uint64_t h = t->nenv ? bytes_hash(zmq_msg_data(&t->env[0]), zmq_msg_size(&t->env[0]), 0x5bd1e9955bd1e995ull) : 1;
    return h ? h : 1; /* 0 is HW_CACHE_PEER_UNKNOWN */
}

peer *peers_get(peers *P, uint64_t key, const char *label, bool create) {
    peer **head = &P->b[key % PEER_BUCKETS];
    for (peer *p = *head; p; p = p->next)
        if (p->key == key) return p;
    if (!create) return NULL;
    peer *p = calloc(1, sizeof *p);
    if (!p) abort();
    p->key = key;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->next = *head;
    *head = p;
    P->npeers++;
    return p;
}

void peers_gc(peers *P, peer *p) {
    if (!p || p->sessions || p->holds || p->qhead || p->in_ring) return;
    for (peer **q = &P->b[p->key % PEER_BUCKETS]; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            free(p);
            P->npeers--;
            return;
        }
}

void peers_free_all(peers *P) {
    for (int i = 0; i < PEER_BUCKETS; i++)
        while (P->b[i]) {
            peer *p = P->b[i];
            P->b[i] = p->next;
            free(p);
        }
    P->npeers = 0;
    P->ring = NULL;
}

/* ---------------------------------------------------------------- sessions, least recently used first */

void peers_session_add(peer *p, session *s) {
    s->peer = p;
    s->lru_next = NULL;
    s->lru_prev = p->lru_tail;
    if (p->lru_tail) p->lru_tail->lru_next = s;
    else p->lru_head = s;
    p->lru_tail = s;
    p->sessions++;
}

void peers_session_del(session *s) {
    peer *p = s->peer;
    if (!p) return;
    if (s->lru_prev) s->lru_prev->lru_next = s->lru_next;
    else p->lru_head = s->lru_next;
    if (s->lru_next) s->lru_next->lru_prev = s->lru_prev;
    else p->lru_tail = s->lru_prev;
    s->lru_prev = s->lru_next = NULL;
    p->sessions--;
    s->peer = NULL;
}

void peers_session_touch(session *s, double now) {
    s->last_active = now;
    peer *p = s->peer;
    if (!p || p->lru_tail == s) return;
    peers_session_del(s);
    peers_session_add(p, s);
}

session *peers_lru_idle(peer *p, double now, double idle_s) {
    /* the list is in order of last activity; a session with a task in flight is skipped (its
     * last_active is when it was dispatched, so it may sit early in the list) */
    for (session *s = p->lru_head; s; s = s->lru_next) {
        if (now - s->last_active < idle_s) return NULL;
        if (s->inflight == 0 && !s->dead) return s;
    }
    return NULL;
}

peer *peers_heaviest_idle(peers *P, double now, double idle_s) {
    peer *best = NULL;
    double best_at = 0;
    for (int i = 0; i < PEER_BUCKETS; i++)
        for (peer *p = P->b[i]; p; p = p->next) {
            if (!p->sessions || (best && p->sessions < best->sessions)) continue;
            session *s = peers_lru_idle(p, now, idle_s);
            if (s && (!best || p->sessions > best->sessions || s->last_active < best_at)) {
                best = p;
                best_at = s->last_active;
            }
        }
    return best;
}

void peers_remember(peers *P, const char *token, char why) {
    size_t i = P->nreclaimed++ % PEER_RECLAIMED;
    snprintf(P->reclaimed[i].token, sizeof P->reclaimed[i].token, "%s", token);
    P->reclaimed[i].why = why;
}

char peers_reclaimed(const peers *P, const char *token) {
    size_t n = P->nreclaimed < PEER_RECLAIMED ? P->nreclaimed : PEER_RECLAIMED;
    for (size_t i = 0; i < n; i++)
        if (strcmp(P->reclaimed[i].token, token) == 0) return P->reclaimed[i].why;
    return 0;
}

/* ---------------------------------------------------------------- cost of a peer's recent work */

bool peers_cost_get(const peer *p, uint64_t key, double *cost_s, double *setup_s) {
    for (int i = 0; key && i < p->ncost; i++)
        if (p->costs[i].key == key) {
            *cost_s = p->costs[i].cost_s;
            *setup_s = p->costs[i].setup_s;
            return true;
        }
    return false;
}

void peers_cost_put(peer *p, uint64_t key, double cost_s, double setup_s) {
    if (!key || cost_s < 0) return;
    int i = 0;
    while (i < p->ncost && p->costs[i].key != key) i++;
    if (i == p->ncost) {
        if (p->ncost < PEER_COSTS) p->ncost++;
        else { /* the oldest goes */
            memmove(&p->costs[0], &p->costs[1], sizeof p->costs[0] * (PEER_COSTS - 1));
            i = PEER_COSTS - 1;
        }
    }
    p->costs[i].key = key;
    p->costs[i].cost_s = cost_s;
    p->costs[i].setup_s = setup_s;
}

/* msgpack writer into a buffer of WORK_CFG_MAX bytes that fails (stopping the packer) past it */
enum { WORK_CFG_MAX = 64 * 1024 };
typedef struct cfg_buf {
    char *p;
    size_t len;
} cfg_buf;

static int cfg_write(void *data, const char *buf, size_t len) {
    cfg_buf *c = data;
    if (len > WORK_CFG_MAX - c->len) return -1;
    memcpy(c->p + c->len, buf, len);
    c->len += len;
    return 0;
}

uint64_t peers_work_key(const char *env_id, const char *token, const void *config_mp) {
    uint64_t h = bytes_hash(env_id, strlen(env_id), 1469598103934665603ull);
    if (token) return bytes_hash(token, strlen(token), h) | 1;
    const msgpack_object *cfg = config_mp;
    if (cfg) { /* the config's msgpack bytes, hashed as written; packing stops past 64 KiB */
        cfg_buf cb = {malloc(WORK_CFG_MAX), 0};
        if (!cb.p) abort();
        msgpack_packer pk;
        msgpack_packer_init(&pk, &cb, cfg_write);
        bool big = msgpack_pack_object(&pk, *cfg) != 0;
        h = bytes_hash(cb.p, cb.len, h);
        free(cb.p);
        if (big) return 0;
    }
    return h | 1;
}

/* ---------------------------------------------------------------- the fair queue */

static void ring_add(peers *P, peer *p) {
    if (p->in_ring) return;
    if (!P->ring) {
        p->rnext = p->rprev = p;
        P->ring = p;
    } else { /* just before the next peer to serve: served last in this round */
        p->rnext = P->ring;
        p->rprev = P->ring->rprev;
        p->rprev->rnext = p;
        P->ring->rprev = p;
    }
    p->in_ring = true;
}

static void ring_del(peers *P, peer *p) {
    if (!p->in_ring) return;
    if (p->rnext == p) P->ring = NULL;
    else {
        p->rprev->rnext = p->rnext;
        p->rnext->rprev = p->rprev;
        if (P->ring == p) P->ring = p->rnext;
    }
    p->rnext = p->rprev = NULL;
    p->in_ring = false;
}

void peers_push(peers *P, task *t) {
    peer *p = t->peer;
    t->next = NULL;
    if (p->qtail) p->qtail->next = t;
    else p->qhead = t;
    p->qtail = t;
    P->nqueued++;
    ring_add(P, p);
}

task *peers_pick(peers *P, bool (*ok)(const task *t, void *ud), void *ud) {
    peer *start = P->ring;
    if (!start) return NULL;
    peer *p = start;
    do {
        task *t = p->qhead;
        if (t && ok(t, ud)) {
            p->qhead = t->next;
            if (!p->qhead) p->qtail = NULL;
            t->next = NULL;
            P->nqueued--;
            P->ring = p->rnext;
            if (!p->qhead) ring_del(P, p);
            return t;
        }
        p = p->rnext;
    } while (p != start);
    return NULL;
}
