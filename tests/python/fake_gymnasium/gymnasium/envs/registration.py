import dataclasses


@dataclasses.dataclass
class EnvSpec:
    id: str
    entry_point: object = dataclasses.field(default=None)
    reward_threshold: object = dataclasses.field(default=None)
    nondeterministic: bool = dataclasses.field(default=False)
    max_episode_steps: object = dataclasses.field(default=None)
    order_enforce: bool = dataclasses.field(default=True)
    disable_env_checker: bool = dataclasses.field(default=False)
    kwargs: dict = dataclasses.field(default_factory=dict)
    vector_entry_point: object = dataclasses.field(default=None)


registry = {}


def register(id, entry_point=None, vector_entry_point=None, kwargs=None, **rest):
    registry[id] = EnvSpec(id=id, entry_point=entry_point, vector_entry_point=vector_entry_point, kwargs=dict(kwargs or {}))


def make_from_registry(id, **kwargs):
    """What gymnasium.make does with a registered entry point (without its wrappers)."""
    import importlib
    spec = registry[id]
    mod, _, fn = spec.entry_point.partition(":")
    return getattr(importlib.import_module(mod), fn)(**dict(spec.kwargs, **kwargs))


def make(id, **kwargs):
    """gymnasium.make's id handling: "module:env_id" imports module first (which registers its envs)."""
    import importlib
    if ":" in id:
        mod, id = id.split(":", 1)
        importlib.import_module(mod)
    if id not in registry:
        raise KeyError("Environment %s doesn't exist." % id)  # gymnasium.error.NameNotFound's text
    return make_from_registry(id, **kwargs)
