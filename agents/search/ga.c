/* ga.c - the genetic algorithm and the GAMMA-style GA (see search.h, docs/search.md). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

static void *ga_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* Indices sorted by fitness, best first (stable on ties: lower index first). */
static int ga_cmp_desc(const void *a, const void *b, void *arg) {
    const double *fit = arg;
    int i = *(const int *)a, j = *(const int *)b;
    double fi = fit[i], fj = fit[j];
    if (fi > fj) return -1;
    if (fi < fj) return 1;
    return i - j;
}
static void rank_desc(const double *fit, int n, int *idx) {
    for (int i = 0; i < n; i++) idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, ga_cmp_desc, (void *)fit);
}

/* A new value for gene i: categorical -> uniformly another choice; Box -> Gaussian step of 10%. */
static double mutate_gene(const hs_space *s, gsl_rng *rng, int i, double v) {
    if (s->card[i]) {
        if (s->card[i] < 2) return v;
        int64_t k = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(s->card[i] - 1));
        if (k >= (int64_t)v) k++;
        return (double)k;
    }
    double span = s->high[i] - s->low[i];
    /* Box-Muller from the same stream keeps us free of extra state */
    double u1 = gsl_rng_uniform_pos(rng), u2 = gsl_rng_uniform(rng);
    double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
    v += 0.1 * span * z;
    if (v < s->low[i]) v = s->low[i];
    if (v > s->high[i]) v = s->high[i];
    return v;
}

/* ---------------- GA ---------------- */

static int tournament(gsl_rng *rng, const double *fit, int n, int k) {
    int best = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
    for (int t = 1; t < k; t++) {
        int j = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
        if (fit[j] > fit[best]) best = j;
    }
    return best;
}

int hs_run_ga(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim, P = c->batch;
    int E = (int)p->ga_elite;
    if (E < 0) E = 0;
    if (E > P - 1) E = P - 1;
    int K = p->ga_tournament < 1 ? 1 : (int)p->ga_tournament;
    double mut = p->ga_mutation < 0 ? 1.0 / d : p->ga_mutation;
    double *pop = ga_xmalloc(sizeof(double) * (size_t)P * d), *next = ga_xmalloc(sizeof(double) * (size_t)P * d);
    double *fit = ga_xmalloc(sizeof(double) * P), *nfit = ga_xmalloc(sizeof(double) * P);
    int *idx = ga_xmalloc(sizeof(int) * P);
    int rc = 0;
    for (int i = 0; i < P; i++) hs_random_point(c, pop + (size_t)i * d);
    for (int i = 0; i < P; i++) fit[i] = -INFINITY;
    int got = hs_eval(c, P, pop, fit);
    if (got < 0) rc = -1;
    while (rc == 0 && hs_left(c) > 0) {
        rank_desc(fit, P, idx);
        for (int e = 0; e < E; e++) {
            memcpy(next + (size_t)e * d, pop + (size_t)idx[e] * d, sizeof(double) * d);
            nfit[e] = fit[idx[e]];
        }
        for (int k = E; k < P; k++) {
            const double *a = pop + (size_t)tournament(c->rng, fit, P, K) * d;
            const double *b = pop + (size_t)tournament(c->rng, fit, P, K) * d;
            double *ch = next + (size_t)k * d;
            bool cross = gsl_rng_uniform(c->rng) < p->ga_crossover;
            for (int g = 0; g < d; g++) ch[g] = cross && gsl_rng_uniform(c->rng) < 0.5 ? b[g] : a[g];
            for (int g = 0; g < d; g++)
                if (gsl_rng_uniform(c->rng) < mut) ch[g] = mutate_gene(s, c->rng, g, ch[g]);
            nfit[k] = -INFINITY;
        }
        got = hs_eval(c, P - E, next + (size_t)E * d, nfit + E);
        if (got < 0) rc = -1;
        double *t = pop;
        pop = next;
        next = t;
        t = fit;
        fit = nfit;
        nfit = t;
    }
    free(pop);
    free(next);
    free(fit);
    free(nfit);
    free(idx);
    return rc;
}

/* ---------------- GAMMA operators ---------------- */

static bool name_has(const char *name, const char *word) {
    char low[128];
    size_t n = strlen(name);
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = 0;
    return strstr(low, word) != NULL;
}

