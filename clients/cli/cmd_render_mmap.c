/* cmd_render_mmap.c - `hwgym render` for mmap-v0 layouts: a thin wrapper over mm_render_file.
 *   hwgym render --problem NAME|FILE [--seed N] [--policy heuristic|random | --actions FILE] --out FILE.svg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmap/mmap.h"

int hwcli_render_mmap(int argc, char **argv);

int hwcli_render_mmap(int argc, char **argv) {
    const char *problem = "alexnet_train_batch_32", *policy = NULL, *actions = NULL, *out = NULL;
    unsigned long long seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--problem") == 0 && v) problem = argv[++i];
        else if (strcmp(a, "--policy") == 0 && v) policy = argv[++i];
        else if (strcmp(a, "--actions") == 0 && v) actions = argv[++i];
        else if (strcmp(a, "--out") == 0 && v) out = argv[++i];
        else if (strcmp(a, "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(a, "--env") == 0 && v) i++; /* the dispatcher's selector */
        else if (strncmp(a, "--env=", 6) == 0) continue;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: hwgym render --env mmap-v0 --problem NAME|FILE [--seed N] [--policy heuristic|random | --actions FILE] --out FILE.svg\n"
                   "Draws the CMEM layout (time x offset, one colour per tensor) of the mapping a policy or an action list\n"
                   "(JSON array or digit string, e.g. the \"actions\" metric of `hwgym eval mmap-v0`) produces.\n");
            return 0;
        } else {
            fprintf(stderr, "usage: hwgym render --problem NAME|FILE [--seed N] [--policy heuristic|random | --actions FILE] --out FILE.svg\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "hwgym render: --out FILE.svg is required\n");
        return 2;
    }
    if (policy && strcmp(policy, "heuristic") != 0 && strcmp(policy, "random") != 0) {
        fprintf(stderr, "hwgym render: --policy must be heuristic or random\n");
        return 2;
    }
    hw_err err = {0};
    if (mm_render_file(problem, seed, policy, actions, out, &err)) {
        fprintf(stderr, "hwgym render: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "wrote %s\n", out);
    return 0;
}
