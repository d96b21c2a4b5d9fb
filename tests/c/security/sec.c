/* sec.c - see sec.h */
#include "sec.h"

#include <sqlite3.h>
#include <time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

void secfx_make(secfx *f) {
    snprintf(f->root, sizeof f->root, "/tmp/hwgym-sec-%d-XXXXXX", (int)getpid());
    cr_assert(mkdtemp(f->root));
    snprintf(f->data, sizeof f->data, "%s/data", f->root);
    snprintf(f->secret, sizeof f->secret, "%s/secret.csv", f->root);
    cr_assert_eq(mkdir(f->data, 0700), 0);
    write_file(f->secret, SECRET ",op,N,K,C,R,S,Y,X\n" SECRET ",conv,1,1,1,1,1,1,1\n");
    char p[600];
    snprintf(p, sizeof p, "%s/link.csv", f->data); /* symlink out of the data dir */
    cr_assert_eq(symlink(f->secret, p), 0);
    snprintf(p, sizeof p, "%s/fifo", f->data);
    cr_assert_eq(mkfifo(p, 0600), 0);
    snprintf(p, sizeof p, "%s/sub", f->data);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/ptmx", f->data); /* a symlink to a device that blocks readers */
    cr_assert_eq(symlink("/dev/ptmx", p), 0);
    snprintf(p, sizeof p, "%s/trace.stl", f->data);
    write_file(p, "0:\tread\t0x0\n4:\twrite\t0x40\n8:\tread\t0x1000\n");
    snprintf(p, sizeof p, "%s/bad.json", f->data); /* content that must never come back */
    write_file(p, "{\"" SECRET "\": [1, 2,");
    snprintf(p, sizeof p, "%s/acc.json", f->data);
    write_file(p, "{\"" SECRET "\": 1}");
    snprintf(p, sizeof p, "%s/model.csv", f->data);
    write_file(p, "name,op,N,K,C,R,S,Y,X,Yo,Xo,stride,pad,dilation,groups,inputs\n"
                  "c1,conv,1,16,3,3,3,32,32,30,30,1,0,1,1,-1\n");
    snprintf(p, sizeof p, "%s/badmodel.csv", f->data);
    write_file(p, SECRET ",x\n");
}

void secfx_clean(secfx *f) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    cr_assert_eq(system(cmd), 0);
}

void sec_start(srv *s, const secfx *f, hw_server_opts *tweak) {
    hw_server_opts o;
    if (tweak) o = *tweak;
    else hw_server_default_opts(&o);
    if (f && o.ndata_dirs == 0) cr_assert_eq(hw_policy_add_data_dir(&o, f->data), 0);
    srv_start_opts(s, &o);
}

json_t *sec_make(void *c, const char *env, const char *cfg) {
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"%s\",\"config\":%s}", env, cfg);
    cr_assert(r, "no reply to make %s %s", env, cfg);
    return r;
}

void sec_session(void *c, const char *env, const char *cfg, char tok[64]) {
    json_t *r = sec_make(c, env, cfg);
    cr_assert_null(err_code(r), "make %s %s: %s", env, cfg, err_msg(r));
    snprintf(tok, 64, "%s", json_string_value(json_object_get(r, "session")));
    json_decref(r);
    json_decref(call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\"}", tok));
}

const char *sec_code(const json_t *r) { return err_code(r) ? err_code(r) : "OK"; }

int sec_stop(srv *s) {
    int rc = srv_stop(s);
    for (int i = 0; i < s->o.ndata_dirs; i++) free((char *)s->o.data_dirs[i]);
    json_decref(s->o.env_limits);
    return rc;
}

void *sec_run(void *arg) {
    srv *s = arg;
    s->rc = hw_server_run(&s->o, &s->stop);
    return NULL;
}

double sec_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sec_sql(const char *path, const char *q) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, q, NULL, NULL, &msg), SQLITE_OK, "%s: %s", q, msg ? msg : "");
    sqlite3_close(db);
}
