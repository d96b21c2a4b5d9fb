/* bench_instances.c - issue 29's fixed-step lines over several fresh server/echo process pairs.
 * bench_server measures every line on one server process and one echo process. Which pair a run
 * gets moves the ratio: a ping (no session, no env work) came out 22 us faster to 23 us slower
 * than the echo of its sizes from one fresh pair to the next, each pair steady within itself,
 * and two fresh echo processes differed by up to 8 us (bench/README.md, eighth session). So a
 * verdict from one pair is partly a draw. This starts K pairs in turn (a new hwgym-server and a
 * new echo each time), measures in each the ping, diag-v0's fixed step (line 1) and maestro-v0's
 * fixed step (line 1b) against the echo of their sizes (bench_wire.h's blocks), and reports the
 * ratios of every pair and their median over pairs.
 * Usage: bench_instances [--pairs K] [--iters N] [--server PATH] [--cpu N] [--spin-us N [--echo-spins]] */

#include "bench_procs.h"

/* a made and reset session of `env` with `cfg`, its step request with `act` packed into req */
static bool line_step(void *s, msgpack_sbuffer *req, const char *env, const char *cfg, int64_t dims, int64_t *act) {
    char txt[512];
    snprintf(txt, sizeof txt, "{\"op\":\"make\",\"v\":1,\"env\":\"%s\",\"config\":%s}", env, cfg);
    json_t *r = call(s, txt);
    const char *tok = r ? json_string_value(json_object_get(r, "session")) : NULL;
    if (!tok) {
        json_decref(r);
        return false;
    }
    char t[64];
    snprintf(t, sizeof t, "%s", tok);
    json_decref(r);
    snprintf(txt, sizeof txt, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":1}", t);
    json_decref(call(s, txt));
    pack_step(req, t, 0, dims, act);
    return true;
}

/* the ratio of the server's round trip to the echo's of the same sizes */
static double ratio(void *s, void *e, const msgpack_sbuffer *req, int iters, double *ms, double *me) {
    size_t en;
    char *ereq = echo_request(req->size, rt(s, req->data, req->size), &en);
    double q = paired_ratio(s, req->data, req->size, e, ereq, en, iters, 1, ms, me);
    free(ereq);
    return q;
}

int main(int argc, char **argv) {
    int pairs = 8, iters = 2000;
    const char *server_bin = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server") && i + 1 < argc) server_bin = argv[++i];
        else if (procs_flag(argc, argv, &i)) continue; /* --cpu, --spin-us, --echo-spins */
        else {
            printf("usage: bench_instances [--pairs K] [--iters N] [--server PATH] [--cpu N] [--spin-us N [--echo-spins]]\n"
                   "  issue 29's ping, line 1 (diag-v0 fixed step) and line 1b (maestro-v0 fixed step) against the raw echo of\n"
                   "  their sizes, each in K fresh server/echo process pairs (default 8), N round trips of each (default 2000);\n"
                   "  --cpu N: the server with --cpu N and the echo on CPU N (bench_server --cpu)\n"
                   "  --spin-us N: the server with --spin-us N, the echo blocking, or polling alike with --echo-spins\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (pairs < 1 || pairs > 64 || iters < BLK_N) {
        fprintf(stderr, "bench_instances: --pairs must be in 1..64 and --iters at least %d\n", BLK_N);
        return 2;
    }
    char bin[4200];
    server_path(bin, sizeof bin, server_bin);
    printf("issue 29's fixed-step lines in %d fresh server/echo process pairs%s (ratio to the raw echo of the same sizes, %d round trips each):\n",
           pairs, procs_mode(), iters);
    double q[3][64], us[3][64]; /* us: maestro-v0's step, its echo (medians, us) and the server's CPU a step */
    int got = 0;
    for (int k = 0; k < pairs; k++) {
        int port = bench_port(3 * k);
        char ep[64], eep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
        snprintf(eep, sizeof eep, "tcp://127.0.0.1:*");
        pid_t echo = start_echo(eep, sizeof eep);
        if (echo < 0) return 1;
        pid_t srv = start_server(bin, ep, NULL);
        void *ctx = zmq_ctx_new();
        if (srv < 0 || !wait_ping(ctx, ep)) {
            fprintf(stderr, "bench_instances: %s did not answer on %s\n", bin, ep);
            if (srv > 0) kill(srv, SIGKILL);
            kill(echo, SIGKILL);
            return 1;
        }
        void *s = req_socket(ctx, ep), *e = req_socket(ctx, eep);
        msgpack_sbuffer L[3] = {{0}}; /* zeroed: destroying one never packed frees nothing */
        pack_json_text(&L[0], "{\"op\":\"ping\",\"v\":1}");
        int64_t da[4] = {1, 2, 3, 4}, ma[10] = {3, 1, 0, 1, 5, 2, 0, 0, 3, 5};
        bool ok = line_step(s, &L[1], "diag-v0", "{\"dims\":4,\"episode_length\":1000000}", 4, da) &&
                  line_step(s, &L[2], "maestro-v0", "{\"model\":\"mobilenet_v2\",\"layer\":2,\"episode_length\":100000000}", 10, ma);
        if (ok) {
            double ms, me; /* the medians of the last line measured, maestro-v0's */
            for (int j = 0; j < 3; j++) q[j][got] = ratio(s, e, &L[j], iters, &ms, &me);
            us[0][got] = ms, us[1][got] = me;
            us[2][got] = cpu_per_rt(srv, s, L[2].data, L[2].size, iters); /* all its threads, schedstat */
            printf("  pair %d: ping %.2f, diag-v0 fixed step %.2f, maestro-v0 fixed step %.2f (%.1f us against %.1f; server CPU %.1f us a step)\n",
                   k + 1, q[0][got], q[1][got], q[2][got], us[0][got], us[1][got], us[2][got]);
            got++;
        } else {
            printf("  pair %d: could not make the sessions\n", k + 1);
        }
        for (int j = 0; j < 3; j++) msgpack_sbuffer_destroy(&L[j]);
        stop_all(srv, -1, e, echo);
        zmq_close(s);
        zmq_close(e);
        zmq_ctx_term(ctx);
    }
    if (!got) return 1;
    double lo[3], hi[3], md[3];
    for (int j = 0; j < 3; j++) {
        lo[j] = hi[j] = q[j][0];
        for (int k = 1; k < got; k++) {
            if (q[j][k] < lo[j]) lo[j] = q[j][k];
            if (q[j][k] > hi[j]) hi[j] = q[j][k];
        }
        md[j] = median(q[j], got); /* sorts q[j] */
    }
    double mu[3];
    for (int j = 0; j < 3; j++) mu[j] = median(us[j], got);
    bool pass = md[1] <= 1.15 && md[2] <= 1.15;
    printf("issue 29 over %d fresh pairs%s, medians (range): ping's control %.2f (%.2f-%.2f), diag-v0 fixed step %.2f (%.2f-%.2f), "
           "maestro-v0 fixed step %.2f (%.2f-%.2f): %s; maestro-v0's step %.1f us, its echo %.1f us, the server's CPU "
           "%.1f us a step\n",
           got, procs_mode(),
           md[0], lo[0], hi[0], md[1], lo[1], hi[1], md[2], lo[2], hi[2],
           !procs_default() ? "a comparison (the issue's verdict is the default server's, against the blocking echo)"
           : pass ? "PASS (<= 1.15)" : "FAIL (<= 1.15)", mu[0], mu[1], mu[2]);
    return 0;
}
