/* test_resume.c - hwgym-muzero's checkpoint and --resume (docs/cluster.md's rule): a run killed
 * with SIGKILL at a chosen sample (HWGYM_TEST_KILL_AT) and resumed with the same command line
 * logs exactly the uninterrupted run's trials in the same order and ends with the same best.
 * MuZero (networks, Adam, replay with the demonstration, Reanalyse, Drop-backup state of the
 * games in flight, rebuilt by replaying their prefixes), the advantage value target, and ES
 * (population state), in process. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "../common/hwtest_db.h"

static char tmp[64];

static void mk(void) { hwtest_tmpdir(tmp, sizeof tmp); }
static void rm(void) { hwtest_rmtree(tmp); }

TestSuite(muzero_resume, .init = mk, .fini = rm, .timeout = 120);

static json_t *summary(const char *out) {
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
    cr_assert(json_is_object(j), "summary is not JSON: %s", out);
    return j;
}

static void kill_and_resume(const char *tag, const char *const *prefix, long long budget, long long kill, const char *every) {
    char full[256], part[256], cfull[256], cpart[256];
    snprintf(full, sizeof full, "%s/%s-full.db", tmp, tag);
    snprintf(part, sizeof part, "%s/%s-part.db", tmp, tag);
    snprintf(cfull, sizeof cfull, "%s/%s-full.csv", tmp, tag);
    snprintf(cpart, sizeof cpart, "%s/%s-part.csv", tmp, tag);
    char *out = NULL, *err = NULL;
    cr_assert_eq(hwtest_run_args(prefix, (const char *[]){"--db", full, "--curve", cfull, NULL}, &out, &err), 0, "%s: %s", tag, err);
    json_t *a = summary(out);
    free(out);
    free(err);
    if (!strcmp(tag, "es")) cr_assert_gt(json_integer_value(json_object_get(a, "losses_restored")), 0, "the ES case must restore");

    char k[32];
    snprintf(k, sizeof k, "%lld", kill);
    setenv("HWGYM_TEST_KILL_AT", k, 1);
    int rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--curve", cpart, "--checkpoint-every", every, "--resume", NULL}, &out, &err);
    unsetenv("HWGYM_TEST_KILL_AT");
    cr_assert_eq(rc, 137, "%s: the attempt to be killed at sample %lld exited %d: %s", tag, kill, rc, err);
    free(out);
    free(err);
    long long n_part;
    free(hwtest_db_trials(part, &n_part));
    cr_assert_lt(n_part, budget, "%s: the killed attempt logged all %lld trials", tag, n_part);

    rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--curve", cpart, "--checkpoint-every", every, "--resume", NULL}, &out, &err);
    cr_assert_eq(rc, 0, "%s resumed: exit %d: %s", tag, rc, err);
    cr_assert(strstr(err, "resuming run"), "%s: the second attempt did not resume: %s", tag, err);
    json_t *b = summary(out);
    free(out);
    free(err);

    long long n_full, n_res;
    char *ta = hwtest_db_trials(full, &n_full), *tb = hwtest_db_trials(part, &n_res);
    cr_assert_eq(n_full, budget);
    cr_assert_eq(n_res, n_full, "%s: %lld trials uninterrupted, %lld after resume", tag, n_full, n_res);
    if (strcmp(ta, tb)) {
        size_t i = 0;
        while (ta[i] && ta[i] == tb[i]) i++;
        size_t s = i > 200 ? i - 200 : 0;
        cr_assert_fail("%s: trial sequences differ (killed at %lld) near:\n%.400s\n---\n%.400s", tag, kill, ta + s, tb + s);
    }
    free(ta);
    free(tb);
    const char *same[] = {"best_reward", "best_action", "games_completed", "losses_restored", "train_steps", "simulations", "env_steps"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char *x = json_dumps(json_object_get(a, same[i]), JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        char *y = json_dumps(json_object_get(b, same[i]), JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        cr_assert_str_eq(x, y, "%s: %s %s uninterrupted, %s resumed", tag, same[i], x, y);
        free(x);
        free(y);
    }
    json_decref(a);
    json_decref(b);
    /* the curve: the killed attempt's rows past the checkpoint are not repeated */
    FILE *fa = fopen(cfull, "r"), *fb = fopen(cpart, "r");
    cr_assert(fa && fb);
    char la[512], lb[512];
    int rows = 0;
    while (fgets(la, sizeof la, fa)) {
        cr_assert(fgets(lb, sizeof lb, fb), "%s: the resumed curve has fewer rows", tag);
        cr_assert_str_eq(strchr(la, ',') + 1, strchr(lb, ',') + 1, "%s: curve row %d differs", tag, rows); /* seconds differ */
        rows++;
    }
    cr_assert(!fgets(lb, sizeof lb, fb), "%s: the resumed curve has more rows", tag);
    fclose(fa);
    fclose(fb);
}

/* MuZero on a training program where games lose and Drop-backup restores, with the heuristic's
 * demonstration (152 steps) before the first checkpoint; killed mid-game after several
 * checkpoints. */
Test(muzero_resume, muzero_killed_mid_game_resumes_to_the_same_trials) {
    char bin[4096];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    const char *prefix[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--games", "2", "--simulations", "6",
                            "--batch", "16", "--reanalyse-simulations", "3", "--replay", "400", "--train-every", "4", "--seed", "5",
                            "--budget", "700", "--quiet", NULL};
    kill_and_resume("muzero", prefix, 700, 517, "100");
}

/* The same with self-imitation (its replay rebuilt from the checkpointed best game), Monte Carlo
 * value targets (final returns written into the replay) and AlphaZero mode's root sessions. */
Test(muzero_resume, self_imitation_mc_and_alphazero_resume_to_the_same_trials) {
    char bin[4096];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    const char *prefix[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--games", "2", "--simulations", "6",
                            "--batch", "16", "--replay", "400", "--train-every", "4", "--seed", "6", "--self-imitation", "0.25",
                            "--value-target", "mc", "--model", "true", "--budget", "900", "--quiet", NULL};
    kill_and_resume("sil", prefix, 900, 611, "100");
}

/* The advantage value target: the replay's buffer indices (Reanalyse roots, the baseline under
 * the targets) and the games' trajectories cross the kill. */
Test(muzero_resume, advantage_target_resumes_to_the_same_trials) {
    char bin[4096];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    const char *prefix[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--games", "2", "--simulations", "6",
                            "--batch", "16", "--reanalyse-simulations", "3", "--replay", "400", "--train-every", "4", "--seed", "8",
                            "--value-target", "adv", "--budget", "700", "--quiet", NULL};
    kill_and_resume("adv", prefix, 700, 433, "100");
}

/* ES on a program where its candidates lose and Drop-backup restores them (the uninterrupted run
 * restores 7 times): the games in flight carry backup and pre-open restore points across the kill. */
Test(muzero_resume, es_with_drop_backup_killed_mid_generation_resumes_to_the_same_trials) {
    char bin[4096];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    const char *prefix[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"alexnet_train_batch_32\"}", "--mode", "es", "--games", "4",
                            "--seed", "3", "--budget", "1500", "--quiet", NULL};
    kill_and_resume("es", prefix, 1500, 1111, "250");
}