/* Labels of gene i are permutations of one alphabet (e.g. "KCYXRS"): returns their length, or 0. */
static int perm_labels(const hs_space *s, int i) {
    if (!s->card[i] || !s->labels[i]) return 0;
    const char *l0 = s->labels[i][0];
    size_t L = strlen(l0);
    if (L < 2 || L > 16) return 0;
    for (int64_t k = 0; k < s->card[i]; k++) {
        const char *l = s->labels[i][k];
        if (strlen(l) != L) return 0;
        for (size_t a = 0; a < L; a++) {
            if (!strchr(l0, l[a])) return 0;
            for (size_t b = a + 1; b < L; b++)
                if (l[a] == l[b]) return 0;
        }
    }
    return (int)L;
}

hs_gamma_map *hs_gamma_map_new(const hs_space *s) {
    hs_gamma_map *m = calloc(1, sizeof *m);
    if (!m) abort();
    int d = s->dim;
    m->dim = d;
    m->order = ga_xmalloc(sizeof(int) * d);
    m->tile = ga_xmalloc(sizeof(int) * d);
    m->par = ga_xmalloc(sizeof(int) * d);
    m->dimch = calloc((size_t)d, 1);
    m->level = calloc((size_t)d, sizeof(int));
    if (!m->dimch || !m->level) abort();
    for (int i = 0; i < d; i++) {
        const char *nm = s->names[i];
        if (!strncmp(nm, "l1_", 3)) m->level[i] = 1;
        else if (!strncmp(nm, "l2_", 3)) m->level[i] = 2;
        int L;
        if (name_has(nm, "order") && (L = perm_labels(s, i)) > 0) {
            m->order[m->norder++] = i;
            m->plen = L;
        } else if (name_has(nm, "tile") && s->card[i]) {
            m->tile[m->ntile++] = i;
            const char *us = strrchr(nm, '_');
            if (us && strlen(us + 1) == 1) m->dimch[i] = us[1];
        } else if (name_has(nm, "parallel") && s->card[i]) {
            m->par[m->npar++] = i;
        }
    }
    return m;
}

void hs_gamma_map_free(hs_gamma_map *m) {
    if (!m) return;
    free(m->order);
    free(m->tile);
    free(m->par);
    free(m->dimch);
    free(m->level);
    free(m);
}

static bool is_order(const hs_gamma_map *m, int g) {
    for (int k = 0; k < m->norder; k++)
        if (m->order[k] == g) return true;
    return false;
}

/* GAMMA's mutation (mutate_tile, mutate_par, mutate_pe): three tries, each with probability
 * `rate`, to re-draw one randomly picked gene that is not a loop order (tile sizes, parallel
 * dimensions, PE count, cluster size ...); loop orders change only through reorder. */
void hs_gamma_mutate(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double rate, double *g) {
    int cand = 0;
    for (int j = 0; j < s->dim; j++) cand += !is_order(m, j);
    if (cand == 0) return;
    for (int t = 0; t < 3; t++) {
        if (gsl_rng_uniform(rng) >= rate) continue;
        int k = (int)gsl_rng_uniform_int(rng, (unsigned long)cand), i;
        for (i = 0; i < s->dim; i++)
            if (!is_order(m, i) && k-- == 0) break;
        g[i] = mutate_gene(s, rng, i, g[i]);
    }
}

/* GAMMA's crossover (crossover_tile): the child is parent a with the tile sizes of ONE loop
 * dimension, picked at random, taken from parent b at every level (l1_tile_K and l2_tile_K
 * together). Without tile genes: single-point crossover. */
void hs_gamma_crossover(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, const double *a, const double *b,
                        double *child) {
    const int d = s->dim;
    memcpy(child, a, sizeof(double) * d);
    char letters[64];
    int nl = 0;
    for (int k = 0; k < m->ntile; k++) {
        char ch = m->dimch[m->tile[k]];
        if (ch && !memchr(letters, ch, (size_t)nl) && nl < 64) letters[nl++] = ch;
    }
    if (nl > 0) {
        char ch = letters[gsl_rng_uniform_int(rng, (unsigned long)nl)];
        for (int i = 0; i < d; i++)
            if (m->dimch[i] == ch) child[i] = b[i];
        return;
    }
    if (d < 2) return;
    int cut = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(d - 1));
    for (int i = cut; i < d; i++) child[i] = b[i];
}

