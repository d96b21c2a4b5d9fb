/* hwgym_spare.c - see hwgym_spare.h. */
#include "hwgym_spare.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} spare[SPARE_KINDS][SPARE_SLOTS];

void *spare_take(int kind, size_t need, size_t *cap, bool *reused) {
    pthread_mutex_lock(&mu);
    int best = -1; /* the smallest spare that fits, else the largest (replaced) */
    for (int i = 0; i < SPARE_SLOTS; i++) {
        size_t c = spare[kind][i].cap;
        if (!spare[kind][i].p) continue;
        if (best < 0) best = i;
        else if (c >= need ? spare[kind][best].cap < need || c < spare[kind][best].cap : spare[kind][best].cap < need && c > spare[kind][best].cap)
            best = i;
    }
    void *p = best >= 0 ? spare[kind][best].p : NULL;
    size_t c = best >= 0 ? spare[kind][best].cap : 0;
    if (best >= 0) spare[kind][best].p = NULL, spare[kind][best].cap = 0;
    pthread_mutex_unlock(&mu);
    if (p && c >= need) {
        *cap = c;
        if (reused) *reused = true;
        return p;
    }
    free(p);
    p = malloc(need ? need : 1);
    if (!p) abort();
    *cap = need;
    if (reused) *reused = false;
    return p;
}

void spare_give(int kind, void *p, size_t cap) {
    if (!p) return;
    if (cap < SPARE_MIN || cap > SPARE_MAX) {
        free(p);
        return;
    }
    pthread_mutex_lock(&mu);
    int slot = 0; /* an empty slot, else the smallest spare goes */
    for (int i = 0; i < SPARE_SLOTS; i++) {
        if (!spare[kind][i].p) {
            slot = i;
            break;
        }
        if (spare[kind][i].cap < spare[kind][slot].cap) slot = i;
    }
    void *old[SPARE_SLOTS + 1] = {spare[kind][slot].p};
    int nold = 1;
    spare[kind][slot].p = p;
    spare[kind][slot].cap = cap;
    size_t total = 0; /* at most SPARE_MAX kept per kind: the others go, smallest first */
    for (int i = 0; i < SPARE_SLOTS; i++) total += spare[kind][i].p ? spare[kind][i].cap : 0;
    while (total > SPARE_MAX) {
        int v = -1;
        for (int i = 0; i < SPARE_SLOTS; i++)
            if (i != slot && spare[kind][i].p && (v < 0 || spare[kind][i].cap < spare[kind][v].cap)) v = i;
        if (v < 0) break;
        total -= spare[kind][v].cap;
        old[nold++] = spare[kind][v].p;
        spare[kind][v].p = NULL;
        spare[kind][v].cap = 0;
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < nold; i++) free(old[i]);
}
