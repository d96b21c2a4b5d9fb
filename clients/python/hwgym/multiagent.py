"""Multi-agent sessions: the agents partition the action elements; each worker sends its part.

    sess = hwgym.make_multiagent("diag-v0", agents={"a0": [0, 1], "a1": [2, 3]}, endpoint=EP)
    # in each worker process/thread/host:
    w = hwgym.join(sess.session, "a0", endpoint=EP)
    obs, info = w.reset(seed=1)
    obs, reward, terminated, truncated, info = w.step(w.action_space.sample())

``reset`` and ``step`` are barriers: they return once every agent has sent its part (or raise
BarrierTimeout naming the missing agents after the session's ``agent_timeout_ms``).  Each worker
owns its own :class:`hwgym.Client` (a barrier blocks its socket until the others arrive).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Tuple  # noqa: F401

import weakref

from .client import DEFAULT_TIMEOUT, Client, resolve_endpoint
from .env import _finalize_session, encode_action
from .spaces import space_from_json

__all__ = ["MultiAgentSession", "MultiAgentWorker", "make_multiagent", "join"]


class MultiAgentSession:
    """The owner's handle of a multi-agent session (create with :func:`make_multiagent`)."""

    def __init__(self, env_id: str, agents: Any, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, config: Optional[Dict[str, Any]] = None,
                 agent_timeout_ms: Optional[int] = None, client: Optional[Client] = None) -> None:
        if isinstance(agents, dict):
            agents = [{"name": k, "dims": list(v)} for k, v in agents.items()]
        self.env_id = env_id
        self.config = dict(config or {})
        self.endpoint = endpoint = resolve_endpoint(endpoint)
        self.timeout = timeout
        self._own_client = client is None
        self.client = client if client is not None else Client(endpoint, timeout=timeout)
        self._closed = True
        try:
            self.client.ensure_hello()
            rep = self.client.make(env_id, self.config, agents=[{"name": a["name"], "dims": list(a["dims"])} for a in agents],
                                   agent_timeout_ms=agent_timeout_ms)
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self._closed = False
        self.session = rep["session"]
        self._finalizer = weakref.finalize(self, _finalize_session, self.client, self.session, self._own_client)
        self.action_space = space_from_json(rep["action_space"])
        self.observation_space = space_from_json(rep["observation_space"])
        self.agents = {}
        for a in rep.get("agents", agents):
            self.agents[a["name"]] = {"dims": list(a.get("dims", [])),
                                      "action_space": space_from_json(a["action_space"]) if "action_space" in a else None}

    def join(self, agent: str, timeout: Optional[float] = None) -> Any:
        """A worker for ``agent`` on a new connection to the same endpoint."""
        return MultiAgentWorker(self.session, agent, endpoint=self.endpoint,
                                timeout=self.timeout if timeout is None else timeout)

    def close(self) -> None:
        """Close the session (and the client if this object made it); does not wait on a dead
        server. A session object dropped without close() is closed by a finalizer."""
        if self._closed:
            return
        self._closed = True
        self._finalizer()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MultiAgentWorker:
    """One agent's part of a multi-agent session (create with :func:`join`)."""

    def __init__(self, session: str, agent: str, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, client: Optional[Client] = None) -> None:
        self.session = session
        self.agent = agent
        self._own_client = client is None
        self.client = client if client is not None else Client(endpoint, timeout=timeout)
        self._closed = True
        try:
            rep = self.client.join(session, agent)
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self._closed = False
        self.dims = list(rep.get("dims", []))
        self.action_space = space_from_json(rep["action_space"])
        self.observation_space = space_from_json(rep["observation_space"]) if "observation_space" in rep else None
        self.agents = list(rep.get("agents", []))

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Any:
        """Barrier: ``(obs, info)`` once every agent has asked for the reset."""
        rep = self.client.reset(self.session, seed=None if seed is None else int(seed), options=options, agent=self.agent)
        return rep["obs"], rep.get("info", {})

    def step(self, action: Any) -> Any:
        """Send this agent's part; returns the joint step's ``(obs, reward, terminated, truncated,
        info)`` (``info["action"]`` is the joint action) once every agent's part is in."""
        rep = self.client.step(self.session, encode_action(self.action_space, action), agent=self.agent)
        info = rep.get("info", {})
        if "action" in rep and isinstance(info, dict):
            info = dict(info, action=rep["action"])
        return rep["obs"], float(rep["reward"]), bool(rep["terminated"]), bool(rep["truncated"]), info

    def close(self) -> None:
        """Close this worker's connection (the session stays; its owner closes it)."""
        if self._closed:
            return
        self._closed = True
        if self._own_client:
            self.client.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<MultiAgentWorker %s dims=%s session=%s>" % (self.agent, self.dims, self.session[:8])


def make_multiagent(env_id: str, agents: Any, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, *, agent_timeout_ms: Optional[int] = None,
                    config: Optional[Dict[str, Any]] = None, client: Optional[Client] = None, **kwargs: Any) -> MultiAgentSession:
    """Create a multi-agent session. ``agents`` is ``{"name": [dims...]}`` or a list of
    ``{"name", "dims"}``; the dims must partition the action elements."""
    cfg = dict(config or {})
    cfg.update(kwargs)
    return MultiAgentSession(env_id, agents, endpoint=endpoint, timeout=timeout, config=cfg,
                             agent_timeout_ms=agent_timeout_ms, client=client)


def join(session: str, agent: str, endpoint: Optional[str] = None, timeout: Optional[float] = 60.0, client: Optional[Client] = None) -> Any:
    """Join ``session`` (its token) as ``agent``; returns a :class:`MultiAgentWorker`."""
    return MultiAgentWorker(session, agent, endpoint=endpoint, timeout=timeout, client=client)
