import numpy as np

from .. import spaces


def batch_space(space, n=1):
    if isinstance(space, spaces.Discrete):
        return spaces.MultiDiscrete(np.full((n,), space.n, dtype=space.dtype), dtype=space.dtype,
                                    start=np.full((n,), space.start, dtype=space.dtype))
    if isinstance(space, spaces.MultiDiscrete):  # as Gymnasium 1.x does: an integer Box
        lo = np.tile(space.start, (n,) + (1,) * space.nvec.ndim)
        return spaces.Box(lo, lo + np.tile(space.nvec, (n,) + (1,) * space.nvec.ndim) - 1, dtype=space.dtype)
    if isinstance(space, spaces.Box):
        return spaces.Box(np.tile(space.low, (n,) + (1,) * space.low.ndim), np.tile(space.high, (n,) + (1,) * space.high.ndim),
                          dtype=space.dtype)
    if isinstance(space, spaces.MultiBinary):
        return spaces.MultiBinary((n,) + space.shape)
    if isinstance(space, spaces.Dict):
        return spaces.Dict({k: batch_space(s, n) for k, s in space.spaces.items()})
    raise TypeError(type(space))
