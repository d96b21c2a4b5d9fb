/* test_agent.c - hwgym-muzero at the user's boundary: usage errors; Drop-backup against the env
 * (a program where random legal play loses: the agent restores, completes games, and its best
 * mapping replays through `hwgym eval` to the same return, feasible); an end-to-end run through
 * a real hwgym-server with a trial DB (one trial per env step, budget respected) that is
 * deterministic for a seed; the search-only and ES modes through the server. */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../common/hwtest.h"
#include "../common/hwtest_db.h"

static void need(const char *name, char *path, size_t cap) {
    if (!hwtest_bin(name, path, cap)) cr_skip_test("BUILD/bin/%s is not built", name);
}

static json_t *summary(const char *out) {
    cr_assert(out && *out, "no stdout");
    const char *nl = strchr(out, '\n');
    cr_assert(nl && nl[1] == 0, "stdout must be one line: %s", out);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(json_is_object(j), "%s", out);
    const char *keys[] = {"agent", "samples", "best_reward", "best_action", "env_steps", "games_completed", "losses_restored",
                          "heuristic_return", "prod_latency", "mode"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) cr_assert(json_object_get(j, keys[i]), "summary lacks %s: %s", keys[i], out);
    return j;
}

/* The result two runs of one seed must share: best_reward and best_action (and, when `extra` is
 * given, that summary field too) as compact JSON text in out. */
static void result_text(const json_t *j, const char *extra, char *out, size_t cap) {
    json_t *keep = json_pack("{sOsO}", "r", json_object_get(j, "best_reward"), "a", json_object_get(j, "best_action"));
    if (extra) json_object_set(keep, extra, json_object_get(j, extra));
    char *d = json_dumps(keep, JSON_COMPACT | JSON_REAL_PRECISION(17));
    snprintf(out, cap, "%s", d);
    free(d);
    json_decref(keep);
}

Test(muzero_agent, help_and_usage_errors) {
    char bin[512];
    need("hwgym-muzero", bin, sizeof bin);
    char *out = NULL, *err = NULL;
    const char *h[] = {bin, "--help", NULL};
    cr_assert_eq(hwtest_run(h, &out, &err), 0);
    cr_assert(strstr(out, "--simulations") && strstr(out, "--mode") && strstr(out, "--gumbel") && strstr(out, "--budget"), "%s", out);
    free(out);
    free(err);
    const char *bad[] = {bin, "--endpoint", "local", "--mode", "alphazero", NULL};
    cr_assert_eq(hwtest_run(bad, NULL, &err), 2);
    cr_assert(strstr(err, "--mode"), "%s", err);
    free(err);
    const char *cpu[] = {bin, "--endpoint", "local", "--cpu-limit", "-1", NULL};
    cr_assert_eq(hwtest_run(cpu, NULL, &err), 2);
    cr_assert(strstr(err, "--cpu-limit"), "%s", err);
    free(err);
    const char *env[] = {bin, "--endpoint", "local", "--env", "diag-v0", NULL};
    cr_assert_eq(hwtest_run(env, NULL, &err), 2);
    cr_assert(strstr(err, "mmap-v0"), "%s", err);
    free(err);
    const char *cfg[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"nope\"}", "--budget", "10", NULL};
    cr_assert_eq(hwtest_run(cfg, NULL, &err), 1);
    cr_assert(strstr(err, "config.problem"), "%s", err);
    free(err);
}

