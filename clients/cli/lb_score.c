/* lb_score.c - see lb_score.h */
#include "lb_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lb_curve.h"
#include "lb_stats.h"

#define BOOT_SEED 20211129u /* fixed: the page is a deterministic function of the file */
#define NPROFILE 25         /* tau points of a performance profile, 0 .. 1.2 */

enum { AT_SMALL, AT_EVAL, AT_CPU };

/* one agent variant's normalised scores over a set of envs (the tasks) */
typedef struct {
    size_t ntask;
    size_t *n;
    double **rows;
    lbs_set set;
} gathered;

static int gather_init(gathered *g, size_t ntask, int seeds) {
    memset(g, 0, sizeof *g);
    g->ntask = ntask;
    g->n = calloc(ntask ? ntask : 1, sizeof *g->n);
    g->rows = calloc(ntask ? ntask : 1, sizeof *g->rows);
    if (!g->n || !g->rows) return -1;
    for (size_t i = 0; i < ntask; i++)
        if (!(g->rows[i] = calloc((size_t)seeds, sizeof **g->rows))) return -1;
    g->set.ntask = ntask;
    g->set.n = g->n;
    g->set.s = (const double *const *)g->rows;
    return 0;
}

static void gather_free(gathered *g) {
    for (size_t i = 0; g->rows && i < g->ntask; i++) free(g->rows[i]);
    free(g->rows);
    free(g->n);
}

/* fills g with variant v's normalised scores on envs[0..ne) at (at, k) */
static void gather(gathered *g, const lb_table *t, const size_t *envs, size_t ne, size_t v, int at, int k) {
    for (size_t i = 0; i < ne; i++) {
        size_t e = envs[i];
        g->n[i] = 0;
        for (int sd = 0; sd < t->s->seeds; sd++) {
            lb_curve *c = lb_table_cell(t, e, v, sd);
            if (!c) continue;
            double raw = at == AT_SMALL ? c->small : at == AT_EVAL ? c->ev[k] : c->cpu[k];
            double lo = at == AT_SMALL ? t->lo_small[e] : at == AT_EVAL ? t->lo_ev[e * LB_GRID + (size_t)k] : t->lo_cpu[e * LB_GRID + (size_t)k];
            g->rows[i][g->n[i]++] = lb_table_norm(t, e, raw, lo);
        }
    }
}

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *ci_json(const lbs_ci *c) { return json_pack("{s:o,s:o,s:o}", "point", num(c->point), "lo", num(c->lo), "hi", num(c->hi)); }

static size_t runs_of(const gathered *g) {
    size_t n = 0;
    for (size_t i = 0; i < g->ntask; i++) n += g->n[i];
    return n;
}

static json_t *iqm_at(const lb_table *t, const size_t *envs, size_t ne, size_t v, int at, int k, size_t *runs) {
    gathered g;
    lbs_ci ci = {NAN, NAN, NAN};
    if (!gather_init(&g, ne, t->s->seeds)) {
        gather(&g, t, envs, ne, v, at, k);
        *runs = runs_of(&g);
        lbs_iqm_ci(&g.set, t->s->bootstrap, BOOT_SEED + v, 0.05, &ci);
    }
    gather_free(&g);
    return ci_json(&ci);
}

static json_t *poi_at(const lb_table *t, const size_t *envs, size_t ne, size_t vx, size_t vy, int at, int k) {
    gathered gx, gy;
    lbs_ci ci = {NAN, NAN, NAN};
    if (!gather_init(&gx, ne, t->s->seeds) && !gather_init(&gy, ne, t->s->seeds)) {
        gather(&gx, t, envs, ne, vx, at, k);
        gather(&gy, t, envs, ne, vy, at, k);
        lbs_poi_ci(&gx.set, &gy.set, t->s->bootstrap, BOOT_SEED + 7 * vx + vy, 0.05, &ci);
    }
    gather_free(&gx);
    gather_free(&gy);
    return ci_json(&ci);
}

static json_t *profile_of(const lb_table *t, const size_t *envs, size_t ne, size_t v) {
    gathered g;
    json_t *out = json_array();
    if (!gather_init(&g, ne, t->s->seeds)) {
        gather(&g, t, envs, ne, v, AT_EVAL, LB_GRID - 1);
        for (int i = 0; i < NPROFILE; i++) {
            double tau = 1.2 * i / (NPROFILE - 1);
            json_array_append_new(out, json_pack("[f,o]", tau, num(lbs_profile(&g.set, tau))));
        }
    }
    gather_free(&g);
    return out;
}

static bool has_cells(const lb_table *t, const size_t *envs, size_t ne, size_t v) {
    for (size_t i = 0; i < ne; i++)
        for (int sd = 0; sd < t->s->seeds; sd++)
            if (lb_table_cell(t, envs[i], v, sd)) return true;
    return false;
}

