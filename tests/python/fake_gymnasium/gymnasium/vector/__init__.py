import os
from enum import Enum

from ..utils import seeding
from . import utils  # noqa: F401


class AutoresetMode(Enum):
    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"


class VectorEnv:
    metadata = {}
    spec = None
    render_mode = None
    closed = False
    _np_random = None
    _np_random_seed = None

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random

    def __del__(self):
        if not getattr(self, "closed", True):
            self.close()


class VectorWrapper(VectorEnv):
    def __init__(self, env):
        assert isinstance(env, VectorEnv)
        self.env = env

    def close(self, **kwargs):
        return self.env.close(**kwargs)


class VectorEnvWrapper(VectorWrapper):
    """Gymnasium 0.29's name for the vector wrapper base."""


if os.environ.get("FAKE_GYMNASIUM_VERSION", "").startswith("0."):
    del AutoresetMode, VectorWrapper
