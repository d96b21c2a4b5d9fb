/* Trial log (clients/c/hwgym_trials.h): schema, version check, batching, concurrency, and
 * nothing lost on exit / SIGTERM / SIGINT. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "hwgym_trials.h"

static char dir[64], dbpath[128];

static void setup(void) {
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
}
static void teardown(void) { hwtest_rmtree(dir); }

static int64_t q_int(const char *sql) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static char *q_text(const char *sql) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *r = t ? strdup((const char *)t) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return r;
}

static int64_t begin(hwt_db *db) {
    json_t *ec = json_pack("{si}", "dims", 3);
    hwt_run r = {.agent = "test", .env = "diag-v0", .env_config = ec, .has_seed = true, .seed = 5};
    hw_err err;
    int64_t id = hwt_begin_run(db, &r, &err);
    json_decref(ec);
    cr_assert_gt(id, 0, "%s", err.msg);
    return id;
}

static void add(hwt_db *db, int64_t run, const char *worker, int64_t ep, int64_t step) {
    json_t *a = json_pack("[iii]", (int)(step % 8), 1, 2);
    json_t *m = json_pack("{sfsb}", "distance", 0.25, "feasible", 1);
    hwt_trial t = {.run_id = run, .worker = worker, .episode = ep, .step = step, .action = a, .has_reward = true,
                   .reward = 0.75, .terminated = 0, .truncated = 0, .metrics = m, .feasible = -1};
    hw_err err;
    cr_assert_eq(hwt_add_trial(db, &t, &err), 0, "%s", err.msg);
    json_decref(a);
    json_decref(m);
}

TestSuite(trials, .init = setup, .fini = teardown, .timeout = 60);

Test(trials, embedded_schema_equals_file_byte_for_byte) {
    char path[4096];
    cr_assert(hwtest_repo_file("schemas/trials.sql", path, sizeof path), "schemas/trials.sql not found");
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = 0;
    cr_assert_eq(n, strlen(hwt_schema_sql), "length %zu vs embedded %zu: regenerate clients/c/hwgym_trials_sql.c", n,
                 strlen(hwt_schema_sql));
    cr_assert_eq(memcmp(buf, hwt_schema_sql, n), 0, "schemas/trials.sql differs from clients/c/hwgym_trials_sql.c");
    free(buf);
}

Test(trials, open_creates_versioned_wal_schema) {
    hw_err err;
    hwt_db *db = hwt_open(dbpath, NULL, &err);
    cr_assert(db, "%s", err.msg);
    cr_assert_eq(hwt_close(db, &err), 0);
    cr_assert_eq(q_int("PRAGMA user_version"), HWT_SCHEMA_VERSION);
    char *jm = q_text("PRAGMA journal_mode");
    cr_assert_str_eq(jm, "wal");
    free(jm);
    cr_assert_eq(q_int("SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('runs','trials')"), 2);
    /* reopening an existing DB keeps it */
    db = hwt_open(dbpath, NULL, &err);
    cr_assert(db, "%s", err.msg);
    hwt_close(db, NULL);
}

Test(trials, newer_schema_version_is_refused) {
    sqlite3 *s;
    sqlite3_open(dbpath, &s);
    sqlite3_exec(s, "PRAGMA user_version = 7", NULL, NULL, NULL);
    sqlite3_close(s);
    hw_err err;
    hwt_db *db = hwt_open(dbpath, NULL, &err);
    cr_assert_null(db);
    cr_assert_eq(err.code, HW_E_NOT_SUPPORTED);
    cr_assert(strstr(err.msg, "newer") && strstr(err.msg, "7"), "%s", err.msg);
    cr_assert_null(hwt_open_readonly(dbpath, &err));
    cr_assert(strstr(err.msg, "schema version 7"), "%s", err.msg);
}

