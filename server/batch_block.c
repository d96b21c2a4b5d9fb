/* batch_block.c - see batch_block.h. */
#include "batch_block.h"

#include <string.h>

/* cnt integers of dtype dt at src, widened into o. Blocks of 16 with a fixed trip count and
 * restrict pointers: GCC vectorises them at -O2. */
#define WIDEN(T)                                                                                                       \
    do {                                                                                                               \
        const T *restrict q = (const T *)(const void *)src;                                                           \
        for (; j + 16 <= cnt; j += 16)                                                                                 \
            for (size_t i = 0; i < 16; i++) o[j + i] = q[j + i];                                                      \
        for (; j < cnt; j++) o[j] = q[j];                                                                              \
    } while (0)
#define WIDEN_UNALIGNED(T)                                                                                             \
    do {                                                                                                               \
        for (; j + 16 <= cnt; j += 16)                                                                                 \
            for (size_t i = 0; i < 16; i++) {                                                                          \
                T v;                                                                                                   \
                memcpy(&v, src + sizeof(T) * (j + i), sizeof(T));                                                      \
                o[j + i] = v;                                                                                          \
            }                                                                                                          \
        for (; j < cnt; j++) {                                                                                         \
            T v;                                                                                                       \
            memcpy(&v, src + sizeof(T) * j, sizeof(T));                                                                \
            o[j] = v;                                                                                                  \
        }                                                                                                              \
    } while (0)
void lean_widen(hw_dtype dt, const char *restrict src, size_t cnt, int64_t *restrict o) {
    size_t j = 0;
    switch (dt) {
    case HW_DT_INT64: memcpy(o, src, cnt * 8); break;
    case HW_DT_INT8: WIDEN(int8_t); break;
    case HW_DT_UINT8: WIDEN(uint8_t); break;
    case HW_DT_INT16:
        if (((uintptr_t)src & 1) == 0) WIDEN(int16_t);
        else WIDEN_UNALIGNED(int16_t); /* a wire array's data may start at any byte of the message */
        break;
    case HW_DT_INT32:
        if (((uintptr_t)src & 3) == 0) WIDEN(int32_t);
        else WIDEN_UNALIGNED(int32_t);
        break;
    case HW_DT_BOOL: for (; j < cnt; j++) o[j] = ((const uint8_t *)src)[j] != 0; break;
    default: for (; j < cnt; j++) o[j] = hw_array_get_i64(&(hw_array){dt, 1, {(int64_t)cnt}, (void *)src}, (int64_t)j); break;
    }
}
#undef WIDEN
#undef WIDEN_UNALIGNED

/* every x[i] in [lo[i], lo[i] + span[i]] (span < 2^63): u = x - lo as unsigned is in range iff
 * neither u nor span - u has its top bit set. Two lanes at a time (GCC vector extension: SSE2),
 * the flags OR-ed in a register. */
typedef uint64_t u64x2 __attribute__((vector_size(16)));
bool lean_in_range(const int64_t *x, const int64_t *lo, const uint64_t *span, int64_t n) {
    u64x2 acc = {0, 0};
    int64_t i = 0;
    for (; i + 2 <= n; i += 2) {
        u64x2 vx, vl, vs;
        memcpy(&vx, x + i, 16);
        memcpy(&vl, lo + i, 16);
        memcpy(&vs, span + i, 16);
        u64x2 u = vx - vl;
        acc |= u | (vs - u);
    }
    uint64_t bad = acc[0] | acc[1];
    for (; i < n; i++) {
        uint64_t u = (uint64_t)x[i] - (uint64_t)lo[i];
        bad |= u | (span[i] - u);
    }
    return (bad >> 63) == 0;
}

/* the same check on int8 points against int8 bounds, sixteen at a time (SSE2 byte compares) */
typedef int8_t i8x16 __attribute__((vector_size(16)));
bool lean_in_range8(const int8_t *x, const int8_t *lo, const int8_t *hi, int64_t n) {
    i8x16 acc = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        i8x16 vx, vl, vh;
        memcpy(&vx, x + i, 16);
        memcpy(&vl, lo + i, 16);
        memcpy(&vh, hi + i, 16);
        acc |= (i8x16)((vx < vl) | (vx > vh));
    }
    bool bad = false;
    for (int j = 0; j < 16; j++) bad |= acc[j] != 0;
    for (; i < n; i++) bad |= x[i] < lo[i] || x[i] > hi[i];
    return !bad;
}
