/* Optional CURVE authentication: an allow-listed client key is served; another key, or no
 * encryption at all, is not; the server still exits 0 on SIGTERM. Uses the real binary and
 * libhwgym (which reads HWGYM_CURVE_* from the environment). */
#include <criterion/criterion.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "hwgym_client.h"

extern char **environ;

static void keygen(const char *bin, char pub[41], char sec[41]) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s --curve-keygen", bin);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char buf[256] = "";
    cr_assert(fgets(buf, sizeof buf, p));
    pclose(p);
    json_t *j = json_loads(buf, 0, NULL);
    cr_assert(j, "keygen printed %s", buf);
    snprintf(pub, 41, "%s", json_string_value(json_object_get(j, "public")));
    snprintf(sec, 41, "%s", json_string_value(json_object_get(j, "secret")));
    json_decref(j);
    cr_assert_eq(strlen(pub), 40);
}

static int ping_with(const char *ep, const char *server, const char *pub, const char *sec) {
    if (server) setenv("HWGYM_CURVE_SERVERKEY", server, 1);
    else unsetenv("HWGYM_CURVE_SERVERKEY");
    if (pub) setenv("HWGYM_CURVE_PUBLICKEY", pub, 1);
    else unsetenv("HWGYM_CURVE_PUBLICKEY");
    if (sec) setenv("HWGYM_CURVE_SECRETKEY", sec, 1);
    else unsetenv("HWGYM_CURVE_SECRETKEY");
    hw_err err;
    hwc_client *c = hwc_connect(NULL, ep, 1500, &err);
    cr_assert(c, "%s", err.msg);
    int rc = hwc_ping(c, NULL, &err);
    if (rc) cr_assert_eq(err.code, HW_E_IO, "%s", err.msg);
    hwc_disconnect(c);
    return rc;
}

Test(auth, curve_allow_list, .timeout = 60) {
    char bin[4096];
    built_bin("hwgym-server", bin, sizeof bin);
    char spub[41], ssec[41], apub[41], asec[41], bpub[41], bsec[41];
    /* Z85 keys may hold ':', '=' and '#': make sure the file parsing copes with them */
    int tries = 0;
    do keygen(bin, spub, ssec);
    while (!strpbrk(ssec, ":=#") && ++tries < 50);
    tries = 0;
    do keygen(bin, apub, asec);
    while (!strpbrk(apub, ":=#") && ++tries < 50);
    keygen(bin, bpub, bsec);
    char dir[] = "/tmp/hwgym-auth-XXXXXX";
    cr_assert(mkdtemp(dir));
    char secf[128], allowf[128], ep[160];
    snprintf(secf, sizeof secf, "%s/server.key", dir);
    snprintf(allowf, sizeof allowf, "%s/allow.txt", dir);
    snprintf(ep, sizeof ep, "ipc://%s/s.sock", dir);
    FILE *f = fopen(secf, "w");
    fprintf(f, "# server secret\nsecret: %s\n", ssec);
    fclose(f);
    f = fopen(allowf, "w");
    fprintf(f, "# agents allowed to connect\n%s  # agent A\n", apub);
    fclose(f);
    char *argv[] = {bin, "--bind", ep, "--curve-secret", secf, "--curve-allow", allowf, NULL};
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0);
    int ok = -1;
    for (int i = 0; i < 50 && ok != 0; i++) ok = ping_with(ep, spub, apub, asec);
    cr_assert_eq(ok, 0, "the allow-listed client is served");
    cr_assert_neq(ping_with(ep, spub, bpub, bsec), 0, "a key not in the allow-list is refused");
    cr_assert_neq(ping_with(ep, NULL, NULL, NULL), 0, "a client without CURVE is refused");
    cr_assert_eq(ping_with(ep, spub, apub, asec), 0, "and A still is");
    kill(pid, SIGTERM);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
    /* bad key files are refused with a message naming the flag */
    f = fopen(allowf, "w");
    fprintf(f, "not-a-key\n");
    fclose(f);
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "%s --bind %s --curve-secret %s --curve-allow %s 2>&1 | grep -q -- '--curve-allow'", bin, ep, secf, allowf);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
