/* Server lifecycle: parallel stepping across workers, TTL reaping, a client killed mid-request,
 * SIGTERM drain with exit 0 (real binary), --help, --cpu placement of the threads. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "harness.h"
#include "../common/hwtest.h"

extern char **environ;

static char *make_diag(void *c, const char *cfg) {
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":%s}", cfg);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    char *tok = strdup(json_string_value(json_object_get(r, "session")));
    json_decref(r);
    json_decref(call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\"}", tok));
    return tok;
}

Test(lifecycle, sessions_on_different_workers_step_concurrently, .timeout = 60) {
    srv S;
    srv_start(&S, 2, 600);
    void *c = cli_new(S.ep);
    char *slow = make_diag(c, "{\"step_us\":700000}");
    char *fast = make_diag(c, "{}"); /* least-loaded placement puts it on the other worker */
    void *a = cli_new(S.ep), *b = cli_new(S.ep);
    send_json(a, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", slow);
    usleep(50000);
    send_json(b, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", fast);
    zmq_pollitem_t it[2] = {{a, 0, ZMQ_POLLIN, 0}, {b, 0, ZMQ_POLLIN, 0}};
    cr_assert_eq(zmq_poll(it, 2, 5000), 1);
    cr_assert(it[1].revents & ZMQ_POLLIN, "the fast session answered first, while the slow one was still stepping");
    json_decref(recv_reply(b));
    json_decref(recv_reply(a));
    cli_close(a);
    cli_close(b);
    cli_close(c);
    free(slow);
    free(fast);
    cr_assert_eq(srv_stop(&S), 0);
}

Test(lifecycle, idle_sessions_reaped_after_ttl, .timeout = 60) {
    srv S;
    srv_start(&S, 2, 0.3);
    void *c = cli_new(S.ep);
    char *tok = make_diag(c, "{}");
    json_t *r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 1);
    json_decref(r);
    usleep(900000);
    r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok);
    cr_assert_str_eq(err_code(r), "UNKNOWN_SESSION");
    cr_assert(strstr(err_msg(r), "reaped"), "%s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 0);
    cr_assert_eq(json_integer_value(json_object_get(r, "reaped")), 1);
    json_decref(r);
    free(tok);
    cli_close(c);
    cr_assert_eq(srv_stop(&S), 0);
}

Test(lifecycle, client_killed_mid_request_leaves_no_stuck_session, .timeout = 60) {
    srv S;
    srv_start(&S, 2, 0.5);
    pid_t pid = fork();
    if (pid == 0) {
        void *ctx = zmq_ctx_new();
        void *s = zmq_socket(ctx, ZMQ_DEALER);
        zmq_connect(s, S.ep);
        const char *mk = "\x83\xa2op\xa4make\xa1v\x01\xa3" "env\xa7" "diag-v0";
        zmq_send(s, mk, strlen(mk), 0);
        char buf[4096];
        int n = zmq_recv(s, buf, sizeof buf, 0);
        (void)n;
        /* ... then it would step; it gets killed while waiting */
        pause();
        _exit(0);
    }
    usleep(300000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    void *c = cli_new(S.ep);
    json_t *r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 1);
    json_decref(r);
    usleep(1200000);
    r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 0, "the orphan was reaped");
    cr_assert_eq(json_integer_value(json_object_get(r, "inflight")), 0);
    json_decref(r);
    char *tok = make_diag(c, "{}");
    r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok);
    cr_assert_null(err_code(r));
    json_decref(r);
    free(tok);
    cli_close(c);
    cr_assert_eq(srv_stop(&S), 0);
}

/* until the server binary `pid` answers a ping on `ep` (killed, and the test failed, if it never does) */
static void wait_started(pid_t pid, const char *ep) {
    json_t *r = NULL;
    for (int i = 0; i < 200 && !r; i++) { /* a fresh socket per try: no stale replies later */
        void *p = cli_new(ep);
        int to = 100;
        zmq_setsockopt(p, ZMQ_RCVTIMEO, &to, sizeof to);
        r = call(p, "{\"op\":\"ping\",\"v\":1}");
        cli_close(p);
    }
    if (!r) kill(pid, SIGKILL);
    cr_assert(r, "server binary did not start");
    json_decref(r);
}

