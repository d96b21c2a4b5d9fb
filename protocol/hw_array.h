/* hw_array.h - typed n-dimensional numeric arrays as they travel on the wire.
 * Owns: dtype names and sizes, the hw_array view (data is borrowed unless a function says
 * otherwise), the action view handed to envs (hw_act) and the observation view envs fill (hw_obs).
 * On the wire an array is {"dtype": str, "shape": [int...], "data": bin (little endian, C order)}. */
#ifndef HW_ARRAY_H
#define HW_ARRAY_H

#include <stddef.h>
#include <stdint.h>

typedef enum hw_dtype {
    HW_DT_FLOAT32 = 0,
    HW_DT_FLOAT64,
    HW_DT_INT8,
    HW_DT_INT16,
    HW_DT_INT32,
    HW_DT_INT64,
    HW_DT_UINT8,
    HW_DT_BOOL,
    HW_DT_COUNT
} hw_dtype;

#define HW_MAX_DIMS 4

typedef struct hw_array {
    hw_dtype dtype;
    int ndim;                      /* 0 = scalar */
    int64_t shape[HW_MAX_DIMS];
    void *data;                    /* numel * dtype size bytes */
} hw_array;

const char *hw_dtype_name(hw_dtype dt);          /* "float32" (numpy spelling) */
int hw_dtype_from_name(const char *name);        /* -1 when unknown */
int hw_dtype_from_namen(const char *name, size_t n); /* the same for n bytes, not NUL-terminated */
size_t hw_dtype_size(hw_dtype dt);
int64_t hw_array_numel(const hw_array *a);       /* product of shape; 1 for a scalar */
size_t hw_array_nbytes(const hw_array *a);
/* Element i converted to double / int64 (no bounds check). */
double hw_array_get_f64(const hw_array *a, int64_t i);
int64_t hw_array_get_i64(const hw_array *a, int64_t i);
void hw_array_set_f64(hw_array *a, int64_t i, double v);

/* An action as an env sees it, already validated against the action space:
 * integer spaces (Discrete, MultiDiscrete, MultiBinary) give i[], Box gives f[] (float64). */
typedef struct hw_act {
    size_t n;
    const int64_t *i;
    const double *f;
} hw_act;

/* An observation as an env reports it: one array for a Box/Discrete/MultiBinary space (key NULL),
 * or one array per key of a Dict space, in the Dict's (sorted) key order.
 * The env owns the data; it stays valid until the env's next call. */
#define HW_OBS_MAX_FIELDS 16
typedef struct hw_obs {
    int n;
    const char *keys[HW_OBS_MAX_FIELDS];
    hw_array arr[HW_OBS_MAX_FIELDS];
} hw_obs;

#endif
