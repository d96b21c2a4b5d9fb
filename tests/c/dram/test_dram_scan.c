/* The command pass's bank scan (envs/dram/dram_scan.c) and the restructured pass around it:
 * every vector variant this CPU runs gives the plain C variant's bits on random inputs and in
 * whole simulations, and the simulator's integer outputs (commands, per-request times, cycles)
 * equal digests recorded from the simulator before the pass was restructured (commit 0d46670,
 * where each bank's bound was re-evaluated one by one; tests/c/dram/dram_digest.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "dram/dram_model.h"
#include "dram/dram_scan.h"
#include "dram_digest.h"

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* by DRAM_SCAN_* */
static const dram_bank_times_fn variants[] = {
    NULL,
    dram_bank_times_c,
#if DRAM_SCAN_X86
    dram_bank_times_avx2,
    dram_bank_times_avx512,
#endif
};

Test(dram_scan, variants_agree_on_random_banks) {
    uint64_t st = 4242;
    int checked = 0;
    for (int it = 0; it < 20000; it++) {
        int nb = 1 + (int)(lcg(&st) % 64);
        int64_t bp[64], nr[DRAM_NCMD + 1];
        int8_t pc[64];
        int64_t t = (int64_t)(lcg(&st) % 1000);
        if (it % 7 == 0) t += INT64_C(1) << 60; /* beyond a double's 53 bits */
        for (int c = 0; c < DRAM_NCMD; c++) nr[c] = t - 20 + (int64_t)(lcg(&st) % 40);
        nr[DRAM_NCMD] = INT64_MAX;
        for (int b = 0; b < 64; b++) {
            bool on = b < nb && lcg(&st) % 8 != 0;
            pc[b] = on ? (int8_t)(lcg(&st) % DRAM_NCMD) : DRAM_NCMD;
            bp[b] = lcg(&st) % 16 == 0 ? INT64_MAX : t - 20 + (int64_t)(lcg(&st) % 40);
        }
        uint64_t r0, r;
        int64_t m0 = dram_bank_times_c(bp, pc, nr, nb, t, &r0);
        /* the plain scan against its definition: the least time m, the banks legal at max(m, t) */
        int64_t mm = INT64_MAX, e[64];
        uint64_t rr = 0;
        for (int b = 0; b < nb; b++) {
            e[b] = bp[b] > nr[pc[b]] ? bp[b] : nr[pc[b]];
            if (e[b] < mm) mm = e[b];
        }
        for (int b = 0; b < nb; b++)
            if (mm != INT64_MAX && e[b] <= (mm > t ? mm : t)) rr |= 1ULL << b;
        cr_assert_eq(m0, mm);
        cr_assert_eq(r0, rr);
        for (int v = DRAM_SCAN_C; v < (int)(sizeof variants / sizeof *variants); v++) {
            if (!dram_scan_supported(v)) continue;
            int64_t m = variants[v](bp, pc, nr, nb, t, &r);
            cr_assert_eq(m, m0, "variant %d, %d banks: least time %lld vs %lld", v, nb, (long long)m, (long long)m0);
            cr_assert_eq(r, r0, "variant %d, %d banks: first banks %llx vs %llx", v, nb, (unsigned long long)r,
                         (unsigned long long)r0);
            checked++;
        }
    }
    cr_assert_geq(checked, 20000);
}

