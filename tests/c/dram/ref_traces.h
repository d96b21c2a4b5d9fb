/* ref_traces.h - regenerates the DRAM reference traces of tests/data/dram (gen_traces.py's
 * algorithm) bit for bit in C: CPython's random.Random(12345) is MT19937 seeded with
 * init_by_array([12345]); random() = 53-bit float from two draws; randrange(2^24) draws
 * getrandbits(25) with rejection. */
#ifndef HW_TEST_DRAM_REF_TRACES_H
#define HW_TEST_DRAM_REF_TRACES_H

#include "dram/dram_model.h"

/* pattern "stream" or "random"; n requests at trace cycle i*interval; clk 1200 MHz. */
void ref_trace(const char *pattern, int interval, int64_t n, uint32_t seed, dram_trace *t);

#endif
