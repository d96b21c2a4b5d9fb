/* cmd_report_html.c - `hwgym report DB --out DIR` (report_html.h). What the page holds:
 *  - a run table (one SQL aggregate over trials grouped by run);
 *  - per (env, env config) group: convergence curves, best reward so far against samples, one
 *    line per agent with the mean over its runs (seeds) and a 95% t-interval band, each run read
 *    once in order and sampled on a grid of GRID points (so a million trials make a small page);
 *    the best design (action, metrics and, for maestro-v0, its MAESTRO directives recomputed
 *    in-process from the action); the parameter correlation heatmap and dendrogram (cluster.c,
 *    the MARL paper's Figure 4) over at most MAXCORR of the group's designs.
 * Nothing is fetched: CSS and SVG are inline and there is no script. */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cluster.h"
#include "registry.h"
#include "report_html.h"

#define GRID 160
#define MAXCORR 20000

typedef struct rrun {
    long long id, seed, n, feasible, hits;
    bool has_seed, has_hits;
    char *agent, *env, *cfg;
    double best, started, ended;
    int group;
    double *at; /* best so far at the group's grid points (NaN past the run's end) */
} rrun;

typedef struct rgroup {
    char *env, *cfg;
    long long xmax, best_trial, trials;
    double best;
} rgroup;

static char *dup_col(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

static bool has_column(sqlite3 *db, const char *table, const char *col) {
    char q[128];
    snprintf(q, sizeof q, "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'", table, col);
    sqlite3_stmt *st;
    bool yes = sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static const char *CSS =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:right}"
    "th{background:#f3f3f3}td.l,th.l{text-align:left}code,pre{font-size:.85em;background:#f6f6f6}pre{padding:.5em;overflow:auto}"
    "svg.chart{width:100%;max-width:760px;height:auto}.fig{overflow:auto}"
    ".ct{font-size:14px;font-weight:bold}.tx{font-size:11px;text-anchor:middle}.ty{font-size:11px;text-anchor:end}"
    ".lg{font-size:12px}.gr{stroke:#e5e5e5}.pa{fill:none;stroke:#999}.muted{color:#777}";

static void td_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "<td>%.6g</td>", v);
    else fprintf(f, "<td class=\"muted\">-</td>");
}

static void run_table(FILE *f, rrun *r, int nr, bool any_hits) {
    fprintf(f, "<h2>Runs</h2><div class=\"fig\"><table><tr><th>run</th><th class=\"l\">agent</th><th class=\"l\">env</th>"
               "<th class=\"l\">config</th><th>seed</th><th>trials</th><th>feasible</th>%s<th>best reward</th><th>wall s</th></tr>\n",
            any_hits ? "<th>cache hits</th>" : "");
    for (int i = 0; i < nr; i++) {
        fprintf(f, "<tr><td>%lld</td><td class=\"l\">", r[i].id);
        rp_escape(f, r[i].agent);
        fprintf(f, "</td><td class=\"l\">");
        rp_escape(f, r[i].env);
        fprintf(f, "</td><td class=\"l\"><code>");
        rp_escape(f, r[i].cfg);
        fprintf(f, "</code></td><td>");
        if (r[i].has_seed) fprintf(f, "%lld", r[i].seed);
        fprintf(f, "</td><td>%lld</td><td>%lld</td>", r[i].n, r[i].feasible);
        if (any_hits) fprintf(f, "<td>%s%lld</td>", r[i].has_hits ? "" : "<span class=\"muted\">n/a</span> ", r[i].has_hits ? r[i].hits : 0LL);
        td_num(f, r[i].best);
        td_num(f, r[i].ended > 0 ? r[i].ended - r[i].started : NAN);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table></div>\n");
}

/* the group's grid: GRID sample counts up to xmax */
static long long grid_x(const rgroup *g, int k) {
    long long x = (long long)ceil((double)g->xmax * (double)(k + 1) / GRID);
    return x < 1 ? 1 : x;
}

static int read_curves(sqlite3 *db, rrun *r, int nr, rgroup *g) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, reward FROM trials WHERE run_id = ?1 ORDER BY id", -1, &st, NULL) != SQLITE_OK) return -1;
    for (int i = 0; i < nr; i++) {
        rgroup *gr = &g[r[i].group];
        r[i].at = malloc(sizeof(double) * GRID);
        if (!r[i].at) abort();
        for (int k = 0; k < GRID; k++) r[i].at[k] = NAN;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, r[i].id);
        double best = -INFINITY;
        long long n = 0;
        int k = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
            n++;
            if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
                double v = sqlite3_column_double(st, 1);
                if (isfinite(v) && v > best) best = v;
                if (isfinite(v) && (v > gr->best || gr->best_trial < 0)) {
                    gr->best = v;
                    gr->best_trial = sqlite3_column_int64(st, 0);
                }
            }
            while (k < GRID && grid_x(gr, k) == n) r[i].at[k++] = isfinite(best) ? best : NAN;
        }
    }
    sqlite3_finalize(st);
    return 0;
}

