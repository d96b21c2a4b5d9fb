"""Spaces: Gymnasium's when it can be imported, otherwise equivalent local classes.

The local classes (``LocalDiscrete``, ... also importable as ``hwgym.spaces.local.*``) follow
Gymnasium 1.x: ``sample(mask=...)``, ``contains``/``in``, ``seed``, ``shape``, ``dtype``,
``np_random`` and ``==``.  ``Discrete``, ``MultiDiscrete``, ``Box``, ``MultiBinary`` and ``Dict`` in
this module are Gymnasium's classes when Gymnasium is importable, else the local ones.

Spaces decoded from the server carry the protocol's metadata as attributes:
``names`` (list, one entry per element, ``None`` where unnamed; ``name`` too for Discrete) and
``labels`` (one list of categorical labels per element or ``None``; for Discrete the flat list).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple  # noqa: F401

import types

import numpy as np

from ._compat import HAVE_GYMNASIUM, gymnasium
from .wire import INF_WIRE

__all__ = ["Space", "Discrete", "MultiDiscrete", "Box", "MultiBinary", "Dict", "HAVE_GYMNASIUM",
           "space_from_json", "space_to_json", "batch_space", "split_mask", "local"]


def _np_random(seed: Any = None) -> Tuple[np.random.Generator, int]:
    if seed is not None and not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError("seed must be a non-negative int or None, got %r" % (seed,))
    if seed is None:
        entropy: Any = np.random.SeedSequence().entropy
        seed = int(entropy)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed)))), int(seed)


class Space:
    """Base of the local spaces (mirrors gymnasium.spaces.Space)."""

    def __init__(self, shape: Any = None, dtype: Any = None, seed: Any = None) -> None:
        self._shape = None if shape is None else tuple(int(d) for d in shape)
        self.dtype: Any = None if dtype is None else np.dtype(dtype)
        self._np_random: Optional[np.random.Generator] = None
        if seed is not None:
            self.seed(seed)

    @property
    def shape(self) -> Any:
        return self._shape

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, _ = _np_random(None)
        return self._np_random

    @property
    def is_np_flattenable(self) -> bool:
        return True

    def seed(self, seed: Any = None) -> Any:
        self._np_random, used = _np_random(seed)
        return used

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        raise NotImplementedError

    def contains(self, x: Any) -> bool:
        raise NotImplementedError

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    def to_jsonable(self, sample_n: Any) -> Any:
        return [np.asarray(s).tolist() for s in sample_n]

    def from_jsonable(self, sample_n: Any) -> Any:
        return [np.asarray(s, dtype=self.dtype) for s in sample_n]


def _check_mask(mask: Any, shape: Any, what: str) -> Any:
    m = np.asarray(mask)
    if m.shape != tuple(shape):
        raise ValueError("%s mask has shape %s, expected %s" % (what, m.shape, tuple(shape)))
    if m.dtype.kind not in "iub":
        raise ValueError("%s mask must be an integer array (np.int8), got %s" % (what, m.dtype))
    return m


class Discrete(Space):
    """{start, ..., start + n - 1}."""

    def __init__(self, n: int, seed: Any = None, start: Any = 0) -> None:
        n = int(n)
        if n <= 0:
            raise ValueError("Discrete n must be positive, got %d" % n)
        self.n = np.int64(n)
        self.start = np.int64(start)
        super().__init__((), np.int64, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None and probability is not None:
            raise ValueError("give either mask or probability, not both")
        if mask is not None:
            m = _check_mask(mask, (int(self.n),), "Discrete")
            if not np.all((m == 0) | (m == 1)):
                raise ValueError("Discrete mask values must be 0 or 1")
            valid = np.flatnonzero(m)
            if valid.size == 0:
                return self.start
            return self.start + np.int64(self.np_random.choice(valid))
        if probability is not None:
            p = np.asarray(probability, dtype=np.float64)
            if p.shape != (int(self.n),) or not np.isclose(p.sum(), 1.0) or np.any(p < 0):
                raise ValueError("probability must be %d non-negative numbers summing to 1" % self.n)
            return self.start + np.int64(self.np_random.choice(int(self.n), p=p))
        return self.start + np.int64(self.np_random.integers(int(self.n)))

    def contains(self, x: Any) -> bool:
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            v = int(x)
        elif isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
            v = int(x)
        else:
            return False
        return bool(self.start <= v < self.start + self.n)

    def __repr__(self) -> str:
        return "Discrete(%d)" % self.n if self.start == 0 else "Discrete(%d, start=%d)" % (self.n, self.start)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Discrete) and self.n == other.n and self.start == other.start

    __hash__ = None  # type: ignore[assignment]


class MultiDiscrete(Space):
    """Integer vector (or array) x with start[i] <= x[i] < start[i] + nvec[i]."""

    def __init__(self, nvec: Any, dtype: Any = np.int64, seed: Any = None, start: Any = None) -> None:
        self.nvec = np.array(nvec, dtype=dtype, copy=True)
        self.start = np.zeros_like(self.nvec) if start is None else np.array(start, dtype=dtype, copy=True)
        if self.start.shape != self.nvec.shape:
            raise ValueError("start shape %s differs from nvec shape %s" % (self.start.shape, self.nvec.shape))
        if np.any(self.nvec <= 0):
            raise ValueError("MultiDiscrete nvec must be positive")
        super().__init__(self.nvec.shape, dtype, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None:
            return self._masked(mask, self.nvec, self.start)
        if probability is not None:
            raise NotImplementedError("MultiDiscrete.sample(probability=...) is not supported by the local spaces")
        return (self.np_random.random(self.nvec.shape) * self.nvec).astype(self.dtype) + self.start

    def _masked(self, m: Any, nvec: Any, start: Any) -> Any:
        if isinstance(nvec, np.ndarray):
            if not isinstance(m, (tuple, list)) or len(m) != len(nvec):
                raise ValueError("MultiDiscrete mask must be a tuple of %d masks, one per element" % len(nvec))
            return np.array([self._masked(s, n, st) for s, n, st in zip(m, nvec, start)], dtype=self.dtype)
        mm = _check_mask(m, (int(nvec),), "MultiDiscrete element")
        if not np.all((mm == 0) | (mm == 1)):
            raise ValueError("MultiDiscrete mask values must be 0 or 1")
        valid = np.flatnonzero(mm)
        return start if valid.size == 0 else start + self.np_random.choice(valid)

    def contains(self, x: Any) -> bool:
        if isinstance(x, (list, tuple)):
            x = np.array(x)
        return bool(isinstance(x, np.ndarray) and x.shape == self.shape and x.dtype != object and
                    x.dtype.kind in "iub" and np.all(self.start <= x) and np.all(x - self.start < self.nvec))

    def __getitem__(self, i: int) -> Any:
        nv, st = self.nvec[i], self.start[i]
        return Discrete(int(nv), start=int(st)) if nv.ndim == 0 else MultiDiscrete(nv, self.dtype, start=st)

    def __len__(self) -> int:
        return len(self.nvec)

    def __repr__(self) -> str:
        return "MultiDiscrete(%s)" % (self.nvec.tolist(),)

    def __eq__(self, other: object) -> bool:
        return bool(isinstance(other, MultiDiscrete) and self.dtype == other.dtype and
                    self.shape == other.shape and np.all(self.nvec == other.nvec) and np.all(self.start == other.start))

    __hash__ = None  # type: ignore[assignment]


class Box(Space):
    """A (possibly unbounded) box in R^shape (or Z^shape for integer dtypes)."""

    def __init__(self, low: Any, high: Any, shape: Any = None, dtype: Any = np.float32, seed: Any = None) -> None:
        dtype = np.dtype(dtype)
        if shape is None:
            shape = np.shape(low) if np.ndim(low) else np.shape(high)
        shape = tuple(int(d) for d in shape)
        if dtype.kind in "iu":
            lo, hi = np.asarray(low), np.asarray(high)
            for v in (lo, hi):
                if v.dtype.kind == "f" and not np.all(np.isfinite(v)):
                    raise ValueError("integer Box bounds must be finite")
            lo = np.broadcast_to(lo.astype(dtype), shape).copy()
            hi = np.broadcast_to(hi.astype(dtype), shape).copy()
            if np.any(lo > hi):
                raise ValueError("Box low must be <= high")
            self.low, self.high = lo, hi
        else:
            lo = np.broadcast_to(np.asarray(low, dtype=np.float64), shape)
            hi = np.broadcast_to(np.asarray(high, dtype=np.float64), shape)
            if np.any(lo > hi):
                raise ValueError("Box low must be <= high")
            with np.errstate(over="ignore"):
                self.low, self.high = lo.astype(dtype), hi.astype(dtype)
        self.low_repr, self.high_repr = str(self.low.min()) if self.low.size else "", str(self.high.max()) if self.high.size else ""
        self.bounded_below = np.isfinite(lo) if dtype.kind == "f" else np.ones(shape, bool)
        self.bounded_above = np.isfinite(hi) if dtype.kind == "f" else np.ones(shape, bool)
        super().__init__(shape, dtype, seed)

    def is_bounded(self, manner: str = "both") -> bool:
        below, above = bool(np.all(self.bounded_below)), bool(np.all(self.bounded_above))
        return {"both": below and above, "below": below, "above": above}[manner]

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None or probability is not None:
            raise ValueError("Box.sample cannot be given a mask or probability")
        hi = self.high.astype(np.float64) + (1 if self.dtype.kind in "iu" else 0)
        if self.dtype.kind in "iu":  # sample within what float64 and the dtype both represent
            lim = float(2 ** 53)
            hi, lo = np.minimum(hi, lim), np.maximum(self.low.astype(np.float64), -lim)
        else:
            lo = self.low.astype(np.float64)
        out = np.empty(self.shape, dtype=np.float64)
        ub, bb = ~self.bounded_below & ~self.bounded_above, self.bounded_below & self.bounded_above
        lb, up = self.bounded_below & ~self.bounded_above, ~self.bounded_below & self.bounded_above
        rng = self.np_random
        out[ub] = rng.normal(size=ub[ub].shape)
        out[lb] = rng.exponential(size=lb[lb].shape) + lo[lb]
        out[up] = hi[up] - rng.exponential(size=up[up].shape)
        out[bb] = rng.uniform(low=lo[bb], high=hi[bb], size=bb[bb].shape)
        if self.dtype.kind in "iu":
            out = np.floor(out)
            out = np.clip(out, lo, hi - 1)
        return out.astype(self.dtype)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        return bool(np.can_cast(x.dtype, self.dtype) and x.shape == self.shape and
                    np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self) -> str:
        return "Box(%s, %s, %s, %s)" % (self.low_repr, self.high_repr, self.shape, self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype and \
            np.allclose(self.low, other.low) and np.allclose(self.high, other.high)

    __hash__ = None  # type: ignore[assignment]


class MultiBinary(Space):
    """{0, 1}^n (n an int or a shape)."""

    def __init__(self, n: Any, seed: Any = None) -> None:
        self.n: Any
        if isinstance(n, (int, np.integer)):
            self.n = int(n)
            shape = (self.n,)
        else:
            self.n = tuple(int(d) for d in n)
            shape = self.n
        if any(d <= 0 for d in shape):
            raise ValueError("MultiBinary n must be positive")
        super().__init__(shape, np.int8, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None:
            m = _check_mask(mask, self.shape, "MultiBinary")
            if not np.all((m == 0) | (m == 1) | (m == 2)):
                raise ValueError("MultiBinary mask values must be 0, 1 or 2 (2: random)")
            r = self.np_random.integers(0, 2, size=self.shape, dtype=self.dtype)
            return np.where(m == 2, r, m.astype(self.dtype)).astype(self.dtype)
        if probability is not None:
            p = np.asarray(probability, dtype=np.float64)
            return (self.np_random.random(self.shape) < p).astype(self.dtype)
        return self.np_random.integers(0, 2, size=self.shape, dtype=self.dtype)

    def contains(self, x: Any) -> bool:
        if isinstance(x, (list, tuple)):
            x = np.array(x)
        return bool(isinstance(x, np.ndarray) and self.shape == x.shape and x.dtype != object and
                    np.all((x == 0) | (x == 1)))

    def __repr__(self) -> str:
        return "MultiBinary(%s)" % (self.n,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultiBinary) and self.n == other.n

    __hash__ = None  # type: ignore[assignment]


class Dict(Space):
    """A dictionary of spaces (keys sorted, like Gymnasium does for plain dicts)."""

    def __init__(self, spaces: Any = None, seed: Any = None, **kwargs: Any) -> None:
        spaces = dict(spaces or {}, **kwargs)
        self.spaces = dict(sorted(spaces.items()))
        for k, s in self.spaces.items():
            if not isinstance(s, Space):
                raise TypeError("Dict value %r is not a space" % (k,))
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    def seed(self, seed: Any = None) -> Any:
        if seed is None:
            return {k: s.seed(None) for k, s in self.spaces.items()}
        if isinstance(seed, dict):
            return {k: self.spaces[k].seed(v) for k, v in seed.items()}
        gen, _ = _np_random(seed)
        self._np_random = gen
        subs = gen.integers(np.iinfo(np.int32).max, size=len(self.spaces))
        return {k: s.seed(int(x)) for (k, s), x in zip(self.spaces.items(), subs)}

    @property
    def is_np_flattenable(self) -> bool:
        return all(s.is_np_flattenable for s in self.spaces.values())

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is not None:
            if not isinstance(mask, dict) or set(mask) != set(self.spaces):
                raise ValueError("Dict mask must be a dict with the keys %s" % list(self.spaces))
            return {k: s.sample(mask=mask[k]) for k, s in self.spaces.items()}
        return {k: s.sample() for k, s in self.spaces.items()}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and set(x) == set(self.spaces) and \
            all(self.spaces[k].contains(x[k]) for k in self.spaces)

    def __getitem__(self, k: Any) -> Any:
        return self.spaces[k]

    def __iter__(self) -> Any:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def keys(self) -> Any:
        return self.spaces.keys()

    def values(self) -> Any:
        return self.spaces.values()

    def items(self) -> Any:
        return self.spaces.items()

    def __repr__(self) -> str:
        return "Dict(%s)" % ", ".join("%r: %r" % kv for kv in self.spaces.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dict) and self.spaces == other.spaces

    __hash__ = None  # type: ignore[assignment]


local = types.SimpleNamespace(Space=Space, Discrete=Discrete, MultiDiscrete=MultiDiscrete, Box=Box,
                              MultiBinary=MultiBinary, Dict=Dict)
LocalSpace, LocalDiscrete, LocalMultiDiscrete, LocalBox, LocalMultiBinary, LocalDict = \
    Space, Discrete, MultiDiscrete, Box, MultiBinary, Dict

if not TYPE_CHECKING and HAVE_GYMNASIUM:  # (type checkers see the local classes)
    _g = gymnasium.spaces
    Space, Discrete, MultiDiscrete, Box, MultiBinary, Dict = \
        _g.Space, _g.Discrete, _g.MultiDiscrete, _g.Box, _g.MultiBinary, _g.Dict


def _kind(space: Any) -> str:
    """Protocol type name of a space (local or Gymnasium), by class name."""
    for cls in type(space).__mro__:
        if cls.__name__ in ("Discrete", "MultiDiscrete", "Box", "MultiBinary", "Dict"):
            return cls.__name__
    raise TypeError("space type %s has no protocol encoding" % type(space).__name__)


def _bound(v: Any, dtype: Any) -> Any:
    """A wire bound (±1.7976931348623157e308 = ±inf) as a value valid for dtype."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if v >= info.max:
            return int(info.max)
        if v <= info.min:
            return int(info.min)
        return int(v)
    if v >= INF_WIRE:
        return np.inf
    if v <= -INF_WIRE:
        return -np.inf
    fmax = float(np.finfo(dtype).max)
    return np.inf if v > fmax else (-np.inf if v < -fmax else v)


