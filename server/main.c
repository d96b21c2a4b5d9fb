/* main.c - hwgym-server: command line, signals, then hw_server_run(). */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "cpus.h"
#include "spin.h"
#include "hw_codec.h"
#include "policy.h"
#include "registry.h"
#include "server.h"

static volatile sig_atomic_t stop_flag = 0;
static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: hwgym-server [options]\n"
            "Serves hwgym's hardware-design RL environments over ZeroMQ + msgpack (protocol/PROTOCOL.md).\n\n"
            "  --bind ENDPOINT      endpoint to bind; repeatable (default tcp://127.0.0.1:5555),\n"
            "                       e.g. --bind tcp://0.0.0.0:5555 --bind ipc:///tmp/hwgym.sock\n"
            "  --workers N          worker threads; each session is pinned to one (default 2)\n"
            "  --session-ttl SEC    reap sessions idle longer than this (default 600)\n"
            "  --max-sessions N     open sessions allowed (default 10000)\n"
"  --max-sessions-per-client N  open sessions one client may hold: per CURVE key when CURVE is\n"
"                       on, else per address (tcp: the IP; ipc: the process) (default 4096)\n"
            "  --max-msg BYTES      largest request accepted (default 67108864)\n"
            "  --max-envs N         envs per vector session (default 4096)\n"
            "  --max-snapshots N    snapshots per session (default 1024)\n"
            "  --max-batch N        points per evaluate_batch (default 100000)\n"
