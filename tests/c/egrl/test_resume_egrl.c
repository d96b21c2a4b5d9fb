/* test_resume_egrl.c - hwgym-egrl's checkpoints (docs/egrl.md, "Checkpoints"): each mode is run
 * once uninterrupted and once killed by SIGKILL after a sample chosen by a seeded RNG
 * (HWGYM_TEST_KILL_AT), then resumed with the same command line (--resume). The resumed run
 * must log exactly the uninterrupted run's trials (worker, generation, action, reward, in log
 * order), reach the same best, and leave the same --curve file. Small networks on ResNet-50
 * keep it fast under ASan. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"

static char tmp[64];
static void mk(void) { hwtest_tmpdir(tmp, sizeof tmp); }
static void rm(void) { hwtest_rmtree(tmp); }
TestSuite(egrl_resume, .init = mk, .fini = rm, .timeout = 120);

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s missing", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    return b;
}

/* every trial of the DB in log order, one line each */
static char *trials(const char *db, long long *count) {
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT worker, episode, action, quote(reward), run_id FROM trials ORDER BY id", -1, &st, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(h));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    buf[0] = 0;
    *count = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *a = (const char *)sqlite3_column_text(st, 2);
        size_t need = strlen(a) + 256;
        while (n + need > cap) buf = realloc(buf, cap *= 2);
        n += (size_t)snprintf(buf + n, cap - n, "%s|%lld|%s|%s|%lld\n", sqlite3_column_text(st, 0),
                              (long long)sqlite3_column_int64(st, 1), a, sqlite3_column_text(st, 3),
                              (long long)sqlite3_column_int64(st, 4));
        ++*count;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return buf;
}

static double best_of(const char *out) {
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
    cr_assert(j && json_is_number(json_object_get(j, "best_reward")), "summary: %s", out);
    double b = json_number_value(json_object_get(j, "best_reward"));
    json_decref(j);
    return b;
}

static void kill_and_resume(const char *mode, long long budget, long long kill, const char *every) {
    char bin[4096];
    if (!hwtest_bin("hwgym-egrl", bin, sizeof bin)) cr_skip_test("BUILD/bin/hwgym-egrl is not built");
    char full[256], part[256], cfull[256], cpart[256], k[32];
    snprintf(full, sizeof full, "%s/%s-full.db", tmp, mode);
    snprintf(part, sizeof part, "%s/%s-part.db", tmp, mode);
    snprintf(cfull, sizeof cfull, "%s/%s-full.csv", tmp, mode);
    snprintf(cpart, sizeof cpart, "%s/%s-part.csv", tmp, mode);
    char bs[32];
    snprintf(bs, sizeof bs, "%lld", budget);
    const char *prefix[] = {bin, "--endpoint", "local", "--config", "{\"workload\":\"resnet50\"}", "--mode", mode, "--seed", "5",
                            "--budget", bs, "--pop", "6", "--hidden", "8", "--out", "8", "--heads", "2", "--depth", "2",
                            "--critic-hidden", "4", "--batch", "4", "--updates-per-eval", "0.5", "--quiet", NULL};
    char *out = NULL, *err = NULL;
    int rc = hwtest_run_args(prefix, (const char *[]){"--db", full, "--curve", cfull, NULL}, &out, &err);
    cr_assert_eq(rc, 0, "%s uninterrupted: exit %d: %s", mode, rc, err);
    double best_full = best_of(out);
    free(out), free(err);

    snprintf(k, sizeof k, "%lld", kill);
    setenv("HWGYM_TEST_KILL_AT", k, 1);
    rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--curve", cpart, "--checkpoint-every", every, "--resume", NULL},
                         &out, &err);
    unsetenv("HWGYM_TEST_KILL_AT");
    cr_assert_eq(rc, 137, "%s: the attempt to be killed at sample %lld exited %d: %s", mode, kill, rc, err);
    free(out), free(err);
    rc = hwtest_run_args(prefix, (const char *[]){"--db", part, "--curve", cpart, "--checkpoint-every", every, "--resume", NULL},
                         &out, &err);
    cr_assert_eq(rc, 0, "%s resumed: exit %d: %s", mode, rc, err);
    cr_assert(strstr(err, "resum"), "%s: the second attempt did not say it resumed: %s", mode, err);
    double best_res = best_of(out);
    free(out), free(err);

    long long nf, nr;
    char *a = trials(full, &nf), *b = trials(part, &nr);
    cr_assert_eq(nf, budget, "%s: %lld trials uninterrupted", mode, nf);
    cr_assert_eq(nr, nf, "%s: %lld trials uninterrupted, %lld after resume", mode, nf, nr);
    if (strcmp(a, b)) {
        size_t i = 0;
        while (a[i] && a[i] == b[i]) i++;
        size_t s = i > 200 ? i - 200 : 0;
        cr_assert_fail("%s: trial sequences differ (killed at %lld) near:\n%.400s\n---\n%.400s", mode, kill, a + s, b + s);
    }
    cr_assert_eq(best_full, best_res, "%s: best %.17g uninterrupted, %.17g resumed", mode, best_full, best_res);
    free(a), free(b);
    a = slurp(cfull), b = slurp(cpart);
    cr_assert_str_eq(a, b, "%s: the --curve files differ", mode);
    free(a), free(b);
}

static long long pick(unsigned seed, long long lo, long long hi) {
    srand(seed);
    return lo + rand() % (hi - lo);
}

/* population + learner (replay, Adam, targets, migration) */
Test(egrl_resume, egrl) { kill_and_resume("egrl", 140, pick(1, 40, 120), "20"); }
/* the learner alone */
Test(egrl_resume, pg) { kill_and_resume("pg", 60, pick(2, 15, 50), "10"); }
/* Greedy-DP's position (node, current map) */
Test(egrl_resume, greedy_dp) { kill_and_resume("greedy-dp", 120, pick(3, 30, 100), "18"); }
