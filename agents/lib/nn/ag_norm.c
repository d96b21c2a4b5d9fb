/* ag_norm.c - see ag_norm.h. */
#include "ag_norm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ag_obs_norm_names[] = {"none", "running", "log-running", NULL};
const char *const ag_rew_norm_names[] = {"none", "return-std", NULL};

ag_norm *ag_norm_new(int n, ag_obs_norm_mode om, ag_rew_norm_mode rm, double gamma) {
    ag_norm *z = calloc(1, sizeof *z);
    if (!z) abort();
    z->n = n;
    z->om = om;
    z->rm = rm;
    z->gamma = gamma;
    z->mean = calloc((size_t)n + 1, sizeof(double));
    z->var = calloc((size_t)n + 1, sizeof(double));
    if (!z->mean || !z->var) abort();
    for (int i = 0; i < n; i++) z->var[i] = 1.0;
    z->rvar = 1.0;
    return z;
}

void ag_norm_free(ag_norm *z) {
    if (!z) return;
    free(z->mean);
    free(z->var);
    free(z);
}

void ag_norm_obs(ag_norm *z, const double *obs, double *out, bool update) {
    for (int f = 0; f < z->n; f++) {
        double o = isfinite(obs[f]) ? obs[f] : 0.0;
        if (z->om == AG_OBS_NORM_NONE) {
            out[f] = o;
            continue;
        }
        double v = z->om == AG_OBS_NORM_LOG_RUNNING ? copysign(log1p(fabs(o)), o) : o;
        if (update) {
            double d = v - z->mean[f], cnt = z->count + 1;
            z->mean[f] += d / cnt;
            z->var[f] += (d * (v - z->mean[f]) - z->var[f]) / cnt;
        }
        double x = (v - z->mean[f]) / sqrt(z->var[f] + 1e-8);
        out[f] = x > 5 ? 5 : x < -5 ? -5 : x;
    }
    if (update && z->om != AG_OBS_NORM_NONE) z->count += 1;
}

double ag_norm_reward(ag_norm *z, double r, bool done) {
    if (!isfinite(r)) r = 0;
    if (z->rm == AG_REW_NORM_NONE) return r;
    z->ret = z->ret * z->gamma + r;
    double d = z->ret - z->rmean;
    z->rcount += 1;
    z->rmean += d / z->rcount;
    z->rvar += (d * (z->ret - z->rmean) - z->rvar) / z->rcount;
    if (done) z->ret = 0;
    double s = sqrt(z->rvar) + 1e-12;
    double sr = z->rcount > 1 ? r / s : 0.0;
    return sr > 10 ? 10 : sr < -10 ? -10 : sr;
}

int ag_norm_parse(const char *name, const char *const *names, const char *what, int *out, hw_err *err) {
    if (!name) return 0;
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) {
            *out = i;
            return 0;
        }
    char list[96] = "";
    for (int i = 0; names[i]; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, names[i]);
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "%s: '%s' is not one of %s", what, name, list);
}
