/* mm_problem.c - problem instance: validation/finalisation, JSON and msgpack forms. */
#include <math.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "common/hw_files.h"
#include "hw_codec.h"
#include "mm_internal.h"

static void *xcalloc(size_t n, size_t s) {
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p) abort();
    return p;
}

size_t mm_problem_bytes(const mm_problem *p) {
    size_t n = sizeof *p + (size_t)p->T * sizeof(mm_instr) + (size_t)p->nbuf * sizeof(mm_buffer) +
               ((size_t)p->nalias + 1 + 2 * (size_t)p->nbuf) * sizeof(int32_t) + 6 * 16;
    for (int32_t i = 0; i < p->T; i++) n += ((size_t)1 << p->ins[i].nvar) * sizeof(double) + 16; /* L tables */
    return n;
}

void mm_problem_free(mm_problem *p) {
    if (!p) return;
    if (p->ins)
        for (int32_t i = 0; i < p->T; i++) free(p->ins[i].lat);
    free(p->ins);
    free(p->buf);
    free(p->gstart);
    free(p->gmem);
    free(p->next_same_tensor);
    free(p);
}

mm_problem *mm_problem_alloc(int32_t T, int32_t nbuf) {
    mm_problem *p = xcalloc(1, sizeof *p);
    p->T = T;
    p->nbuf = nbuf;
    p->ins = xcalloc((size_t)T, sizeof(mm_instr));
    p->buf = xcalloc((size_t)nbuf, sizeof(mm_buffer));
    p->prefetch_after_def = true;
    return p;
}