static json_t *variant_json(const lb_table *t, const size_t *envs, size_t ne, size_t v) {
    const lb_agent *a = &t->s->agents[v / 2];
    char vn[128];
    size_t runs = 0, r2;
    json_t *j = json_pack("{s:s,s:s,s:b,s:b}", "variant", lb_variant_name(a, v % 2, vn, sizeof vn), "label", a->label, "off",
                          (int)(v % 2), "learning", a->off != NULL);
    json_object_set_new(j, "small", iqm_at(t, envs, ne, v, AT_SMALL, 0, &r2));
    json_object_set_new(j, "large", iqm_at(t, envs, ne, v, AT_EVAL, LB_GRID - 1, &runs));
    json_object_set_new(j, "runs", json_integer((json_int_t)runs));
    json_t *ce = json_array(), *cc = json_array();
    for (int k = 0; k < LB_GRID; k++) {
        json_array_append_new(ce, iqm_at(t, envs, ne, v, AT_EVAL, k, &r2));
        json_array_append_new(cc, iqm_at(t, envs, ne, v, AT_CPU, k, &r2));
    }
    json_object_set_new(j, "curve_evals", ce);
    json_object_set_new(j, "curve_cpu", cc);
    json_object_set_new(j, "profile", profile_of(t, envs, ne, v));
    return j;
}

static double point_of(json_t *v, const char *budget) { return json_real_value(json_object_get(json_object_get(v, budget), "point")); }

static const char *best_variant(json_t *variants, const char *budget) {
    const char *best = NULL;
    double bv = -INFINITY;
    size_t i;
    json_t *v;
    json_array_foreach(variants, i, v) {
        double p = point_of(v, budget);
        if (json_is_true(json_object_get(v, "off"))) continue;
        if (isfinite(p) && p > bv) bv = p, best = json_string_value(json_object_get(v, "variant"));
    }
    return best;
}

/* the envs of family f (by env id), into envs; returns the count */
static size_t family_envs(const lb_suite *s, const char *fam, size_t *envs) {
    size_t n = 0;
    for (size_t e = 0; e < s->nenvs; e++)
        if (!strcmp(s->envs[e].env, fam)) envs[n++] = e;
    return n;
}

static json_t *families_json(const lb_table *t, json_t **learning) {
    const lb_suite *s = t->s;
    json_t *out = json_array();
    size_t *envs = calloc(s->nenvs, sizeof *envs);
    for (size_t e = 0; envs && e < s->nenvs; e++) {
        bool seen = false;
        for (size_t p = 0; p < e; p++) seen |= !strcmp(s->envs[p].env, s->envs[e].env);
        if (seen) continue;
        size_t ne = family_envs(s, s->envs[e].env, envs);
        json_t *names = json_array(), *vars = json_array();
        for (size_t i = 0; i < ne; i++) json_array_append_new(names, json_string(s->envs[envs[i]].name));
        for (size_t v = 0; v < t->nv; v++) {
            if (!has_cells(t, envs, ne, v)) continue;
            json_array_append_new(vars, variant_json(t, envs, ne, v));
            const lb_agent *a = &s->agents[v / 2];
            if (v % 2 == 1 && has_cells(t, envs, ne, v - 1)) {
                json_t *poi = poi_at(t, envs, ne, v - 1, v, AT_EVAL, LB_GRID - 1);
                json_t *poi_s = poi_at(t, envs, ne, v - 1, v, AT_SMALL, 0);
                double lo = json_real_value(json_object_get(poi, "lo")), hi = json_real_value(json_object_get(poi, "hi"));
                const char *verdict = lo > 0.5 ? "beats" : hi < 0.5 ? "worse" : "not shown";
                json_array_append_new(*learning, json_pack("{s:s,s:s,s:s,s:o,s:o,s:s}", "agent", a->name, "label", a->label, "family",
                                                           s->envs[e].env, "poi_large", poi, "poi_small", poi_s, "verdict", verdict));
            }
        }
        const char *bs = best_variant(vars, "small"), *bl = best_variant(vars, "large");
        json_array_append_new(out, json_pack("{s:s,s:o,s:o,s:s?,s:s?}", "family", s->envs[e].env, "envs", names, "variants", vars,
                                             "best_small", bs, "best_large", bl));
    }
    free(envs);
    return out;
}

