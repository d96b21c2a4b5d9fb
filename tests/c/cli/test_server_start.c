/* hwgym-server at start, without -v: one line on stderr with the endpoints it bound, a tcp
 * port picked by the system (port *) shown as the number it got, so a user knows where to
 * connect. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hwtest.h"

Test(server_start, prints_bound_endpoints_without_v, .timeout = 30) {
    hwtest_server s;
    const char *extra[] = {"--bind", "tcp://127.0.0.1:*", NULL};
    int rc = hwtest_server_start(&s, extra);
    if (rc == -1) cr_skip_test("hwgym-server is not built");
    cr_assert_eq(rc, 0);
    char path[256], log[4096] = "";
    snprintf(path, sizeof path, "%s/server.log", s.dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = 0;
    fclose(f);
    hwtest_server_stop(&s);
    cr_assert(strstr(log, "listening on ") && strstr(log, s.endpoint), "%s", log);
    regex_t re;
    cr_assert_eq(regcomp(&re, "listening on .*tcp://127\\.0\\.0\\.1:[0-9]+", REG_EXTENDED), 0);
    cr_assert_eq(regexec(&re, log, 0, NULL, 0), 0, "the tcp port the system picked is printed: %s", log);
    regfree(&re);
}
