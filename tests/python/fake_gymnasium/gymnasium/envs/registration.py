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
