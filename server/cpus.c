/* cpus.c - the threads' CPUs for --cpu (cpus.h) */
#include "cpus.h"

#include <sched.h>
#include <stdio.h>
#include <zmq.h>

/* the CPUs the process may run on, read once: the router pins itself last, after which the
 * calling thread's own mask would be only `cpu` */
static cpu_set_t proc_mask;
static int have_mask;

static int allowed_mask(cpu_set_t *m) {
    if (!have_mask) {
        CPU_ZERO(&proc_mask);
        if (sched_getaffinity(0, sizeof proc_mask, &proc_mask) != 0) return -1;
        have_mask = 1;
    }
    *m = proc_mask;
    return 0;
}

int hw_cpu_check(int cpu, char *allowed, size_t n) {
    cpu_set_t m;
    if (n) allowed[0] = 0;
    if (allowed_mask(&m) != 0) return -1;
    size_t len = 0;
    for (int c = 0; c < CPU_SETSIZE && len + 1 < n; c++) { /* ranges, as taskset -c prints them */
        if (!CPU_ISSET(c, &m) || (c > 0 && CPU_ISSET(c - 1, &m))) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &m)) e++;
        int k = e > c ? snprintf(allowed + len, n - len, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(allowed + len, n - len, "%s%d", len ? "," : "", c);
        if (k < 0) break;
        len += (size_t)k < n - len ? (size_t)k : n - len - 1; /* truncated: the loop ends */
    }
    return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &m) ? 0 : -1;
}

int hw_cpu_count(void) {
    cpu_set_t m;
    if (allowed_mask(&m) != 0) return 1;
    int n = CPU_COUNT(&m);
    return n > 0 ? n : 1;
}

int hw_cpu_io(void *zctx, int cpu) { return zmq_ctx_set(zctx, ZMQ_THREAD_AFFINITY_CPU_ADD, cpu); }

int hw_cpu_worker(pthread_t th, int cpu) {
    cpu_set_t m;
    if (allowed_mask(&m) != 0) return -1;
    if (CPU_COUNT(&m) > 1) CPU_CLR(cpu, &m);
    return pthread_setaffinity_np(th, sizeof m, &m) == 0 ? 0 : -1;
}

int hw_cpu_router(int cpu) {
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(cpu, &m);
    return pthread_setaffinity_np(pthread_self(), sizeof m, &m) == 0 ? 0 : -1;
}
