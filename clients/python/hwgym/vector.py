"""HwVectorEnv: a vector session (N copies stepped together on the server) behind Gymnasium's VectorEnv API.

The server autoresets with Gymnasium 1.x "next-step" semantics: after sub-env i ends, the next
``step`` ignores its action, resets it and returns its reset obs, reward 0, terminated=truncated=False
(and ``info["autoreset"]`` True for it).  ``autoreset_mode=SAME_STEP`` (and Gymnasium 0.29, whose
vector API always autoresets in the same step) instead resets the ended sub-envs right away with a
``reset_mask`` reset: the step returns their reset obs and puts the final obs / info in the infos
(``final_obs``/``final_info`` under 1.x, ``final_observation``/``final_info`` under 0.29).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, SupportsIndex, Tuple  # noqa: F401

import weakref

import numpy as np

from ._compat import GYM_V0, HAVE_GYMNASIUM, gymnasium
from .client import DEFAULT_ENDPOINT, DEFAULT_TIMEOUT, Client  # noqa: F401
from .env import EnvSpec, _SessionMethods, _finalize_session, _np_random_for, check_seed, encode_action, warn_render_mode
from .obs import obs_view
from .variants import resolve
from .errors import BadRequest
from .spaces import _kind, batch_space, space_from_json

__all__ = ["HwVectorEnv", "make_vec", "batch_infos", "AutoresetMode", "NEXT_STEP", "SAME_STEP"]

AutoresetMode: Any = None
if not TYPE_CHECKING and HAVE_GYMNASIUM:  # (type checkers see the stand-in below)
    import gymnasium.vector
    _VecBase = gymnasium.vector.VectorEnv
    AutoresetMode = getattr(gymnasium.vector, "AutoresetMode", None)  # Gymnasium >= 1.1
else:
    from ._fallback import Seeded

    class _VecBase(Seeded):
        """Minimal stand-in for gymnasium.vector.VectorEnv."""
        metadata: Dict[str, Any] = {}
        render_mode: Optional[str] = None
        spec: Any = None

#: The two autoreset modes (Gymnasium's AutoresetMode members where it has them, else strings).
NEXT_STEP = AutoresetMode.NEXT_STEP if AutoresetMode is not None else "NextStep"
SAME_STEP = AutoresetMode.SAME_STEP if AutoresetMode is not None else "SameStep"


def _autoreset_mode(mode: Any) -> Any:
    """NEXT_STEP / SAME_STEP from an AutoresetMode member or a string ("next_step", "SameStep", ...)."""
    if mode is None:
        return SAME_STEP if GYM_V0 else NEXT_STEP
    name = getattr(mode, "value", mode)
    key = str(name).replace("_", "").replace("-", "").lower()
    if key in ("nextstep",):
        if GYM_V0:
            raise ValueError("Gymnasium 0.29's vector API autoresets in the same step; autoreset_mode=%r "
                             "needs Gymnasium >= 1.0" % (mode,))
        return NEXT_STEP
    if key in ("samestep",):
        return SAME_STEP
    raise ValueError("autoreset_mode must be NEXT_STEP or SAME_STEP (hwgym does not offer %r)" % (mode,))


def _add_info_v0(out: Any, info: Any, i: int, n: int) -> Any:
    """Gymnasium 0.29 VectorEnv._add_info: numbers go in typed arrays, anything else (arrays, dicts)
    in object arrays; a ``"_key"`` mask per key."""
    for key, value in info.items():
        if key not in out:
            t = type(value)
            if t in (int, float, bool) or issubclass(t, np.number):
                arr = np.zeros(n, dtype=t)
            else:
                arr = np.zeros(n, dtype=object)
                arr[:] = None
            out[key], out["_" + key] = arr, np.zeros(n, dtype=np.bool_)
        out[key][i], out["_" + key][i] = value, True
    return out


def _add_info(out: Any, info: Any, i: int, n: int) -> Any:
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


def batch_infos(infos: Any, v0: Any = GYM_V0, out: Any = None) -> Any:
    """A list of N info maps -> Gymnasium's batched dict-of-arrays with ``"_key"`` masks (the
    1.x layout, nested dicts recursing; or 0.29's, with object arrays, when ``v0``)."""
    if isinstance(infos, dict):
        return infos
    out, n = ({} if out is None else out), len(infos)
    add = _add_info_v0 if v0 else _add_info
    for i, info in enumerate(infos):
        if info:
            add(out, info, i, n)
    return out


