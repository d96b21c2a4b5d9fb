/* test_fit.c - hwgym-muzero fits its games in flight to the budget (the default; --no-fit-games
 * keeps them all), at the user's boundary (the binary and its JSON summary):
 *   - with a step budget too small for 8 games of mlp_train_batch_16 (152 buffers), all 8 kept
 *     complete none; fitted, games are retired and games complete, deterministically for a seed,
 *     and the best mapping has one action per buffer;
 *   - with a CPU budget (the clock path: the measured CPU per env step), MuZero with 64 games in
 *     flight on inference_lstm (816 buffers) retires games and completes at least one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../common/hwtest.h"

static json_t *run_summary(const char *const *args) {
    char *out = NULL, *err = NULL;
    int rc = hwtest_run(args, &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    cr_assert(json_is_object(j), "%s", out);
    free(out);
    free(err);
    return j;
}

static long long geti(json_t *j, const char *k) { return json_integer_value(json_object_get(j, k)); }

Test(muzero_fit, a_step_budget_too_small_for_all_games_still_completes_games) {
    char bin[512];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    const char *mode[] = {"random", "muzero"};
    for (int m = 0; m < 2; m++) {
        char res[2][8192];
        for (int k = 0; k < 2; k++) {
            const char *a[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--mode", mode[m],
                               "--games", "8", "--simulations", "4", "--batch", "16", "--budget", "760", "--seed", "3", "--quiet", NULL};
            json_t *j = run_summary(a);
            cr_assert_eq(geti(j, "games_in_flight"), 8);
            cr_assert(geti(j, "games_retired") >= 1, "%s: %s", mode[m], json_dumps(j, 0));
            cr_assert(geti(j, "games_completed") >= 1, "%s: fitted games complete: %s", mode[m], json_dumps(j, 0));
            cr_assert_eq(geti(j, "env_steps"), 760);
            const char *acts = json_string_value(json_object_get(j, "best_action"));
            cr_assert(acts && strlen(acts) == 152, "one action per buffer");
            json_t *keep = json_pack("{sOsOsO}", "r", json_object_get(j, "best_reward"), "g", json_object_get(j, "games_completed"), "x",
                                     json_object_get(j, "games_retired"));
            char *d = json_dumps(keep, JSON_COMPACT | JSON_REAL_PRECISION(17));
            snprintf(res[k], sizeof res[k], "%s", d);
            free(d);
            json_decref(keep);
            json_decref(j);
        }
        cr_assert_str_eq(res[0], res[1], "%s: a step budget fits the games deterministically", mode[m]);
        /* all 8 kept: each plays an eighth of the budget (95 steps of 152 buffers) and none completes */
        const char *a[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--mode", mode[m], "--games", "8",
                           "--simulations", "4", "--batch", "16", "--budget", "760", "--seed", "3", "--quiet", "--no-fit-games", NULL};
        json_t *j = run_summary(a);
        cr_assert_eq(geti(j, "games_retired"), 0);
        cr_assert_eq(geti(j, "games_completed"), 0, "%s", json_dumps(j, 0));
        cr_assert(json_is_null(json_object_get(j, "best_reward")));
        json_decref(j);
    }
}

Test(muzero_fit, a_cpu_budget_retires_games_it_cannot_complete) {
    char bin[512];
    if (!hwtest_bin("hwgym-muzero", bin, sizeof bin)) cr_skip_test("hwgym-muzero is not built");
    /* 64 games of 816 buffers need 52,224 env steps before any completes; the budget holds a few
     * thousand (a fraction of that even in a release build) */
    const char *a[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"inference_lstm\"}", "--games", "64", "--simulations", "4",
                       "--batch", "16", "--train-every", "64", "--budget", "1000000000", "--cpu-limit", "2.0", "--seed", "2", "--quiet", NULL};
    json_t *j = run_summary(a);
    char *d = json_dumps(j, 0);
    cr_assert(geti(j, "env_steps") < 64 * 816, "the budget must be too small for 64 games: %s", d);
    cr_assert(geti(j, "games_retired") >= 1, "%s", d);
    cr_assert(geti(j, "games_completed") >= 1, "the games left in flight complete: %s", d);
    free(d);
    json_decref(j);
}
