/* baselines.c - the paper's baselines in hwgym-muzero: random legal play, and the evolution
 * strategy of Salimans et al. 2017 over action sequences. ES keeps a preference vector
 * theta (one score per buffer and action); a candidate plays, at buffer t, the legal action with
 * the highest theta[t][a] + sigma * s * eps[t][a] (mirrored pairs s = +-1). Each generation of
 * `es_pop` candidates plays es_pop games at once; fitness is the game's return, shaped to centred
 * ranks; theta += lr / (pop sigma) sum_i rank_i s_i eps_i. Both play with Drop-backup like the
 * agent (same game, same rules) unless --no-backup. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mz_agent.h"

void mz_decide_random(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    for (int i = 0; i < n; i++) {
        uint8_t m = g[i]->env->st.mask;
        int legal[MZ_NACT], nl = 0;
        for (int a = 0; a < MZ_NACT; a++)
            if (m >> a & 1) legal[nl++] = a;
        act[i] = nl ? legal[ag_rng_int(A->rng, nl)] : 2;
        for (int a = 0; a < MZ_NACT; a++) pol[i * MZ_NACT + a] = a == act[i];
        val[i] = 0;
    }
}

typedef struct es_state {
    int P, D;            /* population, parameters (nbuf x 3) */
    double *theta, *eps; /* eps: P/2 x D */
    double *fit;         /* P */
    uint8_t *doneflag;   /* P: candidate finished this generation */
    int *cand;           /* per game: candidate index */
    int64_t gen;
    double best_gen_mean;
} es_state;

static void es_new_generation(mz_agent *A, es_state *s) {
    for (size_t i = 0; i < (size_t)(s->P / 2) * (size_t)s->D; i++) s->eps[i] = ag_rng_normal(A->rng);
    memset(s->doneflag, 0, (size_t)s->P);
    for (int i = 0; i < A->G; i++) s->cand[i] = i;
}

static void es_on_done(mz_agent *A, mz_game *g, double ret) {
    es_state *s = A->mode_state;
    int c = s->cand[g->idx];
    if (c < 0) return;
    s->fit[c] = ret;
    s->doneflag[c] = 1;
    s->cand[g->idx] = -1; /* waits for the generation */
    for (int i = 0; i < s->P; i++)
        if (!s->doneflag[i]) return;
    /* centred ranks */
    int *ord = malloc(sizeof(int) * (size_t)s->P);
    double *rk = malloc(sizeof(double) * (size_t)s->P);
    for (int i = 0; i < s->P; i++) ord[i] = i;
    for (int i = 0; i < s->P; i++)
        for (int j = i + 1; j < s->P; j++)
            if (s->fit[ord[j]] < s->fit[ord[i]]) {
                int t = ord[i];
                ord[i] = ord[j];
                ord[j] = t;
            }
    for (int i = 0; i < s->P; i++) rk[ord[i]] = s->P > 1 ? (double)i / (s->P - 1) - 0.5 : 0;
    double k = A->o.es_lr / (s->P * A->o.es_sigma);
    for (int i = 0; i < s->P; i++) {
        const double *e = s->eps + (size_t)(i / 2) * (size_t)s->D;
        double w = k * rk[i] * (i % 2 ? -1.0 : 1.0);
        for (int d = 0; d < s->D; d++) s->theta[d] += w * e[d];
    }
    free(ord);
    free(rk);
    s->gen++;
    es_new_generation(A, s);
}

static void es_decide(mz_agent *A, mz_game **g, int n, int *act, double *pol, double *val) {
    es_state *s = A->mode_state;
    for (int i = 0; i < n; i++) {
        val[i] = 0;
        int c = s->cand[g[i]->idx];
        if (c < 0) {
            act[i] = -1;
            continue;
        }
        int t = g[i]->env->st.buffer;
        if (t < 0 || t >= A->nbuf) t = A->nbuf - 1;
        const double *e = s->eps + (size_t)(c / 2) * (size_t)s->D + (size_t)t * MZ_NACT;
        double sg = c % 2 ? -1.0 : 1.0;
        uint8_t m = g[i]->env->st.mask;
        int best = 2;
        double bs = -INFINITY;
        for (int a = 0; a < MZ_NACT; a++) {
            if (!(m >> a & 1)) continue;
            double sc = s->theta[(size_t)t * MZ_NACT + (size_t)a] + A->o.es_sigma * sg * e[a];
            if (sc > bs) bs = sc, best = a;
        }
        act[i] = best;
        for (int a = 0; a < MZ_NACT; a++) pol[i * MZ_NACT + a] = a == best;
    }
}

