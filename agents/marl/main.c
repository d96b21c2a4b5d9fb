/* main.c - hwgym-marl: the MARL launcher (docs/marl.md). Creates a multi-agent session for an
 * agent split (decentralized: one agent per action element; single: one agent for all; or an
 * assignment JSON from `hwgym cluster`), starts one hwgym-marl-worker process per agent (or
 * prints their command lines for other hosts), waits for them, records one run in the trial
 * DB and prints a JSON summary. `hwgym-marl report ...` is the paper-comparison report tool
 * (report.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "hwgym_client.h"
#include "hwgym_trials.h"

extern char **environ;
int marl_report_main(int argc, char **argv);

static const char *usage =
    "usage: hwgym-marl --env ID [--agents decentralized|single|FILE] [options]\n"
    "       hwgym-marl report --help        (the paper-comparison report tool)\n"
    "Decentralised multi-agent RL over one env: one hwgym-marl-worker process per agent, each\n"
    "controlling its own action elements, all sharing the observation and the reward.\n"
    "  --endpoint EP          server (tcp://127.0.0.1:5555); EP1,EP2,...: the run's session goes to\n"
    "                         ONE of them (its agents meet at one barrier), picked by\n"
    "                         HWGYM_SPREAD_INDEX, else SLURM_ARRAY_TASK_ID, else --seed, modulo the\n"
    "                         count: independent runs spread over the servers (docs/cluster.md)\n"
    "  --env ID               env id (required), --config JSON|@file its config\n"
    "  --seed N               run seed (0): episode e resets with seed N+e; policies seeded from N\n"
    "  --budget N             total env samples (1000); every agent acts in every sample\n"
    "  --agents SPLIT         decentralized (one agent per action element, default), single (one\n"
    "                         agent for all), or an assignment JSON file (hwgym cluster --out)\n"
    "  --policy P             worker policy: ppo (default: agents/lib PPO, 64-64 MLPs), ppo-linear\n"
    "                         (linear-softmax PPO) or random\n"
    "  --policy-config JSON   PPO hyper-parameters for every worker (docs/marl.md)\n"
    "  --db PATH              trial DB: one run with the trials (see --log)\n"
    "  --log lead|all         lead (default): one trial per env sample, logged by the first agent;\n"
    "                         all: every agent logs every sample under its own name\n"
    "  --agent-timeout-ms T   barrier timeout of the session (30000)\n"
    "  --worker-bin PATH      hwgym-marl-worker to start (default: next to this binary)\n"
    "  --print-commands       do not start workers: print their command lines (run them on any\n"
    "                         host that reaches EP; with --db on a shared file system), then wait\n"
    "                         for the run's trials in --db (without --db: exit at once)\n"
    "  --checkpoint-every N   every worker checkpoints its whole state before the first reset after\n"
    "                         every N samples (docs/cluster.md)\n"
    "  --checkpoint FILE      checkpoint file shared by the workers (default: the --db path + .ckpt)\n"
    "  --resume               continue the run of the checkpoint: same run id in --db, each worker\n"
    "                         from the newest sample count every worker has (a fresh start when\n"
    "                         there is no checkpoint yet: one command line for every requeue)\n"
    "  --quiet                no progress on stderr\n"
    "Prints a JSON summary on stdout: best_reward, best_action, samples, agents, wall_s, run_id.\n"
    "Exit status: 0 ok, 1 the run failed (a worker failed or timed out), 2 bad usage.\n";

static int bad(const char *fmt, const char *a) {
    fprintf(stderr, "hwgym-marl: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n(see hwgym-marl --help)\n");
    return 2;
}

static int parse_ll(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s) return -1;
    *out = v;
    return 0;
}

static json_t *load_json_arg(const char *text, const char *what) {
    json_error_t je;
    json_t *j = text[0] == '@' ? json_load_file(text + 1, 0, &je) : json_loads(text, 0, &je);
    if (!j) fprintf(stderr, "hwgym-marl: %s: %s (line %d)\n", what, je.text, je.line);
    return j;
}

/* The agents list for make, from the split. n = action elements, names = action_space names. */
static json_t *build_agents(const char *split, int n, const json_t *names, hw_err *err) {
    json_t *agents = json_array();
    if (!strcmp(split, "single")) {
        json_t *dims = json_array();
        for (int i = 0; i < n; i++) json_array_append_new(dims, json_integer(i));
        json_array_append_new(agents, json_pack("{s:s, s:o}", "name", "a0", "dims", dims));
        return agents;
    }
    if (!strcmp(split, "decentralized") || !strcmp(split, "decentralised")) {
        for (int i = 0; i < n; i++) {
            char nm[160];
            const char *pn = json_string_value(json_array_get(names, (size_t)i));
            if (pn && strlen(pn) < 100) snprintf(nm, sizeof nm, "%s", pn);
            else snprintf(nm, sizeof nm, "a%d", i);
            /* names must be unique */
            for (size_t k = 0; k < json_array_size(agents); k++)
                if (!strcmp(json_string_value(json_object_get(json_array_get(agents, k), "name")), nm))
                    snprintf(nm, sizeof nm, "a%d", i);
            json_array_append_new(agents, json_pack("{s:s, s:[i]}", "name", nm, "dims", i));
        }
        return agents;
    }
    json_decref(agents);
    json_error_t je;
    json_t *j = json_load_file(split, 0, &je);
    if (!j) {
        hw_fail(err, HW_E_BAD_CONFIG, "--agents: '%s' is not decentralized, single or a readable JSON file (%s)", split,
                je.text);
        return NULL;
    }
    const json_t *list = json_is_object(j) ? json_object_get(j, "agents") : j;
    if (!json_is_array(list) || !json_array_size(list)) {
        json_decref(j);
        hw_fail(err, HW_E_BAD_CONFIG, "--agents %s: expected {\"agents\":[{\"name\",\"dims\"},...]}", split);
        return NULL;
    }
    agents = json_array();
    int count = 0;
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a) {
        const json_t *nm = json_object_get(a, "name"), *dims = json_object_get(a, "dims");
        if (!json_is_string(nm) || !json_is_array(dims) || !json_array_size(dims)) {
            hw_fail(err, HW_E_BAD_CONFIG, "--agents %s: agents[%zu]: needs \"name\" (string) and \"dims\" (non-empty list)",
                    split, i);
            json_decref(j);
            json_decref(agents);
            return NULL;
        }
        count += (int)json_array_size(dims);
        json_array_append_new(agents, json_pack("{s:O, s:O}", "name", nm, "dims", dims));
    }
    json_decref(j);
    if (count != n) {
        hw_fail(err, HW_E_BAD_CONFIG, "--agents %s: the agents hold %d action elements; the env has %d", split, count,
                n);
        json_decref(agents);
        return NULL;
    }
    return agents;
}

