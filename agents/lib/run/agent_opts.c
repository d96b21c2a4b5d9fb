/* agent_opts.c - the common agent command line (agent_common.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_common.h"

double ag_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

json_t *ag_json_arg(const char *text, const char *what, hw_err *err) {
    json_error_t je;
    json_t *j;
    if (text[0] == '@') {
        j = json_load_file(text + 1, JSON_DECODE_ANY, &je);
        if (!j) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s: cannot read JSON from %s: %s (line %d)", what, text + 1, je.text, je.line);
            return NULL;
        }
    } else {
        j = json_loads(text, JSON_DECODE_ANY, &je);
        if (!j) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s: invalid JSON: %s (column %d)", what, je.text, je.column);
            return NULL;
        }
    }
    return j;
}

static void usage(FILE *f, const char *prog, const char *summary, const ag_optdef *extra) {
    fprintf(f, "usage: %s [options]\n%s%s", prog, summary ? summary : "", summary ? "\n\n" : "\n");
    fprintf(f, "common options:\n"
               "  --endpoint EP     hwgym-server endpoint (default tcp://127.0.0.1:5555); \"local\" runs\n"
               "                    the env inside this process (no server)\n"
               "  --env ID          env id, e.g. maestro-v0\n"
               "  --config JSON     env config object, or @file.json\n"
               "  --seed N          seed (default 0): same seed, same trials\n"
               "  --budget N        samples to spend (default 1000)\n"
               "  --db PATH         log every trial to this SQLite trial DB\n"
               "  --run-name NAME   a name stored with the run and in the summary\n"
               "  --quiet           no progress line on stderr\n"
               "  --checkpoint FILE checkpoint file (default: the --db path + .ckpt)\n"
               "  --checkpoint-every N  checkpoint the whole agent state every N samples\n"
               "  --resume          continue from the checkpoint and the trial DB (a fresh start\n"
               "                    when there is none yet: one command line for every requeue)\n"
               "  --help            this text\n");
    if (extra && extra[0].name) {
        fprintf(f, "%s options:\n", prog);
        for (const ag_optdef *d = extra; d->name; d++) {
            char lhs[64];
            const char *arg = d->type == AG_OPT_INT ? " N" : d->type == AG_OPT_DOUBLE ? " X" : d->type == AG_OPT_STRING ? " S" : "";
            snprintf(lhs, sizeof lhs, "--%s%s", d->name, arg);
            fprintf(f, "  %-17s %s\n", lhs, d->help ? d->help : "");
        }
    }
    fprintf(f, "Output: progress on stderr, one JSON summary line on stdout.\n");
}

static int parse_i64(const char *v, int64_t *out) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end) return -1;
    *out = x;
    return 0;
}

static int parse_f64(const char *v, double *out) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end) return -1;
    *out = x;
    return 0;
}

int ag_parse_args(int argc, char **argv, const char *prog, const char *summary, const ag_optdef *extra, ag_opts *o,
                  int *exit_code) {
    memset(o, 0, sizeof *o);
    o->endpoint = "tcp://127.0.0.1:5555";
    o->budget = 1000;
    o->prog = prog;
    *exit_code = 0;
    const char *config_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", prog, a);
            goto bad;
        }
        char name[96];
        const char *val = NULL;
        const char *eq = strchr(a + 2, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a - 2), a + 2);
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a + 2);
        }
        if (!strcmp(name, "help")) {
            usage(stdout, prog, summary, extra);
            *exit_code = 0;
            ag_opts_free(o);
            return 1;
        }
        if (!strcmp(name, "quiet")) {
            o->quiet = true;
            continue;
        }
        if (!strcmp(name, "resume")) {
            o->resume = true;
            continue;
        }
        const ag_optdef *d = NULL;
        if (extra)
            for (const ag_optdef *x = extra; x->name; x++)
                if (!strcmp(x->name, name)) d = x;
        if (d && d->type == AG_OPT_FLAG) {
            *(bool *)d->dst = true;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: --%s needs a value\n", prog, name);
                goto bad;
            }
            val = argv[++i];
        }
        int64_t iv;
        if (!strcmp(name, "endpoint")) o->endpoint = val;
        else if (!strcmp(name, "env")) o->env = val;
        else if (!strcmp(name, "config")) config_text = val;
        else if (!strcmp(name, "db")) o->db = val;
        else if (!strcmp(name, "run-name")) o->run_name = val;
        else if (!strcmp(name, "checkpoint")) o->checkpoint = val;
        else if (!strcmp(name, "checkpoint-every")) {
            if (parse_i64(val, &iv) || iv < 0) {
                fprintf(stderr, "%s: --checkpoint-every: expected a non-negative integer, got '%s'\n", prog, val);
                goto bad;
            }
            o->checkpoint_every = iv;
        }
        else if (!strcmp(name, "seed")) {
            if (parse_i64(val, &iv) || iv < 0) {
                fprintf(stderr, "%s: --seed: expected a non-negative integer, got '%s'\n", prog, val);
                goto bad;
            }
            o->seed = (uint64_t)iv;
        } else if (!strcmp(name, "budget")) {
            if (parse_i64(val, &iv) || iv <= 0) {
                fprintf(stderr, "%s: --budget: expected a positive integer, got '%s'\n", prog, val);
                goto bad;
            }
            o->budget = iv;
        } else if (d) {
            if (d->type == AG_OPT_INT) {
                if (parse_i64(val, (int64_t *)d->dst)) {
                    fprintf(stderr, "%s: --%s: expected an integer, got '%s'\n", prog, name, val);
                    goto bad;
                }
            } else if (d->type == AG_OPT_DOUBLE) {
                if (parse_f64(val, (double *)d->dst)) {
                    fprintf(stderr, "%s: --%s: expected a number, got '%s'\n", prog, name, val);
                    goto bad;
                }
            } else {
                *(const char **)d->dst = val;
            }
        } else {
            fprintf(stderr, "%s: unknown option --%s (see --help)\n", prog, name);
            goto bad;
        }
    }
    if ((o->resume || o->checkpoint_every > 0) && !o->checkpoint && !o->db) {
        fprintf(stderr, "%s: --%s needs --checkpoint FILE or --db PATH (the checkpoint goes to PATH.ckpt)\n", prog,
                o->resume ? "resume" : "checkpoint-every");
        goto bad;
    }
    if (config_text) {
        hw_err err = {0};
        o->config = ag_json_arg(config_text, "--config", &err);
        if (!o->config) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            goto bad;
        }
        if (!json_is_object(o->config)) {
            fprintf(stderr, "%s: --config: expected a JSON object\n", prog);
            goto bad;
        }
    } else {
        o->config = json_object();
    }
    return 0;
bad:
    ag_opts_free(o);
    *exit_code = 2;
    return 1;
}

void ag_opts_free(ag_opts *o) {
    if (!o) return;
    json_decref(o->config);
    o->config = NULL;
}

json_t *ag_opts_to_json(const ag_opts *o, const ag_optdef *extra) {
    json_t *j = json_object();
    json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(j, "budget", json_integer(o->budget));
    if (o->run_name) json_object_set_new(j, "run_name", json_string(o->run_name));
    if (extra)
        for (const ag_optdef *d = extra; d->name; d++) {
            json_t *v = NULL;
            switch (d->type) {
            case AG_OPT_INT: v = json_integer(*(int64_t *)d->dst); break;
            case AG_OPT_DOUBLE: v = json_real(*(double *)d->dst); break;
            case AG_OPT_STRING: v = *(const char **)d->dst ? json_string(*(const char **)d->dst) : json_null(); break;
            case AG_OPT_FLAG: v = json_boolean(*(bool *)d->dst); break;
            }
            json_object_set_new(j, d->name, v);
        }
    return j;
}

json_t *ag_json_i64(const int64_t *a, int64_t n) {
    json_t *j = json_array();
    for (int64_t i = 0; i < n; i++) json_array_append_new(j, json_integer(a[i]));
    return j;
}

json_t *ag_json_f64(const double *a, int64_t n) {
    json_t *j = json_array();
    for (int64_t i = 0; i < n; i++) json_array_append_new(j, json_real(a[i]));
    return j;
}
