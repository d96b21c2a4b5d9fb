/* hw_space.c - see hw_space.h */
#include "hw_space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {"Discrete", "MultiDiscrete", "Box", "MultiBinary", "Dict"};

const char *hw_space_type_name(hw_space_type t) { return (unsigned)t <= HW_SPACE_DICT ? type_names[t] : "?"; }

static hw_space *space_new(hw_space_type t) {
    hw_space *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->type = t;
    s->dtype = HW_DT_INT64;
    return s;
}

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

static char *xstrdup(const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) abort();
    return d;
}

hw_space *hw_space_discrete(int64_t n) {
    hw_space *s = space_new(HW_SPACE_DISCRETE);
    s->n = n;
    return s;
}

hw_space *hw_space_multidiscrete(int64_t len, const int64_t *nvec) {
    hw_space *s = space_new(HW_SPACE_MULTIDISCRETE);
    s->ndim = 1;
    s->shape[0] = len;
    s->nvec = xcalloc((size_t)len, sizeof *s->nvec);
    memcpy(s->nvec, nvec, (size_t)len * sizeof *nvec);
    return s;
}

hw_space *hw_space_box(int ndim, const int64_t *shape, const double *low, const double *high, hw_dtype dt) {
    hw_space *s = space_new(HW_SPACE_BOX);
    s->ndim = ndim;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        s->shape[d] = shape[d];
        n *= shape[d];
    }
    s->dtype = dt;
    s->low = xcalloc((size_t)n, sizeof(double));
    s->high = xcalloc((size_t)n, sizeof(double));
    memcpy(s->low, low, (size_t)n * sizeof(double));
    memcpy(s->high, high, (size_t)n * sizeof(double));
    return s;
}

hw_space *hw_space_box_uniform(int ndim, const int64_t *shape, double low, double high, hw_dtype dt) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    double *lo = xcalloc((size_t)n, sizeof(double)), *hi = xcalloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        lo[i] = low;
        hi[i] = high;
    }
    hw_space *s = hw_space_box(ndim, shape, lo, hi, dt);
    free(lo);
    free(hi);
    return s;
}

hw_space *hw_space_multibinary(int64_t n) {
    hw_space *s = space_new(HW_SPACE_MULTIBINARY);
    s->n = n;
    s->ndim = 1;
    s->shape[0] = n;
    return s;
}

hw_space *hw_space_dict(void) { return space_new(HW_SPACE_DICT); }

int hw_space_dict_add(hw_space *d, const char *key, hw_space *child) {
    int pos = 0;
    while (pos < d->nchild && strcmp(d->keys[pos], key) < 0) pos++;
    if (pos < d->nchild && strcmp(d->keys[pos], key) == 0) return -1;
    d->keys = realloc(d->keys, (size_t)(d->nchild + 1) * sizeof *d->keys);
    d->child = realloc(d->child, (size_t)(d->nchild + 1) * sizeof *d->child);
    if (!d->keys || !d->child) abort();
    memmove(d->keys + pos + 1, d->keys + pos, (size_t)(d->nchild - pos) * sizeof *d->keys);
    memmove(d->child + pos + 1, d->child + pos, (size_t)(d->nchild - pos) * sizeof *d->child);
    d->keys[pos] = xstrdup(key);
    d->child[pos] = child;
    d->nchild++;
    return 0;
}

int64_t hw_space_numel(const hw_space *s) {
    switch (s->type) {
    case HW_SPACE_DISCRETE: return 1;
    case HW_SPACE_MULTIBINARY: return s->n;
    case HW_SPACE_DICT: {
        int64_t n = 0;
        for (int i = 0; i < s->nchild; i++) n += hw_space_numel(s->child[i]);
        return n;
    }
    default: {
        int64_t n = 1;
        for (int d = 0; d < s->ndim; d++) n *= s->shape[d];
        return n;
    }
    }
}

bool hw_space_is_integer(const hw_space *s) {
    return s->type == HW_SPACE_DISCRETE || s->type == HW_SPACE_MULTIDISCRETE || s->type == HW_SPACE_MULTIBINARY;
}

