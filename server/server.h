/* server.h - hwgym-server's configuration and entry point.
 * Owns: the options main.c parses and hw_server_run(), which binds, serves until a stop
 * signal, drains the work in flight and returns 0. */
#ifndef HW_SERVER_H
#define HW_SERVER_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#define HW_MAX_BINDS 16
#define HW_MAX_DATA_DIRS 16

typedef struct hw_server_opts {
    const char *binds[HW_MAX_BINDS];
    int nbinds;
    int workers;            /* worker threads */
    double session_ttl_s;   /* idle sessions are reaped after this */
    size_t max_sessions;
    size_t max_sessions_per_client; /* per peer: CURVE key, else address (server/peers.h) */
    size_t max_msg;         /* request bytes */
    int max_envs;           /* per vector session */
    int max_snapshots;      /* per session */
    int max_batch;          /* points per evaluate_batch */
    double inline_us;       /* run ops of sessions cheaper than this on the router thread (0: never) */
    double inline_alone_us; /* ... and ops cheaper than this when their session's client is alone:
                               nothing out at a worker, nothing queued, no other session's request
                               since its last one (0, or inline_us 0: never; router.c try_inline) */
    int cpu;                /* --cpu: the router and ZeroMQ I/O threads on this CPU, workers on the others (-1: anywhere; cpus.h) */
    int spin_us;            /* --spin-us: after answering a request, poll the socket this long before blocking (0: never; -1: 200, 0 with --cpu; spin.h) */
    int spin_clients;       /* --spin-clients: ... only while at most this many clients sent a request in the last second (-1: half the CPUs) */
    int info_json;          /* --info-json: build infos as JSON even where the env packs them (env.h info_pack) */
    const char *curve_secret;  /* file with the server's Z85 secret key: CURVE on */
    const char *curve_allow;   /* file with allowed client public keys (optional) */
    int verbose;
    /* security and resource limits (docs/security.md; server/policy.h fills them from flags) */
    const char *data_dirs[HW_MAX_DATA_DIRS]; /* canonical dirs configs may name files under; none = no files */
    int ndata_dirs;
    json_t *env_limits;        /* {"dram-v0": {"count": N}, ...}: operator caps on env knobs; NULL = defaults */
    double request_timeout_s;  /* work on one request is abandoned after this (TIMEOUT); 0 = never */
    double drain_timeout_s;    /* SIGTERM: work still running after this is cancelled */
    size_t session_mem;        /* estimated bytes one session's envs may hold (checked at make) */
    size_t server_mem;         /* estimated bytes all sessions may hold: make is refused beyond it */
    size_t max_config_values;  /* JSON values in one config / point / options */
    size_t max_queued;         /* request bytes queued at workers, whole server */
    size_t max_queued_session; /* request bytes queued at workers, one session */
    size_t max_queued_peer;    /* request bytes queued in the server, one peer (client key or address) */
    double reclaim_idle_s;     /* a make over a cap reclaims an idle session idle at least this long */
    double slice_ms;           /* session-less work runs in slices of about this much time, round robin */
    size_t max_file;           /* largest data file or inline file text */
    int hard_exit;             /* hwgym-server: _exit(3) when the drain outlives drain_timeout_s + 5 s */
    const char *cache_path; /* evaluation cache SQLite file (NULL: memory only) */
    double cache_mb;        /* evaluation cache memory budget in MiB (0: no cache) */
    int cache_shared;       /* --cache-shared: cache_hit shows hits on points other clients evaluated */
} hw_server_opts;

void hw_server_default_opts(hw_server_opts *o);
/* Serves until *stop becomes non-zero (set it from a signal handler). Returns the exit code. */
int hw_server_run(const hw_server_opts *o, volatile sig_atomic_t *stop);

#endif
