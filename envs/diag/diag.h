/* diag.h - diag-v0, the diagnostic env (not a hardware model).
 * Owns: a tiny deterministic bandit-like env used by the protocol tests, the benchmarks and
 * the agent tests. The agent must find a hidden target vector fixed by config.target_seed.
 *
 * Config (all optional):
 *   action_space   "multidiscrete" (default) | "discrete" | "box" | "multibinary"
 *   dims           number of action elements (default 4; "discrete" forces 1)
 *   choices        choices per element (default 8)
 *   episode_length steps per episode (default 16); truncated (a time limit) after that many steps
 *   obs            "box" (default): float32 [dims+2] = last action scaled to [0,1], noise, t/len
 *                  "dict": {"last_action": float32[dims], "noise": float64[1], "t": int64[]}
 *   target_seed    seeds the hidden target (default 0)
 *   step_us        busy-wait this many microseconds per step/evaluate (default 0): a cost knob
 *   action_mask    true: info carries "action_mask" (uint8, sum of choices) for integer spaces
 * Reward: 1 - mean_i |a_i - target_i| / (choices - 1) (Box: actions in [-1,1], scaled), so the
 * optimum is exactly 1.0 at the target. The reset seed drives the observation noise. */
#ifndef HW_DIAG_H
#define HW_DIAG_H

#include "env.h"

extern const hw_env_family hw_family_diag;

#endif
