/* dram_scan.h - the command pass's scan over the banks (dram_scan.c): for bank b < nbanks,
 * the time its proposed command pc[b] becomes legal, max(bp[b], nr[pc[b]]); returns the least
 * such time m and sets *first to the banks whose time is <= max(m, t): with t = now, the banks
 * legal now (if m <= t); with t = the earliest next pass, the banks legal then (0 if m = INF). pc[b] = DRAM_NCMD (no command)
 * needs nr[DRAM_NCMD] = INT64_MAX. The AVX variants read bp/pc up to the next multiple of 8
 * (AVX-512) or 4 (AVX2) banks, where pc must be DRAM_NCMD. Private to envs/dram. */
#ifndef HW_DRAM_SCAN_H
#define HW_DRAM_SCAN_H

#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DRAM_SCAN_X86 1
#else
#define DRAM_SCAN_X86 0
#endif

typedef int64_t (*dram_bank_times_fn)(const int64_t *bp, const int8_t *pc, const int64_t *nr, int nbanks, int64_t t,
                                      uint64_t *first);
int64_t dram_bank_times_c(const int64_t *bp, const int8_t *pc, const int64_t *nr, int nbanks, int64_t t, uint64_t *first);
#if DRAM_SCAN_X86
int64_t dram_bank_times_avx2(const int64_t *bp, const int8_t *pc, const int64_t *nr, int nbanks, int64_t t,
                             uint64_t *first);
int64_t dram_bank_times_avx512(const int64_t *bp, const int8_t *pc, const int64_t *nr, int nbanks, int64_t t,
                               uint64_t *first);
#endif
/* The variant dram_simulate uses: dram_scan_variant if this CPU runs it (else plain C), the
 * fastest one it runs for DRAM_SCAN_BEST (the default). Tests set dram_scan_variant to compare
 * whole simulations; every variant gives the same bits. */
enum { DRAM_SCAN_BEST = 0, DRAM_SCAN_C, DRAM_SCAN_AVX2, DRAM_SCAN_AVX512 };
extern int dram_scan_variant;
int dram_scan_supported(int variant);
dram_bank_times_fn dram_bank_times_best(void);

#endif
