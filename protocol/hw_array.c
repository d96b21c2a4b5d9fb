/* hw_array.c - see hw_array.h */
#include "hw_array.h"

#include <string.h>

/* each name with its NUL fits 8 bytes: hw_dtype_from_name compares them as words */
static const char dt_names[HW_DT_COUNT][8] = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"};
static const size_t dt_sizes[HW_DT_COUNT] = {4, 8, 1, 2, 4, 8, 1, 1};

const char *hw_dtype_name(hw_dtype dt) { return (unsigned)dt < HW_DT_COUNT ? dt_names[dt] : "?"; }

static const unsigned char dt_lens[HW_DT_COUNT] = {7, 7, 4, 5, 5, 5, 5, 4};

int hw_dtype_from_name(const char *name) { return name ? hw_dtype_from_namen(name, strnlen(name, 8)) : -1; }

int hw_dtype_from_namen(const char *name, size_t n) {
    if (n == 0 || n >= 8) return -1;
    char b[8] = {0};
    memcpy(b, name, n);
    uint64_t w, x;
    memcpy(&w, b, 8);
    for (int i = 0; i < HW_DT_COUNT; i++) {
        memcpy(&x, dt_names[i], 8);
        if (w == x && dt_lens[i] == n) return i; /* the length too: "int8\0" is no dtype */
    }
    return -1;
}

size_t hw_dtype_size(hw_dtype dt) { return (unsigned)dt < HW_DT_COUNT ? dt_sizes[dt] : 0; }

int64_t hw_array_numel(const hw_array *a) {
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
    return n;
}

size_t hw_array_nbytes(const hw_array *a) { return (size_t)hw_array_numel(a) * hw_dtype_size(a->dtype); }

double hw_array_get_f64(const hw_array *a, int64_t i) {
    switch (a->dtype) {
    case HW_DT_FLOAT32: { float v; memcpy(&v, (const char *)a->data + 4 * i, 4); return v; }
    case HW_DT_FLOAT64: { double v; memcpy(&v, (const char *)a->data + 8 * i, 8); return v; }
    default: return (double)hw_array_get_i64(a, i);
    }
}

int64_t hw_array_get_i64(const hw_array *a, int64_t i) {
    const char *p = a->data;
    switch (a->dtype) {
    case HW_DT_INT8: return ((const int8_t *)p)[i];
    case HW_DT_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case HW_DT_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case HW_DT_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    case HW_DT_UINT8: return ((const uint8_t *)p)[i];
    case HW_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: {
        /* converting a float outside int64's range is undefined behaviour: saturate (and NaN
         * to 0); callers that need exactness check the float first (hw_space_check_action) */
        double v = hw_array_get_f64(a, i);
        if (v != v) return 0;
        if (v >= 0x1p63) return INT64_MAX;
        if (v < -0x1p63) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

void hw_array_set_f64(hw_array *a, int64_t i, double v) {
    char *p = a->data;
    switch (a->dtype) {
    case HW_DT_FLOAT32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case HW_DT_FLOAT64: memcpy(p + 8 * i, &v, 8); break;
    case HW_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case HW_DT_INT16: { int16_t x = (int16_t)v; memcpy(p + 2 * i, &x, 2); break; }
    case HW_DT_INT32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case HW_DT_INT64: { int64_t x = (int64_t)v; memcpy(p + 8 * i, &x, 8); break; }
    case HW_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case HW_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}
