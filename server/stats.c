/* stats.c - see stats.h. Bucket k covers [0.1 * 2^(k/16), 0.1 * 2^((k+1)/16)) microseconds. */
#include "stats.h"

#include <math.h>

static int bucket_of(double us) {
    if (us <= 0.1) return 0;
    int k = (int)(16.0 * log2(us / 0.1));
    if (k < 0) k = 0;
    if (k >= HW_STATS_BUCKETS) k = HW_STATS_BUCKETS - 1;
    return k;
}

static double bucket_mid(int k) { return 0.1 * pow(2.0, (k + 0.5) / 16.0); }

void hw_hist_add(hw_hist *h, double us) {
    h->count++;
    h->sum_us += us;
    if (us > h->max_us) h->max_us = us;
    h->b[bucket_of(us)]++;
}

double hw_hist_quantile(const hw_hist *h, double q) {
    if (!h->count) return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count);
    if (rank < 1) rank = 1;
    uint64_t acc = 0;
    for (int k = 0; k < HW_STATS_BUCKETS; k++) {
        acc += h->b[k];
        if (acc >= rank) {
            double v = bucket_mid(k);
            return v > h->max_us ? h->max_us : v;
        }
    }
    return h->max_us;
}

json_t *hw_hist_json(const hw_hist *h) {
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "count", (json_int_t)h->count, "p50_us", hw_hist_quantile(h, 0.5),
                     "p90_us", hw_hist_quantile(h, 0.9), "p99_us", hw_hist_quantile(h, 0.99), "max_us", h->max_us,
                     "mean_us", h->count ? h->sum_us / (double)h->count : 0.0);
}