int64_t hw_space_choices(const hw_space *s, int64_t i) {
    switch (s->type) {
    case HW_SPACE_DISCRETE: return s->n;
    case HW_SPACE_MULTIDISCRETE: return s->nvec[i];
    case HW_SPACE_MULTIBINARY: return 2;
    default: return 0;
    }
}

void hw_space_set_name(hw_space *s, int64_t i, const char *name) {
    int64_t n = hw_space_numel(s);
    if (i < 0 || i >= n) return;
    if (!s->names) s->names = xcalloc((size_t)n, sizeof *s->names);
    free(s->names[i]);
    s->names[i] = xstrdup(name);
}

void hw_space_set_labels(hw_space *s, int64_t i, int count, const char *const *labels) {
    int64_t n = hw_space_numel(s);
    if (i < 0 || i >= n || !hw_space_is_integer(s) || count != hw_space_choices(s, i)) return;
    if (!s->labels) s->labels = xcalloc((size_t)n, sizeof *s->labels);
    if (s->labels[i]) {
        for (int k = 0; s->labels[i][k]; k++) free(s->labels[i][k]);
        free(s->labels[i]);
    }
    s->labels[i] = xcalloc((size_t)count + 1, sizeof(char *));
    for (int k = 0; k < count; k++) s->labels[i][k] = xstrdup(labels[k]);
}

void hw_space_free(hw_space *s) {
    if (!s) return;
    int64_t n = s->type == HW_SPACE_DICT ? 0 : hw_space_numel(s);
    if (s->names) {
        for (int64_t i = 0; i < n; i++) free(s->names[i]);
        free(s->names);
    }
    if (s->labels) {
        for (int64_t i = 0; i < n; i++) {
            if (!s->labels[i]) continue;
            for (int k = 0; s->labels[i][k]; k++) free(s->labels[i][k]);
            free(s->labels[i]);
        }
        free(s->labels);
    }
    for (int i = 0; i < s->nchild; i++) {
        free(s->keys[i]);
        hw_space_free(s->child[i]);
    }
    free(s->keys);
    free(s->child);
    free(s->nvec);
    free(s->low);
    free(s->high);
    free(s);
}

static void copy_meta(hw_space *d, const hw_space *s, int64_t di, int64_t si) {
    if (s->names && s->names[si]) hw_space_set_name(d, di, s->names[si]);
    if (s->labels && s->labels[si]) {
        int c = 0;
        while (s->labels[si][c]) c++;
        hw_space_set_labels(d, di, c, (const char *const *)s->labels[si]);
    }
}

hw_space *hw_space_clone(const hw_space *s) {
    hw_space *c = NULL;
    switch (s->type) {
    case HW_SPACE_DISCRETE: c = hw_space_discrete(s->n); c->start = s->start; break;
    case HW_SPACE_MULTIDISCRETE: c = hw_space_multidiscrete(s->shape[0], s->nvec); break;
    case HW_SPACE_BOX: c = hw_space_box(s->ndim, s->shape, s->low, s->high, s->dtype); break;
    case HW_SPACE_MULTIBINARY: c = hw_space_multibinary(s->n); break;
    case HW_SPACE_DICT:
        c = hw_space_dict();
        for (int i = 0; i < s->nchild; i++) hw_space_dict_add(c, s->keys[i], hw_space_clone(s->child[i]));
        return c;
    }
    int64_t n = hw_space_numel(s);
    for (int64_t i = 0; i < n; i++) copy_meta(c, s, i, i);
    return c;
}

hw_space *hw_space_select(const hw_space *s, int ndims, const int *dims) {
    int64_t *nvec = xcalloc((size_t)ndims, sizeof *nvec);
    for (int k = 0; k < ndims; k++) nvec[k] = hw_space_choices(s, dims[k]);
    hw_space *c = hw_space_multidiscrete(ndims, nvec);
    free(nvec);
    for (int k = 0; k < ndims; k++) copy_meta(c, s, k, dims[k]);
    return c;
}

/* ---- JSON ---- */

static json_t *shape_json(int ndim, const int64_t *shape) {
    json_t *a = json_array();
    for (int d = 0; d < ndim; d++) json_array_append_new(a, json_integer(shape[d]));
    return a;
}

