/* stats.c - see stats.h; and the stats op (router_int.h), moved from router.c. Bucket k covers [0.1 * 2^(k/16), 0.1 * 2^((k+1)/16)) microseconds. */
#include "stats.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "reply.h"
#include "router_int.h"

/* floor(16 log2(us / 0.1)) without a log2 call (one per request): x = 1.f * 2^e from its bits,
 * then which of the sixteenths of an octave 1.f falls in (the thresholds 2^(j/16)) */
static int bucket_of(double us) {
    static const double sixteenths[16] = {1.0, 1.0442737824274138, 1.0905077326652577, 1.1387886347566916, 1.189207115002721,
                                          1.241857812073484, 1.2968395546510096, 1.3542555469368927, 1.4142135623730951,
                                          1.4768261459394993, 1.5422108254079407, 1.6104903319492543, 1.681792830507429,
                                          1.7562521603732995, 1.8340080864093424, 1.9152065613971474};
    if (!(us > 0.1)) return 0;
    double x = us / 0.1;
    if (x >= 1048576.0) return HW_STATS_BUCKETS - 1; /* 2^20: bucket 320 and beyond */
    uint64_t bits, one = 0x3ff0000000000000ull;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)(bits >> 52) - 1023; /* x > 1: a normal number, e in 0..19 */
    bits = (bits & 0x000fffffffffffffull) | one;
    double m;
    memcpy(&m, &bits, sizeof m);
    int j = 0;
    for (int step = 8; step; step >>= 1)
        if (m >= sixteenths[j + step]) j += step;
    int k = 16 * e + j;
    return k >= HW_STATS_BUCKETS ? HW_STATS_BUCKETS - 1 : k;
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

/* ---------------------------------------------------------------- the stats op (moved from router.c) */

void op_stats(router *r, task *t) {
    json_t *ops = json_object();
    for (int i = 0; i < OP_COUNT; i++)
        if (r->hist[i].count) json_object_set_new(ops, hw_op_name_of(i), hw_hist_json(&r->hist[i]));
    if (r->hist_bad.count) json_object_set_new(ops, "(rejected)", hw_hist_json(&r->hist_bad));
    uint64_t env_steps = 0;
    long long snaps = 0;
    json_t *per = json_array();
    for (int i = 0; i < r->nw; i++) {
        env_steps += atomic_load(&r->w[i].env_steps);
        snaps += atomic_load(&r->w[i].nsnapshots);
        json_array_append_new(per, json_integer(r->wsessions[i]));
    }
    json_t *j = json_pack("{s:f, s:i, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "uptime_s", hw_now() - r->start, "workers", r->nw,
                          "sessions", (json_int_t)r->nsessions, "sessions_per_worker", per, "steps", (json_int_t)r->steps,
                          "env_steps", (json_int_t)env_steps, "requests", (json_int_t)r->requests, "errors", (json_int_t)r->errors,
                          "reaped", (json_int_t)r->reaped, "inflight", (json_int_t)r->inflight, "ops", ops);
    json_object_set_new(j, "snapshots", json_integer(snaps));
    json_object_set_new(j, "queued_bytes", json_integer((json_int_t)r->queued));
    json_object_set_new(j, "reclaimed", json_integer((json_int_t)r->reclaimed));
    json_object_set_new(j, "inline_ops", json_integer((json_int_t)r->inlined));
    json_object_set_new(j, "inline_alone_ops", json_integer((json_int_t)r->inlined_alone));
    json_object_set_new(j, "spin_us", json_integer(r->spin.us));
    json_object_set_new(j, "spin_max_clients", json_integer(r->spin.max_clients));
    json_object_set_new(j, "spin_clients", json_integer(hw_spin_clients(&r->spin, hw_now())));
    json_object_set_new(j, "spin_hits", json_integer((json_int_t)r->spin.hits));
    json_object_set_new(j, "spin_misses", json_integer((json_int_t)r->spin.misses));
    json_object_set_new(j, "spin_gated", json_integer((json_int_t)r->spin.gated));
    json_object_set_new(j, "clients", json_integer((json_int_t)r->P.npeers));
    json_object_set_new(j, "fair_queued", json_integer((json_int_t)r->P.nqueued));
    json_object_set_new(j, "session_mem_est_bytes", json_integer((json_int_t)r->mem));
    if (r->cache) json_object_set_new(j, "cache", hw_cache_stats(r->cache));
    msgpack_packer pk = reply_begin(t, json_object_size(j));
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) {
        hw_pack_cstr(&pk, k);
        hw_pack_json(&pk, v);
    }
    json_decref(j);
}
