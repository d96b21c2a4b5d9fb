"""HwEnv: one server session behind the Gymnasium Env API (a gymnasium.Env when importable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, SupportsIndex, Tuple  # noqa: F401

import dataclasses
import warnings
import weakref

import numpy as np

from ._compat import HAVE_GYMNASIUM, gymnasium
from .client import DEFAULT_TIMEOUT, Client
from .errors import BadAction, BadRequest
from .obs import obs_view
from .variants import resolve
from .spaces import _kind, space_from_json
from .wire import encode_array

__all__ = ["HwEnv", "make", "EnvSpec", "encode_action", "check_seed"]

SEED_MAX = 2 ** 64 - 1

_seeding: Any = None
if not TYPE_CHECKING and HAVE_GYMNASIUM:  # (type checkers see the stand-ins below)
    from gymnasium.envs.registration import EnvSpec
    from gymnasium.utils import seeding as _seeding
    _EnvBase = gymnasium.Env
else:

    @dataclasses.dataclass
    class EnvSpec:
        """Stand-in for gymnasium.envs.registration.EnvSpec (the fields hwgym fills)."""
        id: str
        entry_point: object = None
        reward_threshold: object = None
        nondeterministic: bool = False
        max_episode_steps: object = None
        order_enforce: bool = True
        disable_env_checker: bool = False
        kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)
        namespace: object = None
        name: str = ""
        version: object = None
        vector_entry_point: object = None

        def __post_init__(self) -> None:
            base = self.id.split("/")[-1]
            self.namespace = self.id.split("/")[0] if "/" in self.id else None
            name, _, ver = base.rpartition("-v")
            if name and ver.isdigit():
                self.name, self.version = name, int(ver)
            else:
                self.name, self.version = base, None

    from ._fallback import Seeded

    class _EnvBase(Seeded):
        """Minimal stand-in for gymnasium.Env when Gymnasium is not installed."""
        metadata: Dict[str, Any] = {"render_modes": []}
        render_mode: Optional[str] = None
        spec: Any = None

        def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Any:
            if seed is not None:
                self._np_random, self._np_random_seed = _local_np_random(seed)

        def render(self) -> Any:
            return None

        def get_wrapper_attr(self, name: str) -> Any:
            return getattr(self, name)


def warn_render_mode(render_mode: Optional[str]) -> None:
    """A render mode other than None is not an error (SB3's make_vec_env passes "rgb_array" to
    every env id): warn as Gymnasium does for a mode that is not in metadata["render_modes"]."""
    if render_mode is not None:
        warnings.warn("hwgym envs do not render: render_mode = %r is ignored (render() returns None; the "
                      "env's state is in obs and info)" % (render_mode,), UserWarning, stacklevel=3)


NO_RENDER = ("hwgym envs do not render: there is no image or text view of a hardware design; the "
             "env's state is in the observation and info (log them, or use hwgym.TrialLogger)")


def no_render() -> NoReturn:
    raise NotImplementedError(NO_RENDER)


def no_pickle(obj: Any) -> NoReturn:
    """__reduce_ex__ of envs and clients: they hold a live connection and a server session."""
    raise TypeError(
        "cannot pickle %s: it holds a live connection to hwgym-server and a session there, which "
        "cannot move to another process. Pass a factory instead, e.g. "
        "SubprocVecEnv([lambda: hwgym.make(%r, endpoint=EP, ...)]) or functools.partial(hwgym.make, ...); "
        "env.spec.kwargs holds the arguments that remake it. See docs/python.md, \"Pickling and "
        "subprocesses\"." % (type(obj).__name__, getattr(obj, "env_id", "diag-v0")))


class _SessionMethods:
    """What a single and a vector env share: close, render, pickling and snapshots of the session."""

    client: Client
    session: Any
    _finalizer: Any

    def close(self, **kwargs: Any) -> None:
        """Close the session (and the client if this env made it). Safe to call more than once; does
        not wait on a dead server.  An env dropped without close() is closed by a finalizer."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._finalizer()

    def render(self) -> None:
        """hwgym envs do not render: raises NotImplementedError saying so."""
        no_render()

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        no_pickle(self)

    # -- hwgym extras ---------------------------------------------------------------------------
    def snapshot(self) -> int:
        """Snapshot the env state; returns an id for :meth:`restore`."""
        return self.client.snapshot(self.session)

    def restore(self, snapshot: int) -> None:
        self.client.restore(self.session, snapshot)

    def drop_snapshot(self, snapshot: int) -> None:
        self.client.drop_snapshot(self.session, snapshot)


def _local_np_random(seed: Any) -> Any:
    from .spaces import _np_random
    return _np_random(seed)


def _np_random_for(seed: Any) -> Any:
    """(Generator, seed) the way Gymnasium's seeding.np_random makes them."""
    if _seeding is not None:
        return _seeding.np_random(seed)
    return _local_np_random(seed)