static json_t *num_json(double v) {
    /* JSON has no inf: clients read +-1e308 as the float's limit. */
    if (isinf(v)) return json_real(v > 0 ? 1.7976931348623157e308 : -1.7976931348623157e308);
    if (v == floor(v) && fabs(v) < 9e15) return json_integer((json_int_t)v);
    return json_real(v);
}

static void meta_json(json_t *o, const hw_space *s) {
    int64_t n = hw_space_numel(s);
    if (s->names) {
        if (s->type == HW_SPACE_DISCRETE) {
            if (s->names[0]) json_object_set_new(o, "name", json_string(s->names[0]));
        } else {
            json_t *a = json_array();
            for (int64_t i = 0; i < n; i++)
                json_array_append_new(a, s->names[i] ? json_string(s->names[i]) : json_null());
            json_object_set_new(o, "names", a);
        }
    }
    if (s->labels) {
        json_t *all = json_array();
        for (int64_t i = 0; i < n; i++) {
            if (!s->labels[i]) {
                json_array_append_new(all, json_null());
                continue;
            }
            json_t *a = json_array();
            for (int k = 0; s->labels[i][k]; k++) json_array_append_new(a, json_string(s->labels[i][k]));
            json_array_append_new(all, a);
        }
        if (s->type == HW_SPACE_DISCRETE) {
            json_object_set(o, "labels", json_array_get(all, 0));
            json_decref(all);
        } else {
            json_object_set_new(o, "labels", all);
        }
    }
}

json_t *hw_space_to_json(const hw_space *s) {
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(type_names[s->type]));
    switch (s->type) {
    case HW_SPACE_DISCRETE:
        json_object_set_new(o, "n", json_integer(s->n));
        json_object_set_new(o, "start", json_integer(s->start));
        break;
    case HW_SPACE_MULTIDISCRETE: {
        json_t *a = json_array();
        for (int64_t i = 0; i < s->shape[0]; i++) json_array_append_new(a, json_integer(s->nvec[i]));
        json_object_set_new(o, "nvec", a);
        break;
    }
    case HW_SPACE_BOX: {
        int64_t n = hw_space_numel(s);
        json_object_set_new(o, "shape", shape_json(s->ndim, s->shape));
        json_object_set_new(o, "dtype", json_string(hw_dtype_name(s->dtype)));
        json_t *lo = json_array(), *hi = json_array();
        for (int64_t i = 0; i < n; i++) {
            json_array_append_new(lo, num_json(s->low[i]));
            json_array_append_new(hi, num_json(s->high[i]));
        }
        json_object_set_new(o, "low", lo);
        json_object_set_new(o, "high", hi);
        break;
    }
    case HW_SPACE_MULTIBINARY: json_object_set_new(o, "n", json_integer(s->n)); break;
    case HW_SPACE_DICT: {
        json_t *sp = json_object();
        for (int i = 0; i < s->nchild; i++) json_object_set_new(sp, s->keys[i], hw_space_to_json(s->child[i]));
        json_object_set_new(o, "spaces", sp);
        break;
    }
    }
    if (s->type != HW_SPACE_DICT) meta_json(o, s);
    return o;
}