typedef struct idpair { int64_t id; int32_t idx; } idpair;
static int cmp_idpair(const void *a, const void *b) {
    const idpair *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Buffer label for errors: instructions[i].buffers[j] */
static void blabel(const mm_problem *p, int32_t b, char *out, size_t cap) {
    const mm_buffer *B = &p->buf[b];
    snprintf(out, cap, "instructions[%d].buffers[%d]", B->time, B->op_index);
}

int mm_problem_finalize(mm_problem *p, hw_err *err) {
    char lb[96];
    if (p->T < 1) return hw_fail(err, HW_E_BAD_CONFIG, "instructions: at least one instruction is required");
    if (p->nbuf < 1) return hw_fail(err, HW_E_BAD_CONFIG, "instructions: the program has no buffers");
    if (p->granule < 1) return hw_fail(err, HW_E_BAD_CONFIG, "cmem.granule: must be >= 1 byte");
    if (p->max_size < p->granule) return hw_fail(err, HW_E_BAD_CONFIG, "cmem.max_size: must be >= cmem.granule");
    int64_t G = p->max_size / p->granule;
    if (G > MM_MAX_GRANULES)
        return hw_fail(err, HW_E_BAD_CONFIG, "cmem.granule: max_size/granule = %lld granules exceeds %d; use a larger granule",
                       (long long)G, MM_MAX_GRANULES);
    p->G = (int32_t)G;
    if (!(p->copy_ns_per_byte >= 0) || !isfinite(p->copy_ns_per_byte))
        return hw_fail(err, HW_E_BAD_CONFIG, "cmem.copy_ns_per_byte: must be a finite number >= 0");
    /* instructions own contiguous buffers */
    int32_t next = 0;
    for (int32_t t = 0; t < p->T; t++) {
        mm_instr *I = &p->ins[t];
        if (I->first != next || I->nbuf < 0) return hw_fail(err, HW_E_INTERNAL, "instructions[%d]: buffer range", t);
        next += I->nbuf;
        for (int32_t j = 0; j < I->nbuf; j++) {
            p->buf[I->first + j].time = t;
            p->buf[I->first + j].op_index = j;
            p->buf[I->first + j].var_bit = -1;
        }
        if (I->nvar < 0 || I->nvar > MM_MAX_VAR || I->nvar > I->nbuf)
            return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].varying: %d operands (at most %d and at most its buffers)", t, I->nvar, MM_MAX_VAR);
        for (int32_t j = 0; j < I->nvar; j++) {
            int32_t v = I->var_buf[j];
            if (v < I->first || v >= I->first + I->nbuf)
                return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].varying[%d]: not a buffer of this instruction", t, j);
            if (p->buf[v].var_bit >= 0) return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].varying[%d]: listed twice", t, j);
            p->buf[v].var_bit = (int8_t)j;
        }
        if (!I->lat) return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].latency: missing", t);
        for (int32_t m = 0; m < (1 << I->nvar); m++)
            if (!(I->lat[m] >= 0) || !isfinite(I->lat[m]))
                return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].latency[%d]: must be a finite number >= 0", t, m);
        if (I->supply < 0) I->supply = I->lat[(1 << I->nvar) - 1];
        if (!isfinite(I->supply)) return hw_fail(err, HW_E_BAD_CONFIG, "instructions[%d].supply: must be finite", t);
    }
    if (next != p->nbuf) return hw_fail(err, HW_E_INTERNAL, "buffer count mismatch");
    for (int32_t b = 0; b < p->nbuf; b++) {
        mm_buffer *B = &p->buf[b];
        if (B->size < 1) {
            blabel(p, b, lb, sizeof lb);
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.size: must be >= 1 byte", lb);
        }
        int64_t ng = (B->size + p->granule - 1) / p->granule;
        B->ngran = ng > (int64_t)p->G + 1 ? p->G + 1 : (int32_t)ng;
        if (B->lr_start < 0 || B->lr_end >= p->T || B->lr_start > B->time || B->lr_end < B->time) {
            blabel(p, b, lb, sizeof lb);
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.live_range: [%d, %d] must lie in [0, %d] and contain target_time %d", lb,
                           B->lr_start, B->lr_end, p->T - 1, B->time);
        }
        if (B->demand < 0) B->demand = (double)B->size * p->copy_ns_per_byte;
        if (!isfinite(B->demand)) {
            blabel(p, b, lb, sizeof lb);
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.demand: must be finite", lb);
        }
        const mm_instr *I = &p->ins[B->time];
        B->benefit0 = B->var_bit >= 0 ? I->lat[0] - I->lat[1u << B->var_bit] : 0;
    }
    /* dense tensor ids */
    idpair *ids = xcalloc((size_t)p->nbuf, sizeof(idpair));
    for (int32_t b = 0; b < p->nbuf; b++) ids[b] = (idpair){p->buf[b].user_tensor, b};
    qsort(ids, (size_t)p->nbuf, sizeof(idpair), cmp_idpair);
    int32_t nt = 0;
    for (int32_t i = 0; i < p->nbuf; i++) {
        if (i > 0 && ids[i].id != ids[i - 1].id) nt++;
        p->buf[ids[i].idx].tensor = nt;
    }
    p->ntensor = nt + 1;
    /* dense alias ids: unaliased buffers (user_alias < 0) get a group of their own */
    for (int32_t b = 0; b < p->nbuf; b++) ids[b] = (idpair){p->buf[b].user_alias, b};
    qsort(ids, (size_t)p->nbuf, sizeof(idpair), cmp_idpair);
    int32_t na = 0;
    for (int32_t i = 0; i < p->nbuf; i++) {
        if (ids[i].id < 0 || i == 0 || ids[i].id != ids[i - 1].id) na++;
        p->buf[ids[i].idx].alias = na - 1;
    }
    p->nalias = na;
    free(ids);
    p->gstart = xcalloc((size_t)na + 1, sizeof(int32_t));
    p->gmem = xcalloc((size_t)p->nbuf, sizeof(int32_t));
    for (int32_t b = 0; b < p->nbuf; b++) p->gstart[p->buf[b].alias + 1]++;
    for (int32_t a = 0; a < na; a++) p->gstart[a + 1] += p->gstart[a];
    int32_t *fill = xcalloc((size_t)na, sizeof(int32_t));
    p->max_group = 1;
    for (int32_t b = 0; b < p->nbuf; b++) {
        mm_buffer *B = &p->buf[b];
        int32_t a = B->alias;
        B->group_pos = fill[a];
        p->gmem[p->gstart[a] + fill[a]++] = b;
        int32_t first = p->gmem[p->gstart[a]];
        if (p->buf[first].size != B->size) {
            free(fill);
            blabel(p, b, lb, sizeof lb);
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.alias_id: buffers of alias group %lld must have one size (%lld vs %lld bytes)", lb,
                           (long long)B->user_alias, (long long)B->size, (long long)p->buf[first].size);
        }
        if (fill[a] > p->max_group) p->max_group = fill[a];
    }
    free(fill);
    if (p->max_group > MM_MAX_GROUP)
        return hw_fail(err, HW_E_BAD_CONFIG, "alias_id: an alias group has %d buffers (at most %d)", p->max_group, MM_MAX_GROUP);
    p->next_same_tensor = xcalloc((size_t)p->nbuf, sizeof(int32_t));
    int32_t *last = xcalloc((size_t)p->ntensor, sizeof(int32_t));
    for (int32_t i = 0; i < p->ntensor; i++) last[i] = -1;
    for (int32_t b = p->nbuf - 1; b >= 0; b--) {
        p->next_same_tensor[b] = last[p->buf[b].tensor];
        last[p->buf[b].tensor] = b;
    }
    free(last);
    p->lat_hbm = 0;
    for (int32_t t = 0; t < p->T; t++) p->lat_hbm += p->ins[t].lat[0];
    return 0;
}