class HwVectorEnv(_SessionMethods, _VecBase):
    """A vector session. Create with :func:`hwgym.make_vec`."""

    metadata = {"autoreset_mode": NEXT_STEP, "render_modes": []}
    render_mode = None

    def __init__(self, env_id: str, num_envs: int, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, config: Optional[Dict[str, Any]] = None, client: Optional[Client] = None,
                 autoreset_mode: Any = None, connect_timeout: Optional[float] = None, normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False) -> None:
        self.env_id = env_id
        self.config = dict(config or {})
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = dict(type(self).metadata, autoreset_mode=self.autoreset_mode)
        if GYM_V0:  # 0.29's VectorEnv has no autoreset_mode; its API is the same-step one
            self.is_vector_env = True
        self._own_client = client is None
        self._closed = True
        self.client = client if client is not None else Client(endpoint, timeout=timeout, connect_timeout=connect_timeout)
        self.session: Any = None
        try:
            self.client.ensure_hello()
            rep = self.client.make(env_id, self.config, num_envs=int(num_envs))
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self.session = rep["session"]
        self._finalizer = weakref.finalize(self, _finalize_session, self.client, self.session, self._own_client)
        self._closed = False
        self.num_envs = int(rep.get("num_envs", num_envs))
        self.single_action_space = space_from_json(rep["action_space"])
        self.single_observation_space = space_from_json(rep["observation_space"])
        self._obs_t, self.single_observation_space = obs_view(self.single_observation_space, normalize_obs, wire_obs_keys, flatten_obs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        sk = _kind(self.single_action_space)  # what the batch holds, whatever class batch_space chose
        self._batch_kind = {"Discrete": "MultiDiscrete", "Dict": None}.get(sk, sk)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        kw = dict(self.config, env_id=env_id, endpoint=self.client.endpoint)
        if normalize_obs:
            kw["normalize_obs"] = True
        if wire_obs_keys:
            kw["wire_obs_keys"] = True
        if flatten_obs:
            kw["flatten_obs"] = True
        self.spec = EnvSpec(id=env_id, entry_point="hwgym:make", vector_entry_point="hwgym:make_vec", kwargs=kw)

    def _obs(self, obs: Any) -> Any:
        return obs if self._obs_t is None else self._obs_t(obs)

    def _seeds(self, seed: Any) -> Any:
        """The wire form of a reset seed: None, an int (sub-env i gets seed + i) or a list of
        num_envs ints or Nones (None: that sub-env keeps its RNG stream)."""
        if seed is None:
            return None, None
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != self.num_envs:
                raise BadRequest("BAD_REQUEST", "seed list has %d entries, expected num_envs=%d" % (len(seed), self.num_envs), "reset")
            wire = [check_seed(s, "seed[%d]" % i) for i, s in enumerate(seed)]
            return wire, next((s for s in wire if s is not None), None)
        first = check_seed(seed)
        assert first is not None
        if first + self.num_envs - 1 > 2 ** 64 - 1:
            raise BadRequest("BAD_REQUEST", "seed + num_envs - 1 must be at most 2**64-1 (sub-env i gets seed + i)", "reset")
        return first, first

    def _reset_mask(self, options: Optional[Dict[str, Any]]) -> Any:
        if not options or "reset_mask" not in options:
            return options, None
        options = dict(options)
        m = np.asarray(options.pop("reset_mask"))
        if m.shape != (self.num_envs,) or m.dtype != np.bool_:
            raise BadRequest("BAD_REQUEST", "options['reset_mask'] must be a bool array of shape (%d,), got %s of shape %s"
                             % (self.num_envs, m.dtype, m.shape), "reset")
        if not m.any():
            raise BadRequest("BAD_REQUEST", "options['reset_mask'] selects no sub-env", "reset")
        options["reset_mask"] = [bool(b) for b in m]
        return options, m

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Any, Dict[str, Any]]:
        """``seed``: None (the sub-envs continue their RNG streams), an int (sub-env i gets seed + i) or
        a list of num_envs ints or Nones.  ``options={"reset_mask": bool array}`` resets only the
        marked sub-envs (the others keep their state; their obs is their last one).
        Returns ``(obs, infos)`` with obs batched on a leading axis."""
        wire_seed, first = self._seeds(seed)
        options, mask = self._reset_mask(options)
        if first is not None:
            self._np_random, self._np_random_seed = _np_random_for(first)
        rep = self.client.reset(self.session, seed=wire_seed, options=options)
        return self._obs(rep["obs"]), batch_infos(rep.get("info", []))

    def step(self, actions: Any) -> Tuple[Any, np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], Dict[str, Any]]:
        """Batched actions -> ``(obs, rewards float64[N], terminations bool[N], truncations bool[N], infos)``."""
        rep = self.client.step(self.session, encode_action(self.action_space, actions, "actions", self._batch_kind))
        n = self.num_envs
        obs = rep["obs"]
        rew = np.asarray(rep["reward"], dtype=np.float64).reshape(n)
        term = np.asarray(rep["terminated"], dtype=np.bool_).reshape(n)
        trunc = np.asarray(rep["truncated"], dtype=np.bool_).reshape(n)
        infos = rep.get("info", [{}] * n)
        if self.autoreset_mode != SAME_STEP or not (term.any() or trunc.any()):
            return self._obs(obs), rew, term, trunc, batch_infos(infos)
        return self._same_step(obs, rew, term, trunc, infos)

    def _same_step(self, obs: Any, rew: Any, term: Any, trunc: Any, infos: Any) -> Tuple[Any, np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], Dict[str, Any]]:
        """Reset the sub-envs that just ended (one reset_mask reset) and merge: their obs become the
        reset obs, their infos the reset infos, and the final obs / info go into the infos."""
        done = term | trunc
        rep = self.client.reset(self.session, options={"reset_mask": [bool(b) for b in done]})
        robs, rinfos = rep["obs"], rep.get("info", [{}] * self.num_envs)
        new_obs = {k: np.where(_bcast(done, v), robs[k], v) for k, v in obs.items()} if isinstance(obs, dict) \
            else np.where(_bcast(done, obs), robs, obs)
        idx = np.flatnonzero(done)
        final_obs = [self._obs({k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]) for i in idx]
        if GYM_V0:  # 0.29: the reset info plus final_observation and final_info, per ended sub-env
            merged = list(infos)
            for j, i in enumerate(idx):
                merged[i] = dict(rinfos[i], final_observation=final_obs[j], final_info=infos[i])
            return self._obs(new_obs), rew, term, trunc, batch_infos(merged, v0=True)
        out: Dict[str, Any] = {}
        n = self.num_envs
        for j, i in enumerate(idx):
            _add_info(out, {"final_obs": final_obs[j], "final_info": infos[i]}, i, n)
        merged = [rinfos[i] if done[i] else infos[i] for i in range(n)]
        return self._obs(new_obs), rew, term, trunc, batch_infos(merged, out=out)

    @property
    def closed(self) -> bool:
        return getattr(self, "_closed", True)

    @closed.setter
    def closed(self, value: Any) -> None:  # Gymnasium's VectorEnv.close() assigns it
        self._closed = bool(value)

    def __repr__(self) -> str:
        return "<HwVectorEnv %s num_envs=%d session=%s>" % (self.env_id, self.num_envs, (self.session or "")[:8])