typedef struct worker {
    const char *name;
    pid_t pid;
    int status;
    bool exited;
    char out[PATH_MAX];
    char **argv;
} worker;

static void free_argv(char **argv) {
    if (!argv)
        return;
    for (char **p = argv; *p; p++) free(*p);
    free(argv);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void describe_status(int st, char *buf, size_t cap) {
    if (WIFEXITED(st)) snprintf(buf, cap, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else snprintf(buf, cap, "stopped (status %d)", st);
}

static void shell_quote(FILE *f, const char *s) {
    if (*s && !strpbrk(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~")) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* --resume: the launcher's checkpoint (run id, config) and the newest sample count every agent
 * has a checkpoint at (*resume_at; -1 without --resume). *run_id stays 0 when there is none. */
static int launcher_resume(const char *path, bool resume, const json_t *ident, const json_t *agents, int64_t *run_id,
                           int64_t *resume_at, hw_err *err) {
    *resume_at = -1;
    if (!resume) return 0;
    bool missing = false;
    json_t *stored = NULL;
    ag_ckpt *lc = ag_ckpt_load(path, "launcher", -1, &stored, &missing, err);
    if (!lc) {
        if (!missing) return -1;
        *resume_at = 0; /* nothing yet: start afresh (workers drop nothing) */
        return 0;
    }
    char key[256];
    int rc = 0;
    if (stored && ag_json_first_diff(stored, ident, key, sizeof key))
        rc = hw_fail(err, HW_E_BAD_CONFIG, "--resume: %s was written by a run with another %s", path, key);
    else if (ag_ckpt_get_int(lc, "run.id", run_id, err))
        rc = -1;
    json_decref(stored);
    ag_ckpt_free(lc);
    if (rc) return rc;
    size_t n = json_array_size(agents);
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++) names[i] = json_string_value(json_object_get(json_array_get(agents, i), "name"));
    int64_t s = ag_ckpt_common_samples(path, names, (int)n, err);
    free(names);
    if (s < 0) return -1;
    *resume_at = s;
    fprintf(stderr, "hwgym-marl: resuming run %lld: every agent continues from sample %lld\n", (long long)*run_id,
            (long long)s);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "report")) return marl_report_main(argc - 1, argv + 1);
    const char *endpoint = "tcp://127.0.0.1:5555", *env = NULL, *cfg_text = NULL, *split = "decentralized",
               *policy = "ppo", *pcfg_text = NULL, *dbpath = NULL, *logmode = "lead", *worker_bin = NULL;
    long long seed = 0, budget = 1000, agent_timeout = 30000, ck_every = 0;
    const char *ck_arg = NULL;
    bool print_cmds = false, quiet = false, keep_session = false, resume = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--print-commands")) {
            print_cmds = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            resume = true;
            continue;
        }
        if (i + 1 >= argc) return bad("%s: missing value (or unknown option)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--endpoint")) endpoint = v;
        else if (!strcmp(a, "--env")) env = v;
        else if (!strcmp(a, "--config")) cfg_text = v;
        else if (!strcmp(a, "--agents")) split = v;
        else if (!strcmp(a, "--policy")) policy = v;
        else if (!strcmp(a, "--policy-config")) pcfg_text = v;
        else if (!strcmp(a, "--db")) dbpath = v;
        else if (!strcmp(a, "--log")) logmode = v;
        else if (!strcmp(a, "--worker-bin")) worker_bin = v;
        else if (!strcmp(a, "--checkpoint")) ck_arg = v;
        else if (!strcmp(a, "--checkpoint-every")) {
            if (parse_ll(v, &ck_every) || ck_every < 0) return bad("--checkpoint-every: '%s' is not a count", v);
        }
        else if (!strcmp(a, "--seed")) {
            if (parse_ll(v, &seed)) return bad("--seed: '%s' is not an integer", v);
        } else if (!strcmp(a, "--budget")) {
            if (parse_ll(v, &budget) || budget < 1) return bad("--budget: '%s' is not a positive integer", v);
        } else if (!strcmp(a, "--agent-timeout-ms")) {
            if (parse_ll(v, &agent_timeout) || agent_timeout < 1 || agent_timeout > 86400000)
                return bad("--agent-timeout-ms: '%s' is not a positive integer", v);
        } else
            return bad("unknown option '%s'", a);
    }
    if (!env) return bad("missing %s", "--env ID");
    /* several servers: this run's multi-agent session lives on one (docs/cluster.md) */
    char ep_pick[1024];
    int nep = ag_endpoint_count(endpoint);
    if (nep > 1) {
        int k = ag_run_spread_index(nep, (int64_t)seed);
        if (ag_endpoint_nth(endpoint, k, ep_pick, sizeof ep_pick))
            return bad("--endpoint: '%s' has an empty item", endpoint);
        if (!quiet) fprintf(stderr, "hwgym-marl: session on server %d of %d: %s\n", k + 1, nep, ep_pick);
        endpoint = ep_pick;
    }
    if (strcmp(policy, "ppo") && strcmp(policy, "random") && strcmp(policy, "ppo-linear"))
        return bad("--policy: '%s' is not ppo, ppo-linear or random", policy);
    /* many worker processes on few cores: one BLAS thread each (unless the user says otherwise) */
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    if (strcmp(logmode, "lead") && strcmp(logmode, "all")) return bad("--log: '%s' is not lead or all", logmode);
    char ck_path[PATH_MAX] = "";
    if (ck_arg) snprintf(ck_path, sizeof ck_path, "%s", ck_arg);
    else if (dbpath && (ck_every > 0 || resume)) snprintf(ck_path, sizeof ck_path, "%s.ckpt", dbpath);
    if ((ck_every > 0 || resume) && !ck_path[0]) return bad("%s", "--checkpoint-every/--resume need --checkpoint FILE or --db");

    char wbin[PATH_MAX];
    if (worker_bin) snprintf(wbin, sizeof wbin, "%s", worker_bin);
    else {
        char exe[PATH_MAX - 32];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0) return bad("%s", "cannot find my own binary; use --worker-bin");
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(wbin, sizeof wbin, "%s/hwgym-marl-worker", exe);
    }
    if (!print_cmds && access(wbin, X_OK)) {
        fprintf(stderr, "hwgym-marl: worker binary %s is not executable (build it, or pass --worker-bin)\n", wbin);
        return 1;
    }

    json_t *cfg = NULL, *pcfg = NULL, *agents = NULL, *sp_act = NULL, *sp_obs = NULL, *summary = NULL;
    if (cfg_text && !(cfg = load_json_arg(cfg_text, "--config"))) return 2;
    if (pcfg_text && !(pcfg = load_json_arg(pcfg_text, "--policy-config"))) {
        json_decref(cfg);
        return 2;
    }
    hw_err err = {0};
    int rc = 1, nw = 0;
    worker *ws = NULL;
    hwc_session s = {0};
    hwt_db *db = NULL;
    int64_t run_id = 0, resume_at = -1;
    char tmpdir[64] = "";
    double t0 = hwt_now();
    hwc_client *c = hwc_connect(NULL, endpoint, (int)agent_timeout + 10000, &err);
    if (!c || hwc_hello(c, NULL, &err)) {
        fprintf(stderr, "hwgym-marl: cannot reach the server at %s: %s\n", endpoint, err.msg);
        goto out;
    }
    if (hwc_spaces(c, NULL, env, cfg, &sp_act, &sp_obs, &err)) {
        fprintf(stderr, "hwgym-marl: %s: %s: %s\n", env, hw_code_name(err.code), err.msg);
        goto out;
    }
    {
        const char *type = json_string_value(json_object_get(sp_act, "type"));
        int n = 0;
        if (type && !strcmp(type, "MultiDiscrete")) n = (int)json_array_size(json_object_get(sp_act, "nvec"));
        else if (type && !strcmp(type, "MultiBinary")) n = (int)json_integer_value(json_object_get(sp_act, "n"));
        else {
            fprintf(stderr, "hwgym-marl: %s has a %s action space; MARL needs MultiDiscrete or MultiBinary\n", env,
                    type ? type : "?");
            goto out;
        }
        agents = build_agents(split, n, json_object_get(sp_act, "names"), &err);
        if (!agents) {
            fprintf(stderr, "hwgym-marl: %s\n", err.msg);
            rc = 2;
            goto out;
        }
    }
    nw = (int)json_array_size(agents);
    hwc_make_opts mo = {.num_envs = 0, .agents = agents, .agent_timeout_ms = (int)agent_timeout};
    if (hwc_make(c, env, cfg, &mo, &s, &err)) {
        fprintf(stderr, "hwgym-marl: make %s with %d agents: %s: %s\n", env, nw, hw_code_name(err.code), err.msg);
        goto out;
    }
    if (dbpath) {
        hwt_opts o = hwt_opts_default();
        db = hwt_open(dbpath, &o, &err);
        if (!db) {
            fprintf(stderr, "hwgym-marl: --db: %s\n", err.msg);
            goto out;
        }
        json_t *acfg = json_pack("{s:s, s:O, s:s, s:s, s:I, s:I}", "split", split, "agents", agents, "policy", policy,
                                 "log", logmode, "budget", (json_int_t)budget, "agent_timeout_ms",
                                 (json_int_t)agent_timeout);
        if (pcfg) json_object_set(acfg, "policy_config", pcfg);
        char aname[64];
        snprintf(aname, sizeof aname, "hwgym-marl --agents %s", strchr(split, '/') ? "FILE" : split);
        hwt_run run = {.agent = aname, .agent_config = acfg, .env = env, .env_config = cfg, .has_seed = true,
                       .seed = seed, .endpoint = endpoint};
        json_t *ident = json_pack("{s:O, s:s, s:O?, s:I}", "agent_config", acfg, "env", env, "env_config", cfg,
                                  "seed", (json_int_t)seed);
        if (ck_path[0] && launcher_resume(ck_path, resume, ident, agents, &run_id, &resume_at, &err)) {
            fprintf(stderr, "hwgym-marl: %s\n", err.msg);
            json_decref(ident);
            json_decref(acfg);
            goto out;
        }
        if (run_id <= 0) {
            run_id = hwt_begin_run(db, &run, &err);
            /* a fresh run: no worker may find a checkpoint of an earlier run in this file */
            if (run_id > 0 && ck_path[0] && ag_ckpt_clear(ck_path, NULL, &err)) run_id = -1;
            if (run_id > 0 && ck_path[0]) {
                /* the run id, so that --resume finds it even when no worker checkpointed yet */
                ag_ckpt *lc = ag_ckpt_new();
                ag_ckpt_put_int(lc, "run.id", run_id);
                if (ag_ckpt_save(ck_path, "launcher", 0, ident, lc, &err)) run_id = -1;
                ag_ckpt_free(lc);
            }
        }
        json_decref(ident);
        json_decref(acfg);
        if (run_id < 0) {
            fprintf(stderr, "hwgym-marl: --db: %s\n", err.msg);
            goto out;
        }
        hwt_flush(db, NULL);
    } else if (ck_path[0]) {
        json_t *ident = json_pack("{s:s, s:O?, s:I, s:I}", "env", env, "env_config", cfg, "seed", (json_int_t)seed,
                                  "budget", (json_int_t)budget);
        int64_t dummy = 0;
        int e = launcher_resume(ck_path, resume, ident, agents, &dummy, &resume_at, &err);
        if (!e && dummy <= 0) e = ag_ckpt_clear(ck_path, NULL, &err);
        if (!e && dummy <= 0) {
            ag_ckpt *lc = ag_ckpt_new();
            ag_ckpt_put_int(lc, "run.id", 0);
            e = ag_ckpt_save(ck_path, "launcher", 0, ident, lc, &err);
            ag_ckpt_free(lc);
        }
        json_decref(ident);
        if (e) {
            fprintf(stderr, "hwgym-marl: %s\n", err.msg);
            goto out;
        }
    }
    if (!quiet)
        fprintf(stderr, "hwgym-marl: %s, %d agents (%s), budget %lld samples, policy %s%s\n", env, nw, split, budget,
                policy, print_cmds ? ", printing worker commands" : "");

    ws = calloc((size_t)nw, sizeof *ws);
    if (!print_cmds) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/hwgym-marl.XXXXXX");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "hwgym-marl: mkdtemp: %s\n", strerror(errno));
            tmpdir[0] = 0;
            goto out;
        }
    }
    for (int w = 0; w < nw; w++) {
        worker *k = &ws[w];
        k->name = json_string_value(json_object_get(json_array_get(agents, (size_t)w), "name"));
        char **av = calloc(40, sizeof *av);
        int ac = 0;
        char num[64];
        av[ac++] = strdup(wbin);
        av[ac++] = strdup("--endpoint");
        av[ac++] = strdup(endpoint);
        av[ac++] = strdup("--session");
        av[ac++] = strdup(s.token);
        av[ac++] = strdup("--agent");
        av[ac++] = strdup(k->name);
        av[ac++] = strdup("--seed");
        snprintf(num, sizeof num, "%lld", seed);
        av[ac++] = strdup(num);
        av[ac++] = strdup("--budget");
        snprintf(num, sizeof num, "%lld", budget);
        av[ac++] = strdup(num);
        av[ac++] = strdup("--policy");
        av[ac++] = strdup(policy);
        av[ac++] = strdup("--timeout-ms");
        snprintf(num, sizeof num, "%lld", agent_timeout + 10000);
        av[ac++] = strdup(num);
        if (pcfg) {
            av[ac++] = strdup("--policy-config");
            av[ac++] = json_dumps(pcfg, JSON_COMPACT);
        }
        if (db && (w == 0 || !strcmp(logmode, "all"))) {
            av[ac++] = strdup("--db");
            av[ac++] = strdup(dbpath);
            av[ac++] = strdup("--run");
            snprintf(num, sizeof num, "%lld", (long long)run_id);
            av[ac++] = strdup(num);
        }
        if (ck_path[0]) {
            av[ac++] = strdup("--checkpoint");
            av[ac++] = strdup(ck_path);
            av[ac++] = strdup("--checkpoint-every");
            snprintf(num, sizeof num, "%lld", ck_every);
            av[ac++] = strdup(num);
            if (resume_at >= 0) {
                av[ac++] = strdup("--resume-at");
                snprintf(num, sizeof num, "%lld", (long long)resume_at);
                av[ac++] = strdup(num);
            }
        }
        if (quiet || w > 0) av[ac++] = strdup("--quiet");
        av[ac] = NULL;
        k->argv = av;
        if (print_cmds) {
            for (int i = 0; av[i]; i++) {
                if (i) fputc(' ', stdout);
                shell_quote(stdout, av[i]);
            }
            fputc('\n', stdout);
            continue;
        }
        snprintf(k->out, sizeof k->out, "%s/%d.json", tmpdir, w);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, k->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        int e = posix_spawn(&k->pid, wbin, &fa, NULL, av, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (e) {
            fprintf(stderr, "hwgym-marl: cannot start %s: %s\n", wbin, strerror(e));
            k->pid = 0;
            goto kill_all;
        }
    }
    fflush(stdout);

    if (print_cmds) {
        if (!db) {
            /* the workers will join later: leave the session open (the server reaps it after
             * its idle TTL once they are done) */
            keep_session = true;
            rc = 0;
            goto out;
        }
        /* wait for the workers' trials to arrive in the DB */
        long long want = budget * (strcmp(logmode, "all") ? 1 : nw), have = -1;
        double last_progress = hwt_now();
        sqlite3 *rd = NULL;
        if (sqlite3_open_v2(dbpath, &rd, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
            fprintf(stderr, "hwgym-marl: cannot read %s\n", dbpath);
            sqlite3_close(rd);
            goto out;
        }
        sqlite3_busy_timeout(rd, 5000);
        while (true) {
            sqlite3_stmt *st = NULL;
            long long now_have = have;
            if (sqlite3_prepare_v2(rd, "SELECT COUNT(*) FROM trials WHERE run_id = ?", -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, run_id);
                if (sqlite3_step(st) == SQLITE_ROW) now_have = sqlite3_column_int64(st, 0);
            }
            sqlite3_finalize(st);
            if (now_have != have) {
                have = now_have;
                last_progress = hwt_now();
            }
            if (have >= want) break;
            /* the lead logs in batches (<= 1 s); no progress for the barrier timeout + 15 s: give up */
            if (hwt_now() - last_progress > agent_timeout / 1000.0 + 15 + (have <= 0 ? 600 : 0)) {
                fprintf(stderr, "hwgym-marl: run %lld: %lld of %lld trials arrived, then nothing for %.0f s: giving up\n",
                        (long long)run_id, have, want, hwt_now() - last_progress);
                sqlite3_close(rd);
                goto out;
            }
            usleep(200000);
        }
        sqlite3_close(rd);
        summary = json_pack("{s:s, s:s, s:I, s:i, s:f}", "agent", "hwgym-marl", "env", env, "samples",
                            (json_int_t)budget, "agents", nw, "wall_s", hwt_now() - t0);
        goto finish;
    }

    /* wait for every worker; on a failure give the others the barrier timeout to notice */
    {
        int alive = nw, failed = 0;
        double fail_at = 0;
        while (alive > 0) {
            int st;
            pid_t p = waitpid(-1, &st, WNOHANG);
            if (p > 0) {
                for (int w = 0; w < nw; w++)
                    if (ws[w].pid == p && !ws[w].exited) {
                        ws[w].exited = true;
                        ws[w].status = st;
                        alive--;
                        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                            char d[128];
                            describe_status(st, d, sizeof d);
                            fprintf(stderr, "hwgym-marl: worker '%s' %s\n", ws[w].name, d);
                            if (!failed++) fail_at = hwt_now();
                        }
                    }
                continue;
            }
            if (p < 0 && errno != EINTR) break;
            if (failed && hwt_now() - fail_at > agent_timeout / 1000.0 + 10) {
                for (int w = 0; w < nw; w++)
                    if (!ws[w].exited && ws[w].pid > 0) {
                        fprintf(stderr, "hwgym-marl: worker '%s' still running; stopping it\n", ws[w].name);
                        kill(ws[w].pid, SIGTERM);
                    }
                fail_at = hwt_now() + 3600;
            }
            usleep(20000);
        }
        if (failed) {
            fprintf(stderr, "hwgym-marl: run failed: %d of %d workers did not finish (a stopped worker makes the "
                            "others' barriers time out: TIMEOUT)\n", failed, nw);
            if (db) hwt_abandon_run(db, run_id, NULL); /* a failed run keeps ended_at NULL (docs/marl.md) */
            goto out;
        }
    }
    /* collect the summaries */
    {
        json_t *wsum = json_array();
        double best = -INFINITY;
        json_t *best_action = NULL;
        for (int w = 0; w < nw; w++) {
            char *txt = slurp(ws[w].out);
            json_t *j = txt ? json_loads(txt, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
            free(txt);
            if (!j) {
                fprintf(stderr, "hwgym-marl: worker '%s' printed no summary\n", ws[w].name);
                json_decref(wsum);
                goto out;
            }
            double b = json_number_value(json_object_get(j, "best_reward"));
            if (b > best || !best_action) {
                best = b;
                best_action = json_object_get(j, "best_action");
            }
            json_array_append_new(wsum, j);
        }
        summary = json_pack("{s:s, s:s, s:s, s:I, s:i, s:f, s:O, s:f, s:s}", "agent", "hwgym-marl", "env", env, "split",
                            split, "samples", (json_int_t)budget, "agents", nw, "best_reward", best, "best_action",
                            best_action ? best_action : json_null(), "wall_s", hwt_now() - t0, "policy", policy);
        json_object_set_new(summary, "workers", wsum);
    }
finish:
    if (db) {
        if (hwt_end_run(db, run_id, &err)) {
            fprintf(stderr, "hwgym-marl: --db: %s\n", err.msg);
            goto out;
        }
        json_object_set_new(summary, "run_id", json_integer(run_id));
        if (print_cmds) {
            /* best from the DB */
            sqlite3 *rd = hwt_sqlite(db);
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(rd, "SELECT reward, action FROM trials WHERE run_id = ? AND reward IS NOT NULL "
                                       "ORDER BY reward DESC, id LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, run_id);
                if (sqlite3_step(st) == SQLITE_ROW) {
                    json_object_set_new(summary, "best_reward", json_real(sqlite3_column_double(st, 0)));
                    json_t *a = json_loads((const char *)sqlite3_column_text(st, 1), JSON_DECODE_ANY, NULL);
                    json_object_set_new(summary, "best_action", a ? a : json_null());
                }
            }
            sqlite3_finalize(st);
        }
    }
    {
        char *txt = json_dumps(summary, JSON_COMPACT | JSON_REAL_PRECISION(17));
        printf("%s\n", txt);
        free(txt);
    }
    rc = 0;
    goto out;
kill_all:
    for (int w = 0; w < nw; w++)
        if (ws[w].pid > 0) {
            kill(ws[w].pid, SIGTERM);
            waitpid(ws[w].pid, NULL, 0);
        }
out:
    if (c && s.token[0] && !keep_session) hwc_close(c, &s, NULL);
    hwc_session_free(&s);
    if (c) hwc_disconnect(c);
    if (db) hwt_close(db, NULL);
    if (ws) {
        for (int w = 0; w < nw; w++) {
            if (ws[w].out[0]) unlink(ws[w].out);
            free_argv(ws[w].argv);
        }
        free(ws);
    }
    if (tmpdir[0]) rmdir(tmpdir);
    json_decref(cfg);
    json_decref(pcfg);
    json_decref(agents);
    json_decref(sp_act);
    json_decref(sp_obs);
    json_decref(summary);
    return rc;
}
