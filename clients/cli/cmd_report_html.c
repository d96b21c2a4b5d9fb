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
    /* designs sampled for the correlation plot (every `step`-th trial of the group) */
    int d;                 /* action elements (0: no plot) */
    const char *const *names;
    long long step, seen;
    double *data;
    size_t rows;
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

static int find_run(const rrun *r, int nr, long long id) {
    int lo = 0, hi = nr - 1;
    while (lo <= hi) {
        int m = (lo + hi) / 2;
        if (r[m].id == id) return m;
        if (r[m].id < id) lo = m + 1;
        else hi = m - 1;
    }
    return -1;
}

static void sample_design(rgroup *g, const unsigned char *text) {
    if (!g->d || g->rows >= MAXCORR || !text || g->seen++ % g->step) return;
    json_t *a = json_loads((const char *)text, JSON_DECODE_ANY, NULL);
    if (json_is_array(a) && (int)json_array_size(a) == g->d) {
        bool ok = true;
        for (int j = 0; j < g->d && ok; j++) {
            json_t *v = json_array_get(a, (size_t)j);
            ok = json_is_number(v);
            g->data[g->rows * (size_t)g->d + (size_t)j] = json_number_value(v);
        }
        if (ok) g->rows++;
    }
    json_decref(a);
}

/* One scan of the trials in insertion order (rowid: no sort): per run the count of feasible
 * trials and cache hits, its best reward so far at the group's grid points; per group the best
 * trial and the sampled designs. */
static int scan_trials(sqlite3 *db, rrun *r, int nr, rgroup *g, bool hitcol, long long only_run) {
    char q[256];
    snprintf(q, sizeof q, "SELECT run_id, id, reward, feasible, %s, action FROM trials %s", hitcol ? "cache_hit" : "NULL",
             only_run ? "WHERE run_id = ?1 ORDER BY id" : "ORDER BY id");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return -1;
    if (only_run) sqlite3_bind_int64(st, 1, only_run);
    long long *seen = calloc((size_t)nr + 1, sizeof(long long));
    int *k = calloc((size_t)nr + 1, sizeof(int));
    double *best = malloc(sizeof(double) * ((size_t)nr + 1));
    for (int i = 0; i < nr; i++) {
        best[i] = -INFINITY;
        r[i].at = malloc(sizeof(double) * GRID);
        if (!r[i].at) abort();
        for (int j = 0; j < GRID; j++) r[i].at[j] = NAN;
    }
    int last = -1;
    long long last_id = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long rid = sqlite3_column_int64(st, 0);
        int i = rid == last_id ? last : find_run(r, nr, rid);
        last = i, last_id = rid;
        if (i < 0) continue;
        rgroup *gr = &g[r[i].group];
        long long n = ++seen[i];
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
            double v = sqlite3_column_double(st, 2);
            if (isfinite(v) && v > best[i]) best[i] = v;
            if (isfinite(v) && (v > gr->best || gr->best_trial < 0)) {
                gr->best = v;
                gr->best_trial = sqlite3_column_int64(st, 1);
            }
        }
        if (sqlite3_column_int(st, 3) == 1) r[i].feasible++;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
            r[i].has_hits = true;
            r[i].hits += sqlite3_column_int(st, 4) == 1;
        }
        while (k[i] < GRID && grid_x(gr, k[i]) == n) r[i].at[k[i]++] = isfinite(best[i]) ? best[i] : NAN;
        sample_design(gr, sqlite3_column_text(st, 5));
    }
    for (int i = 0; i < nr; i++) r[i].best = isfinite(best[i]) ? best[i] : NAN;
    sqlite3_finalize(st);
    free(seen);
    free(k);
    free(best);
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

static void correlation(FILE *f, const rgroup *g) {
    if (!g->d || g->rows < 3) return;
    int d = g->d;
    hw_err err;
    double *corr = malloc(sizeof(double) * (size_t)d * (size_t)d), *dist = malloc(sizeof(double) * (size_t)d * (size_t)d);
    hwcl_merge mg[HWCL_MAX_PARAMS];
    if (hwcl_pearson(g->data, g->rows, d, corr, &err) == 0) {
        hwcl_distance(corr, d, dist);
        if (hwcl_linkage(dist, d, mg, &err) == 0) {
            char title[200];
            snprintf(title, sizeof title, "parameter correlation (%zu designs) and dendrogram (1-|r|, average linkage)", g->rows);
            fprintf(f, "<h3>Parameter correlation</h3><div class=\"fig\">\n");
            hwcl_write_svg(f, corr, d, g->names, mg, -1, title);
            fprintf(f, "</div>\n");
        }
    }
    free(corr);
    free(dist);
}

/* the group's action-space parameter names and its sampling step */
static void *group_env(rgroup *g, const hw_env_family **fam) {
    json_t *cfg = json_loads(g->cfg, 0, NULL);
    hw_err err;
    void *env = hw_env_create(g->env, json_is_object(cfg) ? cfg : NULL, fam, &err);
    json_decref(cfg);
    if (!env) return NULL;
    const hw_space *as = (*fam)->action_space(env);
    int d = (int)hw_space_numel(as);
    if (d >= 2 && d <= HWCL_MAX_PARAMS && as->names) {
        g->d = d;
        g->names = (const char *const *)as->names;
        g->step = g->trials > MAXCORR ? (g->trials + MAXCORR - 1) / MAXCORR : 1;
        g->data = malloc(sizeof(double) * (size_t)d * (MAXCORR + 1));
        if (!g->data) abort();
    }
    return env;
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
    /* trial counts from the run index (covering: no table rows read) */
    snprintf(q, sizeof q,
             "SELECT r.id, r.agent, r.env, coalesce(r.env_config, '{}'), r.seed, r.started_at, coalesce(r.ended_at, 0),"
             " coalesce(c.n, 0) FROM runs r LEFT JOIN (SELECT run_id, count(*) AS n FROM trials GROUP BY run_id) c ON c.run_id = r.id"
             " %s ORDER BY r.id",
             run ? "WHERE r.id = ?1" : "");
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
        total += x->n;
        int k = 0;
        while (k < ng && (strcmp(g[k].env, x->env) || strcmp(g[k].cfg, x->cfg))) k++;
        if (k == ng) {
            g = realloc(g, sizeof *g * (size_t)(ng + 1));
            if (!g) abort();
            memset(&g[ng], 0, sizeof g[ng]);
            g[ng].env = strdup(x->env);
            g[ng].cfg = strdup(x->cfg);
            g[ng].best_trial = -1;
            g[ng].best = -INFINITY;
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
    const hw_env_family **fams = calloc((size_t)ng + 1, sizeof *fams);
    void **envs = calloc((size_t)ng + 1, sizeof *envs);
    for (int k = 0; k < ng; k++) envs[k] = group_env(&g[k], &fams[k]);
    if (!rc && scan_trials(db, r, nr, g, hitcol, run)) rc = hwcli_fail("report", 1, "%s: %s", db_path, sqlite3_errmsg(db));
    for (int i = 0; i < nr; i++) any_hits |= r[i].has_hits;
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
            correlation(f, &g[k]);
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
        free(g[k].data);
        if (envs[k]) fams[k]->destroy(envs[k]);
    }
    free(envs);
    free(fams);
    free(r);
    free(g);
    sqlite3_close(db);
    return rc;
}
