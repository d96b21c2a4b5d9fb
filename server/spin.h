/* spin.h - when the router polls for the next request instead of sleeping (hwgym-server
 * --spin-us, --spin-clients).
 * Owns: the decision to poll before a blocking wait, the back-off after polls that ended empty,
 * the few clients seen last (a hash of each routing id and when its last request came), and the
 * polls' counts for the stats op. It does no I/O: the router (router.c recv_waiting) asks
 * hw_spin_should, polls, and reports the outcome.
 *
 * Why a gate on clients: a poll removes the thread wake-up from a client's round trip (tens of
 * µs on a VM whose idle vCPUs halt) for the CPU the poll takes. With at most one stepping client
 * per two CPUs that CPU is idle anyway; with more clients than that on the same CPUs the polls take
 * CPU the clients need, and their steps a second together fell by up to 30% (bench/README.md,
 * issue 29, "Ninth session"). So the router polls only while at most `max_clients` clients (by
 * default half the CPUs the process may run on) sent a request within the last HW_SPIN_WINDOW_S. */
#ifndef HW_SERVER_SPIN_H
#define HW_SERVER_SPIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HW_SPIN_WINDOW_S 1.0 /* a client counts while its last request is at most this old */
#define HW_SPIN_DEFAULT_US 200
#define HW_SPIN_MAX_CLIENTS 64

typedef struct hw_spin {
    int us;          /* poll length in µs (0: never poll) */
    int max_clients; /* poll while at most this many clients are recent (0: never poll) */
    int row;         /* polls in a row that ended empty */
    int backoff, skip; /* after HW_SPIN_MISSES of them: the waits left without a poll (2^backoff - 1) */
    uint64_t hits, misses, gated; /* polls that caught a request, that did not; waits not polled for the clients */
    int nrecent;     /* entries in recent[], at most max_clients + 1 */
    struct hw_spin_client {
        uint64_t id; /* FNV-1a of the routing id */
        double t;    /* its last request */
    } recent[HW_SPIN_MAX_CLIENTS + 1]; /* most recent first */
} hw_spin;

/* us: poll length (0: off); max_clients: the gate (clamped to HW_SPIN_MAX_CLIENTS) */
void hw_spin_init(hw_spin *s, int us, int max_clients);
/* a request from the client with this routing id arrived at `now` (seconds) */
void hw_spin_seen(hw_spin *s, const void *id, size_t n, double now);
/* whether to poll before this wait (called after a request was answered, at `now`); counts a
 * wait skipped by the back-off or refused by the gate */
bool hw_spin_should(hw_spin *s, double now);
/* the poll hw_spin_should allowed caught a request (hit) or ended empty */
void hw_spin_result(hw_spin *s, bool hit);
/* the recent clients at `now` (at most max_clients + 1: enough to tell whether over the gate) */
int hw_spin_clients(const hw_spin *s, double now);

#endif
