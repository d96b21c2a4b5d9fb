/* decode.c - capacity-aware decoding (--decode capacity, docs/egrl.md "Transfer"): a GNN
 * policy's posterior turned into a map that fits the chip, so that a policy transferred to a
 * larger workload still emits a valid map. The chip is read from placement-v0's reset info
 * (capacity_bytes and banks per memory, element_bytes); the tensors' sizes and lifetimes from
 * the observation (Table 1 columns and edges), with the env's rules (docs/placement.md):
 * weights live for the whole inference, node i's activation from step i to its last consumer,
 * node i's tensors in bank i mod banks. First fit in the policy's order of preference:
 * activations in execution order, then weights, each to the memory the policy prefers most
 * among those with room (memory 0 always has room), the policy's own choice when it fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egrl.h"

#define NFEAT 19

static int info_ints(const json_t *info, const char *key, int n, int64_t *out, hw_err *err) {
    json_t *a = json_object_get(info, key);
    if (!json_is_array(a) || (int)json_array_size(a) != n)
        return hw_fail(err, HW_E_BAD_CONFIG, "--decode capacity: reset info has no \"%s\" array of %d integers (placement-v0 "
                       "of this version gives it)", key, n);
    for (int k = 0; k < n; k++) {
        json_t *x = json_array_get(a, (size_t)k);
        if (!json_is_integer(x) || json_integer_value(x) < 1)
            return hw_fail(err, HW_E_BAD_CONFIG, "--decode capacity: reset info %s[%d] is not a positive integer", key, k);
        out[k] = (int64_t)json_integer_value(x);
    }
    return 0;
}

int eg_decode_init(eg_ctx *c, hw_err *err) {
    if (c->dec_bytes) return 0; /* done already (--features capacity with --decode capacity) */
    const json_t *info = c->sess->info;
    int64_t banks[32], eb = 1;
    if (info_ints(info, "capacity_bytes", c->nmem, c->dec_cap, err) || info_ints(info, "banks", c->nmem, banks, err)) return -1;
    json_t *e = json_object_get(info, "element_bytes");
    if (json_is_integer(e) && json_integer_value(e) > 0) eb = (int64_t)json_integer_value(e);
    for (int k = 0; k < c->nmem; k++) c->dec_banks[k] = (int)banks[k];
    const int N = c->N;
    c->dec_bytes = calloc((size_t)(2 * N), sizeof(int64_t));
    c->dec_last = calloc((size_t)N, sizeof(int));
    if (!c->dec_bytes || !c->dec_last) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    const double *nf = c->sess->obs + 2 * c->E + 2 * c->N;
    for (int i = 0; i < N; i++) {
        const double *f = nf + (size_t)i * NFEAT;
        c->dec_bytes[2 * i] = (int64_t)llround(f[1]);                       /* weight_size, bytes */
        c->dec_bytes[2 * i + 1] = (int64_t)llround(f[9] * (f[18] > 0 ? f[18] : 1)) * eb; /* ofm_size x batch */
        c->dec_last[i] = i;
    }
    for (int k = 0; k < c->E; k++) {
        int src = (int)llround(c->sess->obs[2 * k]), dst = (int)llround(c->sess->obs[2 * k + 1]);
        if (src >= 0 && src < N && dst > c->dec_last[src] && dst < N) c->dec_last[src] = dst;
    }
    return 0;
}

/* The memories in the policy's order of preference for tensor t (highest probability first;
 * ties to the faster memory). */
static void preference(const eg_ctx *c, const double *post, int t, int *order) {
    const double *p = post + (size_t)t * c->nmem;
    for (int k = 0; k < c->nmem; k++) order[k] = c->nmem - 1 - k;
    for (int a = 1; a < c->nmem; a++)
        for (int b = a; b > 0 && p[order[b]] > p[order[b - 1]]; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
}

void eg_decode(const eg_ctx *c, const double *post, int64_t *action) {
    const int N = c->N, M = c->nmem;
    int coff[33] = {0}, order[32];
    for (int k = 0; k < M; k++) coff[k + 1] = coff[k] + c->dec_banks[k];
    int64_t *occ = calloc((size_t)coff[M] * (size_t)N, sizeof(int64_t)), *peak = calloc((size_t)coff[M], sizeof(int64_t));
    if (!occ || !peak) abort();
    for (int pass = 0; pass < 2; pass++) /* activations, then weights */
        for (int i = 0; i < N; i++) {
            const int t = 2 * i + (pass == 0);
            const int64_t b = c->dec_bytes[t];
            preference(c, post, t, order);
            action[t] = 0;
            for (int r = 0; r < M; r++) {
                const int k = order[r];
                if (k == 0 || b == 0) {
                    action[t] = k;
                    break;
                }
                const int ch = coff[k] + i % c->dec_banks[k];
                int64_t *o = occ + (size_t)ch * N;
                int fits;
                if (pass == 0) {
                    int64_t mx = 0;
                    for (int s = i; s <= c->dec_last[i]; s++)
                        if (o[s] > mx) mx = o[s];
                    fits = mx + b <= c->dec_cap[k];
                } else {
                    fits = peak[ch] + b <= c->dec_cap[k];
                }
                if (!fits) continue;
                action[t] = k;
                if (pass == 0) {
                    for (int s = i; s <= c->dec_last[i]; s++) o[s] += b;
                } else {
                    peak[ch] += b;
                }
                break;
            }
            if (pass == 0 && i == N - 1) /* the activations' peaks, for the weights */
                for (int ch = 0; ch < coff[M]; ch++)
                    for (int s = 0; s < N; s++)
                        if (occ[(size_t)ch * N + s] > peak[ch]) peak[ch] = occ[(size_t)ch * N + s];
        }
    free(occ);
    free(peak);
}
