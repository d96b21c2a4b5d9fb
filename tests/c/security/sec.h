/* sec.h - helpers shared by the security tests: a scratch directory with a secret outside the
 * data directory, a data directory with good, bad and hostile entries, and a server on it. */
#ifndef TEST_SEC_H
#define TEST_SEC_H

#include <criterion/criterion.h>
#include <jansson.h>

#include "../server/harness.h"

#define SECRET "TOPSECRET-7f3a"

typedef struct secfx {
    char root[256];    /* scratch dir */
    char data[300];    /* root/data: the --data-dir */
    char secret[300];  /* root/secret.csv, outside the data dir */
} secfx;

void secfx_make(secfx *f);
void secfx_clean(secfx *f);
/* A server with f->data as its only data dir (or none when f is NULL). */
void sec_start(srv *s, const secfx *f, hw_server_opts *tweak);
/* make of env with config text; returns the reply (caller frees). */
int sec_stop(srv *s); /* srv_stop + frees the data-dir strings */
json_t *sec_make(void *c, const char *env, const char *cfg);
/* make of env with config text (must succeed), then reset; the session token into tok. */
void sec_session(void *c, const char *env, const char *cfg, char tok[64]);
/* The reply's error code, or "OK". */
const char *sec_code(const json_t *r);
void write_file(const char *path, const char *text);
/* Monotonic seconds. */
double sec_now(void);
/* Runs SQL on an SQLite file (the test fails on an SQL error): planting rows, edits, triggers. */
void sec_sql(const char *path, const char *q);

#endif
