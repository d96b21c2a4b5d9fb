/* placement_env.h - placement-v0, the EGRL tensor-placement env (docs/placement.md).
 * Owns: the env vtable over the model in placement.h, config parsing, the reward of the
 * paper's Algorithm 1, and the parsing of design points ("heuristic", "all-dram", "random",
 * JSON mappings) shared by evaluate() and the `hwgym render` command.
 *
 * Config (all optional; unknown keys are rejected):
 *   workload              zoo model name (default "resnet50"); or
 *   graph | graph_file    a graph in the placement graph format (schemas/placement-graph.schema.json)
 *   hw | hw_file          hardware (schemas/placement-hw.schema.json); default NNP-I-like
 *   episode_steps         steps per episode (default 1, as in the paper)
 *   features              "raw" (default) | "log1p" | "normalized" (column / column max)
 *   invalid_reward_scale  invalid mapping reward = -scale * eps (default 1)
 *   invalid_reward        "eps" (default, as above) or a constant reward for invalid mappings
 * Action: MultiDiscrete [2N] of memory indices, [w0, a0, w1, a1, ...], labels = memory names.
 * Observation: Dict {edges: int64 [E,2], mapping: int64 [N,2] (last rectified map, all 0 at
 * reset), node_features: float32 [N,19] (Table 1)}. */
#ifndef HW_PLACEMENT_ENV_H
#define HW_PLACEMENT_ENV_H

#include "env.h"
#include "placement.h"

extern const hw_env_family hw_family_placement;

/* The model behind an env created by hw_family_placement.create (borrowed). */
const pl_model *pl_env_model(const void *env);
/* Parses a design point (see evaluate in docs/placement.md) into map [nt]: a JSON array of 2N
 * memory indices or names (or N [weights, act] pairs), "heuristic", "all-<memory>" (e.g.
 * "all-dram"), "random" / "random:<seed>", or {"policy": "random", "seed": s}. `policy`
 * (cap bytes) receives a short description. Errors are HW_E_BAD_ACTION naming the element. */
int pl_parse_point(const pl_model *m, const json_t *point, uint8_t *map, char *policy, size_t cap, hw_err *err);

/* The lean entry's evaluation (placement_lean.c): scores an integer action of 2N memory indices
 * on env p (range-checked), the reward as evaluate() gives it; r's `rectified` points into the
 * env's scratch (valid until its next evaluation). */
int pl_env_eval_action(void *p, const hw_act *act, double *reward, pl_result *r, hw_err *err);

#endif