/* the server binary bound to `ep`, with the flags in `extra` (NULL-terminated; NULL: none) */
static pid_t spawn_server(const char *ep, const char *const *extra) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char *argv[16] = {bin, "--bind", (char *)ep};
    int n = 3;
    for (int i = 0; extra && extra[i] && n < 15; i++) argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0, "cannot start %s", bin);
    return pid;
}

Test(lifecycle, sigterm_finishes_work_in_flight_and_exits_zero, .timeout = 60) {
    char ep[128];
    snprintf(ep, sizeof ep, "ipc:///tmp/hwgym-sigterm-%d.sock", (int)getpid());
    pid_t pid = spawn_server(ep, NULL);
    wait_started(pid, ep);
    void *c = cli_new(ep);
    char *tok = make_diag(c, "{\"step_us\":500000}");
    send_json(c, "{\"op\":\"step\",\"v\":1,\"id\":99,\"session\":\"%s\",\"action\":[0,0,0,0]}", tok);
    json_decref(call(c, "{\"op\":\"ping\",\"v\":1}")); /* answered first: the server has read the step */
    kill(pid, SIGTERM);
    json_t *r = recv_reply(c);
    cr_assert(r, "the step in flight was answered");
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert_eq(json_integer_value(json_object_get(r, "id")), 99);
    json_decref(r);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
    free(tok);
    cli_close(c);
}

Test(lifecycle, help_and_bad_flags) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s --help | grep -q -- --session-ttl", bin);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --workers zero 2>&1 | grep -q -- '--workers'", bin);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --bind bogus://x 2>/dev/null", bin);
    cr_assert_neq(system(cmd), 0);
    /* an unknown flag: named, a pointer to --help, exit 2, and not the whole usage */
    const char *bad[] = {bin, "--bogus", NULL};
    char *err = NULL;
    cr_assert_eq(hwtest_run(bad, NULL, &err), 2);
    int lines = 0;
    for (const char *p = err; *p; p++) lines += *p == '\n';
    cr_assert(strstr(err, "--bogus") && strstr(err, "see --help") && lines <= 2, "%s", err);
    free(err);
    const char *spin[] = {bin, "--spin-us", "20000", NULL}; /* over its 10 ms cap */
    cr_assert_eq(hwtest_run(spin, NULL, &err), 2);
    cr_assert(strstr(err, "--spin-us") && strstr(err, "10000"), "%s", err);
    free(err);
    const char *clients[] = {bin, "--spin-clients", "-1", NULL};
    cr_assert_eq(hwtest_run(clients, NULL, &err), 2);
    cr_assert(strstr(err, "--spin-clients") && strstr(err, "64"), "%s", err);
    free(err);
}

Test(lifecycle, several_bind_endpoints_serve_the_same_sessions, .timeout = 60) {
    srv S;
    hw_server_opts o;
    hw_server_default_opts(&o);
    char tcp[64];
    snprintf(tcp, sizeof tcp, "tcp://127.0.0.1:%d", 30000 + (int)(getpid() % 20000));
    o.binds[1] = tcp;
    o.nbinds = 2;
    srv_start_opts(&S, &o);
    void *a = cli_new(S.ep), *b = cli_new(tcp);
    char *tok = make_diag(a, "{}");
    json_t *r = call(b, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,1,1,1]}", tok);
    cr_assert_null(err_code(r), "a session made over ipc steps over tcp: %s", err_msg(r));
    json_decref(r);
    free(tok);
    cli_close(a);
    cli_close(b);
    cr_assert_eq(srv_stop(&S), 0);
}

