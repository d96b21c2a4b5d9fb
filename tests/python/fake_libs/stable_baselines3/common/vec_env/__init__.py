"""Fake of SB3's DummyVecEnv: done = terminated or truncated, terminal_observation, reset on done."""
import numpy as np


class DummyVecEnv:
    def __init__(self, env_fns):
        self.envs = [fn() for fn in env_fns]
        self.num_envs = len(self.envs)
        self.action_space = self.envs[0].action_space
        self.observation_space = self.envs[0].observation_space
        self._seeds = [None] * self.num_envs

    def seed(self, seed=None):
        self._seeds = [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self):
        obs = [e.reset(seed=s)[0] for e, s in zip(self.envs, self._seeds)]
        self._seeds = [None] * self.num_envs
        return obs

    def step(self, actions):
        out_obs, rews, dones, infos = [], [], [], []
        for e, a in zip(self.envs, actions):
            obs, r, term, trunc, info = e.step(a)
            done = term or trunc
            info = dict(info, **{"TimeLimit.truncated": trunc and not term})
            if done:
                info["terminal_observation"] = obs
                obs, _ = e.reset()
            out_obs.append(obs), rews.append(r), dones.append(done), infos.append(info)
        return out_obs, np.array(rews), np.array(dones), infos

    def close(self):
        for e in self.envs:
            e.close()
