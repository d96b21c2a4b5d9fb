"""Gymnasium registry entries: ``gymnasium.make("hwgym/maestro-v0", ...)`` after ``import hwgym``.

``import hwgym`` registers ``hwgym/<id>`` for every env id in ENV_IDS (the envs hwgym-server
serves; a test checks the list against a server's ``envs`` op) without contacting any server.
The endpoint is read when an env is made: the ``endpoint=`` argument, else ``$HWGYM_ENDPOINT``,
else ``tcp://127.0.0.1:5555``.  ``register_envs(endpoint)`` registers a server's own list instead
(e.g. a server with other env families), with that endpoint as the default.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Iterable, List, Optional

from ._compat import GYM_V0, HAVE_GYMNASIUM, gymnasium
from .client import DEFAULT_TIMEOUT, Client
from .variants import VARIANTS

__all__ = ["ENV_IDS", "VARIANTS", "register_envs"]

#: The env ids of hwgym-server (envs/*/: diag, dram, maestro, mmap, placement, sched).
ENV_IDS = ("diag-v0", "dram-v0", "maestro-v0", "mmap-v0", "placement-v0", "sched-v0")


def _vector_entry(num_envs: int = 1, env_id: Optional[str] = None, max_episode_steps: Optional[int] = None,
                  **kwargs: Any) -> Any:
    """Vector entry point for gymnasium.make_vec (1.x: ``vectorization_mode="vector_entry_point"``,
    the default when an env has one; 0.29: ``vectorization_mode="custom"``, where the config comes
    in ``vector_kwargs``)."""
    from .vector import make_vec
    if env_id is None:
        raise ValueError("the vector entry point needs env_id")
    return make_vec(env_id, num_envs, max_episode_steps=max_episode_steps, **kwargs)


def _register(gid: str, env_id: str, kwargs: Dict[str, Any]) -> None:
    registry = gymnasium.envs.registration.registry
    registry.pop(gid, None)  # re-registering (register_envs after import) replaces, without a warning
    kw = dict(kwargs, env_id=env_id)
    vep: Any
    if GYM_V0:  # 0.29's make_vec(custom) passes neither the spec's kwargs nor the id
        vep = functools.partial(_vector_entry, env_id=env_id, **{k: v for k, v in kwargs.items()})
    else:
        vep = "hwgym.registry:_vector_entry"
    gymnasium.register(id=gid, entry_point="hwgym.env:make", vector_entry_point=vep, kwargs=kw)


def register_defaults(namespace: str = "hwgym") -> List[str]:
    """Register ``<namespace>/<id>`` for ENV_IDS and for the papers' named VARIANTS (done at import
    when Gymnasium is importable)."""
    out = []
    for eid in ENV_IDS:
        gid = "%s/%s" % (namespace, eid)
        if gid not in gymnasium.envs.registration.registry:
            _register(gid, eid, {})
        out.append(gid)
    for vid, (eid, cfg, _) in VARIANTS.items():
        gid = "%s/%s" % (namespace, vid)
        if gid not in gymnasium.envs.registration.registry:
            _register(gid, eid, cfg)
        out.append(gid)
    return out


def register_envs(endpoint: Optional[str] = None, env_ids: Optional[Iterable[str]] = None, namespace: str = "hwgym",
                  timeout: float = DEFAULT_TIMEOUT) -> List[str]:
    """Register the server's envs in Gymnasium's registry as ``"<namespace>/<id>"`` with
    ``endpoint`` as their default endpoint, so that ``gymnasium.make("hwgym/diag-v0", dims=3)`` and
    ``gymnasium.make_vec(...)`` open sessions there.  ``env_ids`` defaults to every env the server
    lists (asked now).  Returns the registered ids.  Needs Gymnasium."""
    if not HAVE_GYMNASIUM:
        raise RuntimeError("register_envs needs gymnasium; use hwgym.make without it")
    if env_ids is None:
        with Client(endpoint, timeout=timeout) as c:
            c.hello()
            env_ids = [e["id"] for e in c.envs()]
    out = []
    for eid in env_ids:
        gid = "%s/%s" % (namespace, eid) if namespace else eid
        kw: Dict[str, Any] = {"timeout": timeout}
        if endpoint is not None:
            kw["endpoint"] = endpoint
        _register(gid, eid, kw)
        out.append(gid)
    return out


if HAVE_GYMNASIUM:
    register_defaults()