static json_t *papers_json(const lb_table *t) {
    const lb_suite *s = t->s;
    json_t *out = json_array();
    size_t *envs = calloc(s->nenvs, sizeof *envs);
    for (size_t p = 0; envs && p < s->npapers; p++) {
        const lb_paper *q = &s->papers[p];
        size_t va = 2 * (size_t)(lb_suite_agent(s, q->agent) - s->agents), ne = 0;
        for (size_t e = 0; e < s->nenvs; e++) {
            bool listed = json_array_size(q->envs) == 0;
            size_t i;
            json_t *n;
            json_array_foreach(q->envs, i, n) listed |= !strcmp(json_string_value(n), s->envs[e].name);
            if (listed && has_cells(t, &e, 1, va)) envs[ne++] = e;
        }
        json_t *rows = json_array(), *en = json_array();
        for (size_t i = 0; i < ne; i++) json_array_append_new(en, json_string(s->envs[envs[i]].name));
        size_t i, r;
        json_t *b;
        json_array_foreach(q->baselines, i, b) {
            const lb_agent *ba = lb_suite_agent(s, json_string_value(b));
            size_t vb = 2 * (size_t)(ba - s->agents);
            if (!ne || !has_cells(t, envs, ne, vb)) continue;
            json_array_append_new(rows, json_pack("{s:s,s:s,s:o,s:o,s:o}", "baseline", ba->name, "label", ba->label, "poi_small",
                                                  poi_at(t, envs, ne, va, vb, AT_SMALL, 0), "poi_large",
                                                  poi_at(t, envs, ne, va, vb, AT_EVAL, LB_GRID - 1), "iqm_large",
                                                  iqm_at(t, envs, ne, vb, AT_EVAL, LB_GRID - 1, &r)));
        }
        json_array_append_new(out, json_pack("{s:s,s:s,s:o,s:o,s:o}", "name", q->name, "agent", q->agent, "envs", en, "iqm_large",
                                             ne ? iqm_at(t, envs, ne, va, AT_EVAL, LB_GRID - 1, &r) : json_null(), "rows", rows));
    }
    free(envs);
    return out;
}

static json_t *envs_json(const lb_table *t) {
    json_t *out = json_array();
    for (size_t e = 0; e < t->s->nenvs; e++) {
        const lb_env *env = &t->s->envs[e];
        json_t *j = json_pack("{s:s,s:s,s:O,s:s,s:s}", "name", env->name, "env", env->env, "config",
                              env->config ? env->config : json_object(), "score", env->score, "random", env->random);
        json_object_set_new(j, "random_small", num(t->lo_small[e]));
        json_object_set_new(j, "random_large", num(t->lo_ev[e * LB_GRID + LB_GRID - 1]));
        json_object_set_new(j, "best", num(t->hi[e]));
        json_object_set_new(j, "best_is", json_string(t->hi_is_optimum[e]                                ? "the declared optimum"
                                                     : env->has_known && t->hi[e] == env->known ? "the declared best known design"
                                                                                                : "the best score logged"));
        json_object_set_new(j, "small", json_integer((json_int_t)env->budget.small));
        json_object_set_new(j, "evals", json_integer((json_int_t)env->budget.evals));
        json_object_set_new(j, "cpu_s", json_real(env->budget.cpu_s));
        json_array_append_new(out, j);
    }
    return out;
}

static json_t *failed_json(sqlite3 *db) {
    json_t *out = json_array();
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT key, status, coalesce(error, '') FROM leaderboard_cells WHERE status != 0 ORDER BY key", -1, &st,
                           NULL) != SQLITE_OK)
        return out;
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(out, json_pack("{s:s,s:i,s:s}", "key", (const char *)sqlite3_column_text(st, 0), "status",
                                             sqlite3_column_int(st, 1), "error", (const char *)sqlite3_column_text(st, 2)));
    sqlite3_finalize(st);
    return out;
}

json_t *lb_score(const lb_suite *s, sqlite3 *db, hw_err *err) {
    lb_table t;
    if (lb_table_load(&t, s, db, err)) {
        lb_table_free(&t);
        return NULL;
    }
    size_t ncells;
    free(lb_suite_cells(s, &ncells));
    json_t *learning = json_array();
    json_t *fam = families_json(&t, &learning);
    json_t *out = json_pack("{s:s,s:i,s:I,s:{s:I,s:I,s:I},s:o,s:o,s:o,s:o,s:o,s:i}", "suite", s->name, "seeds", s->seeds, "bootstrap",
                            (json_int_t)s->bootstrap, "cells", "total", (json_int_t)ncells, "done", (json_int_t)t.done, "failed",
                            (json_int_t)t.failed, "envs", envs_json(&t), "families", fam, "learning", learning, "papers",
                            papers_json(&t), "failed", failed_json(db), "grid", LB_GRID);
    lb_table_free(&t);
    if (!out) hw_fail(err, HW_E_INTERNAL, "building the results failed");
    return out;
}
