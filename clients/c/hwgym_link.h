/* hwgym_link.h - libhwgym internals (not part of the API): watching a client's connection.
 * Owns: the ZeroMQ socket monitor and heartbeats of one client socket, and the waits that use
 * them, so that a call fails within about a second when its server is gone instead of waiting
 * out its timeout:
 *   - a server process that exits (or is killed) drops the connection at once (monitor event);
 *   - a hung or unreachable server host misses the heartbeats (ZMTP PING every
 *     HWGYM_HEARTBEAT_TIMEOUT/3 s, dropped after HWGYM_HEARTBEAT_TIMEOUT s, default 1.2 s; 0: off).
 * A call waiting for its reply when the connection drops fails with HW_E_IO ("connection ...
 * lost"); a call made after a drop waits up to HWC_RECONNECT_GRACE_MS for ZeroMQ to reconnect. */
#ifndef HWGYM_LINK_H
#define HWGYM_LINK_H

#include <stdbool.h>

#include "hw_error.h"

#define HWC_RECONNECT_GRACE_MS 500
#define HWC_HEARTBEAT_TIMEOUT_MS 1200

typedef struct hwc_link {
    void *mon;      /* PAIR socket receiving the client socket's monitor events (NULL: unwatched) */
    bool was_up;    /* a handshake with a server succeeded once */
    bool down;      /* the last event was a disconnection */
} hwc_link;

/* Sets the heartbeat options of sock and starts its monitor (call before zmq_connect). A monitor
 * that cannot start leaves the link unwatched (calls then only have their timeouts). */
void hwc_link_open(hwc_link *l, void *z, void *sock);
void hwc_link_close(hwc_link *l, void *sock);
/* Before sending op: 0 to go on, -1 (err filled) when the connection is known to be lost and
 * did not come back within the grace. */
int hwc_link_before_send(hwc_link *l, const char *endpoint, const char *op, hw_err *err);
/* Waits up to ms (>= 0) for sock to be readable: 1 readable, 0 timed out, -1 lost (err filled:
 * the connection dropped while op waited for its reply). EINTR restarts the wait. */
int hwc_link_wait(hwc_link *l, void *sock, long ms, const char *endpoint, const char *op, hw_err *err);

#endif
