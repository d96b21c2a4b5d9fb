/* zoo_internal.h - shared between zoo.c and the generated zoo_models.c; not a public API. */
#ifndef HW_ZOO_INTERNAL_H
#define HW_ZOO_INTERNAL_H

#include "zoo.h"

#define HW_ZOO_NBUILTIN 10
extern const hw_model hw_zoo_builtin[HW_ZOO_NBUILTIN];

#endif
