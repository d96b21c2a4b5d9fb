"""A minimal stand-in for Gymnasium 1.x, only for tests/python/test_gymnasium_path.py: it has the
names and constructor signatures hwgym uses, so the Gymnasium code path of hwgym can be run
where the real package is not installed."""
from .core import Env, Wrapper  # noqa: F401
from . import spaces, vector, utils, envs  # noqa: F401

import os as _os
# FAKE_GYMNASIUM_VERSION=0.29.1 makes the stub look like 0.29 (no VectorWrapper / AutoresetMode)
__version__ = _os.environ.get("FAKE_GYMNASIUM_VERSION", "1.1.0-fake")
FAKE = True
from .envs.registration import make, register, registry  # noqa: E402,F401
