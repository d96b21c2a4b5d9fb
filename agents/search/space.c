/* space.c - hs_space: the search view of an action space (see search.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

hs_space *hs_space_from_hw(const hw_space *s, hw_err *err) {
    if (!s) return hw_fail(err, HW_E_BAD_STATE, "no action space"), NULL;
    if (s->type == HW_SPACE_DICT) return hw_fail(err, HW_E_NOT_SUPPORTED, "action space: Dict spaces are not supported by hwgym-search"), NULL;
    int64_t n = hw_space_numel(s);
    if (n <= 0 || n > 100000) return hw_fail(err, HW_E_NOT_SUPPORTED, "action space: %lld elements", (long long)n), NULL;
    hs_space *h = xcalloc(1, sizeof *h);
    h->dim = (int)n;
    h->card = xcalloc((size_t)n, sizeof *h->card);
    h->low = xcalloc((size_t)n, sizeof(double));
    h->high = xcalloc((size_t)n, sizeof(double));
    h->names = xcalloc((size_t)n, sizeof(char *));
    h->labels = xcalloc((size_t)n, sizeof(char **));
    h->scalar = s->type == HW_SPACE_DISCRETE;
    for (int64_t i = 0; i < n; i++) {
        if (hw_space_is_integer(s)) {
            h->card[i] = hw_space_choices(s, i);
            h->low[i] = 0;
            h->high[i] = (double)(h->card[i] - 1);
            if (h->card[i] < 1) {
                hs_space_free(h);
                return hw_fail(err, HW_E_NOT_SUPPORTED, "action space: element %lld has no choices", (long long)i), NULL;
            }
            if (s->labels && s->labels[i]) {
                h->labels[i] = xcalloc((size_t)h->card[i], sizeof(char *));
                for (int64_t k = 0; k < h->card[i]; k++) h->labels[i][k] = strdup(s->labels[i][k] ? s->labels[i][k] : "");
            }
        } else {
            h->card[i] = 0;
            h->low[i] = s->low[i];
            h->high[i] = s->high[i];
            if (!isfinite(h->low[i]) || !isfinite(h->high[i])) {
                hs_space_free(h);
                return hw_fail(err, HW_E_NOT_SUPPORTED, "action space: Box element %lld is unbounded", (long long)i), NULL;
            }
        }
        if (s->names && s->names[i]) h->names[i] = strdup(s->names[i]);
        else {
            char nm[32];
            snprintf(nm, sizeof nm, "p%lld", (long long)i);
            h->names[i] = strdup(nm);
        }
    }
    return h;
}

hs_space *hs_space_from_json(const json_t *j, hw_err *err) {
    hw_space *s = hw_space_from_json(j, err);
    if (!s) return NULL;
    hs_space *h = hs_space_from_hw(s, err);
    hw_space_free(s);
    return h;
}

void hs_space_free(hs_space *s) {
    if (!s) return;
    for (int i = 0; i < s->dim; i++) {
        free(s->names[i]);
        if (s->labels[i]) {
            for (int64_t k = 0; k < s->card[i]; k++) free(s->labels[i][k]);
            free(s->labels[i]);
        }
    }
    free(s->names);
    free(s->labels);
    free(s->card);
    free(s->low);
    free(s->high);
    if (s->enc_free) s->enc_free(s->enc);
    free(s);
}

void hs_encode(const hs_space *s, const double *x, double *u) {
    for (int i = 0; i < s->dim; i++) {
        double span = s->high[i] - s->low[i];
        u[i] = span > 0 ? (x[i] - s->low[i]) / span : 0.5;
    }
}

void hs_decode(const hs_space *s, const double *u, double *x) {
    for (int i = 0; i < s->dim; i++) {
        double v = u[i];
        if (!(v >= 0)) v = 0; /* also NaN */
        if (v > 1) v = 1;
        double span = s->high[i] - s->low[i];
        if (s->card[i]) {
            double k = floor(v * span + 0.5);
            if (k > span) k = span;
            x[i] = k;
        } else {
            x[i] = s->low[i] + v * span;
        }
    }
}

static json_t *elem_json(const hs_space *s, int i, double v) {
    return s->card[i] ? json_integer((json_int_t)v) : json_real(v);
}

json_t *hs_point_json(const hs_space *s, const double *x) {
    if (s->encode) return s->encode(s, x);
    json_t *a = json_array();
    for (int i = 0; i < s->dim; i++) json_array_append_new(a, elem_json(s, i, x[i]));
    return a;
}

json_t *hs_point_decoded(const hs_space *s, const double *x) {
    json_t *o = json_object();
    for (int i = 0; i < s->dim; i++) {
        json_t *v;
        if (s->card[i] && s->labels[i]) v = json_string(s->labels[i][(int64_t)x[i]]);
        else v = elem_json(s, i, x[i]);
        json_object_set_new(o, s->names[i], v);
    }
    return o;
}