static void curves(FILE *f, rrun *r, int nr, const rgroup *g, int gi) {
    /* one series per agent: mean and 95% t-interval over the group's runs of that agent */
    const char *agents[64];
    int na = 0;
    for (int i = 0; i < nr; i++) {
        if (r[i].group != gi) continue;
        int a = 0;
        while (a < na && strcmp(agents[a], r[i].agent)) a++;
        if (a == na && na < 64) agents[na++] = r[i].agent;
    }
    rp_series *s = calloc((size_t)na + 1, sizeof *s);
    double *buf = calloc((size_t)na * 4 * GRID + 1, sizeof(double));
    char (*labels)[200] = calloc((size_t)na + 1, sizeof *labels);
    for (int a = 0; a < na; a++) {
        double *x = buf + (size_t)a * 4 * GRID, *m = x + GRID, *lo = m + GRID, *hi = lo + GRID;
        int nruns = 0;
        for (int k = 0; k < GRID; k++) {
            double sum = 0, sq = 0;
            int c = 0;
            for (int i = 0; i < nr; i++)
                if (r[i].group == gi && !strcmp(r[i].agent, agents[a]) && isfinite(r[i].at[k])) {
                    sum += r[i].at[k];
                    sq += r[i].at[k] * r[i].at[k];
                    c++;
                }
            x[k] = (double)grid_x(g, k);
            m[k] = c ? sum / c : NAN;
            double sd = c > 1 ? sqrt(fmax(0, (sq - sum * sum / c) / (c - 1))) : 0;
            double h = c > 1 ? gsl_cdf_tdist_Pinv(0.975, c - 1) * sd / sqrt(c) : 0;
            lo[k] = c ? m[k] - h : NAN;
            hi[k] = c ? m[k] + h : NAN;
            if (c > nruns) nruns = c;
        }
        snprintf(labels[a], sizeof labels[a], "%s (%d run%s)", agents[a], nruns, nruns == 1 ? "" : "s");
        s[a] = (rp_series){labels[a], GRID, x, m, nruns > 1 ? lo : NULL, nruns > 1 ? hi : NULL};
    }
    char title[300];
    snprintf(title, sizeof title, "best reward so far, mean and 95%% CI over seeds: %s", g->env);
    rp_chart(f, title, "samples", "best reward so far", s, na);
    free(s);
    free(buf);
    free(labels);
}

static void best_design(FILE *f, sqlite3 *db, const rgroup *g) {
    if (g->best_trial < 0) return;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT run_id, action, metrics, reward FROM trials WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) return;
    sqlite3_bind_int64(st, 1, g->best_trial);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *act = (const char *)sqlite3_column_text(st, 1);
        fprintf(f, "<h3>Best design</h3><p>reward <b>%.6g</b> (run %lld, trial %lld); action <code>", sqlite3_column_double(st, 3),
                (long long)sqlite3_column_int64(st, 0), g->best_trial);
        rp_escape(f, act);
        fprintf(f, "</code></p>\n");
        json_t *m = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
        if (json_is_object(m)) {
            fprintf(f, "<table><tr><th class=\"l\">metric</th><th>value</th></tr>\n");
            const char *k;
            json_t *v;
            json_object_foreach(m, k, v) {
                if (json_is_object(v) || json_is_array(v)) continue;
                fprintf(f, "<tr><td class=\"l\">");
                rp_escape(f, k);
                fprintf(f, "</td><td>");
                if (json_is_number(v)) fprintf(f, "%.6g", json_number_value(v));
                else if (json_is_string(v) && strlen(json_string_value(v)) < 80) rp_escape(f, json_string_value(v));
                else if (json_is_boolean(v)) fprintf(f, "%s", json_is_true(v) ? "true" : "false");
                fprintf(f, "</td></tr>\n");
            }
            fprintf(f, "</table>\n");
        }
        json_decref(m);
        if (!strcmp(g->env, "maestro-v0") && act) { /* the directives, recomputed from the action */
            json_t *cfg = json_loads(g->cfg, 0, NULL), *pt = json_loads(act, JSON_DECODE_ANY, NULL), *mm = json_object();
            const hw_env_family *fam;
            hw_err err;
            void *env = hw_env_create(g->env, json_is_object(cfg) ? cfg : NULL, &fam, &err);
            double r;
            if (env && pt && fam->evaluate(env, pt, &r, mm, &err) == 0 && json_is_string(json_object_get(mm, "mapping"))) {
                fprintf(f, "<p>MAESTRO directives (%lld PEs):</p><pre>", (long long)json_integer_value(json_object_get(mm, "num_pes")));
                rp_escape(f, json_string_value(json_object_get(mm, "mapping")));
                fprintf(f, "</pre>\n");
            }
            if (env) fam->destroy(env);
            json_decref(cfg);
            json_decref(pt);
            json_decref(mm);
        }
    }
    sqlite3_finalize(st);
}