def check_seed(seed: Any, what: str = "seed") -> Optional[int]:
    """``seed`` as a Python int, or a BadRequest (a ValueError) saying seeds are 0..2**64-1."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise BadRequest("BAD_REQUEST", "%s must be an integer in 0..2**64-1 or None, got %r (%s)"
                         % (what, seed, type(seed).__name__), "reset")
    v = int(seed)
    if not 0 <= v <= SEED_MAX:
        raise BadRequest("BAD_REQUEST", "%s must be an integer in 0..2**64-1, got %d" % (what, v), "reset")
    return v


def _space_repr(space: Any, kind: Optional[str] = None) -> str:
    k = kind or _kind(space)
    if kind is not None and kind != _kind(space):  # a batch (Gymnasium batches MultiDiscrete as a Box)
        return "a batch of %s of shape %s" % (k, tuple(space.shape))
    if k == "Discrete":
        return "Discrete(%d)" % int(space.n)
    if k == "MultiDiscrete":
        return "MultiDiscrete(%s)" % np.asarray(space.nvec).tolist() if np.size(space.nvec) <= 12 else \
            "MultiDiscrete of shape %s" % (tuple(space.shape),)
    return "%s of shape %s" % (k, tuple(space.shape))


def _bad(space: Any, what: str, msg: str, kind: Optional[str] = None) -> Any:
    return BadAction("BAD_ACTION", "%s for %s: %s" % (what, _space_repr(space, kind), msg), "step")


def encode_action(space: Any, action: Any, what: str = "action", kind: Optional[str] = None) -> Any:
    """An action (int, list, numpy array, or dict for Dict spaces) -> its wire form for ``space``.

    Shapes and kinds are checked here (raising :class:`hwgym.BadAction`, a ValueError, that names
    the expected shape): a Discrete action is one integer (not a bool, not ``[3]``), integer spaces
    take integer arrays of exactly the space's shape, Box takes numbers of its shape.  Ranges are
    checked by the server.  Integer values travel as int64.  ``kind`` overrides the space's own
    kind (a vector env's batched MultiDiscrete space is a Box under Gymnasium)."""
    kind = kind or _kind(space)
    if kind == "Dict":
        if not hasattr(action, "keys") or set(action.keys()) != set(space.spaces):
            raise _bad(space, what, kind=kind, msg="expected a dict with the keys %s, got %r" % (sorted(space.spaces), action))
        return {k: encode_action(space.spaces[k], action[k], "%s[%r]" % (what, k)) for k in action}
    if kind == "Discrete":
        if isinstance(action, (bool, np.bool_)):
            raise _bad(space, what, kind=kind, msg="expected one integer, got the bool %r" % (action,))
        if isinstance(action, (int, np.integer)):
            return int(action)
        a = np.asarray(action) if not isinstance(action, (str, bytes)) else None
        if a is not None and a.shape == () and a.dtype.kind in "iu":
            return int(a)
        desc = "an array of shape %s and dtype %s" % (a.shape, a.dtype) if a is not None else repr(action)
        raise _bad(space, what, kind=kind, msg="expected one integer (shape ()), got %s" % desc)
    try:
        a = np.asarray(action)
    except (ValueError, TypeError) as e:
        raise _bad(space, what, kind=kind, msg="not an array (%s)" % e) from None
    shape = tuple(space.shape)
    if a.shape != shape:
        raise _bad(space, what, kind=kind, msg="expected shape %s, got shape %s" % (shape, a.shape))
    if kind in ("MultiDiscrete", "MultiBinary"):
        if a.dtype.kind == "b" and kind == "MultiBinary":
            return encode_array(a, "int64")
        if a.dtype.kind not in "iu":
            raise _bad(space, what, kind=kind, msg="expected integers, got dtype %s" % a.dtype)
        return encode_array(a, "int64")
    if a.dtype.kind not in "iuf":  # Box
        raise _bad(space, what, kind=kind, msg="expected numbers, got dtype %s" % a.dtype)
    if a.dtype.kind in "iu":
        return encode_array(a, "float64")
    return encode_array(a)


def _finalize_session(client: Client, session: str, own_client: bool) -> None:
    """Close a session whose env was dropped without close() (weakref finalizer; must not hold the env)."""
    try:
        client.close_session_quietly(session)
    finally:
        if own_client:
            client.close()


class HwEnv(_SessionMethods, _EnvBase):
    """A single-env session. Create with :func:`hwgym.make`."""

    metadata: Dict[str, Any] = {"render_modes": []}
    render_mode: Optional[str] = None

    def __init__(self, env_id: str, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, config: Optional[Dict[str, Any]] = None, client: Optional[Client] = None,
                 connect_timeout: Optional[float] = None, normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False) -> None:
        self.env_id = env_id
        self.config = dict(config or {})
        self._closed = True
        self._own_client = client is None
        self.client = client if client is not None else Client(endpoint, timeout=timeout, connect_timeout=connect_timeout)
        self.session: Any = None
        try:
            self.client.ensure_hello()
            rep = self.client.make(env_id, self.config)
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self.session = rep["session"]
        self._finalizer = weakref.finalize(self, _finalize_session, self.client, self.session, self._own_client)
        self._closed = False
        self.kind = rep.get("kind", "single")
        self.action_space = space_from_json(rep["action_space"])
        self.observation_space = space_from_json(rep["observation_space"])
        self._obs_t, self.observation_space = obs_view(self.observation_space, normalize_obs, wire_obs_keys, flatten_obs)
        self.render_mode = None
        kw = dict(self.config, env_id=env_id, endpoint=self.client.endpoint)
        if normalize_obs:
            kw["normalize_obs"] = True
        if wire_obs_keys:
            kw["wire_obs_keys"] = True
        if flatten_obs:
            kw["flatten_obs"] = True
        self.spec = EnvSpec(id=env_id, entry_point="hwgym:make", kwargs=kw)

    def _obs(self, obs: Any) -> Any:
        return obs if self._obs_t is None else self._obs_t(obs)

    # -- Gymnasium API --------------------------------------------------------------------------
    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Any, Dict[str, Any]]:
        """Reset the episode: returns ``(obs, info)``. ``seed`` also seeds ``np_random``."""
        seed = check_seed(seed)
        super().reset(seed=seed)
        rep = self.client.reset(self.session, seed=seed, options=options)
        return self._obs(rep["obs"]), rep.get("info", {})

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, Dict[str, Any]]:
        """Returns ``(obs, reward, terminated, truncated, info)``."""
        rep = self.client.step(self.session, encode_action(self.action_space, action))
        return (self._obs(rep["obs"]), float(rep["reward"]), bool(rep["terminated"]), bool(rep["truncated"]),
                rep.get("info", {}))

    @property
    def closed(self) -> bool:
        return self._closed

    def evaluate(self, point: Any) -> Tuple[float, Dict[str, Any]]:
        """One-shot score of a design point (no episode state): ``(reward, metrics)``."""
        return self.client.evaluate(_point(point), session=self.session)

    def evaluate_batch(self, points: Any) -> Any:
        """``(rewards, metrics, errors)`` for K design points, scored across the server's workers."""
        return self.client.evaluate_batch(_points(points), session=self.session)

    def __repr__(self) -> str:
        return "<HwEnv %s session=%s%s>" % (self.env_id, (self.session or "")[:8], " closed" if self._closed else "")


