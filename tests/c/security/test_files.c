/* Finding 1-3 of issue 17 at the wire: a remote client reads no file outside the server's data
 * directories, learns nothing about their existence or content, cannot hang a worker with a
 * FIFO or a device nor abort the server with a directory; files inside them and inline
 * content work; local tools keep reading any path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hw_files.h"
#include "registry.h"
#include "sec.h"

/* every config key that names a file, with the rest of a config that makes it be read */
typedef struct probe {
    const char *env, *fmt; /* fmt has one %s: the path */
} probe;

static const probe probes[] = {
    {"maestro-v0", "{\"model_file\":\"%s\",\"layer\":0}"},
    {"maestro-v0", "{\"model\":\"%s\",\"layer\":0}"},
    {"maestro-v0", "{\"hardware\":\"%s\"}"},
    {"placement-v0", "{\"zoo_file\":\"%s\"}"},
    {"placement-v0", "{\"hw_file\":\"%s\"}"},
    {"placement-v0", "{\"graph_file\":\"%s\"}"},
    {"dram-v0", "{\"memspec_file\":\"%s\"}"},
    {"dram-v0", "{\"workload\":\"file\",\"trace_file\":\"%s\"}"},
    {"sched-v0", "{\"accelerator\":\"%s\"}"},
    {"mmap-v0", "{\"problem\":\"%s\"}"},
};
#define NPROBES (sizeof probes / sizeof probes[0])

static json_t *probe_make(void *c, const probe *p, const char *path) {
    char cfg[1200];
    snprintf(cfg, sizeof cfg, p->fmt, path);
    return sec_make(c, p->env, cfg);
}

static void assert_refused(json_t *r, const char *what) {
    cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s: %s", what, err_msg(r));
    cr_assert_null(strstr(err_msg(r), SECRET), "%s quotes the file: %s", what, err_msg(r));
    cr_assert_null(strstr(err_msg(r), "root:"), "%s quotes /etc/passwd: %s", what, err_msg(r));
}

Test(files, no_data_dir_reads_nothing_for_every_file_key, .timeout = 60) {
    secfx f;
    secfx_make(&f);
    srv S;
    sec_start(&S, NULL, NULL);
    void *c = cli_new(S.ep);
    const char *paths[] = {f.secret, "/etc/passwd", "/proc/self/environ", "/proc/self/maps", "relative.csv"};
    for (size_t i = 0; i < NPROBES; i++)
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            json_t *r = probe_make(c, &probes[i], paths[k]);
            char what[200];
            snprintf(what, sizeof what, "%s %s", probes[i].env, probes[i].fmt);
            assert_refused(r, what);
            json_decref(r);
        }
    cli_close(c);
    sec_stop(&S);
    secfx_clean(&f);
}

/* With a data dir: absolute paths, '..', symlinks out, FIFOs, devices, directories and missing
 * files are all refused with one message shape, so existence does not leak; nothing blocks. */
Test(files, data_dir_refuses_escapes_with_one_message, .timeout = 60) {
    secfx f;
    secfx_make(&f);
    srv S;
    sec_start(&S, &f, NULL);
    void *c = cli_new(S.ep);
    char up[400];
    snprintf(up, sizeof up, "../%s", strrchr(f.secret, '/') + 1);
    const char *paths[] = {f.secret, "/etc/passwd", up, "sub/../../secret.csv", "link.csv", "fifo", "ptmx", "sub", "missing.csv",
                           "/dev/ptmx"};
    for (size_t i = 0; i < NPROBES; i++) {
        char first[400] = "";
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            json_t *r = probe_make(c, &probes[i], paths[k]);
            char what[300];
            snprintf(what, sizeof what, "%s %s <- %s", probes[i].env, probes[i].fmt, paths[k]);
            assert_refused(r, what);
            /* existing-but-forbidden and missing files read the same (path aside) */
            if (!strcmp(paths[k], "link.csv") || !strcmp(paths[k], "missing.csv")) {
                char m[400];
                snprintf(m, sizeof m, "%s", err_msg(r));
                char *q = strstr(m, "'");
                if (q) *q = 0; /* the part before the quoted path */
                if (!*first) snprintf(first, sizeof first, "%s", m);
                else cr_assert_str_eq(m, first, "%s: messages differ by existence", what);
            }
            json_decref(r);
        }
    }
    /* a path of 3000 bytes gets its own message, not the '..' one (issue 28) */
    char longp[3001], cfg[3100];
    for (int i = 0; i < 3000; i++) longp[i] = i % 100 == 99 ? '/' : 'a';
    longp[3000] = 0;
    snprintf(cfg, sizeof cfg, "{\"trace_file\":\"%s\",\"workload\":\"file\"}", longp);
    json_t *r = sec_make(c, "dram-v0", cfg);
    cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s", err_msg(r));
    cr_assert(!strstr(err_msg(r), "'..'") && strstr(err_msg(r), "longer than"), "a long path: %s", err_msg(r));
    json_decref(r);
    /* the server is still fully responsive: nothing hung on the FIFO or /dev/ptmx */
    r = call(c, "{\"op\":\"ping\",\"v\":1}");
    cr_assert_null(err_code(r));
    json_decref(r);
    cli_close(c);
    cr_assert_eq(sec_stop(&S), 0);
    secfx_clean(&f);
}

