/* The cluster scripts, run by make test:
 *  - tests/cluster/slurm.sh: a real single-node Slurm (munged + slurmctld + slurmd in a temporary
 *    directory), scripts/slurm's server job, seed-sweep array and MARL job, hwgym report and
 *    replay over the results; skipped, with the script's reason, when not root or without
 *    slurm-wlm/munge;
 *  - tests/cluster/netns.sh: server and MARL workers in three network namespaces over veth
 *    links with CURVE on, one link cut mid-run; skipped without CAP_NET_ADMIN. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"

static void run_script(const char *rel, int limit_s) {
    char script[4096], server[4096], lim[16];
    cr_assert(hwtest_repo_file(rel, script, sizeof script), "%s not found", rel);
    if (!hwtest_bin("hwgym-server", server, sizeof server)) cr_skip_test("hwgym-server is not built");
    char *slash = strrchr(server, '/');
    *slash = 0; /* BUILD/bin */
    snprintf(lim, sizeof lim, "%d", limit_s);
    const char *argv[] = {"/usr/bin/timeout", lim, "/bin/bash", script, server, NULL};
    char *out = NULL, *err = NULL;
    int rc = hwtest_run(argv, &out, &err);
    if (rc == 77) {
        const char *why = strstr(out ? out : "", "SKIP: ");
        cr_skip_test("%s", why ? why + 6 : "skipped");
    }
    cr_assert_eq(rc, 0, "%s exited %d:\n%s\n%s", rel, rc, out ? out : "", err ? err : "");
    cr_assert(strstr(out, "PASS"), "%s", out);
    free(out);
    free(err);
}

Test(scripts, slurm_single_node_cluster, .timeout = 170) { run_script("tests/cluster/slurm.sh", 160); }
Test(scripts, netns_cut_link_marl, .timeout = 90) { run_script("tests/cluster/netns.sh", 80); }
