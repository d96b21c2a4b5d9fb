"""Fake of stable_baselines3.common.env_util.make_vec_env: the env-id path of SB3 2.x."""
import gymnasium as gym

from .vec_env import DummyVecEnv


def make_vec_env(env_id, n_envs=1, seed=None, start_index=0, env_kwargs=None, vec_env_cls=None, vec_env_kwargs=None, **_):
    env_kwargs = env_kwargs or {}

    def make_env(rank):
        def _init():
            if isinstance(env_id, str):
                # as SB3: if the render mode was not specified, rgb_array by default; retry only on TypeError
                kwargs = {"render_mode": "rgb_array"}
                kwargs.update(env_kwargs)
                try:
                    env = gym.make(env_id, **kwargs)
                except TypeError:
                    env = gym.make(env_id, **env_kwargs)
            else:
                env = env_id(**env_kwargs)
            if seed is not None:
                env.action_space.seed(seed + rank)
            return env
        return _init

    cls = vec_env_cls or DummyVecEnv
    venv = cls([make_env(i + start_index) for i in range(n_envs)], **(vec_env_kwargs or {}))
    venv.seed(seed)
    return venv