Test(files, parse_errors_never_quote_a_data_file, .timeout = 60) {
    secfx f;
    secfx_make(&f);
    srv S;
    sec_start(&S, &f, NULL);
    void *c = cli_new(S.ep);
    const char *cfgs[][2] = {
        {"placement-v0", "{\"hw_file\":\"bad.json\"}"},         {"placement-v0", "{\"graph_file\":\"acc.json\"}"},
        {"placement-v0", "{\"zoo_file\":\"badmodel.csv\"}"},    {"dram-v0", "{\"memspec_file\":\"acc.json\"}"},
        {"dram-v0", "{\"memspec_file\":\"bad.json\"}"},         {"sched-v0", "{\"accelerator\":\"acc.json\"}"},
        {"maestro-v0", "{\"model_file\":\"badmodel.csv\"}"},    {"maestro-v0", "{\"hardware\":\"badmodel.m\"}"},
        {"mmap-v0", "{\"problem\":\"acc.json\"}"},              {"dram-v0", "{\"workload\":\"file\",\"trace_file\":\"badmodel.csv\"}"},
    };
    char p[600];
    snprintf(p, sizeof p, "%s/badmodel.m", f.data);
    write_file(p, SECRET " 12\n");
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        json_t *r = sec_make(c, cfgs[i][0], cfgs[i][1]);
        cr_assert(err_code(r), "%s %s was accepted", cfgs[i][0], cfgs[i][1]);
        cr_assert_null(strstr(err_msg(r), SECRET), "%s %s quotes the file: %s", cfgs[i][0], cfgs[i][1], err_msg(r));
        cr_assert_str_neq(err_code(r), "IO", "IO is a client-side code");
        json_decref(r);
    }
    cli_close(c);
    sec_stop(&S);
    secfx_clean(&f);
}

Test(files, files_inside_the_data_dir_and_inline_content_work, .timeout = 60) {
    secfx f;
    secfx_make(&f);
    srv S;
    sec_start(&S, &f, NULL);
    void *c = cli_new(S.ep);
    const char *ok[][2] = {
        {"dram-v0", "{\"workload\":\"file\",\"trace_file\":\"trace.stl\"}"},
        {"dram-v0", "{\"workload\":\"file\",\"trace_file\":{\"text\":\"0:\\tread\\t0x0\\n4:\\twrite\\t0x40\\n\"}}"},
        {"maestro-v0", "{\"model_file\":\"model.csv\",\"layer\":0}"},
        {"maestro-v0", "{\"model_file\":{\"text\":\"name,op,N,K,C,R,S,Y,X,Yo,Xo,stride,pad,dilation,groups,inputs\\nc1,conv,1,16,3,3,3,32,32,30,30,1,0,1,1,-1\\n\"},\"layer\":0}"},
        {"placement-v0", "{\"zoo_file\":\"model.csv\"}"},
        {"sched-v0", "{\"accelerator\":{\"text\":\"null\"}}"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        json_t *r = sec_make(c, ok[i][0], ok[i][1]);
        if (i == 5) { /* a text that is not an object is a clear BAD_CONFIG */
            cr_assert_str_eq(sec_code(r), "BAD_CONFIG", "%s", err_msg(r));
        } else {
            cr_assert_null(err_code(r), "%s %s: %s", ok[i][0], ok[i][1], err_msg(r));
        }
        json_decref(r);
    }
    /* an inline text beyond the size limit is a LIMIT */
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_file = 64;
    srv T;
    sec_start(&T, &f, &o);
    void *d = cli_new(T.ep);
    json_t *r = sec_make(d, "dram-v0", "{\"workload\":\"file\",\"trace_file\":{\"text\":\"0:\\tread\\t0x0\\n0:\\tread\\t0x0\\n0:\\tread\\t0x0\\n0:\\tread\\t0x0\\n0:\\tread\\t0x0\\n0:\\tread\\t0x0\\n\"}}");
    cr_assert_str_eq(err_code(r) ? err_code(r) : "OK", "LIMIT", "%s", err_msg(r));
    json_decref(r);
    r = sec_make(d, "dram-v0", "{\"workload\":\"file\",\"trace_file\":\"trace.stl\"}");
    cr_assert_null(err_code(r), "a file within max_file: %s", err_msg(r));
    json_decref(r);
    cli_close(d);
    sec_stop(&T);
    cli_close(c);
    sec_stop(&S);
    secfx_clean(&f);
}

/* Local tools (hw_env_create: the CLI, --endpoint local) keep reading any path; a directory
 * is an error, not an abort. */
Test(files, local_tools_read_any_path) {
    secfx f;
    secfx_make(&f);
    char cfg[800];
    snprintf(cfg, sizeof cfg, "{\"workload\":\"file\",\"trace_file\":\"%s/trace.stl\"}", f.data);
    json_t *j = json_loads(cfg, 0, NULL);
    hw_err err;
    const hw_env_family *fam;
    void *env = hw_env_create("dram-v0", j, &fam, &err);
    cr_assert(env, "%s", err.msg);
    fam->destroy(env);
    json_decref(j);
    snprintf(cfg, sizeof cfg, "{\"workload\":\"file\",\"trace_file\":\"%s/sub\"}", f.data);
    j = json_loads(cfg, 0, NULL);
    cr_assert_null(hw_env_create("dram-v0", j, &fam, &err));
    cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
    json_decref(j);
    secfx_clean(&f);
}
