/* Issue 28 finding 2 at the client: a client that gets bytes it cannot decode (the server once
 * sent stack bytes as a message) reports it at once instead of waiting out its timeout. The
 * server side (a lean evaluate_batch past the deadline answers written TIMEOUT messages) is
 * test_limits.c request_deadline_gives_timeout. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "hw_codec.h"
#include "hwgym_client.h"
#include "policy.h"
#include "sec.h"


/* A fake server that answers every request with a reply whose message is not UTF-8. */
typedef struct fake {
    void *ctx, *sock;
    char ep[128];
    volatile int stop;
} fake;

static void *fake_run(void *p) {
    fake *f = p;
    static const char bad[] = "\x83\xa2id\x01\xa2ok\xc2\xa5" "error\x82\xa4" "code\xa8INTERNAL\xa7message\xa4\xff\x7f\xfe\x80";
    while (!f->stop) {
        zmq_pollitem_t it = {f->sock, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 50) <= 0) continue;
        zmq_msg_t parts[4];
        int n = 0, more = 1;
        while (more && n < 4) {
            zmq_msg_init(&parts[n]);
            if (zmq_msg_recv(&parts[n], f->sock, 0) < 0) break;
            more = zmq_msg_more(&parts[n]);
            n++;
        }
        for (int i = 0; i + 1 < n; i++) zmq_send(f->sock, zmq_msg_data(&parts[i]), zmq_msg_size(&parts[i]), ZMQ_SNDMORE);
        zmq_send(f->sock, bad, sizeof bad - 1, 0);
        for (int i = 0; i < n; i++) zmq_msg_close(&parts[i]);
    }
    return NULL;
}

Test(errpath, client_reports_an_unreadable_reply_at_once, .timeout = 60) {
    fake f = {0};
    f.ctx = zmq_ctx_new();
    f.sock = zmq_socket(f.ctx, ZMQ_ROUTER);
    snprintf(f.ep, sizeof f.ep, "ipc:///tmp/hwgym-fake28-%d.sock", (int)getpid());
    cr_assert_eq(zmq_bind(f.sock, f.ep), 0);
    pthread_t th;
    pthread_create(&th, NULL, fake_run, &f);
    hw_err e;
    hwc_client *c = hwc_connect(NULL, f.ep, 20000, &e);
    cr_assert(c);
    double t0 = sec_now();
    int rc = hwc_ping(c, NULL, &e);
    double dt = sec_now() - t0;
    cr_assert_neq(rc, 0, "an unreadable reply was accepted");
    cr_assert_lt(dt, 5.0, "the client waited %.1f s (its timeout is 20 s)", dt);
    cr_assert(strstr(e.msg, "unreadable"), "%s", e.msg);
    hwc_disconnect(c);
    f.stop = 1;
    pthread_join(th, NULL);
    zmq_close(f.sock);
    zmq_ctx_term(f.ctx);
}
