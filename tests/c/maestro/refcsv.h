/* refcsv.h - a small RFC-4180 CSV reader for the MAESTRO reference table (test helper). */
#ifndef MAESTRO_REFCSV_H
#define MAESTRO_REFCSV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int ncol, nrow;
    char **hdr;
    char ***rows; /* rows[i][j] */
    char *buf;
} refcsv;

static char *refcsv_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

/* parses in place; fields are unescaped into the same buffer */
static char **refcsv_row(char **pp, int *nf) {
    char *p = *pp;
    if (!*p) return NULL;
    int cap = 64, n = 0;
    char **f = malloc(sizeof(char *) * (size_t)cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            f = realloc(f, sizeof(char *) * (size_t)cap);
        }
        char *w = p, *start = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '"' && p[1] == '"') *w++ = '"', p += 2;
                else if (*p == '"') { p++; break; }
                else if (!*p) break;
                else *w++ = *p++;
            }
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r') *w++ = *p++;
        }
        char end = *p;
        *w = 0;
        f[n++] = start;
        if (end == ',') { p++; continue; }
        if (end == '\r') p++;
        if (*p == '\n') p++;
        break;
    }
    *pp = p;
    *nf = n;
    return f;
}

static int refcsv_load(refcsv *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->buf = refcsv_slurp(path);
    if (!c->buf) return -1;
    char *p = c->buf;
    c->hdr = refcsv_row(&p, &c->ncol);
    if (!c->hdr) return -1;
    int cap = 1024;
    c->rows = malloc(sizeof(char **) * (size_t)cap);
    int nf;
    char **r;
    while ((r = refcsv_row(&p, &nf)) != NULL) {
        if (nf < c->ncol) { free(r); continue; }
        if (c->nrow == cap) {
            cap *= 2;
            c->rows = realloc(c->rows, sizeof(char **) * (size_t)cap);
        }
        c->rows[c->nrow++] = r;
    }
    return 0;
}

static int refcsv_col(const refcsv *c, const char *name) {
    for (int j = 0; j < c->ncol; j++)
        if (strcmp(c->hdr[j], name) == 0) return j;
    return -1;
}

static void refcsv_free(refcsv *c) {
    for (int i = 0; i < c->nrow; i++) free(c->rows[i]);
    free(c->rows);
    free(c->hdr);
    free(c->buf);
    memset(c, 0, sizeof *c);
}

#endif
