/* Issue 28 findings 4, 5 and 10 (the evaluation cache) at the wire and in the cache module:
 *  - keys cover the content of the data files a config names: after hw.json changes, or on a
 *    second server sharing --cache FILE with another data dir, the results are the new file's;
 *  - the file is data only: a planted trigger, view or extra table, or a changed column, is
 *    refused at open with a message; planted rows (reward 1e300, NaN-free but absurd; a metrics
 *    blob over the bound; a malformed record) are not served (disk_rejected counts them);
 *  - the file is created 0600, and one writable by others is refused;
 *  - cache_hit marks only the client's own points unless --cache-shared;
 *  - stats names the cache file, not its path. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/hwtest.h"
#include "cache.h"
#include "hwgym_client.h"
#include "policy.h"
#include "sec.h"

#define NT 114 /* placement-v0 resnet50: tensors */


static void hw_file(const char *dir, int element_bytes) { /* the all-SRAM point's reward follows it */
    char p[600], t[128];
    snprintf(p, sizeof p, "%s/hw.json", dir);
    snprintf(t, sizeof t, "{\"element_bytes\":%d}\n", element_bytes);
    write_file(p, t);
}

static hwc_client *connect_to(const srv *S) {
    hw_err e;
    hwc_client *c = hwc_connect(NULL, S->ep, 30000, &e);
    cr_assert(c, "%s", e.msg);
    return c;
}

/* a server on f's data dir with a 16 MiB cache (file: its --cache FILE, or NULL) */
static void cache_server(srv *S, const secfx *f, const char *file, bool shared) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.cache_mb = 16;
    o.cache_path = file;
    o.cache_shared = shared;
    sec_start(S, f, &o);
}

/* two points (all DRAM, all SRAM) of placement-v0 on config.hw_file = hw.json */
static void two_points(hwc_client *c, double r[2], bool hit[2]) {
    static int64_t P[2][NT];
    for (int j = 0; j < NT; j++) P[0][j] = 0, P[1][j] = 2;
    hw_array a = {HW_DT_INT64, 2, {2, NT}, P};
    json_t *cfg = json_pack("{s:s}", "hw_file", "hw.json");
    hwc_lean b;
    hw_err e;
    cr_assert_eq(hwc_evaluate_lean(c, NULL, "placement-v0", cfg, &a, NULL, 0, &b, &e), 0, "%s", e.msg);
    cr_assert_eq(b.nerrors, 0, "%s", b.error && b.error[0] ? b.error[0] : "");
    for (int k = 0; k < 2; k++) r[k] = b.reward[k], hit[k] = b.cache_hit[k];
    hwc_lean_free(&b);
    json_decref(cfg);
}

static json_t *cache_stats(hwc_client *c) {
    json_t *st;
    hw_err e;
    cr_assert_eq(hwc_stats(c, &st, &e), 0, "%s", e.msg);
    json_t *cs = json_incref(json_object_get(st, "cache"));
    json_decref(st);
    cr_assert(cs);
    return cs;
}

Test(cache, keys_cover_the_content_of_named_files, .timeout = 120) {
    secfx f;
    secfx_make(&f);
    char file[400];
    snprintf(file, sizeof file, "%s/cache.db", f.root);
    hw_file(f.data, 1);
    srv S;
    cache_server(&S, &f, file, false);
    hwc_client *c = connect_to(&S);
    double r1[2], r2[2], r3[2];
    bool h[2];
    two_points(c, r1, h);
    two_points(c, r2, h);
    cr_assert(h[0] && h[1], "the same file: hits");
    cr_assert_eq(r2[0], r1[0]);
    hw_file(f.data, 4); /* the file changes under the same name */
    two_points(c, r3, h);
    cr_assert(!h[0] && !h[1], "a changed file is not a hit");
    cr_assert_neq(r3[1], r1[1], "the old file's result was served for the new file");
    hwc_disconnect(c);
    sec_stop(&S);
    /* a second server on the same --cache FILE with another data dir and another hw.json */
    secfx g;
    secfx_make(&g);
    hw_file(g.data, 2);
    cache_server(&S, &g, file, false);
    c = connect_to(&S);
    double r4[2];
    two_points(c, r4, h);
    cr_assert_neq(r4[1], r1[1]);
    cr_assert_neq(r4[1], r3[1], "the other data dir's file was served");
    json_t *cs = cache_stats(c);
    cr_assert_eq(json_integer_value(json_object_get(cs, "disk_hits")), 0);
    /* stats names the file, not where it is */
    const char *fn = json_string_value(json_object_get(cs, "file"));
    cr_assert(fn && !strcmp(fn, "cache.db"), "stats shows '%s'", fn ? fn : "(null)");
    json_decref(cs);
    hwc_disconnect(c);
    sec_stop(&S);
    secfx_clean(&f);
    secfx_clean(&g);
}

static void fresh_cache_file(const char *path) {
    unlink(path);
    hw_err e;
    hw_cache *c = hw_cache_open(path, 1 << 20, &e);
    cr_assert(c, "%s", e.msg);
    hw_cache_close(c);
}

/* a scratch dir holding a fresh cache file at path */
static void scratch_db(char dir[64], char path[128]) {
    hwtest_tmpdir(dir, 64);
    snprintf(path, 128, "%s/c.db", dir);
    fresh_cache_file(path);
}

