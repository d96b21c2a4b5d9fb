/* lb_slurm.c - see lb_slurm.h */
#include "lb_slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lb_db.h"
#include "lb_proc.h"

#define MAX_ARGS 64

/* Runs argv (found on PATH) with stdout and stderr into out (NUL-terminated, truncated to cap);
 * returns its exit status, 127 when it could not run, -1 when it was killed. */
static int capture(char *const *argv, char *out, size_t cap) {
    int fd[2];
    if (pipe(fd)) return 127;
    pid_t p = fork();
    if (p < 0) {
        close(fd[0]), close(fd[1]);
        return 127;
    }
    if (p == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) dup2(in, 0), close(in);
        dup2(fd[1], 1), dup2(fd[1], 2);
        close(fd[0]), close(fd[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
        for (ssize_t i = 0; i < k; i++)
            if (n + 1 < cap) out[n++] = buf[i];
    out[n] = 0;
    close(fd[0]);
    int st;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_text(const char *path, const char *text, hw_err *err) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0) {
        if (f) fclose(f);
        return hw_fail(err, HW_E_IO, "%s: %s", path, strerror(errno));
    }
    return fclose(f) ? hw_fail(err, HW_E_IO, "%s: %s", path, strerror(errno)) : 0;
}

/* The array task: line SLURM_ARRAY_TASK_ID + 1 of cells.txt is its cell. Paths are single-quoted
 * (the caller refused any with a quote in it). */
static char *task_script(const char *dir, const lb_run_opts *o) {
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) return NULL;
    fprintf(f,
            "#!/bin/sh\n"
            "# one cell of a leaderboard per array task (written by hwgym leaderboard --slurm)\n"
            "i=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}\n"
            "key=$(sed -n \"$((i + 1))p\" '%s/cells.txt')\n"
            "[ -n \"$key\" ] || { echo \"no cell for array index $i\" >&2; exit 2; }\n"
            "export OPENBLAS_NUM_THREADS=1\n"
            "exec '%s/hwgym' leaderboard '%s/suite.json' --cell \"$key\" --out '%s/task-'\"$i\" --fresh --quiet --jobs 1 --bin '%s'",
            dir, o->bindir, dir, dir, o->bindir);
    if (o->local) fputs(" --local", f);
    if (o->keep_obs) fputs(" --keep-obs", f);
    for (size_t i = 0; i < o->nendpoints; i++) fprintf(f, " --endpoint '%s'", o->endpoints[i]);
    fputc('\n', f);
    fclose(f);
    return s;
}

/* job id from sbatch --parsable ("1234" or "1234;cluster") */
static long long submit(const char *dir, size_t m, const lb_run_opts *o, hw_err *err) {
    char arr[64], log[PATH_MAX + 32], script[PATH_MAX + 16], out[4096];
    snprintf(arr, sizeof arr, "--array=0-%zu", m - 1);
    if (o->jobs_given) snprintf(arr + strlen(arr), sizeof arr - strlen(arr), "%%%d", o->jobs);
    snprintf(log, sizeof log, "--output=%s/task-%%a.out", dir);
    snprintf(script, sizeof script, "%s/task.sh", dir);
    char *argv[MAX_ARGS + 8], *extra = o->sbatch_args ? strdup(o->sbatch_args) : NULL;
    int k = 0;
    argv[k++] = "sbatch", argv[k++] = "--parsable", argv[k++] = "--job-name=hwgym-leaderboard", argv[k++] = arr, argv[k++] = log;
    for (char *save = NULL, *t = extra ? strtok_r(extra, " \t", &save) : NULL; t; t = strtok_r(NULL, " \t", &save)) {
        if (k >= MAX_ARGS) {
            free(extra);
            return hw_fail(err, HW_E_BAD_REQUEST, "--sbatch: more than %d options", MAX_ARGS - 5);
        }
        argv[k++] = t;
    }
    argv[k++] = script, argv[k] = NULL;
    int rc = capture(argv, out, sizeof out);
    free(extra);
    out[strcspn(out, "\n")] = 0;
    if (rc == 127) return hw_fail(err, HW_E_IO, "--slurm: cannot run sbatch (is Slurm installed and on PATH?)");
    char *end;
    long long id = strtoll(out, &end, 10);
    if (rc || id <= 0 || (*end && *end != ';')) return hw_fail(err, HW_E_IO, "--slurm: sbatch failed (exit %d): %.300s", rc, out);
    return id;
}

