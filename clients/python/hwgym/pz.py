"""PettingZoo views of a multi-agent session: ``hwgym.parallel_env(...)`` (a ParallelEnv) and
``hwgym.aec_env(...)`` (PettingZoo's parallel-to-AEC conversion of it).

    env = hwgym.parallel_env("maestro-v0", endpoint=EP, model="mobilenet_v2", layer=3)
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

The agents are the session's agent names; each owns some action elements (its ``dims``) and has
the MultiDiscrete/MultiBinary space of those; all share the env's observation and its reward
(the objective is common).  Each server-side step is a barrier across agents, so the view keeps
one connection per agent and sends every agent's part before waiting for the replies (no threads
needed).  Without PettingZoo installed the class still works, with a minimal base class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, SupportsIndex, Tuple  # noqa: F401

import weakref

import numpy as np

from .client import DEFAULT_TIMEOUT, Client, request_all, resolve_endpoint
from .env import _space_repr, check_seed, encode_action, no_pickle, warn_render_mode
from .obs import obs_view
from .variants import resolve
from .errors import BadAction, BadRequest, HwgymError
from .multiagent import MultiAgentSession
from .spaces import Discrete, _kind
from .wire import encode_array

__all__ = ["HwParallelEnv", "parallel_env", "aec_env", "default_agents"]

from ._fallback import Closing


class _PZStandIn(Closing):
    """Minimal stand-in for pettingzoo.ParallelEnv (PettingZoo is optional)."""
    metadata: Dict[str, Any] = {}
    agents: List[str] = []
    possible_agents: List[str] = []

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)


if TYPE_CHECKING:
    _PZBase = _PZStandIn
else:
    try:
        from pettingzoo.utils.env import ParallelEnv as _PZBase
    except ImportError:
        _PZBase = _PZStandIn


def default_agents(action_space: Any, agents: Any = None) -> Any:
    """The ``{name: [dims]}`` of a multi-agent session: ``agents`` as given (a dict, or a list of
    ``{"name", "dims"}``), an int k (k agents over contiguous, near-equal slices of the action
    elements), or None (one agent per element, named by the space's element names when they are
    unique, else ``agent_<i>``)."""
    if isinstance(agents, dict):
        return {str(k): [int(d) for d in v] for k, v in agents.items()}
    if isinstance(agents, (list, tuple)):
        return {str(a["name"]): [int(d) for d in a["dims"]] for a in agents}
    k = _kind(action_space)
    if k not in ("MultiDiscrete", "MultiBinary"):
        raise BadRequest("BAD_REQUEST", "multi-agent sessions need a MultiDiscrete or MultiBinary action space, "
                         "this env has %s" % _space_repr(action_space), "make")
    n = int(np.prod(action_space.shape))
    if agents is None:
        names = getattr(action_space, "names", None) or []
        if len(names) == n and all(isinstance(x, str) and x for x in names) and len(set(names)) == n:
            return {names[i]: [i] for i in range(n)}
        return {"agent_%d" % i: [i] for i in range(n)}
    na = int(agents)
    if not 1 <= na <= n:
        raise BadRequest("BAD_REQUEST", "agents=%d: need 1..%d agents for %d action elements" % (na, n, n), "make")
    bounds = np.linspace(0, n, na + 1).round().astype(int)
    return {"agent_%d" % j: list(range(bounds[j], bounds[j + 1])) for j in range(na)}


def _close_all(owner: Any, workers: Any) -> None:
    for w in workers:
        try:
            w.close()
        except HwgymError:
            pass
    owner.close()


class HwParallelEnv(_PZBase):
    """A multi-agent session as a PettingZoo ParallelEnv. Create with :func:`hwgym.parallel_env`."""

    metadata = {"name": "hwgym", "render_modes": [], "is_parallelizable": True}
    render_mode = None

    def __init__(self, env_id: str, agents: Any = None, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, config: Optional[Dict[str, Any]] = None,
                 agent_timeout_ms: Optional[int] = None, connect_timeout: Optional[float] = None, normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False) -> None:
        self.env_id = env_id
        self.config = dict(config or {})
        endpoint = resolve_endpoint(endpoint)
        self.metadata = dict(type(self).metadata, name="hwgym/%s" % env_id)
        self._closed = True
        with Client(endpoint, timeout=timeout, connect_timeout=connect_timeout) as probe:
            probe.hello()
            from .spaces import space_from_json
            full = space_from_json(probe.spaces(env=env_id, config=self.config)["action_space"])
        owner = MultiAgentSession(env_id, default_agents(full, agents), endpoint=endpoint, timeout=timeout,
                                  config=self.config, agent_timeout_ms=agent_timeout_ms)
        self._owner = owner
        self.session = owner.session
        workers: List[Any] = []
        self._finalizer = weakref.finalize(self, _close_all, owner, workers)
        self._closed = False
        for name in owner.agents:
            workers.append(owner.join(name))
        self._workers = {w.agent: w for w in workers}
        self.possible_agents = list(owner.agents)
        self.agents = []
        self._obs_t, obs_space = obs_view(owner.observation_space, normalize_obs, wire_obs_keys, flatten_obs)
        self._obs_space = obs_space
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        # an agent owning one MultiDiscrete element gets a Discrete space (what PettingZoo and RL
        # libraries expect); its action is sent as the one-element part
        self._scalar = set()
        self.action_spaces = {}
        for a in self.possible_agents:
            sp = self._workers[a].action_space
            if _kind(sp) == "MultiDiscrete" and tuple(sp.shape) == (1,):
                d: Any = Discrete(int(sp.nvec[0]))
                d.names = getattr(sp, "names", None)
                d.name = d.names[0] if d.names else None
                d.labels = (getattr(sp, "labels", None) or [None])[0]
                sp = d
                self._scalar.add(a)
            self.action_spaces[a] = sp
        self.dims = {a: list(self._workers[a].dims) for a in self.possible_agents}

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def _obs(self, obs: Any) -> Any:
        return obs if self._obs_t is None else self._obs_t(obs)

    def reset(self, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
        """Reset the session (every agent's part sent together): ``(observations, infos)``, one entry
        per agent (the shared observation)."""
        seed = check_seed(seed)
        calls = [(w.client, "reset", {"session": self.session, "agent": a, "seed": seed})
                 for a, w in self._workers.items()]
        reps = request_all(calls)
        rep = reps[0]
        self.agents = list(self.possible_agents)
        obs = self._obs(rep["obs"])
        info = rep.get("info", {})
        return {a: obs for a in self.agents}, {a: dict(info) for a in self.agents}

    def step(self, actions: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, float], Dict[str, bool], Dict[str, bool], Dict[str, Dict[str, Any]]]:
        """``actions``: one action per live agent (its part of the joint action).  Returns the
        PettingZoo 5-tuple of dicts; when the episode ends every agent leaves ``agents``."""
        if not self.agents:
            raise BadRequest("BAD_REQUEST", "step after the episode ended: call reset() first", "step")
        missing = [a for a in self.agents if a not in actions]
        extra = [a for a in actions if a not in self._workers]
        if missing or extra:
            raise BadAction("BAD_ACTION", "actions: %s%s" % ("no action for agents %s" % missing if missing else "",
                                                              "%sunknown agents %s" % ("; " if missing else "", extra) if extra else ""),
                            "step")
        calls = []
        for a in self.agents:  # check every part before sending any: a bad part would stall the barrier
            sp = self.action_spaces[a]
            wire = encode_action(sp, actions[a], "action of agent %r" % a)
            if a in self._scalar:
                wire = encode_array(np.asarray([wire]), "int64")
            if not sp.contains(actions[a] if a in self._scalar else np.asarray(actions[a])):
                raise BadAction("BAD_ACTION", "action of agent %r: %r is outside %s" % (a, actions[a], _space_repr(sp)), "step")
            calls.append((self._workers[a].client, "step", {"session": self.session, "agent": a, "action": wire}))
        reps = request_all(calls)
        rep = reps[0]
        obs = self._obs(rep["obs"])
        reward = float(rep["reward"])
        term, trunc = bool(rep["terminated"]), bool(rep["truncated"])
        info = rep.get("info", {})
        if "action" in rep and isinstance(info, dict):
            info = dict(info, action=np.asarray(rep["action"], dtype=np.int64))
        agents = self.agents
        out = ({a: obs for a in agents}, {a: reward for a in agents}, {a: term for a in agents},
               {a: trunc for a in agents}, {a: dict(info) for a in agents})
        if term or trunc:
            self.agents = []
        return out

    def render(self) -> Any:
        return None

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        no_pickle(self)

    def state(self) -> NoReturn:
        raise NotImplementedError("hwgym multi-agent envs have no separate global state: every agent sees it")

    def close(self) -> None:
        """Close every agent's connection and the session (safe to call twice; finalizer too)."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        return "<HwParallelEnv %s agents=%s session=%s>" % (self.env_id, self.possible_agents, self.session[:8])


def parallel_env(env_id: str, agents: Any = None, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, *, config: Optional[Dict[str, Any]] = None, agent_timeout_ms: Optional[int] = None,
                 connect_timeout: Optional[float] = None, normalize_obs: bool = False, wire_obs_keys: bool = False, flatten_obs: bool = False, render_mode: Optional[str] = None, **kwargs: Any) -> HwParallelEnv:
    """A multi-agent session of ``env_id`` as a PettingZoo ParallelEnv.  ``agents``: ``{name: [dims]}``,
    a list of ``{"name", "dims"}``, an int k (k contiguous groups) or None (one agent per action
    element); the other keyword arguments form the env config (as in :func:`hwgym.make`)."""
    warn_render_mode(render_mode)
    cfg = dict(config or {})
    cfg.update(kwargs)
    env_id, cfg = resolve(env_id, cfg)
    return HwParallelEnv(env_id, agents=agents, endpoint=endpoint, timeout=timeout, config=cfg,
                         agent_timeout_ms=agent_timeout_ms, connect_timeout=connect_timeout, normalize_obs=normalize_obs,
                         wire_obs_keys=wire_obs_keys, flatten_obs=flatten_obs)


def aec_env(env_id: str, agents: Any = None, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, **kwargs: Any) -> Any:
    """The same session as a PettingZoo AEC env (``pettingzoo.utils.parallel_to_aec``). Needs PettingZoo."""
    try:
        from pettingzoo.utils.conversions import parallel_to_aec
    except ImportError:
        raise ImportError("hwgym.aec_env needs PettingZoo (pip install pettingzoo); "
                          "hwgym.parallel_env works without it") from None
    return parallel_to_aec(parallel_env(env_id, agents=agents, endpoint=endpoint, timeout=timeout, **kwargs))
