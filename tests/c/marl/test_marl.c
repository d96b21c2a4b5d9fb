/* hwgym-marl + hwgym-marl-worker end to end against a real hwgym-server (BUILD/bin, ipc):
 * one run with the right trials, determinism, assignment files, learning on diag-v0, and a
 * worker killed mid-run (TIMEOUT, non-zero exit, no hang). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/hwtest.h"

static char marl[4096];
static hwtest_server srv;

static void start(void) {
    cr_assert(hwtest_bin("hwgym-marl", marl, sizeof marl), "BUILD/bin/hwgym-marl not found");
    char w[4096];
    cr_assert(hwtest_bin("hwgym-marl-worker", w, sizeof w), "BUILD/bin/hwgym-marl-worker not found");
    int rc = hwtest_server_start(&srv, NULL);
    if (rc == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(rc, 0, "hwgym-server did not start");
}

static void stop(void) {
    if (srv.pid) hwtest_server_stop(&srv);
}

TestSuite(marl, .init = start, .fini = stop, .timeout = 80);

static int run_marl(char **out, char **err, const char *const *args) {
    const char *prefix[] = {marl, "--endpoint", srv.endpoint, "--quiet", NULL};
    return hwtest_run_args(prefix, args, out, err);
}
#define MARL(o, e, ...) run_marl(o, e, (const char *[]){__VA_ARGS__, NULL})

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, JSON_DISABLE_EOF_CHECK, &je);
    cr_assert(j, "stdout is not JSON (%s): %s", je.text, s);
    return j;
}

static long long q1(const char *db, const char *sql) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    long long v = -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

Test(marl, decentralized_run_writes_one_run_with_all_trials) {
    char db[200];
    snprintf(db, sizeof db, "%s/t.db", srv.dir);
    char *o, *e;
    int st = MARL(&o, &e, "--env", "diag-v0", "--config", "{\"dims\":3}", "--budget", "200", "--seed", "5", "--db", db);
    cr_assert_eq(st, 0, "hwgym-marl failed: %s", e);
    json_t *j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "agents")), 3);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 200);
    cr_assert_eq(json_array_size(json_object_get(j, "best_action")), 3);
    double best = json_number_value(json_object_get(j, "best_reward"));
    cr_assert(best > 0.5 && best <= 1.0);
    json_t *ws = json_object_get(j, "workers");
    cr_assert_eq(json_array_size(ws), 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(json_integer_value(json_object_get(json_array_get(ws, i), "samples")), 200);
        /* every agent saw the same shared reward, hence the same best */
        cr_assert_eq(json_number_value(json_object_get(json_array_get(ws, i), "best_reward")), best);
    }
    json_decref(j);
    free(o);
    free(e);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM runs"), 1);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM runs WHERE ended_at IS NOT NULL AND agent LIKE 'hwgym-marl%'"), 1);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE run_id = 1"), 200, "lead logging: one trial per sample");
    cr_assert_eq(q1(db, "SELECT COUNT(DISTINCT worker) FROM trials"), 1);
    /* diag-v0 episodes are 16 steps: 200 samples = 12 full episodes + 8 steps */
    cr_assert_eq(q1(db, "SELECT MAX(episode) FROM trials"), 12);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE truncated = 1"), 12); /* diag-v0's horizon: truncated */
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE terminated = 1"), 0);
    cr_assert_eq(q1(db, "SELECT MIN(reset_seed) FROM trials"), 5);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE json_array_length(action) = 3"), 200);

    /* --log all: every agent logs every sample under its own name, in a second run */
    st = MARL(NULL, &e, "--env", "diag-v0", "--config", "{\"dims\":3}", "--budget", "50", "--db", db, "--log", "all",
              "--agents", "single");
    cr_assert_eq(st, 0, "%s", e);
    free(e);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE run_id = 2"), 50, "single split: one agent");
    st = MARL(NULL, &e, "--env", "diag-v0", "--config", "{\"dims\":3}", "--budget", "50", "--db", db, "--log", "all");
    cr_assert_eq(st, 0, "%s", e);
    free(e);
    cr_assert_eq(q1(db, "SELECT COUNT(*) FROM trials WHERE run_id = 3"), 150);
    cr_assert_eq(q1(db, "SELECT COUNT(DISTINCT worker) FROM trials WHERE run_id = 3"), 3);
}

static char *actions_of(const char *db) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT group_concat(action || ':' || reward, ';') FROM (SELECT action, reward "
                                       "FROM trials ORDER BY id)", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    char *s = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return s;
}

