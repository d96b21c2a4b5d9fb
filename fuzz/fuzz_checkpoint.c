/* fuzz_checkpoint.c - libFuzzer harness for the checkpoint reader (agents/lib/run/checkpoint.c,
 * issue 28 finding 3): every entry a file can hold goes through ag_ckpt_add_entry's checks, then
 * every getter is called on it with the sizes a resuming agent would ask for. Two input forms:
 *  - "SQLite format 3\0...": a whole checkpoint file, read with ag_ckpt_load (owner "main");
 *  - anything else: entry records [name length u8][name][type u8][count i64 LE][bytes u16 LE]
 *    [bytes of data], added with ag_ckpt_add_entry as ag_ckpt_load adds a row.
 * Any crash, sanitizer report (an over-read of an entry's data), leak or hang is a finding.
 * Run: make fuzz (docs/security.md). */
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"

#define MAXN 64

static void exercise(const ag_ckpt *c, char names[][256], int nn) {
    hw_err err;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < nn; i++) {
        const char *nm = names[i];
        int64_t len = ag_ckpt_len(c, nm);
        /* what an agent asks for: the stored count (bounded), one, and a fixed size */
        size_t sizes[3] = {len >= 0 && len <= (1 << 16) ? (size_t)len : 0, 1, 7};
        for (int k = 0; k < 3; k++) {
            size_t n = sizes[k];
            double *f = calloc(n + 1, sizeof *f);
            int64_t *q = calloc(n + 1, sizeof *q);
            uint8_t *u = calloc(n + 1, 1);
            (void)ag_ckpt_get_f64(c, nm, f, n, &err);
            (void)ag_ckpt_get_i64(c, nm, q, n, &err);
            (void)ag_ckpt_get_u8(c, nm, u, n, &err);
            free(f);
            free(q);
            free(u);
        }
        int64_t iv;
        double dv;
        (void)ag_ckpt_get_int(c, nm, &iv, &err);
        (void)ag_ckpt_get_real(c, nm, &dv, &err);
        json_decref(ag_ckpt_get_json(c, nm, &err));
        (void)ag_ckpt_get_rng(c, nm, r, &err);
    }
    gsl_rng_free(r);
}

static int from_records(const uint8_t *d, size_t n) {
    ag_ckpt *c = ag_ckpt_new();
    static char names[MAXN][256];
    int nn = 0;
    size_t p = 0;
    hw_err err;
    while (p < n && nn < MAXN) {
        size_t nl = d[p++];
        if (p + nl + 1 + 8 + 2 > n) break;
        memcpy(names[nn], d + p, nl);
        names[nn][nl] = 0;
        p += nl;
        int type = d[p++];
        uint64_t cnt = 0;
        for (int k = 0; k < 8; k++) cnt |= (uint64_t)d[p + k] << (8 * k);
        p += 8;
        size_t nb = (size_t)d[p] | (size_t)d[p + 1] << 8;
        p += 2;
        if (nb > n - p) nb = n - p;
        /* the data in a buffer of its own size, so an over-read is ASan's to see */
        void *blob = nb ? malloc(nb) : NULL;
        if (nb) memcpy(blob, d + p, nb);
        p += nb;
        (void)ag_ckpt_add_entry(c, names[nn], type, (int64_t)cnt, blob, nb, &err);
        free(blob);
        nn++;
    }
    exercise(c, names, nn);
    ag_ckpt_free(c);
    return 0;
}

static int from_file(const uint8_t *d, size_t n) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/dev/shm/fuzz_checkpoint-%d.db", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(d, 1, n, f);
    fclose(f);
    hw_err err;
    json_t *cfg = NULL;
    bool missing;
    ag_ckpt *c = ag_ckpt_load(path, "main", -1, &cfg, &missing, &err);
    json_decref(cfg);
    if (c) {
        static char names[][256] = {"w", "i", "u", "cfg", "rng", "ppo.theta", "run.samples", ""};
        exercise(c, names, (int)(sizeof names / sizeof names[0]));
        ag_ckpt_free(c);
    }
    unlink(path);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size >= 16 && !memcmp(data, "SQLite format 3", 16)) return from_file(data, size);
    return from_records(data, size);
}
