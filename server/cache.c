/* cache.c - see cache.h. Chained hash table over the key's first 8 bytes, an LRU list (head =
 * most recently used), a byte budget charged per entry (struct + record), and a prepared
 * SELECT/INSERT pair on the optional SQLite file (WAL, busy timeout, one write transaction per
 * flush). */
#include "cache.h"
#include "cache_files.h"
#include "cache_key.h"
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ent {
    unsigned char key[HW_CACHE_KEY];
    double reward;
    bool feasible;
    uint64_t peer; /* who evaluated it (HW_CACHE_PEER_UNKNOWN: read from the file) */
    unsigned char *rec;
    size_t len;
    struct ent *hnext, *prev, *next;
} ent;

typedef struct pend {
    unsigned char key[HW_CACHE_KEY];
    uint64_t peer; /* the client evaluating it */
    hw_cache_waiter *w, **tail;
    struct pend *next;
} pend;

#define PEND_BUCKETS 4096

struct hw_cache {
    ent **tab;
    size_t nbuckets, n, bytes, max_bytes;
    ent *head, *tail;
    pend *pending[PEND_BUCKETS];
    uint64_t hits, misses, merged, evictions, disk_hits, disk_writes, disk_rejected;
    sqlite3 *db;
    sqlite3_stmt *sel, *ins;
    bool in_tx, shared;
    char *path;
    hw_keyer *keyer;
    hw_cache_files *files;
};

static pend **pslot(hw_cache *c, const unsigned char *key);

static uint64_t h64(const unsigned char *k) {
    uint64_t h;
    memcpy(&h, k, 8);
    return h;
}

static size_t ent_cost(size_t len) { return sizeof(ent) + len + 2 * sizeof(void *); }

static void lru_unlink(hw_cache *c, ent *e) {
    if (e->prev) e->prev->next = e->next;
    else c->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_front(hw_cache *c, ent *e) {
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static ent **slot(hw_cache *c, const unsigned char *key) {
    ent **p = &c->tab[h64(key) & (c->nbuckets - 1)];
    while (*p && memcmp((*p)->key, key, HW_CACHE_KEY)) p = &(*p)->hnext;
    return p;
}

static void grow(hw_cache *c) {
    size_t nb = c->nbuckets * 2;
    ent **t = calloc(nb, sizeof *t);
    if (!t) return; /* keep the longer chains */
    for (size_t i = 0; i < c->nbuckets; i++)
        for (ent *e = c->tab[i], *n; e; e = n) {
            n = e->hnext;
            size_t b = h64(e->key) & (nb - 1);
            e->hnext = t[b];
            t[b] = e;
        }
    free(c->tab);
    c->tab = t;
    c->nbuckets = nb;
}

static void evict(hw_cache *c) {
    while (c->bytes > c->max_bytes && c->tail) {
        ent *e = c->tail;
        lru_unlink(c, e);
        *slot(c, e->key) = e->hnext;
        c->bytes -= ent_cost(e->len);
        c->n--;
        c->evictions++;
        free(e->rec);
        free(e);
    }
}

static ent *mem_put(hw_cache *c, const unsigned char *key, double reward, bool feasible, uint64_t peer, const unsigned char *rec, size_t len) {
    if (ent_cost(len) > c->max_bytes) return NULL;
    ent **p = slot(c, key);
    ent *e = *p;
    if (e) {
        lru_unlink(c, e);
        c->bytes -= ent_cost(e->len);
        free(e->rec);
    } else {
        e = calloc(1, sizeof *e);
        if (!e) abort();
        memcpy(e->key, key, HW_CACHE_KEY);
        *p = e;
        c->n++;
    }
    e->reward = reward;
    e->feasible = feasible;
    e->peer = peer;
    e->rec = malloc(len ? len : 1);
    if (!e->rec) abort();
    if (len) memcpy(e->rec, rec, len);
    e->len = len;
    c->bytes += ent_cost(len);
    lru_front(c, e);
    evict(c); /* e is at the front: evicted only if it alone exceeds the budget (checked above) */
    if (c->n > c->nbuckets) grow(c);
    return e;
}

/* The file is created 0600; an existing one writable by group or others is refused (anyone
 * could plant results in it). */
static int db_create_private(const char *path, hw_err *err) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: not a regular file", path);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
            return hw_fail(err, HW_E_BAD_CONFIG,
                           "--cache %s: the file is writable by other users, who could plant results in it; chmod 600 it (docs/cache.md)", path);
        return 0;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno != EEXIST) return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: cannot create: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return 0;
}

