"""HwVectorEnv: a vector session (N copies stepped together on the server), Gymnasium 1.x VectorEnv API.

Autoreset is the server's, with Gymnasium's "next-step" semantics: after sub-env i ends, the next
``step`` ignores its action, resets it and returns its reset obs, reward 0, terminated=truncated=False
(and ``info["autoreset"]`` True for it).
"""

import numpy as np

from ._compat import HAVE_GYMNASIUM, gymnasium
from .client import DEFAULT_ENDPOINT, DEFAULT_TIMEOUT, Client, _close_timeout
from .env import EnvSpec, _np_random_for, encode_action
from .errors import HwgymError
from .spaces import batch_space, space_from_json

__all__ = ["HwVectorEnv", "make_vec", "batch_infos"]

_AUTORESET = "NextStep"
if HAVE_GYMNASIUM:
    import gymnasium.vector
    _VecBase = gymnasium.vector.VectorEnv
    _AUTORESET = getattr(gymnasium.vector, "AutoresetMode", None)
    _AUTORESET = _AUTORESET.NEXT_STEP if _AUTORESET is not None else "NextStep"
else:
    class _VecBase:
        """Minimal stand-in for gymnasium.vector.VectorEnv."""
        metadata = {}
        render_mode = None
        spec = None
        closed = False
        _np_random = None
        _np_random_seed = None

        @property
        def np_random(self):
            if self._np_random is None:
                self._np_random, self._np_random_seed = _np_random_for(None)
            return self._np_random

        @np_random.setter
        def np_random(self, value):
            self._np_random, self._np_random_seed = value, -1

        @property
        def np_random_seed(self):
            if self._np_random is None:
                self._np_random, self._np_random_seed = _np_random_for(None)
            return self._np_random_seed

        @property
        def unwrapped(self):
            return self

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()
            return False


def _add_info(out, info, i, n):
    """Gymnasium 1.x VectorEnv._add_info: info of sub-env i into the dict-of-arrays ``out`` with
    ``"_key"`` boolean masks (nested dicts recurse)."""
    for key, value in info.items():
        if isinstance(value, dict):
            arr = _add_info(out.get(key, {}), value, i, n)
        else:
            if key in out:
                arr = out[key]
            elif type(value) in (int, float, bool) or isinstance(value, np.number):
                arr = np.zeros(n, dtype=type(value))
            elif isinstance(value, np.ndarray):
                arr = np.zeros((n,) + value.shape, dtype=value.dtype)
            else:
                arr = np.full(n, None, dtype=object)
            try:
                arr[i] = value
            except (ValueError, TypeError, OverflowError):  # later sub-envs disagree in type/shape
                obj = np.full(n, None, dtype=object)
                for j in range(n):
                    obj[j] = arr[j]
                arr = obj
                arr[i] = value
        mask = out.get("_" + key)
        if mask is None:
            mask = np.zeros(n, dtype=np.bool_)
        mask[i] = True
        out[key], out["_" + key] = arr, mask
    return out


def batch_infos(infos):
    """A list of N info maps -> Gymnasium's batched dict-of-arrays with ``"_key"`` masks."""
    if isinstance(infos, dict):
        return infos
    out, n = {}, len(infos)
    for i, info in enumerate(infos):
        if info:
            _add_info(out, info, i, n)
    return out


class HwVectorEnv(_VecBase):
    """A vector session. Create with :func:`hwgym.make_vec`."""

    metadata = {"autoreset_mode": _AUTORESET, "render_modes": []}
    render_mode = None

    def __init__(self, env_id, num_envs, endpoint=DEFAULT_ENDPOINT, timeout=DEFAULT_TIMEOUT, config=None, client=None):
        self.env_id = env_id
        self.config = dict(config or {})
        self._own_client = client is None
        self.client = client if client is not None else Client(endpoint, timeout=timeout)
        self.session = None
        self._closed = True
        try:
            self.client.ensure_hello()
            rep = self.client.make(env_id, self.config, num_envs=int(num_envs))
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self.session = rep["session"]
        self.num_envs = int(rep.get("num_envs", num_envs))
        self.single_action_space = space_from_json(rep["action_space"])
        self.single_observation_space = space_from_json(rep["observation_space"])
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.spec = EnvSpec(id=env_id, entry_point="hwgym:make",
                            kwargs=dict(self.config, env_id=env_id, endpoint=self.client.endpoint))
        self._closed = False

    def reset(self, *, seed=None, options=None):
        """``seed``: None (the sub-envs continue their RNG streams), an int (sub-env i gets seed + i) or
        a list of num_envs ints.
        Returns ``(obs, infos)`` with obs batched on a leading axis."""
        wire_seed = seed
        if seed is not None:
            if isinstance(seed, (list, tuple, np.ndarray)):
                if len(seed) != self.num_envs:
                    raise ValueError("seed list has %d entries, expected num_envs=%d" % (len(seed), self.num_envs))
                if any(s is None for s in seed):
                    raise ValueError("seed list: the server takes num_envs integers (no None entries)")
                wire_seed = [int(s) for s in seed]
                first = wire_seed[0]
            else:
                wire_seed = first = int(seed)
            self._np_random, self._np_random_seed = _np_random_for(first)
        rep = self.client.reset(self.session, seed=wire_seed, options=options)
        return rep["obs"], batch_infos(rep.get("info", []))

    def step(self, actions):
        """Batched actions -> ``(obs, rewards float64[N], terminations bool[N], truncations bool[N], infos)``."""
        rep = self.client.step(self.session, encode_action(self.action_space, actions))
        rew = np.asarray(rep["reward"], dtype=np.float64).reshape(self.num_envs)
        term = np.asarray(rep["terminated"], dtype=np.bool_).reshape(self.num_envs)
        trunc = np.asarray(rep["truncated"], dtype=np.bool_).reshape(self.num_envs)
        return rep["obs"], rew, term, trunc, batch_infos(rep.get("info", []))

    def close(self, **kwargs):
        """Close the session (and the client if this env made it). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close_session(self.session, timeout=_close_timeout(self.client))
        except HwgymError:
            pass
        finally:
            if self._own_client:
                self.client.close()

    @property
    def closed(self):
        return self._closed

    def snapshot(self):
        return self.client.snapshot(self.session)

    def restore(self, snapshot):
        self.client.restore(self.session, snapshot)

    def drop_snapshot(self, snapshot):
        self.client.drop_snapshot(self.session, snapshot)

    def __repr__(self):
        return "<HwVectorEnv %s num_envs=%d session=%s>" % (self.env_id, self.num_envs, (self.session or "")[:8])


def make_vec(env_id, num_envs=1, endpoint=DEFAULT_ENDPOINT, timeout=DEFAULT_TIMEOUT, *, config=None, client=None, **kwargs):
    """A vector env of ``num_envs`` copies of ``env_id`` in one server session (config as in make)."""
    cfg = dict(config or {})
    cfg.update(kwargs)
    return HwVectorEnv(env_id, num_envs, endpoint=endpoint, timeout=timeout, config=cfg, client=client)
