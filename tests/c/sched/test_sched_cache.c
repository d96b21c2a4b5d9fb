/* The brute-force memo (sched_bfcache.h) through the env: with config.step_cache on, every step
 * leaves exactly the table and figures the uncached env does; a layer with the shape of an earlier
 * one, given the same actions, is served from the memo; a repeated episode is too; step_cache 0
 * turns it off; a bad value names the field. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "registry.h"
#include "sched/sched.h"
#include "sched/sched_bfcache.h"

#define LAYERS                                                                                                          \
    "\"layers\":[{\"name\":\"a\",\"C\":32,\"K\":64,\"R\":3,\"S\":3,\"P\":14,\"Q\":14},"                                \
    "{\"name\":\"b\",\"C\":64,\"K\":64,\"P\":28,\"Q\":28},{\"name\":\"a2\",\"C\":32,\"K\":64,\"R\":3,\"S\":3,\"P\":14,"  \
    "\"Q\":14}]"

static void *mk(const char *cfg_text, const hw_env_family **f) {
    json_t *cfg = json_loads(cfg_text, 0, NULL);
    cr_assert(cfg, "bad test JSON");
    hw_err err;
    void *env = hw_env_create("sched-v0", cfg, f, &err);
    json_decref(cfg);
    cr_assert(env, "create failed: %s", err.msg);
    return env;
}

/* the k-th valid action of the mask, k from the step index (same actions on every layer) */
static int64_t pick(json_t *info, int t) {
    const json_t *m = json_object_get(info, "action_mask");
    int valid[SCHED_NACT], n = 0;
    for (int a = 0; a < SCHED_NACT; a++)
        if (json_integer_value(json_array_get(m, (size_t)a))) valid[n++] = a;
    cr_assert_gt(n, 0);
    return valid[(7 * t + 3) % n];
}

Test(sched_cache, cached_steps_equal_uncached_and_reuse_same_shapes, .timeout = 120) {
    const char *accs[] = {"eyeriss_v1", "simba", "tpu_v3"};
    for (int ai = 0; ai < 3; ai++) {
        char c0[1024], c1[1024];
        snprintf(c0, sizeof c0, "{\"accelerator\":\"%s\",\"mode\":\"network\",\"steps_per_layer\":6,\"step_cache\":0,%s}",
                 accs[ai], LAYERS);
        snprintf(c1, sizeof c1, "{\"accelerator\":\"%s\",\"mode\":\"network\",\"steps_per_layer\":6,%s}", accs[ai], LAYERS);
        const hw_env_family *f;
        void *e0 = mk(c0, &f), *e1 = mk(c1, &f);
        int hits[2] = {0, 0}, steps = 0;
        for (int ep = 0; ep < 2; ep++) {
            hw_obs o;
            json_t *i0 = json_object(), *i1 = json_object();
            f->reset(e0, NULL, NULL, &o, i0, NULL);
            f->reset(e1, NULL, NULL, &o, i1, NULL);
            for (int t = 0;; t++) {
                int64_t a = pick(i0, t % 6);
                hw_act act = {1, &a, NULL};
                hw_step_out out0, out1;
                json_decref(i0);
                json_decref(i1);
                i0 = json_object();
                i1 = json_object();
                cr_assert_eq(f->step(e0, &act, &out0, i0, NULL), 0);
                cr_assert_eq(f->step(e1, &act, &out1, i1, NULL), 0);
                char *t0 = json_dumps(json_object_get(i0, "table"), 0), *t1 = json_dumps(json_object_get(i1, "table"), 0);
                cr_assert_str_eq(t0, t1, "%s episode %d step %d: tables differ", accs[ai], ep, t);
                free(t0);
                free(t1);
                cr_assert_eq(out0.reward, out1.reward);
                cr_assert_eq(json_real_value(json_object_get(i0, "network_energy_pj")),
                             json_real_value(json_object_get(i1, "network_energy_pj")));
                cr_assert(json_is_false(json_object_get(i0, "bf_cache_hit")), "step_cache 0 hit");
                if (json_is_true(json_object_get(i1, "bf_cache_hit"))) {
                    hits[ep]++;
                    cr_assert_eq(json_integer_value(json_object_get(i1, "bf_leaves")), 0);
                }
                if (ep == 0) steps++;
                if (out0.terminated || out0.truncated) break;
            }
            json_decref(i0);
            json_decref(i1);
        }
        /* layer a2 has layer a's shape: its 6 steps (same actions) come from the memo; the second
         * episode repeats the first (three keys of one two-way set could evict an entry: allow one) */
        cr_assert_geq(hits[0], 6, "%s: %d hits in episode 1", accs[ai], hits[0]);
        cr_assert_geq(hits[1], steps - 1, "%s: %d of %d hits in episode 2", accs[ai], hits[1], steps);
        f->destroy(e0);
        f->destroy(e1);
    }
}