/* The file is data only: exactly the table hwgym_cache with its five columns, nothing else (no
 * trigger, view, index or other table). Anything else is refused with a message saying what was
 * found; the operator removes the file (or points --cache elsewhere) and the server rebuilds it. */
static int db_check_schema(sqlite3 *db, const char *path, hw_err *err) {
    sqlite3_stmt *st = NULL;
    int rc = 0, tables = 0;
    if (sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_schema", -1, &st, NULL) != SQLITE_OK)
        return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: not a cache file: %s", path, sqlite3_errmsg(db));
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        if (type && name && !strcmp(type, "table") && !strcmp(name, "hwgym_cache")) {
            tables++;
            continue;
        }
        rc = hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: holds a %.20s '%.60s' besides the cache table; a cache file holds data only "
                     "(remove the file to rebuild it, docs/cache.md)", path, type ? type : "?", name ? name : "?");
    }
    sqlite3_finalize(st);
    if (rc || !tables) return rc;
    static const char *const want[][2] = {{"key", "BLOB"}, {"reward", "REAL"}, {"feasible", "INTEGER"}, {"metrics", "BLOB"}, {"created", "REAL"}};
    if (sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info('hwgym_cache')", -1, &st, NULL) != SQLITE_OK)
        return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: %s", path, sqlite3_errmsg(db));
    int n = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0), *type = (const char *)sqlite3_column_text(st, 1);
        if (n >= 5 || !name || !type || strcmp(name, want[n][0]) || strcmp(type, want[n][1]))
            rc = hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: the cache table's column %d is '%.60s %.20s', expected '%s %s' (remove the file to rebuild it)",
                         path, n + 1, name ? name : "?", type ? type : "?", n < 5 ? want[n][0] : "(none)", n < 5 ? want[n][1] : "");
        n++;
    }
    sqlite3_finalize(st);
    if (!rc && n != 5) rc = hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: the cache table has %d columns, expected 5 (remove the file to rebuild it)", path, n);
    return rc;
}

