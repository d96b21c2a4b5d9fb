/* cli.h - shared pieces of the `hwgym` command (clients/cli).
 * Owns: the subcommand entry points, option parsing with errors that name the argument,
 * JSON arguments (inline or @file), and JSON output. Every subcommand is
 * `int hwcli_<name>(int argc, char **argv)` with argv[0] the subcommand's name; it returns the
 * process exit status: 0 ok, 1 the operation failed (or replay found mismatches), 2 bad usage. */
#ifndef HWCLI_H
#define HWCLI_H

#include <jansson.h>
#include <stdbool.h>

#include "hw_error.h"

#define HWCLI_DEFAULT_TIMEOUT_MS 30000

int hwcli_envs(int argc, char **argv);
int hwcli_spaces(int argc, char **argv);
int hwcli_eval(int argc, char **argv);
int hwcli_replay(int argc, char **argv);
int hwcli_export(int argc, char **argv);
int hwcli_timeloop_model(int argc, char **argv); /* cmd_timeloop.c */

typedef struct hwcli_opt {
    const char *name;    /* "--config" */
    const char **value;  /* option with a value (NULL for a flag) */
    bool *flag;          /* flag (NULL for an option with a value) */
} hwcli_opt;

/* Parses argv[1..]: options from `opts` (NULL-name terminated; "--x v" or "--x=v"), "--help"/"-h",
 * and up to maxpos positionals. Returns 0; 1 when help was asked (usage printed to stdout);
 * 2 after printing "hwgym CMD: <problem>" and the usage to stderr. */
int hwcli_parse(int argc, char **argv, const hwcli_opt *opts, const char **pos, int maxpos, int minpos, int *npos,
                const char *usage);
/* "hwgym CMD: message" on stderr; returns `rc`. */
int hwcli_fail(const char *cmd, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Inline JSON or @file. `what` names the argument in errors ("--config"). NULL text -> NULL, ok. */
int hwcli_json_arg(const char *text, const char *what, json_t **out, hw_err *err);
/* A positive integer argument; errors name it. */
int hwcli_int_arg(const char *text, const char *what, long long lo, long long hi, long long *out, hw_err *err);
/* Prints JSON on stdout (compact, one line, reals with 17 significant digits) and a newline. */
void hwcli_print_json(const json_t *j);

#endif
