/* bench_muzero.c - MMap-MuZero speed (issue 14):
 * Timing of 1 and 2 is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), i.e. per core.
 *  1. MCTS with the learned model at the agent's default network sizes (features of mmap-v0's
 *     default observation, embedding 32, dynamics/prediction 2x64, 31-bin value/reward), many
 *     trees in flight with one batched dynamics+prediction call per simulation step for all of
 *     them: simulations per second on one core (OpenBLAS single-threaded). Target >= 100k/s.
 *     Counted: every simulation = selection + one leaf's share of the batched network call +
 *     softmax/decoding + expansion + backup. Root inference is outside the timing.
 *  2. Search-only MCTS over the true game (in-process mm_game, snapshot/restore by undo and
 *     replay), mid-game on the largest program, with and without random rollouts.
 *  3. A full game of the largest dataset program (transformer_big_train, 15,974 buffers) with
 *     50 simulations per move: BUILD/bin/hwgym-muzero --endpoint local --games 1 --max-games 1,
 *     whole agent (env steps with the full observation, Drop-backup, training, Reanalyse).
 * 3 takes minutes (tens on a loaded machine): BENCH_MUZERO_FULL=0 skips it, and it stops after
 *   BENCH_MUZERO_FULL_SECONDS (1200) wall seconds, reported as not completed.
 *  4. (before 3) Random play through the agent, one game to its end on alphatensor_like and
 *     transformer_big_train: process CPU seconds with the lean observation and with the full
 *     one (memory map), the same games. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_common.h"
#include "mcts.h"
#include "mmap/mmap.h"
#include "muzero_net.h"
#include "mz_search.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time of this thread: "per core" figures do not depend on other load on the machine. */
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double learned(int G, int sims, int reps) {
    gsl_rng *r = ag_rng_new(1);
    int F = 11 * 10 + 12 + 6 + MZ_POOL * MZ_POOL + 2 * MZ_VEC;
    mz_net_cfg nc = mz_net_cfg_default(F);
    mz_net *net = mz_net_new(&nc, r);
    lm_ctx lm = {0};
    lm.net = net;
    lm.E = nc.E;
    lm_reserve(&lm, G, sims + 2);
    mcts_tree **t = calloc((size_t)G, sizeof *t);
    for (int i = 0; i < G; i++) t[i] = mcts_tree_new(sims + 2);
    double *feat = malloc(sizeof(double) * (size_t)G * (size_t)F), *emb = malloc(sizeof(double) * (size_t)G * (size_t)nc.E);
    double *lg = malloc(sizeof(double) * (size_t)G * 3), *v = malloc(sizeof(double) * (size_t)G);
    for (int i = 0; i < G * F; i++) feat[i] = ag_rng_uniform(r);
    mcts_cfg c = mcts_cfg_default();
    c.sims = sims;
    double spent = 0;
    for (int k = 0; k < reps; k++) {
        mz_net_initial(net, feat, G, emb, lg, v);
        for (int i = 0; i < G; i++) {
            double p[3];
            mz_softmax(lg + 3 * i, 3, p);
            mcts_root(t[i], &c, p, v[i], 7, r);
            memcpy(lm_emb(&lm, i, 0), emb + (size_t)i * (size_t)nc.E, sizeof(double) * (size_t)nc.E);
        }
        double t0 = cpu();
        mcts_run(t, G, &c, lm_eval, &lm);
        spent += cpu() - t0;
    }
    for (int i = 0; i < G; i++) mcts_tree_free(t[i]);
    free(t);
    free(feat);
    free(emb);
    free(lg);
    free(v);
    lm_free(&lm);
    mz_net_free(net);
    gsl_rng_free(r);
    return (double)G * sims * reps / spent;
}

static double true_game(mm_problem *p, int G, int sims, int rollout, int moves) {
    gsl_rng *r = ag_rng_new(2);
    mm_game *g = mm_game_new(p);
    mm_game_reset(g);
    uint8_t *prefix = malloc((size_t)p->nbuf);
    int len = 0;
    while (len < p->nbuf / 2 && !g->done) { /* mid-game by the heuristic */
        int a = mm_policy_heuristic(g);
        prefix[len++] = (uint8_t)a;
        mm_game_step(g, a);
    }
    ts_ctx *s = ts_new(p, G, sims + 2, rollout, 100.0 / 1e6, r);
    mcts_cfg c = mcts_cfg_default();
    c.sims = sims;
    double pr[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3}, spent = 0;
    long n = 0;
    for (int m = 0; m < moves; m++) {
        double t0 = cpu();
        for (int i = 0; i < G; i++) {
            uint8_t mask = ts_root(s, i, prefix, len);
            mcts_root(s->trees[i], &c, pr, 0, mask, r);
        }
        mcts_run(s->trees, G, &c, ts_eval, s);
        spent += cpu() - t0;
        n += (long)G * sims;
        int a = mcts_act(s->trees[0], &c, 0, r, NULL, NULL);
        prefix[len++] = (uint8_t)a; /* advance the root like the agent does */
    }
    ts_free(s);
    free(prefix);
    mm_game_free(g);
    gsl_rng_free(r);
    return n / spent;
}

/* Runs hwgym-muzero (args after the binary) and returns its JSON summary (NULL on failure). */
static json_t *agent_run(const char *bin, const char *args) {
    char cmd[5000];
    snprintf(cmd, sizeof cmd, "%s %s", bin, args);
    FILE *f = popen(cmd, "r");
    char line[65536] = "";
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        while (fgetc(f) != EOF) {
        }
        pclose(f);
    }
    return json_loads(line, 0, NULL);
}

