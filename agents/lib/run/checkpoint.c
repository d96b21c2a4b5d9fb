/* checkpoint.c - the checkpoint container and its SQLite file (checkpoint.h). */
#include "checkpoint.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef enum { CK_F64 = 1, CK_I64 = 2, CK_U8 = 3, CK_JSON = 4, CK_RNG = 5 } ck_type;

typedef struct ck_entry {
    char *name;
    int type;
    int64_t n;    /* elements (bytes for JSON/RNG) */
    void *data;
    size_t bytes;
} ck_entry;

struct ag_ckpt {
    ck_entry *e;
    int n, cap;
    int64_t samples;
};

ag_ckpt *ag_ckpt_new(void) {
    ag_ckpt *c = calloc(1, sizeof *c);
    if (!c) abort();
    return c;
}

void ag_ckpt_free(ag_ckpt *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) {
        free(c->e[i].name);
        free(c->e[i].data);
    }
    free(c->e);
    free(c);
}

int64_t ag_ckpt_samples(const ag_ckpt *c) { return c ? c->samples : 0; }

static ck_entry *find(const ag_ckpt *c, const char *name) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].name, name)) return &c->e[i];
    return NULL;
}

static void put(ag_ckpt *c, const char *name, int type, int64_t n, const void *data, size_t bytes) {
    ck_entry *e = find(c, name);
    if (e) {
        free(e->data);
    } else {
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 32;
            c->e = realloc(c->e, sizeof *c->e * (size_t)c->cap);
            if (!c->e) abort();
        }
        e = &c->e[c->n++];
        e->name = strdup(name);
    }
    e->type = type;
    e->n = n;
    e->bytes = bytes;
    e->data = malloc(bytes ? bytes : 1);
    if (!e->data || !e->name) abort();
    if (bytes) memcpy(e->data, data, bytes);
}

void ag_ckpt_put_f64(ag_ckpt *c, const char *name, const double *a, size_t n) {
    put(c, name, CK_F64, (int64_t)n, a, n * sizeof(double));
}
void ag_ckpt_put_i64(ag_ckpt *c, const char *name, const int64_t *a, size_t n) {
    put(c, name, CK_I64, (int64_t)n, a, n * sizeof(int64_t));
}
void ag_ckpt_put_u8(ag_ckpt *c, const char *name, const uint8_t *a, size_t n) { put(c, name, CK_U8, (int64_t)n, a, n); }
void ag_ckpt_put_int(ag_ckpt *c, const char *name, int64_t v) { ag_ckpt_put_i64(c, name, &v, 1); }
void ag_ckpt_put_real(ag_ckpt *c, const char *name, double v) { ag_ckpt_put_f64(c, name, &v, 1); }

void ag_ckpt_put_json(ag_ckpt *c, const char *name, const json_t *j) {
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : strdup("null");
    if (!s) s = strdup("null");
    put(c, name, CK_JSON, (int64_t)strlen(s), s, strlen(s));
    free(s);
}

void ag_ckpt_put_rng(ag_ckpt *c, const char *name, const gsl_rng *r) {
    /* the generator's name, a NUL, then its raw state */
    const char *nm = gsl_rng_name(r);
    size_t nl = strlen(nm) + 1, sz = gsl_rng_size(r);
    unsigned char *buf = malloc(nl + sz);
    if (!buf) abort();
    memcpy(buf, nm, nl);
    memcpy(buf + nl, gsl_rng_state(r), sz);
    put(c, name, CK_RNG, (int64_t)(nl + sz), buf, nl + sz);
    free(buf);
}

static const char *type_name(int t) {
    switch (t) {
    case CK_F64: return "float64 array";
    case CK_I64: return "int64 array";
    case CK_U8: return "byte array";
    case CK_JSON: return "JSON";
    case CK_RNG: return "RNG state";
    default: return "?";
    }
}

static const ck_entry *want(const ag_ckpt *c, const char *name, int type, hw_err *err) {
    const ck_entry *e = find(c, name);
    if (!e) {
        hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: no entry '%s' (written by another agent or version?)", name);
        return NULL;
    }
    if (e->type != type) {
        hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' is a %s, expected a %s", name, type_name(e->type),
                type_name(type));
        return NULL;
    }
    return e;
}

static size_t elem_size(int type) { return type == CK_F64 ? sizeof(double) : type == CK_I64 ? sizeof(int64_t) : 1; }

