/* tl_stats.h - the stats file of `hwgym timeloop-model` in timeloop-model's own layout
 * (timeloop-model.stats.txt, Timeloop v3): "Buffer and Arithmetic Levels" (the MAC level, then
 * every storage level with SPECS, MAPPING and STATS blocks and per-data-space entries),
 * "Networks" (one inferred legacy network per storage level, named "OUTER <==> INNER", listed in
 * name order as Timeloop's map keeps them, each with SPECS and a per-data-space STATS block),
 * "Operational Intensity Stats" and "Summary Stats" with the pJ/Compute table. A parser of real
 * Timeloop stats files reads the same per-level and per-network energies from it. */
#ifndef HW_CLI_TL_STATS_H
#define HW_CLI_TL_STATS_H

#include <stdio.h>

#include "sched/sched_tl.h"

/* Writes the stats of a valid, evaluated spec (tl_check then tl_eval) to f. */
void tl_stats_write(FILE *f, const tl_spec *s, const tl_result *r);

#endif
