/* Compiles agents/egrl/decode.c into the egrl test binary (the Makefile builds agents/egrl only
 * into hwgym-egrl, whose main() would clash with Criterion's). */
#include "agents/egrl/decode.c"
