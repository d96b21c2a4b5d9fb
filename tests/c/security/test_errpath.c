/* Issue 28 finding 2 at the wire: a lean evaluate_batch on diag-v0 whose step_us hits the
 * request deadline answers each abandoned point with a real message (TIMEOUT, valid UTF-8, no
 * stack bytes), and a client that gets bytes it cannot decode reports it at once instead of
 * waiting out its timeout. */
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

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(errpath, lean_batch_timeout_messages_are_written_text, .timeout = 60) {
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.request_timeout_s = 0.3;
    o.workers = 2;
    srv S;
    sec_start(&S, NULL, &o);
    hw_err e;
    hwc_client *c = hwc_connect(NULL, S.ep, 20000, &e);
    cr_assert(c);
    json_t *cfg = json_pack("{s:i, s:i}", "step_us", 100000, "dims", 4);
    int64_t pts[16 * 4] = {0};
    hw_array a = {HW_DT_INT64, 2, {16, 4}, pts};
    hwc_lean b;
    double t0 = now_s();
    int rc = hwc_evaluate_lean(c, NULL, "diag-v0", cfg, &a, NULL, 0, &b, &e);
    double dt = now_s() - t0;
    cr_assert_lt(dt, 5.0, "the client waited %.1f s for a reply the server sent at 0.3 s", dt);
    if (rc == 0) { /* per-point errors: every message is the deadline's, in UTF-8 */
        cr_assert_gt(b.nerrors, 0, "16 points of 100 ms under a 0.3 s deadline all succeeded");
        size_t seen = 0;
        for (size_t k = 0; k < b.n; k++) {
            if (!b.error || !b.error[k]) continue;
            seen++;
            const char *m = b.error[k];
            cr_assert(hw_utf8_valid(m, strlen(m)), "points[%zu]: message is not UTF-8", k);
            cr_assert(strstr(m, "time limit") || strstr(m, "deadline") || strstr(m, "step_us"), "points[%zu]: not a written message: '%s'", k, m);
        }
        cr_assert_gt(seen, 0);
        hwc_lean_free(&b);
    } else {
        cr_assert_str_eq(hw_code_name(e.code), "TIMEOUT", "%s", e.msg);
    }
    json_decref(cfg);
    hwc_disconnect(c);
    sec_stop(&S);
}

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
    double t0 = now_s();
    int rc = hwc_ping(c, NULL, &e);
    double dt = now_s() - t0;
    cr_assert_neq(rc, 0, "an unreadable reply was accepted");
    cr_assert_lt(dt, 5.0, "the client waited %.1f s (its timeout is 20 s)", dt);
    cr_assert(strstr(e.msg, "unreadable"), "%s", e.msg);
    hwc_disconnect(c);
    f.stop = 1;
    pthread_join(th, NULL);
    zmq_close(f.sock);
    zmq_ctx_term(f.ctx);
}