Test(muzero_agent, drop_backup_completes_games_and_the_best_mapping_replays) {
    char bin[512], cli[512];
    need("hwgym-muzero", bin, sizeof bin);
    need("hwgym", cli, sizeof cli);
    const char *CFG = "{\"problem\":\"alexnet_train_batch_32\"}";
    char *out = NULL, *err = NULL;
    const char *a[] = {bin, "--endpoint", "local", "--config", CFG, "--mode", "random", "--games", "2", "--budget", "2500",
                       "--seed", "3", "--quiet", NULL};
    cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
    json_t *j = summary(out);
    cr_assert(json_integer_value(json_object_get(j, "losses_restored")) > 0, "random play on alexnet training loses without backup: %s", out);
    cr_assert(json_integer_value(json_object_get(j, "games_completed")) >= 5, "%s", out);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 2500);
    double best = json_number_value(json_object_get(j, "best_reward"));
    cr_assert(best > 0);
    const char *acts = json_string_value(json_object_get(j, "best_action"));
    cr_assert(acts && strlen(acts) == 167, "one action per buffer");
    /* the mapping replays in the env to the same return, feasible */
    char point[400];
    snprintf(point, sizeof point, "\"%s\"", acts);
    char *o2 = NULL, *e2 = NULL;
    const char *ev[] = {cli, "eval", "mmap-v0", "--config", CFG, "--action", point, NULL};
    cr_assert_eq(hwtest_run(ev, &o2, &e2), 0, "%s", e2);
    json_t *m = json_loads(o2, 0, NULL);
    cr_assert(json_is_object(m), "%s", o2);
    json_t *met = json_object_get(m, "metrics");
    cr_assert(json_is_true(json_object_get(met, "feasible")), "%s", o2);
    cr_assert(fabs(json_number_value(json_object_get(met, "return")) - best) <= 1e-9 * best, "%s", o2);
    json_decref(m);
    free(o2);
    free(e2);
    /* random play opens the env without its memory map (it reads no observation): with the map
     * asked for in the config, the same run plays the same games */
    const char *CFGM = "{\"problem\":\"alexnet_train_batch_32\",\"memory_map\":true}";
    const char *am[] = {bin, "--endpoint", "local", "--config", CFGM, "--mode", "random", "--games", "2", "--budget", "2500",
                        "--seed", "3", "--quiet", NULL};
    cr_assert_eq(hwtest_run(am, &o2, &e2), 0, "%s", e2);
    json_t *jm = summary(o2);
    const char *same[] = {"best_reward", "best_action", "games_completed", "losses_restored", "steps_rewound", "env_steps"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        cr_assert(json_equal(json_object_get(j, same[i]), json_object_get(jm, same[i])), "%s differs with the memory map: %s vs %s",
                  same[i], out, o2);
    json_decref(jm);
    json_decref(j);
    free(out);
    free(err);
    free(o2);
    free(e2);
    /* without Drop-backup, random play on this program mostly loses (return 0) */
    const char *nb[] = {bin, "--endpoint", "local", "--config", CFG, "--mode", "random", "--games", "2", "--budget", "2500",
                        "--seed", "3", "--quiet", "--no-backup", NULL};
    cr_assert_eq(hwtest_run(nb, &out, &err), 0, "%s", err);
    j = summary(out);
    cr_assert_eq(json_integer_value(json_object_get(j, "losses_restored")), 0);
    json_decref(j);
    free(out);
    free(err);
}

