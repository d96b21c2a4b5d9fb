/* cmd_leaderboard.c - `hwgym leaderboard`: run a declared suite of agents x envs x seeds with
 * equal budgets and controls, then write its statistics pages (docs/leaderboard.md).
 * Owns: the command line, locating the suite and the binaries, and the order of the steps:
 * lb_suite (the suite), lb_run (the cells), lb_score (the statistics), lb_page (the pages). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lb_curve.h"
#include "lb_curve.h"
#include "lb_db.h"
#include "lb_page.h"
#include "lb_run.h"
#include "lb_score.h"
#include "lb_suite.h"

#define MAX_EPS 64

static const char *usage =
    "usage: hwgym leaderboard [SUITE] [options]\n"
    "       hwgym leaderboard --from-db FILE --out DIR [--md FILE]\n"
    "Runs a declared suite (envs with configs, agents with settings, budgets in evaluations and\n"
    "CPU seconds, seeds; leaderboard/*.json) with random search and, for learning agents, the same\n"
    "agent with learning off as controls in every cell; writes every trial to SQLite and the\n"
    "statistics (IQM with stratified-bootstrap 95%% intervals, performance profiles, probability\n"
    "of improvement, sample-efficiency curves) to DIR/index.html and DIR/leaderboard.md.\n"
    "  SUITE             the suite file (JSON); without it, --quick runs leaderboard/quick.json\n"
    "  --quick           no SUITE: the quick suite; with SUITE: its \"quick\" block (seeds, budget)\n"
    "  --out DIR         output directory (default leaderboard-out): index.html, leaderboard.md,\n"
    "                    leaderboard.json, leaderboard.db (the trials), work/ (running cells)\n"
    "  --db FILE         the leaderboard's SQLite file (default DIR/leaderboard.db)\n"
    "  --endpoint EP     run against this server instead of starting one; repeat (or EP1,EP2) to\n"
    "                    spread the cells over several servers (cell i -> server i mod n)\n"
    "  --servers N       servers to start when no --endpoint is given (1)\n"
    "  --jobs N          cells run at a time, as local processes (2); with --slurm, the most\n"
    "                    array tasks Slurm runs at once (default: as Slurm schedules)\n"
    "  --slurm           run the cells as one Slurm job array (sbatch; each task runs one cell\n"
    "                    on its node with a server of its own, or against --endpoint), wait for\n"
    "                    it (squeue; Ctrl-C cancels it) and merge the tasks' results\n"
    "  --sbatch OPTS     with --slurm: extra sbatch options, e.g. \"--partition=cpu --time=30\"\n"
    "  --cell KEY        run only this cell (ENV/AGENT/SEED, as in the progress lines) and write\n"
    "                    no pages: what each Slurm array task runs\n"
    "  --local           agents run the env in their own process (no server; hwgym-marl still\n"
    "                    uses the server): CPU seconds then include the env's work\n"
    "  --resume          continue a leaderboard file: cells already in it are skipped\n"
    "  --fresh           delete an existing leaderboard file first\n"
    "  --retry-failed    with --resume: run the cells recorded as failed again\n"
    "  --from-db FILE    do not run anything: recompute the pages from FILE and its stored suite\n"
    "  --md FILE         write the markdown page here instead of DIR/leaderboard.md\n"
    "  --note FILE       markdown text put at the top of both pages (e.g. what the run is not yet)\n"
    "  --keep-obs        keep the observations of the trials (dropped by default: size)\n"
    "  --slim FILE       also write a small copy of the leaderboard file (no actions, observations\n"
    "                    or metrics; the pages recompute identically from it) to commit beside a page\n"
    "  --curves FILE     also write a smaller copy still: each run's best-so-far curve (what the\n"
    "                    pages are computed from) instead of its trials; the pages recompute\n"
    "                    identically from it with --from-db, but it cannot be resumed\n"
    "  --bin DIR         the agent and server binaries (default: the directory of this hwgym)\n"
    "  --quiet           no progress lines\n"
    "Progress on stderr (one line per cell); prints {\"html\", \"md\", \"json\", \"db\", \"cells\"} on stdout.\n"
    "Exit status: 0 ok, 1 the run or the pages failed, 2 bad usage.\n";

static char *exe_dir(void) {
    char p[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
    if (n <= 0) return strdup(".");
    p[n] = 0;
    return strdup(dirname(p));
}

/* leaderboard/quick.json: $HWGYM_LEADERBOARD_DIR, ./leaderboard, then BINDIR/../../leaderboard */
static char *find_quick(const char *bindir) {
    char p[PATH_MAX];
    const char *env = getenv("HWGYM_LEADERBOARD_DIR");
    if (env) {
        snprintf(p, sizeof p, "%s/quick.json", env);
        if (!access(p, R_OK)) return strdup(p);
    }
    if (!access("leaderboard/quick.json", R_OK)) return strdup("leaderboard/quick.json");
    snprintf(p, sizeof p, "%s/../../leaderboard/quick.json", bindir);
    return access(p, R_OK) ? NULL : strdup(p);
}

