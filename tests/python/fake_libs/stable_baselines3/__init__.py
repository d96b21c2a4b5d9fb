"""Fake Stable-Baselines3 (tests/python/fake_libs/README.md)."""
import numpy as np

FAKE = True


def _random_action(space, rng):
    name = type(space).__name__
    if name == "Discrete":
        return int(space.start + rng.integers(int(space.n)))
    if name == "MultiDiscrete":
        return rng.integers(np.asarray(space.nvec)).astype(np.int64) + np.asarray(space.start)
    if name == "MultiBinary":
        return rng.integers(0, 2, size=space.shape).astype(np.int8)
    lo, hi = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    return rng.uniform(np.maximum(lo, -1), np.minimum(hi, 1)).astype(space.dtype)


class PPO:
    """PPO(policy, env, **hyperparameters).learn(total_timesteps): steps the VecEnv at random."""

    def __init__(self, policy, env, seed=None, **kwargs):
        self.policy, self.env, self.kwargs = policy, env, kwargs
        self.rng = np.random.default_rng(seed)
        self.num_timesteps = 0

    def learn(self, total_timesteps):
        self.env.reset()
        while self.num_timesteps < total_timesteps:
            acts = [_random_action(self.env.action_space, self.rng) for _ in range(self.env.num_envs)]
            self.env.step(acts)
            self.num_timesteps += self.env.num_envs
        return self
