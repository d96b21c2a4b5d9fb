/* hwgym_trials.c - see hwgym_trials.h */
#include "hwgym_trials.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw_codec.h"

typedef struct hwt_row {
    int64_t run_id, episode, step, reset_seed;
    char *worker, *action, *observation, *metrics;
    int kind, has_seed, has_reward, terminated, truncated, feasible, cache_hit;
    double reward, time;
} hwt_row;

struct hwt_db {
    sqlite3 *db;
    char *path;
    hwt_opts o;
    pthread_mutex_t mu;
    hwt_row *buf;
    int nbuf, cap;
    double oldest; /* monotonic seconds of the oldest buffered trial */
    int64_t *runs; /* runs begun here and not ended */
    int nruns, caprun;
    struct hwt_db *next;
};

/* ---- process-wide state: open DBs, signal pipe, flusher thread ---- */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static hwt_db *g_dbs;
static int g_pipe[2] = {-1, -1};
static pthread_t g_thread;
static int g_thread_on;
static int g_atexit_done;
static pid_t g_pid;
static volatile sig_atomic_t g_signal;
static struct sigaction g_old_int, g_old_term;
static int g_handlers;

double hwt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

hwt_opts hwt_opts_default(void) {
    hwt_opts o = {.batch_trials = 256, .batch_ms = 1000, .busy_timeout_ms = 30000, .handle_signals = true, .no_thread = false};
    return o;
}

static int sqlfail(hw_err *err, sqlite3 *db, const char *what) {
    return hw_fail(err, HW_E_IO, "trial DB: %s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

/* exec with retries on BUSY beyond the busy handler (journal_mode changes do not wait). */
static int exec_retry(sqlite3 *db, const char *sql, hw_err *err, const char *what) {
    for (int tries = 0;; tries++) {
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK) return 0;
        if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < 2000) {
            usleep(5000);
            continue;
        }
        return sqlfail(err, db, what);
    }
}

