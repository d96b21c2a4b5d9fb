"""Records constructor arguments with Gymnasium 1.x signatures; contains() for the tests."""
import numpy as np


class Space:
    def __init__(self, shape=None, dtype=None, seed=None):
        self._shape = None if shape is None else tuple(shape)
        self.dtype = None if dtype is None else np.dtype(dtype)

    @property
    def shape(self):
        return self._shape

    def seed(self, seed=None):
        return [seed]

    def __contains__(self, x):
        return self.contains(x)


class Discrete(Space):
    def __init__(self, n, seed=None, start=0):
        self.n, self.start = np.int64(n), np.int64(start)
        super().__init__((), np.int64, seed)

    def contains(self, x):
        return self.start <= int(x) < self.start + self.n


class MultiDiscrete(Space):
    def __init__(self, nvec, dtype=np.int64, seed=None, start=None):
        self.nvec = np.array(nvec, dtype=dtype, copy=True)
        self.start = np.zeros_like(self.nvec) if start is None else np.array(start, dtype=dtype)
        super().__init__(self.nvec.shape, dtype, seed)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.start) and np.all(x - self.start < self.nvec))


class Box(Space):
    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        shape = tuple(shape) if shape is not None else np.shape(low)
        self.low = np.broadcast_to(np.asarray(low), shape).astype(dtype)
        self.high = np.broadcast_to(np.asarray(high), shape).astype(dtype)
        super().__init__(shape, dtype, seed)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))


class MultiBinary(Space):
    def __init__(self, n, seed=None):
        self.n = n
        super().__init__((n,) if isinstance(n, int) else tuple(n), np.int8, seed)


class Dict(Space):
    def __init__(self, spaces=None, seed=None, **kw):
        self.spaces = dict(sorted(dict(spaces or {}, **kw).items()))
        super().__init__(None, None, seed)

    def __getitem__(self, k):
        return self.spaces[k]