static int db_open(hw_cache *c, const char *path, hw_err *err) {
    if (db_create_private(path, err)) return -1;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK)
        return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: %s", path, c->db ? sqlite3_errmsg(c->db) : "cannot open");
    /* no code from the file runs here: no triggers, no views, no schema functions */
    sqlite3_db_config(c->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(c->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(c->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(c->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_busy_timeout(c->db, 10000);
    if (db_check_schema(c->db, path, err)) return -1;
    char *msg = NULL;
    const char *ddl = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                      "CREATE TABLE IF NOT EXISTS hwgym_cache (key BLOB PRIMARY KEY, reward REAL, feasible INTEGER,"
                      " metrics BLOB NOT NULL, created REAL) WITHOUT ROWID;";
    if (sqlite3_exec(c->db, ddl, NULL, NULL, &msg) != SQLITE_OK) {
        hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: %s", path, msg ? msg : "cannot create the cache table");
        sqlite3_free(msg);
        return -1;
    }
    if (sqlite3_prepare_v2(c->db, "SELECT reward, feasible, metrics FROM hwgym_cache WHERE key = ?", -1, &c->sel, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT OR IGNORE INTO hwgym_cache VALUES (?, ?, ?, ?, julianday('now'))", -1, &c->ins, NULL) !=
            SQLITE_OK)
        return hw_fail(err, HW_E_BAD_CONFIG, "--cache %s: %s", path, sqlite3_errmsg(c->db));
    return 0;
}

hw_cache *hw_cache_open_server(const hw_server_opts *o, size_t max_bytes, hw_err *err) {
    hw_cache *c = hw_cache_open(o->cache_path, max_bytes, err);
    if (!c) return NULL;
    hw_files files;
    hw_policy_files(o, &files);
    c->files = hw_cache_files_new(&files);
    c->shared = o->cache_shared;
    return c;
}

hw_cache *hw_cache_open(const char *path, size_t max_bytes, hw_err *err) {
    hw_cache *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->nbuckets = 1024;
    c->tab = calloc(c->nbuckets, sizeof *c->tab);
    if (!c->tab) abort();
    c->max_bytes = max_bytes;
    c->keyer = hw_keyer_new();
    if (path) {
        c->path = strdup(path);
        if (db_open(c, path, err)) {
            hw_cache_close(c);
            return NULL;
        }
    }
    return c;
}

void hw_cache_close(hw_cache *c) {
    if (!c) return;
    hw_cache_flush(c);
    for (ent *e = c->head, *n; e; e = n) {
        n = e->next;
        free(e->rec);
        free(e);
    }
    for (int i = 0; i < PEND_BUCKETS; i++)
        for (pend *p = c->pending[i], *n; p; p = n) {
            n = p->next;
            hw_cache_waiters_free(p->w);
            free(p);
        }
    sqlite3_finalize(c->sel);
    sqlite3_finalize(c->ins);
    if (c->db) sqlite3_close(c->db);
    free(c->tab);
    free(c->path);
    hw_keyer_free(c->keyer);
    hw_cache_files_free(c->files);
    free(c);
}

hw_keyer *hw_cache_keyer(hw_cache *c) { return c->keyer; }

int hw_cache_key_files(hw_cache *c, const json_t *cfg, const msgpack_object *cfg_mp, unsigned char prefix[32]) {
    return hw_cache_files_mix(c->files, c->keyer, cfg, cfg_mp, prefix);
}

bool hw_cache_shared(const hw_cache *c) { return c->shared; }

static void fill(hw_cache_val *out, const ent *e) {
    out->reward = e->reward;
    out->feasible = e->feasible;
    out->rec = e->rec;
    out->len = e->len;
    out->peer = e->peer;
}

/* A row from the file is served only when it could have been written by a server: a finite
 * reward of plausible size (or NULL: a failed point's NaN), feasible 0 or 1, and a metrics blob of
 * at most HW_CACHE_MAX_REC bytes that is a well-formed metric record. */
static bool row_ok(sqlite3_stmt *st) {
    int rt = sqlite3_column_type(st, 0);
    if (rt != SQLITE_NULL && rt != SQLITE_FLOAT && rt != SQLITE_INTEGER) return false;
    double r = sqlite3_column_double(st, 0);
    if (rt != SQLITE_NULL && (!isfinite(r) || fabs(r) > HW_CACHE_MAX_REWARD)) return false;
    if (sqlite3_column_type(st, 1) != SQLITE_INTEGER) return false;
    int64_t f = sqlite3_column_int64(st, 1);
    if (f != 0 && f != 1) return false;
    if (sqlite3_column_type(st, 2) != SQLITE_BLOB) return sqlite3_column_type(st, 2) == SQLITE_TEXT && sqlite3_column_bytes(st, 2) == 0;
    int n = sqlite3_column_bytes(st, 2);
    if (n < 0 || n > HW_CACHE_MAX_REC) return false;
    const unsigned char *p = sqlite3_column_blob(st, 2);
    for (int i = 0; i < n;) { /* [u8 name length][name][f64] repeated */
        int nl = p[i];
        if (nl == 0 || i + 1 + nl + 8 > n) return false;
        i += 1 + nl + 8;
    }
    return true;
}

bool hw_cache_get(hw_cache *c, const unsigned char *key, hw_cache_val *out) {
    ent *e = *slot(c, key);
    if (e) {
        lru_unlink(c, e);
        lru_front(c, e);
        fill(out, e);
        return true;
    }
    if (!c->db) return false;
    sqlite3_reset(c->sel);
    sqlite3_bind_blob(c->sel, 1, key, HW_CACHE_KEY, SQLITE_STATIC);
    bool found = false;
    if (sqlite3_step(c->sel) == SQLITE_ROW) {
        if (!row_ok(c->sel)) {
            c->disk_rejected++; /* a row no server wrote: a miss, the point is evaluated again */
        } else {
            const void *rec = sqlite3_column_type(c->sel, 2) == SQLITE_BLOB ? sqlite3_column_blob(c->sel, 2) : NULL;
            size_t len = rec ? (size_t)sqlite3_column_bytes(c->sel, 2) : 0;
            e = mem_put(c, key, sqlite3_column_type(c->sel, 0) == SQLITE_NULL ? 0.0 / 0.0 : sqlite3_column_double(c->sel, 0),
                        sqlite3_column_int(c->sel, 1) != 0, HW_CACHE_PEER_UNKNOWN, rec, len);
            if (e) {
                fill(out, e);
                found = true;
                c->disk_hits++;
            }
        }
    }
    sqlite3_reset(c->sel);
    return found;
}

void hw_cache_count(hw_cache *c, uint64_t hits, uint64_t misses, uint64_t merged) {
    c->hits += hits;
    c->misses += misses;
    c->merged += merged;
}

void hw_cache_put(hw_cache *c, const unsigned char *key, uint64_t peer, double reward, bool feasible, const unsigned char *rec, size_t len) {
    mem_put(c, key, reward, feasible, peer, rec, len);
    if (!c->db) return;
    if (!c->in_tx) c->in_tx = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_reset(c->ins);
    sqlite3_bind_blob(c->ins, 1, key, HW_CACHE_KEY, SQLITE_STATIC);
    if (reward == reward) sqlite3_bind_double(c->ins, 2, reward);
    else sqlite3_bind_null(c->ins, 2);
    sqlite3_bind_int(c->ins, 3, feasible);
    sqlite3_bind_blob(c->ins, 4, len ? (const void *)rec : "", (int)len, SQLITE_STATIC);
    if (sqlite3_step(c->ins) == SQLITE_DONE) c->disk_writes++;
    sqlite3_reset(c->ins);
}

void hw_cache_flush(hw_cache *c) {
    if (c->db && c->in_tx) {
        if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        c->in_tx = false;
    }
}

static pend **pslot(hw_cache *c, const unsigned char *key) {
    pend **p = &c->pending[h64(key) % PEND_BUCKETS];
    while (*p && memcmp((*p)->key, key, HW_CACHE_KEY)) p = &(*p)->next;
    return p;
}

bool hw_cache_pending_join(hw_cache *c, const unsigned char *key, void *owner, int64_t index, uint64_t peer, uint64_t *evaluator) {
    pend **p = pslot(c, key);
    if (!*p) {
        pend *n = calloc(1, sizeof *n);
        if (!n) abort();
        memcpy(n->key, key, HW_CACHE_KEY);
        n->peer = peer;
        n->tail = &n->w;
        *p = n;
        return false;
    }
    hw_cache_waiter *w = calloc(1, sizeof *w);
    if (!w) abort();
    w->owner = owner;
    w->index = index;
    if (evaluator) *evaluator = (*p)->peer;
    *(*p)->tail = w;
    (*p)->tail = &w->next;
    return true;
}

hw_cache_waiter *hw_cache_pending_take(hw_cache *c, const unsigned char *key) {
    pend **p = pslot(c, key);
    if (!*p) return NULL;
    pend *n = *p;
    *p = n->next;
    hw_cache_waiter *w = n->w;
    free(n);
    return w;
}

void hw_cache_waiters_free(hw_cache_waiter *w) {
    while (w) {
        hw_cache_waiter *n = w->next;
        free(w);
        w = n;
    }
}

json_t *hw_cache_stats(const hw_cache *c) {
    uint64_t looked = c->hits + c->misses + c->merged;
    /* the file's name only: the server's directory layout is not the clients' business */
    const char *base = c->path ? strrchr(c->path, '/') : NULL;
    base = base ? base + 1 : c->path;
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f, s:s?}", "entries", (json_int_t)c->n, "bytes",
                     (json_int_t)c->bytes, "max_bytes", (json_int_t)c->max_bytes, "hits", (json_int_t)c->hits, "misses",
                     (json_int_t)c->misses, "merged", (json_int_t)c->merged, "evictions", (json_int_t)c->evictions,
                     "disk_hits", (json_int_t)c->disk_hits, "disk_writes", (json_int_t)c->disk_writes, "disk_rejected",
                     (json_int_t)c->disk_rejected, "shared", c->shared, "hit_rate", looked ? (double)(c->hits + c->merged) / (double)looked : 0.0,
                     "file", base);
}
