/* lean.c - lookup of the families' optional lean evaluation entries (env_lean.h). Each entry is
 * declared weak so a build that leaves its family out still links. */
#include <string.h>

#include "env_lean.h"

extern const hw_env_lean hw_lean_maestro __attribute__((weak));
extern const hw_env_lean hw_lean_diag __attribute__((weak));
extern const hw_env_lean hw_lean_placement __attribute__((weak));

const hw_env_lean *hw_env_lean_find(const char *id) {
    const hw_env_lean *t[] = {&hw_lean_maestro, &hw_lean_diag, &hw_lean_placement};
    if (!id) return NULL;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i] && !strcmp(t[i]->id, id)) return t[i];
    return NULL;
}

int hw_env_lean_metric(const hw_env_lean *l, const char *name, size_t len) {
    for (int i = 0; i < l->nmetrics; i++)
        if (strlen(l->metric_names[i]) == len && !memcmp(l->metric_names[i], name, len)) return i;
    return -1;
}
