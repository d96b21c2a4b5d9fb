"""hwgym: Python client of hwgym-server (hardware-design RL environments over ZeroMQ + msgpack).

    import hwgym
    env = hwgym.make("diag-v0", endpoint="tcp://127.0.0.1:5555", dims=3)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

See docs/python.md.
"""

from ._version import __version__  # noqa: E402
from . import errors, spaces, wire  # noqa: E402
from .errors import *  # noqa: E402,F401,F403
from .errors import HwgymError  # noqa: E402
from .spaces import HAVE_GYMNASIUM, space_from_json, space_to_json  # noqa: E402
from .client import Client, DEFAULT_ENDPOINT, DEFAULT_TIMEOUT  # noqa: E402
from .env import EnvSpec, HwEnv, make  # noqa: E402
from .vector import HwVectorEnv, make_vec, NEXT_STEP, SAME_STEP  # noqa: E402
from .registry import ENV_IDS, VARIANTS, register_envs  # noqa: E402
from .multiagent import MultiAgentSession, MultiAgentWorker, join, make_multiagent  # noqa: E402
from .pz import HwParallelEnv, aec_env, parallel_env  # noqa: E402
from .trials import TrialLogger, TrialLogWrapper, TrialLogVectorWrapper, SCHEMA_VERSION  # noqa: E402

__all__ = ["__version__", "make", "make_vec", "register_envs", "ENV_IDS", "VARIANTS", "NEXT_STEP", "SAME_STEP",
           "parallel_env", "aec_env", "HwParallelEnv", "make_multiagent", "join", "Client", "HwEnv", "HwVectorEnv",
           "MultiAgentSession", "MultiAgentWorker", "EnvSpec", "TrialLogger", "TrialLogWrapper", "TrialLogVectorWrapper",
           "SCHEMA_VERSION", "HAVE_GYMNASIUM", "space_from_json", "space_to_json",
           "errors", "spaces", "wire", "DEFAULT_ENDPOINT", "DEFAULT_TIMEOUT"]
__all__ += errors.__all__
