/* test_common.c - agents/lib common infrastructure: options, local session, run logging. */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_common.h"

Test(agent_common, parse_args) {
    int64_t epochs = 10;
    double lr = 2.5e-4;
    bool flag = false;
    const char *name = NULL;
    ag_optdef extra[] = {{"epochs", AG_OPT_INT, &epochs, "e"}, {"lr", AG_OPT_DOUBLE, &lr, "l"},
                         {"flag", AG_OPT_FLAG, &flag, "f"}, {"name", AG_OPT_STRING, &name, "n"}, {0}};
    char *argv[] = {"x", "--env", "diag-v0", "--config", "{\"dims\":2}", "--seed=7", "--budget", "50",
                    "--epochs", "3", "--lr=0.01", "--flag", "--name", "abc", "--quiet", "--endpoint", "local", NULL};
    ag_opts o;
    int rc;
    cr_assert_eq(ag_parse_args(17, argv, "x", NULL, extra, &o, &rc), 0);
    cr_assert_str_eq(o.env, "diag-v0");
    cr_assert_eq(o.seed, 7);
    cr_assert_eq(o.budget, 50);
    cr_assert_eq(epochs, 3);
    cr_assert_float_eq(lr, 0.01, 1e-12);
    cr_assert(flag && o.quiet);
    cr_assert_str_eq(name, "abc");
    cr_assert_str_eq(o.endpoint, "local");
    cr_assert_eq(json_integer_value(json_object_get(o.config, "dims")), 2);
    json_t *j = ag_opts_to_json(&o, extra);
    cr_assert_eq(json_integer_value(json_object_get(j, "epochs")), 3);
    json_decref(j);
    ag_opts_free(&o);

    char *bad[] = {"x", "--budget", "zero", NULL};
    cr_assert_eq(ag_parse_args(3, bad, "x", NULL, NULL, &o, &rc), 1);
    cr_assert_eq(rc, 2);
    char *bad2[] = {"x", "--nope", "1", NULL};
    cr_assert_eq(ag_parse_args(3, bad2, "x", NULL, NULL, &o, &rc), 1);
    cr_assert_eq(rc, 2);
    char *bad3[] = {"x", "--config", "[1]", NULL};
    cr_assert_eq(ag_parse_args(3, bad3, "x", NULL, NULL, &o, &rc), 1);
}

Test(agent_common, local_session_mask_and_evaluate) {
    hw_err err = {0};
    json_t *cfg = json_pack("{s:i, s:i, s:i, s:b}", "dims", 3, "choices", 5, "episode_length", 2, "action_mask", 1);
    ag_sess *s = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    cr_assert(s, "%s", err.msg);
    cr_assert_eq(s->act_dim, 3);
    cr_assert_eq(s->obs_dim, 5);
    int64_t ch[3];
    cr_assert_eq(ag_sess_choices(s, ch), 1);
    cr_assert_eq(ch[2], 5);
    uint64_t seed = 1;
    cr_assert_eq(ag_sess_reset(s, &seed, &err), 0, "%s", err.msg);
    cr_assert_eq(s->mask_len, 15);
    int64_t a[3] = {0, 1, 2};
    cr_assert_eq(ag_sess_step_i64(s, a, &err), 0, "%s", err.msg);
    cr_assert(s->reward <= 1.0 && s->reward >= 0.0);
    cr_assert(!s->terminated && !s->truncated);
    cr_assert_float_eq(s->obs[1], 0.25, 1e-6); /* last action / (choices-1) */
    cr_assert_eq(ag_sess_step_i64(s, a, &err), 0);
    cr_assert(s->truncated && !s->terminated); /* diag-v0's horizon is a time limit */
    int64_t badact[3] = {0, 9, 0};
    cr_assert_eq(ag_sess_reset(s, NULL, &err), 0);
    cr_assert_eq(ag_sess_step_i64(s, badact, &err), -1);
    cr_assert_eq(err.code, HW_E_BAD_ACTION);
    json_t *pts = json_loads("[[0,1,2],[4,4,4]]", 0, NULL);
    double rw[2];
    json_t *ms = NULL;
    cr_assert_eq(ag_sess_evaluate_batch(s, pts, rw, &ms, &err), 0, "%s", err.msg);
    cr_assert_eq(json_array_size(ms), 2, "%zu %s", json_array_size(ms), json_dumps(ms, 0));
    cr_assert(isfinite(rw[0]) && isfinite(rw[1]));
    json_decref(ms);
    json_decref(pts);
    ag_sess_free(s);
    json_decref(cfg);
}

static int count_rows(const char *db, const char *sql) {
    sqlite3 *h;
    sqlite3_open(db, &h);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    int n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

Test(agent_common, run_logs_trials_and_tracks_best) {
    char db[64];
    snprintf(db, sizeof db, "/tmp/hwgym-agtest-%d.db", (int)getpid());
    unlink(db);
    char *argv[] = {"x", "--env", "diag-v0", "--db", db, "--budget", "3", "--quiet", NULL};
    ag_opts o;
    int rc;
    cr_assert_eq(ag_parse_args(8, argv, "x", NULL, NULL, &o, &rc), 0);
    hw_err err = {0};
    ag_run *r = ag_run_begin(&o, "test-agent", NULL, &err);
    cr_assert(r, "%s", err.msg);
    json_t *a1 = json_loads("[1,2]", 0, NULL), *a2 = json_loads("[3,3]", 0, NULL);
    json_t *m = json_pack("{s:b}", "feasible", 1);
    cr_assert_eq(ag_run_step(r, NULL, 0, 0, 5, a1, NULL, 0.5, 0, 0, m, &err), 0, "%s", err.msg);
    cr_assert_eq(ag_run_eval(r, "w1", 0, a2, 0.9, m, &err), 0);
    cr_assert_eq(ag_run_eval(r, "w1", 1, a1, NAN, NULL, &err), 0);
    cr_assert_eq(ag_run_samples(r), 3);
    cr_assert(ag_run_done(r));
    cr_assert_float_eq(ag_run_best(r), 0.9, 1e-12);
    int64_t id = ag_run_id(r);
    cr_assert_gt(id, 0);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    cr_assert_eq(ag_run_end(r, NULL, &err), 0, "%s", err.msg);
    fclose(stdout);
    stdout = saved;
    cr_assert_eq(count_rows(db, "SELECT count(*) FROM trials"), 3);
    cr_assert_eq(count_rows(db, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
    json_decref(a1);
    json_decref(a2);
    json_decref(m);
    ag_opts_free(&o);
    unlink(db);
}