static int get_arr(const ag_ckpt *c, const char *name, int type, void *a, size_t n, size_t esz, hw_err *err) {
    const ck_entry *e = want(c, name, type, err);
    if (!e) return -1;
    if (e->n < 0 || (uint64_t)e->n != (uint64_t)n)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' holds %lld elements, this run needs %zu", name,
                       (long long)e->n, n);
    if (n > SIZE_MAX / esz || e->bytes != n * esz) /* never read past the blob (issue 28 finding 3) */
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' has %zu bytes for %zu elements of %zu bytes", name, e->bytes, n, esz);
    if (n) memcpy(a, e->data, n * esz);
    return 0;
}

int ag_ckpt_add_entry(ag_ckpt *c, const char *name, int type, int64_t n, const void *data, size_t bytes, hw_err *err) {
    if (!name || !*name || strnlen(name, 256) == 256)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: an entry has no name or a name of 256+ bytes");
    if (type < CK_F64 || type > CK_RNG)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' has unknown type %d", name, type);
    if (bytes && !data) return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' has no data", name);
    size_t esz = type == CK_JSON || type == CK_RNG ? 1 : elem_size(type);
    if (n < 0 || (uint64_t)n > SIZE_MAX / esz || (size_t)n * esz != bytes)
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' (%s) claims %lld elements but holds %zu bytes (truncated or edited?)",
                       name, type_name(type), (long long)n, bytes);
    if (find(c, name)) return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' appears twice", name);
    put(c, name, type, n, data, bytes);
    return 0;
}

int ag_ckpt_get_f64(const ag_ckpt *c, const char *name, double *a, size_t n, hw_err *err) {
    return get_arr(c, name, CK_F64, a, n, sizeof(double), err);
}
int ag_ckpt_get_i64(const ag_ckpt *c, const char *name, int64_t *a, size_t n, hw_err *err) {
    return get_arr(c, name, CK_I64, a, n, sizeof(int64_t), err);
}
int ag_ckpt_get_u8(const ag_ckpt *c, const char *name, uint8_t *a, size_t n, hw_err *err) {
    return get_arr(c, name, CK_U8, a, n, 1, err);
}
int ag_ckpt_get_int(const ag_ckpt *c, const char *name, int64_t *v, hw_err *err) { return ag_ckpt_get_i64(c, name, v, 1, err); }
int ag_ckpt_get_real(const ag_ckpt *c, const char *name, double *v, hw_err *err) { return ag_ckpt_get_f64(c, name, v, 1, err); }

json_t *ag_ckpt_get_json(const ag_ckpt *c, const char *name, hw_err *err) {
    const ck_entry *e = want(c, name, CK_JSON, err);
    if (!e) return NULL;
    json_error_t je;
    json_t *j = json_loadb(e->data, e->bytes, JSON_DECODE_ANY, &je);
    if (!j) hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s': bad JSON: %s", name, je.text);
    return j;
}

int ag_ckpt_get_rng(const ag_ckpt *c, const char *name, gsl_rng *r, hw_err *err) {
    const ck_entry *e = want(c, name, CK_RNG, err);
    if (!e) return -1;
    const char *nm = e->data;
    size_t nl = strnlen(nm, e->bytes);
    if (nl == e->bytes || strcmp(nm, gsl_rng_name(r)))
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s' is not a %s state", name, gsl_rng_name(r));
    if (e->bytes - nl - 1 != gsl_rng_size(r))
        return hw_fail(err, HW_E_BAD_CONFIG, "checkpoint: entry '%s': state of %zu bytes, expected %zu", name,
                       e->bytes - nl - 1, gsl_rng_size(r));
    memcpy(gsl_rng_state(r), (const char *)e->data + nl + 1, gsl_rng_size(r));
    return 0;
}

int64_t ag_ckpt_len(const ag_ckpt *c, const char *name) {
    const ck_entry *e = find(c, name);
    return e ? e->n : -1;
}

/* ---------------------------------------------------------------- file */
static const char *schema =
    "CREATE TABLE IF NOT EXISTS ckpt(owner TEXT NOT NULL, samples INTEGER NOT NULL, config TEXT, created REAL,"
    " PRIMARY KEY(owner, samples));"
    "CREATE TABLE IF NOT EXISTS ckpt_entry(owner TEXT NOT NULL, samples INTEGER NOT NULL, name TEXT NOT NULL,"
    " type INTEGER NOT NULL, n INTEGER NOT NULL, data BLOB, PRIMARY KEY(owner, samples, name));";

