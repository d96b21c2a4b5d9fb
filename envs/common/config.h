/* config.h - reading env configs (JSON objects) with errors that name the field.
 * Owns: typed getters with defaults and bounds, enum choices, and unknown-key rejection.
 * Every getter returns 0 on success (default used when the key is absent or null) and -1 with
 * HW_E_BAD_CONFIG "config.<key>: ..." otherwise. `cfg` may be NULL (all defaults). */
#ifndef HW_CONFIG_H
#define HW_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"

int hw_cfg_int(const json_t *cfg, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out, hw_err *err);
int hw_cfg_num(const json_t *cfg, const char *key, double def, double lo, double hi, double *out, hw_err *err);
int hw_cfg_bool(const json_t *cfg, const char *key, bool def, bool *out, hw_err *err);
/* String (borrowed from cfg, or def). */
int hw_cfg_str(const json_t *cfg, const char *key, const char *def, const char **out, hw_err *err);
/* One of `choices` (NULL-terminated); *out = index. Error lists the choices. */
int hw_cfg_enum(const json_t *cfg, const char *key, const char *const *choices, int def, int *out, hw_err *err);
/* Rejects keys not in `allowed` (NULL-terminated): "config.foo: unknown field (known: a, b)". */
int hw_cfg_check_keys(const json_t *cfg, const char *const *allowed, hw_err *err);
/* Reads a whole JSON file as a local tool (trusted: any path); errors name the file, line and
 * column. Envs must not call it on config paths: use hw_files.h with their ctx. */
json_t *hw_json_load_file(const char *path, hw_err *err);

#endif
