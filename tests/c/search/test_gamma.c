/* test_gamma.c - GAMMA's operators on maestro-v0's mapping genomes keep every gene legal and
 * do what they say; on a genome with no order/tile genes they degrade to legal edits. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

static hs_space *space_of(const char *env, const char *cfg, ag_sess **sess) {
    hw_err err = {0};
    json_t *c = json_loads(cfg, 0, NULL);
    *sess = ag_sess_make("local", env, c, NULL, 0, &err);
    json_decref(c);
    cr_assert(*sess, "%s", err.msg);
    hs_space *s = hs_space_from_hw((*sess)->act_space, &err);
    cr_assert(s, "%s", err.msg);
    return s;
}

static void legal(const hs_space *s, const double *g, const char *what) {
    for (int i = 0; i < s->dim; i++) {
        cr_assert(g[i] == floor(g[i]), "%s: gene %s = %g not an integer", what, s->names[i], g[i]);
        cr_assert(g[i] >= 0 && g[i] < (double)s->card[i], "%s: gene %s = %g outside [0, %lld)", what, s->names[i], g[i],
                  (long long)s->card[i]);
    }
}

static void random_genome(const hs_space *s, gsl_rng *r, double *g) {
    for (int i = 0; i < s->dim; i++) g[i] = (double)gsl_rng_uniform_int(r, (unsigned long)s->card[i]);
}

/* Labels a and b differ by exactly one swap of two positions. */
static bool one_swap(const char *a, const char *b) {
    size_t n = strlen(a);
    int diff[3], nd = 0;
    if (strlen(b) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (nd == 2) return false;
            diff[nd++] = (int)i;
        }
    return nd == 2 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]];
}

static void check_ops(const char *cfg, int want_order, int want_tile, int want_par) {
    ag_sess *sess;
    hs_space *s = space_of("maestro-v0", cfg, &sess);
    hs_gamma_map *m = hs_gamma_map_new(s);
    cr_expect_eq(m->norder, want_order, "order genes %d", m->norder);
    cr_expect_eq(m->ntile, want_tile, "tile genes %d", m->ntile);
    cr_expect_eq(m->npar, want_par, "parallel genes %d", m->npar);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    const int d = s->dim;
    double a[64], b[64], c[64], old[64];
    int swaps = 0, grows = 0, changed = 0;
    for (int t = 0; t < 3000; t++) {
        random_genome(s, r, a);
        random_genome(s, r, b);
        hs_gamma_crossover(s, m, r, a, b, c);
        legal(s, c, "crossover");
        for (int i = 0; i < d; i++) cr_assert(c[i] == a[i] || c[i] == b[i], "crossover invented gene %s", s->names[i]);
        memcpy(old, c, sizeof(double) * d);
        hs_gamma_mutate(s, m, r, 0.5, c);
        legal(s, c, "mutate");
        for (int k = 0; k < m->norder; k++) cr_assert_eq(c[m->order[k]], old[m->order[k]], "mutation touched a loop order");
        changed += memcmp(old, c, sizeof(double) * d) != 0;
        memcpy(old, c, sizeof(double) * d);
        hs_gamma_reorder(s, m, r, c);
        legal(s, c, "reorder");
        int nchg = 0;
        for (int i = 0; i < d; i++)
            if (c[i] != old[i]) {
                nchg++;
                bool isord = false;
                for (int k = 0; k < m->norder; k++) isord |= m->order[k] == i;
                cr_assert(isord, "reorder changed %s", s->names[i]);
                cr_assert(one_swap(s->labels[i][(int)old[i]], s->labels[i][(int)c[i]]), "reorder %s -> %s is not one swap",
                          s->labels[i][(int)old[i]], s->labels[i][(int)c[i]]);
                swaps++;
            }
        cr_assert_leq(nchg, 1);
        memcpy(old, c, sizeof(double) * d);
        hs_gamma_growth(s, m, r, c);
        legal(s, c, "growth");
        for (int i = 0; i < d; i++)
            if (c[i] != old[i]) {
                cr_assert_eq(c[i], old[i] + 1, "growth of %s: %g -> %g", s->names[i], old[i], c[i]);
                cr_assert(m->ntile == 0 || strstr(s->names[i], "tile"), "growth changed %s", s->names[i]);
                /* tile labels are ascending numbers: growth means a bigger tile */
                cr_assert_gt(atof(s->labels[i][(int)c[i]]), atof(s->labels[i][(int)old[i]]));
                grows++;
            }
    }
    if (want_order) cr_expect_gt(swaps, 2500, "reorder changed the order only %d times", swaps);
    cr_expect_gt(grows, 100);
    cr_expect_gt(changed, 1000);
    gsl_rng_free(r);
    hs_gamma_map_free(m);
    hs_space_free(s);
    ag_sess_free(sess);
}