static sqlite3 *open_db(const char *path, bool create, bool *missing, hw_err *err) {
    struct stat st;
    if (!create && stat(path, &st) != 0) {
        if (missing) *missing = true;
        return NULL;
    }
    sqlite3 *db = NULL;
    int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        hw_fail(err, HW_E_IO, "checkpoint %s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 60000);
    if (create) {
        char *msg = NULL;
        if (sqlite3_exec(db, "PRAGMA synchronous=FULL;", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, schema, NULL, NULL, &msg) != SQLITE_OK) {
            hw_fail(err, HW_E_IO, "checkpoint %s: %s", path, msg ? msg : sqlite3_errmsg(db));
            sqlite3_free(msg);
            sqlite3_close(db);
            return NULL;
        }
    }
    return db;
}

static int sql_fail(sqlite3 *db, const char *path, hw_err *err) {
    return hw_fail(err, HW_E_IO, "checkpoint %s: %s", path, sqlite3_errmsg(db));
}

int ag_ckpt_save(const char *path, const char *owner, int64_t samples, const json_t *config, const ag_ckpt *c,
                 hw_err *err) {
    sqlite3 *db = open_db(path, true, NULL, err);
    if (!db) return -1;
    int rc = -1;
    sqlite3_stmt *st = NULL;
    char *cfg = config ? json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) goto fail;
    const char *del[] = {"DELETE FROM ckpt WHERE owner=?1 AND samples=?2",
                         "DELETE FROM ckpt_entry WHERE owner=?1 AND samples=?2"};
    for (int k = 0; k < 2; k++) {
        if (sqlite3_prepare_v2(db, del[k], -1, &st, NULL) != SQLITE_OK) goto rollback;
        sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, samples);
        if (sqlite3_step(st) != SQLITE_DONE) goto rollback;
        sqlite3_finalize(st);
        st = NULL;
    }
    if (sqlite3_prepare_v2(db, "INSERT INTO ckpt(owner, samples, config, created) VALUES(?,?,?,?)", -1, &st, NULL) !=
        SQLITE_OK)
        goto rollback;
    sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, samples);
    if (cfg) sqlite3_bind_text(st, 3, cfg, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, 3);
    sqlite3_bind_double(st, 4, (double)time(NULL));
    if (sqlite3_step(st) != SQLITE_DONE) goto rollback;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO ckpt_entry(owner, samples, name, type, n, data) VALUES(?,?,?,?,?,?)", -1,
                           &st, NULL) != SQLITE_OK)
        goto rollback;
    for (int i = 0; i < c->n; i++) {
        const ck_entry *e = &c->e[i];
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, samples);
        sqlite3_bind_text(st, 3, e->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, e->type);
        sqlite3_bind_int64(st, 5, e->n);
        sqlite3_bind_blob64(st, 6, e->data, e->bytes, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) goto rollback;
    }
    sqlite3_finalize(st);
    st = NULL;
    /* keep the two newest of this owner */
    const char *prune[] = {
        "DELETE FROM ckpt_entry WHERE owner=?1 AND samples NOT IN "
        "(SELECT samples FROM ckpt WHERE owner=?1 ORDER BY samples DESC LIMIT 2)",
        "DELETE FROM ckpt WHERE owner=?1 AND samples NOT IN "
        "(SELECT samples FROM ckpt WHERE owner=?1 ORDER BY samples DESC LIMIT 2)"};
    for (int k = 0; k < 2; k++) {
        if (sqlite3_prepare_v2(db, prune[k], -1, &st, NULL) != SQLITE_OK) goto rollback;
        sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) goto rollback;
        sqlite3_finalize(st);
        st = NULL;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto rollback;
    rc = 0;
    goto done;
rollback:
    sql_fail(db, path, err);
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    goto done;
fail:
    sql_fail(db, path, err);
done:
    free(cfg);
    sqlite3_close(db);
    return rc;
}

