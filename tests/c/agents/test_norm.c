/* ag_norm (agents/lib/nn/ag_norm.h): the one observation/reward normalisation every PPO-family
 * agent uses, its defaults, and the option errors at the command line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"
#include "ag_norm.h"
#include "ppo_loop.h"

Test(ag_norm, log_running_obs_by_hand) {
    ag_norm *z = ag_norm_new(1, AG_OBS_NORM_LOG_RUNNING, AG_REW_NORM_NONE, 0.99);
    double x[3] = {0, 1e6, -3}, y;
    /* first sample: mean = log1p(0) = 0 after one update; var (1 + (0 - 1)/1) = 0 */
    ag_norm_obs(z, &x[0], &y, true);
    cr_assert_float_eq(y, 0.0, 1e-12);
    ag_norm_obs(z, &x[1], &y, true);
    double v1 = log1p(1e6), m = v1 / 2, var = 0 + ((v1 - 0) * (v1 - m) - 0) / 2;
    double want = (v1 - m) / sqrt(var + 1e-8);
    cr_assert_float_eq(y, want > 5 ? 5 : want, 1e-9);
    ag_norm_obs(z, &x[2], &y, false); /* no update: same statistics */
    double w2 = (-log1p(3) - m) / sqrt(var + 1e-8);
    cr_assert_float_eq(y, w2 < -5 ? -5 : w2, 1e-9);
    cr_assert_float_eq(z->count, 2, 0);
    ag_norm_free(z);
    z = ag_norm_new(2, AG_OBS_NORM_NONE, AG_REW_NORM_NONE, 0.99);
    double in[2] = {NAN, 7}, out[2];
    ag_norm_obs(z, in, out, true);
    cr_assert(out[0] == 0 && out[1] == 7);
    ag_norm_free(z);
}

Test(ag_norm, return_std_reward) {
    ag_norm *z = ag_norm_new(0, AG_OBS_NORM_NONE, AG_REW_NORM_RETURN_STD, 0.5);
    cr_assert_eq(ag_norm_reward(z, 100, false), 0.0); /* the very first sample */
    double r2 = ag_norm_reward(z, 100, true);
    /* returns 100 then 150: mean 125, population var 625 */
    cr_assert_float_eq(r2, 100 / (sqrt(625.0) + 1e-12), 1e-9);
    double big = ag_norm_reward(z, 1e9, false);
    cr_assert(big > 0 && big <= 10.0, "%g", big); /* scaled, within the clip */
    ag_norm_free(z);
    z = ag_norm_new(0, AG_OBS_NORM_NONE, AG_REW_NORM_NONE, 0.5);
    double a = ag_norm_reward(z, 3.5, false), b = ag_norm_reward(z, NAN, false);
    cr_assert(a == 3.5 && b == 0.0);
    ag_norm_free(z);
}

/* hwgym-ppo's defaults are the MARL workers' (docs/agents.md: same preprocessing) */
Test(ag_norm, ppo_defaults_match_marl) {
    ppo_train_opts o = ppo_train_opts_default();
    cr_assert_eq(o.obs_norm, AG_OBS_NORM_LOG_RUNNING);
    cr_assert_eq(o.rew_norm, AG_REW_NORM_RETURN_STD);
    cr_assert_eq(AG_OBS_NORM_DEFAULT, AG_OBS_NORM_LOG_RUNNING);
    cr_assert_eq(AG_REW_NORM_DEFAULT, AG_REW_NORM_RETURN_STD);
}

Test(ag_norm, cli_options_and_errors) {
    const char *bins[] = {"hwgym-ppo", "hwgym-tdm-ppo"};
    for (int i = 0; i < 2; i++) {
        char bin[512];
        if (!hwtest_bin(bins[i], bin, sizeof bin)) cr_skip_test("%s is not built", bins[i]);
        const char *bad[] = {bin, "--endpoint", "local", "--env", "diag-v0", "--obs-norm", "zscore", NULL};
        char *err = NULL;
        cr_assert_eq(hwtest_run(bad, NULL, &err), 2);
        cr_assert(strstr(err, "--obs-norm: 'zscore' is not one of none, running, log-running"), "%s", err);
        free(err);
        const char *ok[] = {bin,   "--endpoint", "local",  "--env",         "diag-v0", "--budget", "20", "--quiet",
                            "--obs-norm", "running", "--reward-norm", "none", NULL};
        char *out = NULL;
        cr_assert_eq(hwtest_run(ok, &out, &err), 0, "%s", err);
        cr_assert(strstr(out, "\"obs-norm\":\"running\"") || strstr(out, "\"samples\":20"), "%s", out);
        free(out);
        free(err);
    }
}
