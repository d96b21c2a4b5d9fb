/* batch_reply.c - packs a lean evaluate_batch's reply (lean_pack_reply, batch.h): the reward and
 * feasible arrays (unless already in place), the requested metrics as columns ("all": the union
 * of the points' records), cache_hit, and the per-point errors in index order. Below batch.c's
 * callers; calls batch.c only for a record's value (lean_rec_get). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "reply.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

static void pack_f64(msgpack_packer *pk, const double *v, int64_t n) {
    hw_array a = {HW_DT_FLOAT64, 1, {n}, (void *)v};
    hw_pack_array(pk, &a, 0);
}

static void pack_u8(msgpack_packer *pk, const uint8_t *v, int64_t n) {
    hw_array a = {HW_DT_BOOL, 1, {n}, (void *)v};
    hw_pack_array(pk, &a, 0);
}

/* n false values without an n-byte array */
static void pack_false(msgpack_packer *pk, int64_t n) {
    static const unsigned char zeros[4096];
    hw_pack_array_head(pk, HW_DT_BOOL, 1, &n, 0, (size_t)n);
    for (int64_t o = 0; o < n; o += (int64_t)sizeof zeros)
        msgpack_pack_bin_body(pk, zeros, (size_t)(n - o < (int64_t)sizeof zeros ? n - o : (int64_t)sizeof zeros));
}

/* "all" without a lean entry: the union of the records' names, in first-seen order */
static void collect_names(lean_batch *b) {
    int cap = 0;
    for (int64_t k = 0; k < b->n; k++) {
        const unsigned char *p = b->rec[k];
        size_t len = b->reclen[k], i = 0;
        while (p && i < len) {
            size_t l = p[i];
            if (i + 1 + l + 8 > len) break;
            bool seen = false;
            for (int j = 0; j < b->nreq && !seen; j++) seen = strlen(b->names[j]) == l && !memcmp(b->names[j], p + i + 1, l);
            if (!seen && b->nreq < LEAN_MAX_METRICS) {
                if (b->nreq == cap) {
                    cap = cap ? cap * 2 : 16;
                    b->names = realloc(b->names, sizeof(char *) * (size_t)cap);
                    if (!b->names) abort();
                }
                b->names[b->nreq] = strndup((const char *)p + i + 1, l);
                b->nreq++;
            }
            i += 1 + l + 8;
        }
    }
    free(b->vals);
    b->vals = xcalloc((size_t)b->n * (size_t)(b->nreq ? b->nreq : 1), sizeof(double));
    for (int64_t k = 0; k < b->n; k++)
        for (int j = 0; j < b->nreq; j++)
            b->vals[(size_t)j * (size_t)b->n + (size_t)k] = b->rec[k] ? lean_rec_get(b->rec[k], b->reclen[k], b->names[j]) : NAN;
}

static int err_cmp(const void *a, const void *b) {
    const lean_err *x = *(const lean_err *const *)a, *y = *(const lean_err *const *)b;
    return (x->k > y->k) - (x->k < y->k);
}

void lean_pack_reply(lean_batch *b, msgpack_packer *pk, msgpack_sbuffer *sb) {
    if (b->all) collect_names(b);
    size_t need = sb->size + (size_t)b->n * ((b->inreply ? 1 : 10) + 8 * (size_t)b->nreq) + 64 * (size_t)b->nreq + 256;
    if (sb->alloc < need) { /* one allocation for the whole reply */
        char *p = realloc(sb->data, need);
        if (!p) abort();
        sb->data = p;
        sb->alloc = need;
    }
    size_t ne = b->rerr.n;
    for (int s = 0; s < b->nslices; s += LEAN_SLICE_BLOCK) /* the blocks of slices that were cut */
        for (int x = 0; b->serr[s / LEAN_SLICE_BLOCK] && x < LEAN_SLICE_BLOCK; x++) ne += b->serr[s / LEAN_SLICE_BLOCK][x].n;
    const lean_err **ev = xcalloc(ne, sizeof *ev);
    size_t i = 0;
    for (size_t j = 0; j < b->rerr.n; j++) ev[i++] = &b->rerr.v[j];
    for (int s = 0; s < b->nslices; s += LEAN_SLICE_BLOCK)
        for (int x = 0; b->serr[s / LEAN_SLICE_BLOCK] && x < LEAN_SLICE_BLOCK; x++) {
            const lean_errs *E = &b->serr[s / LEAN_SLICE_BLOCK][x];
            for (size_t j = 0; j < E->n; j++) ev[i++] = &E->v[j];
        }
    qsort(ev, ne, sizeof *ev, err_cmp);
    if (!b->inreply) { /* else already in place (reply_slots) */
        hw_pack_cstr(pk, "reward");
        pack_f64(pk, b->reward, b->n);
        hw_pack_cstr(pk, "feasible");
        pack_u8(pk, b->feasible, b->n);
    }
    hw_pack_cstr(pk, "metrics");
    msgpack_pack_map(pk, (size_t)b->nreq);
    for (int j = 0; j < b->nreq; j++) {
        hw_pack_cstr(pk, b->names[j]);
        pack_f64(pk, b->vals + (size_t)j * (size_t)b->n, b->n);
    }
    hw_pack_cstr(pk, "cache_hit");
    if (b->hit) pack_u8(pk, b->hit, b->n);
    else pack_false(pk, b->n);
    hw_pack_cstr(pk, "errors");
    msgpack_pack_array(pk, ne);
    for (i = 0; i < ne; i++) {
        msgpack_pack_map(pk, 3);
        hw_pack_cstr(pk, "index");
        msgpack_pack_int64(pk, ev[i]->k);
        hw_pack_kv_str(pk, "code", hw_code_name((hw_code)ev[i]->code));
        hw_pack_kv_str(pk, "message", ev[i]->msg);
    }
    free(ev);
}
