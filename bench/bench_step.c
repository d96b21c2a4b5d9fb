/* bench_step.c - every env family's step as the server runs it, in process, without the transport:
 * the step with no JSON info where the family packs its own (env.h info_pack), the reply packed
 * into a msgpack buffer (obs, reward, terminated, truncated, info) as server/worker_core.c
 * run_single packs it. The same random legal-action sequence as bench_server's families (seeded
 * reset 1, resets when an episode ends, not timed). Prints the median step in µs per family (wall,
 * per step, so preemption falls out of the median) and the reply size; this is the env's share of
 * bench_server's round trip. For instruction counts, independent of the machine's load:
 *     valgrind --tool=callgrind --toggle-collect=server_step build/bench/bench_step --only ENV --steps N
 * (Ir of server_step / N = instructions a step).
 * --dump FILE writes every reply of every pass (each as its size, 4 bytes, then its bytes) to
 * FILE, so two builds' replies can be compared byte for byte (`cmp`).
 * A third pass (--cold KB, default 4096; 0: none) writes KB KiB of other memory before each
 * timed step, so the step starts with its code and data out of L1/L2, as it does in a server whose
 * cores ran the client and ZeroMQ's threads between two requests: beside the warm median, that
 * pass's median is the env's share of a round trip as bench_server sees it (bench/README).
 * --action a,b,c steps that one action every time instead of random ones (with --only: e.g. make
 * bench's maestro-v0 line, --only maestro-v0 --action 3,1,0,1,5,2,0,0,3,5).
 * Usage: bench_step [--only ENV] [--steps N] [--cold KB] [--dump FILE] [--action a,b,...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_fams.h"
#include "registry.h"
#include "worker_int.h"

static FILE *dump; /* --dump: every reply */
static long cold_kb = 4096; /* --cold: KiB written before each step of the cold pass */
static volatile unsigned char *sweep_buf;
static int64_t fixed_a[MAXA]; /* --action: the action of every step (nfixed of them) */
static int nfixed;