int mz_setup_es(mz_agent *A, hw_err *err) {
    (void)err;
    es_state *s = calloc(1, sizeof *s);
    A->mode_state = s;
    s->P = A->G;
    s->D = A->nbuf * MZ_NACT;
    s->theta = calloc((size_t)s->D, sizeof(double));
    s->eps = calloc((size_t)(s->P / 2 > 0 ? s->P / 2 : 1) * (size_t)s->D, sizeof(double));
    s->fit = calloc((size_t)s->P, sizeof(double));
    s->doneflag = calloc((size_t)s->P, 1);
    s->cand = calloc((size_t)A->G, sizeof(int));
    A->decide = es_decide;
    A->on_done = es_on_done;
    es_new_generation(A, s);
    return 0;
}

void mz_free_es(mz_agent *A) {
    es_state *s = A->mode_state;
    if (!s) return;
    free(s->theta);
    free(s->eps);
    free(s->fit);
    free(s->doneflag);
    free(s->cand);
    free(s);
    A->mode_state = NULL;
}

int64_t mz_es_generations(const mz_agent *A) {
    const es_state *s = A->mode_state;
    return s ? s->gen : 0;
}

/* ES state for the checkpoint (ckpt.c): the preferences, the generation's noise, its fitness so
 * far, which candidate each game plays, and the counters. */
void mz_es_ckpt_put(const mz_agent *A, ag_ckpt *c) {
    const es_state *s = A->mode_state;
    size_t ne = (size_t)(s->P / 2 > 0 ? s->P / 2 : 1) * (size_t)s->D;
    ag_ckpt_put_f64(c, "es.theta", s->theta, (size_t)s->D);
    ag_ckpt_put_f64(c, "es.eps", s->eps, ne);
    ag_ckpt_put_f64(c, "es.fit", s->fit, (size_t)s->P);
    ag_ckpt_put_u8(c, "es.done", s->doneflag, (size_t)s->P);
    int64_t *cand = malloc(sizeof(int64_t) * (size_t)A->G);
    for (int i = 0; i < A->G; i++) cand[i] = s->cand[i];
    ag_ckpt_put_i64(c, "es.cand", cand, (size_t)A->G);
    free(cand);
    ag_ckpt_put_int(c, "es.gen", s->gen);
    ag_ckpt_put_real(c, "es.best_gen_mean", s->best_gen_mean);
}

int mz_es_ckpt_get(mz_agent *A, const ag_ckpt *c, hw_err *err) {
    es_state *s = A->mode_state;
    size_t ne = (size_t)(s->P / 2 > 0 ? s->P / 2 : 1) * (size_t)s->D;
    int64_t *cand = malloc(sizeof(int64_t) * (size_t)A->G);
    int rc = ag_ckpt_get_f64(c, "es.theta", s->theta, (size_t)s->D, err) || ag_ckpt_get_f64(c, "es.eps", s->eps, ne, err) ||
             ag_ckpt_get_f64(c, "es.fit", s->fit, (size_t)s->P, err) || ag_ckpt_get_u8(c, "es.done", s->doneflag, (size_t)s->P, err) ||
             ag_ckpt_get_i64(c, "es.cand", cand, (size_t)A->G, err) || ag_ckpt_get_int(c, "es.gen", &s->gen, err) ||
             ag_ckpt_get_real(c, "es.best_gen_mean", &s->best_gen_mean, err);
    if (!rc)
        for (int i = 0; i < A->G; i++) s->cand[i] = (int)cand[i];
    free(cand);
    return rc ? -1 : 0;
}