/* ---------------- JSON ---------------- */
static int get_int(const json_t *o, const char *key, const char *where, int64_t lo, int64_t def, bool req, int64_t *out, hw_err *err) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (req) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: missing", where, key);
        *out = def;
        return 0;
    }
    double d = json_is_integer(v) ? (double)json_integer_value(v) : json_is_real(v) ? json_real_value(v) : NAN;
    if (!json_is_number(v) || d != floor(d) || d < (double)lo || d > 9.0e18)
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected an integer >= %lld", where, key, (long long)lo);
    *out = json_is_integer(v) ? json_integer_value(v) : (int64_t)d;
    return 0;
}

static int get_num(const json_t *o, const char *key, const char *where, double def, bool req, double *out, hw_err *err) {
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (req) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: missing", where, key);
        *out = def;
        return 0;
    }
    if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected a number", where, key);
    *out = json_number_value(v);
    if (!isfinite(*out) || *out < 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected a finite number >= 0", where, key);
    return 0;
}

static int check_keys(const json_t *o, const char *where, const char *const *keys, hw_err *err) {
    if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", where);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        (void)v;
        int ok = 0;
        for (int i = 0; keys[i]; i++) ok |= strcmp(keys[i], k) == 0;
        if (!ok) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: unknown field", where, k);
    }
    return 0;
}

typedef struct szidx { int64_t size; int32_t idx; } szidx;
static int cmp_sz(const void *a, const void *b) {
    const szidx *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->idx - y->idx;
}
static int cmp_i32(const void *a, const void *b) { return *(const int32_t *)a - *(const int32_t *)b; }

void mm_default_varying(mm_problem *p, int32_t t) {
    mm_instr *I = &p->ins[t];
    szidx tmp[512];
    int32_t n = I->nbuf < 512 ? I->nbuf : 512;
    for (int32_t j = 0; j < n; j++) tmp[j] = (szidx){p->buf[I->first + j].size, I->first + j};
    qsort(tmp, (size_t)n, sizeof(szidx), cmp_sz);
    I->nvar = n < MM_MAX_VAR ? n : MM_MAX_VAR;
    for (int32_t j = 0; j < I->nvar; j++) I->var_buf[j] = tmp[j].idx;
    qsort(I->var_buf, (size_t)I->nvar, sizeof(int32_t), cmp_i32);
}

