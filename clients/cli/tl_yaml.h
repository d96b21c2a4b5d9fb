/* tl_yaml.h - YAML files as jansson trees (scalars as strings) for `hwgym timeloop-model`. */
#ifndef HWCLI_TL_YAML_H
#define HWCLI_TL_YAML_H

#include <jansson.h>

#include "hw_error.h"

/* Parses one YAML document; NULL with err naming the file and line on failure. A file over
 * TL_YAML_MAX_BYTES (LIMIT), a duplicate key, a key of 256+ bytes, an alias or a second document
 * is refused. */
#define TL_YAML_MAX_BYTES (4 << 20)
json_t *tl_yaml_load(const char *path, hw_err *err);

#endif