Test(sched_cache, counts_and_bad_config) {
    sched_bfcache *c = sched_bfcache_new(3);
    long long h, n;
    sched_bfcache_counts(c, &h, &n);
    cr_assert_eq(h + n, 0);
    sched_accel a;
    sched_layer l;
    hw_err err;
    json_t *nm = json_string("eyeriss_v1"), *lj = json_loads("{\"C\":16,\"K\":32,\"P\":7,\"Q\":7}", 0, NULL);
    cr_assert_eq(sched_accel_resolve(nm, "a", &a, &err), 0);
    cr_assert_eq(sched_layer_from_json(lj, "l", &l, &err), 0);
    json_decref(nm);
    json_decref(lj);
    int rows[3] = {SR_LB, SR_GB, SR_DRAM};
    sched_table t1, t2;
    sched_table_init(&l, &t1);
    t2 = t1;
    sched_cost c1, c2;
    sched_bf_stats s1, s2;
    cr_assert_eq(sched_bruteforce_cached(c, &a, &l, &t1, 3, rows, SOBJ_ENERGY, -1, &c1, &s1), 0);
    cr_assert_eq(sched_bruteforce_cached(c, &a, &l, &t2, 3, rows, SOBJ_ENERGY, -1, &c2, &s2), 0);
    cr_assert_eq(s1.cache_hits, 0);
    cr_assert_eq(s2.cache_hits, 1);
    cr_assert_gt(s1.leaves, 0);
    cr_assert_eq(memcmp(t1.f, t2.f, sizeof t1.f), 0);
    cr_assert_eq(c1.energy_pj, c2.energy_pj);
    sched_bfcache_counts(c, &h, &n);
    cr_assert_eq(h, 1);
    cr_assert_eq(n, 2);
    int bad[3] = {SR_LB, SR_LB, SR_DRAM};
    cr_assert_eq(sched_bruteforce_cached(c, &a, &l, &t1, 3, bad, SOBJ_ENERGY, -1, NULL, NULL), -1);
    sched_bfcache_free(c);
    sched_bfcache_free(NULL);
    json_t *cfg = json_loads("{\"step_cache\":-1}", 0, NULL);
    void *env = hw_env_create("sched-v0", cfg, NULL, &err);
    json_decref(cfg);
    cr_assert_null(env);
    cr_assert(strstr(err.msg, "config.step_cache"), "%s", err.msg);
}

/* Two ways: two keys stored in a fresh 16-slot memo are both found again, whatever slots they hash
 * to (direct-mapped, about 1 pair in 16 shared a slot and the second evicted the first); a third
 * lookup of the first key after both still hits, and the stored tables are what the uncached
 * search returns. */
static sched_accel eyeriss(void) {
    sched_accel a;
    hw_err err;
    json_t *nm = json_string("eyeriss_v1");
    cr_assert_eq(sched_accel_resolve(nm, "a", &a, &err), 0);
    json_decref(nm);
    return a;
}

