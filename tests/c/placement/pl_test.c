/* pl_test.c - shared placement-v0 test helpers (pl_test.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "pl_test.h"

void *pl_test_env(const char *cfg_text, const hw_env_family **f) {
    json_error_t je;
    json_t *cfg = json_loads(cfg_text, 0, &je);
    cr_assert(cfg, "bad test config: %s", je.text);
    hw_err err = {0};
    void *env = hw_env_create("placement-v0", cfg, f, &err);
    json_decref(cfg);
    cr_assert(env, "create failed: %s", err.msg);
    return env;
}

void pl_test_env_err(const char *cfg_text, const char *needle) {
    json_t *cfg = json_loads(cfg_text, 0, NULL);
    cr_assert(cfg, "bad test config %s", cfg_text);
    hw_err err = {0};
    void *env = hw_env_create("placement-v0", cfg, NULL, &err);
    json_decref(cfg);
    cr_assert_null(env, "config should fail: %s", cfg_text);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG, "%s: code %s (%s)", cfg_text, hw_code_name(err.code), err.msg);
    cr_assert(strstr(err.msg, needle), "error '%s' does not name '%s'", err.msg, needle);
}
