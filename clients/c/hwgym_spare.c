/* hwgym_spare.c - see hwgym_spare.h. */
#include "hwgym_spare.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} spare[SPARE_KINDS];

void *spare_take(int kind, size_t need, size_t *cap) {
    pthread_mutex_lock(&mu);
    void *p = spare[kind].p;
    size_t c = spare[kind].cap;
    spare[kind].p = NULL;
    spare[kind].cap = 0;
    pthread_mutex_unlock(&mu);
    if (p && c >= need) {
        *cap = c;
        return p;
    }
    free(p);
    p = malloc(need ? need : 1);
    if (!p) abort();
    *cap = need;
    return p;
}

void spare_give(int kind, void *p, size_t cap) {
    if (!p) return;
    if (cap < SPARE_MIN || cap > SPARE_MAX) {
        free(p);
        return;
    }
    pthread_mutex_lock(&mu);
    void *old = spare[kind].p;
    spare[kind].p = p;
    spare[kind].cap = cap;
    pthread_mutex_unlock(&mu);
    free(old);
}
