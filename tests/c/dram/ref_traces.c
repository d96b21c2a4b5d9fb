/* ref_traces.c - see ref_traces.h. A from-scratch MT19937 (the published algorithm) with the
 * seeding and draw conventions CPython's random module uses. */
#include "ref_traces.h"

#include <string.h>

typedef struct pymt {
    uint32_t mt[624];
    int i;
} pymt;

static void mt_init(pymt *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < 624; i++) m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static void mt_init_array(pymt *m, const uint32_t *key, int len) {
    mt_init(m, 19650218u);
    int i = 1, j = 0;
    for (int k = 624 > len ? 624 : len; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
        if (j >= len) j = 0;
    }
    for (int k = 623; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            m->mt[0] = m->mt[623];
            i = 1;
        }
    }
    m->mt[0] = 0x80000000u;
    m->i = 624;
}

static uint32_t mt_next(pymt *m) {
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[(k + 1) % 624] & 0x7fffffffu);
            m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->mt[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static double py_random(pymt *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) * (1.0 / 9007199254740992.0);
}

void ref_trace(const char *pattern, int interval, int64_t n, uint32_t seed, dram_trace *t) {
    pymt m;
    mt_init_array(&m, &seed, 1);
    bool stream = !strcmp(pattern, "stream");
    dram_trace_init(t, 1200);
    dram_trace_reserve(t, n);
    for (int64_t i = 0; i < n; i++) {
        uint64_t addr;
        if (stream) addr = ((uint64_t)i * 64) % (1ULL << 30);
        else {
            uint32_t r;
            do r = mt_next(&m) >> 7; /* getrandbits(25) */
            while (r >= (1u << 24));
            addr = (uint64_t)r * 64;
        }
        bool rd = py_random(&m) < 2.0 / 3.0;
        dram_trace_push(t, (uint64_t)(i * interval), !rd, addr);
    }
}
