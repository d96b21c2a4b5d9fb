/* registry.c - see registry.h. Each family's vtable is declared weak so a build that leaves a
 * family out (make ENV_FAMS=...) still links; absent families are simply not listed. */
#include "registry.h"

#include <string.h>

#include "common/hw_files.h"

const hw_env_ctx hw_env_ctx_local = {.files = &hw_files_local, .limits = NULL};

#define FAMILY(sym) extern const hw_env_family sym __attribute__((weak));
FAMILY(hw_family_diag)
FAMILY(hw_family_maestro)
FAMILY(hw_family_sched)
FAMILY(hw_family_dram)
FAMILY(hw_family_mmap)
FAMILY(hw_family_placement)
#undef FAMILY

static const hw_env_family *all(int i) {
    const hw_env_family *t[] = {&hw_family_maestro, &hw_family_sched,     &hw_family_dram, &hw_family_mmap,
                                &hw_family_placement, &hw_family_diag};
    int n = (int)(sizeof t / sizeof t[0]);
    int k = 0;
    for (int j = 0; j < n; j++) {
        if (!t[j]) continue;
        if (k == i) return t[j];
        k++;
    }
    return NULL;
}

int hw_registry_count(void) {
    int n = 0;
    while (all(n)) n++;
    return n;
}

const hw_env_family *hw_registry_at(int i) { return i < 0 ? NULL : all(i); }

const hw_env_family *hw_registry_find(const char *id) {
    if (!id) return NULL;
    for (int i = 0; all(i); i++)
        if (strcmp(all(i)->id, id) == 0) return all(i);
    return NULL;
}

void *hw_env_create(const char *id, const json_t *config, const hw_env_family **fam, hw_err *err) {
    return hw_env_create_ctx(id, config, &hw_env_ctx_local, fam, err);
}

#define BLOCK 16 /* the allocator's header per block, about */

size_t hw_space_bytes(const hw_space *s) {
    if (!s) return 0;
    size_t n = sizeof *s + BLOCK, numel = s->type == HW_SPACE_DICT ? 0 : (size_t)hw_space_numel(s);
    if (s->nvec) n += numel * sizeof(int64_t) + BLOCK;
    if (s->low) n += numel * sizeof(double) + BLOCK;
    if (s->high) n += numel * sizeof(double) + BLOCK;
    if (s->names) {
        n += numel * sizeof(char *) + BLOCK;
        for (size_t i = 0; i < numel; i++)
            if (s->names[i]) n += strlen(s->names[i]) + 1 + BLOCK;
    }
    if (s->labels) {
        n += numel * sizeof(char **) + BLOCK;
        for (size_t i = 0; i < numel; i++)
            for (int k = 0; s->labels[i] && s->labels[i][k]; k++) n += sizeof(char *) + strlen(s->labels[i][k]) + 1 + BLOCK;
    }
    for (int c = 0; c < s->nchild; c++) n += sizeof(char *) + sizeof(hw_space *) + strlen(s->keys[c]) + 1 + BLOCK + hw_space_bytes(s->child[c]);
    return n;
}

size_t hw_env_mem_bytes(const hw_env_family *fam, const void *env) {
    if (!fam || !env) return HW_ENV_MEM_DEFAULT;
    size_t n = fam->mem_bytes ? fam->mem_bytes(env) : 0;
    if (!n) return HW_ENV_MEM_DEFAULT;
    return n + hw_space_bytes(fam->action_space(env)) + hw_space_bytes(fam->observation_space(env));
}

void *hw_env_create_ctx(const char *id, const json_t *config, const hw_env_ctx *ctx, const hw_env_family **fam, hw_err *err) {
    static const hw_env_ctx none = {NULL, NULL};
    if (!ctx) ctx = &none;
    const hw_env_family *f = hw_registry_find(id);
    if (!f) return hw_fail(err, HW_E_UNKNOWN_ENV, "unknown env '%s' (try the envs op or `hwgym envs`)", id ? id : "(null)"), NULL;
    if (config && !json_is_object(config) && !json_is_null(config))
        return hw_fail(err, HW_E_BAD_CONFIG, "config: expected an object"), NULL;
    if (json_is_null(config)) config = NULL;
    void *env = f->create_ctx ? f->create_ctx(config, ctx, err) : f->create(config, err);
    if (env && fam) *fam = f;
    return env;
}
