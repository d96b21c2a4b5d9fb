/* lb_suite.c - see lb_suite.h */
#include "lb_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEDS 1000
#define MAX_EVALS 100000000LL
#define MAX_NAME 60 /* env and agent names: a cell key "ENV/AGENT~off/SEED" fits lb_cell.key */

static const char *str_field(json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* an array of strings (or absent: an empty array); error names `what` */
static int str_array(json_t *o, const char *k, const char *what, json_t **out, hw_err *err) {
    json_t *v = json_object_get(o, k);
    if (!v) v = json_array();
    else json_incref(v);
    if (!json_is_array(v)) {
        json_decref(v);
        return hw_fail(err, HW_E_BAD_REQUEST, "%s.%s: must be an array of strings", what, k);
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) if (!json_is_string(e)) {
        json_decref(v);
        return hw_fail(err, HW_E_BAD_REQUEST, "%s.%s[%zu]: must be a string", what, k, i);
    }
    *out = v;
    return 0;
}

static int parse_budget(json_t *b, const char *what, lb_budget *out, hw_err *err) {
    if (!b) return 0;
    if (!json_is_object(b)) return hw_fail(err, HW_E_BAD_REQUEST, "%s: must be an object {evals, small, cpu_s}", what);
    json_t *v;
    if ((v = json_object_get(b, "evals"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > MAX_EVALS)
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.evals: must be an integer in 1..%lld", what, MAX_EVALS);
        out->evals = json_integer_value(v);
    }
    if ((v = json_object_get(b, "small"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.small: must be a positive integer", what);
        out->small = json_integer_value(v);
    }
    if ((v = json_object_get(b, "cpu_s"))) {
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1e6)
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.cpu_s: must be a number in (0, 1e6]", what);
        out->cpu_s = json_number_value(v);
    }
    return 0;
}

static int parse_agents(lb_suite *s, json_t *ag, hw_err *err) {
    if (!json_is_object(ag) || json_object_size(ag) == 0)
        return hw_fail(err, HW_E_BAD_REQUEST, "agents: must be a non-empty object {name: {bin, args, learning_off}}");
    s->agents = calloc(json_object_size(ag), sizeof *s->agents);
    if (!s->agents) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach(ag, k, v) {
        lb_agent *a = &s->agents[s->nagents++];
        char what[160];
        snprintf(what, sizeof what, "agents.%s", k);
        if (!json_is_object(v)) return hw_fail(err, HW_E_BAD_REQUEST, "%s: must be an object", what);
        if (strchr(k, '/') || strchr(k, '~') || !*k || strlen(k) > MAX_NAME)
            return hw_fail(err, HW_E_BAD_REQUEST, "%s: an agent name must have 1..%d characters, none of them '/' or '~'", what, MAX_NAME);
        a->name = k;
        a->bin = str_field(v, "bin");
        if (!a->bin || strncmp(a->bin, "hwgym-", 6) || strchr(a->bin, '/'))
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.bin: must name an agent binary (hwgym-...)", what);
        a->label = str_field(v, "label") ? str_field(v, "label") : k;
        if (str_array(v, "args", what, &a->args, err)) return -1;
        if (json_object_get(v, "learning_off") && str_array(v, "learning_off", what, &a->off, err)) return -1;
    }
    return 0;
}

static int parse_env(lb_suite *s, json_t *v, size_t i, const lb_budget *dflt, lb_env *e, hw_err *err) {
    char what[64];
    snprintf(what, sizeof what, "envs[%zu]", i);
    if (!json_is_object(v)) return hw_fail(err, HW_E_BAD_REQUEST, "%s: must be an object", what);
    e->name = str_field(v, "name");
    e->env = str_field(v, "env");
    if (!e->name || !*e->name || strchr(e->name, '/') || strlen(e->name) > MAX_NAME)
        return hw_fail(err, HW_E_BAD_REQUEST, "%s.name: must be a string of 1..%d characters without '/'", what, MAX_NAME);
    if (!e->env) return hw_fail(err, HW_E_BAD_REQUEST, "%s.env: missing (an env id, e.g. maestro-v0)", what);
    for (size_t k = 0; k < i; k++)
        if (!strcmp(s->envs[k].name, e->name)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.name: '%s' is used twice", what, e->name);
    e->config = json_object_get(v, "config");
    if (e->config && !json_is_object(e->config)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.config: must be an object", what);
    e->score = str_field(v, "score") ? str_field(v, "score") : "max_reward";
    if (strcmp(e->score, "max_reward") && strcmp(e->score, "max_return") && strcmp(e->score, "sched_log"))
        return hw_fail(err, HW_E_BAD_REQUEST, "%s.score: '%s' (max_reward, max_return or sched_log)", what, e->score);
    json_t *opt = json_object_get(v, "optimum");
    if (opt && !json_is_null(opt)) {
        if (!json_is_number(opt)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.optimum: must be a number", what);
        e->has_optimum = true;
        e->optimum = json_number_value(opt);
    }
    json_t *kn = json_object_get(v, "best_known");
    if (kn && !json_is_null(kn)) {
        if (!json_is_number(kn)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.best_known: must be a number", what);
        e->has_known = true;
        e->known = json_number_value(kn);
    }
    e->budget = *dflt;
    if (parse_budget(json_object_get(v, "budget"), what, &e->budget, err)) return -1;
    if (e->budget.small > e->budget.evals) return hw_fail(err, HW_E_BAD_REQUEST, "%s.budget.small: larger than evals", what);
    json_t *ag = json_object_get(v, "agents");
    if (!json_is_array(ag) || json_array_size(ag) == 0) return hw_fail(err, HW_E_BAD_REQUEST, "%s.agents: must be a non-empty array of agent names", what);
    e->agents = calloc(json_array_size(ag), sizeof *e->agents);
    if (!e->agents) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    size_t k;
    json_t *n;
    json_array_foreach(ag, k, n) {
        const lb_agent *a = json_is_string(n) ? lb_suite_agent(s, json_string_value(n)) : NULL;
        if (!a) return hw_fail(err, HW_E_BAD_REQUEST, "%s.agents[%zu]: not an agent of the suite's agents", what, k);
        e->agents[e->nagents++] = a;
    }
    e->random = str_field(v, "random");
    bool found = false;
    for (size_t j = 0; e->random && j < e->nagents; j++) found |= !strcmp(e->agents[j]->name, e->random);
    if (!found) return hw_fail(err, HW_E_BAD_REQUEST, "%s.random: must name one of the env's agents (the random-search control)", what);
    e->extra = json_object_get(v, "args");
    if (e->extra && !json_is_object(e->extra)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.args: must be an object {agent: [args]}", what);
    const char *an;
    json_t *av;
    json_object_foreach(e->extra, an, av) {
        json_t *tmp;
        if (!lb_suite_agent(s, an)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.args.%s: not an agent of the suite", what, an);
        if (str_array(e->extra, an, what, &tmp, err)) return -1;
        json_decref(tmp);
    }
    return 0;
}

static int parse_papers(lb_suite *s, json_t *p, hw_err *err) {
    if (!p) return 0;
    if (!json_is_array(p)) return hw_fail(err, HW_E_BAD_REQUEST, "papers: must be an array");
    s->papers = calloc(json_array_size(p) + 1, sizeof *s->papers);
    if (!s->papers) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    size_t i;
    json_t *v;
    json_array_foreach(p, i, v) {
        lb_paper *q = &s->papers[s->npapers++];
        char what[64];
        snprintf(what, sizeof what, "papers[%zu]", i);
        q->name = str_field(v, "name");
        q->agent = str_field(v, "agent");
        if (!q->name) return hw_fail(err, HW_E_BAD_REQUEST, "%s.name: missing", what);
        if (!q->agent || !lb_suite_agent(s, q->agent)) return hw_fail(err, HW_E_BAD_REQUEST, "%s.agent: not an agent of the suite", what);
        if (str_array(v, "baselines", what, &q->baselines, err) || str_array(v, "envs", what, &q->envs, err)) return -1;
        size_t k;
        json_t *n;
        json_array_foreach(q->baselines, k, n) if (!lb_suite_agent(s, json_string_value(n)))
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.baselines[%zu]: not an agent of the suite", what, k);
        json_array_foreach(q->envs, k, n) if (!lb_suite_env(s, json_string_value(n)))
            return hw_fail(err, HW_E_BAD_REQUEST, "%s.envs[%zu]: not an env of the suite", what, k);
    }
    return 0;
}

int lb_suite_parse(json_t *root, bool quick, lb_suite *s, hw_err *err) {
    memset(s, 0, sizeof *s);
    if (!json_is_object(root)) return hw_fail(err, HW_E_BAD_REQUEST, "suite: must be a JSON object");
    s->root = json_incref(root);
    s->name = str_field(root, "name") ? str_field(root, "name") : "suite";
    json_t *q = quick ? json_object_get(root, "quick") : NULL;
    if (quick && !json_is_object(q)) return hw_fail(err, HW_E_BAD_REQUEST, "--quick: this suite has no \"quick\" block");
    json_t *sd = q && json_object_get(q, "seeds") ? json_object_get(q, "seeds") : json_object_get(root, "seeds");
    if (!json_is_integer(sd) || json_integer_value(sd) < 1 || json_integer_value(sd) > MAX_SEEDS)
        return hw_fail(err, HW_E_BAD_REQUEST, "seeds: must be an integer in 1..%d", MAX_SEEDS);
    s->seeds = (int)json_integer_value(sd);
    json_t *bs = json_object_get(root, "bootstrap");
    if (bs && (!json_is_integer(bs) || json_integer_value(bs) < 100 || json_integer_value(bs) > 1000000))
        return hw_fail(err, HW_E_BAD_REQUEST, "bootstrap: must be an integer in 100..1000000 (replicates)");
    s->bootstrap = bs ? (size_t)json_integer_value(bs) : 2000;
    lb_budget b = {1000, 100, 60};
    if (parse_budget(json_object_get(root, "budget"), "budget", &b, err)) return -1;
    if (q && parse_budget(json_object_get(q, "budget"), "quick.budget", &b, err)) return -1;
    if (parse_agents(s, json_object_get(root, "agents"), err)) return -1;
    json_t *envs = json_object_get(root, "envs");
    if (!json_is_array(envs) || !json_array_size(envs)) return hw_fail(err, HW_E_BAD_REQUEST, "envs: must be a non-empty array");
    s->envs = calloc(json_array_size(envs), sizeof *s->envs);
    if (!s->envs) return hw_fail(err, HW_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < json_array_size(envs); i++) {
        s->nenvs = i + 1;
        if (parse_env(s, json_array_get(envs, i), i, &b, &s->envs[i], err)) return -1;
    }
    return parse_papers(s, json_object_get(root, "papers"), err);
}

int lb_suite_load(const char *path, bool quick, lb_suite *s, hw_err *err) {
    json_error_t je;
    memset(s, 0, sizeof *s);
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return hw_fail(err, HW_E_BAD_REQUEST, "%s: %s (line %d, column %d)", path, je.text, je.line, je.column);
    int rc = lb_suite_parse(root, quick, s, err);
    json_decref(root);
    if (rc) hw_err_prefix(err, path);
    return rc;
}

void lb_suite_free(lb_suite *s) {
    for (size_t i = 0; i < s->nagents; i++) json_decref(s->agents[i].args), json_decref(s->agents[i].off);
    for (size_t i = 0; i < s->nenvs; i++) free(s->envs[i].agents);
    for (size_t i = 0; i < s->npapers; i++) json_decref(s->papers[i].baselines), json_decref(s->papers[i].envs);
    free(s->agents);
    free(s->envs);
    free(s->papers);
    json_decref(s->root);
    memset(s, 0, sizeof *s);
}

const lb_agent *lb_suite_agent(const lb_suite *s, const char *name) {
    for (size_t i = 0; name && i < s->nagents; i++)
        if (!strcmp(s->agents[i].name, name)) return &s->agents[i];
    return NULL;
}

const lb_env *lb_suite_env(const lb_suite *s, const char *name) {
    for (size_t i = 0; name && i < s->nenvs; i++)
        if (!strcmp(s->envs[i].name, name)) return &s->envs[i];
    return NULL;
}

const char *lb_variant_name(const lb_agent *a, bool off, char *buf, size_t cap) {
    snprintf(buf, cap, "%s%s", a->name, off ? "~off" : "");
    return buf;
}

lb_cell *lb_suite_cells(const lb_suite *s, size_t *n) {
    size_t cap = 0;
    for (size_t i = 0; i < s->nenvs; i++)
        for (size_t j = 0; j < s->envs[i].nagents; j++) cap += (s->envs[i].agents[j]->off ? 2 : 1) * (size_t)s->seeds;
    lb_cell *c = calloc(cap ? cap : 1, sizeof *c);
    *n = 0;
    if (!c) return NULL;
    for (int seed = 0; seed < s->seeds; seed++) /* seed-major: a partial run has every agent at low seeds */
        for (size_t i = 0; i < s->nenvs; i++)
            for (size_t j = 0; j < s->envs[i].nagents; j++)
                for (int off = 0; off <= (s->envs[i].agents[j]->off ? 1 : 0); off++) {
                    lb_cell *x = &c[(*n)++];
                    x->env = &s->envs[i];
                    x->agent = s->envs[i].agents[j];
                    x->off = off;
                    x->seed = seed;
                    char v[96];
                    snprintf(x->key, sizeof x->key, "%s/%s/%d", x->env->name, lb_variant_name(x->agent, off, v, sizeof v), seed);
                }
    return c;
}

static void push_args(char **argv, size_t *n, json_t *arr) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) argv[(*n)++] = strdup(json_string_value(v));
}

char **lb_cell_argv(const lb_cell *c, const char *bindir, const char *endpoint, const char *db) {
    json_t *extra = c->env->extra ? json_object_get(c->env->extra, c->agent->name) : NULL;
    size_t cap = 24 + json_array_size(c->agent->args) + json_array_size(extra) + json_array_size(c->agent->off);
    char **argv = calloc(cap, sizeof *argv);
    if (!argv) return NULL;
    size_t n = 0;
    char buf[64];
    if (asprintf(&argv[n++], "%s/%s", bindir, c->agent->bin) < 0) argv[n - 1] = NULL;
    argv[n++] = strdup("--endpoint");
    argv[n++] = strdup(endpoint);
    argv[n++] = strdup("--env");
    argv[n++] = strdup(c->env->env);
    argv[n++] = strdup("--config");
    argv[n++] = c->env->config ? json_dumps(c->env->config, JSON_COMPACT) : strdup("{}");
    argv[n++] = strdup("--seed");
    snprintf(buf, sizeof buf, "%d", c->seed);
    argv[n++] = strdup(buf);
    argv[n++] = strdup("--budget");
    snprintf(buf, sizeof buf, "%lld", c->env->budget.evals);
    argv[n++] = strdup(buf);
    argv[n++] = strdup("--db");
    argv[n++] = strdup(db);
    argv[n++] = strdup("--quiet");
    push_args(argv, &n, c->agent->args);
    push_args(argv, &n, extra);
    if (c->off) push_args(argv, &n, c->agent->off);
    for (size_t i = 0; i < n; i++)
        if (!argv[i]) {
            lb_argv_free(argv);
            return NULL;
        }
    return argv;
}

void lb_argv_free(char **argv) {
    if (!argv) return;
    for (size_t i = 0; argv[i]; i++) free(argv[i]);
    free(argv);
}