ag_ckpt *ag_ckpt_load(const char *path, const char *owner, int64_t samples, json_t **config, bool *missing,
                      hw_err *err) {
    if (missing) *missing = false;
    if (config) *config = NULL;
    sqlite3 *db = open_db(path, false, missing, err);
    if (!db) return NULL;
    ag_ckpt *c = NULL;
    sqlite3_stmt *st = NULL;
    const char *q = samples < 0 ? "SELECT samples, config FROM ckpt WHERE owner=?1 ORDER BY samples DESC LIMIT 1"
                                : "SELECT samples, config FROM ckpt WHERE owner=?1 AND samples=?2";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        /* a file without our tables: nothing stored for this owner */
        if (missing) *missing = true;
        goto done;
    }
    sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
    if (samples >= 0) sqlite3_bind_int64(st, 2, samples);
    int r = sqlite3_step(st);
    if (r != SQLITE_ROW) {
        if (r == SQLITE_DONE) {
            if (missing) *missing = true;
        } else {
            sql_fail(db, path, err);
        }
        goto done;
    }
    int64_t s = sqlite3_column_int64(st, 0);
    if (config && sqlite3_column_type(st, 1) == SQLITE_TEXT)
        *config = json_loads((const char *)sqlite3_column_text(st, 1), JSON_DECODE_ANY, NULL);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name, type, n, data FROM ckpt_entry WHERE owner=? AND samples=?", -1, &st,
                           NULL) != SQLITE_OK) {
        sql_fail(db, path, err);
        goto done;
    }
    sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, s);
    c = ag_ckpt_new();
    c->samples = s;
    /* every row is checked (name, type, count against the blob's bytes) before anything uses it */
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int ty = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int(st, 1) : 0;
        int dt = sqlite3_column_type(st, 3);
        const void *blob = dt == SQLITE_BLOB ? sqlite3_column_blob(st, 3) : NULL;
        size_t nb = dt == SQLITE_BLOB ? (size_t)sqlite3_column_bytes(st, 3) : 0;
        if (sqlite3_column_type(st, 0) != SQLITE_TEXT || sqlite3_column_type(st, 2) != SQLITE_INTEGER || (dt != SQLITE_BLOB && dt != SQLITE_NULL)) {
            hw_fail(err, HW_E_BAD_CONFIG, "checkpoint %s: an entry of '%s' has a column of the wrong type (edited?)", path, owner);
            break;
        }
        if (ag_ckpt_add_entry(c, (const char *)sqlite3_column_text(st, 0), ty, sqlite3_column_int64(st, 2), blob, nb, err)) {
            hw_err_prefix(err, path);
            break;
        }
    }
    if (r != SQLITE_DONE) {
        if (r != SQLITE_ROW) sql_fail(db, path, err);
        ag_ckpt_free(c);
        c = NULL;
    }
done:
    if (!c && config) {
        json_decref(*config);
        *config = NULL;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return c;
}

int ag_ckpt_clear(const char *path, const char *owner, hw_err *err) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    sqlite3 *db = open_db(path, true, NULL, err);
    if (!db) return -1;
    const char *q[2] = {owner ? "DELETE FROM ckpt_entry WHERE owner=?1" : "DELETE FROM ckpt_entry",
                        owner ? "DELETE FROM ckpt WHERE owner=?1" : "DELETE FROM ckpt"};
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        sqlite3_stmt *stm = NULL;
        if (sqlite3_prepare_v2(db, q[k], -1, &stm, NULL) != SQLITE_OK) rc = -1;
        else {
            if (owner) sqlite3_bind_text(stm, 1, owner, -1, SQLITE_STATIC);
            if (sqlite3_step(stm) != SQLITE_DONE) rc = -1;
        }
        sqlite3_finalize(stm);
    }
    if (rc) sql_fail(db, path, err);
    sqlite3_close(db);
    return rc;
}

int64_t ag_ckpt_common_samples(const char *path, const char *const *owners, int n, hw_err *err) {
    bool missing = false;
    sqlite3 *db = open_db(path, false, &missing, err);
    if (!db) return missing ? 0 : -1;
    int64_t best = 0;
    sqlite3_stmt *st = NULL;
    /* candidates: the samples of the first owner, newest first; take the first every owner has */
    if (n <= 0 || sqlite3_prepare_v2(db, "SELECT samples FROM ckpt WHERE owner=? ORDER BY samples DESC", -1, &st, NULL) !=
                      SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    sqlite3_bind_text(st, 1, owners[0], -1, SQLITE_STATIC);
    sqlite3_stmt *has = NULL;
    sqlite3_prepare_v2(db, "SELECT 1 FROM ckpt WHERE owner=? AND samples=?", -1, &has, NULL);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(st, 0);
        bool all = true;
        for (int i = 1; i < n && all; i++) {
            sqlite3_reset(has);
            sqlite3_bind_text(has, 1, owners[i], -1, SQLITE_STATIC);
            sqlite3_bind_int64(has, 2, s);
            all = sqlite3_step(has) == SQLITE_ROW;
        }
        if (all) {
            best = s;
            break;
        }
    }
    sqlite3_finalize(has);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return best;
}

