"""Client-side observation transforms of make / make_vec / parallel_env.

Key renaming (always on, unless ``wire_obs_keys=True``): a Dict observation key that is also an
attribute of ``torch.nn.ModuleDict`` (``buffers``, ``parameters``, ``modules``, ``training``, ...)
cannot key a ModuleDict, which is how SB3's ``MultiInputPolicy`` and most PyTorch feature
extractors hold one sub-network per key.  Such a key is renamed ``<key>_obs`` in the Python view
(mmap-v0's ``buffers`` becomes ``buffers_obs``); the wire name is unchanged.  ``RESERVED_KEYS`` is
the list; ``python_key`` / ``wire_key`` map between the two names.

``normalize_obs=True``:

The envs report raw units (maestro-v0: cycles, mW, nJ, um^2 up to ~1e8).  ``LogScale`` maps every
element of a Box observation to ``sign(x) * log1p(|x|)`` (float32): stateless, so identical in
training and evaluation, monotone, and it brings 1e8 down to ~18.  Integer and float Boxes both
become float32 Boxes with the transformed bounds; Dict observations are transformed per key;
other spaces (Discrete, MultiDiscrete, MultiBinary) pass through unchanged.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from .spaces import Box, Dict, _kind

__all__ = ["LogScale", "log_scale", "RenameKeys", "RESERVED_KEYS", "python_key", "wire_key", "obs_view"]

#: Attributes of torch.nn.ModuleDict (torch 2.x) that an observation key must not shadow.
RESERVED_KEYS = frozenset("""
T_destination add_module apply bfloat16 buffers call_super_init children clear compile cpu cuda
double dump_patches eval extra_repr float forward get_buffer get_extra_state get_parameter
get_submodule half ipu items keys load_state_dict modules mtia named_buffers named_children
named_modules named_parameters parameters pop register_backward_hook register_buffer
register_forward_hook register_forward_pre_hook register_full_backward_hook
register_full_backward_pre_hook register_load_state_dict_post_hook register_load_state_dict_pre_hook
register_module register_parameter register_state_dict_post_hook register_state_dict_pre_hook
requires_grad_ set_extra_state set_submodule share_memory smart_apply state_dict to to_empty train
training type update values xpu zero_grad
""".split())


def python_key(key: str) -> str:
    """The Python view's name of a wire observation key (``buffers`` -> ``buffers_obs``)."""
    return key + "_obs" if key in RESERVED_KEYS or key.startswith("_") else key


def wire_key(key: str) -> str:
    """The wire name of a Python view key (inverse of :func:`python_key`)."""
    if key.endswith("_obs") and python_key(key[:-4]) == key:
        return key[:-4]
    return key


class RenameKeys:
    """Renames the reserved keys of a Dict observation space (and of its observations)."""

    def __init__(self, space: Any) -> None:
        self.source = space
        self.names = {k: python_key(k) for k in space.spaces}
        self.space = Dict({self.names[k]: sub for k, sub in space.spaces.items()})

    def __call__(self, obs: Any) -> Any:
        return {self.names.get(k, k): v for k, v in obs.items()}


def _bounds(s: Any) -> Any:
    """(low, high) of a non-Dict space's elements, flattened, as float64."""
    k = _kind(s)
    if k == "Box":
        return np.ravel(s.low).astype(np.float64), np.ravel(s.high).astype(np.float64)
    if k == "Discrete":
        return np.array([float(s.start)]), np.array([float(s.start + s.n - 1)])
    if k == "MultiDiscrete":
        st = np.ravel(getattr(s, "start", np.zeros_like(s.nvec)))
        return st.astype(np.float64), (st + np.ravel(s.nvec) - 1).astype(np.float64)
    n = int(np.prod(s.shape))
    return np.zeros(n), np.ones(n)


class Flatten:
    """A Dict observation as one flat Box (its keys' elements concatenated in sorted key order):
    float64 when an element needs it (a float64 or 64-bit integer Box), else float32."""

    def __init__(self, space: Any) -> None:
        self.source = space
        self.keys = list(space.spaces)
        los, his = zip(*(_bounds(space.spaces[k]) for k in self.keys))
        wide = any(np.dtype(getattr(space.spaces[k], "dtype", None) or np.int64).itemsize == 8 for k in self.keys)
        self.dtype = np.dtype(np.float64 if wide else np.float32)
        self.sizes = [lo.size for lo in los]
        self.space = Box(np.concatenate(los), np.concatenate(his), dtype=self.dtype)

    def __call__(self, obs: Any) -> Any:
        parts = [np.asarray(obs[k]) for k in self.keys]
        k0 = len(tuple(self.source.spaces[self.keys[0]].shape or ()))
        lead = parts[0].shape[:parts[0].ndim - k0]  # () for one observation, (N,) for a vector env's batch
        return np.concatenate([p.reshape(lead + (-1,)) for p in parts], axis=-1).astype(self.dtype)


class _Chain:
    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second
        self.space = second.space

    def __call__(self, obs: Any) -> Any:
        return self.second(self.first(obs))


def obs_view(space: Any, normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False) -> Any:
    """``(transform or None, space)`` of the Python view of an observation space: reserved Dict keys
    renamed (unless ``wire_obs_keys``), then LogScale when ``normalize_obs``, then a Dict flattened
    into one Box when ``flatten_obs``."""
    t: Any = None
    steps: List[Callable[[Any], Any]] = []
    if not wire_obs_keys and _kind(space) == "Dict" and any(python_key(k) != k for k in space.spaces):
        steps.append(RenameKeys)
    if normalize_obs:
        steps.append(LogScale)
    if flatten_obs and _kind(space) == "Dict":
        steps.append(Flatten)
    for make in steps:
        nxt = make(space)
        t = nxt if t is None else _Chain(t, nxt)
        space = nxt.space
    return t, space


def log_scale(x: Any) -> Any:
    """sign(x) * log1p(|x|) as float32 (±inf stays ±inf)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return (np.sign(x) * np.log1p(np.abs(x))).astype(np.float32)


class LogScale:
    """The transform of one observation space: ``t.space`` is the new space, ``t(obs)`` maps an
    observation (or a batch of them: the function is elementwise)."""

    def __init__(self, space: Any) -> None:
        self.source = space
        self.space = self._space(space)

    def _space(self, s: Any) -> Any:
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

    def __call__(self, obs: Any, space: Any = None) -> Any:
        s = self.source if space is None else space
        k = _kind(s)
        if k == "Dict":
            return {key: self(obs[key], s.spaces[key]) for key in obs}
        if k != "Box":
            return obs
        return log_scale(obs)
