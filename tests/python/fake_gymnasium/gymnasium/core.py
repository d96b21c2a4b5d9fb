from .utils import seeding


class Env:
    metadata = {"render_modes": []}
    render_mode = None
    spec = None
    _np_random = None
    _np_random_seed = None

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random

    @property
    def unwrapped(self):
        return self


class Wrapper(Env):
    def __init__(self, env):
        assert isinstance(env, Env), "Expected env to be a `gymnasium.Env` but got %s" % type(env)
        self.env = env
        self._action_space = None
        self._observation_space = None
        self._metadata = None
        self._cached_spec = None

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        return self.env.step(action)

    def close(self):
        return self.env.close()

    @property
    def action_space(self):
        return self.env.action_space if self._action_space is None else self._action_space

    @property
    def unwrapped(self):
        return self.env.unwrapped
