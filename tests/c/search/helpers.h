/* helpers.h - shared by the search tests: run an algorithm in-process on a local env. */
#ifndef SEARCH_TEST_HELPERS_H
#define SEARCH_TEST_HELPERS_H

#include "agent_common.h"
#include "agents/search/search_int.h"

typedef struct trace {
    int64_t n;
    uint64_t hash;     /* FNV over every evaluated point in order */
    int max_call;      /* largest objective call */
    int64_t calls;
} trace;

/* Runs algo on env/config (JSON text) locally; fills res (free with hs_result_free) and tr. */
void run_local(hs_algo algo, const char *env, const char *cfg, uint64_t seed, int64_t budget, int batch,
               const hs_params *p, hs_result *res, trace *tr);

#endif