Test(marl, same_seed_same_run) {
    char d1[200], d2[200], d3[200];
    snprintf(d1, sizeof d1, "%s/s1.db", srv.dir);
    snprintf(d2, sizeof d2, "%s/s2.db", srv.dir);
    snprintf(d3, sizeof d3, "%s/s3.db", srv.dir);
    char *o1, *o2;
    cr_assert_eq(MARL(&o1, NULL, "--env", "diag-v0", "--budget", "300", "--seed", "9", "--db", d1), 0);
    cr_assert_eq(MARL(&o2, NULL, "--env", "diag-v0", "--budget", "300", "--seed", "9", "--db", d2), 0);
    cr_assert_eq(MARL(NULL, NULL, "--env", "diag-v0", "--budget", "300", "--seed", "10", "--db", d3), 0);
    json_t *a = parse(o1), *b = parse(o2);
    cr_assert(json_equal(json_object_get(a, "best_action"), json_object_get(b, "best_action")));
    cr_assert_eq(json_number_value(json_object_get(a, "best_reward")), json_number_value(json_object_get(b, "best_reward")));
    char *s1 = actions_of(d1), *s2 = actions_of(d2), *s3 = actions_of(d3);
    cr_assert_str_eq(s1, s2, "same seed, different trials");
    cr_assert_str_neq(s1, s3, "a different seed gave the same 300 joint actions");
    free(s1);
    free(s2);
    free(s3);
    json_decref(a);
    json_decref(b);
    free(o1);
    free(o2);
}

Test(marl, assignment_file_round_trip) {
    char path[200], bad[200];
    snprintf(path, sizeof path, "%s/assign.json", srv.dir);
    snprintf(bad, sizeof bad, "%s/bad.json", srv.dir);
    /* the format hwgym cluster writes (extra keys are ignored) */
    FILE *f = fopen(path, "w");
    fputs("{\"agents\":[{\"name\":\"a0\",\"dims\":[0,2],\"params\":[\"x0\",\"x2\"]},{\"name\":\"a1\",\"dims\":[1,3]}],"
          "\"linkage\":\"average\"}",
          f);
    fclose(f);
    char *o, *e;
    int st = MARL(&o, &e, "--env", "diag-v0", "--agents", path, "--budget", "64", "--policy", "random");
    cr_assert_eq(st, 0, "%s", e);
    json_t *j = parse(o);
    cr_assert_eq(json_integer_value(json_object_get(j, "agents")), 2);
    json_t *ws = json_object_get(j, "workers");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ws, 0), "agent")), "a0");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ws, 1), "agent")), "a1");
    json_decref(j);
    free(o);
    free(e);
    /* a split that does not cover the action elements is refused before any worker starts */
    f = fopen(bad, "w");
    fputs("{\"agents\":[{\"name\":\"a0\",\"dims\":[0,2]}]}", f);
    fclose(f);
    st = MARL(NULL, &e, "--env", "diag-v0", "--agents", bad, "--budget", "10");
    cr_assert_eq(st, 2);
    cr_assert(strstr(e, "hold 2 action elements; the env has 4"), "%s", e);
    free(e);
    /* overlapping dims: the server names the problem */
    f = fopen(bad, "w");
    fputs("{\"agents\":[{\"name\":\"a0\",\"dims\":[0,1]},{\"name\":\"a1\",\"dims\":[1,2]}]}", f);
    fclose(f);
    st = MARL(NULL, &e, "--env", "diag-v0", "--config", "{\"dims\":4}", "--agents", bad, "--budget", "10");
    cr_assert_neq(st, 0);
    cr_assert(strstr(e, "hwgym-marl"), "%s", e);
    free(e);
    st = MARL(NULL, &e, "--env", "diag-v0", "--agents", "nonsense", "--budget", "10");
    cr_assert_eq(st, 2);
    cr_assert(strstr(e, "--agents"), "%s", e);
    free(e);
}

Test(marl, ppo_agents_learn_diag) {
    char db[200];
    snprintf(db, sizeof db, "%s/learn.db", srv.dir);
    char *o, *e;
    int st = MARL(&o, &e, "--env", "diag-v0", "--budget", "3000", "--seed", "1", "--db", db);
    cr_assert_eq(st, 0, "%s", e);
    free(o);
    free(e);
    /* mean reward of the last 500 samples well above the first 500 (random: ~0.57) */
    sqlite3 *h;
    sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *s;
    sqlite3_prepare_v2(h, "SELECT AVG(reward) FROM (SELECT reward FROM trials ORDER BY id LIMIT 500)", -1, &s, NULL);
    sqlite3_step(s);
    double first = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    sqlite3_prepare_v2(h, "SELECT AVG(reward) FROM (SELECT reward FROM trials ORDER BY id DESC LIMIT 500)", -1, &s,
                       NULL);
    sqlite3_step(s);
    double last = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    cr_assert(last > first + 0.1, "no learning: first 500 %.3f, last 500 %.3f", first, last);
}

