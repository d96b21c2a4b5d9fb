/* dram_scan.h - the two scans of dram_sim.c's command pass over every bank's bound (which banks
 * are due at t; the least bound) in AVX2, 4 bounds a compare, for CPUs that have it (the caller
 * checks __builtin_cpu_supports("avx2") and otherwise runs its plain C loops, which give the
 * same bits). n is a multiple of 4 (the bank count, a power of two >= 4). HW_DRAM_AVX2 is defined
 * where these exist (x86-64 with GCC or Clang). */
#ifndef HW_DRAM_SCAN_H
#define HW_DRAM_SCAN_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HW_DRAM_AVX2 1
__attribute__((target("avx2"))) static inline uint64_t dram_due_avx2(const int64_t *lb, int n, int64_t t) {
    __m256i tv = _mm256_set1_epi64x(t);
    uint64_t late = 0;
    for (int b = 0; b < n; b += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(lb + b));
        late |= (uint64_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(v, tv))) << b;
    }
    return ~late & (n == 64 ? ~0ULL : (1ULL << n) - 1);
}
__attribute__((target("avx2"))) static inline int64_t dram_min_avx2(const int64_t *lb, int n) {
    __m256i m = _mm256_loadu_si256((const __m256i *)lb);
    for (int b = 4; b < n; b += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(lb + b));
        m = _mm256_blendv_epi8(m, v, _mm256_cmpgt_epi64(m, v));
    }
    int64_t x[4];
    _mm256_storeu_si256((__m256i *)x, m);
    int64_t a = x[0] < x[1] ? x[0] : x[1], c = x[2] < x[3] ? x[2] : x[3];
    return a < c ? a : c;
}
#endif

#endif