def _bcast(mask: Any, arr: Any) -> Any:
    """mask[N] shaped to broadcast against arr[N, ...]."""
    return np.asarray(mask).reshape((-1,) + (1,) * (np.ndim(arr) - 1))


def make_vec(env_id: str, num_envs: int = 1, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, *, config: Optional[Dict[str, Any]] = None, client: Optional[Client] = None,
             autoreset_mode: Any = None, connect_timeout: Optional[float] = None, normalize_obs: bool = False, max_episode_steps: Optional[int] = None,
             wire_obs_keys: bool = False, flatten_obs: bool = False, render_mode: Optional[str] = None, **kwargs: Any) -> HwVectorEnv:
    """A vector env of ``num_envs`` copies of ``env_id`` in one server session (config as in make).
    ``autoreset_mode``: NEXT_STEP (default under Gymnasium 1.x and without Gymnasium) or SAME_STEP
    (the only mode of Gymnasium 0.29's vector API, and its default there)."""
    if max_episode_steps is not None:
        raise ValueError("max_episode_steps is not applied by hwgym vector envs; set the env's own "
                         "episode_length config instead (got max_episode_steps=%r)" % (max_episode_steps,))
    warn_render_mode(render_mode)
    cfg = dict(config or {})
    cfg.update(kwargs)
    env_id, cfg = resolve(env_id, cfg)
    return HwVectorEnv(env_id, num_envs, endpoint=endpoint, timeout=timeout, config=cfg, client=client,
                       autoreset_mode=autoreset_mode, connect_timeout=connect_timeout, normalize_obs=normalize_obs,
                       wire_obs_keys=wire_obs_keys, flatten_obs=flatten_obs)
