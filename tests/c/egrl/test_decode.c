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

static void expect(const int64_t *got, const int64_t *want, const char *what) {
    for (int t = 0; t < 6; t++) cr_assert_eq(got[t], want[t], "%s: tensor %d -> %lld, want %lld", what, t, (long long)got[t], (long long)want[t]);
}

Test(egrl_decode, prefers_sram_gives_the_heuristic) {
    eg_ctx c;
    int64_t bytes[6], a[6];
    int last[3];
    chain(&c, 1, bytes, last);
    double post[18];
    fill(post, 0.1, 0.2, 0.7);
    /* activations all fit the SRAM (peak 500); w0 500 + 1000 fits; w1 -> LLC; w2 1500 + 500 > 1500 -> LLC */
    eg_decode(&c, post, a);
    const int64_t want[6] = {2, 2, 1, 2, 1, 2};
    expect(a, want, "SRAM first");
    /* w0 wants DRAM: then w2 fits the SRAM (500 + 500) */
    post[0] = 0.9;
    post[1] = post[2] = 0.05;
    eg_decode(&c, post, a);
    const int64_t want2[6] = {0, 2, 1, 2, 2, 2};
    expect(a, want2, "w0 in DRAM");
}

Test(egrl_decode, prefers_llc) {
    eg_ctx c;
    int64_t bytes[6], a[6];
    int last[3];
    chain(&c, 1, bytes, last);
    double post[18];
    fill(post, 0.1, 0.6, 0.3);
    /* activations in the LLC (peak 500 at step 1); w0 1500 fits; w1 4500 > 4000, and 3000 > the
     * SRAM -> DRAM; w2 1500 + 500 fits the LLC */
    eg_decode(&c, post, a);
    const int64_t want[6] = {1, 1, 0, 1, 1, 1};
    expect(a, want, "LLC first");
}

Test(egrl_decode, per_bank_capacity) {
    eg_ctx c;
    int64_t bytes[6], a[6];
    int last[3];
    chain(&c, 2, bytes, last); /* bank 0: l0, l2; bank 1: l1 */
    double post[18];
    fill(post, 0.1, 0.2, 0.7);
    /* bank peaks 200 / 300; w0 (b0) 1200 fits; w1 (b1) 3300 > 1500 -> LLC; w2 (b0) 1700 -> LLC */
    eg_decode(&c, post, a);
    const int64_t want[6] = {2, 2, 1, 2, 1, 2};
    expect(a, want, "two banks");
    /* a bank of 3500 B holds w1 with a1 (3300) but bank 0 then holds w0 + w2 + a0 = 1700 */
    c.dec_cap[2] = 3500;
    eg_decode(&c, post, a);
    const int64_t want2[6] = {2, 2, 2, 2, 2, 2};
    expect(a, want2, "big banks");
}