/* GAMMA's reorder: swaps two loops of one loop-order gene (labels are the permutations). */
void hs_gamma_reorder(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double *g) {
    if (m->norder == 0 || m->plen < 2) return;
    int i = m->order[gsl_rng_uniform_int(rng, (unsigned long)m->norder)];
    const char *cur = s->labels[i][(int64_t)g[i]];
    char want[17];
    size_t L = strlen(cur);
    memcpy(want, cur, L + 1);
    int a = (int)gsl_rng_uniform_int(rng, L), b = (int)gsl_rng_uniform_int(rng, L - 1);
    if (b >= a) b++;
    char t = want[a];
    want[a] = want[b];
    want[b] = t;
    for (int64_t k = 0; k < s->card[i]; k++)
        if (!strcmp(s->labels[i][k], want)) {
            g[i] = (double)k;
            return;
        }
}

/* Growth: one tile gene moves to the next larger tile (choices are sorted ascending). GAMMA's
 * own growth (born_cluster) appends a cluster level to a variable-length genome; our genomes
 * have a fixed number of levels, so growth grows a tile instead (docs/search.md).
 * Without tile genes: any categorical gene steps up by one. */
void hs_gamma_growth(const hs_space *s, const hs_gamma_map *m, gsl_rng *rng, double *g) {
    int i = -1;
    if (m->ntile > 0) i = m->tile[gsl_rng_uniform_int(rng, (unsigned long)m->ntile)];
    else {
        int cand[1024], n = 0;
        for (int k = 0; k < s->dim && n < 1024; k++)
            if (s->card[k] && !is_order(m, k)) cand[n++] = k;
        if (n == 0) return;
        i = cand[gsl_rng_uniform_int(rng, (unsigned long)n)];
    }
    if (g[i] + 1 <= (double)(s->card[i] - 1)) g[i] += 1;
}

/* ---------------- GAMMA ---------------- */

int hs_run_gamma(hs_ctx *c) {
    const hs_space *s = c->s;
    const hs_params *p = &c->o->p;
    const int d = s->dim, P = c->batch;
    hs_gamma_map *m = hs_gamma_map_new(s);
    int E = (int)(p->gm_elite_frac * P + 0.5);
    if (E < 1) E = 1;
    if (E > P - 1) E = P - 1;
    int NP = (int)(p->gm_parent_frac * P + 0.5);
    if (NP < 2) NP = 2;
    if (NP > P) NP = P;
    double *pop = ga_xmalloc(sizeof(double) * (size_t)P * d), *next = ga_xmalloc(sizeof(double) * (size_t)P * d);
    double *fit = ga_xmalloc(sizeof(double) * P), *nfit = ga_xmalloc(sizeof(double) * P);
    int *idx = ga_xmalloc(sizeof(int) * P);
    int rc = 0;
    for (int i = 0; i < P; i++) hs_random_point(c, pop + (size_t)i * d);
    for (int i = 0; i < P; i++) fit[i] = -INFINITY;
    if (hs_eval(c, P, pop, fit) < 0) rc = -1;
    while (rc == 0 && hs_left(c) > 0) {
        rank_desc(fit, P, idx);
        for (int e = 0; e < E; e++) {
            memcpy(next + (size_t)e * d, pop + (size_t)idx[e] * d, sizeof(double) * d);
            nfit[e] = fit[idx[e]];
        }
        for (int k = E; k < P; k++) {
            const double *a = pop + (size_t)idx[gsl_rng_uniform_int(c->rng, (unsigned long)NP)] * d;
            const double *b = pop + (size_t)idx[gsl_rng_uniform_int(c->rng, (unsigned long)NP)] * d;
            double *ch = next + (size_t)k * d;
            if (gsl_rng_uniform(c->rng) < p->gm_crossover) hs_gamma_crossover(s, m, c->rng, a, b, ch);
            else memcpy(ch, a, sizeof(double) * d);
            hs_gamma_mutate(s, m, c->rng, p->gm_mutation, ch);
            if (gsl_rng_uniform(c->rng) < p->gm_reorder) hs_gamma_reorder(s, m, c->rng, ch);
            if (gsl_rng_uniform(c->rng) < p->gm_growth) hs_gamma_growth(s, m, c->rng, ch);
            nfit[k] = -INFINITY;
        }
        if (hs_eval(c, P - E, next + (size_t)E * d, nfit + E) < 0) rc = -1;
        double *t = pop;
        pop = next;
        next = t;
        t = fit;
        fit = nfit;
        nfit = t;
    }
    hs_gamma_map_free(m);
    free(pop);
    free(next);
    free(fit);
    free(nfit);
    free(idx);
    return rc;
}
