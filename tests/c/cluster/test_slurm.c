/* The real single-node Slurm test (tests/cluster/slurm.sh: munged + slurmctld + slurmd in a
 * temporary directory, scripts/slurm's server job, seed-sweep array and MARL job, hwgym report
 * and replay over the results). Skipped, with the script's reason, when not root or without
 * slurm-wlm/munge. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"

Test(slurm, single_node_cluster, .timeout = 170) {
    char script[4096], server[4096];
    cr_assert(hwtest_repo_file("tests/cluster/slurm.sh", script, sizeof script), "tests/cluster/slurm.sh not found");
    if (!hwtest_bin("hwgym-server", server, sizeof server)) cr_skip_test("hwgym-server is not built");
    char *slash = strrchr(server, '/');
    *slash = 0; /* BUILD/bin */
    const char *argv[] = {"/usr/bin/timeout", "160", "/bin/bash", script, server, NULL};
    char *out = NULL, *err = NULL;
    int rc = hwtest_run(argv, &out, &err);
    if (rc == 77) {
        const char *why = strstr(out ? out : "", "SKIP: ");
        cr_skip_test("%s", why ? why + 6 : "skipped");
    }
    cr_assert_eq(rc, 0, "tests/cluster/slurm.sh exited %d:\n%s\n%s", rc, out ? out : "", err ? err : "");
    cr_assert(strstr(out, "PASS"), "%s", out);
    free(out);
    free(err);
}
