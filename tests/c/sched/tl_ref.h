/* tl_ref.h - reading tests/data/timeloop/sched_ref_visible.csv (640 timeloop-model v3.0.3 runs
 * of sched-v0 tables) for the fidelity tests. */
#ifndef HW_TEST_TL_REF_H
#define HW_TEST_TL_REF_H

#include "sched/sched.h"

typedef struct tl_ref_row {
    int id;
    char family[48], accel[32], reason[256], bound[16];
    sched_layer layer;
    sched_table table;
    int ok;
    double cycles, energy, util;
    /* counts[row k of REG,LB,GB,DRAM][tensor][reads,fills,updates]; -1 = empty */
    double cnt[4][SCHED_NT][3];
    /* ERT-proj energy split (pJ): TL_REF_E_MAC .. TL_REF_E_NET_CHIP, columns tl_e_<part>_pj */
    double e[8];
} tl_ref_row;

enum { TL_REF_E_MAC, TL_REF_E_REG, TL_REF_E_LB, TL_REF_E_GB, TL_REF_E_DRAM, TL_REF_E_NET_MAC, TL_REF_E_NET_PE, TL_REF_E_NET_CHIP };

/* Loads every row; returns the count (or -1) and a malloc'd array in *out. */
int tl_ref_load(const char *path, tl_ref_row **out);

#endif