/* a 7x7 layer of C input and K output channels */
static sched_layer layer_ck(int C, int K) {
    char txt[128];
    snprintf(txt, sizeof txt, "{\"C\":%d,\"K\":%d,\"P\":7,\"Q\":7}", C, K);
    json_t *lj = json_loads(txt, 0, NULL);
    sched_layer l;
    hw_err err;
    cr_assert_eq(sched_layer_from_json(lj, "l", &l, &err), 0, "%s", err.msg);
    json_decref(lj);
    return l;
}

Test(sched_cache, two_way_keeps_pairs_of_one_slot) {
    sched_accel a = eyeriss();
    int rows[2] = {SR_GB, SR_DRAM};
    for (int i = 0; i < 48; i++) {
        sched_bfcache *c = sched_bfcache_new(16);
        sched_layer l[2];
        for (int j = 0; j < 2; j++) l[j] = layer_ck(4 + 4 * i, 8 + 8 * j);
        sched_table want[2];
        for (int k = 0; k < 5; k++) {
            int j = k % 2 == 0 ? 0 : 1;
            if (k == 4) j = 0;
            sched_table t;
            sched_table_init(&l[j], &t);
            sched_bf_stats st;
            cr_assert_eq(sched_bruteforce_cached(c, &a, &l[j], &t, 2, rows, SOBJ_ENERGY, -1, NULL, &st), 0);
            if (k < 2) {
                cr_assert_eq(st.cache_hits, 0, "pair %d lookup %d: a hit on a fresh key", i, k);
                sched_table u;
                sched_table_init(&l[j], &u);
                cr_assert_eq(sched_bruteforce(&a, &l[j], &u, 2, rows, SOBJ_ENERGY, -1, NULL, NULL), 0);
                cr_assert_eq(memcmp(t.f, u.f, sizeof t.f), 0);
                want[j] = t;
            } else {
                cr_assert_eq(st.cache_hits, 1, "pair %d lookup %d (key %d): evicted", i, k, j);
                cr_assert_eq(memcmp(t.f, want[j].f, sizeof t.f), 0);
            }
        }
        sched_bfcache_free(c);
    }
}

/* the same cost, byte for byte (the doubles, then the bound row; not the struct's padding) */
static void same_cost(const sched_cost *x, const sched_cost *y, const char *what) {
    cr_assert_eq(memcmp(x, y, offsetof(sched_cost, bound_row)), 0, "%s: the cost differs from a fresh evaluation's", what);
    cr_assert_eq(x->bound_row, y->bound_row, "%s: bound row", what);
}

/* A hit returns the result's cost without the cost model (kept with the entry in a ring of an
 * eighth as many places as slots), equal to evaluating the returned table: after a miss that
 * asked for the cost, after one that did not (the first hit evaluates and keeps it), and for
 * entries whose ring place was since taken by others (evaluated again). */
Test(sched_cache, a_hit_returns_the_cost_a_fresh_evaluation_does) {
    sched_accel a = eyeriss();
    sched_bfcache *c = sched_bfcache_new(256); /* a ring of 32 costs, for 40 entries */
    int rows[2] = {SR_GB, SR_DRAM};
    enum { NL = 40 };
    sched_layer l[NL];
    for (int j = 0; j < NL; j++) l[j] = layer_ck(8 + 4 * (j % 20), 16 + 16 * (j / 20));
    long long hits = 0;
    for (int round = 0; round < 4; round++)
        for (int j = 0; j < NL; j++) {
            sched_table t;
            sched_table_init(&l[j], &t);
            sched_cost got, want;
            sched_bf_stats st;
            /* round 0 stores half the layers with their cost, half without */
            bool ask = round > 0 || j % 2;
            cr_assert_eq(sched_bruteforce_cached(c, &a, &l[j], &t, 2, rows, SOBJ_ENERGY, -1, ask ? &got : NULL, &st), 0);
            hits += st.cache_hits;
            if (!ask) continue;
            sched_cost_eval(&a, &l[j], &t, &want);
            char what[64];
            snprintf(what, sizeof what, "round %d layer %d (hit %lld)", round, j, st.cache_hits);
            same_cost(&got, &want, what);
        }
    cr_assert_geq(hits, 2 * NL, "only %lld hits", hits); /* (a few keys may share a slot pair) */
    sched_bfcache_free(c);
}

