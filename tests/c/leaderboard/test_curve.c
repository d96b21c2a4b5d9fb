/* tests/c/leaderboard/test_curve.c - a cell's score from its trials, by hand.
 * sched_log env "s" (budget 8 evaluations, small 4, CPU cap 10 s), variant rl~off seed 0, worker 0:
 *   trials 1-2: episode 0, rewards 0.5, 0.5 (done)  -> -log(0.5) - log(0.5) = log 4 at trial 2
 *   trial 3:    episode 1, reward 0.75 (done)         -> -log(0.25) = log 4
 *   trials 4-5: episode 2, rewards -0.01 (a penalty: clamped to 0), 0.9 (done) -> log 10 at trial 5
 *   trials 6-8: episode 3, 0.1 each, never done       -> no score
 * so the best after n trials is NAN (n = 1), log 4 (n = 2..4), log 10 (n >= 5).
 * The random control (kind 'eval', each trial its own score): 0.5 1.0 0.2 0.3 0.1 0.1 0.1 0.1:
 * 1.0 at the small and the large budget, so lo = 1.0, hi = log 10 (the best logged), and rl~off
 * normalises to (log 4 - 1) / (log 10 - 1) at the small budget and 1 at the large one.
 * CPU: 2 s over trials at t = 101..108 (run started at 100), so trial i is at 2 i / 8 s; the
 * first CPU grid point (10/16 = 0.625 s) sees trials 1-2 (log 4), the fourth (2.5 s) all.
 * max_return env "r" with an interleaved second worker: worker 0 episode 0 rewards 1, 2 (done) = 3;
 * worker "greedy" 5 (not done); worker 0 episode 1: 1 (done) = 1; "greedy" 5 (done) = 10. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "clients/cli/lb_curve.h"
#include "clients/cli/lb_db.h"

static const char *SUITE =
    "{\"name\":\"t\",\"seeds\":1,\"budget\":{\"evals\":8,\"small\":4,\"cpu_s\":10},"
    "\"agents\":{\"random\":{\"bin\":\"hwgym-search\"},\"rl\":{\"bin\":\"hwgym-ppo\",\"learning_off\":[\"--lr\",\"0\"]}},"
    "\"envs\":[{\"name\":\"s\",\"env\":\"sched-v0\",\"score\":\"sched_log\",\"random\":\"random\",\"agents\":[\"random\",\"rl\"]},"
    "{\"name\":\"r\",\"env\":\"mmap-v0\",\"score\":\"max_return\",\"random\":\"random\",\"agents\":[\"random\",\"rl\"]}]}";

static void exec_sql(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg ? msg : "");
}

/* a run with its cell row and its trials: (worker, episode, kind, reward, done) */
typedef struct {
    const char *worker, *kind;
    int episode;
    double r;
    int done;
} tr;

static void add_cell(sqlite3 *db, int run, const char *env, const char *variant, const tr *t, int n) {
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO runs (id, agent, env, started_at) VALUES (%d, 'a', 'x', 100)", run);
    exec_sql(db, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO leaderboard_cells (key, env_name, env, variant, seed, off, run_id, cpu_s, started_at, status)"
             " VALUES ('%s/%s/0', '%s', 'x', '%s', 0, 0, %d, 2.0, 100, 0)",
             env, variant, env, variant, run);
    exec_sql(db, sql);
    for (int i = 0; i < n; i++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO trials (run_id, worker, episode, step, kind, action, reward, terminated, time)"
                 " VALUES (%d, '%s', %d, 0, '%s', '[]', %.17g, %d, %d)",
                 run, t[i].worker, t[i].episode, t[i].kind, t[i].r, t[i].done, 101 + i);
        exec_sql(db, sql);
    }
}