"  --inline-us US       run ops of sessions whose measured cost is below US microseconds\n"
            "                       on the router thread when their worker holds nothing for them\n"
            "                       (saves two thread hand-offs; 0 disables; default 25)\n"
            "  --inline-alone-us US ... and ops below US microseconds while their client is alone:\n"
            "                       nothing at a worker or queued, no other client's request since\n"
            "                       its last one (another client waits one such op at most;\n"
            "                       0 disables; so does --inline-us 0; default 2000)\n"
            "  --cpu N              run the router thread and ZeroMQ's I/O thread on CPU N (one of the\n"
            "                       CPUs this process may run on), the workers on the others: the\n"
            "                       two threads every request and reply passes between stay\n"
            "                       together in every run (README, \"The server\"; default: anywhere)\n"
            "  --spin-us US         after answering a request, poll for the next one for up to US\n"
            "                       microseconds before sleeping (at most 10000; 0: never): a client\n"
            "                       stepping in a loop is served without a thread wake-up, for the\n"
            "                       CPU the polls take; after 4 empty polls in a row it polls less\n"
            "                       and less often (README, \"The server\"; default 200, 0 with --cpu)\n"
            "  --spin-clients N     ... only while at most N clients sent a request (other than ping,\n"
            "                       hello, envs, stats) in the last second: more clients than that\n"
            "                       need the CPUs the polls would take (0: never poll; default half\n"
            "                       the CPUs this process may run on, rounded down: 1 on 2, 0 on 1)\n"
            "  --info-json          build every step's info as a JSON object, also for envs that pack\n"
            "                       it straight into the reply (the same bytes, slower: for comparison)\n"
            "  --cache-mb MB        evaluation cache for lean evaluate_batch: keep results in up to MB\n"
            "                       MiB of memory, least recently used evicted first (docs/cache.md)\n"
            "  --cache FILE         also keep cached results in the SQLite FILE (shared by servers on\n"
            "                       the same file, kept across restarts; memory budget 256 MiB unless\n"
            "                       --cache-mb); created 0600, refused when others may write it\n"
            "  --cache-shared       cache_hit also marks points other clients evaluated (default: only\n"
            "                       a client's own points, so it reveals nothing about other clients)\n"
            "  --curve-secret FILE  CURVE encryption: FILE holds the server's Z85 secret key; clients\n"
            "                       need its public key (HWGYM_CURVE_SERVERKEY; see PROTOCOL.md)\n"
            "  --curve-allow FILE   with --curve-secret: accept only the client public keys in FILE\n"
            "                       (one Z85 key per line, '#' comments); required with --curve-secret\n"
            "                       unless --curve-allow-any\n"
            "  --curve-allow-any    with --curve-secret: accept any client keypair (encryption without\n"
            "                       authentication; a non-loopback bind still warns)\n"
            "  --curve-keygen       print a new keypair as JSON {public, secret} and exit\n"
            "\nFiles and limits (docs/security.md):\n"
            "  --data-dir DIR       configs may name files under DIR (relative paths only; no '..', no\n"
            "                       symlinks out, regular files only); repeatable; default: none, so\n"
            "                       clients must send file content inline as {\"text\": ...}\n"
            "  --max-file-mb MB     largest data file or inline file text (default 64)\n"
            "  --env-limit ENV.KNOB=N  raise or lower a cap on an env knob that scales work or memory,\n"
            "                       e.g. dram-v0.count=1000000, sched-v0.samples=100000,\n"
            "                       diag-v0.step_us=1000000 (the defaults); repeatable\n"
            "  --request-timeout SEC  abandon work on one request after SEC (TIMEOUT; default 60, 0 = never)\n"
            "  --drain-timeout SEC  on SIGTERM, cancel work still running after SEC (default 30)\n"
            "  --session-mem-mb MB  estimated memory one session's envs may hold, checked at make (default 4096)\n"
            "  --server-mem-mb MB   estimated memory all sessions may hold; make is refused beyond it (default 16384)\n"
            "  --max-config-values N  JSON values in one config, point or options (default 1048576)\n"
            "  --max-queued-mb MB   request bytes queued at workers, whole server (default 512)\n"
            "  --max-queued-session-mb MB  the same for one session (default 160)\n"
            "\nFairness between clients (docs/security.md, \"Fairness between clients\"):\n"
            "  --max-queued-peer-mb MB  request bytes one client (CURVE key, else address) may have\n"
            "                       queued or running (default 256)\n"
            "  --reclaim-idle SEC   when a client is at --max-sessions-per-client, or the server at\n"
            "                       --max-sessions, a make reclaims the least recently used session idle\n"
            "                       at least SEC (the client's own, or the heaviest holder's) instead of\n"
            "                       refusing; its owner then gets UNKNOWN_SESSION saying so (default 1)\n"
            "  --slice-ms MS        session-less work (evaluate_batch, evaluate, spaces) runs in slices\n"
            "                       of about MS of work, clients served round robin; one worker stays free\n"
            "                       of slices slower than MS a point (default 50; 0: no time budget)\n\n"
            "  --list-envs          print the registered envs and exit\n"
            "  -v, --verbose        log reaping and shutdown to stderr (the start line with the\n"
            "                       endpoints as bound is always printed)\n"
            "  --version            print the version and exit\n"
            "  -h, --help           this help\n\n"
            "SIGTERM or SIGINT: finish the work in flight (cancelled after --drain-timeout), then exit 0.\n"
            "Bound to a non-loopback address without CURVE, the server prints a warning at start.\n");
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, "hwgym-server: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* --curve-secret alone authenticates nobody (any fresh keypair connects): it needs an allow-list
 * or the explicit --curve-allow-any, which warns on a non-loopback bind as no CURVE does
 * (issue 28 finding 7). */
static int curve_check(const hw_server_opts *o, int any) {
    if (any && !o->curve_secret) {
        fprintf(stderr, "hwgym-server: --curve-allow-any needs --curve-secret\n");
        return -1;
    }
    if (any && o->curve_allow) {
        fprintf(stderr, "hwgym-server: --curve-allow-any and --curve-allow: give one of them\n");
        return -1;
    }
    if (o->curve_secret && !o->curve_allow && !any) {
        fprintf(stderr, "hwgym-server: --curve-secret without --curve-allow accepts any client keypair, so it authenticates nobody;\n"
                        "hwgym-server: give --curve-allow FILE (the clients' public keys), or --curve-allow-any to accept that\n");
        return -1;
    }
    for (int i = 0; any && i < o->nbinds; i++)
        if (!hw_policy_bind_is_local(o->binds[i]))
            fprintf(stderr,
                    "hwgym-server: WARNING: %s is reachable from other hosts and --curve-allow-any accepts any client keypair:\n"
                    "hwgym-server: WARNING: traffic is encrypted but anyone who can connect can create sessions and use CPU and\n"
                    "hwgym-server: WARNING: memory up to the limits (docs/security.md); use --curve-allow FILE.\n",
                    o->binds[i]);
    return 0;
}

