/* test_matrix.c - every agent binary on every env family, at the user's boundary.
 *
 * For each env family (a small config each, masked envs included: sched-v0 and mmap-v0 send an
 * action_mask), runs hwgym-ppo, hwgym-tdm-ppo, hwgym-sac, hwgym-search with every --algo
 * (in-process env, --endpoint local) and hwgym-marl (through a real hwgym-server) for a short
 * budget. In the ASan build (make test) the binaries are instrumented, so a heap use-after-free
 * such as the one of issue 11 (PPO kept the session's action_mask across the step that freed it)
 * aborts the agent and fails here. Each run must either work (exit 0, one JSON summary line,
 * every sample of the budget taken, a finite best reward and a best action of the action's
 * length) or refuse with the one refusal this table expects, naming the env and saying why. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../common/hwtest.h"

typedef struct fam {
    const char *env, *config;
    int act_len;             /* elements of best_action */
    bool sequential;         /* search refuses: an action is not a design point */
    bool discrete;           /* marl refuses: one action element */
    const char *marl_agents; /* --agents for hwgym-marl */
    bool search_tables;      /* hwgym-search searches whole tables (sched_genome.c), not actions */
} fam;

static const fam FAMS[] = {
    {"diag-v0", "{\"dims\":3,\"choices\":5,\"episode_length\":4}", 3, false, false, "decentralized", false},
    {"maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":3,\"objective\":\"latency\"}", 10, false, false, "decentralized", false},
    {"dram-v0", "{}", 10, false, false, "decentralized", false},
    {"mmap-v0", "{\"problem\":\"mlp_train_batch_16\",\"memory_map\":false,\"profile_len\":16,\"supply_window\":16}", 1, true,
     true, NULL, false},
    /* 114 elements: one worker process per element is slow under ASan; one agent for all */
    {"placement-v0", "{}", 114, false, false, "single", false},
    {"sched-v0", "{}", 1, true, true, NULL, true},
};

static const char *ALGOS[] = {"random", "ga", "gamma", "bo", "es", "aco"};

static void no_sanitizer_report(const char *what, const char *err) {
    cr_assert(!strstr(err, "Sanitizer") && !strstr(err, "runtime error:"), "%s: sanitizer report:\n%s", what, err);
}

static void check_summary(const char *what, const fam *f, const char *out, int64_t budget) {
    const char *nl = strchr(out, '\n');
    cr_assert(nl && nl[1] == 0, "%s: stdout must be one JSON line: %s", what, out);
    json_t *j = json_loads(out, 0, NULL);
    cr_assert(json_is_object(j), "%s: summary is not JSON: %s", what, out);
    cr_assert_str_eq(json_string_value(json_object_get(j, "env")), f->env, "%s", what);
    cr_assert_eq(json_integer_value(json_object_get(j, "samples")), budget, "%s: samples != budget: %s", what, out);
    json_t *br = json_object_get(j, "best_reward");
    cr_assert(json_is_number(br) && isfinite(json_number_value(br)), "%s: best_reward %s", what, out);
    json_t *ba = json_object_get(j, "best_action");
    if (f->search_tables && strstr(what, "hwgym-search")) {
        json_t *t = json_object_get(ba, "table");
        cr_assert(json_is_array(t) && json_array_size(t) == 10, "%s: best_action is a 10-row table: %s", what, out);
        json_decref(j);
        return;
    }
    cr_assert(json_is_array(ba) && (int)json_array_size(ba) == f->act_len, "%s: best_action of %d elements: %s", what,
              f->act_len, out);
    json_decref(j);
}

/* Runs one agent; expects success, or (refusal != NULL) exit 1 with stderr naming the env and
 * containing refusal. */
