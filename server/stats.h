/* stats.h - per-op request counters and latency percentiles for the `stats` op.
 * Owns: a log-bucketed latency histogram (no allocation per sample; about 3% resolution).
 * The stats op that reports them (with sessions, workers, queues and the evaluation cache) is
 * stats.c's op_stats (declared in router_int.h). Only the router thread touches them. */
#ifndef HW_STATS_H
#define HW_STATS_H

#include <jansson.h>
#include <stdint.h>

#define HW_STATS_BUCKETS 320

typedef struct hw_hist {
    uint64_t count;
    double max_us, sum_us;
    uint32_t b[HW_STATS_BUCKETS];
} hw_hist;

void hw_hist_add(hw_hist *h, double us);
double hw_hist_quantile(const hw_hist *h, double q); /* us; 0 when empty */
json_t *hw_hist_json(const hw_hist *h);             /* {count, p50_us, p90_us, p99_us, max_us, mean_us} */

#endif
