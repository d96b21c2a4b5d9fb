/* lb_run.c - see lb_run.h */
#include "lb_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwgym_client.h"
#include "hwgym_trials.h"
#include "lb_db.h"
#include "lb_proc.h"
#include "lb_slurm.h"

#define MAX_SERVERS 64
#define MAX_JOBS 256
#define GRACE_S 10.0   /* SIGKILL this long after SIGTERM */

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

static double mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* fork + exec argv with stdout/stderr to files, in its own process group */
static pid_t spawn(char *const *argv, const char *out, const char *errf) {
    pid_t p = fork();
    if (p != 0) return p;
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || fo < 0 || fe < 0) _exit(127);
    dup2(in, 0), dup2(fo, 1), dup2(fe, 2);
    close(in), close(fo), close(fe);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* CPU seconds of a live process (all its threads, plus the children it has waited for): fields
 * 14-17 of /proc/PID/stat (an agent's name has no ')' in it) */
static double proc_cpu(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    int got = f ? fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &st, &cut, &cst) : 0;
    if (f) fclose(f);
    return got == 4 ? (double)(ut + st + cut + cst) / (double)sysconf(_SC_CLK_TCK) : 0;
}

/* ---- servers ---- */

typedef struct {
    size_t n;
    pid_t pid[MAX_SERVERS];
    char ep[MAX_SERVERS][128];
} servers;

static bool server_answers(const char *ep) {
    hw_err e;
    hwc_client *c = hwc_connect(NULL, ep, 500, &e);
    if (!c) return false;
    double t;
    bool ok = hwc_ping(c, &t, &e) == 0;
    hwc_disconnect(c);
    return ok;
}

static void servers_stop(servers *sv) {
    for (size_t i = 0; i < sv->n; i++)
        if (sv->pid[i] > 0) kill(sv->pid[i], SIGTERM);
    for (size_t i = 0; i < sv->n; i++) {
        if (sv->pid[i] <= 0) continue;
        double t0 = mono();
        while (waitpid(sv->pid[i], NULL, WNOHANG) == 0) {
            if (mono() - t0 > GRACE_S) {
                kill(sv->pid[i], SIGKILL);
                waitpid(sv->pid[i], NULL, 0);
                break;
            }
            lb_nap_ms(50);
        }
        const char *path = sv->ep[i] + 6; /* ipc:// */
        unlink(path);
        sv->pid[i] = 0;
    }
}

static int servers_start(servers *sv, const lb_run_opts *o, hw_err *err) {
    sv->n = (size_t)o->servers;
    for (size_t i = 0; i < sv->n; i++) {
        snprintf(sv->ep[i], sizeof sv->ep[i], "ipc:///tmp/hwgym-lb-%d-%zu.sock", (int)getpid(), i);
        char bin[4096], out[4096];
        snprintf(bin, sizeof bin, "%s/hwgym-server", o->bindir);
        snprintf(out, sizeof out, "%s/server-%zu.log", o->workdir, i);
        char workers[16]; /* one worker per cell it may serve at once */
        snprintf(workers, sizeof workers, "%d", (o->jobs + o->servers - 1) / o->servers);
        char *argv[] = {bin, "--bind", sv->ep[i], "--workers", workers, NULL};
        sv->pid[i] = spawn(argv, out, out);
        if (sv->pid[i] < 0) return hw_fail(err, HW_E_IO, "cannot start %s: %s", bin, strerror(errno));
    }
    for (size_t i = 0; i < sv->n; i++) {
        double t0 = mono();
        while (!server_answers(sv->ep[i])) {
            if (waitpid(sv->pid[i], NULL, WNOHANG) == sv->pid[i]) {
                sv->pid[i] = 0;
                return hw_fail(err, HW_E_IO, "hwgym-server %zu exited at start (see %s/server-%zu.log)", i, o->workdir, i);
            }
            if (mono() - t0 > 20) return hw_fail(err, HW_E_TIMEOUT, "hwgym-server %zu did not answer within 20 s", i);
            lb_nap_ms(100);
        }
    }
    return 0;
}

/* ---- cells ---- */

typedef struct {
    pid_t pid;
    const lb_cell *cell;
    const char *ep;
    double t0, started_at, term_at;
    const char *cut;
    char db[4096], out[4096], errf[4096];
} slot;