/* The memo's key hash takes a four-byte group of a small number and three zero bytes in one step:
 * it must be byte-at-a-time FNV-1a's value, on random bytes with many such groups, at every length
 * (the trailing bytes past the last group too). */
Test(sched_cache, key_hash_is_fnv1a) {
    unsigned char buf[203];
    unsigned long long rs = 42;
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = (size_t)(trial % 203);
        for (size_t i = 0; i < n; i++) {
            rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned r = (unsigned)(rs >> 33);
            buf[i] = (i % 4 == 0 || r % 5 == 0) ? (unsigned char)(r >> 8) : 0; /* mostly small groups */
        }
        uint64_t want = 1469598103934665603ULL;
        for (size_t i = 0; i < n; i++) want = (want ^ buf[i]) * 1099511628211ULL;
        cr_assert_eq(sched_bfcache_fnv1a(buf, n), want, "trial %d, %zu bytes", trial, n);
    }
}

/* one lookup through a hinted memo and an always-hashing one (sched_bfcache_use_hints false): the
 * same return, table, cost and stats */
static void both(sched_bfcache *ch, sched_bfcache *cn, const sched_accel *a, const sched_layer *l, const sched_table *t0, int n,
                 const int *rows, int obj, int sec, sched_table *out, const char *what) {
    sched_table th = *t0, tn = *t0;
    sched_cost kh, kn;
    sched_bf_stats sh, sn;
    int rh = sched_bruteforce_cached(ch, a, l, &th, n, rows, obj, sec, &kh, &sh);
    int rn = sched_bruteforce_cached(cn, a, l, &tn, n, rows, obj, sec, &kn, &sn);
    cr_assert_eq(rh, rn, "%s: return", what);
    cr_assert_eq(memcmp(&th, &tn, sizeof th), 0, "%s: the hinted memo returned another table", what);
    cr_assert_eq(memcmp(&sh, &sn, sizeof sh), 0, "%s: stats (hit %lld against %lld)", what, sh.cache_hits, sn.cache_hits);
    if (rh == 0) same_cost(&kh, &kn, what);
    if (out) *out = th;
}

/* The hint: a lookup right after the one that returned slot X, with the same rows, tries the slot
 * the hint names first. Keys that differ from the hinted slot's in one field only (loop order,
 * objective, secondary objective, layer dimensions, stride, one factor) must not hit it: each is
 * looked up as K0 (sets X), K1 (stored, hinted), K0, K1 (found through the hint), K0, then K1
 * changed, in a hinted and an
 * always-hashing memo, which must agree on every lookup. Then random walks (states revisited,
 * so hints are taken) in a 16-slot memo, where evictions leave hints naming slots that now hold
 * other keys, and in a large one. */