static int get_int(const json_t *o, const char *k, int64_t lo, int64_t hi, int64_t *out, hw_err *err) {
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v)) return hw_fail(err, HW_E_BAD_REQUEST, "space.%s: expected an integer", k);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return hw_fail(err, HW_E_BAD_REQUEST, "space.%s: %lld out of [%lld, %lld]", k, (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

#define SPACE_MAX_ELEMS (1 << 24)

static int meta_from_json(hw_space *s, const json_t *j, hw_err *err) {
    int64_t n = hw_space_numel(s);
    json_t *nm = json_object_get(j, "name");
    if (s->type == HW_SPACE_DISCRETE && json_is_string(nm)) hw_space_set_name(s, 0, json_string_value(nm));
    json_t *names = json_object_get(j, "names");
    if (json_is_array(names)) {
        if ((int64_t)json_array_size(names) != n) return hw_fail(err, HW_E_BAD_REQUEST, "space.names: length %zu, expected %lld", json_array_size(names), (long long)n);
        for (int64_t i = 0; i < n; i++) {
            json_t *x = json_array_get(names, (size_t)i);
            if (json_is_string(x)) hw_space_set_name(s, i, json_string_value(x));
        }
    }
    json_t *labels = json_object_get(j, "labels");
    if (json_is_array(labels) && hw_space_is_integer(s)) {
        if (s->type == HW_SPACE_DISCRETE) {
            json_t *wrap = json_array();
            json_array_append(wrap, labels);
            labels = wrap;
        } else {
            json_incref(labels);
        }
        int rc = 0;
        if ((int64_t)json_array_size(labels) != n) rc = hw_fail(err, HW_E_BAD_REQUEST, "space.labels: length %zu, expected %lld", json_array_size(labels), (long long)n);
        for (int64_t i = 0; !rc && i < n; i++) {
            json_t *l = json_array_get(labels, (size_t)i);
            if (!json_is_array(l)) continue;
            size_t c = json_array_size(l);
            if ((int64_t)c != hw_space_choices(s, i)) {
                rc = hw_fail(err, HW_E_BAD_REQUEST, "space.labels[%lld]: %zu labels for %lld choices", (long long)i, c, (long long)hw_space_choices(s, i));
                break;
            }
            const char **tmp = xcalloc(c, sizeof *tmp);
            for (size_t k = 0; k < c; k++) tmp[k] = json_is_string(json_array_get(l, k)) ? json_string_value(json_array_get(l, k)) : "";
            hw_space_set_labels(s, i, (int)c, tmp);
            free(tmp);
        }
        json_decref(labels);
        return rc;
    }
    return 0;
}

hw_space *hw_space_from_json(const json_t *j, hw_err *err) {
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_REQUEST, "space: expected an object"), NULL;
    const char *t = json_string_value(json_object_get(j, "type"));
    if (!t) return hw_fail(err, HW_E_BAD_REQUEST, "space.type: missing"), NULL;
    hw_space *s = NULL;
    int64_t n;
    if (!strcmp(t, "Discrete")) {
        if (get_int(j, "n", 1, INT64_MAX, &n, err)) return NULL;
        s = hw_space_discrete(n);
        json_t *st = json_object_get(j, "start");
        if (json_is_integer(st)) s->start = json_integer_value(st);
    } else if (!strcmp(t, "MultiDiscrete")) {
        json_t *nv = json_object_get(j, "nvec");
        if (!json_is_array(nv) || json_array_size(nv) == 0 || json_array_size(nv) > SPACE_MAX_ELEMS)
            return hw_fail(err, HW_E_BAD_REQUEST, "space.nvec: expected a non-empty array"), NULL;
        size_t len = json_array_size(nv);
        int64_t *v = xcalloc(len, sizeof *v);
        for (size_t i = 0; i < len; i++) {
            json_t *x = json_array_get(nv, i);
            if (!json_is_integer(x) || json_integer_value(x) < 1) {
                free(v);
                return hw_fail(err, HW_E_BAD_REQUEST, "space.nvec[%zu]: expected a positive integer", i), NULL;
            }
            v[i] = json_integer_value(x);
        }
        s = hw_space_multidiscrete((int64_t)len, v);
        free(v);
    } else if (!strcmp(t, "Box")) {
        json_t *sh = json_object_get(j, "shape");
        if (!json_is_array(sh) || json_array_size(sh) > HW_MAX_DIMS) return hw_fail(err, HW_E_BAD_REQUEST, "space.shape: expected at most %d dims", HW_MAX_DIMS), NULL;
        int64_t shape[HW_MAX_DIMS];
        int64_t numel = 1;
        int nd = (int)json_array_size(sh);
        for (int d = 0; d < nd; d++) {
            json_t *x = json_array_get(sh, (size_t)d);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > SPACE_MAX_ELEMS)
                return hw_fail(err, HW_E_BAD_REQUEST, "space.shape[%d]: bad extent", d), NULL;
            shape[d] = json_integer_value(x);
            numel *= shape[d];
            if (numel > SPACE_MAX_ELEMS) return hw_fail(err, HW_E_BAD_REQUEST, "space.shape: too many elements"), NULL;
        }
        int dt = hw_dtype_from_name(json_string_value(json_object_get(j, "dtype")));
        if (dt < 0) dt = HW_DT_FLOAT32;
        json_t *lo = json_object_get(j, "low"), *hi = json_object_get(j, "high");
        if (!json_is_array(lo) || !json_is_array(hi) || (int64_t)json_array_size(lo) != numel || (int64_t)json_array_size(hi) != numel)
            return hw_fail(err, HW_E_BAD_REQUEST, "space.low/high: expected %lld numbers each", (long long)numel), NULL;
        s = hw_space_box_uniform(nd, shape, 0, 0, (hw_dtype)dt);
        for (int64_t i = 0; i < numel; i++) {
            s->low[i] = json_number_value(json_array_get(lo, (size_t)i));
            s->high[i] = json_number_value(json_array_get(hi, (size_t)i));
        }
    } else if (!strcmp(t, "MultiBinary")) {
        if (get_int(j, "n", 1, SPACE_MAX_ELEMS, &n, err)) return NULL;
        s = hw_space_multibinary(n);
    } else if (!strcmp(t, "Dict")) {
        json_t *sp = json_object_get(j, "spaces");
        if (!json_is_object(sp)) return hw_fail(err, HW_E_BAD_REQUEST, "space.spaces: expected an object"), NULL;
        s = hw_space_dict();
        const char *k;
        json_t *v;
        json_object_foreach(sp, k, v) {
            hw_space *c = hw_space_from_json(v, err);
            if (!c) {
                hw_err_prefix(err, k);
                hw_space_free(s);
                return NULL;
            }
            hw_space_dict_add(s, k, c);
        }
        return s;
    } else {
        return hw_fail(err, HW_E_BAD_REQUEST, "space.type: unknown type '%s'", t), NULL;
    }
    if (meta_from_json(s, j, err)) {
        hw_space_free(s);
        return NULL;
    }
    return s;
}