static void cell_paths(slot *sl, const lb_run_opts *o, const char *key) {
    char k[192];
    snprintf(k, sizeof k, "%s", key);
    for (char *p = k; *p; p++)
        if (*p == '/') *p = '+';
    snprintf(sl->db, sizeof sl->db, "%s/%s.db", o->workdir, k);
    snprintf(sl->out, sizeof sl->out, "%s/%s.out", o->workdir, k);
    snprintf(sl->errf, sizeof sl->errf, "%s/%s.err", o->workdir, k);
}

static void remove_cell_files(const slot *sl) {
    static const char *sfx[] = {"", "-wal", "-shm", ".ckpt", ".ckpt-wal", ".ckpt-shm"};
    char p[4200];
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        snprintf(p, sizeof p, "%s%s", sl->db, sfx[i]);
        unlink(p);
    }
}

static int start_cell(slot *sl, const lb_cell *c, const char *ep, const lb_run_opts *o) {
    memset(sl, 0, sizeof *sl);
    cell_paths(sl, o, c->key);
    remove_cell_files(sl);
    bool marl = !strcmp(c->agent->bin, "hwgym-marl");
    sl->ep = (o->local && !marl) ? "local" : ep;
    char **argv = lb_cell_argv(c, o->bindir, sl->ep, sl->db);
    if (!argv) return -1;
    sl->cell = c;
    sl->t0 = mono();
    sl->started_at = hwt_now();
    sl->pid = spawn(argv, sl->out, sl->errf);
    lb_argv_free(argv);
    return sl->pid > 0 ? 0 : -1;
}

static int finish_cell(slot *sl, int st, const struct rusage *ru, sqlite3 *db, const lb_run_opts *o, size_t done, size_t total,
                       hw_err *err) {
    const lb_cell *c = sl->cell;
    char variant[96];
    lb_cell_rec r = {.key = c->key,
                     .env_name = c->env->name,
                     .env = c->env->env,
                     .variant = lb_variant_name(c->agent, c->off, variant, sizeof variant),
                     .seed = c->seed,
                     .off = c->off,
                     .cpu_s = (double)ru->ru_utime.tv_sec + 1e-6 * (double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_sec +
                              1e-6 * (double)ru->ru_stime.tv_usec,
                     .wall_s = mono() - sl->t0,
                     .started_at = sl->started_at,
                     .ended_at = hwt_now(),
                     .cut = sl->cut ? sl->cut : "",
                     .endpoint = sl->ep};
    if (sl->cut) r.status = 0;
    else if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
    else r.status = 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    char *msg = r.status ? lb_last_line(sl->errf) : NULL;
    r.error = msg;
    int rc = lb_db_merge_cell(db, sl->db, o->keep_obs, &r, err);
    if (!o->quiet)
        fprintf(stderr, "hwgym leaderboard: [%zu/%zu] %s: %.1f s CPU, %.1f s wall%s%s%s\n", done, total, c->key, r.cpu_s, r.wall_s,
                sl->cut ? " (stopped at the CPU cap)" : "", r.status ? " FAILED: " : "", r.status ? (msg ? msg : "no message") : "");
    free(msg);
    if (!rc) remove_cell_files(sl), unlink(sl->out);
    if (!rc && !r.status) unlink(sl->errf);
    sl->pid = 0;
    return rc;
}

/* checks the CPU cap and the wall safety bound of a running cell */
static void police(slot *sl) {
    double now = mono();
    if (sl->term_at > 0) {
        if (now - sl->term_at > GRACE_S) kill(-sl->pid, SIGKILL);
        return;
    }
    double cap = sl->cell->env->budget.cpu_s;
    const char *why = proc_cpu(sl->pid) >= cap ? "cpu" : (now - sl->t0 > 20 * cap + 120 ? "wall" : NULL);
    if (!why || g_stop) return;
    sl->cut = why;
    sl->term_at = now;
    kill(-sl->pid, SIGTERM);
}

static void terminate_all(slot *sl, int n) {
    for (int i = 0; i < n; i++)
        if (sl[i].pid > 0) kill(-sl[i].pid, SIGTERM);
    double t0 = mono();
    for (int i = 0; i < n; i++) {
        while (sl[i].pid > 0 && waitpid(sl[i].pid, NULL, WNOHANG) == 0) {
            if (mono() - t0 > GRACE_S) kill(-sl[i].pid, SIGKILL);
            lb_nap_ms(50);
        }
        sl[i].pid = 0;
    }
}

static int run_cells(const lb_cell *cells, size_t n, sqlite3 *db, const char *const *eps, size_t neps, const lb_run_opts *o, hw_err *err) {
    size_t todo = 0, next = 0, done = 0;
    size_t *pend = malloc((n ? n : 1) * sizeof *pend);
    if (!pend) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (o->only_key && strcmp(cells[i].key, o->only_key)) continue;
        found = true;
        int d = lb_db_cell_done(db, cells[i].key, o->retry_failed, err);
        if (d < 0) return free(pend), -1;
        if (!d) pend[todo++] = i;
    }
    if (!found) return free(pend), hw_fail(err, HW_E_BAD_REQUEST, "--cell %s: the suite has no such cell", o->only_key);
    if (!o->quiet) fprintf(stderr, "hwgym leaderboard: %zu cells, %zu already done, %zu to run (%d at a time)\n", n, n - todo, todo, o->jobs);
    slot sl[MAX_JOBS];
    memset(sl, 0, sizeof sl);
    int rc = 0;
    while (!rc && (next < todo || done < todo)) {
        if (g_stop) {
            terminate_all(sl, o->jobs);
            rc = hw_fail(err, HW_E_SHUTTING_DOWN, "interrupted by signal %d: %zu of %zu cells ran; --resume continues", (int)g_stop, done, todo);
            break;
        }
        for (int j = 0; j < o->jobs && next < todo; j++)
            if (sl[j].pid <= 0) {
                size_t ci = pend[next++];
                if (start_cell(&sl[j], &cells[ci], eps[ci % neps], o))
                    rc = hw_fail(err, HW_E_IO, "%s: cannot start %s: %s", cells[ci].key, cells[ci].agent->bin, strerror(errno));
            }
        lb_nap_ms(100);
        for (int j = 0; !rc && j < o->jobs; j++) {
            if (sl[j].pid <= 0) continue;
            int st;
            struct rusage ru;
            pid_t w = wait4(sl[j].pid, &st, WNOHANG, &ru);
            if (w == sl[j].pid) rc = finish_cell(&sl[j], st, &ru, db, o, ++done, todo, err);
            else police(&sl[j]);
        }
    }
    if (rc) terminate_all(sl, o->jobs);
    free(pend);
    return rc;
}