/* writes one byte of every cache line of cold_kb KiB: what the step had in L1/L2 is evicted */
static void sweep(void) {
    for (long i = 0; i < cold_kb * 1024; i += 64) sweep_buf[i]++;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one reset (act NULL) or step and its reply, packed as the server packs it; 0 or -1 */
__attribute__((noipa)) static int server_step(const hw_env_family *fam, void *env, const hw_act *act, const uint64_t *seed,
                                                 msgpack_sbuffer *sb, hw_err *err) {
    json_t *info = fam->info_pack ? NULL : json_object();
    hw_step_out out;
    memset(&out, 0, sizeof out);
    int rc = act ? fam->step(env, act, &out, info, err) : fam->reset(env, seed, NULL, &out.obs, info, err);
    if (rc) {
        json_decref(info);
        return -1;
    }
    msgpack_sbuffer_clear(sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, act ? 6 : 3);
    hw_pack_cstr(&pk, "ok");
    hw_pack_bool(&pk, true);
    pack_step_out(&pk, &out, act != NULL);
    hw_pack_cstr(&pk, "info");
    if (info) hw_pack_json(&pk, info);
    else fam->info_pack(env, &pk);
    json_decref(info);
    if (dump) {
        uint32_t n = (uint32_t)sb->size;
        fwrite(&n, sizeof n, 1, dump);
        fwrite(sb->data, 1, sb->size, dump);
    }
    return 0;
}

/* the timed step: `valgrind --tool=callgrind --toggle-collect=timed_step` counts the measured pass only */
static volatile int timed_steps;
__attribute__((noipa)) static int timed_step(const hw_env_family *fam, void *env, const hw_act *act, msgpack_sbuffer *sb, hw_err *err) {
    int rc = server_step(fam, env, act, NULL, sb, err);
    timed_steps = timed_steps + 1; /* not a tail call: callgrind's toggle sees the return */
    return rc;
}

/* the sequence from a seeded reset; us: NULL for the warm-up pass, else each step's wall µs
 * (and *bytes the replies' sizes); cold: sweep() before each step; returns the steps run */
static int run_pass(const hw_env_family *fam, void *env, policy *p, int steps, msgpack_sbuffer *sb, double *us, bool cold, double *bytes,
                    hw_err *err) {
    uint8_t mask[MAXA];
    int nmask = 0, k = 0;
    uint64_t seed = 1;
    int64_t a[MAXA];
    p->rng = 0x2545f4914f6cdd1du;
    *bytes = 0;
    if (server_step(fam, env, NULL, &seed, sb, err)) return 0;
    reply_state(sb->data, (int)sb->size, mask, &nmask);
    for (; k < steps; k++) {
        if (nfixed) memcpy(a, fixed_a, sizeof fixed_a);
        else choose(p, nmask ? mask : NULL, nmask, a);
        hw_act act = {(size_t)p->n, a, NULL};
        if (cold) sweep();
        double t = now_us();
        if ((us ? timed_step(fam, env, &act, sb, err) : server_step(fam, env, &act, NULL, sb, err))) break;
        if (us) us[k] = now_us() - t;
        *bytes += (double)sb->size;
        if (reply_state(sb->data, (int)sb->size, mask, &nmask) && server_step(fam, env, NULL, NULL, sb, err) == 0)
            reply_state(sb->data, (int)sb->size, mask, &nmask);
    }
    return k;
}

static void bench_family(const fam_case *f, int steps) {
    const hw_env_family *fam;
    hw_err err;
    policy p;
    void *env = fam_env(f, &fam, &p, &err);
    if (!env) {
        printf("  %-13s %s\n", f->id, err.msg);
        return;
    }
    if (nfixed && nfixed != p.n) {
        printf("  %-13s --action: %d values, the env's actions have %lld\n", f->id, nfixed, (long long)p.n);
        fam->destroy(env);
        return;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    double *us = calloc((size_t)steps, sizeof *us), bytes = 0;
    /* a warm-up pass first, as bench_server's (the server's env then has its caches filled) */
    int k = run_pass(fam, env, &p, steps, &sb, NULL, false, &bytes, &err);
    if (k == steps) k = run_pass(fam, env, &p, steps, &sb, us, false, &bytes, &err);
    if (k < steps) printf("  %-13s step %d failed: %s\n", f->id, k, err.msg);
    if (k > 0) {
        qsort(us, (size_t)k, sizeof *us, cmp_d);
        printf("  %-13s %6d steps: median %7.2f us a step, 10%% %7.2f us, 90%% %7.2f us; reply %6.0f B avg (%s)\n", f->id, k, us[k / 2],
               us[k / 10], us[k * 9 / 10], bytes / k, fam->info_pack ? "info packed" : "info as JSON");
        double warm = us[k / 2];
        if (cold_kb > 0 && k == steps && (k = run_pass(fam, env, &p, steps, &sb, us, true, &bytes, &err)) == steps) {
            qsort(us, (size_t)k, sizeof *us, cmp_d);
            printf("  %-13s cold (%ld KiB written before each step): median %7.2f us, 10%% %7.2f us, 90%% %7.2f us; %.2fx warm\n", "", cold_kb,
                   us[k / 2], us[k / 10], us[k * 9 / 10], us[k / 2] / (warm > 0 ? warm : 1));
        } else if (cold_kb > 0 && k < steps)
            printf("  %-13s cold pass: step %d failed: %s\n", f->id, k, err.msg);
    }
    free(us);
    msgpack_sbuffer_destroy(&sb);
    fam->destroy(env);
}

int main(int argc, char **argv) {
    const char *only = NULL;
    int steps = 1500;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold") && i + 1 < argc) cold_kb = atol(argv[++i]);
        else if (!strcmp(argv[i], "--action") && i + 1 < argc) {
            for (char *t = argv[++i], *end; *t && nfixed < MAXA; t = *end ? end + 1 : end) fixed_a[nfixed++] = strtoll(t, &end, 10);
        } else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
            if (!(dump = fopen(argv[++i], "wb"))) {
                perror(argv[i]);
                return 1;
            }
        }
        else {
            printf("usage: bench_step [--only ENV] [--steps N] [--cold KB] [--dump FILE] [--action a,b,...]\n"
                   "  every env family's step as the server runs it (step + reply packed), in process\n"
                   "  --only ENV   one family (e.g. placement-v0)\n"
                   "  --steps N    steps per family (default 1500, bench_server's --iters)\n"
                   "  --cold KB    then the same steps with KB KiB of other memory written before each one (default\n"
                   "               4096, 0: no cold pass): the step with its code and data out of L1/L2, as in a server\n"
                   "  --dump FILE  write every reply (u32 size, bytes) to FILE, to compare two builds byte for byte\n"
                   "  --action a,b  step this action every time (one env: use --only), not random legal ones\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (steps < 1) steps = 1;
    if (cold_kb < 0 || cold_kb > (1L << 20)) {
        printf("bench_step: --cold %ld: expected 0 to 1048576 KiB\n", cold_kb);
        return 2;
    }
    if (cold_kb > 0 && !(sweep_buf = calloc((size_t)cold_kb, 1024))) {
        printf("bench_step: --cold %ld: out of memory\n", cold_kb);
        return 1;
    }
    printf("env step as the server runs it, in process (step + reply packed; wall time per step, median):\n");
    int found = 0;
    for (int f = 0; f < NFAMS; f++)
        if (!only || !strcmp(only, FAMS[f].id)) bench_family(&FAMS[f], steps), found++;
    if (!found) {
        printf("bench_step: no env family '%s'\n", only);
        return 2;
    }
    if (dump) fclose(dump);
    return 0;
}