/* tasks of the job still pending or running (squeue -r lists one line per task); -1 on error */
static int tasks_left(long long id, char *msg, size_t cap) {
    char jid[32];
    snprintf(jid, sizeof jid, "%lld", id);
    char *argv[] = {"squeue", "-h", "-r", "-j", jid, "-o", "%i", NULL};
    int rc = capture(argv, msg, cap);
    if (rc && strstr(msg, "Invalid job id")) return 0; /* ended and already purged */
    if (rc) return -1;
    int n = 0;
    for (const char *p = msg; *p; p++) n += *p == '\n';
    return n;
}

static void cancel(long long id) {
    char jid[32], out[1024];
    snprintf(jid, sizeof jid, "%lld", id);
    char *argv[] = {"scancel", jid, NULL};
    capture(argv, out, sizeof out);
}

static int unlink_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

/* task i's directory (its leaderboard file, server log, work files) and its Slurm log */
static void remove_task_files(const char *dir, size_t i) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/task-%zu", dir, i);
    nftw(p, unlink_one, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(p, sizeof p, "%s/task-%zu.out", dir, i);
    unlink(p);
}

/* moves task i's cell into db; a task without a result becomes a failed cell */
static int merge_task(sqlite3 *db, const char *dir, size_t i, const lb_cell *c, long long id, const lb_run_opts *o, hw_err *err) {
    char tdb[PATH_MAX + 64], log[PATH_MAX + 32], where[160], why[PATH_MAX + 1024];
    snprintf(tdb, sizeof tdb, "%s/task-%zu/leaderboard.db", dir, i);
    snprintf(log, sizeof log, "%s/task-%zu.out", dir, i);
    snprintf(where, sizeof where, "slurm %lld_%zu", id, i);
    sqlite3 *t = access(tdb, R_OK) ? NULL : lb_db_open(tdb, true, err);
    lb_cell_rec r;
    int found = t ? lb_db_read_cell(t, c->key, &r, err) : 0;
    lb_db_close(t);
    int rc;
    if (found == 1) {
        char ep[400];
        snprintf(ep, sizeof ep, "%s (%s)", where, r.endpoint ? r.endpoint : "");
        free((char *)r.endpoint);
        r.endpoint = strdup(ep);
        rc = lb_db_merge_cell(db, tdb, o->keep_obs, &r, err);
        if (!o->quiet)
            fprintf(stderr, "hwgym leaderboard: %s: %s: %.1f s CPU%s\n", where, c->key, r.cpu_s, r.status ? " FAILED" : "");
        lb_cell_rec_free(&r);
    } else {
        char *last = lb_last_line(log);
        snprintf(why, sizeof why, "Slurm array task %lld_%zu left no result (%s: %s)", id, i, log, last ? last : "empty log");
        free(last);
        char variant[96];
        lb_cell_rec f = {.key = c->key, .env_name = c->env->name, .env = c->env->env, .seed = c->seed, .off = c->off,
                         .variant = lb_variant_name(c->agent, c->off, variant, sizeof variant), .status = 1, .cut = "",
                         .error = why, .endpoint = where};
        rc = lb_db_merge_cell(db, NULL, false, &f, err);
        if (!o->quiet) fprintf(stderr, "hwgym leaderboard: %s: %s FAILED: %s\n", where, c->key, why);
        return rc;
    }
    if (!rc) remove_task_files(dir, i);
    return rc;
}

