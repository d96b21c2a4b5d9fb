/* Compiles agents/search/sa.c into the search test binary (the Makefile builds agents/search only
 * into hwgym-search, whose main() would clash with Criterion's). */
#include "agents/search/sa.c"
