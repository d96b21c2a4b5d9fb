/* hwtest.c - see hwtest.h */
#include "hwtest.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <msgpack.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static bool exe_dir(char *out, size_t cap) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    snprintf(out, cap, "%s", dirname(exe));
    return true;
}

bool hwtest_bin(const char *name, char *out, size_t cap) {
    char d[4096];
    if (!exe_dir(d, sizeof d)) return false;
    snprintf(out, cap, "%s/../bin/%s", d, name); /* BUILD/tests/<group> -> BUILD/bin/<name> */
    return access(out, X_OK) == 0;
}

static bool walk_up(const char *start, const char *rel, char *out, size_t cap) {
    char d[4096];
    snprintf(d, sizeof d, "%s", start);
    for (int i = 0; i < 8; i++) {
        snprintf(out, cap, "%s/%s", d, rel);
        if (access(out, R_OK) == 0) return true;
        size_t l = strlen(d);
        if (l + 4 >= sizeof d) break;
        strcat(d, "/..");
    }
    return false;
}

bool hwtest_repo_file(const char *rel, char *out, size_t cap) {
    char d[4096];
    if (exe_dir(d, sizeof d) && walk_up(d, rel, out, cap)) return true;
    if (getcwd(d, sizeof d) && walk_up(d, rel, out, cap)) return true;
    return false;
}

void hwtest_tmpdir(char *out, size_t cap) {
    snprintf(out, cap, "/tmp/hwtest.XXXXXX");
    if (!mkdtemp(out)) {
        perror("mkdtemp");
        abort();
    }
}

void hwtest_rmtree(const char *dir) {
    if (!dir || strncmp(dir, "/tmp/hwtest.", 12) != 0) return;
    const char *argv[] = {"/bin/rm", "-rf", dir, NULL};
    hwtest_run(argv, NULL, NULL);
}

static char *slurp_fd(int fd) {
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) b = realloc(b, cap *= 2);
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    b[n] = 0;
    return b;
}

int hwtest_run(const char *const *argv, char **out, char **errout) {
    char tmpl_o[] = "/tmp/hwtest.outXXXXXX", tmpl_e[] = "/tmp/hwtest.errXXXXXX";
    int fo = mkstemp(tmpl_o), fe = mkstemp(tmpl_e);
    if (fo < 0 || fe < 0) abort();
    unlink(tmpl_o);
    unlink(tmpl_e);
    pid_t pid = fork();
    if (pid == 0) {
        int dn = open("/dev/null", O_RDONLY);
        dup2(dn, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    lseek(fo, 0, SEEK_SET);
    lseek(fe, 0, SEEK_SET);
    if (out) *out = slurp_fd(fo);
    if (errout) *errout = slurp_fd(fe);
    close(fo);
    close(fe);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool ping(const char *endpoint, int timeout_ms) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    bool ok = false;
    if (zmq_connect(s, endpoint) == 0) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        msgpack_packer pk;
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_map(&pk, 3);
        msgpack_pack_str(&pk, 2);
        msgpack_pack_str_body(&pk, "op", 2);
        msgpack_pack_str(&pk, 4);
        msgpack_pack_str_body(&pk, "ping", 4);
        msgpack_pack_str(&pk, 1);
        msgpack_pack_str_body(&pk, "v", 1);
        msgpack_pack_int(&pk, 1);
        msgpack_pack_str(&pk, 2);
        msgpack_pack_str_body(&pk, "id", 2);
        msgpack_pack_int(&pk, 1);
        zmq_send(s, sb.data, sb.size, 0);
        msgpack_sbuffer_destroy(&sb);
        zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, timeout_ms) > 0) {
            char buf[4096];
            ok = zmq_recv(s, buf, sizeof buf, 0) > 0;
        }
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
    return ok;
}

int hwtest_server_start(hwtest_server *s, const char *const *extra) {
    memset(s, 0, sizeof *s);
    char bin[4096];
    if (!hwtest_bin("hwgym-server", bin, sizeof bin)) return -1;
    hwtest_tmpdir(s->dir, sizeof s->dir);
    snprintf(s->endpoint, sizeof s->endpoint, "ipc://%s/s.sock", s->dir);
    const char *argv[64];
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "--bind";
    argv[n++] = s->endpoint;
    for (int i = 0; extra && extra[i] && n < 62; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    char log[128];
    snprintf(log, sizeof log, "%s/server.log", s->dir);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a test that was killed */
        int dn = open("/dev/null", O_RDWR);
        int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(dn, 0);
        dup2(lf >= 0 ? lf : dn, 1);
        dup2(lf >= 0 ? lf : dn, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 100; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "hwtest: hwgym-server exited during start-up (status %d)\n", st);
            s->pid = 0;
            hwtest_rmtree(s->dir);
            return -2;
        }
        if (ping(s->endpoint, 100)) return 0;
    }
    fprintf(stderr, "hwtest: hwgym-server did not answer a ping on %s\n", s->endpoint);
    hwtest_server_stop(s);
    return -2;
}

int hwtest_server_stop(hwtest_server *s) {
    int rc = 0;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int st = 0;
        for (int i = 0; i < 1000; i++) { /* up to 10 s, then SIGKILL */
            pid_t r = waitpid(s->pid, &st, WNOHANG);
            if (r == s->pid) break;
            if (i == 999) {
                kill(s->pid, SIGKILL);
                waitpid(s->pid, &st, 0);
            }
            usleep(10000);
        }
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        s->pid = 0;
        if (rc != 0) { /* show what the server said */
            char log[128], buf[4096];
            snprintf(log, sizeof log, "%s/server.log", s->dir);
            FILE *f = fopen(log, "r");
            if (f) {
                fprintf(stderr, "hwtest: hwgym-server exited with status %d; its log:\n", rc);
                size_t n;
                while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stderr);
                fclose(f);
            }
        }
    }
    hwtest_rmtree(s->dir);
    return rc;
}

int hwtest_run_args(const char *const *prefix, const char *const *args, char **out, char **errout) {
    const char *argv[64];
    int n = 0;
    for (int i = 0; prefix[i] && n < 63; i++) argv[n++] = prefix[i];
    for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
    argv[n] = NULL;
    return hwtest_run(argv, out, errout);
}