int lb_run_suite(const lb_suite *s, sqlite3 *db, const lb_run_opts *o, hw_err *err) {
    if (o->jobs < 1 || o->jobs > MAX_JOBS) return hw_fail(err, HW_E_BAD_REQUEST, "--jobs: must be in 1..%d", MAX_JOBS);
    if (!o->nendpoints && (o->servers < 1 || o->servers > MAX_SERVERS))
        return hw_fail(err, HW_E_BAD_REQUEST, "--servers: must be in 1..%d", MAX_SERVERS);
    if (mkdir(o->workdir, 0755) && errno != EEXIST) return hw_fail(err, HW_E_IO, "%s: %s", o->workdir, strerror(errno));
    size_t n;
    lb_cell *cells = lb_suite_cells(s, &n);
    if (!cells) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    servers sv = {0};
    const char *eps[MAX_SERVERS];
    const char *const *use = o->endpoints;
    size_t neps = o->nendpoints;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    g_stop = 0;
    int rc = 0;
    double t0 = mono();
    if (o->slurm) { /* every array task starts its own server on its node (lb_slurm.h) */
        rc = lb_slurm_run(s, cells, n, db, o, &g_stop, err);
    } else if (!neps) {
        rc = servers_start(&sv, o, err);
        for (size_t i = 0; i < sv.n; i++) eps[i] = sv.ep[i];
        use = eps, neps = sv.n;
        if (!rc && !o->quiet) fprintf(stderr, "hwgym leaderboard: %zu server(s) up (%s%s)\n", sv.n, sv.ep[0], sv.n > 1 ? ", ..." : "");
    }
    if (!rc && !o->slurm) rc = run_cells(cells, n, db, use, neps, o, err);
    if (!rc && !o->quiet) fprintf(stderr, "hwgym leaderboard: suite ran in %.1f s wall\n", mono() - t0);
    servers_stop(&sv);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(cells);
    return rc;
}