int lb_slurm_run(const lb_suite *s, const lb_cell *cells, size_t n, sqlite3 *db, const lb_run_opts *o,
                 volatile sig_atomic_t *stop, hw_err *err) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/slurm", o->workdir);
    if (mkdir(dir, 0755) && errno != EEXIST) return hw_fail(err, HW_E_IO, "%s: %s", dir, strerror(errno));
    char real[PATH_MAX], bin[PATH_MAX];
    if (!realpath(dir, real) || !realpath(o->bindir, bin)) return hw_fail(err, HW_E_IO, "%s: %s", dir, strerror(errno));
    if (strchr(real, '\'') || strchr(bin, '\'')) return hw_fail(err, HW_E_BAD_REQUEST, "--slurm: paths with a quote (') are not supported");
    for (size_t i = 0; i < o->nendpoints; i++)
        if (strchr(o->endpoints[i], '\'')) return hw_fail(err, HW_E_BAD_REQUEST, "--endpoint: a quote (') is not supported");
    lb_run_opts ro = *o;
    ro.bindir = bin;
    size_t *pend = malloc((n ? n : 1) * sizeof *pend), m = 0;
    if (!pend) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    char *keys = NULL;
    size_t klen = 0;
    FILE *kf = open_memstream(&keys, &klen);
    int rc = kf ? 0 : hw_fail(err, HW_E_INTERNAL, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        int d = lb_db_cell_done(db, cells[i].key, o->retry_failed, err);
        if (d < 0) rc = -1;
        else if (!d) pend[m++] = i, fprintf(kf, "%s\n", cells[i].key);
    }
    if (kf) fclose(kf);
    if (!o->quiet) fprintf(stderr, "hwgym leaderboard: %zu cells, %zu already done, %zu to run as a Slurm job array\n", n, n - m, m);
    char path[PATH_MAX + 32];
    char *script = rc || !m ? NULL : task_script(real, &ro);
    char *suite = rc || !m ? NULL : json_dumps(s->root, JSON_COMPACT);
    if (!rc && m && (!script || !suite)) rc = hw_fail(err, HW_E_INTERNAL, "out of memory");
    if (!rc && m) snprintf(path, sizeof path, "%s/cells.txt", real), rc = write_text(path, keys, err);
    if (!rc && m) snprintf(path, sizeof path, "%s/suite.json", real), rc = write_text(path, suite, err);
    if (!rc && m) snprintf(path, sizeof path, "%s/task.sh", real), rc = write_text(path, script, err);
    if (!rc && m) chmod(path, 0755);
    long long id = rc || !m ? 0 : submit(real, m, &ro, err);
    if (id < 0) rc = -1;
    if (!rc && m && !o->quiet) fprintf(stderr, "hwgym leaderboard: submitted Slurm job %lld (%zu array tasks; logs in %s)\n", id, m, real);
    int last = -1, errors = 0;
    char msg[65536];
    while (!rc && m) {
        if (*stop) {
            cancel(id);
            rc = hw_fail(err, HW_E_SHUTTING_DOWN, "interrupted by signal %d: Slurm job %lld cancelled; --resume continues", (int)*stop, id);
            break;
        }
        int left = tasks_left(id, msg, sizeof msg);
        if (left < 0 && ++errors >= 30) rc = hw_fail(err, HW_E_IO, "squeue failed 30 times: %.300s", msg);
        if (left < 0) {
            lb_nap_ms(1000);
            continue;
        }
        errors = 0;
        if (left != last && !o->quiet) fprintf(stderr, "hwgym leaderboard: Slurm job %lld: %zu of %zu tasks ended\n", id, m - (size_t)left, m);
        last = left;
        if (!left) break;
        lb_nap_ms(1000);
    }
    for (size_t k = 0; !rc && k < m; k++) rc = merge_task(db, real, k, &cells[pend[k]], id, &ro, err);
    if (!rc && m) {
        const char *files[] = {"cells.txt", "suite.json", "task.sh"};
        for (size_t k = 0; k < 3; k++) snprintf(path, sizeof path, "%s/%s", real, files[k]), unlink(path);
        rmdir(real);
    }
    free(script);
    free(suite);
    free(keys);
    free(pend);
    return rc;
}
