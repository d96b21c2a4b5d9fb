/* bench_rlsched.c - one hwgym-rlsched training episode on a ResNet-50 layer (16 steps, each a
 * brute-force step inside sched-v0, plus the PPO updates the rollout triggers), in process, per
 * accelerator; and the share of that time spent in the env's steps. Issue 16's figure. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent_common.h"
#include "rlsched.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void) {
    const char *accs[] = {"eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba"};
    const int episodes = 20;
    printf("one training episode (16 steps) of hwgym-rlsched on ResNet-50 layer2.0.conv2, %d episodes each\n",
           episodes);
    printf("%-12s %12s %12s %12s\n", "accelerator", "ms/episode", "random ms/ep", "agent share");
    printf("(random ms/ep: the env alone, 16 uniformly random valid steps per episode; its brute-force cost differs\n"
           " from the policy's actions, so the share is indicative)\n");
    double all = 0;
    for (int a = 0; a < 4; a++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg, "{\"accelerator\":\"%s\",\"model\":\"resnet50\",\"layer\":\"layer2.0.conv2\"}", accs[a]);
        json_t *cj = json_loads(cfg, 0, NULL);
        hw_err err = {0};
        ag_sess *s = ag_sess_make("local", "sched-v0", cj, NULL, 0, &err);
        json_decref(cj);
        if (!s) {
            fprintf(stderr, "bench_rlsched: %s\n", err.msg);
            return 1;
        }
        rls_cfg c = rls_cfg_default();
        c.episodes = episodes;
        ppo *p = rls_ppo_new(s, &c, 1, &err);
        rls_result res = {0};
        double t0 = now();
        if (rls_train(s, NULL, p, &c, "energy", 1, INT64_MAX, &res, &err)) {
            fprintf(stderr, "bench_rlsched: %s\n", err.msg);
            return 1;
        }
        double per_ep = (now() - t0) / episodes;
        rls_result_free(&res);
        /* the env alone: the same number of random valid steps */
        gsl_rng *r = ag_rng_new(3);
        double t1 = now();
        for (int e = 0; e < episodes; e++) {
            uint64_t seed = (uint64_t)e;
            ag_sess_reset(s, &seed, &err);
            for (int t = 0; t < 16; t++) {
                int64_t act;
                do act = ag_rng_int(r, 55);
                while (s->mask && !s->mask[act]);
                ag_sess_step_i64(s, &act, &err);
            }
        }
        double env_ep = (now() - t1) / episodes;
        gsl_rng_free(r);
        printf("%-12s %12.2f %12.2f %11.0f%%\n", accs[a], 1e3 * per_ep, 1e3 * env_ep,
               per_ep > env_ep ? 100.0 * (per_ep - env_ep) / per_ep : 0.0);
        all += per_ep;
        ppo_free(p);
        ag_sess_free(s);
    }
    printf("mean over the four accelerators: %.2f ms per training episode\n", 1e3 * all / 4);
    return 0;
}
