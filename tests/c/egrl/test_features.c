/* test_features.c - --features capacity (agents/egrl/workload.c, eg_capacity_features) by hand
 * on the chain of tests/data/placement/chain3.json on chain3_hw.json: tensors w0 1000, a0 200,
 * w1 3000, a1 300, w2 500, a2 50 bytes; LLC 4000 B and SRAM 1500 B, one bank each. Ratios r
 * enter as r / (1 + r). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "agents/egrl/egrl.h"

#define CHAIN_CFG "{\"graph_file\":\"tests/data/placement/chain3.json\",\"hw_file\":\"tests/data/placement/chain3_hw.json\"}"

static double sq(double r) { return r / (1 + r); }

Test(egrl_features, capacity_features_by_hand) {
    hw_err err = {0};
    ag_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    json_t *cfg = json_loads(CHAIN_CFG, 0, NULL);
    eg_ctx c;
    memset(&c, 0, sizeof c);
    c.o = &o;
    c.sess = ag_sess_make("local", "placement-v0", cfg, NULL, 0, &err);
    cr_assert_not_null(c.sess, "%s", err.msg);
    cr_assert_eq(eg_workload(&c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.F, 19);
    double table1[3 * 19];
    memcpy(table1, c.feat, sizeof table1);
    cr_assert_eq(eg_capacity_features(&c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.F, 19 + 3 * 2 + 2);
    /* per node: (weights, activation, weights from here on) over the LLC, then over the SRAM */
    const double want[3][6] = {
        {sq(1000 / 4000.), sq(200 / 4000.), sq(4500 / 4000.), sq(1000 / 1500.), sq(200 / 1500.), sq(4500 / 1500.)},
        {sq(3000 / 4000.), sq(300 / 4000.), sq(3500 / 4000.), sq(3000 / 1500.), sq(300 / 1500.), sq(3500 / 1500.)},
        {sq(500 / 4000.), sq(50 / 4000.), sq(500 / 4000.), sq(500 / 1500.), sq(50 / 1500.), sq(500 / 1500.)}};
    for (int i = 0; i < 3; i++) {
        const double *f = c.feat + (size_t)i * c.F;
        cr_assert_eq(memcmp(f, table1 + 19 * i, 19 * sizeof(double)), 0, "node %d: Table 1 columns kept", i);
        for (int k = 0; k < 6; k++) cr_assert_float_eq(f[19 + k], want[i][k], 1e-12, "node %d column %d: %g", i, 19 + k, f[19 + k]);
        cr_assert_float_eq(f[25], sq(4500 / 5500.), 1e-12, "the graph's weights over all on-chip memory");
        cr_assert_float_eq(f[26], log1p(3) / 10, 1e-12, "graph size");
    }
    /* --decode capacity after --features capacity reuses the sizes (no second allocation) */
    int64_t *bytes = c.dec_bytes;
    cr_assert_eq(eg_decode_init(&c, &err), 0);
    cr_assert_eq(c.dec_bytes, bytes);
    cr_assert_eq(c.dec_bytes[2], 3000);
    cr_assert_eq(c.dec_bytes[5], 50);
    free(c.feat);
    free(c.dec_bytes);
    free(c.dec_last);
    gnn_graph_free(c.g);
    ag_sess_free(c.sess);
    json_decref(cfg);
}
