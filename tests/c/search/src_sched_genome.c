/* Compiles agents/search/sched_genome.c into the search test binary (see src_space.c). */
#include "agents/search/sched_genome.c"
