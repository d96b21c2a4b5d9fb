/* Issue 28 finding 3: a checkpoint's entries are checked before use. An edited or truncated
 * checkpoint (a count past its blob, a blob cut short, an unknown type, a column of the wrong
 * type) is refused at load with a message naming the entry, in the library and through an
 * agent's --resume (a clean exit 1, never a SIGSEGV or an over-read). */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "checkpoint.h"
#include "sec.h"


static void save(const char *path) {
    remove(path);
    ag_ckpt *c = ag_ckpt_new();
    double w[4] = {1, 2, 3, 4};
    int64_t q[2] = {5, 6};
    ag_ckpt_put_f64(c, "w", w, 4);
    ag_ckpt_put_i64(c, "q", q, 2);
    ag_ckpt_put_u8(c, "u", (const uint8_t *)"abc", 3);
    hw_err err;
    cr_assert_eq(ag_ckpt_save(path, "main", 10, NULL, c, &err), 0, "%s", err.msg);
    ag_ckpt_free(c);
}

static void refused(const char *path, const char *edit, const char *entry) {
    save(path);
    sec_sql(path, edit);
    hw_err err;
    bool missing = false;
    ag_ckpt *c = ag_ckpt_load(path, "main", -1, NULL, &missing, &err);
    cr_assert_null(c, "an edited checkpoint (%s) was loaded", edit);
    cr_assert(!missing);
    cr_assert(strstr(err.msg, entry), "%s: the message does not name '%s': %s", edit, entry, err.msg);
}

Test(checkpoint, edited_entries_are_refused_at_load) {
    char dir[64];
    hwtest_tmpdir(dir, sizeof dir);
    char path[128];
    snprintf(path, sizeof path, "%s/c.ckpt", dir);
    /* the untouched file loads and reads back */
    save(path);
    hw_err err;
    ag_ckpt *c = ag_ckpt_load(path, "main", -1, NULL, NULL, &err);
    cr_assert(c, "%s", err.msg);
    double w[4];
    cr_assert_eq(ag_ckpt_get_f64(c, "w", w, 4, &err), 0, "%s", err.msg);
    cr_assert_eq(w[3], 4.0);
    ag_ckpt_free(c);
    refused(path, "UPDATE ckpt_entry SET n=1000000 WHERE name='w'", "'w'");        /* the reported over-read */
    refused(path, "UPDATE ckpt_entry SET data=x'0102' WHERE name='q'", "'q'");      /* a blob cut short */
    refused(path, "UPDATE ckpt_entry SET data=NULL WHERE name='u'", "'u'");
    refused(path, "UPDATE ckpt_entry SET type=9 WHERE name='w'", "'w'");
    refused(path, "UPDATE ckpt_entry SET type=2 WHERE name='u'", "'u'");            /* 3 bytes as int64 */
    refused(path, "UPDATE ckpt_entry SET n=-1 WHERE name='u'", "'u'");
    refused(path, "UPDATE ckpt_entry SET n='many' WHERE name='w'", "wrong type");
    refused(path, "UPDATE ckpt_entry SET data='text' WHERE name='w'", "wrong type");
    hwtest_rmtree(dir);
}

Test(checkpoint, add_entry_checks_count_against_bytes) {
    ag_ckpt *c = ag_ckpt_new();
    hw_err err;
    double d[2] = {1, 2};
    cr_assert_eq(ag_ckpt_add_entry(c, "a", 1, 2, d, sizeof d, &err), 0, "%s", err.msg);
    cr_assert_neq(ag_ckpt_add_entry(c, "b", 1, 3, d, sizeof d, &err), 0);
    cr_assert_neq(ag_ckpt_add_entry(c, "c", 1, INT64_MAX, d, sizeof d, &err), 0);
    cr_assert_neq(ag_ckpt_add_entry(c, "a", 1, 2, d, sizeof d, &err), 0, "a duplicate name");
    cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
    cr_assert_neq(ag_ckpt_add_entry(c, "", 1, 0, NULL, 0, &err), 0);
    cr_assert_neq(ag_ckpt_add_entry(c, "e", 0, 0, NULL, 0, &err), 0);
    double out[5];
    cr_assert_neq(ag_ckpt_get_f64(c, "a", out, 5, &err), 0, "asked for more than stored");
    ag_ckpt_free(c);
}

/* through an agent: hwgym-search --resume on an edited checkpoint exits 1 with the entry named */
Test(checkpoint, agent_resume_on_an_edited_checkpoint_fails_cleanly, .timeout = 120) {
    char bin[4096];
    if (!hwtest_bin("hwgym-search", bin, sizeof bin)) cr_skip_test("hwgym-search is not built");
    char dir[64];
    hwtest_tmpdir(dir, sizeof dir);
    char db[128], ck[160];
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", db);
    const char *argv[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--algo", "random", "--seed", "1", "--budget", "100",
                          "--quiet", "--db", db, "--checkpoint-every", "20", "--resume", NULL};
    char *out = NULL, *errs = NULL;
    cr_assert_eq(hwtest_run(argv, &out, &errs), 0, "%s", errs);
    free(out);
    free(errs);
    sec_sql(ck, "UPDATE ckpt_entry SET n=n*1000+100000 WHERE name='search.rewards'");
    const char *argv2[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--algo", "random", "--seed", "1", "--budget", "200",
                           "--quiet", "--db", db, "--checkpoint-every", "20", "--resume", NULL};
    int rc = hwtest_run(argv2, &out, &errs);
    cr_assert(rc > 0 && rc < 128, "an edited checkpoint: exit status %d (a signal?): %s", rc, errs);
    cr_assert(strstr(errs, "search.rewards"), "the message does not name the entry: %s", errs);
    free(out);
    free(errs);
    hwtest_rmtree(dir);
}