/* recorded with the simulator of commit 0d46670 (dram_digest.c's cases) */
static const uint64_t before[DRAM_DIGEST_CASES] = {
    0xef594365bfeb80c4ULL, 0xd09a4040d948cf43ULL, 0xb9a2b8ef704c773bULL,
    0x17969da00ea4df7eULL, 0x956c6ae27a1796c0ULL, 0x810f47d8d389c495ULL,
    0x7c787897cd31a152ULL, 0x8f09c11a31c13169ULL, 0xc755fc3936952a1aULL,
    0x6e27a219dafabc36ULL, 0x8854f997a46d5617ULL, 0x29781f711592a6c9ULL,
    0x420f337d2fd884a2ULL, 0x2850bdfc894b09e7ULL, 0x2bf2acbb676e6f99ULL,
    0xa096a5fe8abceb41ULL, 0x4aafdf93dbe93ec4ULL, 0x4eb109868657f97eULL,
    0x06af0d82fd198851ULL, 0xbec7ace488b97c9aULL, 0x86f91f161b6ace60ULL,
    0xa62c5ec4abe7795cULL, 0xbe19fd3d83cf9599ULL, 0x24457fd2f2768dbcULL,
    0x27ba90cc7cbed373ULL, 0xa882f2a851c3521eULL, 0x79414c5d002e7e28ULL,
    0x8ceeba3a50c6f81cULL, 0xc2f944b020c54282ULL, 0x03c67c480c3c2de7ULL,
    0xe59353cf77bef764ULL, 0xeac34e5f0cfdf4b5ULL, 0xf073405b84a98572ULL,
    0x5e7e3aaff6fed588ULL, 0xf43f7c6e18e95273ULL, 0x0336214e94db1116ULL,
    0xfc7f6945b5277e49ULL, 0x40d9d345bffdf55fULL, 0x421930511d36c743ULL,
    0x230076552ab1ad94ULL, 0xbedb17e9bcdadcc4ULL, 0x3d26303be88deef6ULL,
    0xb04de890bb6f309eULL, 0x20f458728052480cULL, 0x2ac8e56a5a45be89ULL,
    0x5f731dbefa813c59ULL, 0xeca3de995700bc69ULL, 0x51c957fb2d98a6b9ULL,
    0x267c8a11759b5d22ULL, 0x80cc4edb6ec4ee9bULL, 0xa297f66e863c3f9bULL,
    0x8bf57d01e67ef010ULL, 0xf4cd4f744c435935ULL, 0xd6656ac6b6cd117aULL,
    0x74ba047e8801b554ULL, 0xd34470fa833223ffULL, 0x8a5d4e7d488e2558ULL,
    0x9c36dfbaec4a46aeULL, 0x82607365344aac63ULL, 0x795f4f638e93a197ULL,
    0xd58552abe2253a31ULL, 0xe8924caa0623092fULL, 0x4882424526118869ULL,
    0x0d0753736ec3b411ULL, 0x1e8f69ef276a8c3eULL, 0xf011282f028e3821ULL,
    0x522d6b7eb544c65dULL, 0xb24f2d0032da4a55ULL, 0x280bd05eca3f7ab1ULL,
    0x2d0cd4e68d3543c3ULL, 0x67e4a2debd3a5c19ULL, 0x5f7c8cdd89fadb8dULL,
    0x65fa567b0759e183ULL, 0xc93df095c036a0b2ULL, 0x7812cff6e69d185cULL,
    0xeb097d182e0c7a66ULL, 0x8393380f8d1bc478ULL, 0x4b8e600b968ae946ULL,
    0x01ec231ab74a3b99ULL, 0x0689c508bd88507cULL, 0x8f5b6de3aa64d499ULL,
    0xd6551644fc25cb15ULL, 0x583b22a1994a956dULL, 0xd3a8d4a55fa69f2cULL,
    0xb1eabc85bcffa0f1ULL, 0xe391c151298eee55ULL, 0x1afc99e270199eb3ULL,
    0x3f5b40333122d371ULL, 0xd6387894cf3801a2ULL, 0x696e36d5b507f1a5ULL,
    0xd0f2eb307c99dac9ULL, 0x4266f8b1d28dd319ULL, 0xe393f09e0bfad2a9ULL,
    0x6cab78482954c58eULL, 0xba952cbae4487378ULL, 0x3fa54664b6b0883eULL,
};

Test(dram_scan, results_equal_the_simulator_before_the_restructured_pass, .timeout = 120) {
    for (int i = 0; i < DRAM_DIGEST_CASES; i++) {
        uint64_t d = dram_digest_case(i);
        cr_assert_eq(d, before[i], "case %d: digest %016llx, recorded %016llx", i, (unsigned long long)d,
                     (unsigned long long)before[i]);
    }
}

Test(dram_scan, every_scan_variant_simulates_the_same, .timeout = 120) {
    int ran = 0;
    for (int v = DRAM_SCAN_C; v <= DRAM_SCAN_AVX512; v++) {
        if (!dram_scan_supported(v)) continue;
        dram_scan_variant = v; /* this test's process only (Criterion forks one per test) */
        for (int i = 0; i < DRAM_DIGEST_CASES; i += 5)
            cr_assert_eq(dram_digest_case(i), before[i], "variant %d, case %d", v, i);
        ran++;
    }
    dram_scan_variant = DRAM_SCAN_BEST;
    cr_assert_geq(ran, 1);
}
