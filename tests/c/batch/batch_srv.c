/* batch_srv.c - see batch_srv.h. */
#include "batch_srv.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

static int counter;

static void *run(void *arg) {
    srv *s = arg;
    s->rc = hw_server_run(&s->o, &s->stop);
    return NULL;
}

hwc_client *srv_up(srv *s, double cache_mb, const char *cache_file, int max_batch) {
    hw_server_default_opts(&s->o);
    s->o.workers = 2;
    s->o.cache_mb = cache_mb;
    s->o.cache_path = cache_file;
    if (max_batch > 0) s->o.max_batch = max_batch;
    snprintf(s->ep, sizeof s->ep, "ipc:///tmp/hwgym-tbatch-%d-%d.sock", (int)getpid(), counter++);
    s->o.binds[0] = s->ep;
    s->o.nbinds = 1;
    s->stop = 0;
    pthread_create(&s->th, NULL, run, s);
    hw_err e;
    hwc_client *c = hwc_connect(NULL, s->ep, 20000, &e);
    cr_assert(c);
    int ok = -1;
    for (int i = 0; i < 100 && ok; i++)
        if ((ok = hwc_ping(c, NULL, &e))) usleep(10000);
    cr_assert_eq(ok, 0, "server did not come up: %s", e.msg);
    return c;
}

void srv_down(srv *s, hwc_client *c) {
    hwc_disconnect(c);
    s->stop = 1;
    pthread_join(s->th, NULL);
    cr_assert_eq(s->rc, 0);
}
