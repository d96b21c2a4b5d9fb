/* test_e2e.c - hwgym-search's command line against a real server (hw_server_run on a thread,
 * ipc endpoint): exactly `budget` eval trials land in the DB, the summary is one JSON line, and
 * the same seed gives the same trials whether the points go over the wire or in-process. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "helpers.h"
#include "server.h"

typedef struct tsrv {
    hw_server_opts o;
    volatile sig_atomic_t stop;
    pthread_t th;
    int rc;
    char ep[128];
} tsrv;

static void *srv_main(void *arg) {
    tsrv *s = arg;
    s->rc = hw_server_run(&s->o, &s->stop);
    return NULL;
}

static void srv_up(tsrv *s, const char *dir) {
    hw_server_default_opts(&s->o);
    s->o.workers = 2;
    snprintf(s->ep, sizeof s->ep, "ipc://%s/s.sock", dir);
    s->o.binds[0] = s->ep;
    s->o.nbinds = 1;
    s->stop = 0;
    pthread_create(&s->th, NULL, srv_main, s);
    /* wait for it to answer (a session make through agents/lib) */
    hw_err err = {0};
    for (int i = 0; i < 200; i++) {
        ag_sess *x = ag_sess_make(s->ep, "diag-v0", NULL, NULL, 0, &err);
        if (x) {
            ag_sess_free(x);
            return;
        }
        usleep(20000);
    }
    cr_assert(0, "server did not come up: %s", err.msg);
}

static void srv_down(tsrv *s) {
    s->stop = 1;
    pthread_join(s->th, NULL);
    cr_expect_eq(s->rc, 0);
}

