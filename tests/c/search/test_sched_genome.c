/* test_sched_genome.c - sched-v0 tables as hwgym-search design points (agents/search/sched_genome.c):
 * every genome encodes a table whose columns multiply to the layer; the genes place exactly the
 * layer's prime factors; a GA over the genome finds a feasible table scored by the env itself. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../agents/search/search.h"
#include "agent_common.h"

#define CFG "{\"accelerator\":\"eyeriss_v1\",\"layer\":{\"C\":12,\"K\":20,\"R\":3,\"S\":3,\"P\":14,\"Q\":14}}"

Test(sched_genome, genomes_encode_tables_of_the_layer) {
    hw_err err = {0};
    json_t *cfg = json_loads(CFG, 0, NULL);
    hs_space *s = hs_sched_genome_space(cfg, &err);
    cr_assert(s, "%s", err.msg);
    /* 12 = 2*2*3, 20 = 2*2*5, 3, 3, 14 = 2*7, 14 = 2*7: 12 genes */
    cr_assert_eq(s->dim, 12);
    const int dims[8] = {1, 12, 1, 20, 3, 3, 14, 14};
    gsl_rng *r = ag_rng_new(4);
    double x[12];
    for (int trial = 0; trial < 200; trial++) {
        for (int i = 0; i < s->dim; i++) x[i] = (double)ag_rng_int(r, s->card[i]);
        json_t *p = hs_point_json(s, x), *t = json_object_get(p, "table");
        cr_assert_eq(json_array_size(t), 10);
        for (int d = 0; d < 8; d++) {
            long prod = 1;
            for (int row = 0; row < 10; row++) prod *= json_integer_value(json_array_get(json_array_get(t, row), d));
            cr_assert_eq(prod, dims[d], "column %d", d);
        }
        json_decref(p);
    }
    gsl_rng_free(r);
    hs_space_free(s);
    json_t *net = json_pack("{ss,ss}", "mode", "network", "model", "resnet50");
    cr_assert_null(hs_sched_genome_space(net, &err));
    cr_assert(strstr(err.msg, "network"), "%s", err.msg);
    json_decref(net);
    json_decref(cfg);
}
