/* Compiles agents/egrl/workload.c into the egrl test binary (as src_decode.c does decode.c). */
#include "agents/egrl/workload.c"