/* Runs hs_main with stdout captured into *out (malloc'd). */
static int run_cli(int argc, char **argv, const char *dir, char **out) {
    char path[256];
    snprintf(path, sizeof path, "%s/stdout.txt", dir);
    fflush(stdout);
    int saved = dup(1);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    dup2(fileno(f), 1);
    int rc = hs_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(f);
    f = fopen(path, "r");
    cr_assert(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    *out = strdup(buf);
    return rc;
}

static int64_t count(const char *db, const char *sql) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

static char *actions(const char *db) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT action, reward FROM trials ORDER BY id", -1, &st, NULL), SQLITE_OK);
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    s[0] = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *a = (const char *)sqlite3_column_text(st, 0);
        char line[256];
        int n = snprintf(line, sizeof line, "%s %.17g\n", a ? a : "null", sqlite3_column_double(st, 1));
        if (len + (size_t)n + 1 > cap) s = realloc(s, cap *= 2);
        memcpy(s + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return s;
}

Test(search_e2e, server_run_logs_every_point, .timeout = 80) {
    char dir[64];
    hwtest_tmpdir(dir, sizeof dir);
    tsrv s;
    srv_up(&s, dir);
    const char *algos[] = {"ga", "bo", "random"};
    const char *budgets[] = {"57", "21", "40"};
    for (int k = 0; k < 3; k++) {
        char db[128], *out = NULL;
        snprintf(db, sizeof db, "%s/%s.db", dir, algos[k]);
        char *argv[] = {"hwgym-search", "--endpoint", s.ep, "--env", "diag-v0", "--config", "{\"dims\":3,\"choices\":6}",
                        "--algo", (char *)algos[k], "--budget", (char *)budgets[k], "--batch", "10", "--seed", "4",
                        "--db", db, "--quiet", NULL};
        int rc = run_cli(17, argv, dir, &out);
        cr_assert_eq(rc, 0, "%s exited %d", algos[k], rc);
        json_error_t je;
        json_t *sum = json_loads(out, 0, &je);
        cr_assert(sum, "summary is not one JSON document: %s (%s)", out, je.text);
        int64_t budget = atoll(budgets[k]);
        cr_expect_eq(json_integer_value(json_object_get(sum, "samples")), budget);
        cr_expect_eq(json_integer_value(json_object_get(sum, "evaluate_calls")), (budget + 9) / 10 + (k == 0 ? 1 : 0),
                     "%s: %lld calls", algos[k], (long long)json_integer_value(json_object_get(sum, "evaluate_calls")));
        cr_expect(json_is_object(json_object_get(sum, "best_point")));
        cr_expect(json_is_number(json_object_get(sum, "best_reward")));
        cr_expect_str_eq(json_string_value(json_object_get(sum, "algo")), algos[k]);
        char q[256];
        snprintf(q, sizeof q, "SELECT count(*) FROM trials WHERE kind='eval' AND step=-1");
        cr_expect_eq(count(db, q), budget, "%s: eval trials", algos[k]);
        cr_expect_eq(count(db, "SELECT count(*) FROM trials"), budget);
        cr_expect_eq(count(db, "SELECT count(*) FROM trials WHERE feasible=1 AND reward IS NOT NULL"), budget);
        cr_expect_eq(count(db, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
        /* the best reward in the DB is the summary's */
        sqlite3 *h;
        sqlite3_open(db, &h);
        sqlite3_stmt *st;
        sqlite3_prepare_v2(h, "SELECT max(reward) FROM trials", -1, &st, NULL);
        sqlite3_step(st);
        cr_expect_eq(sqlite3_column_double(st, 0), json_number_value(json_object_get(sum, "best_reward")));
        sqlite3_finalize(st);
        sqlite3_close(h);
        json_decref(sum);
        free(out);
    }
    /* the same run in-process logs the same points and rewards as over the server */
    char db1[128], db2[128], *o1, *o2;
    snprintf(db1, sizeof db1, "%s/w.db", dir);
    snprintf(db2, sizeof db2, "%s/l.db", dir);
    char *a1[] = {"hwgym-search", "--endpoint", s.ep, "--env", "diag-v0", "--algo", "gamma", "--budget", "64", "--batch",
                  "16", "--seed", "9", "--db", db1, "--quiet", NULL};
    char *a2[] = {"hwgym-search", "--endpoint", "local", "--env", "diag-v0", "--algo", "gamma", "--budget", "64", "--batch",
                  "16", "--seed", "9", "--db", db2, "--quiet", NULL};
    cr_assert_eq(run_cli(16, a1, dir, &o1), 0);
    cr_assert_eq(run_cli(16, a2, dir, &o2), 0);
    char *t1 = actions(db1), *t2 = actions(db2);
    cr_expect_str_eq(t1, t2);
    free(t1);
    free(t2);
    free(o1);
    free(o2);
    srv_down(&s);
    hwtest_rmtree(dir);
}

Test(search_e2e, usage_errors) {
    char dir[64];
    hwtest_tmpdir(dir, sizeof dir);
    char *out;
    char *a1[] = {"hwgym-search", "--endpoint", "local", "--env", "diag-v0", "--algo", "tabu", NULL};
    cr_expect_eq(run_cli(7, a1, dir, &out), 2);
    free(out);
    char *a2[] = {"hwgym-search", "--endpoint", "local", "--env", "diag-v0", "--opt", "ga_bogus=1", NULL};
    cr_expect_eq(run_cli(7, a2, dir, &out), 2);
    free(out);
    char *a2b[] = {"hwgym-search", "--endpoint", "local", "--env", "diag-v0", "--opt", "es_sigma=0", NULL};
    cr_expect_eq(run_cli(7, a2b, dir, &out), 2);
    free(out);
    char *a3[] = {"hwgym-search", "--endpoint", "local", "--algo", "ga", NULL};
    cr_expect_eq(run_cli(5, a3, dir, &out), 2);
    free(out);
    char *a4[] = {"hwgym-search", "--endpoint", "local", "--env", "no-such-v0", NULL};
    cr_expect_eq(run_cli(5, a4, dir, &out), 1);
    free(out);
    char *a5[] = {"hwgym-search", "--help", NULL};
    cr_expect_eq(run_cli(2, a5, dir, &out), 0);
    free(out);
    /* hyperparameters are applied: ga with elite 0 and a budget of 1 generation still works */
    char *a6[] = {"hwgym-search", "--endpoint", "local", "--env", "diag-v0", "--algo", "ga", "--opt", "ga_elite=0,ga_tournament=2",
                  "--budget", "30", "--batch", "10", "--quiet", NULL};
    cr_expect_eq(run_cli(14, a6, dir, &out), 0);
    json_t *j = json_loads(out, 0, NULL);
    cr_expect_eq(json_integer_value(json_object_get(j, "evaluate_calls")), 3);
    json_decref(j);
    free(out);
    hwtest_rmtree(dir);
}
