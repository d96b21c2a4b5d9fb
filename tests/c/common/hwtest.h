/* hwtest.h - small process helpers shared by the C test groups (linked into every test binary).
 * Owns: finding the build's binaries and the repo's files from the test binary's location
 * (BUILD/tests/<group> -> BUILD/bin/...), temp dirs, running a command and capturing its output,
 * and starting/stopping a real hwgym-server on an ipc:// endpoint. */
#ifndef HWTEST_H
#define HWTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* BUILD/bin/<name> into out; returns true when it exists and is executable. */
bool hwtest_bin(const char *name, char *out, size_t cap);
/* A file of the source tree (e.g. "schemas/trials.sql"), found by walking up from the test
 * binary and from the working directory. Returns true when found. */
bool hwtest_repo_file(const char *rel, char *out, size_t cap);
/* mkdtemp("/tmp/hwtest.XXXXXX") into out (cap >= 32); hwtest_rmtree removes it (rm -rf). */
void hwtest_tmpdir(char *out, size_t cap);
void hwtest_rmtree(const char *dir);

/* Runs argv[0] (a path) with argv, stdin from /dev/null. Captures stdout/stderr into malloc'd
 * strings (either pointer may be NULL to discard). Returns the exit status, or 128+signal. */
int hwtest_run(const char *const *argv, char **out, char **errout);
/* Runs `prefix` (the program and its fixed arguments, NULL-terminated) followed by `args`
 * (NULL-terminated); out/errout may be NULL (the output is then dropped). Returns the status. */
int hwtest_run_args(const char *const *prefix, const char *const *args, char **out, char **errout);

typedef struct hwtest_server {
    pid_t pid;
    char dir[64];
    char endpoint[160];
} hwtest_server;

/* Starts BUILD/bin/hwgym-server --bind ipc://<tmpdir>/s.sock [extra args...] (its stdout and
 * stderr go to <tmpdir>/server.log, printed by stop when it exits non-zero; it is killed if the
 * test process dies) and waits until it
 * answers a ping (up to 10 s). Returns 0; -1 when the binary is missing (callers skip); -2 when
 * it did not come up (message on stderr). extra may be NULL; it is NULL-terminated. */
int hwtest_server_start(hwtest_server *s, const char *const *extra);
/* SIGTERM, wait; returns the server's exit status (128+signal when killed). Removes the dir. */
int hwtest_server_stop(hwtest_server *s);

#endif
