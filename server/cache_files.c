/* cache_files.c - see cache_files.h. */
#include "cache_files.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MEMO 64

typedef struct memo {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    unsigned char dig[32];
    uint64_t used;
} memo;

struct hw_cache_files {
    hw_files policy;
    bool on;
    memo m[MEMO];
    uint64_t tick;
};

hw_cache_files *hw_cache_files_new(const hw_files *policy) {
    hw_cache_files *f = calloc(1, sizeof *f);
    if (!f) abort();
    if (policy) {
        f->policy = *policy;
        f->on = policy->trusted || policy->ndirs > 0;
    }
    return f;
}

void hw_cache_files_free(hw_cache_files *f) {
    if (!f) return;
    for (int i = 0; i < MEMO; i++) free(f->m[i].path);
    free(f);
}

/* the digest of the file `path` names (st: its stat), from the memo when the file is unchanged */
static int file_digest(hw_cache_files *f, hw_keyer *k, const char *path, const struct stat *pst, unsigned char dig[32]) {
    struct stat st = *pst;
    memo *slot = NULL, *old = &f->m[0];
    for (int i = 0; i < MEMO; i++) {
        memo *m = &f->m[i];
        if (m->path && !strcmp(m->path, path)) {
            slot = m;
            break;
        }
        if (m->used < old->used) old = m;
    }
    f->tick++;
    if (slot && slot->dev == st.st_dev && slot->ino == st.st_ino && slot->size == st.st_size && slot->mtime.tv_sec == st.st_mtim.tv_sec &&
        slot->mtime.tv_nsec == st.st_mtim.tv_nsec) {
        slot->used = f->tick;
        memcpy(dig, slot->dig, 32);
        return 0;
    }
    hw_err err;
    size_t len = 0;
    char *text = hw_files_read(&f->policy, "cache", path, &len, &err);
    if (!text) return -1;
    hw_key_digest(k, text, len, NULL, 0, dig);
    free(text);
    if (!slot) {
        slot = old;
        free(slot->path);
        slot->path = strdup(path);
        if (!slot->path) abort();
    }
    slot->dev = st.st_dev;
    slot->ino = st.st_ino;
    slot->size = st.st_size;
    slot->mtime = st.st_mtim;
    slot->used = f->tick;
    memcpy(slot->dig, dig, 32);
    return 0;
}

typedef struct walk {
    const hw_files *policy;
    int paths;
    int (*on_file)(struct walk *w, const char *path, size_t n, const struct stat *st);
    hw_cache_files *f;  /* mix: */
    hw_keyer *k;
    unsigned char *acc; /* prefix, then each named file's "path NUL digest" folded in */
    char *stamp;        /* stamp: */
    size_t slen;
} walk;

/* a string of the config: a file when it looks like a path and the policy resolves it */
static int visit(walk *w, const char *s, size_t n) {
    if (n == 0 || n >= 4096 || memchr(s, 0, n)) return 0;
    char path[4096];
    memcpy(path, s, n);
    path[n] = 0;
    if (!hw_files_is_path(path)) return 0;
    if (++w->paths > HW_CACHE_FILES_MAX) return -1;
    struct stat st;
    if (hw_files_stat(w->policy, path, &st)) return 0; /* not a file this server reads: a plain string */
    return w->on_file(w, path, n, &st);
}

static int mix_file(walk *w, const char *path, size_t n, const struct stat *st) {
    unsigned char dig[32], item[4096 + 33];
    if (file_digest(w->f, w->k, path, st, dig)) return -1;
    memcpy(item, path, n + 1);
    memcpy(item + n + 1, dig, 32);
    unsigned char next[32];
    hw_key_digest(w->k, w->acc, 32, item, n + 33, next);
    memcpy(w->acc, next, 32);
    return 0;
}

/* strings in key order for JSON (jansson's iteration order is insertion order: sort the keys so
 * the result does not depend on it) and in any order for msgpack: the fold is order-sensitive,
 * so both walks visit in the canonical order of sorted keys */
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int walk_json(walk *w, const json_t *j, int depth) {
    if (depth > 64) return -1;
    if (json_is_string(j)) return visit(w, json_string_value(j), json_string_length(j));
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            if (walk_json(w, json_array_get(j, i), depth + 1)) return -1;
        return 0;
    }
    if (!json_is_object(j)) return 0;
    size_t n = json_object_size(j), i = 0;
    const char **keys = calloc(n + 1, sizeof *keys);
    if (!keys) abort();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v) keys[i++] = key;
    qsort(keys, n, sizeof *keys, cmp_str);
    int rc = 0;
    for (i = 0; i < n && !rc; i++) rc = walk_json(w, json_object_get(j, keys[i]), depth + 1);
    free(keys);
    return rc;
}

typedef struct mkv {
    char key[256];
    const msgpack_object *v;
} mkv;

static int cmp_mkv(const void *a, const void *b) { return strcmp(((const mkv *)a)->key, ((const mkv *)b)->key); }

static int walk_mp(walk *w, const msgpack_object *o, int depth) {
    if (depth > 64) return -1;
    if (o->type == MSGPACK_OBJECT_STR) return visit(w, o->via.str.ptr, o->via.str.size);
    if (o->type == MSGPACK_OBJECT_ARRAY) {
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (walk_mp(w, &o->via.array.ptr[i], depth + 1)) return -1;
        return 0;
    }
    if (o->type != MSGPACK_OBJECT_MAP) return 0;
    uint32_t n = o->via.map.size;
    mkv *kv = calloc(n + 1, sizeof *kv);
    if (!kv) abort();
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size < sizeof kv[i].key) memcpy(kv[i].key, k->via.str.ptr, k->via.str.size);
        kv[i].v = &o->via.map.ptr[i].val;
    }
    qsort(kv, n, sizeof *kv, cmp_mkv);
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) rc = walk_mp(w, kv[i].v, depth + 1);
    free(kv);
    return rc;
}

int hw_cache_files_mix(hw_cache_files *f, hw_keyer *k, const json_t *cfg, const msgpack_object *cfg_mp, unsigned char prefix[32]) {
    if (!f || !f->on) return 0;
    walk w = {.policy = &f->policy, .on_file = mix_file, .f = f, .k = k, .acc = prefix};
    if (cfg) return walk_json(&w, cfg, 0);
    if (cfg_mp && cfg_mp->type != MSGPACK_OBJECT_NIL) return walk_mp(&w, cfg_mp, 0);
    return 0;
}

static int stamp_file(walk *w, const char *path, size_t n, const struct stat *st) {
    char id[160];
    int l = snprintf(id, sizeof id, "\n%llu:%llu:%lld:%lld.%09ld:", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                     (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    char *p = realloc(w->stamp, w->slen + (size_t)l + n + 1);
    if (!p) abort();
    memcpy(p + w->slen, id, (size_t)l);
    memcpy(p + w->slen + (size_t)l, path, n + 1);
    w->stamp = p;
    w->slen += (size_t)l + n;
    return 0;
}

char *hw_cache_files_stamp(const hw_files *policy, const json_t *cfg) {
    walk w = {.policy = policy, .on_file = stamp_file};
    w.stamp = calloc(1, 1);
    if (!w.stamp) abort();
    if (policy && (policy->trusted || policy->ndirs > 0) && cfg && walk_json(&w, cfg, 0)) {
        free(w.stamp);
        return NULL;
    }
    return w.stamp;
}
