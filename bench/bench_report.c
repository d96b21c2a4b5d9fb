/* bench_report.c - `hwgym report DB --out DIR` stays responsive on a DB of a million trials.
 * Builds a trial DB with RUNS runs (2 agents x seeds) of TRIALS/RUNS maestro-v0 designs each
 * (random actions, synthetic rewards, one SQL statement), then times the HTML report and prints
 * the page size. Usage: bench_report [--trials N]   (BUILD/bin/hwgym next to this bench) */
#include <libgen.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwgym_trials.h"

extern char **environ;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long long trials = 1000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc) trials = atoll(argv[++i]);
        else {
            printf("usage: bench_report [--trials N]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    char exe[4096], bin[4300], dir[] = "/tmp/hwgym-bench-report.XXXXXX", db[128], out[160];
    ssize_t ln = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[ln > 0 ? ln : 0] = 0;
    snprintf(bin, sizeof bin, "%s/bin/hwgym", dirname(dirname(exe)));
    if (!mkdtemp(dir)) return 1;
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    hw_err err;
    hwt_db *w = hwt_open(db, NULL, &err); /* creates the schema */
    if (!w) {
        fprintf(stderr, "bench_report: %s\n", err.msg);
        return 1;
    }
    hwt_close(w, &err);
    sqlite3 *q;
    sqlite3_open(db, &q);
    const int runs = 10;
    double t0 = now();
    char sql[4096];
    snprintf(sql, sizeof sql,
             "BEGIN;"
             "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < %d)"
             " INSERT INTO runs (agent, env, env_config, seed, started_at, ended_at)"
             " SELECT CASE WHEN i %% 2 THEN 'hwgym-search --algo ga' ELSE 'hwgym-search --algo random' END, 'maestro-v0',"
             " '{\"model\":\"mobilenet_v2\",\"layer\":2}', (i + 1) / 2, 0, 1 FROM r;"
             "WITH RECURSIVE t(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM t WHERE i < %lld)"
             " INSERT INTO trials (run_id, episode, step, kind, action, reward, metrics, feasible, time, cache_hit)"
             " SELECT 1 + i %% %d, i / %d, -1, 'eval',"
             " json_array(abs(random()) %% 720, abs(random()) %% 6, 0, abs(random()) %% 6, abs(random()) %% 8, abs(random()) %% 8,"
             "  abs(random()) %% 2, abs(random()) %% 2, abs(random()) %% 9, abs(random()) %% 9),"
             " (abs(random()) %% 1000000) * 1e-10 * (1 + ln(1 + i / %d)), '{\"runtime\":1}', 1, 0, abs(random()) %% 2 FROM t;"
             "COMMIT;",
             runs, trials - 1, runs, runs, runs);
    char *msg = NULL;
    if (sqlite3_exec(q, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "bench_report: %s\n", msg);
        return 1;
    }
    sqlite3_close(q);
    printf("bench_report: %lld trials in %d runs generated in %.1f s\n", trials, runs, now() - t0);
    char *a[] = {bin, "report", db, "--out", out, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
    pid_t p;
    t0 = now();
    if (posix_spawn(&p, bin, &fa, NULL, a, environ) != 0) return 1;
    int st;
    waitpid(p, &st, 0);
    double dt = now() - t0;
    char html[200];
    snprintf(html, sizeof html, "%s/report.html", out);
    struct stat sb;
    long long size = stat(html, &sb) == 0 ? (long long)sb.st_size : -1;
    printf("  hwgym report --out: %.2f s (exit %d), report.html %.1f KiB (curves sampled at 160 points per group)\n", dt,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1, size / 1024.0);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm)) return 1;
    return 0;
}
