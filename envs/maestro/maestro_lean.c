/* maestro_lean.c - maestro-v0's lean evaluation entry (env_lean.h): the numeric metrics of
 * evaluate() (same names and values), without the JSON object and the directive text. */
#include <math.h>

#include "env_lean.h"
#include "maestro.h"

int maestro_env_eval_action(void *p, const int64_t *a, double *reward, maestro_result *r);

static const char *const names[] = {"runtime", "num_macs", "throughput", "energy", "energy_nj", "power", "area", "edp",
                                    "l1_size", "l2_size", "peak_noc_bw", "offchip_bw_req", "avg_utilized_pes", "num_pes"};
#define NM ((int)(sizeof names / sizeof names[0]))

static int lean_eval(void *env, void *ctx, const hw_act *act, double *reward, bool *feasible, double *v, hw_err *err) {
    (void)ctx;
    if (!act->i) return hw_fail(err, HW_E_BAD_ACTION, "point: expected integer parameters");
    maestro_result r;
    int pes = maestro_env_eval_action(env, act->i, reward, &r);
    *feasible = r.feasible;
    if (!r.valid) {
        for (int i = 0; i < NM - 1; i++) v[i] = NAN;
    } else {
        v[0] = (double)r.runtime, v[1] = (double)r.num_macs, v[2] = r.throughput, v[3] = r.energy, v[4] = r.energy_nj;
        v[5] = r.power, v[6] = r.area, v[7] = r.edp, v[8] = (double)r.l1_req_total, v[9] = (double)r.l2_req_total;
        v[10] = (double)r.peak_bw, v[11] = (double)r.offchip_bw_req, v[12] = r.avg_util_pes;
    }
    v[13] = pes;
    return 0;
}

const hw_env_lean hw_lean_maestro = {
    .id = "maestro-v0",
    .version = "maestro-v0/1",
    .nmetrics = NM,
    .metric_names = names,
    .eval = lean_eval,
};
