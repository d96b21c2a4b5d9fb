/* spin.c - the router's polling decision (spin.h) */
#include "spin.h"

#include <string.h>

/* A stepping loop misses a poll now and then; each blocking wait it then meets is a slow round
 * trip that makes the next miss likelier, so the router backs off only after this many misses in
 * a row (then the next 1, 3, 7, ... 63 waits block at once) and a caught request starts over.
 * Backing off after every miss lost most of the gain (bench/README.md, issue 29, ninth session). */
#define HW_SPIN_MISSES 4
#define HW_SPIN_BACKOFF_MAX 6

void hw_spin_init(hw_spin *s, int us, int max_clients) {
    memset(s, 0, sizeof *s);
    s->us = us > 0 ? us : 0;
    s->max_clients = max_clients < 0 ? 0 : max_clients > HW_SPIN_MAX_CLIENTS ? HW_SPIN_MAX_CLIENTS : max_clients;
}

void hw_spin_seen(hw_spin *s, const void *id, size_t n, double now) {
    if (!s->us || !s->max_clients) return;
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = id;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    if (s->nrecent && s->recent[0].id == h) { /* the usual case: the same client again */
        s->recent[0].t = now;
        return;
    }
    int i = 0;
    while (i < s->nrecent && s->recent[i].id != h) i++;
    if (i == s->nrecent) { /* new: the least recent falls off when the list is full */
        if (s->nrecent <= s->max_clients) s->nrecent++;
        i = s->nrecent - 1;
    }
    memmove(&s->recent[1], &s->recent[0], (size_t)i * sizeof s->recent[0]);
    s->recent[0].id = h;
    s->recent[0].t = now;
}

int hw_spin_clients(const hw_spin *s, double now) {
    int k = 0;
    while (k < s->nrecent && now - s->recent[k].t <= HW_SPIN_WINDOW_S) k++;
    return k;
}

bool hw_spin_should(hw_spin *s, double now) {
    if (!s->us || !s->max_clients) return false;
    /* the list holds the max_clients + 1 clients seen last: over the gate when its last is recent */
    if (s->nrecent > s->max_clients && now - s->recent[s->max_clients].t <= HW_SPIN_WINDOW_S) {
        s->gated++;
        return false;
    }
    if (s->skip > 0) {
        s->skip--;
        return false;
    }
    return true;
}

void hw_spin_result(hw_spin *s, bool hit) {
    if (hit) {
        s->hits++;
        s->row = s->backoff = 0;
        return;
    }
    s->misses++;
    if (++s->row >= HW_SPIN_MISSES) {
        if (s->backoff < HW_SPIN_BACKOFF_MAX) s->backoff++;
        s->skip = (1 << s->backoff) - 1;
    }
}
