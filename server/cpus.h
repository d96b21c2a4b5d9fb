/* cpus.h - where the server's threads run (hwgym-server --cpu N).
 * Owns: checking a CPU against the ones the process may run on (its affinity mask: a Slurm
 * allocation or taskset shows here), and placing the threads: the router thread and ZeroMQ's I/O
 * thread together on CPU N, the workers on the process's other CPUs. Every request and reply
 * passes between those two threads; left to the scheduler, a router that works more per request
 * than a plain echo is at times woken away from its I/O thread for minutes, which swung the step
 * round trips from run to run; placed, they are the same in every run (bench/README.md, eighth
 * session). Linux only (sched_setaffinity); without --cpu nothing here runs. */
#ifndef HW_SERVER_CPUS_H
#define HW_SERVER_CPUS_H

#include <pthread.h>
#include <stddef.h>

/* 0 when `cpu` is one the process may run on; else -1, with the allowed ones in `allowed`
 * ("0-3,8" as taskset prints them) */
int hw_cpu_check(int cpu, char *allowed, size_t n);
/* how many CPUs the process may run on (1 if unknown) */
int hw_cpu_count(void);
/* ZeroMQ's I/O thread on `cpu`: call on a new context, before its first socket */
int hw_cpu_io(void *zctx, int cpu);
/* a worker thread on the process's CPUs other than `cpu` (all of them when `cpu` is the only one) */
int hw_cpu_worker(pthread_t th, int cpu);
/* the calling (router) thread on `cpu` */
int hw_cpu_router(int cpu);

#endif
