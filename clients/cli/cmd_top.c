/* cmd_top.c - `hwgym top --endpoint EP`: a live terminal view of a server's `stats` op, redrawn
 * every second: uptime, workers, sessions, steps/s and env-steps/s (differences between two
 * polls), requests and errors, the latency percentiles of every op, and the evaluation cache
 * (entries, memory, hit rate). q or Ctrl-C quits (end of input does not). When stdin is a terminal
 * it is put in non-canonical mode (no Enter needed) and restored on exit. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hwgym_client.h"

static const char *const USAGE =
    "usage: hwgym top --endpoint EP [--interval SEC] [--count N]\n"
    "Live view of a server's stats, redrawn every SEC seconds (default 1): sessions, steps/s,\n"
    "env-steps/s, requests/s, latency percentiles per op, evaluation-cache hit rate. Press q to\n"
    "quit. --count N exits after N frames (for scripts; with stdout not a terminal, frames are\n"
    "separated by a blank line instead of clearing the screen).\n";

static volatile sig_atomic_t g_stop;
static void on_sig(int s) {
    (void)s;
    g_stop = 1;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double num(const json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static void human_bytes(double b, char *out, size_t cap) {
    const char *u[] = {"B", "KiB", "MiB", "GiB"};
    int i = 0;
    while (b >= 1024 && i < 3) b /= 1024, i++;
    snprintf(out, cap, "%.1f %s", b, u[i]);
}

static void frame(FILE *o, const char *ep, const json_t *st, const json_t *prev, double dt, bool tty) {
    if (tty) fputs("\033[H\033[2J", o);
    double d_steps = prev ? num(st, "steps") - num(prev, "steps") : 0, d_env = prev ? num(st, "env_steps") - num(prev, "env_steps") : 0,
           d_req = prev ? num(st, "requests") - num(prev, "requests") : 0;
    fprintf(o, "hwgym top  %s  uptime %.0f s  workers %.0f  sessions %.0f  in flight %.0f   (q quits)\n", ep, num(st, "uptime_s"),
            num(st, "workers"), num(st, "sessions"), num(st, "inflight"));
    if (prev && dt > 0)
        fprintf(o, "steps/s %.0f   env-steps/s %.0f   requests/s %.0f   errors %.0f   reaped %.0f\n", d_steps / dt, d_env / dt,
                d_req / dt, num(st, "errors"), num(st, "reaped"));
    else
        fprintf(o, "steps/s -   env-steps/s -   requests/s -   errors %.0f   reaped %.0f\n", num(st, "errors"), num(st, "reaped"));
    json_t *c = json_object_get(st, "cache");
    if (json_is_object(c)) {
        char used[32], max[32];
        human_bytes(num(c, "bytes"), used, sizeof used);
        human_bytes(num(c, "max_bytes"), max, sizeof max);
        fprintf(o, "cache: hit rate %.1f%%  hits %.0f  merged %.0f  misses %.0f  entries %.0f (%s of %s)  evictions %.0f  disk hits %.0f\n",
                100 * num(c, "hit_rate"), num(c, "hits"), num(c, "merged"), num(c, "misses"), num(c, "entries"), used, max,
                num(c, "evictions"), num(c, "disk_hits"));
    } else {
        fprintf(o, "cache: off (hwgym-server --cache-mb MB)\n");
    }
    fprintf(o, "\n%-16s %10s %9s %9s %9s %9s %10s\n", "op", "count", "rate/s", "p50 us", "p90 us", "p99 us", "max us");
    json_t *ops = json_object_get(st, "ops"), *pops = prev ? json_object_get(prev, "ops") : NULL;
    const char *k;
    json_t *v;
    json_object_foreach(ops, k, v) {
        double rate = pops && dt > 0 ? (num(v, "count") - num(json_object_get(pops, k), "count")) / dt : 0;
        fprintf(o, "%-16s %10.0f %9.0f %9.1f %9.1f %9.1f %10.1f\n", k, num(v, "count"), rate, num(v, "p50_us"), num(v, "p90_us"),
                num(v, "p99_us"), num(v, "max_us"));
    }
    if (!tty) fputc('\n', o);
    fflush(o);
}

int hwcli_top(int argc, char **argv) {
    const char *ep = NULL, *iv = NULL, *cnt = NULL, *pos[1];
    int npos = 0;
    const hwcli_opt opts[] = {{"--endpoint", &ep, NULL}, {"--interval", &iv, NULL}, {"--count", &cnt, NULL}, {NULL, NULL, NULL}};
    int rc = hwcli_parse(argc, argv, opts, pos, 0, 0, &npos, USAGE);
    if (rc) return rc == 1 ? 0 : 2;
    if (!ep) return hwcli_fail("top", 2, "--endpoint is required (e.g. ipc:///tmp/hwgym.sock)");
    double interval = 1;
    if (iv) {
        char *end;
        interval = strtod(iv, &end);
        if (*end || !(interval >= 0.05 && interval <= 3600)) return hwcli_fail("top", 2, "--interval: '%s' is not seconds in [0.05, 3600]", iv);
    }
    long long count = 0;
    hw_err err;
    if (cnt && hwcli_int_arg(cnt, "--count", 1, 1LL << 40, &count, &err)) return hwcli_fail("top", 2, "%s", err.msg);
    hwc_client *c = hwc_connect(NULL, ep, (int)(interval * 1000 < 2000 ? 2000 : interval * 1000), &err);
    if (!c) return hwcli_fail("top", 1, "%s", err.msg);
    bool in_tty = isatty(0), out_tty = isatty(1);
    struct termios saved;
    if (in_tty && tcgetattr(0, &saved) == 0) {
        struct termios raw = saved;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(0, TCSANOW, &raw);
    } else {
        in_tty = false;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sig;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    json_t *prev = NULL;
    double tprev = 0;
    long long frames = 0, answers = 0;
    bool input_open = true;
    rc = 0;
    while (!g_stop) {
        json_t *st = NULL;
        double t = mono();
        if (hwc_stats(c, &st, &err)) {
            if (out_tty) fputs("\033[H\033[2J", stdout);
            printf("hwgym top  %s  no answer: %s   (q quits)\n", ep, err.msg);
            fflush(stdout);
        } else {
            answers++;
            frame(stdout, ep, st, prev, t - tprev, out_tty);
            json_decref(prev);
            prev = st;
            tprev = t;
        }
        if (count && ++frames >= count) break;
        /* wait for the next frame, or q */
        double until = t + interval;
        while (!g_stop) {
            double left = until - mono();
            if (left <= 0) break;
            struct pollfd p = {0, POLLIN, 0};
            int n = input_open ? poll(&p, 1, (int)(left * 1000) + 1) : (usleep((useconds_t)(left * 1e6)), 0);
            if (n < 0 && errno != EINTR) break;
            if (n > 0) {
                char ch[64];
                ssize_t got = read(0, ch, sizeof ch);
                if (got == 0) input_open = false; /* end of input: keep drawing until a signal */
                for (ssize_t i = 0; i < got; i++)
                    if (ch[i] == 'q' || ch[i] == 'Q') g_stop = 1;
            }
        }
    }
    json_decref(prev);
    hwc_disconnect(c);
    if (in_tty) tcsetattr(0, TCSANOW, &saved);
    if (!answers) /* a script or a user must not read "no server" as success (issue 28) */
        return hwcli_fail("top", 1, "no answer from %s in %lld attempt%s%s%s", ep, frames, frames == 1 ? "" : "s", frames ? ": " : "",
                          frames ? err.msg : "");
    return rc;
}