Test(curve, scores_by_hand) {
    char path[] = "/tmp/hwgym-lbcurve-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    unlink(path);
    hw_err err = {0};
    sqlite3 *db = lb_db_open(path, false, &err);
    cr_assert(db, "%s", err.msg);
    const tr rl[] = {{"0", "step", 0, 0.5, 0},  {"0", "step", 0, 0.5, 1}, {"0", "step", 1, 0.75, 1}, {"0", "step", 2, -0.01, 0},
                     {"0", "step", 2, 0.9, 1},  {"0", "step", 3, 0.1, 0}, {"0", "step", 3, 0.1, 0},  {"0", "step", 3, 0.1, 0}};
    const tr rnd[] = {{"0", "eval", 0, 0.5, 0}, {"0", "eval", 1, 1.0, 0}, {"0", "eval", 2, 0.2, 0}, {"0", "eval", 3, 0.3, 0},
                      {"0", "eval", 4, 0.1, 0}, {"0", "eval", 5, 0.1, 0}, {"0", "eval", 6, 0.1, 0}, {"0", "eval", 7, 0.1, 0}};
    const tr ret[] = {{"0", "step", 0, 1, 0}, {"0", "step", 0, 2, 1}, {"greedy", "step", 0, 5, 0}, {"0", "step", 1, 1, 1},
                      {"greedy", "step", 0, 5, 1}};
    add_cell(db, 1, "s", "rl~off", rl, 8);
    add_cell(db, 2, "s", "random", rnd, 8);
    add_cell(db, 3, "r", "rl", ret, 5);
    json_t *root = json_loads(SUITE, 0, NULL);
    lb_suite s;
    cr_assert_eq(lb_suite_parse(root, false, &s, &err), 0, "%s", err.msg);
    json_decref(root);
    lb_table t;
    cr_assert_eq(lb_table_load(&t, &s, db, &err), 0, "%s", err.msg);
    cr_expect_eq(t.done, 3);
    lb_curve *c = lb_table_cell(&t, 0, 3, 0); /* env s, agent rl (index 1) off: v = 3 */
    cr_assert(c);
    double l4 = log(4), l10 = log(10);
    cr_expect_eq(c->evals, 8);
    cr_expect_float_eq(c->small, l4, 1e-12);
    cr_expect(isnan(c->ev[0]) && isnan(c->ev[1])); /* round(8 * 1/16) = 1 and round(8 * 2/16) = 1 trial */
    cr_expect_float_eq(c->ev[2], l4, 1e-12);        /* 2 trials */
    cr_expect_float_eq(c->ev[7], l4, 1e-12);        /* 4 trials */
    cr_expect_float_eq(c->ev[8], l10, 1e-12);       /* 5 trials (round 4.5 = 5) */
    cr_expect_float_eq(c->ev[15], l10, 1e-12);
    cr_expect_float_eq(c->cpu[0], l4, 1e-12);
    cr_expect_float_eq(c->cpu[3], l10, 1e-12);
    cr_expect_float_eq(t.lo_small[0], 1.0, 1e-12);
    cr_expect_float_eq(t.lo_ev[LB_GRID - 1], 1.0, 1e-12);
    cr_expect_float_eq(t.hi[0], l10, 1e-12);
    cr_expect(!t.hi_is_optimum[0]);
    cr_expect_float_eq(lb_table_norm(&t, 0, c->small, t.lo_small[0]), (l4 - 1) / (l10 - 1), 1e-12);
    cr_expect_float_eq(lb_table_norm(&t, 0, c->ev[15], t.lo_ev[LB_GRID - 1]), 1.0, 1e-12);
    /* no score yet counts as the env's worst best-so-far score: the random control's 0.5 after
     * its first trial (its later 0.1s are never a best so far) */
    cr_expect_float_eq(t.worst[0], 0.5, 1e-12);
    cr_expect_float_eq(lb_table_norm(&t, 0, NAN, 1.0), (0.5 - 1) / (l10 - 1), 1e-12);
    lb_curve *r = lb_table_cell(&t, 1, 2, 0); /* env r, agent rl trained: v = 2 */
    cr_assert(r);
    cr_expect_float_eq(r->ev[3], 3.0, 1e-12);  /* round(8 * 4/16) = 2 trials: worker 0's first episode */
    cr_expect_float_eq(r->ev[15], 10.0, 1e-12); /* the greedy worker's episode, not 5 + 1 + 5 */
    lb_table_free(&t);
    lb_suite_free(&s);
    lb_db_close(db);
    unlink(path);
}