/* ---------------------------------------------------------------- wiring */
bool ag_json_first_diff(const json_t *a, const json_t *b, char *buf, size_t cap) {
    if (json_equal((json_t *)a, (json_t *)b)) return false;
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            json_t *w = json_object_get(b, k);
            if (!w || !json_equal(v, w)) {
                snprintf(buf, cap, "%s", k);
                return true;
            }
        }
        json_object_foreach((json_t *)b, k, v) {
            if (!json_object_get(a, k)) {
                snprintf(buf, cap, "%s", k);
                return true;
            }
        }
    }
    snprintf(buf, cap, "(value)");
    return true;
}

static bool claimed; /* this process's agent handles --checkpoint-every/--resume */
bool ag_ckpt_claimed(void) { return claimed; }

int ag_ckpt_ctl_init(ag_ckpt_ctl *ctl, const ag_opts *o, const char *owner, const json_t *config, int64_t at_samples,
                     hw_err *err) {
    claimed = true;
    memset(ctl, 0, sizeof *ctl);
    ctl->last = -1;
    snprintf(ctl->owner, sizeof ctl->owner, "%s", owner ? owner : "main");
    ctl->every = o->checkpoint_every;
    ctl->config = json_is_object(config) ? json_deep_copy(config) : json_object();
    if (o->env) json_object_set_new(ctl->config, "env", json_string(o->env));
    if (o->config) json_object_set(ctl->config, "env_config", o->config);
    if (o->checkpoint) snprintf(ctl->path, sizeof ctl->path, "%s", o->checkpoint);
    else if (o->db && (o->checkpoint_every > 0 || o->resume)) snprintf(ctl->path, sizeof ctl->path, "%s.ckpt", o->db);
    if (!ctl->path[0]) {
        if (o->checkpoint_every > 0 || o->resume)
            return hw_fail(err, HW_E_BAD_CONFIG, "--%s needs --checkpoint FILE or --db PATH (the checkpoint goes to PATH.ckpt)",
                           o->resume ? "resume" : "checkpoint-every");
        return 0;
    }
    /* a fresh start drops this owner's old checkpoints (of another run in the same file) */
    if (!o->resume) return ag_ckpt_clear(ctl->path, ctl->owner, err);
    bool missing = false;
    json_t *stored = NULL;
    ctl->resume = ag_ckpt_load(ctl->path, ctl->owner, at_samples, &stored, &missing, err);
    if (!ctl->resume) {
        if (missing && at_samples <= 0) return ag_ckpt_clear(ctl->path, ctl->owner, err); /* a fresh start */
        if (missing)
            return hw_fail(err, HW_E_BAD_CONFIG, "--resume: %s has no checkpoint of '%s' at %lld samples", ctl->path,
                           ctl->owner, (long long)at_samples);
        return -1;
    }
    char key[256];
    if (stored && ag_json_first_diff(stored, ctl->config, key, sizeof key)) {
        json_t *a = json_object_get(stored, key), *b = json_object_get(ctl->config, key);
        char *sa = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(absent)");
        char *sb = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(absent)");
        hw_fail(err, HW_E_BAD_CONFIG, "--resume: %s was written by a run with another %s (%s; this run: %s)", ctl->path,
                key, sa ? sa : "?", sb ? sb : "?");
        free(sa);
        free(sb);
        json_decref(stored);
        ag_ckpt_free(ctl->resume);
        ctl->resume = NULL;
        return -1;
    }
    json_decref(stored);
    ctl->last = ctl->resume->samples;
    return 0;
}

void ag_ckpt_ctl_free(ag_ckpt_ctl *ctl) {
    if (!ctl) return;
    ag_ckpt_free(ctl->resume);
    ctl->resume = NULL;
    json_decref(ctl->config);
    ctl->config = NULL;
}

bool ag_ckpt_on(const ag_ckpt_ctl *ctl) { return ctl && ctl->path[0]; }

bool ag_ckpt_due(const ag_ckpt_ctl *ctl, int64_t samples) {
    if (!ag_ckpt_on(ctl)) return false;
    if (ctl->last < 0) return true;
    return ctl->every > 0 && samples - ctl->last >= ctl->every;
}

int64_t ag_test_kill_at(void) {
    const char *v = getenv("HWGYM_TEST_KILL_AT");
    return v ? strtoll(v, NULL, 10) : 0;
}
