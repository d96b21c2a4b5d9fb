/* mz_env.h - one mmap-v0 game for the MuZero agent: reset, step, snapshot/restore/drop and
 * evaluate on an ag_sess (agent_common.h: a hwgym-server, or this process with "local").
 * Owns: the state parsed from the session's info (legal mask, backup_safe, buffer index, lost)
 * and a copy of the state kept with every snapshot - the protocol's restore reply carries no
 * observation, so restore puts back the one saved when the snapshot was taken. */
#ifndef HWGYM_MZ_ENV_H
#define HWGYM_MZ_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_error.h"
#include "muzero_net.h"

typedef struct mz_env_state {
    double *obs;          /* layout.obs_dim (the current state's is the session's buffer) */
    uint8_t mask;         /* legal actions, bit a */
    bool backup_safe;
    int buffer, nbuf;
    double ret;           /* return so far (global feature) */
    int alias_cur;        /* alias id of the current buffer (obs) */
} mz_env_state;

typedef struct mz_env {
    bool local;
    mz_layout L;
    mz_env_state st;      /* current state */
    double reward;        /* last step */
    bool terminated, lost;
    json_t *info;         /* last reset/step info (the session's: valid until the next step) */
    int64_t steps;        /* env steps sent */
    void *impl;
} mz_env;

mz_env *mz_env_open(const char *endpoint, const json_t *config, hw_err *err);
void mz_env_free(mz_env *e);
int mz_env_reset(mz_env *e, hw_err *err);
int mz_env_step(mz_env *e, int action, hw_err *err);
int mz_env_snapshot(mz_env *e, int64_t *id, hw_err *err);
int mz_env_restore(mz_env *e, int64_t id, hw_err *err);
int mz_env_drop(mz_env *e, int64_t id, hw_err *err);
/* point as for mmap-v0 evaluate; *metrics (may be NULL) gets a new reference. */
int mz_env_evaluate(mz_env *e, const json_t *point, double *reward, json_t **metrics, hw_err *err);

#endif
