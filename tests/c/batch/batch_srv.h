/* batch_srv.h - the batch test group's server: a real hw_server_run in a thread on a fresh ipc
 * endpoint, with libhwgym connected to it (used by test_batch.c and test_pipeline.c). */
#ifndef HWGYM_TEST_BATCH_SRV_H
#define HWGYM_TEST_BATCH_SRV_H

#include <pthread.h>
#include <signal.h>

#include "hwgym_client.h"
#include "server.h"

typedef struct srv {
    hw_server_opts o;
    volatile sig_atomic_t stop;
    pthread_t th;
    int rc;
    char ep[128];
} srv;

/* Starts a server with 2 workers (cache_mb 0: no cache; cache_file NULL: not persisted;
 * max_batch 0: the default) and returns a client that has pinged it. */
hwc_client *srv_up(srv *s, double cache_mb, const char *cache_file, int max_batch);
/* Disconnects c, stops the server and checks it exited cleanly. */
void srv_down(srv *s, hwc_client *c);

#endif