/* ---- action validation ---- */

/* check_one's common case, an int64 action for an integer space, without a per-element dtype
 * switch: true when every element is in range (ib filled); false sends the caller to the general
 * check, which names the first bad element */
static bool ints_in_range(const hw_space *s, const hw_array *a, int64_t off, int64_t n, int64_t *ib) {
    if (!ib || a->dtype != HW_DT_INT64 || !hw_space_is_integer(s)) return false;
    /* the elements copied first (bin data in the request is not aligned), then checked with no
     * branch per element (a loop the compiler may vectorise); for Discrete and MultiBinary an
     * element below lo wraps to a huge unsigned offset */
    if (n > 0) memcpy(ib, (const char *)a->data + 8 * off, 8 * (size_t)n);
    uint64_t bad = 0;
    if (s->type == HW_SPACE_MULTIDISCRETE) {
        const int64_t *nv = s->nvec;
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) /* four at a time: fewer loop steps for long actions (placement-v0) */
            bad |= (uint64_t)((ib[i] < 0) | (ib[i] >= nv[i]) | (ib[i + 1] < 0) | (ib[i + 1] >= nv[i + 1]) | (ib[i + 2] < 0) |
                              (ib[i + 2] >= nv[i + 2]) | (ib[i + 3] < 0) | (ib[i + 3] >= nv[i + 3]));
        for (; i < n; i++) bad |= (uint64_t)((ib[i] < 0) | (ib[i] >= nv[i]));
        return !bad;
    }
    int64_t lo = s->type == HW_SPACE_DISCRETE ? s->start : 0, c = s->type == HW_SPACE_DISCRETE ? s->n : 2;
    if (c < 1) return false; /* no value fits: the general check says so */
    uint64_t span = (uint64_t)c - 1;
    for (int64_t i = 0; i < n; i++) bad |= (uint64_t)ib[i] - (uint64_t)lo > span;
    return !bad;
}