def space_from_json(j: Any) -> Any:
    """A protocol space description (a decoded map, see PROTOCOL.md) -> a space object."""
    if not isinstance(j, dict) or "type" not in j:
        raise ValueError("space: expected a map with a 'type', got %r" % (j,))
    t = j["type"]
    s: Any
    if t == "Discrete":
        s = Discrete(int(j["n"]), start=int(j.get("start", 0)))
        s.name = j.get("name")
        s.names = [s.name]
        s.labels = j.get("labels")
        return s
    if t == "MultiDiscrete":
        s = MultiDiscrete(np.asarray(j["nvec"], dtype=np.int64))
    elif t == "Box":
        dt = np.dtype(j.get("dtype", "float32"))
        shape = tuple(int(d) for d in j["shape"])
        # bounds built in the declared dtype (float64 bounds for a float32 Box make Gymnasium warn
        # "precision lowered"); _bound maps values beyond the dtype's range to ±inf / its limits
        lo = np.array([_bound(v, dt) for v in j["low"]], dtype=dt).reshape(shape)
        hi = np.array([_bound(v, dt) for v in j["high"]], dtype=dt).reshape(shape)
        s = Box(lo, hi, shape=shape, dtype=dt)
    elif t == "MultiBinary":
        s = MultiBinary(int(j["n"]))
    elif t == "Dict":
        return Dict({k: space_from_json(v) for k, v in sorted(j["spaces"].items())})
    else:
        raise ValueError("space.type: unknown space type %r" % (t,))
    s.names = j.get("names")
    s.labels = j.get("labels")
    return s


