"""Client-side observation transforms (``normalize_obs=True`` of make / make_vec / parallel_env).

The envs report raw units (maestro-v0: cycles, mW, nJ, um^2 up to ~1e8).  ``LogScale`` maps every
element of a Box observation to ``sign(x) * log1p(|x|)`` (float32): stateless, so identical in
training and evaluation, monotone, and it brings 1e8 down to ~18.  Integer and float Boxes both
become float32 Boxes with the transformed bounds; Dict observations are transformed per key;
other spaces (Discrete, MultiDiscrete, MultiBinary) pass through unchanged.
"""

import numpy as np

from .spaces import Box, Dict, _kind

__all__ = ["LogScale", "log_scale"]


def log_scale(x):
    """sign(x) * log1p(|x|) as float32 (±inf stays ±inf)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return (np.sign(x) * np.log1p(np.abs(x))).astype(np.float32)


class LogScale:
    """The transform of one observation space: ``t.space`` is the new space, ``t(obs)`` maps an
    observation (or a batch of them: the function is elementwise)."""

    def __init__(self, space):
        self.source = space
        self.space = self._space(space)

    def _space(self, s):
        k = _kind(s)
        if k == "Dict":
            return Dict({key: self._space(sub) for key, sub in s.spaces.items()})
        if k != "Box":
            return s
        lo, hi = log_scale(s.low), log_scale(s.high)
        if s.dtype.kind == "f":  # unbounded float bounds stay unbounded
            lo = np.where(np.isfinite(s.low), lo, -np.inf).astype(np.float32)
            hi = np.where(np.isfinite(s.high), hi, np.inf).astype(np.float32)
        out = Box(lo, hi, shape=s.shape, dtype=np.float32)
        for attr in ("names", "labels"):
            if getattr(s, attr, None) is not None:
                setattr(out, attr, getattr(s, attr))
        return out

    def __call__(self, obs, space=None):
        s = self.source if space is None else space
        k = _kind(s)
        if k == "Dict":
            return {key: self(obs[key], s.spaces[key]) for key in obs}
        if k != "Box":
            return obs
        return log_scale(obs)
