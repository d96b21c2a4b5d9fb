"""A minimal stand-in for Gymnasium 1.x, only for tests/python/test_gymnasium_path.py: it has the
names and constructor signatures hwgym uses, so the Gymnasium code path of hwgym can be run
where the real package is not installed."""
from .core import Env, Wrapper  # noqa: F401
from . import spaces, vector, utils, envs  # noqa: F401

__version__ = "1.1.0-fake"
FAKE = True
from .envs.registration import register, registry  # noqa: E402,F401