def _wire_bound(v: Any) -> Any:
    v = float(v)
    if v == np.inf:
        return INF_WIRE
    if v == -np.inf:
        return -INF_WIRE
    return int(v) if v == int(v) and abs(v) < 9e15 else v


def space_to_json(space: Any) -> Any:
    """A space object (local or Gymnasium) -> its protocol description (inverse of space_from_json)."""
    t = _kind(space)
    if t == "Dict":
        return {"type": "Dict", "spaces": {k: space_to_json(s) for k, s in sorted(space.spaces.items())}}
    if t == "Discrete":
        o = {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
        if getattr(space, "name", None) is not None:
            o["name"] = space.name
        if getattr(space, "labels", None) is not None:
            o["labels"] = list(space.labels)
        return o
    if t == "MultiDiscrete":
        if np.any(np.asarray(space.start) != 0) or np.ndim(space.nvec) != 1:
            raise ValueError("the protocol's MultiDiscrete is 1-D and starts at 0")
        o = {"type": "MultiDiscrete", "nvec": [int(v) for v in space.nvec]}
    elif t == "Box":
        o = {"type": "Box", "shape": list(space.shape), "dtype": np.dtype(space.dtype).name,
             "low": [_wire_bound(v) for v in np.ravel(space.low)],
             "high": [_wire_bound(v) for v in np.ravel(space.high)]}
    else:
        if np.ndim(space.n) != 0:
            raise ValueError("the protocol's MultiBinary is 1-D")
        o = {"type": "MultiBinary", "n": int(space.n)}
    if getattr(space, "names", None) is not None:
        o["names"] = list(space.names)
    if getattr(space, "labels", None) is not None:
        o["labels"] = list(space.labels)
    return o


def _local_batch(space: Any, n: int) -> Any:
    t = _kind(space)
    if t == "Discrete":
        return MultiDiscrete(np.full((n,), space.n, dtype=space.dtype), dtype=space.dtype,
                             start=np.full((n,), space.start, dtype=space.dtype))
    if t == "MultiDiscrete":
        reps = (n,) + (1,) * space.nvec.ndim
        return MultiDiscrete(np.tile(space.nvec, reps), dtype=space.dtype, start=np.tile(space.start, reps))
    if t == "Box":
        reps = (n,) + (1,) * space.low.ndim
        return Box(np.tile(space.low, reps), np.tile(space.high, reps), dtype=space.dtype)
    if t == "MultiBinary":
        return MultiBinary((n,) + tuple(space.shape))
    return Dict({k: _local_batch(s, n) for k, s in space.spaces.items()})


def batch_space(space: Any, n: int) -> Any:
    """The space of n stacked samples of ``space`` (gymnasium.vector.utils.batch_space semantics)."""
    if HAVE_GYMNASIUM and isinstance(space, gymnasium.spaces.Space):
        from gymnasium.vector.utils import batch_space as gbatch
        return gbatch(space, n)
    return _local_batch(space, n)


def split_mask(space: Any, flat: Any) -> Any:
    """A flat 0/1 mask over all choices (as diag-v0's ``info["action_mask"]``: element 0's choices,
    then element 1's, ...) -> the mask ``space.sample(mask=...)`` takes."""
    flat = np.asarray(flat, dtype=np.int8).ravel()
    t = _kind(space)
    if t == "Discrete":
        return flat[: int(space.n)].copy()
    if t == "MultiDiscrete":
        out, off = [], 0
        for nv in np.ravel(space.nvec):
            out.append(flat[off: off + int(nv)].copy())
            off += int(nv)
        if off != flat.size:
            raise ValueError("mask has %d entries, the space has %d choices" % (flat.size, off))
        return tuple(out)
    if t == "MultiBinary":
        return flat.reshape(space.shape)
    raise ValueError("masks apply to Discrete, MultiDiscrete and MultiBinary spaces")
