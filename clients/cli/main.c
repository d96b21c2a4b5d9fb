/* main.c - the `hwgym` command: dispatches to the subcommands (docs/cli.md).
 * Subcommands built by other parts of the tree (maestro, render for mmap-v0/placement-v0,
 * cluster, report, dram) are weak symbols: a build without them says so instead of failing to link.
 * Each gets (argc, argv) with argv[0] the subcommand's name ("maestro", "render", ...). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hw_codec.h"

int hwcli_maestro(int argc, char **argv) __attribute__((weak));
int hwcli_render_mmap(int argc, char **argv) __attribute__((weak));
int hwcli_render_placement(int argc, char **argv) __attribute__((weak));
int hwcli_cluster(int argc, char **argv) __attribute__((weak));
int hwcli_report(int argc, char **argv) __attribute__((weak));
int hwcli_dram(int argc, char **argv) __attribute__((weak));
int hwcli_timeloop_model(int argc, char **argv) __attribute__((weak));
int hwcli_top(int argc, char **argv) __attribute__((weak));
int hwcli_placement_bound(int argc, char **argv) __attribute__((weak));
int hwcli_leaderboard(int argc, char **argv) __attribute__((weak));

typedef int (*cmd_fn)(int, char **);

static const char *usage =
    "usage: hwgym [--version] [--help] COMMAND [ARGS...]\n"
    "\n"
    "Commands (each takes --help):\n"
    "  envs                      list the envs (this build, or a server with --endpoint)\n"
    "  spaces ENV                action and observation spaces of ENV (--config JSON|@file)\n"
    "  eval ENV                  score one design point: --config JSON --action JSON; metrics as JSON\n"
    "  replay DB                 re-execute a logged run against a server (--run ID --endpoint EP)\n"
    "  export DB                 write trials out: --format csv|jsonl [--run ID] [--out FILE]\n"
    "  report DB                 convergence curves and the best design of a run\n"
    "  cluster DB                cluster the designs of a run\n"
    "  maestro                   MAESTRO-style cost model of a DNN layer mapping\n"
    "  render --env ENV          draw a state of mmap-v0 or placement-v0\n"
    "  placement-bound           upper bounds of placement-v0's speedup over its heuristic (--config)\n"
    "  dram sim|gen|memspecs     the dram-v0 controller/device model without the env\n"
    "  timeloop-model ARCH PROBLEM MAP ERT  Timeloop's model on its YAML files (sched-v0's counting)\n"
    "  top --endpoint EP         live view of a server's stats (sessions, rates, latencies, cache)\n"
    "  leaderboard [SUITE]       every agent on every env, equal budgets, controls, IQM/bootstrap pages\n"
    "\n"
    "JSON for programs goes to stdout, progress and errors to stderr. Exit status: 0 ok,\n"
    "1 the operation failed (replay: mismatches), 2 bad usage. docs/cli.md has the details.\n";

static int not_built(const char *what) {
    fprintf(stderr, "hwgym: '%s' is not built in this version\n", what);
    return 2;
}

static int render(int argc, char **argv) {
    const char *env = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--env") && i + 1 < argc) env = argv[i + 1];
        else if (!strncmp(argv[i], "--env=", 6)) env = argv[i] + 6;
    }
    if (!env) {
        for (int i = 1; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                printf("usage: hwgym render --env mmap-v0|placement-v0 [ARGS...]\n"
                       "Draws a state of the env; `hwgym render --env ENV --help` shows that env's arguments.\n");
                return 0;
            }
        return hwcli_fail("render", 2, "missing --env (mmap-v0 or placement-v0)");
    }
    if (!strcmp(env, "mmap-v0")) return hwcli_render_mmap ? hwcli_render_mmap(argc, argv) : not_built("render --env mmap-v0");
    if (!strcmp(env, "placement-v0"))
        return hwcli_render_placement ? hwcli_render_placement(argc, argv) : not_built("render --env placement-v0");
    return hwcli_fail("render", 2, "--env: '%s' cannot be rendered (mmap-v0 or placement-v0)", env);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(c, "--version")) {
        printf("hwgym %s (protocol %d)\n", HW_VERSION_STRING, HW_PROTOCOL_VERSION);
        return 0;
    }
    static const struct {
        const char *name;
        cmd_fn fn;
    } cmds[] = {{"envs", hwcli_envs}, {"spaces", hwcli_spaces}, {"eval", hwcli_eval}, {"replay", hwcli_replay},
                {"export", hwcli_export}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(c, cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    if (!strcmp(c, "render")) return render(argc - 1, argv + 1);
    struct {
        const char *name;
        cmd_fn fn;
    } weak[] = {{"maestro", hwcli_maestro}, {"cluster", hwcli_cluster}, {"report", hwcli_report}, {"dram", hwcli_dram},
               {"timeloop-model", hwcli_timeloop_model}, {"top", hwcli_top},
               {"placement-bound", hwcli_placement_bound}, {"leaderboard", hwcli_leaderboard}};
    for (size_t i = 0; i < sizeof weak / sizeof weak[0]; i++)
        if (!strcmp(c, weak[i].name)) return weak[i].fn ? weak[i].fn(argc - 1, argv + 1) : not_built(c);
    fprintf(stderr, "hwgym: unknown command '%s' (see hwgym --help)\n", c);
    return 2;
}