static int mkdir_p(const char *dir) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

typedef struct {
    const char *suite, *out, *db, *from, *md, *bin, *servers, *jobs, *slim, *curves, *note, *cell, *sbatch;
    const char *eps[MAX_EPS];
    size_t neps;
    bool quick, local, resume, fresh, retry, keep_obs, quiet, slurm;
} args;

/* own loop: --endpoint repeats */
static int parse(int argc, char **argv, args *a) {
    const char **vals[] = {&a->out, &a->db, &a->from, &a->md, &a->bin, &a->servers, &a->jobs, &a->slim, &a->curves, &a->note, &a->cell, &a->sbatch};
    const char *vnames[] = {"--out", "--db", "--from-db", "--md", "--bin", "--servers", "--jobs", "--slim", "--curves", "--note", "--cell", "--sbatch"};
    bool *flags[] = {&a->quick, &a->local, &a->resume, &a->fresh, &a->retry, &a->keep_obs, &a->quiet, &a->slurm};
    const char *fnames[] = {"--quick", "--local", "--resume", "--fresh", "--retry-failed", "--keep-obs", "--quiet", "--slurm"};
    for (int i = 1; i < argc; i++) {
        const char *x = argv[i];
        if (!strcmp(x, "--help") || !strcmp(x, "-h")) return fputs(usage, stdout), 1;
        bool hit = false;
        for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
            if (!strcmp(x, fnames[k])) *flags[k] = hit = true;
        for (size_t k = 0; !hit && k < sizeof vals / sizeof *vals; k++)
            if (!strcmp(x, vnames[k])) {
                if (i + 1 >= argc) return hwcli_fail("leaderboard", 2, "%s needs a value", x);
                *vals[k] = argv[++i], hit = true;
            }
        if (!hit && !strcmp(x, "--endpoint")) {
            if (i + 1 >= argc) return hwcli_fail("leaderboard", 2, "--endpoint needs a value");
            char *list = argv[++i];
            for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (a->neps == MAX_EPS) return hwcli_fail("leaderboard", 2, "--endpoint: more than %d endpoints", MAX_EPS);
                a->eps[a->neps++] = t;
            }
            hit = true;
        }
        if (hit) continue;
        if (x[0] == '-') return hwcli_fail("leaderboard", 2, "unknown option '%s' (see hwgym leaderboard --help)", x);
        if (a->suite) return hwcli_fail("leaderboard", 2, "unexpected argument '%s' (one SUITE)", x);
        a->suite = x;
    }
    return 0;
}

static char *read_note(const char *path) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return NULL;
    char *buf = calloc(1, 65537);
    size_t n = buf ? fread(buf, 1, 65536, f) : 0;
    fclose(f);
    while (buf && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
    return buf;
}

static int write_pages(const lb_suite *s, sqlite3 *db, const char *out, const args *a, const char *dbpath, const char *cmd) {
    hw_err err = {0};
    const char *md = a->md, *slim = a->slim;
    char *note = read_note(a->note);
    if (a->note && !note) return hwcli_fail("leaderboard", 2, "--note %s: cannot read", a->note);
    json_t *res = (slim && lb_db_slim_copy(db, slim, &err)) || (a->curves && lb_curve_copy(db, s, a->curves, &err)) ? NULL : lb_score(s, db, &err);
    if (!res) {
        free(note);
        return hwcli_fail("leaderboard", 1, "%s", err.msg);
    }
    char html[PATH_MAX], mdp[PATH_MAX], js[PATH_MAX];
    snprintf(html, sizeof html, "%s/index.html", out);
    snprintf(mdp, sizeof mdp, "%s", md ? md : "");
    if (!md) snprintf(mdp, sizeof mdp, "%s/leaderboard.md", out);
    snprintf(js, sizeof js, "%s/leaderboard.json", out);
    int rc = 0;
    if (json_dump_file(res, js, JSON_INDENT(1) | JSON_REAL_PRECISION(12))) rc = hwcli_fail("leaderboard", 1, "%s: cannot write", js);
    if (!rc && lb_page_html(res, html, cmd, note)) rc = hwcli_fail("leaderboard", 1, "%s: %s", html, strerror(errno));
    if (!rc && lb_page_md(res, mdp, cmd, note)) rc = hwcli_fail("leaderboard", 1, "%s: %s", mdp, strerror(errno));
    free(note);
    if (!rc) {
        json_t *sum = json_pack("{s:s,s:s,s:s,s:s,s:O}", "html", html, "md", mdp, "json", js, "db", dbpath, "cells", json_object_get(res, "cells"));
        hwcli_print_json(sum);
        json_decref(sum);
    }
    json_decref(res);
    return rc;
}