int main(int argc, char **argv) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    static const struct option longopts[] = {
        {"bind", required_argument, 0, 'b'},        {"workers", required_argument, 0, 'w'},
        {"session-ttl", required_argument, 0, 't'}, {"max-sessions", required_argument, 0, 's'},
        {"max-msg", required_argument, 0, 'm'}, {"max-sessions-per-client", required_argument, 0, 'c'},     {"max-envs", required_argument, 0, 'e'},
        {"max-snapshots", required_argument, 0, 'n'}, {"max-batch", required_argument, 0, 'B'},
        {"list-envs", no_argument, 0, 'l'}, {"curve-secret", required_argument, 0, 'S'},
        {"curve-allow", required_argument, 0, 'A'}, {"curve-keygen", no_argument, 0, 'K'}, {"curve-allow-any", no_argument, 0, 1003}, {"inline-us", required_argument, 0, 'i'}, {"inline-alone-us", required_argument, 0, 1005}, {"cache", required_argument, 0, 1001}, {"cache-mb", required_argument, 0, 1002}, {"cache-shared", no_argument, 0, 1004},         {"verbose", no_argument, 0, 'v'},
        {"version", no_argument, 0, 'V'},           {"help", no_argument, 0, 'h'},
        {"data-dir", required_argument, 0, 'D'},    {"env-limit", required_argument, 0, 'L'},
        {"request-timeout", required_argument, 0, 'T'}, {"drain-timeout", required_argument, 0, 'G'},
        {"session-mem-mb", required_argument, 0, 'M'}, {"max-config-values", required_argument, 0, 'C'},
        {"max-queued-mb", required_argument, 0, 'Q'}, {"max-queued-session-mb", required_argument, 0, 'q'},
        {"max-file-mb", required_argument, 0, 'F'}, {"server-mem-mb", required_argument, 0, 'R'},
        {"max-queued-peer-mb", required_argument, 0, 1101}, {"reclaim-idle", required_argument, 0, 1102},
        {"slice-ms", required_argument, 0, 1103}, {"info-json", no_argument, 0, 1105}, {"cpu", required_argument, 0, 1106},
        {"spin-us", required_argument, 0, 1107}, {"spin-clients", required_argument, 0, 1108}, {0, 0, 0, 0}};
    int c, curve_any = 0;
    double x;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (o.nbinds >= HW_MAX_BINDS) {
                fprintf(stderr, "hwgym-server: --bind: at most %d endpoints\n", HW_MAX_BINDS);
                return 2;
            }
            o.binds[o.nbinds++] = optarg;
            break;
        case 'w': if (parse_num("--workers", optarg, 1, 256, &x)) return 2; o.workers = (int)x; break;
        case 't': if (parse_num("--session-ttl", optarg, 0.01, 1e9, &x)) return 2; o.session_ttl_s = x; break;
        case 's': if (parse_num("--max-sessions", optarg, 1, 1e7, &x)) return 2; o.max_sessions = (size_t)x; break;
        case 'c': if (parse_num("--max-sessions-per-client", optarg, 1, 1e7, &x)) return 2; o.max_sessions_per_client = (size_t)x; break;
        case 'm': if (parse_num("--max-msg", optarg, 1024, 1 << 30, &x)) return 2; o.max_msg = (size_t)x; break;
        case 'e': if (parse_num("--max-envs", optarg, 1, 1 << 20, &x)) return 2; o.max_envs = (int)x; break;
        case 'n': if (parse_num("--max-snapshots", optarg, 1, 1 << 20, &x)) return 2; o.max_snapshots = (int)x; break;
        case 'B': if (parse_num("--max-batch", optarg, 1, 1e7, &x)) return 2; o.max_batch = (int)x; break;
        case 'i': if (parse_num("--inline-us", optarg, 0, 1e6, &x)) return 2; o.inline_us = x; break;
        case 1106: {
            char allowed[256];
            if (parse_num("--cpu", optarg, 0, 1e6, &x)) return 2;
            if (x != (int)x || hw_cpu_check((int)x, allowed, sizeof allowed) != 0) {
                fprintf(stderr, "hwgym-server: --cpu %s: not a CPU this process may run on (%s)\n", optarg, allowed[0] ? allowed : "unknown");
                return 2;
            }
            o.cpu = (int)x;
            break;
        }
        case 1107: if (parse_num("--spin-us", optarg, 0, 10000, &x)) return 2; o.spin_us = (int)x; break;
        case 1108: if (parse_num("--spin-clients", optarg, 0, HW_SPIN_MAX_CLIENTS, &x)) return 2; o.spin_clients = (int)x; break;
        case 1005: if (parse_num("--inline-alone-us", optarg, 0, 1e6, &x)) return 2; o.inline_alone_us = x; break;
        case 'D': if (hw_policy_add_data_dir(&o, optarg)) return 2; break;
        case 'L': if (hw_policy_add_env_limit(&o, optarg)) return 2; break;
        case 'T': if (parse_num("--request-timeout", optarg, 0, 1e7, &x)) return 2; o.request_timeout_s = x; break;
        case 'G': if (parse_num("--drain-timeout", optarg, 0, 1e7, &x)) return 2; o.drain_timeout_s = x; break;
        case 'M': if (parse_num("--session-mem-mb", optarg, 1, 1 << 24, &x)) return 2; o.session_mem = (size_t)(x * 1048576.0); break;
        case 'C': if (parse_num("--max-config-values", optarg, 16, 1 << 26, &x)) return 2; o.max_config_values = (size_t)x; break;
        case 'Q': if (parse_num("--max-queued-mb", optarg, 1, 1 << 20, &x)) return 2; o.max_queued = (size_t)(x * 1048576.0); break;
        case 'q': if (parse_num("--max-queued-session-mb", optarg, 1, 1 << 20, &x)) return 2; o.max_queued_session = (size_t)(x * 1048576.0); break;
        case 1101: if (parse_num("--max-queued-peer-mb", optarg, 1, 1 << 20, &x)) return 2; o.max_queued_peer = (size_t)(x * 1048576.0); break;
        case 1102: if (parse_num("--reclaim-idle", optarg, 0, 1e9, &x)) return 2; o.reclaim_idle_s = x; break;
        case 1103: if (parse_num("--slice-ms", optarg, 0, 1e6, &x)) return 2; o.slice_ms = x; break;
        case 1105: o.info_json = 1; break;
        case 'R': if (parse_num("--server-mem-mb", optarg, 1, 1 << 26, &x)) return 2; o.server_mem = (size_t)(x * 1048576.0); break;
        case 'F': if (parse_num("--max-file-mb", optarg, 0.001, 1 << 14, &x)) return 2; o.max_file = (size_t)(x * 1048576.0); break;
        case 'S': o.curve_secret = optarg; break;
        case 1001: o.cache_path = optarg; break;
        case 1002: if (parse_num("--cache-mb", optarg, 0.001, 1 << 20, &x)) return 2; o.cache_mb = x; break;
        case 1004: o.cache_shared = 1; break;
        case 'A': o.curve_allow = optarg; break;
        case 1003: curve_any = 1; break;
        case 'K': return hw_auth_keygen();
        case 'l':
            for (int i = 0; i < hw_registry_count(); i++) printf("%-16s %s\n", hw_registry_at(i)->id, hw_registry_at(i)->summary);
            return 0;
        case 'v': o.verbose = 1; break;
        case 'V': printf("hwgym-server %s (protocol %d)\n", HW_VERSION_STRING, HW_PROTOCOL_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: fprintf(stderr, "hwgym-server: see --help for the options\n"); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hwgym-server: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (o.nbinds == 0) o.binds[o.nbinds++] = "tcp://127.0.0.1:5555";
    if (o.curve_allow && !o.curve_secret) {
        fprintf(stderr, "hwgym-server: --curve-allow needs --curve-secret\n");
        return 2;
    }
    if (curve_check(&o, curve_any)) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    o.hard_exit = 1;
    if (o.max_queued_session < o.max_msg)
        fprintf(stderr, "hwgym-server: note: --max-queued-session-mb is below --max-msg: the largest requests will be refused\n");
    /* Large evaluate_batch buffers (points, results, replies of MBs) are reused from the heap
     * rather than mapped and faulted in afresh for every request: allocations up to 32 MiB stay
     * on the heap, and up to 256 MiB of free heap is kept (docs/cache.md, "Memory"). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int rc = hw_server_run(&o, &stop_flag);
    json_decref(o.env_limits);
    for (int i = 0; i < o.ndata_dirs; i++) free((char *)o.data_dirs[i]);
    return rc;
}
