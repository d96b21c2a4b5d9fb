/* dram_scan.c - the command pass's scan over the banks (dram_sim.c): for every bank, the time
 * its proposed command becomes legal, max(bp[b], nr[pc[b]]) (bank-level bound, rank-level
 * bound of its command type); the least of them and the banks legal at max(that, t). On
 * saturated random traffic this scan ran twice per command and was a fifth of the simulation in plain C, so
 * x86-64 CPUs with AVX2 or AVX-512 run it 4 or 8 banks at a time (chosen once per simulation;
 * same results, tests/c/dram/test_dram_scan.c compares every variant with the plain one). */
#include "dram_scan.h"

#include <string.h>

#include "dram_model.h"

#define INF INT64_MAX

int64_t dram_bank_times_c(const int64_t *bp, const int8_t *pc, const int64_t *nr, int nbanks, int64_t t,
                          uint64_t *first) {
    int64_t m = INF, e[64];
    for (int b = 0; b < nbanks; b++) {
        e[b] = bp[b] > nr[pc[b]] ? bp[b] : nr[pc[b]];
        m = e[b] < m ? e[b] : m;
    }
    int64_t thr = m > t ? m : t;
    uint64_t r = 0;
    for (int b = 0; b < nbanks; b++) r |= (uint64_t)(e[b] <= thr) << b;
    *first = m == INF ? 0 : r;
    return m;
}

#if DRAM_SCAN_X86
#include <immintrin.h>

/* 8 banks a step; banks past nbanks (up to the next multiple of 8, at most MAXB) must have
 * pc = DRAM_NCMD, so their time is INF */
__attribute__((target("avx512f"))) int64_t dram_bank_times_avx512(const int64_t *bp, const int8_t *pc, const int64_t *nr,
                                                                   int nbanks, int64_t t, uint64_t *first) {
    __m512i nr8 = _mm512_loadu_si512(nr), inf = _mm512_set1_epi64(INF);
    __m512i ncmd = _mm512_set1_epi64(DRAM_NCMD), m = inf, e[8];
    if (nbanks <= 16) { /* DDR4 (16 banks), DDR3 (8): two vectors, straight through */
        __m512i c0 = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)pc));
        __m512i c1 = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)(pc + 8)));
        __m512i e0 = _mm512_max_epi64(_mm512_mask_permutexvar_epi64(inf, _mm512_cmplt_epi64_mask(c0, ncmd), c0, nr8),
                                      _mm512_loadu_si512(bp));
        __m512i e1 = _mm512_max_epi64(_mm512_mask_permutexvar_epi64(inf, _mm512_cmplt_epi64_mask(c1, ncmd), c1, nr8),
                                      _mm512_loadu_si512(bp + 8));
        int64_t mm = _mm512_reduce_min_epi64(_mm512_min_epi64(e0, e1));
        __m512i thr = _mm512_set1_epi64(mm > t ? mm : t);
        uint64_t r = (uint64_t)_mm512_cmple_epi64_mask(e0, thr) | (uint64_t)_mm512_cmple_epi64_mask(e1, thr) << 8;
        *first = mm == INF ? 0 : r & ((1ULL << nbanks) - 1);
        return mm;
    }
    for (int b = 0; b < nbanks; b += 8) {
        __m512i c = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)(pc + b)));
        __m512i n = _mm512_mask_permutexvar_epi64(inf, _mm512_cmplt_epi64_mask(c, ncmd), c, nr8);
        e[b / 8] = _mm512_max_epi64(n, _mm512_loadu_si512(bp + b));
        m = _mm512_min_epi64(m, e[b / 8]);
    }
    int64_t mm = _mm512_reduce_min_epi64(m);
    __m512i thr = _mm512_set1_epi64(mm > t ? mm : t);
    uint64_t r = 0;
    for (int b = 0; b < nbanks; b += 8) r |= (uint64_t)_mm512_cmple_epi64_mask(e[b / 8], thr) << b;
    *first = mm == INF ? 0 : nbanks < 64 ? r & ((1ULL << nbanks) - 1) : r;
    return mm;
}

/* 4 banks a step; the same padding rule with 4 */
__attribute__((target("avx2"))) int64_t dram_bank_times_avx2(const int64_t *bp, const int8_t *pc, const int64_t *nr,
                                                               int nbanks, int64_t t, uint64_t *first) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)nr), hi = _mm256_loadu_si256((const __m256i *)(nr + 4));
    __m256i inf = _mm256_set1_epi64x(INF), m = inf, e[16];
    __m256i three = _mm256_set1_epi64x(3), ncmd = _mm256_set1_epi64x(DRAM_NCMD);
    for (int b = 0; b < nbanks; b += 4) {
        int32_t p4;
        memcpy(&p4, pc + b, sizeof p4);
        __m256i c = _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(p4));
        /* nr[c] by two 32-bit-lane permutes (of nr[0..3] and nr[4..7]): lanes 2(c&3), 2(c&3)+1 */
        __m256i k = _mm256_slli_epi64(_mm256_and_si256(c, three), 1);
        __m256i idx = _mm256_or_si256(k, _mm256_slli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(1)), 32));
        __m256i n = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(lo, idx), _mm256_permutevar8x32_epi32(hi, idx),
                                       _mm256_cmpgt_epi64(c, three));
        n = _mm256_blendv_epi8(n, inf, _mm256_cmpeq_epi64(c, ncmd));
        __m256i p = _mm256_loadu_si256((const __m256i *)(bp + b));
        __m256i x = _mm256_blendv_epi8(n, p, _mm256_cmpgt_epi64(p, n));
        e[b / 4] = x;
        m = _mm256_blendv_epi8(m, x, _mm256_cmpgt_epi64(m, x));
    }
    int64_t v[4];
    _mm256_storeu_si256((__m256i *)v, m);
    int64_t a = v[0] < v[1] ? v[0] : v[1], c = v[2] < v[3] ? v[2] : v[3], mm = a < c ? a : c;
    __m256i thr = _mm256_set1_epi64x(mm > t ? mm : t);
    uint64_t r = 0;
    for (int b = 0; b < nbanks; b += 4) {
        uint64_t gt = (uint64_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(e[b / 4], thr)));
        r |= (~gt & 15) << b;
    }
    *first = mm == INF ? 0 : nbanks < 64 ? r & ((1ULL << nbanks) - 1) : r;
    return mm;
}
#endif

int dram_scan_variant = DRAM_SCAN_BEST;

int dram_scan_supported(int v) {
    if (v == DRAM_SCAN_C) return 1;
#if DRAM_SCAN_X86
    __builtin_cpu_init();
    if (v == DRAM_SCAN_AVX2) return __builtin_cpu_supports("avx2");
    if (v == DRAM_SCAN_AVX512) return __builtin_cpu_supports("avx512f");
#endif
    return 0;
}

dram_bank_times_fn dram_bank_times_best(void) {
#if DRAM_SCAN_X86
    int v = dram_scan_variant;
    if ((v == DRAM_SCAN_BEST || v == DRAM_SCAN_AVX512) && dram_scan_supported(DRAM_SCAN_AVX512))
        return dram_bank_times_avx512;
    if ((v == DRAM_SCAN_BEST || v == DRAM_SCAN_AVX2) && dram_scan_supported(DRAM_SCAN_AVX2)) return dram_bank_times_avx2;
#endif
    return dram_bank_times_c;
}
