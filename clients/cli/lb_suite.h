/* lb_suite.h - a leaderboard suite (leaderboard/NAME.json; docs/leaderboard.md has the format).
 * Owns: parsing and checking a suite (errors name the offending field), its expansion into
 * cells (env config x agent variant x seed) and a cell's agent command line.
 * A variant is an agent as declared ("ppo") or, for an agent that declares "learning_off",
 * the same agent untrained ("ppo~off"). Keys: "ENV/VARIANT/SEED", e.g. "diag-a/ppo~off/3". */
#ifndef LB_SUITE_H
#define LB_SUITE_H

#include <jansson.h>
#include <stdbool.h>

#include "hw_error.h"

typedef struct lb_budget {
    long long evals;    /* evaluations (env steps or designs) per run: the large budget */
    long long small;    /* the small budget (evaluations), <= evals */
    double cpu_s;       /* CPU-second cap per run (agent process) */
} lb_budget;

typedef struct lb_agent {
    const char *name, *bin;     /* "ppo", "hwgym-ppo" */
    json_t *args;               /* array of strings */
    json_t *off;                /* learning-off args (array) or NULL: not a learning agent */
    const char *label;          /* display name (defaults to name) */
} lb_agent;

typedef struct lb_env {
    const char *name, *env;     /* "maestro-resnet", "maestro-v0" (the family) */
    json_t *config;             /* object */
    const char *score;          /* "max_reward" | "max_return" | "sched_log" */
    bool has_optimum, has_known;
    double optimum;             /* the env's optimum (1 on the normalised scale) */
    double known;               /* a known design's score, e.g. a heuristic's: 1 = max(known, best logged) */
    const char *random;         /* the random control's agent name */
    size_t nagents;
    const lb_agent **agents;    /* agents run on this env */
    json_t *extra;              /* object: agent name -> extra args on this env (may be NULL) */
    lb_budget budget;
} lb_env;

typedef struct lb_paper {
    const char *name, *agent;   /* "EGRL (placement-v0)", "egrl" */
    json_t *baselines;          /* array of agent names */
    json_t *envs;               /* array of env names (empty: every env that runs the agent) */
} lb_paper;

typedef struct lb_suite {
    json_t *root;               /* owns every string above */
    const char *name;
    int seeds;
    size_t bootstrap;
    size_t nagents, nenvs, npapers;
    lb_agent *agents;
    lb_env *envs;
    lb_paper *papers;
} lb_suite;

typedef struct lb_cell {
    const lb_env *env;
    const lb_agent *agent;
    bool off;                   /* learning off */
    int seed;
    char key[192];
} lb_cell;

/* Parses a suite. `quick` applies its "quick" block (seeds, budget). Takes a reference to root. */
int lb_suite_parse(json_t *root, bool quick, lb_suite *s, hw_err *err);
int lb_suite_load(const char *path, bool quick, lb_suite *s, hw_err *err);
void lb_suite_free(lb_suite *s);
const lb_agent *lb_suite_agent(const lb_suite *s, const char *name);
const lb_env *lb_suite_env(const lb_suite *s, const char *name);

/* Every cell of the suite (caller frees). */
lb_cell *lb_suite_cells(const lb_suite *s, size_t *n);
/* "ppo" or "ppo~off" into buf */
const char *lb_variant_name(const lb_agent *a, bool off, char *buf, size_t cap);

/* The cell's argv (NULL-terminated; free with lb_argv_free): BINDIR/BIN --endpoint EP --env ..
 * --config JSON --seed S --budget N --db DB --quiet [agent args] [env extra] [learning off]. */
char **lb_cell_argv(const lb_cell *c, const char *bindir, const char *endpoint, const char *db);
void lb_argv_free(char **argv);

#endif