mm_problem *mm_problem_from_json(const json_t *doc, hw_err *err) {
    static const char *const top_keys[] = {"format", "version", "name", "cmem", "prefetch_after_definition", "instructions", NULL};
    static const char *const cmem_keys[] = {"max_size", "granule", "copy_ns_per_byte", NULL};
    static const char *const ins_keys[] = {"name", "supply", "buffers", "varying", "latency", NULL};
    static const char *const buf_keys[] = {"size", "is_output", "tensor_id", "alias_id", "live_range", "demand", "benefit",
                                           "target_time", NULL};
    if (check_keys(doc, "problem", top_keys, err)) return NULL;
    json_t *fmt = json_object_get(doc, "format");
    if (fmt && (!json_is_string(fmt) || strcmp(json_string_value(fmt), "hwgym-mmap") != 0)) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.format: expected \"hwgym-mmap\"");
        return NULL;
    }
    json_t *ver = json_object_get(doc, "version");
    if (ver && (!json_is_integer(ver) || json_integer_value(ver) != 1)) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.version: only version 1 is supported");
        return NULL;
    }
    json_t *cm = json_object_get(doc, "cmem");
    if (!cm) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.cmem: missing");
        return NULL;
    }
    if (check_keys(cm, "cmem", cmem_keys, err)) return NULL;
    json_t *insj = json_object_get(doc, "instructions");
    if (!json_is_array(insj) || json_array_size(insj) == 0) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.instructions: expected a non-empty array");
        return NULL;
    }
    size_t T = json_array_size(insj), nb = 0;
    char where[96];
    for (size_t t = 0; t < T; t++) {
        json_t *I = json_array_get(insj, t);
        snprintf(where, sizeof where, "instructions[%zu]", t);
        if (check_keys(I, where, ins_keys, err)) return NULL;
        json_t *bs = json_object_get(I, "buffers");
        if (!json_is_array(bs)) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s.buffers: expected an array", where);
            return NULL;
        }
        nb += json_array_size(bs);
    }
    if (T > 10000000 || nb > 100000000 || nb == 0) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.instructions: %zu instructions with %zu buffers (need 1..1e7 and 1..1e8)", T, nb);
        return NULL;
    }
    mm_problem *p = mm_problem_alloc((int32_t)T, (int32_t)nb);
    json_t *nm = json_object_get(doc, "name");
    snprintf(p->name, sizeof p->name, "%s", json_is_string(nm) ? json_string_value(nm) : "unnamed");
    json_t *pf = json_object_get(doc, "prefetch_after_definition");
    if (pf && !json_is_boolean(pf)) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem.prefetch_after_definition: expected true or false");
        goto fail;
    }
    p->prefetch_after_def = pf ? json_is_true(pf) : true;
    int64_t v;
    if (get_int(cm, "max_size", "cmem", 1, 0, true, &p->max_size, err)) goto fail;
    if (get_int(cm, "granule", "cmem", 1, 0, true, &p->granule, err)) goto fail;
    if (get_num(cm, "copy_ns_per_byte", "cmem", 0, true, &p->copy_ns_per_byte, err)) goto fail;
    int32_t b = 0;
    for (size_t t = 0; t < T; t++) {
        json_t *Ij = json_array_get(insj, t);
        mm_instr *I = &p->ins[t];
        json_t *bs = json_object_get(Ij, "buffers");
        I->first = b;
        I->nbuf = (int32_t)json_array_size(bs);
        json_t *nmj = json_object_get(Ij, "name");
        if (json_is_string(nmj)) snprintf(I->name, sizeof I->name, "%s", json_string_value(nmj));
        snprintf(where, sizeof where, "instructions[%zu]", t);
        if (get_num(Ij, "supply", where, -1, false, &I->supply, err)) goto fail;
        for (size_t j = 0; j < json_array_size(bs); j++, b++) {
            json_t *Bj = json_array_get(bs, j);
            mm_buffer *B = &p->buf[b];
            snprintf(where, sizeof where, "instructions[%zu].buffers[%zu]", t, j);
            if (check_keys(Bj, where, buf_keys, err)) goto fail;
            if (get_int(Bj, "size", where, 1, 0, true, &B->size, err)) goto fail;
            json_t *io = json_object_get(Bj, "is_output");
            if (io && !json_is_boolean(io)) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s.is_output: expected true or false", where);
                goto fail;
            }
            B->is_output = io && json_is_true(io);
            if (get_int(Bj, "tensor_id", where, 0, 0, true, &B->user_tensor, err)) goto fail;
            if (get_int(Bj, "alias_id", where, 0, -1, false, &B->user_alias, err)) goto fail;
            if (get_int(Bj, "target_time", where, 0, (int64_t)t, false, &v, err)) goto fail;
            if (v != (int64_t)t) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s.target_time: %lld but the buffer belongs to instruction %zu", where, (long long)v, t);
                goto fail;
            }
            json_t *lr = json_object_get(Bj, "live_range");
            if (!lr) {
                B->lr_start = B->lr_end = (int32_t)t;
            } else if (!json_is_array(lr) || json_array_size(lr) != 2 || !json_is_integer(json_array_get(lr, 0)) ||
                       !json_is_integer(json_array_get(lr, 1))) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s.live_range: expected [start, end] integers", where);
                goto fail;
            } else {
                int64_t a = json_integer_value(json_array_get(lr, 0)), z = json_integer_value(json_array_get(lr, 1));
                if (a < 0 || z >= (int64_t)T || a > z) {
                    hw_fail(err, HW_E_BAD_CONFIG, "%s.live_range: [%lld, %lld] outside [0, %zu]", where, (long long)a, (long long)z, T - 1);
                    goto fail;
                }
                B->lr_start = (int32_t)a;
                B->lr_end = (int32_t)z;
            }
            if (get_num(Bj, "demand", where, -1, false, &B->demand, err)) goto fail;
        }
        snprintf(where, sizeof where, "instructions[%zu]", t);
        json_t *var = json_object_get(Ij, "varying");
        if (var) {
            if (!json_is_array(var) || json_array_size(var) > MM_MAX_VAR) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s.varying: expected an array of at most %d buffer indices", where, MM_MAX_VAR);
                goto fail;
            }
            I->nvar = (int32_t)json_array_size(var);
            for (int32_t k = 0; k < I->nvar; k++) {
                json_t *x = json_array_get(var, (size_t)k);
                if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= I->nbuf) {
                    hw_fail(err, HW_E_BAD_CONFIG, "%s.varying[%d]: expected a buffer index in [0, %d)", where, k, I->nbuf);
                    goto fail;
                }
                I->var_buf[k] = I->first + (int32_t)json_integer_value(x);
            }
        } else {
            mm_default_varying(p, (int32_t)t);
        }
        json_t *lat = json_object_get(Ij, "latency");
        size_t need = (size_t)1 << I->nvar;
        if (json_is_number(lat) && need == 1) {
            I->lat = xcalloc(1, sizeof(double));
            I->lat[0] = json_number_value(lat);
        } else if (!json_is_array(lat) || json_array_size(lat) != need) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s.latency: expected an array of 2^%d = %zu numbers (L_I(S), bit j = varying[j] in CMEM)", where,
                    I->nvar, need);
            goto fail;
        } else {
            I->lat = xcalloc(need, sizeof(double));
            for (size_t m = 0; m < need; m++) {
                json_t *x = json_array_get(lat, m);
                if (!json_is_number(x)) {
                    hw_fail(err, HW_E_BAD_CONFIG, "%s.latency[%zu]: expected a number", where, m);
                    goto fail;
                }
                I->lat[m] = json_number_value(x);
            }
        }
    }
    if (mm_problem_finalize(p, err)) goto fail;
    return p;