/* the suite stored in the file must be the one being run */
static int check_stored_suite(sqlite3 *db, const lb_suite *s, hw_err *err) {
    char *stored = lb_db_get_suite(db, err);
    if (!stored) return 0; /* a new file */
    json_t *j = json_loads(stored, 0, NULL);
    free(stored);
    int same = json_equal(j, s->root);
    json_decref(j);
    return same ? 0 : hw_fail(err, HW_E_BAD_REQUEST, "the leaderboard file holds another suite (or other --quick settings): use --fresh or another --out/--db");
}

/* The suite file's JSON; with quick, its "quick" block's seeds and budget applied (and the block
 * dropped), so the stored suite is exactly what ran. */
static json_t *effective_suite(const char *path, bool quick, hw_err *err) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        hw_fail(err, HW_E_BAD_REQUEST, "%s (line %d, column %d)", je.text, je.line, je.column);
        return NULL;
    }
    if (!quick) return root;
    json_t *q = json_object_get(root, "quick");
    if (!json_is_object(q)) {
        json_decref(root);
        hw_fail(err, HW_E_BAD_REQUEST, "--quick: this suite has no \"quick\" block");
        return NULL;
    }
    json_t *seeds = json_object_get(q, "seeds"), *qb = json_object_get(q, "budget"), *b = json_object_get(root, "budget");
    if (seeds) json_object_set(root, "seeds", seeds);
    if (json_is_object(qb)) {
        if (!json_is_object(b)) json_object_set_new(root, "budget", b = json_object());
        json_object_update(b, qb);
    }
    json_object_set_new(root, "name", json_sprintf("%s (quick)", json_string_value(json_object_get(root, "name")) ?: "suite"));
    json_object_del(root, "quick");
    return root;
}

static int from_db(const args *a, const char *out) {
    hw_err err = {0};
    sqlite3 *db = lb_db_open(a->from, true, &err);
    if (!db) return hwcli_fail("leaderboard", 1, "%s", err.msg);
    char *js = lb_db_get_suite(db, &err);
    json_t *root = js ? json_loads(js, 0, NULL) : NULL;
    free(js);
    lb_suite s;
    int rc = !root ? hwcli_fail("leaderboard", 1, "%s: %s", a->from, err.msg[0] ? err.msg : "stored suite is not JSON")
             : lb_suite_parse(root, false, &s, &err) ? hwcli_fail("leaderboard", 1, "%s: stored suite: %s", a->from, err.msg)
                                                     : 0;
    json_decref(root);
    if (!rc) {
        char cmd[PATH_MAX * 3];
        snprintf(cmd, sizeof cmd, "hwgym leaderboard --from-db %s --out %s%s%s%s%s", a->from, out, a->md ? " --md " : "", a->md ? a->md : "",
                 a->note ? " --note " : "", a->note ? a->note : "");
        rc = write_pages(&s, db, out, a, a->from, cmd);
        lb_suite_free(&s);
    }
    lb_db_close(db);
    return rc;
}