static void run_agent(const fam *f, const char *bin, const char *const *extra, int64_t budget, const char *refusal) {
    char bud[32];
    snprintf(bud, sizeof bud, "%lld", (long long)budget);
    const char *args[24];
    int n = 0;
    args[n++] = bin;
    args[n++] = "--env";
    args[n++] = f->env;
    args[n++] = "--config";
    args[n++] = f->config;
    args[n++] = "--budget";
    args[n++] = bud;
    args[n++] = "--seed";
    args[n++] = "3";
    args[n++] = "--quiet";
    for (int i = 0; extra && extra[i]; i++) args[n++] = extra[i];
    args[n] = NULL;
    char what[256];
    snprintf(what, sizeof what, "%s %s%s%s", strrchr(bin, '/') + 1, f->env, extra && extra[0] ? " " : "",
             extra && extra[0] ? extra[1] : "");
    char *out = NULL, *err = NULL;
    int rc = hwtest_run(args, &out, &err);
    no_sanitizer_report(what, err);
    if (refusal) {
        cr_assert_eq(rc, 1, "%s: expected a refusal (exit 1), got %d\nstdout: %s\nstderr: %s", what, rc, out, err);
        cr_assert(strstr(err, f->env) && strstr(err, refusal), "%s: the refusal must name the env and say '%s': %s", what,
                  refusal, err);
        cr_assert(!strstr(out, "null") || !*out, "%s: no summary with a null result on a refusal: %s", what, out);
    } else {
        cr_assert_eq(rc, 0, "%s: exit %d\nstderr: %s", what, rc, err);
        check_summary(what, f, out, budget);
    }
    free(out);
    free(err);
}

static void need(const char *name, char *path, size_t cap) {
    if (!hwtest_bin(name, path, cap)) cr_skip_test("BUILD/bin/%s is not built", name);
}

static void family(int k) {
    const fam *f = &FAMS[k];
    char bin[512];
    const char *local[] = {"--endpoint", "local", NULL};
    need("hwgym-ppo", bin, sizeof bin);
    run_agent(f, bin, local, 40, NULL);
    need("hwgym-tdm-ppo", bin, sizeof bin);
    run_agent(f, bin, local, 24, NULL);
    need("hwgym-sac", bin, sizeof bin);
    run_agent(f, bin, local, 40, NULL);
    need("hwgym-search", bin, sizeof bin);
    for (size_t a = 0; a < sizeof ALGOS / sizeof *ALGOS; a++) {
        const char *ex[] = {"--algo", ALGOS[a], "--endpoint", "local", "--batch", "8", NULL};
        run_agent(f, bin, ex, 24, f->sequential && !f->search_tables ? "not a design point" : NULL);
    }
    need("hwgym-marl", bin, sizeof bin);
    hwtest_server srv;
    int src = hwtest_server_start(&srv, NULL);
    if (src == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(src, 0, "hwgym-server did not start");
    const char *ex[] = {"--agents", f->marl_agents ? f->marl_agents : "decentralized", "--endpoint", srv.endpoint, NULL};
    run_agent(f, bin, ex, 16, f->discrete ? "Discrete action space" : NULL);
    cr_assert_eq(hwtest_server_stop(&srv), 0);
}

Test(agent_matrix, diag) { family(0); }
Test(agent_matrix, maestro, .timeout = 120) { family(1); }
Test(agent_matrix, dram, .timeout = 120) { family(2); }
Test(agent_matrix, mmap, .timeout = 120) { family(3); }
Test(agent_matrix, placement, .timeout = 120) { family(4); }
Test(agent_matrix, sched, .timeout = 120) { family(5); }

/* the table covers every registered env family */
Test(agent_matrix, covers_every_family) {
    char bin[512];
    need("hwgym", bin, sizeof bin);
    const char *args[] = {bin, "envs", NULL};
    char *out = NULL;
    cr_assert_eq(hwtest_run(args, &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    json_t *list = json_is_object(j) ? json_object_get(j, "envs") : j;
    cr_assert(json_is_array(list), "hwgym envs: %s", out);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *id = json_is_string(e) ? json_string_value(e) : json_string_value(json_object_get(e, "id"));
        cr_assert(id, "hwgym envs: %s", out);
        bool found = false;
        for (size_t k = 0; k < sizeof FAMS / sizeof *FAMS; k++) found |= !strcmp(FAMS[k].env, id);
        cr_assert(found, "env family %s is not in the agent matrix", id);
    }
    json_decref(j);
    free(out);
}