Test(trials, fields_are_stored) {
    hw_err err;
    hwt_db *db = hwt_open(dbpath, NULL, &err);
    cr_assert(db, "%s", err.msg);
    int64_t run = begin(db);
    json_t *a = json_pack("[ifi]", 1, 0.5, 3);
    json_t *o = json_pack("[ff]", 0.1, 0.2);
    json_t *m = json_pack("{sb}", "feasible", 0);
    hwt_trial t = {.run_id = run, .worker = "w1", .episode = 2, .step = 4, .has_reset_seed = true, .reset_seed = 99,
                   .action = a, .observation = o, .has_reward = true, .reward = NAN, .terminated = 1, .truncated = -1,
                   .metrics = m, .feasible = -1, .time = 123.5};
    cr_assert_eq(hwt_add_trial(db, &t, &err), 0, "%s", err.msg);
    hwt_trial e = {.run_id = run, .episode = 0, .step = 9, .kind = HWT_EVAL, .action = a, .has_reward = true, .reward = 2.5,
                   .terminated = -1, .truncated = -1, .feasible = 1};
    cr_assert_eq(hwt_add_trial(db, &e, &err), 0, "%s", err.msg);
    json_decref(a);
    json_decref(o);
    json_decref(m);
    cr_assert_eq(hwt_end_run(db, run, &err), 0, "%s", err.msg);
    hwt_close(db, NULL);
    char *s = q_text("SELECT worker||'|'||episode||'|'||step||'|'||kind||'|'||reset_seed||'|'||action||'|'||observation||'|'||"
                     "ifnull(reward,'NULL')||'|'||terminated||'|'||ifnull(truncated,'NULL')||'|'||metrics||'|'||feasible||'|'||time "
                     "FROM trials WHERE kind='step'");
    cr_assert_str_eq(s, "w1|2|4|step|99|[1,0.5,3]|[0.10000000000000001,0.20000000000000001]|NULL|1|NULL|{\"feasible\":false}|0|123.5");
    free(s);
    s = q_text("SELECT worker||'|'||step||'|'||kind||'|'||ifnull(reset_seed,'NULL')||'|'||reward||'|'||feasible FROM trials WHERE kind='eval'");
    cr_assert_str_eq(s, "0|-1|eval|NULL|2.5|1");
    free(s);
    s = q_text("SELECT agent||'|'||env||'|'||env_config||'|'||seed||'|'||version||'|'||(ended_at>=started_at) FROM runs");
    cr_assert_str_eq(s, "test|diag-v0|{\"dims\":3}|5|0.1.0|1");
    free(s);
}

Test(trials, batches_by_count) {
    hwt_opts o = hwt_opts_default();
    o.batch_trials = 10;
    o.batch_ms = 1000000;
    o.no_thread = true;
    hw_err err;
    hwt_db *db = hwt_open(dbpath, &o, &err);
    cr_assert(db, "%s", err.msg);
    int64_t run = begin(db);
    for (int i = 0; i < 9; i++) add(db, run, "0", 0, i);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 0, "nothing is written before the batch is full");
    cr_assert_eq(hwt_pending(db), 9);
    add(db, run, "0", 0, 9);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 10);
    cr_assert_eq(hwt_pending(db), 0);
    add(db, run, "0", 0, 10);
    cr_assert_eq(hwt_flush(db, &err), 0);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 11);
    hwt_close(db, NULL);
}

Test(trials, idle_buffer_is_flushed_after_batch_ms) {
    hwt_opts o = hwt_opts_default();
    o.batch_ms = 50;
    hw_err err;
    hwt_db *db = hwt_open(dbpath, &o, &err);
    cr_assert(db, "%s", err.msg);
    int64_t run = begin(db);
    add(db, run, "0", 0, 0);
    add(db, run, "0", 0, 1);
    int64_t n = 0;
    for (int i = 0; i < 200 && n < 2; i++) {
        usleep(10000);
        n = q_int("SELECT count(*) FROM trials");
    }
    cr_assert_eq(n, 2, "the flusher thread did not write the idle buffer within 2 s");
    hwt_close(db, NULL);
}

/* ---- processes ---- */

static void child_writer_batch(int k, int count, int batch) {
    hw_err err;
    hwt_opts o = hwt_opts_default();
    if (batch > 0) o.batch_trials = batch;
    hwt_db *db = hwt_open(dbpath, &o, &err);
    if (!db) {
        fprintf(stderr, "child %d: %s\n", k, err.msg);
        _exit(2);
    }
    json_t *ec = json_object();
    hwt_run r = {.agent = "concurrency", .env = "diag-v0", .env_config = ec};
    int64_t run = hwt_begin_run(db, &r, &err);
    if (run <= 0) _exit(3);
    char w[16];
    snprintf(w, sizeof w, "p%d", k);
    json_t *a = json_pack("[iii]", k, 1, 2);
    for (int i = 0; i < count; i++) {
        hwt_trial t = {.run_id = run, .worker = w, .episode = i / 100, .step = i % 100, .action = a, .has_reward = true,
                       .reward = i, .terminated = 0, .truncated = 0, .feasible = -1};
        if (hwt_add_trial(db, &t, &err)) {
            fprintf(stderr, "child %d: %s\n", k, err.msg);
            _exit(4);
        }
    }
    json_decref(a);
    json_decref(ec);
    if (hwt_close(db, &err)) _exit(5);
    _exit(0);
}