Test(sched_cache, hinted_lookups_equal_hashed_ones, .timeout = 60) {
    sched_accel a = eyeriss();
    sched_layer l0 = layer_ck(16, 32), l1 = layer_ck(16, 64), l2 = l0;
    l2.stride = 2;
    int r2[2] = {SR_GB, SR_DRAM}, r3[3] = {SR_LB, SR_GB, SR_DRAM};
    sched_table t0;
    sched_table_init(&l0, &t0);
    for (int v = 0; v < 6; v++) {
        sched_bfcache *ch = sched_bfcache_new(4096), *cn = sched_bfcache_new(4096);
        sched_bfcache_use_hints(cn, false);
        sched_table k1;
        both(ch, cn, &a, &l0, &t0, 2, r2, SOBJ_ENERGY, -1, &k1, "K0");
        both(ch, cn, &a, &l0, &k1, 3, r3, SOBJ_ENERGY, -1, NULL, "K1");
        both(ch, cn, &a, &l0, &t0, 2, r2, SOBJ_ENERGY, -1, NULL, "K0 again");
        both(ch, cn, &a, &l0, &k1, 3, r3, SOBJ_ENERGY, -1, NULL, "K1 again");
        cr_assert_eq(sched_bfcache_hint_hits(ch), 1, "variant %d: K1 again was not found through the hint", v);
        both(ch, cn, &a, &l0, &t0, 2, r2, SOBJ_ENERGY, -1, NULL, "K0 third");
        sched_table t = k1;
        const sched_layer *l = &l0;
        int obj = SOBJ_ENERGY, sec = -1;
        if (v == 0) t.ord[SR_GB][0] = 3, t.ord[SR_GB][1] = 1, t.ord[SR_GB][2] = 2;
        for (int i = 3; v == 0 && i < SCHED_NDIM; i++) t.ord[SR_GB][i] = (unsigned char)(i + 1);
        if (v == 1) obj = SOBJ_CYCLES;
        if (v == 2) sec = SOBJ_CYCLES;
        if (v == 3) l = &l1;
        if (v == 4) l = &l2;
        if (v == 5) { /* a factor of K moved from DRAM to GB */
            cr_assert_eq(t.f[SR_DRAM][SD_K] % 2, 0);
            t.f[SR_DRAM][SD_K] /= 2, t.f[SR_GB][SD_K] *= 2;
        }
        char what[32];
        snprintf(what, sizeof what, "K1 changed (%d)", v);
        both(ch, cn, &a, l, &t, 3, r3, obj, sec, NULL, what);
        both(ch, cn, &a, &l0, &t0, 2, r2, SOBJ_ENERGY, -1, NULL, "K0 last");
        both(ch, cn, &a, &l0, &k1, 3, r3, SOBJ_ENERGY, -1, NULL, "K1 last");
        sched_bfcache_free(ch);
        sched_bfcache_free(cn);
    }
    /* random walks: 40 episodes of 12 steps over 4 layers, the actions drawn from 3 seeds */
    static const long sizes[2] = {16, 4096};
    for (int z = 0; z < 2; z++) {
        sched_bfcache *ch = sched_bfcache_new(sizes[z]), *cn = sched_bfcache_new(sizes[z]);
        sched_bfcache_use_hints(cn, false);
        sched_layer L[4] = {layer_ck(16, 32), layer_ck(32, 16), layer_ck(16, 32), layer_ck(8, 64)};
        L[2].stride = 2;
        for (int ep = 0; ep < 40; ep++) {
            const sched_layer *l = &L[ep % 4];
            sched_table t;
            sched_table_init(l, &t);
            unsigned long long rs = (unsigned long long)(ep % 3) + 1;
            int r = SR_DRAM;
            for (int step = 0; step < 12; step++) {
                rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
                int act = -1;
                for (int k = (int)((rs >> 33) % SCHED_NACT), tries = 0; tries < SCHED_NACT && act < 0; tries++, k = (k + 1) % SCHED_NACT)
                    if (sched_action_valid(&a, k, r)) act = k;
                cr_assert_geq(act, 0);
                int rows[3], n = sched_action_rows(act, r, rows);
                char what[64];
                snprintf(what, sizeof what, "memo %ld episode %d step %d", sizes[z], ep, step);
                both(ch, cn, &a, l, &t, n, rows, ep % 5 == 4 ? SOBJ_CYCLES : SOBJ_ENERGY, -1, &t, what);
                do r = (r + 1) % SCHED_NROW;
                while (!a.present[r]);
            }
        }
        long long hh, nh, hn, nn;
        sched_bfcache_counts(ch, &hh, &nh);
        sched_bfcache_counts(cn, &hn, &nn);
        cr_assert_eq(hh, hn);
        cr_assert_eq(nh, nn);
        cr_assert_gt(sched_bfcache_hint_hits(ch), z ? hh / 2 : 0, "memo %ld: %lld of %lld hits through the hint", sizes[z],
                     sched_bfcache_hint_hits(ch), hh);
        cr_assert_eq(sched_bfcache_hint_hits(cn), 0);
        sched_bfcache_free(ch);
        sched_bfcache_free(cn);
    }
}

/* sched_action_rows: actions 0-9 pair a row with the current one, 10-54 are the pairs (i, j),
 * i < j, in order, with the current row third; anything else names no rows */
