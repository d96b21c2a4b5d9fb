/* hwtest_env.c - see hwtest_env.h */
#include "hwtest_env.h"

#include <criterion/criterion.h>
#include <string.h>

static json_t *parse(const char *cfg_text) {
    if (!cfg_text) return NULL;
    json_error_t je;
    json_t *cfg = json_loads(cfg_text, 0, &je);
    cr_assert(cfg, "bad JSON in the test: %s (%s)", cfg_text, je.text);
    return cfg;
}

void *hwtest_env_make(const char *env, const char *cfg_text, const hw_env_family **f) {
    json_t *cfg = parse(cfg_text);
    hw_err err = {0};
    void *e = hw_env_create(env, cfg, f, &err);
    json_decref(cfg);
    cr_assert(e, "%s: create failed: %s", env, err.msg);
    return e;
}

void hwtest_env_refuses(const char *env, const char *cfg_text, const char *field) {
    json_t *cfg = parse(cfg_text);
    hw_err err = {0};
    void *e = hw_env_create(env, cfg, NULL, &err);
    json_decref(cfg);
    cr_assert_null(e, "%s accepted %s", env, cfg_text);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG, "%s %s: %s", env, cfg_text, err.msg);
    cr_assert(strstr(err.msg, field), "%s: '%s' does not name %s", env, err.msg, field);
}