Test(lifecycle, sessions_per_client_are_capped, .timeout = 60) {
    srv S;
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.max_sessions_per_client = 2;
    o.reclaim_idle_s = 600; /* no session here is idle long enough to be reclaimed */
    int port;
    srv_start_tcp(&S, &o, &port);
    /* a client is its address (CURVE key when CURVE is on), not its connection */
    void *a = cli_new_as("127.0.0.2", port), *a2 = cli_new_as("127.0.0.2", port), *b = cli_new_as("127.0.0.3", port);
    char *t1 = make_diag(a, "{}"), *t2 = make_diag(a, "{}");
    json_t *r = call(a, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\"}");
    cr_assert_str_eq(err_code(r), "LIMIT");
    cr_assert(strstr(err_msg(r), "--max-sessions-per-client"), "%s", err_msg(r));
    json_decref(r);
    r = call(a2, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\"}"); /* a new connection does not get round it */
    cr_assert_str_eq(err_code(r), "LIMIT");
    json_decref(r);
    cli_close(a2);
    char *t3 = make_diag(b, "{}"); /* another client is not affected */
    json_decref(call(a, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", t1));
    char *t4 = make_diag(a, "{}"); /* closing one frees a place */
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    cli_close(a);
    cli_close(b);
    cr_assert_eq(srv_stop(&S), 0);
}

/* the Cpus_allowed_list of thread `tid` of `pid` into out ("" if unreadable) */
static void task_cpus(pid_t pid, const char *tid, char *out, size_t n) {
    char path[320], line[256], v[128];
    out[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%s/status", (int)pid, tid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Cpus_allowed_list:", 18) && sscanf(line + 18, "%127s", v) == 1) snprintf(out, n, "%s", v);
    fclose(f);
}

/* the Cpus_allowed_list of the threads of `pid` named `name` (prefix): the one they share in out,
 * how many in *count, and in *differ whether they did not all share it */
static void thread_cpus(pid_t pid, const char *name, char *out, size_t n, int *count, bool *differ) {
    char path[320], comm[64], v[128];
    *count = 0;
    *differ = false;
    out[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    cr_assert(d, "cannot list %s", path);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        bool named = fgets(comm, sizeof comm, f) && !strncmp(comm, name, strlen(name));
        fclose(f);
        if (!named) continue;
        task_cpus(pid, de->d_name, v, sizeof v);
        if (*count && strcmp(out, v)) *differ = true;
        snprintf(out, n, "%s", v);
        (*count)++;
    }
    closedir(d);
}

/* --cpu N: the router thread (the process's own name) and ZeroMQ's I/O thread on N, the workers
 * on the process's other CPUs; a CPU the process may not use is refused naming the flag */
Test(lifecycle, cpu_places_router_and_io_thread_together, .timeout = 60) {
    cpu_set_t m;
    cr_assert_eq(sched_getaffinity(0, sizeof m, &m), 0);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &m)) last = c;
    char bin[4096], cpu[16], ep[128];
    built_bin("hwgym-server", bin, sizeof bin);
    snprintf(cpu, sizeof cpu, "%d", last);
    snprintf(ep, sizeof ep, "ipc:///tmp/hwgym-cpu-%d.sock", (int)getpid());
    pid_t pid = spawn_server(ep, (const char *[]){"--workers", "2", "--cpu", cpu, NULL});
    wait_started(pid, ep);
    char got[128], main_tid[24];
    int k;
    bool differ;
    snprintf(main_tid, sizeof main_tid, "%d", (int)pid); /* the router is the main thread (other threads
                                                             a library starts at load share its name) */
    task_cpus(pid, main_tid, got, sizeof got);
    cr_assert_str_eq(got, cpu, "router thread on %s, want %s", got, cpu);
    thread_cpus(pid, "ZMQbg/IO", got, sizeof got, &k, &differ);
    cr_assert(k == 1 && !strcmp(got, cpu), "ZeroMQ I/O thread on %s (%d), want %s", got, k, cpu);
    thread_cpus(pid, "hwgym-worker-", got, sizeof got, &k, &differ);
    cr_assert_eq(k, 2, "two workers named hwgym-worker-N");
    cr_assert(!differ, "the workers have different CPU lists");
    if (CPU_COUNT(&m) > 1) { /* a worker's list holds every allowed CPU but `last` */
        char want[128] = "";
        snprintf(want, sizeof want, "%d", last);
        cr_assert(strcmp(got, want) != 0, "workers left on the router's CPU: %s", got);
        int lo = -1, hi = -1;
        cr_assert(sscanf(got, "%d-%d", &lo, &hi) >= 1);
        cr_assert(lo != last && (hi < 0 || hi != last), "workers' CPUs %s include %d", got, last);
    }
    kill(pid, SIGTERM);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "%s --cpu 100000 2>&1 | grep -q -- '--cpu 100000: not a CPU this process may run on'", bin);
    cr_assert_eq(system(cmd), 0, "a CPU outside the process's set is refused naming --cpu");
    snprintf(cmd, sizeof cmd, "%s --cpu 100000 >/dev/null 2>&1", bin);
    cr_assert_eq(WEXITSTATUS(system(cmd)), 2);
}