static void correlation(FILE *f, sqlite3 *db, const rrun *r, int nr, const rgroup *g, int gi) {
    /* parameter names from the env's action space */
    json_t *cfg = json_loads(g->cfg, 0, NULL);
    const hw_env_family *fam;
    hw_err err;
    void *env = hw_env_create(g->env, json_is_object(cfg) ? cfg : NULL, &fam, &err);
    json_decref(cfg);
    if (!env) return;
    const hw_space *as = fam->action_space(env);
    int d = (int)hw_space_numel(as);
    if (d < 2 || d > HWCL_MAX_PARAMS) {
        fam->destroy(env);
        return;
    }
    long long step = g->trials > MAXCORR ? (g->trials + MAXCORR - 1) / MAXCORR : 1;
    double *data = malloc(sizeof(double) * (size_t)d * (MAXCORR + 1));
    size_t rows = 0;
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT action FROM trials WHERE run_id = ?1 AND (id % ?2) = 0", -1, &st, NULL);
    for (int i = 0; i < nr && rows < MAXCORR; i++) {
        if (r[i].group != gi) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, r[i].id);
        sqlite3_bind_int64(st, 2, step);
        while (rows < MAXCORR && sqlite3_step(st) == SQLITE_ROW) {
            json_t *a = json_loads((const char *)sqlite3_column_text(st, 0), JSON_DECODE_ANY, NULL);
            if (json_is_array(a) && (int)json_array_size(a) == d) {
                bool ok = true;
                for (int j = 0; j < d && ok; j++) {
                    json_t *v = json_array_get(a, (size_t)j);
                    ok = json_is_number(v);
                    data[rows * (size_t)d + (size_t)j] = json_number_value(v);
                }
                if (ok) rows++;
            }
            json_decref(a);
        }
    }
    sqlite3_finalize(st);
    if (rows >= 3) {
        double *corr = malloc(sizeof(double) * (size_t)d * (size_t)d), *dist = malloc(sizeof(double) * (size_t)d * (size_t)d);
        hwcl_merge mg[HWCL_MAX_PARAMS];
        const char *names[HWCL_MAX_PARAMS];
        char nbuf[HWCL_MAX_PARAMS][16];
        for (int j = 0; j < d; j++) {
            names[j] = as->names && as->names[j] ? as->names[j] : (snprintf(nbuf[j], sizeof nbuf[j], "p%d", j), nbuf[j]);
        }
        if (hwcl_pearson(data, rows, d, corr, &err) == 0) {
            hwcl_distance(corr, d, dist);
            if (hwcl_linkage(dist, d, mg, &err) == 0) {
                char title[200];
                snprintf(title, sizeof title, "parameter correlation (%zu designs) and dendrogram (1-|r|, average linkage)", rows);
                fprintf(f, "<h3>Parameter correlation</h3><div class=\"fig\">\n");
                hwcl_write_svg(f, corr, d, names, mg, -1, title);
                fprintf(f, "</div>\n");
            }
        }
        free(corr);
        free(dist);
    }
    free(data);
    fam->destroy(env);
}