Test(search_gamma, gamma17_genome) { check_ops("{\"model\":\"mobilenet_v2\",\"layer\":2,\"action_space\":\"gamma17\"}", 2, 12, 2); }
Test(search_gamma, marl10_genome) { check_ops("{\"model\":\"vgg16\",\"layer\":2}", 1, 6, 1); }

Test(search_gamma, dimension_aligned_crossover) {
    ag_sess *sess;
    hs_space *s = space_of("maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"action_space\":\"gamma17\"}", &sess);
    hs_gamma_map *m = hs_gamma_map_new(s);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double a[32] = {0}, b[32], c[32];
    for (int i = 0; i < s->dim; i++) b[i] = (double)(s->card[i] - 1);
    for (int t = 0; t < 500; t++) {
        hs_gamma_crossover(s, m, r, a, b, c);
        /* l1_tile_X and l2_tile_X always travel together */
        int i1 = -1, i2 = -1;
        for (int i = 0; i < s->dim; i++) {
            if (!strcmp(s->names[i], "l1_tile_X")) i1 = i;
            if (!strcmp(s->names[i], "l2_tile_X")) i2 = i;
        }
        cr_assert(i1 >= 0 && i2 >= 0);
        cr_assert_eq(c[i1] == b[i1] && b[i1] != a[i1], c[i2] == b[i2] && b[i2] != a[i2]);
        /* exactly one dimension's tiles come from b; order and parallel genes stay a's */
        int from_b = 0;
        char ch = 0;
        for (int i = 0; i < s->dim; i++)
            if (c[i] != a[i]) {
                cr_assert(m->dimch[i], "crossover changed %s", s->names[i]);
                if (ch) cr_assert_eq(m->dimch[i], ch);
                ch = m->dimch[i];
                from_b++;
            }
        cr_assert_leq(from_b, 2);
    }
    gsl_rng_free(r);
    hs_gamma_map_free(m);
    hs_space_free(s);
    ag_sess_free(sess);
}

/* No order/tile/parallel names (diag): operators still give legal genomes. */
Test(search_gamma, degrades_on_other_envs) {
    ag_sess *sess;
    hs_space *s = space_of("diag-v0", "{\"dims\":5,\"choices\":7}", &sess);
    hs_gamma_map *m = hs_gamma_map_new(s);
    cr_expect_eq(m->norder + m->ntile + m->npar, 0);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double a[5], b[5], c[5];
    int grows = 0;
    for (int t = 0; t < 2000; t++) {
        random_genome(s, r, a);
        random_genome(s, r, b);
        hs_gamma_crossover(s, m, r, a, b, c);
        hs_gamma_mutate(s, m, r, 0.2, c);
        hs_gamma_reorder(s, m, r, c);
        double old[5];
        memcpy(old, c, sizeof old);
        hs_gamma_growth(s, m, r, c);
        for (int i = 0; i < 5; i++) grows += c[i] == old[i] + 1;
        legal(s, c, "diag");
    }
    cr_expect_gt(grows, 1000);
    gsl_rng_free(r);
    hs_gamma_map_free(m);
    hs_space_free(s);
    ag_sess_free(sess);
}
