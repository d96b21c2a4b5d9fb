"""Fake of ray.tune.registry.register_env. Unlike RLlib, it calls the creator once at once (with
an empty env_config) and steps the env, so a broken creator fails the snippet."""
_ENVS = {}


def register_env(name, env_creator):
    _ENVS[name] = env_creator
    env = env_creator({})
    try:
        env.reset(seed=0)
        env.step(env.action_space.sample() if hasattr(env.action_space, "sample") else 0)
    finally:
        env.close()