int hwcli_report_html(const char *db_path, const char *dir, long long run, double within, json_t **summary) {
    (void)within;
    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        int r = hwcli_fail("report", 1, "%s: %s", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return r;
    }
    sqlite3_busy_timeout(db, 5000);
    bool hitcol = has_column(db, "trials", "cache_hit");
    char q[1024];
    snprintf(q, sizeof q,
             "SELECT r.id, r.agent, r.env, coalesce(r.env_config, '{}'), r.seed, r.started_at, coalesce(r.ended_at, 0),"
             " (SELECT count(*) FROM trials t WHERE t.run_id = r.id), (SELECT max(reward) FROM trials t WHERE t.run_id = r.id),"
             " (SELECT count(*) FROM trials t WHERE t.run_id = r.id AND t.feasible = 1), %s"
             " FROM runs r %s ORDER BY r.id",
             hitcol ? "(SELECT sum(cache_hit) FROM trials t WHERE t.run_id = r.id)" : "NULL", run ? "WHERE r.id = ?1" : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        int rc = hwcli_fail("report", 1, "%s: not a trial DB (%s)", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return rc;
    }
    if (run) sqlite3_bind_int64(st, 1, run);
    rrun *r = NULL;
    rgroup *g = NULL;
    int nr = 0, ng = 0;
    long long total = 0;
    bool any_hits = false;
    while (sqlite3_step(st) == SQLITE_ROW) {
        r = realloc(r, sizeof *r * (size_t)(nr + 1));
        if (!r) abort();
        rrun *x = &r[nr++];
        memset(x, 0, sizeof *x);
        x->id = sqlite3_column_int64(st, 0);
        x->agent = dup_col(st, 1);
        x->env = dup_col(st, 2);
        x->cfg = dup_col(st, 3);
        x->has_seed = sqlite3_column_type(st, 4) != SQLITE_NULL;
        x->seed = sqlite3_column_int64(st, 4);
        x->started = sqlite3_column_double(st, 5);
        x->ended = sqlite3_column_double(st, 6);
        x->n = sqlite3_column_int64(st, 7);
        x->best = sqlite3_column_type(st, 8) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 8);
        x->feasible = sqlite3_column_int64(st, 9);
        x->has_hits = sqlite3_column_type(st, 10) != SQLITE_NULL;
        x->hits = sqlite3_column_int64(st, 10);
        any_hits |= x->has_hits;
        total += x->n;
        int k = 0;
        while (k < ng && (strcmp(g[k].env, x->env) || strcmp(g[k].cfg, x->cfg))) k++;
        if (k == ng) {
            g = realloc(g, sizeof *g * (size_t)(ng + 1));
            if (!g) abort();
            g[ng] = (rgroup){strdup(x->env), strdup(x->cfg), 0, -1, 0, -INFINITY};
            ng++;
        }
        x->group = k;
        if (x->n > g[k].xmax) g[k].xmax = x->n;
        g[k].trials += x->n;
    }
    sqlite3_finalize(st);
    int rc = 0;
    if (run && nr == 0) rc = hwcli_fail("report", 1, "%s: no run %lld", db_path, run);
    char path[4096];
    FILE *f = NULL;
    if (!rc && mkdir(dir, 0777) != 0 && errno != EEXIST) rc = hwcli_fail("report", 1, "--out %s: %s", dir, strerror(errno));
    if (!rc) {
        snprintf(path, sizeof path, "%s/report.html", dir);
        if (!(f = fopen(path, "w"))) rc = hwcli_fail("report", 1, "--out: cannot write %s: %s", path, strerror(errno));
    }
    if (!rc && read_curves(db, r, nr, g)) rc = hwcli_fail("report", 1, "%s: %s", db_path, sqlite3_errmsg(db));
    if (!rc) {
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>hwgym report: ");
        rp_escape(f, db_path);
        fprintf(f, "</title><style>%s</style></head><body>\n<h1>hwgym report</h1><p><code>", CSS);
        rp_escape(f, db_path);
        fprintf(f, "</code>: %d run%s, %lld trials, %d env/config group%s.</p>\n", nr, nr == 1 ? "" : "s", total, ng, ng == 1 ? "" : "s");
        for (int k = 0; k < ng; k++) {
            fprintf(f, "<h2>");
            rp_escape(f, g[k].env);
            fprintf(f, " <code>");
            rp_escape(f, g[k].cfg);
            fprintf(f, "</code></h2>\n<div class=\"fig\">\n");
            curves(f, r, nr, &g[k], k);
            fprintf(f, "</div>\n");
            best_design(f, db, &g[k]);
            correlation(f, db, r, nr, &g[k], k);
        }
        run_table(f, r, nr, any_hits);
        fprintf(f, "<p class=\"muted\">Written by hwgym report. Curves: best reward so far against samples, sampled at %d points per "
                   "group; band = 95%% t-interval of the mean over the runs (seeds) of an agent.</p>\n</body></html>\n",
                GRID);
    }
    if (f && fclose(f) != 0 && !rc) rc = hwcli_fail("report", 1, "--out: writing %s failed", path);
    if (!rc && summary)
        *summary = json_pack("{s:s, s:i, s:I, s:i}", "html", path, "runs", nr, "trials", (json_int_t)total, "groups", ng);
    for (int i = 0; i < nr; i++) {
        free(r[i].agent);
        free(r[i].env);
        free(r[i].cfg);
        free(r[i].at);
    }
    for (int k = 0; k < ng; k++) {
        free(g[k].env);
        free(g[k].cfg);
    }
    free(r);
    free(g);
    sqlite3_close(db);
    return rc;
}
