/* Issue 28 finding 10 (the Low items) at the CLI and the wire:
 *  - `hwgym timeloop-model` YAML inputs: a file over the size cap, a factor that overflows
 *    (K99999999999999999999999), meshX 4294967297, word-bits 0 and a duplicate key are refused
 *    (exit 2) with a message naming the field;
 *  - `hwgym report` never copies bytes that are not UTF-8 into its UTF-8 page;
 *  - `hwgym top` exits non-zero when it never got an answer. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "hw_codec.h"
#include "sec.h"

static char tdir[1024], hw[1024];

static void setup(void) {
    cr_assert(hwtest_repo_file("tests/data/timeloop/templates/problem-shape.yaml", tdir, sizeof tdir));
    *strrchr(tdir, '/') = 0;
    cr_assert(hwtest_bin("hwgym", hw, sizeof hw), "hwgym binary not built");
}

/* the shipped eyeriss example with `sed_expr` applied to one of its files (which: 0 arch, 2 map);
 * returns the exit status and stderr */
static int tl_run(int which, const char *sed_expr, const char *append, char **errs) {
    char dir[64];
    hwtest_tmpdir(dir, sizeof dir);
    static const char *const name[4] = {"eyeriss_v1.arch.proj.yaml", "example.eyeriss_v1.problem.yaml", "example.eyeriss_v1.map.yaml",
                                        "eyeriss_v1.ERT.proj.yaml"};
    char f[4][1200], cmd[8000], stats[1200];
    for (int k = 0; k < 4; k++) {
        snprintf(f[k], sizeof f[k], "%s/%s", dir, name[k]);
        snprintf(cmd, sizeof cmd, "cp %s/%s %s", tdir, name[k], f[k]);
        cr_assert_eq(system(cmd), 0);
    }
    if (sed_expr) {
        snprintf(cmd, sizeof cmd, "sed -i '%s' %s", sed_expr, f[which]);
        cr_assert_eq(system(cmd), 0);
    }
    if (append) {
        FILE *a = fopen(f[which], "a");
        fputs(append, a);
        fclose(a);
    }
    snprintf(stats, sizeof stats, "%s/stats.txt", dir);
    const char *argv[] = {hw, "timeloop-model", f[0], f[1], f[2], f[3], "--stats", stats, NULL};
    char *out = NULL;
    int rc = hwtest_run(argv, &out, errs);
    free(out);
    hwtest_rmtree(dir);
    return rc;
}

static void refused(int which, const char *sed_expr, const char *append, const char *word) {
    char *e = NULL;
    int rc = tl_run(which, sed_expr, append, &e);
    cr_assert_eq(rc, 2, "%s%s: exit %d: %s", sed_expr ? sed_expr : "", append ? "(appended)" : "", rc, e ? e : "");
    cr_assert(e && strstr(e, word), "the message does not name '%s': %s", word, e ? e : "");
    free(e);
}

Test(cli, timeloop_yaml_numbers_and_keys, .init = setup, .timeout = 60) {
    char *e = NULL;
    cr_assert_eq(tl_run(0, NULL, NULL, &e), 0, "the untouched example: %s", e);
    free(e);
    refused(2, "0,/K16/s//K99999999999999999999999/", NULL, "factors");
    refused(2, "0,/K16/s//K16 K2/", NULL, "twice");
    refused(0, "0,/meshX: 14/s//meshX: 4294967297/", NULL, "meshX");
    refused(0, "0,/word-bits: 16/s//word-bits: 0/", NULL, "word-bits");
    refused(0, "0,/entries: 224/s//entries: 1e300/", NULL, "entries");
    refused(0, "0,/name: MAC/s//name: MAC\\n    instances: 2/", NULL, "duplicate key 'instances'");
}

Test(cli, timeloop_yaml_size_cap, .init = setup, .timeout = 60) {
    /* 5 MiB of comments after the arch: refused before parsing */
    char *pad = malloc(5u << 20);
    for (size_t i = 0; i < (5u << 20) - 1; i++) pad[i] = (i % 64 == 63) ? '\n' : (i % 64 == 0 ? '#' : 'x');
    pad[(5u << 20) - 1] = 0;
    refused(0, NULL, pad, "exceed the limit");
    free(pad);
}

Test(cli, report_page_is_utf8, .timeout = 120) {
    char search[1024];
    cr_assert(hwtest_bin("hwgym", hw, sizeof hw));
    cr_assert(hwtest_bin("hwgym-search", search, sizeof search));
    char dir[64], db[128], out[128], page[200];
    hwtest_tmpdir(dir, sizeof dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(out, sizeof out, "%s/rep", dir);
    const char *sargv[] = {search, "--endpoint", "local", "--env", "diag-v0", "--algo", "random", "--seed", "1", "--budget", "20",
                           "--quiet", "--db", db, NULL};
    cr_assert_eq(hwtest_run(sargv, NULL, NULL), 0);
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "UPDATE runs SET agent = CAST(x'6167ff656e74c0af3c623e' AS TEXT), host = CAST(x'fe01' AS TEXT)", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(h);
    const char *rargv[] = {hw, "report", db, "--out", out, NULL};
    char *errs = NULL;
    int rc = hwtest_run(rargv, NULL, &errs);
    cr_assert_eq(rc, 0, "%s", errs);
    free(errs);
    snprintf(page, sizeof page, "%s/report.html", out);
    FILE *f = fopen(page, "rb");
    cr_assert(f, "no %s", page);
    char *buf = malloc(4 << 20);
    size_t n = fread(buf, 1, (4 << 20) - 1, f);
    fclose(f);
    cr_assert(hw_utf8_valid(buf, n), "the page is not UTF-8");
    buf[n] = 0;
    cr_assert(strstr(buf, "ag\xef\xbf\xbd" "ent"), "the agent's name is not shown with a replacement character");
    cr_assert(strstr(buf, "&lt;b&gt;"), "markup from the log is escaped");
    free(buf);
    hwtest_rmtree(dir);
}

Test(cli, top_without_an_answer_exits_non_zero, .timeout = 60) {
    cr_assert(hwtest_bin("hwgym", hw, sizeof hw));
    const char *argv[] = {hw, "top", "--endpoint", "ipc:///tmp/hwgym-nobody-here-28.sock", "--count", "1", "--interval", "0.1", NULL};
    char *errs = NULL;
    int rc = hwtest_run(argv, NULL, &errs);
    cr_assert_eq(rc, 1, "exit %d: %s", rc, errs);
    cr_assert(errs && strstr(errs, "no answer"), "%s", errs);
    free(errs);
}
