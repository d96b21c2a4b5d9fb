/* table.c - the session table (router thread): token -> session, with the bookkeeping a
 * session's entry carries (its worker's count, its peer's LRU list, its memory estimate).
 * Moved from router.c. Declared in router_int.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "router_int.h"

/* FNV-1a over 8-byte words, then the tail's bytes (a 32-character token: four steps) */
static uint64_t tok_hashn(const char *tok, size_t n) {
    uint64_t h = 1469598103934665603ull, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, tok + i, 8);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ (unsigned char)tok[i]) * 1099511628211ull;
    return h;
}

static uint64_t tok_hash(const char *tok) { return tok_hashn(tok, strlen(tok)); }

session *table_getn(router *r, const char *tok, size_t n) {
    if (n >= sizeof ((session *)0)->token) return NULL; /* longer than any token */
    /* the session found last (a client stepping one env asks for it every time): no hash */
    session *c = r->last_found;
    if (c && memcmp(c->token, tok, n) == 0 && c->token[n] == 0) return c;
    for (table_ent *e = r->buckets[tok_hashn(tok, n) % r->nbuckets]; e; e = e->next)
        if (memcmp(e->s->token, tok, n) == 0 && e->s->token[n] == 0) return r->last_found = e->s;
    return NULL;
}

session *table_get(router *r, const char *tok) { return table_getn(r, tok, strlen(tok)); }

void table_put(router *r, session *s) {
    if (r->nsessions + 1 > r->nbuckets) {
        size_t nb = r->nbuckets * 2;
        table_ent **b = calloc(nb, sizeof *b);
        if (!b) abort();
        for (size_t i = 0; i < r->nbuckets; i++) {
            table_ent *e = r->buckets[i];
            while (e) {
                table_ent *n = e->next;
                size_t k = tok_hash(e->s->token) % nb;
                e->next = b[k];
                b[k] = e;
                e = n;
            }
        }
        free(r->buckets);
        r->buckets = b;
        r->nbuckets = nb;
    }
    table_ent *e = malloc(sizeof *e);
    if (!e) abort();
    e->s = s;
    size_t k = tok_hash(s->token) % r->nbuckets;
    e->next = r->buckets[k];
    r->buckets[k] = e;
    r->nsessions++;
    s->in_table = true;
}

void table_del(router *r, session *s) {
    if (r->last_found == s) r->last_found = NULL; /* only sessions in the table are found */
    if (!s->in_table) return;
    for (table_ent **p = &r->buckets[tok_hash(s->token) % r->nbuckets]; *p; p = &(*p)->next)
        if ((*p)->s == s) {
            table_ent *e = *p;
            *p = e->next;
            free(e);
            r->nsessions--;
            r->wsessions[s->worker]--;
            peer *p = s->peer;
            peers_session_del(s);
            peers_gc(&r->P, p);
            if (s->mem_counted) r->mem -= s->mem_est;
            s->mem_counted = false;
            break;
        }
    s->in_table = false;
}

void session_free(session *s) {
    json_decref(s->config);
    free(s);
}

int new_token(char out[33]) {
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += (size_t)n;
    }
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