static void row_free(hwt_row *r) {
    free(r->worker);
    free(r->action);
    free(r->observation);
    free(r->metrics);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s) {
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

static void bind_bool(sqlite3_stmt *st, int i, int v) {
    if (v < 0) sqlite3_bind_null(st, i);
    else sqlite3_bind_int(st, i, v ? 1 : 0);
}

/* Writes the buffer in one transaction. Caller holds d->mu. */
static int flush_locked(hwt_db *d, hw_err *err) {
    if (d->nbuf == 0) return 0;
    if (exec_retry(d->db, "BEGIN IMMEDIATE", err, "begin")) return -1;
    static const char *sql =
        "INSERT INTO trials (run_id, worker, episode, step, kind, reset_seed, action, observation, reward, "
        "terminated, truncated, metrics, feasible, time, cache_hit) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlfail(err, d->db, "prepare insert");
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    for (int i = 0; i < d->nbuf; i++) {
        hwt_row *r = &d->buf[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, r->run_id);
        sqlite3_bind_text(st, 2, r->worker, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, r->episode);
        sqlite3_bind_int64(st, 4, r->step);
        sqlite3_bind_text(st, 5, r->kind == HWT_EVAL ? "eval" : "step", -1, SQLITE_STATIC);
        if (r->has_seed) sqlite3_bind_int64(st, 6, r->reset_seed);
        else sqlite3_bind_null(st, 6);
        sqlite3_bind_text(st, 7, r->action, -1, SQLITE_STATIC);
        bind_text_or_null(st, 8, r->observation);
        if (r->has_reward && isfinite(r->reward)) sqlite3_bind_double(st, 9, r->reward);
        else sqlite3_bind_null(st, 9);
        bind_bool(st, 10, r->terminated);
        bind_bool(st, 11, r->truncated);
        bind_text_or_null(st, 12, r->metrics);
        bind_bool(st, 13, r->feasible);
        sqlite3_bind_double(st, 14, r->time);
        bind_bool(st, 15, r->cache_hit);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlfail(err, d->db, "insert trial");
            sqlite3_finalize(st);
            sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (exec_retry(d->db, "COMMIT", err, "commit")) {
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    for (int i = 0; i < d->nbuf; i++) row_free(&d->buf[i]);
    d->nbuf = 0;
    return 0;
}

static int end_run_locked(hwt_db *d, int64_t run_id, hw_err *err) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, "UPDATE runs SET ended_at = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return sqlfail(err, d->db, "prepare end run");
    sqlite3_bind_double(st, 1, hwt_now());
    sqlite3_bind_int64(st, 2, run_id);
    int rc = SQLITE_BUSY;
    for (int tries = 0; tries < 2000 && (rc == SQLITE_BUSY || rc == SQLITE_LOCKED); tries++) {
        if (tries) usleep(5000);
        sqlite3_reset(st);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return sqlfail(err, d->db, "end run");
    for (int i = 0; i < d->nruns; i++)
        if (d->runs[i] == run_id) {
            d->runs[i] = d->runs[--d->nruns];
            break;
        }
    return 0;
}

int hwt_abandon_run(hwt_db *d, int64_t run_id, hw_err *err) {
    pthread_mutex_lock(&d->mu);
    int rc = flush_locked(d, err);
    for (int i = 0; i < d->nruns; i++)
        if (d->runs[i] == run_id) {
            d->runs[i] = d->runs[--d->nruns];
            break;
        }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* Flush everything and end open runs (signal path). */
static void flush_all_for_signal(void) {
    pthread_mutex_lock(&g_mu);
    for (hwt_db *d = g_dbs; d; d = d->next) {
        pthread_mutex_lock(&d->mu);
        flush_locked(d, NULL);
        while (d->nruns > 0)
            if (end_run_locked(d, d->runs[0], NULL)) break;
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_unlock(&g_mu);
}

static void die_by_signal(int sig) {
    flush_all_for_signal();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

int hwt_check_signals(void) {
    int sig = g_signal;
    if (sig && getpid() == g_pid) die_by_signal(sig);
    return 0;
}

static void on_signal(int sig) {
    int saved = errno;
    g_signal = sig;
    if (g_pipe[1] >= 0) {
        char c = (char)sig;
        ssize_t w = write(g_pipe[1], &c, 1);
        (void)w;
    }
    errno = saved;
}

static void *flusher(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to other threads; we learn via the pipe */
    for (;;) {
        int wait_ms = 1000;
        pthread_mutex_lock(&g_mu);
        for (hwt_db *d = g_dbs; d; d = d->next)
            if (d->o.batch_ms > 0 && d->o.batch_ms < wait_ms) wait_ms = d->o.batch_ms;
        pthread_mutex_unlock(&g_mu);
        struct pollfd p = {.fd = g_pipe[0], .events = POLLIN};
        int n = poll(&p, 1, wait_ms / 2 + 1);
        if (n > 0) {
            char c;
            ssize_t r = read(g_pipe[0], &c, 1);
            (void)r;
        }
        if (g_signal) die_by_signal(g_signal);
        double now = mono();
        pthread_mutex_lock(&g_mu);
        for (hwt_db *d = g_dbs; d; d = d->next) {
            pthread_mutex_lock(&d->mu);
            if (d->nbuf > 0 && (now - d->oldest) * 1000.0 >= d->o.batch_ms) flush_locked(d, NULL);
            pthread_mutex_unlock(&d->mu);
        }
        pthread_mutex_unlock(&g_mu);
    }
    return NULL;
}

static void at_exit_flush(void) {
    if (getpid() != g_pid) return;
    pthread_mutex_lock(&g_mu);
    for (hwt_db *d = g_dbs; d; d = d->next) {
        pthread_mutex_lock(&d->mu);
        flush_locked(d, NULL);
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_unlock(&g_mu);
}

static void install_handler(int sig, struct sigaction *old) {
    struct sigaction cur;
    sigaction(sig, NULL, &cur);
    if (cur.sa_handler != SIG_DFL || (cur.sa_flags & SA_SIGINFO)) return; /* the program has its own */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, old);
}

/* fork() while the flusher thread (or another thread logging) holds g_mu or a handle's mutex
 * would leave that mutex locked for ever in the child, whose first hwt_open then deadlocks (seen
 * once as a 60 s hang of tests/c/trials' four forked writers). The handlers take every lock
 * before the fork (g_mu first, the order every path uses) and release them on both sides. */
static void fork_prepare(void) {
    pthread_mutex_lock(&g_mu);
    for (hwt_db *d = g_dbs; d; d = d->next) pthread_mutex_lock(&d->mu);
}

static void fork_release(void) {
    for (hwt_db *d = g_dbs; d; d = d->next) pthread_mutex_unlock(&d->mu);
    pthread_mutex_unlock(&g_mu);
}

/* Called with g_mu held. */
static int process_setup(const hwt_opts *o, hw_err *err) {
    pid_t me = getpid();
    if (g_pid != me) { /* first open in this process (or in a forked child) */
        g_pid = me;
        g_thread_on = 0;
        g_handlers = 0;
        g_signal = 0;
        g_dbs = NULL; /* a parent's handles are not ours */
        if (g_pipe[0] >= 0) {
            close(g_pipe[0]);
            close(g_pipe[1]);
        }
        g_pipe[0] = g_pipe[1] = -1;
        if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK)) return hw_fail(err, HW_E_IO, "trial DB: pipe: %s", strerror(errno));
    }
    if (!g_atexit_done) {
        atexit(at_exit_flush);
        pthread_atfork(fork_prepare, fork_release, fork_release);
        g_atexit_done = 1;
    }
    if (o->handle_signals && !g_handlers) {
        install_handler(SIGINT, &g_old_int);
        install_handler(SIGTERM, &g_old_term);
        g_handlers = 1;
    }
    if (!o->no_thread && !g_thread_on) {
        if (pthread_create(&g_thread, NULL, flusher, NULL)) return hw_fail(err, HW_E_IO, "trial DB: cannot start the flusher thread");
        pthread_detach(g_thread);
        g_thread_on = 1;
    }
    return 0;
}

static int user_version(sqlite3 *db, int *v) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

static int check_version(sqlite3 *db, const char *path, int *v, hw_err *err) {
    for (int tries = 0;; tries++) {
        if (user_version(db, v) == 0) break;
        if (tries > 2000) return sqlfail(err, db, "read schema version");
        usleep(5000);
    }
    if (*v > HWT_SCHEMA_VERSION)
        return hw_fail(err, HW_E_NOT_SUPPORTED,
                       "trial DB %s was written by a newer hwgym: schema version %d, this build reads up to %d", path, *v,
                       HWT_SCHEMA_VERSION);
    return 0;
}

sqlite3 *hwt_open_readonly(const char *path, hw_err *err) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        hw_fail(err, HW_E_IO, "trial DB %s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 30000);
    int v = 0;
    if (check_version(db, path, &v, err)) {
        sqlite3_close(db);
        return NULL;
    }
    if (v < 1) {
        hw_fail(err, HW_E_IO, "%s is not a hwgym trial DB (schema version 0)", path);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

hwt_db *hwt_open(const char *path, const hwt_opts *opts, hw_err *err) {
    hwt_opts o = opts ? *opts : hwt_opts_default();
    if (o.batch_trials < 1) o.batch_trials = 1;
    if (o.batch_ms < 0) o.batch_ms = 0;
    if (o.busy_timeout_ms <= 0) o.busy_timeout_ms = 30000;
    if (!path || !*path) return hw_fail(err, HW_E_IO, "trial DB: empty path"), NULL;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        hw_fail(err, HW_E_IO, "trial DB %s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, o.busy_timeout_ms);
    int v = 0;
    if (check_version(db, path, &v, err)) goto fail;
    if (exec_retry(db, "PRAGMA journal_mode=WAL", err, "set WAL mode")) goto fail;
    if (exec_retry(db, "PRAGMA synchronous=NORMAL", err, "set synchronous")) goto fail;
    if (v < HWT_SCHEMA_VERSION) {
        if (exec_retry(db, "BEGIN IMMEDIATE", err, "begin schema")) goto fail;
        if (check_version(db, path, &v, err)) {
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        /* version 1 -> 2: trials.cache_hit (schemas/trials.sql) */
        if (v == 1 && sqlite3_exec(db, "ALTER TABLE trials ADD COLUMN cache_hit INTEGER; PRAGMA user_version = 2;", NULL, NULL, NULL) != SQLITE_OK) {
            sqlfail(err, db, "migrate schema 1 -> 2");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        if (v == 0 && sqlite3_exec(db, hwt_schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
            sqlfail(err, db, "create schema");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            goto fail;
        }
        if (exec_retry(db, "COMMIT", err, "commit schema")) goto fail;
    }
    hwt_db *d = calloc(1, sizeof *d);
    if (!d) abort();
    d->db = db;
    d->path = strdup(path);
    d->o = o;
    pthread_mutex_init(&d->mu, NULL);
    d->cap = o.batch_trials;
    d->buf = calloc((size_t)d->cap, sizeof *d->buf);
    if (!d->buf || !d->path) abort();
    pthread_mutex_lock(&g_mu);
    if (process_setup(&o, err)) {
        pthread_mutex_unlock(&g_mu);
        pthread_mutex_destroy(&d->mu);
        free(d->buf);
        free(d->path);
        free(d);
        goto fail;
    }
    d->next = g_dbs;
    g_dbs = d;
    pthread_mutex_unlock(&g_mu);
    return d;
fail:
    sqlite3_close(db);
    return NULL;
}

int hwt_close(hwt_db *d, hw_err *err) {
    if (!d) return 0;
    hwt_check_signals();
    pthread_mutex_lock(&g_mu);
    for (hwt_db **p = &g_dbs; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    pthread_mutex_unlock(&g_mu);
    int rc = flush_locked(d, err);
    while (rc == 0 && d->nruns > 0) rc = end_run_locked(d, d->runs[0], err);
    for (int i = 0; i < d->nbuf; i++) row_free(&d->buf[i]);
    sqlite3_close(d->db);
    pthread_mutex_destroy(&d->mu);
    free(d->buf);
    free(d->runs);
    free(d->path);
    free(d);
    return rc;
}

static char *dump(const json_t *j) {
    if (!j) return NULL;
    return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

int64_t hwt_begin_run(hwt_db *d, const hwt_run *r, hw_err *err) {
    hwt_check_signals();
    if (!d || !r || !r->agent || !r->env) return hw_fail(err, HW_E_BAD_REQUEST, "hwt_begin_run: agent and env are required"), -1;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char *ac = dump(r->agent_config), *ec = dump(r->env_config);
    pthread_mutex_lock(&d->mu);
    int64_t id = -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db,
                           "INSERT INTO runs (agent, agent_config, env, env_config, seed, host, version, endpoint, started_at) "
                           "VALUES (?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlfail(err, d->db, "prepare run");
        goto out;
    }
    sqlite3_bind_text(st, 1, r->agent, -1, SQLITE_STATIC);
    bind_text_or_null(st, 2, ac);
    sqlite3_bind_text(st, 3, r->env, -1, SQLITE_STATIC);
    bind_text_or_null(st, 4, ec);
    if (r->has_seed) sqlite3_bind_int64(st, 5, r->seed);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_text(st, 6, host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, HW_VERSION_STRING, -1, SQLITE_STATIC);
    bind_text_or_null(st, 8, r->endpoint);
    sqlite3_bind_double(st, 9, hwt_now());
    int rc = SQLITE_BUSY;
    for (int tries = 0; tries < 2000 && (rc == SQLITE_BUSY || rc == SQLITE_LOCKED); tries++) {
        if (tries) usleep(5000);
        sqlite3_reset(st);
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_DONE) {
        sqlfail(err, d->db, "insert run");
        goto out;
    }
    id = sqlite3_last_insert_rowid(d->db);
    if (d->nruns == d->caprun) {
        d->caprun = d->caprun ? 2 * d->caprun : 8;
        d->runs = realloc(d->runs, sizeof *d->runs * (size_t)d->caprun);
        if (!d->runs) abort();
    }
    d->runs[d->nruns++] = id;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&d->mu);
    free(ac);
    free(ec);
    return id;
}

int hwt_end_run(hwt_db *d, int64_t run_id, hw_err *err) {
    hwt_check_signals();
    if (!d) return hw_fail(err, HW_E_BAD_REQUEST, "hwt_end_run: no DB");
    pthread_mutex_lock(&d->mu);
    int rc = flush_locked(d, err);
    if (rc == 0) rc = end_run_locked(d, run_id, err);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

int hwt_add_trial(hwt_db *d, const hwt_trial *t, hw_err *err) {
    hwt_check_signals();
    if (!d || !t) return hw_fail(err, HW_E_BAD_REQUEST, "hwt_add_trial: no DB or trial");
    if (!t->action) return hw_fail(err, HW_E_BAD_REQUEST, "hwt_add_trial: action is required");
    if (t->metrics && !json_is_object(t->metrics)) return hw_fail(err, HW_E_BAD_REQUEST, "hwt_add_trial: metrics must be an object");
    hwt_row r;
    memset(&r, 0, sizeof r);
    r.run_id = t->run_id;
    r.worker = strdup(t->worker ? t->worker : "0");
    r.episode = t->episode;
    r.kind = t->kind == HWT_EVAL ? HWT_EVAL : HWT_STEP;
    r.step = r.kind == HWT_EVAL ? -1 : t->step;
    r.has_seed = t->has_reset_seed;
    r.reset_seed = t->reset_seed;
    r.action = dump(t->action);
    r.observation = dump(t->observation);
    r.metrics = dump(t->metrics);
    r.has_reward = t->has_reward;
    r.reward = t->reward;
    r.terminated = t->terminated;
    r.truncated = t->truncated;
    r.cache_hit = -1; /* from metrics.cache_hit (lean evaluate_batch results carry it) */
    if (t->metrics) {
        json_t *h = json_object_get(t->metrics, "cache_hit");
        if (json_is_boolean(h)) r.cache_hit = json_is_true(h);
    }
    r.feasible = t->feasible;
    if (r.feasible < 0 && t->metrics) {
        json_t *f = json_object_get(t->metrics, "feasible");
        if (json_is_boolean(f)) r.feasible = json_is_true(f);
    }
    r.time = t->time > 0 ? t->time : hwt_now();
    if (!r.worker || !r.action) abort();
    pthread_mutex_lock(&d->mu);
    if (d->nbuf == d->cap) { /* earlier writes failed: keep everything, grow */
        hwt_row *nb = realloc(d->buf, sizeof *nb * (size_t)d->cap * 2);
        if (!nb) abort();
        d->buf = nb;
        d->cap *= 2;
    }
    if (d->nbuf == 0) d->oldest = mono();
    d->buf[d->nbuf++] = r;
    int rc = 0;
    if (d->nbuf >= d->o.batch_trials || (d->o.no_thread && (mono() - d->oldest) * 1000.0 >= d->o.batch_ms))
        rc = flush_locked(d, err);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

int hwt_flush(hwt_db *d, hw_err *err) {
    hwt_check_signals();
    if (!d) return 0;
    pthread_mutex_lock(&d->mu);
    int rc = flush_locked(d, err);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

int hwt_pending(hwt_db *d) {
    if (!d) return 0;
    pthread_mutex_lock(&d->mu);
    int n = d->nbuf;
    pthread_mutex_unlock(&d->mu);
    return n;
}

sqlite3 *hwt_sqlite(hwt_db *d) { return d ? d->db : NULL; }
