/* dram_digest.h - a fingerprint of everything dram_simulate outputs that is an integer (command
 * counts and log, per-request arrival / CAS / end times, cycles, row hits; the ns, pJ and mW
 * figures are computed from these), for one of DRAM_DIGEST_CASES deterministic (trace,
 * controller) cases: both memspecs, every controller parameter, stream / random / mixed traces
 * and hand-made ones with idle gaps. test_dram_scan.c compares them with digests recorded from
 * the simulator before the command pass was restructured (commit 0d46670). */
#ifndef HW_TEST_DRAM_DIGEST_H
#define HW_TEST_DRAM_DIGEST_H

#include <stdint.h>

#define DRAM_DIGEST_CASES 96

/* FNV-1a over the outputs of case i; 0 if the simulation failed */
uint64_t dram_digest_case(int i);

#endif
