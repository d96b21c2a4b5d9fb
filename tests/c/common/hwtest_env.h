/* hwtest_env.h - in-process env helpers shared by the C test groups (linked into every test
 * binary). Owns: making an env of a registered family from config JSON text and failing the
 * test when that does not work, and checking that a config is refused with BAD_CONFIG and a
 * message naming the offending field. Both fail the test on config text that is not JSON. */
#ifndef HWTEST_ENV_H
#define HWTEST_ENV_H

#include "registry.h"

/* hw_env_create(env, cfg_text) (NULL: no config); *f (may be NULL) gets the family. */
void *hwtest_env_make(const char *env, const char *cfg_text, const hw_env_family **f);
/* cfg_text is refused with HW_E_BAD_CONFIG and a message containing field. */
void hwtest_env_refuses(const char *env, const char *cfg_text, const char *field);

#endif
