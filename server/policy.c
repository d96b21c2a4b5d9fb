/* policy.c - see policy.h */
#include "policy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int hw_policy_add_data_dir(hw_server_opts *o, const char *dir) {
    if (o->ndata_dirs >= HW_MAX_DATA_DIRS) {
        fprintf(stderr, "hwgym-server: --data-dir: at most %d directories\n", HW_MAX_DATA_DIRS);
        return -1;
    }
    char *res = realpath(dir, NULL);
    struct stat st;
    if (!res || stat(res, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "hwgym-server: --data-dir %s: %s\n", dir, res ? "not a directory" : strerror(errno));
        free(res);
        return -1;
    }
    if (strcmp(res, "/") == 0) {
        fprintf(stderr, "hwgym-server: --data-dir /: refusing to serve the whole file system\n");
        free(res);
        return -1;
    }
    o->data_dirs[o->ndata_dirs++] = res; /* lives as long as the process */
    return 0;
}

int hw_policy_add_env_limit(hw_server_opts *o, const char *spec) {
    const char *dot = strchr(spec, '.'), *eq = strchr(spec, '=');
    char *end;
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    if (!dot || !eq || dot > eq || dot == spec || eq == dot + 1 || !eq[1] || *end || v < 0) {
        fprintf(stderr, "hwgym-server: --env-limit '%s': expected ENV.KNOB=N, e.g. dram-v0.count=1000000\n", spec);
        return -1;
    }
    char env[64], knob[64];
    if ((size_t)(dot - spec) >= sizeof env || (size_t)(eq - dot - 1) >= sizeof knob) {
        fprintf(stderr, "hwgym-server: --env-limit '%s': name too long\n", spec);
        return -1;
    }
    snprintf(env, sizeof env, "%.*s", (int)(dot - spec), spec);
    snprintf(knob, sizeof knob, "%.*s", (int)(eq - dot - 1), dot + 1);
    if (!o->env_limits) o->env_limits = json_object();
    json_t *e = json_object_get(o->env_limits, env);
    if (!e) json_object_set_new(o->env_limits, env, e = json_object());
    json_object_set_new(e, knob, json_integer(v));
    return 0;
}

bool hw_policy_bind_is_local(const char *ep) {
    if (!strncmp(ep, "ipc://", 6) || !strncmp(ep, "inproc://", 9)) return true;
    if (strncmp(ep, "tcp://", 6)) return false;
    const char *h = ep + 6;
    return !strncmp(h, "127.", 4) || !strncmp(h, "localhost:", 10) || !strncmp(h, "[::1]:", 6) || !strncmp(h, "lo:", 3);
}

void hw_policy_warn_binds(const hw_server_opts *o) {
    if (o->curve_secret) return;
    for (int i = 0; i < o->nbinds; i++)
        if (!hw_policy_bind_is_local(o->binds[i]))
            fprintf(stderr,
                    "hwgym-server: WARNING: %s is reachable from other hosts and CURVE is off: anyone who can connect\n"
                    "hwgym-server: WARNING: can create sessions and use CPU and memory up to the limits (docs/security.md).\n"
                    "hwgym-server: WARNING: use --curve-secret/--curve-allow, or bind to 127.0.0.1 or ipc://.\n",
                    o->binds[i]);
}

void hw_policy_files(const hw_server_opts *o, hw_files *out) {
    out->dirs = o->data_dirs;
    out->ndirs = o->ndata_dirs;
    out->trusted = false;
    out->max_bytes = o->max_file;
}

hw_env_ctx hw_policy_ctx(const hw_server_opts *o, const hw_files *files, const char *env_id) {
    hw_env_ctx c = {files, o->env_limits ? json_object_get(o->env_limits, env_id) : NULL};
    return c;
}