/* 4. Random play through the agent (Drop-backup included), one game to its end, on the large
 * programs: CPU seconds per complete game with the lean observation random play uses (no memory
 * map) and with the full observation (config "memory_map": true), the same games. */
static void random_games(const char *bin) {
    const char *progs[] = {"alphatensor_like", "transformer_big_train"};
    printf("  random play through the agent, 1 game to its end (Drop-backup), process CPU s per game:\n");
    for (int i = 0; i < 2; i++) {
        double c[2] = {0, 0};
        long long steps = 0, rew = 0;
        for (int m = 0; m < 2; m++) {
            char args[512];
            snprintf(args, sizeof args,
                     "--endpoint local --config '{\"problem\":\"%s\"%s}' --mode random --games 1 --max-games 1 --budget 100000000 "
                     "--time-limit 600 --quiet --seed 1",
                     progs[i], m ? ",\"memory_map\":true" : "");
            json_t *j = agent_run(bin, args);
            if (!j || json_integer_value(json_object_get(j, "games_completed")) < 1) {
                printf("    %s: the game did not complete\n", progs[i]);
                json_decref(j);
                return;
            }
            c[m] = json_number_value(json_object_get(j, "cpu_s"));
            steps = (long long)json_integer_value(json_object_get(j, "env_steps"));
            rew = (long long)json_integer_value(json_object_get(j, "steps_rewound"));
            json_decref(j);
        }
        printf("    %-22s %lld env steps (%lld rewound): lean %.2f s, full observation %.2f s (%.1fx)\n", progs[i], steps, rew, c[0], c[1],
               c[0] > 0 ? c[1] / c[0] : 0.0);
    }
}

int main(void) {
    printf("MMap-MuZero MCTS, per core (thread CPU time; OpenBLAS 1 thread)\n");
    int Gs[] = {16, 64, 256};
    for (int i = 0; i < 3; i++) {
        double sps = learned(Gs[i], 100, Gs[i] >= 64 ? 3 : 10);
        printf("  learned model, %3d trees x 100 sims, batched leaves: %9.0f simulations/s  (target >= 100k: %.2fx, %s)\n", Gs[i],
               sps, sps / 1e5, sps >= 1e5 ? "met" : "NOT met");
    }
    double one = learned(1, 400, 20);
    printf("  learned model, 1 tree x 400 sims (no batching):        %9.0f simulations/s\n", one);
    hw_err err;
    mm_problem *p = mm_dataset_load("transformer_big_train", 0, &err);
    if (!p) {
        printf("load: %s\n", err.msg);
        return 1;
    }
    printf("  true game (search only), transformer_big_train mid-game, 8 trees x 100 sims:\n");
    printf("    leaf value 0 (no rollout):  %9.0f simulations/s\n", true_game(p, 8, 100, 0, 5));
    printf("    16-step random rollouts:    %9.0f simulations/s\n", true_game(p, 8, 100, 16, 5));
    mm_problem_free(p);
    char exe[4096], bin[4300];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return 1;
    exe[k] = 0;
    *strrchr(exe, '/') = 0;
    snprintf(bin, sizeof bin, "%s/../bin/hwgym-muzero", exe);
    if (access(bin, X_OK)) {
        printf("  agent rows: %s is not built (make all)\n", bin);
        return 0;
    }
    random_games(bin);
    const char *full = getenv("BENCH_MUZERO_FULL");
    if (full && !strcmp(full, "0")) {
        printf("  full game of transformer_big_train at 50 sims/move: skipped (BENCH_MUZERO_FULL=0)\n");
        return 0;
    }
    const char *fs = getenv("BENCH_MUZERO_FULL_SECONDS");
    double cap = fs && atof(fs) > 0 ? atof(fs) : 1200;
    char args[1000];
    snprintf(args, sizeof args,
             "--endpoint local --config '{\"problem\":\"transformer_big_train\"}' --games 1 --simulations 50 --max-games 1 "
             "--budget 1000000 --time-limit %g --no-demo --quiet --seed 1",
             cap);
    struct rusage ru0;
    getrusage(RUSAGE_CHILDREN, &ru0); /* the random-play rows' children are not this game's */
    double t0 = now();
    json_t *j = agent_run(bin, args);
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpus = (double)(ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (double)(ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) * 1e-6 +
                  (double)(ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (double)(ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
    printf("  full game, transformer_big_train (15,974 buffers), 50 sims/move, 1 game, whole agent: %.1f s wall, %.1f s CPU", wall, cpus);
    if (j) {
        long long games = (long long)json_integer_value(json_object_get(j, "games_completed"));
        printf("  (%s; %lld env steps, %lld restores rewinding %lld steps, %lld train steps", games > 0 ? "game completed" : "game NOT completed within the time cap",
               (long long)json_integer_value(json_object_get(j, "env_steps")),
               (long long)json_integer_value(json_object_get(j, "losses_restored")),
               (long long)json_integer_value(json_object_get(j, "steps_rewound")),
               (long long)json_integer_value(json_object_get(j, "train_steps")));
        if (games > 0)
            printf(", return %.4g vs heuristic %.4g", json_number_value(json_object_get(j, "best_reward")),
                   json_number_value(json_object_get(j, "heuristic_return")));
        printf(")");
    }
    printf("\n");
    json_decref(j);
    return 0;
}