static int check_one(const hw_space *s, const hw_array *a, int64_t off, int64_t k, int64_t *ib, double *fb, hw_err *err) {
    int64_t n = hw_space_numel(s);
    if (ints_in_range(s, a, off, n, ib)) return 0;
    const char *pfx = k >= 0 ? "action[" : "";
    char where[48] = "";
    if (k >= 0) snprintf(where, sizeof where, "%s%lld]", pfx, (long long)k);
    for (int64_t i = 0; i < n; i++) {
        int64_t src = off + i;
        const char *nm = s->names && s->names[i] ? s->names[i] : NULL;
        if (hw_space_is_integer(s)) {
            if (a->dtype == HW_DT_FLOAT32 || a->dtype == HW_DT_FLOAT64) {
                double v = hw_array_get_f64(a, src);
                if (v != floor(v) || !isfinite(v))
                    return hw_fail(err, HW_E_BAD_ACTION, "action%s element %lld%s%s%s: %g is not an integer", where, (long long)i,
                                   nm ? " (" : "", nm ? nm : "", nm ? ")" : "", v);
            }
            int64_t v = hw_array_get_i64(a, src);
            int64_t lo = s->type == HW_SPACE_DISCRETE ? s->start : 0;
            int64_t hi = lo + hw_space_choices(s, i) - 1;
            if (v < lo || v > hi)
                return hw_fail(err, HW_E_BAD_ACTION, "action%s element %lld%s%s%s: %lld out of range [%lld, %lld]", where, (long long)i,
                               nm ? " (" : "", nm ? nm : "", nm ? ")" : "", (long long)v, (long long)lo, (long long)hi);
            ib[i] = v;
        } else {
            double v = hw_array_get_f64(a, src);
            if (!isfinite(v) || v < s->low[i] || v > s->high[i])
                return hw_fail(err, HW_E_BAD_ACTION, "action%s element %lld%s%s%s: %g out of range [%g, %g]", where, (long long)i,
                               nm ? " (" : "", nm ? nm : "", nm ? ")" : "", v, s->low[i], s->high[i]);
            fb[i] = v;
        }
    }
    return 0;
}

static int check_shape(const hw_space *s, const hw_array *a, int lead, int64_t count, hw_err *err) {
    if (s->type == HW_SPACE_DICT) return hw_fail(err, HW_E_NOT_SUPPORTED, "Dict action spaces are not supported");
    if (a->dtype >= HW_DT_COUNT) return hw_fail(err, HW_E_BAD_ACTION, "action: bad dtype");
    if (a->dtype == HW_DT_BOOL && s->type != HW_SPACE_MULTIBINARY && s->type != HW_SPACE_DISCRETE)
        return hw_fail(err, HW_E_BAD_ACTION, "action: dtype bool does not fit a %s space", type_names[s->type]);
    int64_t n = hw_space_numel(s);
    int64_t got = hw_array_numel(a);
    if (got != n * count)
        return hw_fail(err, HW_E_BAD_ACTION, "action: %lld elements, expected %lld (%s space of %lld%s)", (long long)got,
                       (long long)(n * count), type_names[s->type], (long long)n, lead ? " per env" : "");
    if (lead && (a->ndim < 1 || a->shape[0] != count))
        return hw_fail(err, HW_E_BAD_ACTION, "action: leading axis must be num_envs=%lld", (long long)count);
    return 0;
}

int hw_space_check_action(const hw_space *s, const hw_array *a, int64_t *ibuf, double *fbuf, hw_act *out, hw_err *err) {
    /* the common case, all that check_shape and check_one would find of it: an int64 action of an
     * integer space, of its element count, every element in range */
    if (a->dtype == HW_DT_INT64 && hw_space_is_integer(s)) {
        int64_t n = hw_space_numel(s);
        if (hw_array_numel(a) == n && ints_in_range(s, a, 0, n, ibuf)) {
            out->n = (size_t)n;
            out->i = ibuf;
            out->f = NULL;
            return 0;
        }
    }
    if (check_shape(s, a, 0, 1, err)) return -1;
    if (check_one(s, a, 0, -1, ibuf, fbuf, err)) return -1;
    out->n = (size_t)hw_space_numel(s);
    out->i = hw_space_is_integer(s) ? ibuf : NULL;
    out->f = hw_space_is_integer(s) ? NULL : fbuf;
    return 0;
}

int hw_space_check_actions(const hw_space *s, const hw_array *a, int64_t count, int64_t *ibuf, double *fbuf, hw_err *err) {
    if (check_shape(s, a, 1, count, err)) return -1;
    int64_t n = hw_space_numel(s);
    for (int64_t k = 0; k < count; k++)
        if (check_one(s, a, k * n, k, ibuf ? ibuf + k * n : NULL, fbuf ? fbuf + k * n : NULL, err)) return -1;
    return 0;
}
