/* placement_bound.h - upper bounds on the speedup any mapping can reach over the native
 * heuristic on a placement-v0 model (docs/placement.md "Headroom bounds"). Pure computation
 * over a built pl_model; no env, no I/O.
 *
 * capacity_free:  every node picks the memories of the tensors it touches (its weights, its
 *                 inputs, its output) on its own, with no capacities: the sum of the per-node
 *                 minima is a lower bound on any map's latency.
 * capacity_aware: the same relaxation, where no tensor goes to a memory whose bank is smaller
 *                 than the tensor, plus the capacity of every memory bank at every step,
 *                 moved into the objective with Lagrange multipliers (one per bank and step);
 *                 any multipliers give a valid lower bound, and a bounded subgradient ascent
 *                 (Polyak steps towards the heuristic's latency) picks good ones. Starting from
 *                 zero multipliers, capacity_aware <= capacity_free always.
 * Both are speedup bounds: baseline latency / latency lower bound. */
#ifndef HW_PLACEMENT_BOUND_H
#define HW_PLACEMENT_BOUND_H

#include "placement.h"

typedef struct pl_bound {
    double baseline;       /* the heuristic's latency, seconds */
    double free_latency;   /* capacity-free lower bound on any mapping's latency, seconds */
    double aware_latency;  /* capacity-aware lower bound, seconds */
    double capacity_free;  /* baseline / free_latency */
    double capacity_aware; /* baseline / aware_latency */
    int iterations;        /* subgradient iterations run */
    int inputs_dropped;    /* node inputs left out of the enumeration (a looser but valid bound) */
} pl_bound;

/* Computes both bounds with at most `iterations` (0..100000) subgradient steps. Deterministic.
 * Returns 0, or -1 when memory runs out. */
int pl_bound_compute(const pl_model *m, int iterations, pl_bound *out);

#endif
