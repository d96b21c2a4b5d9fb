/* hwgym_link.c - see hwgym_link.h */
#include "hwgym_link.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int heartbeat_ms(void) {
    const char *s = getenv("HWGYM_HEARTBEAT_TIMEOUT");
    if (!s || !*s) return HWC_HEARTBEAT_TIMEOUT_MS;
    double v = strtod(s, NULL);
    return v > 0 && v < 3600 ? (int)(v * 1000) : 0;
}

void hwc_link_open(hwc_link *l, void *z, void *sock) {
    memset(l, 0, sizeof *l);
    int hb = heartbeat_ms();
    if (hb > 0) {
        int ivl = hb / 3 > 0 ? hb / 3 : 1;
        zmq_setsockopt(sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
        zmq_setsockopt(sock, ZMQ_HEARTBEAT_TIMEOUT, &hb, sizeof hb);
    }
    char addr[64];
    snprintf(addr, sizeof addr, "inproc://hwc-monitor-%p", sock);
    if (zmq_socket_monitor(sock, addr, ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED)) return;
    l->mon = zmq_socket(z, ZMQ_PAIR);
    int zero = 0;
    if (l->mon) zmq_setsockopt(l->mon, ZMQ_LINGER, &zero, sizeof zero);
    if (!l->mon || zmq_connect(l->mon, addr)) {
        if (l->mon) zmq_close(l->mon);
        l->mon = NULL;
        zmq_socket_monitor(sock, NULL, 0);
    }
}

void hwc_link_close(hwc_link *l, void *sock) {
    if (!l->mon) return;
    zmq_socket_monitor(sock, NULL, 0);
    zmq_close(l->mon);
    l->mon = NULL;
}

/* Reads the pending events; returns true when one was a disconnection. */
static bool drain(hwc_link *l) {
    bool lost = false;
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, l->mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            return lost;
        }
        unsigned ev = 0;
        if (zmq_msg_size(&m) >= 2) { /* the event number: a little-endian uint16 */
            const unsigned char *d = zmq_msg_data(&m);
            ev = (unsigned)d[0] | (unsigned)d[1] << 8;
        }
        bool more = zmq_msg_more(&m);
        zmq_msg_close(&m);
        while (more) { /* the event's second frame: the peer's address */
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, l->mon, 0) < 0) more = false;
            else more = zmq_msg_more(&m);
            zmq_msg_close(&m);
        }
        if (ev == ZMQ_EVENT_DISCONNECTED) lost = l->down = true;
        if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) l->was_up = true, l->down = false;
    }
}

static int lost(const char *endpoint, const char *when, const char *op, hw_err *err) {
    return hw_fail(err, HW_E_IO,
                   "%s: the connection to hwgym-server at %s was lost %s (the server exited, was killed, or the network "
                   "dropped); its sessions are gone with it",
                   op, endpoint, when);
}

int hwc_link_before_send(hwc_link *l, const char *endpoint, const char *op, hw_err *err) {
    if (!l->mon) return 0;
    drain(l);
    if (!(l->was_up && l->down)) return 0;
    long end = now_ms() + HWC_RECONNECT_GRACE_MS;
    while (l->down) {
        long left = end - now_ms();
        if (left <= 0) return lost(endpoint, "before the call (no reconnection within 0.5 s)", op, err);
        zmq_pollitem_t it = {l->mon, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, left) > 0) drain(l);
    }
    return 0;
}

int hwc_link_wait(hwc_link *l, void *sock, long ms, const char *endpoint, const char *op, hw_err *err) {
    long end = now_ms() + ms;
    for (;;) {
        long left = end - now_ms();
        if (left < 0) left = 0;
        zmq_pollitem_t it[2] = {{sock, 0, ZMQ_POLLIN, 0}, {l->mon, 0, ZMQ_POLLIN, 0}};
        int n = zmq_poll(it, l->mon ? 2 : 1, left);
        if (n < 0 && zmq_errno() == EINTR) continue;
        if (n < 0) return hw_fail(err, HW_E_IO, "%s: poll failed: %s", op, zmq_strerror(zmq_errno()));
        if (it[0].revents & ZMQ_POLLIN) return 1;
        if (n == 0) return 0;
        if (drain(l)) { /* a reply read before the drop is still there to take */
            zmq_pollitem_t in = {sock, 0, ZMQ_POLLIN, 0};
            if (zmq_poll(&in, 1, 0) > 0) return 1;
            return lost(endpoint, "while waiting for the reply", op, err);
        }
    }
}