Test(sched_cache, action_rows_are_the_pairs_in_order) {
    for (int r = 0; r < SCHED_NROW; r++) {
        int act = 10;
        for (int i = 0; i < SCHED_NROW; i++)
            for (int j = i + 1; j < SCHED_NROW; j++, act++) {
                int rows[3];
                cr_assert_eq(sched_action_rows(act, r, rows), 3);
                cr_assert(rows[0] == i && rows[1] == j && rows[2] == r, "action %d: %d %d %d", act, rows[0], rows[1], rows[2]);
            }
        cr_assert_eq(act, SCHED_NACT);
        for (int k = 0; k < 10; k++) {
            int rows[3];
            cr_assert_eq(sched_action_rows(k, r, rows), 2);
            cr_assert(rows[0] == k && rows[1] == r);
        }
        int rows[3];
        cr_assert_eq(sched_action_rows(SCHED_NACT, r, rows), 0);
        cr_assert_eq(sched_action_rows(1000, r, rows), 0);
    }
}

/* The brief (sched_bruteforce_cached_brief, what the env keeps): over the same lookups as a memo
 * returning whole costs, in a 256-slot memo whose ring (32 places) holds fewer costs than the 40
 * keys, the same tables and stats, and the four figures of a fresh evaluation of the returned
 * table, bit for bit (from the ring on most hits, evaluated again on the others); also without a
 * memo. */
Test(sched_cache, brief_lookups_equal_whole_costs) {
    sched_accel a = eyeriss();
    sched_bfcache *cw = sched_bfcache_new(256), *cb = sched_bfcache_new(256);
    int rows[2] = {SR_GB, SR_DRAM};
    enum { NL = 40 };
    sched_layer l[NL];
    for (int j = 0; j < NL; j++) l[j] = layer_ck(8 + 4 * (j % 20), 16 + 16 * (j / 20));
    for (int round = 0; round < 4; round++)
        for (int j = 0; j < NL; j++) {
            sched_table tw, tb;
            sched_table_init(&l[j], &tw);
            tb = tw;
            sched_cost whole, fresh;
            sched_cost_brief b;
            sched_bf_stats sw, sb;
            cr_assert_eq(sched_bruteforce_cached(cw, &a, &l[j], &tw, 2, rows, SOBJ_ENERGY, -1, &whole, &sw), 0);
            cr_assert_eq(sched_bruteforce_cached_brief(round == 3 ? NULL : cb, &a, &l[j], &tb, 2, rows, SOBJ_ENERGY, -1, &b, &sb), 0);
            cr_assert_eq(memcmp(&tw, &tb, sizeof tw), 0, "round %d layer %d: tables differ", round, j);
            if (round < 3) cr_assert_eq(memcmp(&sw, &sb, sizeof sw), 0, "round %d layer %d: stats differ", round, j);
            sched_cost_eval(&a, &l[j], &tb, &fresh);
            const double want[4] = {fresh.energy_pj, fresh.cycles, fresh.edp, fresh.utilisation},
                         got[4] = {b.energy_pj, b.cycles, b.edp, b.utilisation};
            cr_assert_eq(memcmp(got, want, sizeof want), 0, "round %d layer %d: the brief is not a fresh evaluation's", round, j);
            cr_assert_eq(b.energy_pj, whole.energy_pj);
            cr_assert_eq(sched_brief_objective(&b, SOBJ_ENERGY), sched_objective(&fresh, SOBJ_ENERGY));
            cr_assert_eq(sched_brief_objective(&b, SOBJ_CYCLES), sched_objective(&fresh, SOBJ_CYCLES));
            cr_assert_eq(sched_brief_objective(&b, SOBJ_EDP), sched_objective(&fresh, SOBJ_EDP));
        }
    long long hits, lookups;
    sched_bfcache_counts(cb, &hits, &lookups);
    cr_assert_geq(hits, 2 * NL, "only %lld hits", hits);
    sched_bfcache_free(cw);
    sched_bfcache_free(cb);
}