static int run(const args *a, const char *out, const char *bindir) {
    hw_err err = {0};
    char *quick = NULL;
    const char *path = a->suite;
    if (!path && !(path = quick = find_quick(bindir)))
        return hwcli_fail("leaderboard", 2, "--quick: leaderboard/quick.json not found (run from the repository or set HWGYM_LEADERBOARD_DIR)");
    lb_suite s;
    json_t *eff = effective_suite(path, a->quick && a->suite, &err);
    int prc = eff ? lb_suite_parse(eff, false, &s, &err) : -1;
    json_decref(eff);
    if (prc) {
        free(quick);
        if (eff) lb_suite_free(&s);
        return hwcli_fail("leaderboard", 2, "%s: %s", path, err.msg);
    }
    char dbp[PATH_MAX], work[PATH_MAX];
    snprintf(dbp, sizeof dbp, "%s", a->db ? a->db : "");
    if (!a->db) snprintf(dbp, sizeof dbp, "%s/leaderboard.db", out);
    snprintf(work, sizeof work, "%s/work", out);
    int rc = 0;
    if (a->fresh) unlink(dbp);
    else if (!a->resume && !access(dbp, F_OK))
        rc = hwcli_fail("leaderboard", 2, "%s exists: --resume continues it, --fresh starts again", dbp);
    sqlite3 *db = rc ? NULL : lb_db_open(dbp, false, &err);
    if (!rc && !db) rc = hwcli_fail("leaderboard", 1, "%s", err.msg);
    if (!rc) {
        char *txt = json_dumps(s.root, JSON_COMPACT); /* key order kept: it orders the page */
        if (check_stored_suite(db, &s, &err) || lb_db_put_suite(db, s.name, txt, &err)) rc = hwcli_fail("leaderboard", 1, "%s", err.msg);
        free(txt);
    }
    long long servers = 1, jobs = 2;
    if (!rc && a->servers && hwcli_int_arg(a->servers, "--servers", 1, 64, &servers, &err)) rc = hwcli_fail("leaderboard", 2, "%s", err.msg);
    if (!rc && a->jobs && hwcli_int_arg(a->jobs, "--jobs", 1, 256, &jobs, &err)) rc = hwcli_fail("leaderboard", 2, "%s", err.msg);
    if (!rc) {
        lb_run_opts o = {.bindir = bindir, .workdir = work, .endpoints = a->neps ? a->eps : NULL, .nendpoints = a->neps,
                         .servers = (int)servers, .jobs = (int)jobs, .local = a->local, .retry_failed = a->retry,
                         .keep_obs = a->keep_obs, .quiet = a->quiet, .only_key = a->cell, .slurm = a->slurm,
                         .jobs_given = a->jobs != NULL, .sbatch_args = a->sbatch};
        if (lb_run_suite(&s, db, &o, &err)) rc = hwcli_fail("leaderboard", 1, "%s", err.msg);
        rmdir(work);
    }
    if (!rc && a->cell) { /* one cell (a Slurm array task): its row and trials are the result */
        json_t *sum = json_pack("{s:s,s:s}", "db", dbp, "cell", a->cell);
        hwcli_print_json(sum);
        json_decref(sum);
    } else if (!rc) {
        char cmd[PATH_MAX * 3];
        snprintf(cmd, sizeof cmd, "hwgym leaderboard --from-db %s --out %s", dbp, out);
        rc = write_pages(&s, db, out, a, dbp, cmd);
    }
    lb_db_close(db);
    lb_suite_free(&s);
    free(quick);
    return rc;
}

int hwcli_leaderboard(int argc, char **argv) {
    args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? 0 : rc;
    if (!a.suite && !a.quick && !a.from) return hwcli_fail("leaderboard", 2, "give a SUITE file, --quick or --from-db FILE (see --help)");
    if (a.from && (a.suite || a.quick)) return hwcli_fail("leaderboard", 2, "--from-db recomputes the pages only: no SUITE or --quick");
    if (a.slurm && a.cell) return hwcli_fail("leaderboard", 2, "--cell runs one cell here: not with --slurm");
    if (a.slurm && a.servers) return hwcli_fail("leaderboard", 2, "--servers: with --slurm every array task starts its own server");
    if (a.sbatch && !a.slurm) return hwcli_fail("leaderboard", 2, "--sbatch needs --slurm");
    if (a.from && (a.slurm || a.cell)) return hwcli_fail("leaderboard", 2, "--from-db runs nothing: no --slurm or --cell");
    const char *out = a.out ? a.out : "leaderboard-out";
    if (mkdir_p(out)) return hwcli_fail("leaderboard", 1, "--out %s: %s", out, strerror(errno));
    if (a.from) return from_db(&a, out);
    char *bindir = a.bin ? strdup(a.bin) : exe_dir();
    rc = run(&a, out, bindir);
    free(bindir);
    return rc;
}