/* children of pid (from /proc/<pid>/task/<pid>/children or a /proc scan) */
static int children(pid_t pid, pid_t *out, int cap) {
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) && n < cap) {
        char path[300], buf[512];
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        char *rp = strrchr(buf, ')');
        if (!rp) continue;
        char state;
        int ppid;
        if (sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == pid) out[n++] = (pid_t)atoi(de->d_name);
    }
    if (d) closedir(d);
    return n;
}

Test(marl, killed_worker_times_out_and_launcher_fails) {
    char errpath[200], dbpath[200];
    snprintf(errpath, sizeof errpath, "%s/launcher.err", srv.dir);
    snprintf(dbpath, sizeof dbpath, "%s/failed.db", srv.dir);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 1);
        /* slow steps (2 ms) and a long budget: the run is still going when a worker is killed */
        execl(marl, marl, "--endpoint", srv.endpoint, "--quiet", "--env", "diag-v0", "--config",
              "{\"dims\":3,\"step_us\":2000}", "--budget", "100000", "--agent-timeout-ms", "1500", "--policy", "random",
              "--db", dbpath, (char *)NULL);
        _exit(127);
    }
    pid_t kids[8];
    int nk = 0;
    for (int i = 0; i < 100 && nk < 3; i++) {
        usleep(50000);
        nk = children(pid, kids, 8);
    }
    cr_assert_eq(nk, 3, "expected 3 workers, found %d", nk);
    usleep(300000);
    kill(kids[1], SIGKILL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    pid_t w = 0;
    for (int i = 0; i < 400 && w == 0; i++) { /* up to 40 s */
        w = waitpid(pid, &st, WNOHANG);
        if (!w) usleep(100000);
    }
    if (!w) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
        cr_assert_fail("hwgym-marl hung after a worker was killed");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "launcher status %d", st);
    cr_assert_lt(secs, 20.0, "took %.1f s", secs);
    FILE *f = fopen(errpath, "r");
    char buf[8192];
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = 0;
    fclose(f);
    cr_assert(strstr(buf, "killed by signal 9"), "%s", buf);
    cr_assert(strstr(buf, "TIMEOUT"), "the surviving workers should report the barrier TIMEOUT: %s", buf);
    cr_assert(strstr(buf, "run failed"), "%s", buf);
    /* the failed run stays in the DB without ended_at (docs/marl.md) */
    cr_assert_eq(q1(dbpath, "SELECT COUNT(*) FROM runs WHERE ended_at IS NULL AND agent LIKE 'hwgym-marl%'"), 1);
    cr_assert_eq(q1(dbpath, "SELECT COUNT(*) FROM runs WHERE ended_at IS NOT NULL AND agent LIKE 'hwgym-marl%'"), 0);
    /* no worker is left behind */
    usleep(200000);
    for (int i = 0; i < nk; i++) cr_assert_eq(kill(kids[i], 0), -1, "worker %d still exists", (int)kids[i]);
}

/* --print-commands: the launcher makes the session and prints one worker command per agent
 * (to run on other hosts); running those lines completes the run. */
Test(marl, print_commands_runs_remote_workers) {
    char *o, *e;
    int st = MARL(&o, &e, "--env", "diag-v0", "--config", "{\"dims\":2}", "--budget", "40", "--print-commands",
                  "--agent-timeout-ms", "10000");
    cr_assert_eq(st, 0, "%s", e);
    free(e);
    char *lines[2] = {NULL, NULL};
    int nl = 0;
    for (char *save = NULL, *l = strtok_r(o, "\n", &save); l && nl < 3; l = strtok_r(NULL, "\n", &save)) {
        cr_assert_lt(nl, 2, "more than 2 command lines: %s", l);
        lines[nl++] = l;
    }
    cr_assert_eq(nl, 2);
    cr_assert(strstr(lines[0], "hwgym-marl-worker") && strstr(lines[0], "--agent p0") && strstr(lines[0], "--session"),
              "%s", lines[0]);
    cr_assert(strstr(lines[1], "--agent p1"), "%s", lines[1]);
    pid_t pids[2];
    char outp[2][256];
    for (int i = 0; i < 2; i++) {
        snprintf(outp[i], sizeof outp[i], "%s/w%d.json", srv.dir, i);
        char *argv[40];
        int n = 0;
        for (char *save = NULL, *t = strtok_r(lines[i], " ", &save); t && n < 39; t = strtok_r(NULL, " ", &save))
            argv[n++] = t;
        argv[n] = NULL;
        pids[i] = fork();
        if (pids[i] == 0) {
            int fd = open(outp[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(fd, 1);
            execv(argv[0], argv);
            _exit(127);
        }
    }
    for (int i = 0; i < 2; i++) {
        int ws;
        waitpid(pids[i], &ws, 0);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "worker %d status %d", i, ws);
        json_t *j = json_load_file(outp[i], 0, NULL);
        cr_assert(j, "worker %d printed no summary", i);
        cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 40);
        json_decref(j);
    }
    free(o);
}
