/* bench_fams.h - what bench_server and bench_step share: the env families each one steps (one
 * config per family), the random legal-action policy that chooses the steps (the same sequence in
 * both, from the same xorshift state), and reading done + action mask back from a packed reset or
 * step reply. Header-only: each benchmark is one .c file (Makefile). */
#ifndef HW_BENCH_FAMS_H
#define HW_BENCH_FAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "hw_codec.h"
#include "registry.h"

typedef struct {
    const char *id, *config;
} fam_case;

static const fam_case FAMS[] = {
    {"diag-v0", "{\"dims\":4,\"episode_length\":1000000}"},
    {"maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"episode_length\":100000000}"},
    {"dram-v0", "{\"count\":2000,\"episode_length\":1000000}"},
    {"mmap-v0", "{}"},
    {"placement-v0", "{\"episode_steps\":1000000000}"},
    {"sched-v0", "{}"},
};
enum { NFAMS = sizeof FAMS / sizeof FAMS[0], MAXA = 512 };

typedef struct {
    int64_t n, choices[MAXA], start;
    uint64_t rng;
} policy;

static inline int64_t prand(policy *p, int64_t n) {
    p->rng ^= p->rng << 13, p->rng ^= p->rng >> 7, p->rng ^= p->rng << 17;
    return (int64_t)(p->rng % (uint64_t)n);
}

/* a random action; with a mask (Discrete), a random legal one */
static inline void choose(policy *p, const uint8_t *mask, int nmask, int64_t *a) {
    if (mask && p->n == 1 && nmask == p->choices[0]) {
        int legal = 0;
        for (int i = 0; i < nmask; i++) legal += mask[i] != 0;
        int64_t k = legal ? prand(p, legal) : 0;
        for (int i = 0; i < nmask; i++)
            if (mask[i] && k-- == 0) {
                a[0] = p->start + i;
                return;
            }
    }
    for (int64_t i = 0; i < p->n; i++) a[i] = p->start + prand(p, p->choices[i]);
}

/* The family's env of this case and, in *p, the policy's action shape (its rng is set per pass);
 * NULL with *err when the env cannot be made. */
static inline void *fam_env(const fam_case *f, const hw_env_family **fam, policy *p, hw_err *err) {
    json_t *cfg = json_loads(f->config, 0, NULL);
    void *env = hw_env_create(f->id, cfg, fam, err);
    json_decref(cfg);
    if (!env) return NULL;
    const hw_space *as = (*fam)->action_space(env);
    p->n = hw_space_numel(as);
    p->start = as->type == HW_SPACE_DISCRETE ? as->start : 0;
    for (int64_t i = 0; i < p->n && i < MAXA; i++) p->choices[i] = hw_space_choices(as, i);
    return env;
}

/* done (terminated or truncated) and the action mask of a packed reset/step reply of n bytes
 * (n <= 0: no reply, done) */
static inline bool reply_state(const char *buf, int n, uint8_t *m, int *nmask) {
    hw_msg msg;
    hw_err err;
    bool done = true;
    *nmask = 0;
    if (n <= 0) return true;
    if (hw_msg_decode(&msg, buf, (size_t)n, NULL, &err) == 0) {
        const msgpack_object *te = hw_mp_get(msg.root, "terminated"), *tr = hw_mp_get(msg.root, "truncated");
        const msgpack_object *info = hw_mp_get(msg.root, "info"), *am = info ? hw_mp_get(info, "action_mask") : NULL;
        done = (te && te->type == MSGPACK_OBJECT_BOOLEAN && te->via.boolean) || (tr && tr->type == MSGPACK_OBJECT_BOOLEAN && tr->via.boolean);
        if (am && am->type == MSGPACK_OBJECT_ARRAY && am->via.array.size <= MAXA) {
            for (uint32_t i = 0; i < am->via.array.size; i++) m[i] = am->via.array.ptr[i].via.u64 != 0;
            *nmask = (int)am->via.array.size;
        }
        if (!hw_mp_get(msg.root, "ok")) done = true;
    }
    hw_msg_free(&msg);
    return done;
}

#endif