static void refused_at_open(const char *path, const char *plant, const char *word) {
    fresh_cache_file(path);
    sec_sql(path, plant);
    hw_err e;
    hw_cache *c = hw_cache_open(path, 1 << 20, &e);
    cr_assert_null(c, "a cache file with %s was opened", plant);
    cr_assert(strstr(e.msg, word), "%s: %s", plant, e.msg);
}

Test(cache, the_file_is_data_only) {
    char dir[64], path[128];
    scratch_db(dir, path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "created %o", st.st_mode & 0777);
    refused_at_open(path, "CREATE TRIGGER t AFTER INSERT ON hwgym_cache BEGIN UPDATE hwgym_cache SET reward = 1e300; END", "trigger");
    refused_at_open(path, "CREATE VIEW v AS SELECT * FROM hwgym_cache", "view");
    refused_at_open(path, "CREATE TABLE other(x)", "table");
    refused_at_open(path, "CREATE INDEX i ON hwgym_cache(reward)", "index");
    refused_at_open(path, "ALTER TABLE hwgym_cache ADD COLUMN extra TEXT", "column");
    /* writable by others: anyone could plant rows */
    fresh_cache_file(path);
    cr_assert_eq(chmod(path, 0666), 0);
    hw_err e;
    cr_assert_null(hw_cache_open(path, 1 << 20, &e));
    cr_assert(strstr(e.msg, "writable by other users"), "%s", e.msg);
    hwtest_rmtree(dir);
}

Test(cache, planted_rows_are_not_served) {
    char dir[64], path[128];
    scratch_db(dir, path);
    unsigned char k[4][HW_CACHE_KEY];
    for (int i = 0; i < 4; i++) memset(k[i], 'a' + i, HW_CACHE_KEY);
    hw_err e;
    hw_cache *c = hw_cache_open(path, 1 << 20, &e);
    unsigned char rec[1 + 3 + 8] = {3, 'l', 'a', 't'};
    double v = 5;
    memcpy(rec + 4, &v, 8);
    for (int i = 0; i < 4; i++) hw_cache_put(c, k[i], HW_CACHE_PEER_UNKNOWN, 1.5, true, rec, sizeof rec);
    hw_cache_close(c);
    /* edited behind the server's back */
    sec_sql(path, "UPDATE hwgym_cache SET reward = 1e300 WHERE key = x'61616161616161616161616161616161'");
    sec_sql(path, "UPDATE hwgym_cache SET metrics = zeroblob(100000) WHERE key = x'62626262626262626262626262626262'");
    sec_sql(path, "UPDATE hwgym_cache SET metrics = x'0a6c6174' WHERE key = x'63636363636363636363636363636363'");
    c = hw_cache_open(path, 1 << 20, &e);
    cr_assert(c, "%s", e.msg);
    hw_cache_val val;
    cr_assert(!hw_cache_get(c, k[0], &val), "reward 1e300 was served");
    cr_assert(!hw_cache_get(c, k[1], &val), "a 100 kB metrics blob was served");
    cr_assert(!hw_cache_get(c, k[2], &val), "a malformed metrics record was served");
    cr_assert(hw_cache_get(c, k[3], &val), "the untouched row is served");
    cr_assert_eq(val.reward, 1.5);
    json_t *st = hw_cache_stats(c);
    cr_assert_eq(json_integer_value(json_object_get(st, "disk_rejected")), 3);
    json_decref(st);
    hw_cache_close(c);
    hwtest_rmtree(dir);
}

static void hits_seen_by_another_client(bool shared, bool want) {
    secfx f;
    secfx_make(&f);
    hw_file(f.data, 1);
    srv S;
    cache_server(&S, &f, NULL, shared);
    hwc_client *a = connect_to(&S), *b = connect_to(&S);
    double r[2], rb[2];
    bool h[2];
    two_points(a, r, h);
    cr_assert(!h[0] && !h[1]);
    two_points(b, rb, h); /* another connection: another client */
    cr_assert_eq(rb[0], r[0], "the result is shared either way");
    cr_assert_eq(h[0], want, "cache_hit of another client's point: %d, expected %d (--cache-shared %d)", h[0], want, shared);
    two_points(a, r, h);
    cr_assert(h[0] && h[1], "the client's own points are hits");
    hwc_disconnect(a);
    hwc_disconnect(b);
    sec_stop(&S);
    secfx_clean(&f);
}

Test(cache, cache_hit_is_not_a_membership_oracle, .timeout = 120) {
    hits_seen_by_another_client(false, false);
    hits_seen_by_another_client(true, true);
}

/* hwgym-server refuses to start on a planted file, naming what it found */
Test(cache, server_refuses_a_planted_file_at_start, .timeout = 60) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char dir[] = "/tmp/hwgym-seccache-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[128], cmd[4600];
    snprintf(path, sizeof path, "%s/c.db", dir);
    fresh_cache_file(path);
    sec_sql(path, "CREATE TRIGGER t AFTER INSERT ON hwgym_cache BEGIN DELETE FROM hwgym_cache; END");
    snprintf(cmd, sizeof cmd, "timeout 10 %s --bind ipc://%s/s.sock --cache %s 2>&1 | grep -q \"holds a trigger 't'\"", bin, dir, path);
    cr_assert_eq(system(cmd), 0, "no refusal naming the trigger");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
