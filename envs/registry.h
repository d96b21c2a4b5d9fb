/* registry.h - the list of env families this build contains.
 * Owns: lookup by id and enumeration. Families register by being named in registry.c. */
#ifndef HW_REGISTRY_H
#define HW_REGISTRY_H

#include "env.h"

int hw_registry_count(void);
const hw_env_family *hw_registry_at(int i);
const hw_env_family *hw_registry_find(const char *id);
/* Convenience used by the server, CLI and tests: look up + create, with clear errors. */
void *hw_env_create(const char *id, const json_t *config, const hw_env_family **fam, hw_err *err);
/* The same under an explicit context (the server's file policy and limits); ctx NULL means
 * "no files, default limits". Families without create_ctx get create(). */
void *hw_env_create_ctx(const char *id, const json_t *config, const hw_env_ctx *ctx, const hw_env_family **fam, hw_err *err);
/* Bytes one env of this family holds: its mem_bytes plus its two spaces (HW_ENV_MEM_DEFAULT
 * for a family without mem_bytes). tests/c/security test_memest.c holds every family to
 * within 2x of the heap and RSS it measures (issue 28 finding 1). */
size_t hw_env_mem_bytes(const hw_env_family *fam, const void *env);
/* Bytes a space holds (its tables, names, labels and children), about. */
size_t hw_space_bytes(const hw_space *s);

#endif