static void child_writer(int k, int count) { child_writer_batch(k, count, 0); }

Test(trials, four_processes_5000_trials_each) {
    hw_err err;
    /* create the schema first, as an agent launcher would; without the flusher thread: under ASan
     * a fork while another thread is inside malloc leaves the sanitizer's allocator locked in the
     * child (seen 2026-11-27 as this test's 60 s hang: a writer holding the WAL write lock, both its
     * threads waiting on ASan's allocator mutex, the other three waiting on it). glibc's own
     * malloc is fork-safe, so only the sanitizer build needs this. */
    hwt_opts o = hwt_opts_default();
    o.no_thread = true;
    hwt_db *db = hwt_open(dbpath, &o, &err);
    cr_assert(db);
    hwt_close(db, NULL);
    pid_t pids[4];
    for (int k = 0; k < 4; k++) {
        pids[k] = fork();
        if (pids[k] == 0) child_writer(k, 5000);
    }
    for (int k = 0; k < 4; k++) {
        int st;
        waitpid(pids[k], &st, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed (status %d)", k, st);
    }
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 20000);
    for (int k = 0; k < 4; k++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(DISTINCT episode*1000+step) FROM trials WHERE worker='p%d'", k);
        cr_assert_eq(q_int(sql), 5000, "worker p%d", k);
    }
    cr_assert_eq(q_int("SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 4);
    char *ic = q_text("PRAGMA integrity_check");
    cr_assert_str_eq(ic, "ok");
    free(ic);
}

Test(trials, four_processes_on_a_fresh_file) {
    /* no one creates the schema beforehand: the four race to create it */
    pid_t pids[4];
    for (int k = 0; k < 4; k++) {
        pids[k] = fork();
        if (pids[k] == 0) child_writer(k, 500);
    }
    for (int k = 0; k < 4; k++) {
        int st;
        waitpid(pids[k], &st, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed (status %d)", k, st);
    }
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 2000);
    char *ic = q_text("PRAGMA integrity_check");
    cr_assert_str_eq(ic, "ok");
    free(ic);
}

Test(trials, four_processes_one_trial_per_transaction) {
    /* worst case for lock contention: every trial is its own write transaction */
    pid_t pids[4];
    for (int k = 0; k < 4; k++) {
        pids[k] = fork();
        if (pids[k] == 0) child_writer_batch(k, 400, 1);
    }
    for (int k = 0; k < 4; k++) {
        int st;
        waitpid(pids[k], &st, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed (status %d)", k, st);
    }
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 1600);
    char *ic = q_text("PRAGMA integrity_check");
    cr_assert_str_eq(ic, "ok");
    free(ic);
}

/* Child logs `count` trials with a batch that never fills, tells the parent, then idles
 * (mode 0: sleeps; mode 1: no flusher thread, polls hwt_check_signals; mode 2: exit(0)). */
static pid_t logging_child(int count, int mode, int *ready_fd) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        hwt_opts o = hwt_opts_default();
        o.batch_trials = 100000;
        o.batch_ms = 1000000;
        o.no_thread = mode == 1;
        hw_err err;
        hwt_db *db = hwt_open(dbpath, &o, &err);
        if (!db) _exit(2);
        json_t *ec = json_object();
        hwt_run r = {.agent = "sig", .env = "diag-v0", .env_config = ec};
        int64_t run = hwt_begin_run(db, &r, &err);
        json_t *a = json_pack("[i]", 1);
        for (int i = 0; i < count; i++) {
            hwt_trial t = {.run_id = run, .episode = 0, .step = i, .action = a, .terminated = -1, .truncated = -1, .feasible = -1};
            hwt_add_trial(db, &t, &err);
        }
        if (write(p[1], "r", 1) != 1) _exit(6);
        if (mode == 2) exit(0); /* atexit flush */
        for (int i = 0; i < 3000; i++) {
            if (mode == 1) hwt_check_signals();
            usleep(10000);
        }
        _exit(7); /* not killed: fail */
    }
    close(p[1]);
    *ready_fd = p[0];
    return pid;
}

static void wait_ready(int fd) {
    char c;
    cr_assert_eq(read(fd, &c, 1), 1, "child did not get ready");
    close(fd);
}