fail:
    mm_problem_free(p);
    return NULL;
}

json_t *mm_problem_to_json(const mm_problem *p) {
    json_t *d = json_object();
    json_object_set_new(d, "format", json_string("hwgym-mmap"));
    json_object_set_new(d, "version", json_integer(1));
    json_object_set_new(d, "name", json_string(p->name));
    json_object_set_new(d, "cmem", json_pack("{s:I,s:I,s:f}", "max_size", (json_int_t)p->max_size, "granule", (json_int_t)p->granule,
                                             "copy_ns_per_byte", p->copy_ns_per_byte));
    json_object_set_new(d, "prefetch_after_definition", json_boolean(p->prefetch_after_def));
    json_t *ia = json_array();
    for (int32_t t = 0; t < p->T; t++) {
        const mm_instr *I = &p->ins[t];
        json_t *ij = json_object();
        if (I->name[0]) json_object_set_new(ij, "name", json_string(I->name));
        json_object_set_new(ij, "supply", json_real(I->supply));
        json_t *ba = json_array();
        for (int32_t j = 0; j < I->nbuf; j++) {
            const mm_buffer *B = &p->buf[I->first + j];
            json_t *bj = json_pack("{s:I,s:b,s:I,s:[i,i],s:f}", "size", (json_int_t)B->size, "is_output", B->is_output, "tensor_id",
                                   (json_int_t)B->user_tensor, "live_range", B->lr_start, B->lr_end, "demand", B->demand);
            if (B->user_alias >= 0) json_object_set_new(bj, "alias_id", json_integer(B->user_alias));
            json_array_append_new(ba, bj);
        }
        json_object_set_new(ij, "buffers", ba);
        json_t *va = json_array();
        for (int32_t k = 0; k < I->nvar; k++) json_array_append_new(va, json_integer(I->var_buf[k] - I->first));
        json_object_set_new(ij, "varying", va);
        json_t *la = json_array();
        for (int32_t m = 0; m < (1 << I->nvar); m++) json_array_append_new(la, json_real(I->lat[m]));
        json_object_set_new(ij, "latency", la);
        json_array_append_new(ia, ij);
    }
    json_object_set_new(d, "instructions", ia);
    return d;
}

