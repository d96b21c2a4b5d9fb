/* hw_space.h - Gymnasium-style spaces with parameter names and categorical labels.
 * Owns: building spaces (envs), validating actions against them (server), and their
 * JSON form (wire, CLI, clients). Dict spaces keep their keys sorted, as Gymnasium does.
 *
 * JSON form (PROTOCOL.md "Spaces"):
 *   {"type":"Discrete","n":N,"start":0,"name":"loop_order","labels":["KCYXRS",...]}
 *   {"type":"MultiDiscrete","nvec":[..],"names":[..],"labels":[[..]|null,..]}
 *   {"type":"Box","shape":[..],"dtype":"float32","low":[..],"high":[..],"names":[..]}
 *   {"type":"MultiBinary","n":N,"names":[..]}
 *   {"type":"Dict","spaces":{"key":{...},..}}
 * names/labels are optional everywhere. Box low/high are flat lists (C order). */
#ifndef HW_SPACE_H
#define HW_SPACE_H

#include <jansson.h>
#include <stdbool.h>

#include "hw_array.h"
#include "hw_error.h"

typedef enum hw_space_type {
    HW_SPACE_DISCRETE = 0,
    HW_SPACE_MULTIDISCRETE,
    HW_SPACE_BOX,
    HW_SPACE_MULTIBINARY,
    HW_SPACE_DICT
} hw_space_type;

typedef struct hw_space {
    hw_space_type type;
    int64_t n, start;               /* Discrete: n choices from start; MultiBinary: n bits */
    int ndim;                       /* MultiDiscrete: 1; Box: any; Discrete: 0 */
    int64_t shape[HW_MAX_DIMS];
    int64_t *nvec;                  /* MultiDiscrete: choices per dim */
    double *low, *high;             /* Box: numel each */
    hw_dtype dtype;                 /* Box: float32/float64; others int64 */
    char **names;                   /* per element parameter names (numel), or NULL */
    char ***labels;                 /* per element labels (nvec[i] or n strings), or NULL */
    int nchild;                     /* Dict */
    char **keys;
    struct hw_space **child;
} hw_space;

const char *hw_space_type_name(hw_space_type t);
hw_space *hw_space_discrete(int64_t n);
hw_space *hw_space_multidiscrete(int64_t len, const int64_t *nvec);
hw_space *hw_space_box(int ndim, const int64_t *shape, const double *low, const double *high, hw_dtype dt);
hw_space *hw_space_box_uniform(int ndim, const int64_t *shape, double low, double high, hw_dtype dt);
hw_space *hw_space_multibinary(int64_t n);
hw_space *hw_space_dict(void);
/* Adds (takes ownership of) child under key; keeps keys sorted. Returns 0 or -1 on duplicate key. */
int hw_space_dict_add(hw_space *dict, const char *key, hw_space *child);
/* Element i's parameter name (copied). Allocates the names table on first use. */
void hw_space_set_name(hw_space *s, int64_t i, const char *name);
/* Labels for element i (copied): count must equal the number of choices of that element. */
void hw_space_set_labels(hw_space *s, int64_t i, int count, const char *const *labels);
void hw_space_free(hw_space *s);
hw_space *hw_space_clone(const hw_space *s);
/* A MultiDiscrete sub-space made of the given dims of s (multi-agent partitions). */
hw_space *hw_space_select(const hw_space *s, int ndims, const int *dims);

int64_t hw_space_numel(const hw_space *s);      /* action/obs elements (Dict: sum of children) */
bool hw_space_is_integer(const hw_space *s);    /* Discrete/MultiDiscrete/MultiBinary */
/* Number of choices of element i of an integer space (MultiBinary: 2). */
int64_t hw_space_choices(const hw_space *s, int64_t i);

json_t *hw_space_to_json(const hw_space *s);
hw_space *hw_space_from_json(const json_t *j, hw_err *err);

/* Validates one action (a Discrete scalar may come as shape [] or [1]) and converts it into
 * caller storage: ibuf (int64, integer spaces) or fbuf (float64, Box), each numel long.
 * Errors name the offending element and its bound. Dict action spaces are not supported. */
int hw_space_check_action(const hw_space *s, const hw_array *a, int64_t *ibuf, double *fbuf,
                          hw_act *out, hw_err *err);
/* Same for a batch of `count` actions stacked on a leading axis; element k's values land at
 * ibuf/fbuf + k*numel. */
int hw_space_check_actions(const hw_space *s, const hw_array *a, int64_t count, int64_t *ibuf,
                           double *fbuf, hw_err *err);

#endif
