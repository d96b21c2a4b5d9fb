"""HwEnv: one server session behind the Gymnasium Env API (a gymnasium.Env when importable)."""

import dataclasses

import numpy as np

from ._compat import HAVE_GYMNASIUM, gymnasium
from .client import DEFAULT_ENDPOINT, DEFAULT_TIMEOUT, Client, _close_timeout
from .errors import HwgymError
from .spaces import _kind, space_from_json
from .wire import encode_array

__all__ = ["HwEnv", "make", "EnvSpec", "encode_action", "register_envs"]

if HAVE_GYMNASIUM:
    from gymnasium.envs.registration import EnvSpec
    from gymnasium.utils import seeding as _seeding
    _EnvBase = gymnasium.Env
else:
    _seeding = None

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
        kwargs: dict = dataclasses.field(default_factory=dict)
        namespace: object = None
        name: str = ""
        version: object = None
        vector_entry_point: object = None

        def __post_init__(self):
            base = self.id.split("/")[-1]
            self.namespace = self.id.split("/")[0] if "/" in self.id else None
            name, _, ver = base.rpartition("-v")
            if name and ver.isdigit():
                self.name, self.version = name, int(ver)
            else:
                self.name, self.version = base, None

    class _EnvBase:
        """Minimal stand-in for gymnasium.Env when Gymnasium is not installed."""
        metadata = {"render_modes": []}
        render_mode = None
        spec = None
        _np_random = None
        _np_random_seed = None

        def reset(self, *, seed=None, options=None):
            if seed is not None:
                self._np_random, self._np_random_seed = _local_np_random(seed)

        @property
        def np_random(self):
            if self._np_random is None:
                self._np_random, self._np_random_seed = _local_np_random(None)
            return self._np_random

        @np_random.setter
        def np_random(self, value):
            self._np_random, self._np_random_seed = value, -1

        @property
        def np_random_seed(self):
            if self._np_random is None:
                self._np_random, self._np_random_seed = _local_np_random(None)
            return self._np_random_seed

        @property
        def unwrapped(self):
            return self

        def render(self):
            return None

        def get_wrapper_attr(self, name):
            return getattr(self, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()
            return False


def _local_np_random(seed):
    from .spaces import _np_random
    return _np_random(seed)


def _np_random_for(seed):
    """(Generator, seed) the way Gymnasium's seeding.np_random makes them."""
    if _seeding is not None:
        return _seeding.np_random(seed)
    return _local_np_random(seed)


def encode_action(space, action):
    """An action (int, list, numpy array, or dict for Dict spaces) -> its wire form for ``space``.
    Integral values for integer spaces travel as int64; anything else is sent as given so that the
    server can name what is wrong with it."""
    kind = _kind(space)
    if kind == "Dict":
        return {k: encode_action(space.spaces[k], action[k]) for k in action}
    if kind == "Discrete" and np.ndim(action) == 0 and isinstance(action, (int, np.integer)) \
            and not isinstance(action, (bool, np.bool_)):
        return int(action)
    a = np.asarray(action)
    if kind in ("Discrete", "MultiDiscrete", "MultiBinary") and a.dtype.kind in "iub":
        return encode_array(a, "int64")
    if kind == "Box" and a.dtype.kind in "iub":
        return encode_array(a, "float64")
    return encode_array(a)


class HwEnv(_EnvBase):
    """A single-env session. Create with :func:`hwgym.make`."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, env_id, endpoint=DEFAULT_ENDPOINT, timeout=DEFAULT_TIMEOUT, config=None, client=None):
        self.env_id = env_id
        self.config = dict(config or {})
        self._own_client = client is None
        self.client = client if client is not None else Client(endpoint, timeout=timeout)
        self.session = None
        try:
            self.client.ensure_hello()
            rep = self.client.make(env_id, self.config)
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self.session = rep["session"]
        self.kind = rep.get("kind", "single")
        self.action_space = space_from_json(rep["action_space"])
        self.observation_space = space_from_json(rep["observation_space"])
        self.spec = EnvSpec(id=env_id, entry_point="hwgym:make",
                            kwargs=dict(self.config, env_id=env_id, endpoint=self.client.endpoint))
        self._closed = False

    # -- Gymnasium API --------------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        """Reset the episode: returns ``(obs, info)``. ``seed`` also seeds ``np_random``."""
        super().reset(seed=seed)
        rep = self.client.reset(self.session, seed=None if seed is None else int(seed), options=options)
        return rep["obs"], rep.get("info", {})

    def step(self, action):
        """Returns ``(obs, reward, terminated, truncated, info)``."""
        rep = self.client.step(self.session, encode_action(self.action_space, action))
        return rep["obs"], float(rep["reward"]), bool(rep["terminated"]), bool(rep["truncated"]), rep.get("info", {})

    def close(self):
        """Close the session and (if this env made it) the client. Safe to call more than once."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            self.client.close_session(self.session, timeout=_close_timeout(self.client))
        except HwgymError:
            pass  # already gone (reaped, server down): nothing left to release
        finally:
            if self._own_client:
                self.client.close()

    @property
    def closed(self):
        return self._closed

    # -- hwgym extras ---------------------------------------------------------------------------
    def snapshot(self):
        """Snapshot the env state; returns an id for :meth:`restore`."""
        return self.client.snapshot(self.session)

    def restore(self, snapshot):
        self.client.restore(self.session, snapshot)

    def drop_snapshot(self, snapshot):
        self.client.drop_snapshot(self.session, snapshot)

    def evaluate(self, point):
        """One-shot score of a design point (no episode state): ``(reward, metrics)``."""
        return self.client.evaluate(_point(point), session=self.session)

    def evaluate_batch(self, points):
        """``(rewards, metrics, errors)`` for K design points, scored across the server's workers."""
        return self.client.evaluate_batch(_points(points), session=self.session)

    def __repr__(self):
        return "<HwEnv %s session=%s%s>" % (self.env_id, (self.session or "")[:8], " closed" if self._closed else "")


def _point(p):
    if isinstance(p, np.ndarray):
        return p.tolist()
    return p


def _points(points):
    if isinstance(points, np.ndarray):
        return encode_array(points, "float64" if points.dtype.kind == "f" else "int64")
    return [_point(p) for p in points]


def make(env_id, endpoint=DEFAULT_ENDPOINT, timeout=DEFAULT_TIMEOUT, *, config=None, client=None, **kwargs):
    """Open a session of ``env_id`` on the server at ``endpoint``.

    The env config is ``config`` (a dict) updated with the other keyword arguments, e.g.
    ``hwgym.make("diag-v0", dims=3, episode_length=8)``.  ``timeout`` bounds every request (s).
    Pass ``client=`` to share one :class:`hwgym.Client` between envs.
    """
    cfg = dict(config or {})
    cfg.update(kwargs)
    return HwEnv(env_id, endpoint=endpoint, timeout=timeout, config=cfg, client=client)


def register_envs(endpoint=DEFAULT_ENDPOINT, env_ids=None, namespace="hwgym", timeout=DEFAULT_TIMEOUT):
    """Register the server's envs in Gymnasium's registry as ``"<namespace>/<id>"`` so that
    ``gymnasium.make("hwgym/diag-v0", dims=3)`` and ``gymnasium.make_vec(..., vectorization_mode=
    "vector_entry_point")`` open sessions on ``endpoint``.  ``env_ids`` defaults to every env the
    server lists.  Returns the registered ids.  Needs Gymnasium."""
    if not HAVE_GYMNASIUM:
        raise RuntimeError("register_envs needs gymnasium; use hwgym.make without it")
    if env_ids is None:
        with Client(endpoint, timeout=timeout) as c:
            env_ids = [e["id"] for e in c.envs()]
    out = []
    for eid in env_ids:
        gid = "%s/%s" % (namespace, eid) if namespace else eid
        gymnasium.register(id=gid, entry_point="hwgym.env:make", vector_entry_point="hwgym.vector:make_vec",
                           kwargs={"env_id": eid, "endpoint": endpoint, "timeout": timeout})
        out.append(gid)
    return out
