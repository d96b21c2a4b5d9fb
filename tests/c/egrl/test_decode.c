/* test_decode.c - capacity-aware decoding (agents/egrl/decode.c) by hand on the chain of
 * tests/data/placement/chain3*.json: tensors w0 1000, a0 200, w1 3000, a1 300, w2 500, a2 50
 * bytes; a0 alive at steps 0-1, a1 at 1-2, a2 at 2; SRAM 1500 B, LLC 4000 B. */
#include <criterion/criterion.h>
#include <string.h>

#include "agents/egrl/egrl.h"

static void chain(eg_ctx *c, int sram_banks, int64_t *bytes, int *last) {
    memset(c, 0, sizeof *c);
    c->N = 3;
    c->nmem = 3;
    c->D = 6;
    const int64_t b[6] = {1000, 200, 3000, 300, 500, 50};
    memcpy(bytes, b, sizeof b);
    last[0] = 1;
    last[1] = 2;
    last[2] = 2;
    c->dec_bytes = bytes;
    c->dec_last = last;
    c->dec_cap[0] = 1000000000;
    c->dec_cap[1] = 4000;
    c->dec_cap[2] = 1500;
    c->dec_banks[0] = c->dec_banks[1] = 1;
    c->dec_banks[2] = sram_banks;
}

/* every tensor's posterior: p[0] DRAM, p[1] LLC, p[2] SRAM */
static void fill(double *post, double d, double l, double s) {
    for (int t = 0; t < 6; t++) {
        post[3 * t] = d;
        post[3 * t + 1] = l;
        post[3 * t + 2] = s;
    }
}

/* Decodes the chain with every tensor's posterior (DRAM, LLC, SRAM) = pref, tensor w0's = w0pref
 * when not NULL, and asserts the map. */
static void decode_case(int banks, int64_t sram_cap, const double *pref, const double *w0pref, const int64_t *want,
                        const char *what) {
    eg_ctx c;
    int64_t bytes[6], a[6];
    int last[3];
    chain(&c, banks, bytes, last);
    c.dec_cap[2] = sram_cap;
    double post[18];
    fill(post, pref[0], pref[1], pref[2]);
    if (w0pref) memcpy(post, w0pref, 3 * sizeof(double));
    eg_decode(&c, post, a);
    for (int t = 0; t < 6; t++) cr_assert_eq(a[t], want[t], "%s: tensor %d -> %lld, want %lld", what, t, (long long)a[t], (long long)want[t]);
}

static const double SRAM_FIRST[3] = {0.1, 0.2, 0.7};

Test(egrl_decode, prefers_sram_gives_the_heuristic) {
    /* activations all fit the SRAM (peak 500); w0 500 + 1000 fits; w1 -> LLC; w2 1500 + 500 > 1500 -> LLC */
    decode_case(1, 1500, SRAM_FIRST, NULL, (const int64_t[6]){2, 2, 1, 2, 1, 2}, "SRAM first");
    /* w0 wants DRAM: then w2 fits the SRAM (500 + 500) */
    decode_case(1, 1500, SRAM_FIRST, (const double[3]){0.9, 0.05, 0.05}, (const int64_t[6]){0, 2, 1, 2, 2, 2}, "w0 in DRAM");
}

Test(egrl_decode, prefers_llc) {
    /* activations in the LLC (peak 500 at step 1); w0 1500 fits; w1 4500 > 4000, and 3000 > the
     * SRAM -> DRAM; w2 1500 + 500 fits the LLC */
    decode_case(1, 1500, (const double[3]){0.1, 0.6, 0.3}, NULL, (const int64_t[6]){1, 1, 0, 1, 1, 1}, "LLC first");
}

Test(egrl_decode, per_bank_capacity) {
    /* bank 0: l0, l2; bank 1: l1. Bank peaks 200 / 300; w0 (b0) 1200 fits; w1 (b1) 3300 > 1500 ->
     * LLC; w2 (b0) 1700 -> LLC */
    decode_case(2, 1500, SRAM_FIRST, NULL, (const int64_t[6]){2, 2, 1, 2, 1, 2}, "two banks");
    /* banks of 3500 B: bank 1 holds w1 with a1 (3300), bank 0 w0 + w2 + a0 (1700) */
    decode_case(2, 3500, SRAM_FIRST, NULL, (const int64_t[6]){2, 2, 2, 2, 2, 2}, "big banks");
}