Test(trials, sigterm_loses_nothing_logged) {
    int fd;
    pid_t pid = logging_child(1234, 0, &fd);
    wait_ready(fd);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 0, "the batch should still be buffered");
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "the child must still die by SIGTERM (status %d)", st);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 1234);
    cr_assert_eq(q_int("SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
}

Test(trials, sigint_without_thread_flushes_at_next_call) {
    int fd;
    pid_t pid = logging_child(77, 1, &fd);
    wait_ready(fd);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "status %d", st);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 77);
}

Test(trials, exit_flushes) {
    int fd;
    pid_t pid = logging_child(55, 2, &fd);
    wait_ready(fd);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    cr_assert_eq(q_int("SELECT count(*) FROM trials"), 55);
}

Test(trials, errors_name_the_problem) {
    hw_err err;
    cr_assert_null(hwt_open("/nonexistent-dir/x/t.db", NULL, &err));
    cr_assert_eq(err.code, HW_E_IO);
    cr_assert(strstr(err.msg, "/nonexistent-dir/x/t.db"), "%s", err.msg);
    hwt_db *db = hwt_open(dbpath, NULL, &err);
    hwt_trial t = {.run_id = 1};
    cr_assert_eq(hwt_add_trial(db, &t, &err), -1);
    cr_assert(strstr(err.msg, "action"), "%s", err.msg);
    hwt_run r = {.agent = "x"};
    cr_assert_eq(hwt_begin_run(db, &r, &err), -1);
    cr_assert(strstr(err.msg, "env"), "%s", err.msg);
    hwt_close(db, NULL);
}

/* A process that forks while its flusher thread is busy (an agent launcher that logs and then
 * starts workers): every child must be able to open and log. Before the fork handlers, a child
 * forked while the flusher held the module's lock deadlocked in hwt_open. The parent keeps a
 * handle with a trial always pending and a 1 ms batch, so its flusher takes the lock about every
 * millisecond; 150 children each log one trial; a child that has not ended within 20 s fails. */
Test(trials, children_forked_while_the_flusher_runs_can_log) {
    hw_err err;
    hwt_opts o = hwt_opts_default();
    o.batch_ms = 1;
    hwt_db *db = hwt_open(dbpath, &o, &err);
    cr_assert(db, "%s", err.msg);
    hwt_run r = {.agent = "parent", .env = "diag-v0"};
    int64_t run = hwt_begin_run(db, &r, &err);
    cr_assert_gt(run, 0, "%s", err.msg);
    enum { N = 150 };
    int stuck = 0;
    json_t *a = json_pack("[i]", 1);
    for (int k = 0; k < N && !stuck; k++) {
        hwt_trial t = {.run_id = run, .worker = "parent", .episode = 0, .step = k, .action = a, .has_reward = true, .reward = k, .feasible = -1};
        cr_assert_eq(hwt_add_trial(db, &t, &err), 0, "%s", err.msg);
        pid_t p = fork();
        if (p == 0) {
            hwt_opts co = hwt_opts_default();
            co.no_thread = true;
            hwt_db *c = hwt_open(dbpath, &co, &err);
            hwt_run cr = {.agent = "child", .env = "diag-v0"};
            int64_t crun = c ? hwt_begin_run(c, &cr, &err) : -1;
            hwt_trial ct = {.run_id = crun, .worker = "child", .action = a, .has_reward = true, .reward = 1, .feasible = -1};
            _exit(crun > 0 && !hwt_add_trial(c, &ct, &err) && !hwt_close(c, &err) ? 0 : 2);
        }
        int st = 0;
        double t0 = hwt_now();
        while (waitpid(p, &st, WNOHANG) == 0) {
            if (hwt_now() - t0 > 20) {
                kill(p, SIGKILL);
                waitpid(p, &st, 0);
                stuck = k + 1;
                break;
            }
            usleep(1000);
        }
        cr_assert(stuck || (WIFEXITED(st) && WEXITSTATUS(st) == 0), "child %d failed (status %d)", k, st);
    }
    json_decref(a);
    cr_assert_eq(stuck, 0, "child %d did not end within 20 s (deadlocked in the trial logger)", stuck - 1);
    cr_assert_eq(hwt_close(db, &err), 0, "%s", err.msg);
    cr_assert_eq(q_int("SELECT count(*) FROM runs WHERE agent = 'child' AND ended_at IS NOT NULL"), N);
}