def _point(p: Any) -> Any:
    if isinstance(p, np.ndarray):
        return p.tolist()
    return p


def _points(points: Any) -> Any:
    if isinstance(points, np.ndarray):
        return encode_array(points, "float64" if points.dtype.kind == "f" else "int64")
    return [_point(p) for p in points]


def make(env_id: str, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, *, config: Optional[Dict[str, Any]] = None, client: Optional[Client] = None, connect_timeout: Optional[float] = None,
         normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False, render_mode: Optional[str] = None, **kwargs: Any) -> HwEnv:
    """Open a session of ``env_id`` on the server at ``endpoint`` (default ``$HWGYM_ENDPOINT``,
    else ``tcp://127.0.0.1:5555``).

    The env config is ``config`` (a dict) updated with the other keyword arguments, e.g.
    ``hwgym.make("diag-v0", dims=3, episode_length=8)``.  ``timeout`` bounds every request (s);
    ``connect_timeout`` (default 2 s) bounds the wait for a server to answer at all.
    ``normalize_obs=True`` maps Box observations through sign(x)*log1p(|x|) (see hwgym.obs).
    Dict observation keys that shadow a torch.nn.Module attribute are renamed ``<key>_obs``
    (mmap-v0's ``buffers`` -> ``buffers_obs``; see hwgym.obs); ``wire_obs_keys=True`` keeps the wire
    names.  ``render_mode``: hwgym envs do not render; a mode is accepted with a warning (as
    Gymnasium does for a mode an env lacks); ``render()`` raises NotImplementedError saying so.
    Pass ``client=`` to share one :class:`hwgym.Client` between envs.
    """
    warn_render_mode(render_mode)
    cfg = dict(config or {})
    cfg.update(kwargs)
    env_id, cfg = resolve(env_id, cfg)
    return HwEnv(env_id, endpoint=endpoint, timeout=timeout, config=cfg, client=client,
                 connect_timeout=connect_timeout, normalize_obs=normalize_obs, wire_obs_keys=wire_obs_keys, flatten_obs=flatten_obs)