Test(muzero_agent, end_to_end_through_a_server_with_trials_and_determinism) {
    char bin[512];
    need("hwgym-muzero", bin, sizeof bin);
    hwtest_server srv;
    int rc = hwtest_server_start(&srv, NULL);
    if (rc == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(rc, 0);
    char db[256], res[2][4096];
    snprintf(db, sizeof db, "%s/t.db", srv.dir);
    for (int k = 0; k < 2; k++) {
        char *out = NULL, *err = NULL;
        const char *a[] = {bin, "--endpoint", srv.endpoint, "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--mode", "muzero",
                           "--games", "1", "--simulations", "8", "--budget", "400", "--batch", "16", "--reanalyse-simulations", "4",
                           "--seed", "7", k == 0 ? "--db" : "--quiet", k == 0 ? db : "--quiet", NULL};
        cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
        if (k == 0) cr_assert(strstr(err, "[hwgym-muzero] steps"), "progress line on stderr: %s", err);
        json_t *j = summary(out);
        cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 400);
        cr_assert_eq(json_integer_value(json_object_get(j, "env_steps")), 400);
        cr_assert_eq(json_integer_value(json_object_get(j, "demo_steps")), 152, "the heuristic's game seeds the replay");
        cr_assert(json_integer_value(json_object_get(j, "games_completed")) >= 1, "%s", out);
        cr_assert(json_integer_value(json_object_get(j, "train_steps")) > 0, "%s", out);
        cr_assert(json_integer_value(json_object_get(j, "simulations")) > 0);
        result_text(j, NULL, res[k], sizeof res[k]);
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_str_eq(res[0], res[1], "same seed, same result");
    cr_assert_eq(hwtest_db_double(db, "SELECT COUNT(*) FROM trials"), 400, "one trial per env step");
    cr_assert_eq(hwtest_db_double(db, "SELECT COUNT(*) FROM trials WHERE worker='0' AND episode=-1"), 152, "the demonstration: worker 0, episode -1");
    /* search-only and ES through the same server */
    const char *modes[][2] = {{"search", "2"}, {"es", "2"}};
    for (int i = 0; i < 2; i++) {
        char *out = NULL, *err = NULL;
        const char *a[] = {bin, "--endpoint", srv.endpoint, "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--mode", modes[i][0],
                           "--games", modes[i][1], "--simulations", "16", "--budget", "500", "--quiet", NULL};
        cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
        json_t *j = summary(out);
        cr_assert(json_number_value(json_object_get(j, "best_reward")) > 0, "%s", out);
        cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 500);
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_eq(hwtest_server_stop(&srv), 0);
}

/* AlphaZero mode (--model true) plays complete, feasible games over the true game, is
 * deterministic for a seed, and the summary carries the collapse watch (Copy/NoCopy/Drop
 * shares that sum to 1, the prior's entropy per window) and best / heuristic. */
Test(muzero_agent, alphazero_mode_and_collapse_watch) {
    char bin[512];
    need("hwgym-muzero", bin, sizeof bin);
    char res[2][4096];
    for (int k = 0; k < 2; k++) {
        char *out = NULL, *err = NULL;
        const char *a[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--model", "true",
                           "--games", "2", "--simulations", "8", "--gumbel", "--budget", "700", "--batch", "16", "--log-games", "1",
                           "--value-target", "mc", "--seed", "5", "--quiet", NULL};
        cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
        json_t *j = summary(out);
        cr_assert_str_eq(json_string_value(json_object_get(j, "model")), "true");
        cr_assert(json_integer_value(json_object_get(j, "games_completed")) >= 2, "%s", out);
        double ratio = json_number_value(json_object_get(j, "best_over_heuristic"));
        double best = json_number_value(json_object_get(j, "best_reward")), heur = json_number_value(json_object_get(j, "heuristic_return"));
        cr_assert(ratio > 0.5 && fabs(ratio - best / heur) < 1e-12, "%s", out);
        json_t *ch = json_object_get(j, "choices");
        double s = json_number_value(json_object_get(ch, "copy")) + json_number_value(json_object_get(ch, "nocopy")) +
                   json_number_value(json_object_get(ch, "drop"));
        cr_assert(fabs(s - 1) < 1e-9, "%s", out);
        json_t *w = json_object_get(j, "collapse_watch");
        cr_assert(json_array_size(w) >= 2, "one window per game: %s", out);
        double h = json_number_value(json_object_get(json_array_get(w, 0), "entropy"));
        cr_assert(h > 0 && h <= log(3) + 1e-9, "prior entropy %g", h);
        result_text(j, NULL, res[k], sizeof res[k]);
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_str_eq(res[0], res[1], "same seed, same result");
    char *err = NULL;
    const char *bad[] = {bin, "--endpoint", "local", "--model", "perfect", NULL};
    cr_assert_eq(hwtest_run(bad, NULL, &err), 2);
    cr_assert(strstr(err, "--model"), "%s", err);
    free(err);
    const char *bq[] = {bin, "--endpoint", "local", "--q-norm", "global", NULL};
    cr_assert_eq(hwtest_run(bq, NULL, &err), 2);
    cr_assert(strstr(err, "--q-norm"), "%s", err);
    free(err);
}

/* --heuristic-prior W: the heuristic's move mixed into the root prior. With untrained networks
 * (zero heads: equal values, uniform prior) the greedy evaluation game then plays the heuristic's
 * game move for move (inference_resnet: no Drop-backup loss on that path), through a server as
 * well as in-process (the agent reads the move from its own copy of the program); without the
 * option the same untrained game is the Copy-first one, a different mapping. Without the option
 * (auto) muzero mode takes W 0.5, es mode 0. Usage errors name the option. */
/* The heuristic's mapping of a program as a digit string, from `hwgym eval`. */
static void heuristic_actions(const char *cfg, char *heur, size_t cap) {
    char cli[512];
    need("hwgym", cli, sizeof cli);
    char *out = NULL, *err = NULL;
    const char *ev[] = {cli, "eval", "mmap-v0", "--config", cfg, "--action", "{\"policy\":\"heuristic\"}", NULL};
    cr_assert_eq(hwtest_run(ev, &out, &err), 0, "%s", err);
    json_t *hj = json_loads(out, 0, NULL);
    cr_assert(hj, "%s", out);
    snprintf(heur, cap, "%s", json_string_value(json_object_get(json_object_get(hj, "metrics"), "actions")));
    json_decref(hj);
    free(out);
    free(err);
}

Test(muzero_agent, heuristic_prior_untrained_plays_the_heuristic) {
    const char *cfg = "{\"problem\":\"inference_resnet\"}";
    char bin[512], heur[4096];
    need("hwgym-muzero", bin, sizeof bin);
    heuristic_actions(cfg, heur, sizeof heur);
    cr_assert(strlen(heur) == 324, "inference_resnet has 324 buffers: %s", heur);
    char *out = NULL, *err = NULL;
    hwtest_server srv;
    int src = hwtest_server_start(&srv, NULL);
    if (src == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(src, 0);
    /* k = 3: the default (auto) is W 0.5 in muzero mode */
    const char *eps[] = {"local", srv.endpoint, "local", "local"};
    const char *hp[] = {"0.5", "0.5", "0", "0.5"};
    for (int k = 0; k < 4; k++) {
        const char *a[] = {bin, "--endpoint", eps[k], "--config", cfg, "--games", "1", "--greedy-games", "1", "--max-games", "1",
                           "--simulations", "8", "--gumbel", "--train-every", "1000000000", "--seed", "3", "--quiet",
                           k < 3 ? "--heuristic-prior" : NULL, hp[k], NULL};
        cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
        json_t *j = summary(out);
        cr_assert_eq(json_integer_value(json_object_get(j, "games_completed")), 1, "%s", out);
        cr_assert_eq(json_integer_value(json_object_get(j, "train_steps")), 0, "%s", out);
        cr_assert(fabs(json_number_value(json_object_get(j, "heuristic_prior")) - atof(hp[k])) < 1e-12, "%s", out);
        const char *best = json_string_value(json_object_get(j, "best_action"));
        double ratio = json_number_value(json_object_get(j, "best_over_heuristic"));
        if (k != 2) {
            cr_assert_str_eq(best, heur, "W 0.5, untrained: the heuristic's game (endpoint %s, case %d)", eps[k], k);
            cr_assert(fabs(ratio - 1) < 1e-9, "%s", out);
        } else {
            cr_assert_str_neq(best, heur, "W 0: the Copy-first game, not the heuristic's");
        }
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_eq(hwtest_server_stop(&srv), 0);
    const char *b1[] = {bin, "--endpoint", "local", "--heuristic-prior", "1", NULL};
    cr_assert_eq(hwtest_run(b1, NULL, &err), 2);
    cr_assert(strstr(err, "--heuristic-prior"), "%s", err);
    free(err);
    const char *b2[] = {bin, "--endpoint", "local", "--mode", "es", "--heuristic-prior", "0.5", NULL};
    cr_assert_eq(hwtest_run(b2, NULL, &err), 2);
    cr_assert(strstr(err, "--heuristic-prior") && strstr(err, "--mode"), "%s", err);
    free(err);
    /* the default is off in the modes without a prior: es runs, and says 0 */
    const char *e[] = {bin, "--endpoint", "local", "--config", cfg, "--mode", "es", "--games", "2", "--max-games", "2", "--seed", "1", "--quiet", NULL};
    cr_assert_eq(hwtest_run(e, &out, &err), 0, "%s", err);
    json_t *j = summary(out);
    cr_assert(fabs(json_number_value(json_object_get(j, "heuristic_prior"))) < 1e-12, "%s", out);
    json_decref(j);
    free(out);
    free(err);
}

/* --float32: a training run (acting, Reanalyse and training interleaved) in process completes
 * games, says so in the summary, and is deterministic for a seed */
Test(muzero_agent, float32_inference_runs_are_deterministic) {
    char bin[512], res[2][4096];
    need("hwgym-muzero", bin, sizeof bin);
    for (int k = 0; k < 2; k++) {
        char *out = NULL, *err = NULL;
        const char *a[] = {bin, "--endpoint", "local", "--config", "{\"problem\":\"mlp_train_batch_16\"}", "--games", "2",
                           "--simulations", "8", "--budget", "600", "--batch", "16", "--reanalyse-simulations", "4", "--seed", "5",
                           "--float32", "--quiet", NULL};
        cr_assert_eq(hwtest_run(a, &out, &err), 0, "%s", err);
        json_t *j = summary(out);
        cr_assert(json_is_true(json_object_get(j, "float32")), "%s", out);
        cr_assert(json_integer_value(json_object_get(j, "games_completed")) >= 1, "%s", out);
        cr_assert(json_integer_value(json_object_get(j, "train_steps")) > 0, "%s", out);
        result_text(j, "train_steps", res[k], sizeof res[k]);
        json_decref(j);
        free(out);
        free(err);
    }
    cr_assert_str_eq(res[0], res[1], "same seed, same result with --float32");
}
