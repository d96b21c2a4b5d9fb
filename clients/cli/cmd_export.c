/* cmd_export.c - `hwgym export DB --format csv|jsonl [--run ID] [--out FILE]`. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hwgym_trials.h"

static const char *usage =
    "usage: hwgym export DB --format csv|jsonl [--run ID] [--out FILE]\n"
    "Writes the trials of a trial DB (all runs, or run ID) in id order, to FILE or stdout.\n"
    "  csv    a header, then one row per trial; columns: id, run_id, env, worker, episode,\n"
    "         step, kind, reset_seed, action, observation, reward, terminated, truncated,\n"
    "         metrics, feasible, time (JSON columns as JSON text; NULL as an empty field)\n"
    "  jsonl  one JSON object per line with the same keys; action, observation and metrics\n"
    "         as JSON values, booleans as true/false, NULL as null\n";

static const char *cols[] = {"id", "run_id", "env", "worker", "episode", "step", "kind", "reset_seed", "action",
                             "observation", "reward", "terminated", "truncated", "metrics", "feasible", "time"};
#define NCOLS 16

static void csv_field(FILE *f, const char *s) {
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static json_t *col_json(sqlite3_stmt *st, int i) {
    const char *name = cols[i];
    int t = sqlite3_column_type(st, i);
    if (t == SQLITE_NULL) return json_null();
    if (!strcmp(name, "action") || !strcmp(name, "observation") || !strcmp(name, "metrics")) {
        json_t *j = json_loads((const char *)sqlite3_column_text(st, i), JSON_DECODE_ANY, NULL);
        return j ? j : json_string((const char *)sqlite3_column_text(st, i));
    }
    if (!strcmp(name, "terminated") || !strcmp(name, "truncated") || !strcmp(name, "feasible"))
        return json_boolean(sqlite3_column_int(st, i));
    if (t == SQLITE_INTEGER) return json_integer(sqlite3_column_int64(st, i));
    if (t == SQLITE_FLOAT) return json_real(sqlite3_column_double(st, i));
    return json_string((const char *)sqlite3_column_text(st, i));
}

int hwcli_export(int argc, char **argv) {
    const char *fmt = NULL, *runtext = NULL, *outpath = NULL, *pos[1];
    hwcli_opt opts[] = {{"--format", &fmt, NULL}, {"--run", &runtext, NULL}, {"--out", &outpath, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 1, 1, NULL, usage);
    if (rc) return rc == 1 ? 0 : rc;
    if (!fmt) return hwcli_fail("export", 2, "missing --format (csv or jsonl)");
    bool csv = !strcmp(fmt, "csv");
    if (!csv && strcmp(fmt, "jsonl")) return hwcli_fail("export", 2, "--format: '%s' is not csv or jsonl", fmt);
    hw_err err;
    long long run = 0;
    if (runtext && hwcli_int_arg(runtext, "--run", 1, INT64_MAX, &run, &err)) return hwcli_fail("export", 2, "%s", err.msg);
    sqlite3 *db = hwt_open_readonly(pos[0], &err);
    if (!db) return hwcli_fail("export", 1, "%s", err.msg);
    if (run) {
        sqlite3_stmt *q;
        sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE id = ?", -1, &q, NULL);
        sqlite3_bind_int64(q, 1, run);
        bool found = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
        if (!found) {
            sqlite3_close(db);
            return hwcli_fail("export", 1, "--run: no run %lld in %s", run, pos[0]);
        }
    }
    sqlite3_stmt *st;
    const char *sql = "SELECT t.id, t.run_id, r.env, t.worker, t.episode, t.step, t.kind, t.reset_seed, t.action, "
                      "t.observation, t.reward, t.terminated, t.truncated, t.metrics, t.feasible, t.time "
                      "FROM trials t JOIN runs r ON r.id = t.run_id WHERE (?1 = 0 OR t.run_id = ?1) ORDER BY t.id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = hwcli_fail("export", 1, "%s: %s", pos[0], sqlite3_errmsg(db));
        sqlite3_close(db);
        return rc;
    }
    sqlite3_bind_int64(st, 1, run);
    FILE *f = stdout;
    if (outpath) {
        f = fopen(outpath, "w");
        if (!f) {
            sqlite3_finalize(st);
            sqlite3_close(db);
            return hwcli_fail("export", 1, "--out: cannot write %s", outpath);
        }
    }
    if (csv) {
        for (int i = 0; i < NCOLS; i++) fprintf(f, "%s%s", i ? "," : "", cols[i]);
        fputc('\n', f);
    }
    long long n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (csv) {
            for (int i = 0; i < NCOLS; i++) {
                if (i) fputc(',', f);
                if (sqlite3_column_type(st, i) == SQLITE_FLOAT) fprintf(f, "%.17g", sqlite3_column_double(st, i));
                else csv_field(f, (const char *)sqlite3_column_text(st, i));
            }
            fputc('\n', f);
        } else {
            json_t *o = json_object();
            for (int i = 0; i < NCOLS; i++) json_object_set_new(o, cols[i], col_json(st, i));
            json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
            fputc('\n', f);
            json_decref(o);
        }
        n++;
    }
    int bad = rc != SQLITE_DONE;
    if (bad) hwcli_fail("export", 1, "%s: %s", pos[0], sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (outpath && fclose(f)) return hwcli_fail("export", 1, "--out: error writing %s", outpath);
    if (!outpath) fflush(stdout);
    fprintf(stderr, "hwgym export: %lld trials%s%s\n", n, outpath ? " written to " : "", outpath ? outpath : "");
    return bad;
}
