/* lb_stats.c - the leaderboard's statistics (see lb_stats.h for the definitions). */
#include "lb_stats.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double lbs_normalise(double raw, double lo, double hi) {
    /* a scale narrower than rounding (the random control's mean already is the best known score,
     * up to the last bits of a mean): no room to normalise in; reaching it is 0, falling short -1 */
    double tol = 1e-9 * fmax(fabs(hi), fabs(lo));
    if (hi > lo && hi - lo <= tol) return raw >= lo - tol ? 0.0 : -1.0;
    if (!(hi > lo)) return raw > lo ? 1.0 : 0.0;
    return (raw - lo) / (hi - lo);
}

/* IQM of sorted data */
static double iqm_sorted(const double *x, size_t n) {
    if (n == 0) return NAN;
    size_t cut = n / 4; /* int(0.25 * n) */
    double sum = 0;
    for (size_t i = cut; i < n - cut; i++) sum += x[i];
    return sum / (double)(n - 2 * cut);
}

double lbs_iqm(const double *x, size_t n) {
    if (n == 0) return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, x, n * sizeof *c);
    gsl_sort(c, 1, n);
    double r = iqm_sorted(c, n);
    free(c);
    return r;
}

static size_t set_runs(const lbs_set *s) {
    size_t n = 0;
    for (size_t t = 0; t < s->ntask; t++) n += s->n[t];
    return n;
}

/* all runs of the set in one array (caller frees); NULL when empty or out of memory */
static double *pool(const lbs_set *s, size_t *n) {
    *n = set_runs(s);
    if (*n == 0) return NULL;
    double *p = malloc(*n * sizeof *p);
    if (!p) return NULL;
    size_t k = 0;
    for (size_t t = 0; t < s->ntask; t++)
        for (size_t i = 0; i < s->n[t]; i++) p[k++] = s->s[t][i];
    return p;
}

double lbs_set_iqm(const lbs_set *s) {
    size_t n;
    double *p = pool(s, &n);
    if (!p) return NAN;
    gsl_sort(p, 1, n);
    double r = iqm_sorted(p, n);
    free(p);
    return r;
}

double lbs_profile(const lbs_set *s, double tau) {
    size_t n = 0, above = 0;
    for (size_t t = 0; t < s->ntask; t++)
        for (size_t i = 0; i < s->n[t]; i++, n++) above += s->s[t][i] > tau;
    return n ? (double)above / (double)n : NAN;
}

/* P(x > y) for one task: Mann-Whitney U / (n m), ties 1/2 */
static double poi_task(const double *x, size_t n, const double *y, size_t m) {
    double u = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) u += x[i] > y[j] ? 1.0 : x[i] == y[j] ? 0.5 : 0.0;
    return u / ((double)n * (double)m);
}

double lbs_poi(const lbs_set *x, const lbs_set *y) {
    double sum = 0;
    size_t k = 0;
    size_t nt = x->ntask < y->ntask ? x->ntask : y->ntask;
    for (size_t t = 0; t < nt; t++) {
        if (!x->n[t] || !y->n[t]) continue;
        sum += poi_task(x->s[t], x->n[t], y->s[t], y->n[t]);
        k++;
    }
    return k ? sum / (double)k : NAN;
}

/* ---- stratified bootstrap ---- */

/* A resampling buffer shaped like `src`: same tasks, same run counts. */
typedef struct {
    lbs_set set;
    double **rows;
} resample;

static int resample_init(resample *r, const lbs_set *src) {
    memset(r, 0, sizeof *r);
    r->rows = calloc(src->ntask ? src->ntask : 1, sizeof *r->rows);
    if (!r->rows) return -1;
    for (size_t t = 0; t < src->ntask; t++)
        if (src->n[t] && !(r->rows[t] = malloc(src->n[t] * sizeof **r->rows))) return -1;
    r->set.ntask = src->ntask;
    r->set.n = src->n;
    r->set.s = (const double *const *)r->rows;
    return 0;
}

static void resample_free(resample *r, size_t ntask) {
    if (r->rows)
        for (size_t t = 0; t < ntask; t++) free(r->rows[t]);
    free(r->rows);
}

/* draws every task's runs with replacement from src */
static void resample_draw(resample *r, const lbs_set *src, gsl_rng *rng) {
    for (size_t t = 0; t < src->ntask; t++)
        for (size_t i = 0; i < src->n[t]; i++) r->rows[t][i] = src->s[t][gsl_rng_uniform_int(rng, src->n[t])];
}

typedef double (*stat2_fn)(const lbs_set *a, const lbs_set *b, const void *ctx);

/* The percentile interval of stat(a*, b*) over reps replicates; b may be NULL (one-set stats). */
static int bootstrap(const lbs_set *a, const lbs_set *b, stat2_fn stat, const void *ctx, size_t reps, uint64_t seed,
                     double alpha, lbs_ci *out) {
    out->point = stat(a, b, ctx);
    out->lo = out->hi = NAN;
    if (isnan(out->point) || reps == 0) return isnan(out->point) ? -1 : 0;
    resample ra, rb;
    double *v = malloc(reps * sizeof *v);
    int bad = (v == NULL) | resample_init(&ra, a) | (b ? resample_init(&rb, b) : 0);
    gsl_rng *rng = bad ? NULL : gsl_rng_alloc(gsl_rng_mt19937);
    if (rng) {
        gsl_rng_set(rng, (unsigned long)seed);
        for (size_t k = 0; k < reps; k++) {
            resample_draw(&ra, a, rng);
            if (b) resample_draw(&rb, b, rng);
            v[k] = stat(&ra.set, b ? &rb.set : NULL, ctx);
        }
        gsl_sort(v, 1, reps);
        out->lo = gsl_stats_quantile_from_sorted_data(v, 1, reps, alpha / 2);
        out->hi = gsl_stats_quantile_from_sorted_data(v, 1, reps, 1 - alpha / 2);
        gsl_rng_free(rng);
    }
    resample_free(&ra, a->ntask);
    if (b) resample_free(&rb, b->ntask);
    free(v);
    return rng ? 0 : -1;
}

static double st_iqm(const lbs_set *a, const lbs_set *b, const void *ctx) {
    (void)b, (void)ctx;
    return lbs_set_iqm(a);
}
static double st_profile(const lbs_set *a, const lbs_set *b, const void *ctx) {
    (void)b;
    return lbs_profile(a, *(const double *)ctx);
}
static double st_poi(const lbs_set *a, const lbs_set *b, const void *ctx) {
    (void)ctx;
    return lbs_poi(a, b);
}

int lbs_iqm_ci(const lbs_set *s, size_t reps, uint64_t seed, double alpha, lbs_ci *out) {
    return bootstrap(s, NULL, st_iqm, NULL, reps, seed, alpha, out);
}

int lbs_profile_ci(const lbs_set *s, double tau, size_t reps, uint64_t seed, double alpha, lbs_ci *out) {
    return bootstrap(s, NULL, st_profile, &tau, reps, seed, alpha, out);
}

int lbs_poi_ci(const lbs_set *x, const lbs_set *y, size_t reps, uint64_t seed, double alpha, lbs_ci *out) {
    return bootstrap(x, y, st_poi, NULL, reps, seed, alpha, out);
}