/* ---------------- msgpack ---------------- */
static json_t *mp_to_json(const msgpack_object *o, int depth, hw_err *err) {
    if (depth > 64) {
        hw_fail(err, HW_E_BAD_CONFIG, "problem: nesting too deep");
        return NULL;
    }
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return json_null();
    case MSGPACK_OBJECT_BOOLEAN: return json_boolean(o->via.boolean);
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return json_integer((json_int_t)o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer((json_int_t)o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return json_real(o->via.f64);
    case MSGPACK_OBJECT_STR: return json_stringn(o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            json_t *x = mp_to_json(&o->via.array.ptr[i], depth + 1, err);
            if (!x) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, x);
        }
        return a;
    }
    case MSGPACK_OBJECT_MAP: {
        json_t *m = json_object();
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object_kv *kv = &o->via.map.ptr[i];
            if (kv->key.type != MSGPACK_OBJECT_STR) {
                json_decref(m);
                hw_fail(err, HW_E_BAD_CONFIG, "problem: map keys must be strings");
                return NULL;
            }
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(kv->key.via.str.size < 127 ? kv->key.via.str.size : 127), kv->key.via.str.ptr);
            json_t *x = mp_to_json(&kv->val, depth + 1, err);
            if (!x) {
                json_decref(m);
                return NULL;
            }
            json_object_set_new(m, key, x);
        }
        return m;
    }
    default: hw_fail(err, HW_E_BAD_CONFIG, "problem: unsupported msgpack type %d", (int)o->type); return NULL;
    }
}

json_t *mm_msgpack_to_json(const char *data, size_t len, hw_err *err) {
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    json_t *j = NULL;
    if (msgpack_unpack_next(&up, data, len, &off) != MSGPACK_UNPACK_SUCCESS)
        hw_fail(err, HW_E_BAD_CONFIG, "problem: not a valid msgpack document");
    else
        j = mp_to_json(&up.data, 0, err);
    msgpack_unpacked_destroy(&up);
    return j;
}

char *mm_json_to_msgpack(const json_t *doc, size_t *len) {
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    hw_pack_json(&pk, doc); /* the protocol's JSON-to-msgpack packer (hw_codec.h) */
    *len = sb.size;
    char *out = malloc(sb.size ? sb.size : 1);
    if (!out) abort();
    memcpy(out, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return out;
}

static bool is_msgpack_path(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot && (strcmp(dot, ".msgpack") == 0 || strcmp(dot, ".mpk") == 0);
}

bool mm_problem_is_msgpack_path(const char *path) { return is_msgpack_path(path); }

bool mm_problem_is_path(const char *s) {
    return strchr(s, '/') || strstr(s, ".json") || strstr(s, ".msgpack") || strstr(s, ".mpk");
}

mm_problem *mm_problem_parse(const char *data, size_t n, bool msgpack, hw_err *err) {
    json_t *doc;
    if (msgpack) {
        doc = mm_msgpack_to_json(data, n, err);
    } else {
        json_error_t je;
        doc = json_loadb(data, n, 0, &je);
        if (!doc) hw_fail(err, HW_E_BAD_CONFIG, "line %d, column %d: %s", je.line, je.column, je.text);
    }
    if (!doc) return NULL;
    mm_problem *p = mm_problem_from_json(doc, err);
    json_decref(doc);
    return p;
}

mm_problem *mm_problem_load(const char *path, hw_err *err) {
    size_t n = 0;
    char *data = hw_files_read(&hw_files_local, path, path, &n, err); /* local tools; the env reads via its ctx */
    if (!data) {
        if (err) err->code = HW_E_IO; /* a local file error (IO is the client-side code) */
        return NULL;
    }
    mm_problem *p = mm_problem_parse(data, n, is_msgpack_path(path), err);
    free(data);
    if (!p && strncmp(err ? err->msg : "", path, strlen(path)) != 0) hw_err_prefix(err, path);
    return p;
}

int mm_problem_save(const mm_problem *p, const char *path, hw_err *err) {
    json_t *doc = mm_problem_to_json(p);
    int rc = 0;
    if (is_msgpack_path(path)) {
        size_t n;
        char *data = mm_json_to_msgpack(doc, &n);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, n, f) != n) rc = hw_fail(err, HW_E_IO, "%s: cannot write", path);
        if (f) fclose(f);
        free(data);
    } else if (json_dump_file(doc, path, JSON_COMPACT) != 0) {
        rc = hw_fail(err, HW_E_IO, "%s: cannot write", path);
    }
    json_decref(doc);
    return rc;
}
