/* pl_test.h - what the placement-v0 tests share: creating an env from JSON text (asserting it
 * works) and asserting that a config fails with an error naming a field. */
#ifndef PL_TEST_H
#define PL_TEST_H

#include "placement/placement_env.h"
#include "registry.h"

/* The env for a config given as JSON text; the test fails when it cannot be created. */
void *pl_test_env(const char *cfg_text, const hw_env_family **f);
/* Asserts that creating placement-v0 with this config fails with HW_E_BAD_CONFIG naming `needle`. */
void pl_test_env_err(const char *cfg_text, const char *needle);

#endif
