"""hwgym's Gymnasium code path, run in a subprocess against tests/python/fake_gymnasium (a stub with
Gymnasium 1.x's names and signatures), since Gymnasium itself is not installed here; and the
fallback path forced with HWGYM_NO_GYMNASIUM=1."""

import os
import subprocess
import sys
import unittest

from ._support import REPO

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = r'''
import numpy as np
import gymnasium
assert getattr(gymnasium, "FAKE", False)
import hwgym
from hwgym import spaces as S
from tests.python._support import FakeServer
from tests.python.test_client_fake import diagish

assert hwgym.HAVE_GYMNASIUM
assert S.Discrete is gymnasium.spaces.Discrete
d = S.space_from_json({"type": "Discrete", "n": 6, "start": 1, "name": "loop", "labels": list("abcdef")})
assert isinstance(d, gymnasium.spaces.Discrete) and d.n == 6 and d.start == 1 and d.name == "loop" and d.labels[0] == "a"
md = S.space_from_json({"type": "MultiDiscrete", "nvec": [3, 4], "names": ["x", "y"]})
assert isinstance(md, gymnasium.spaces.MultiDiscrete) and md.nvec.tolist() == [3, 4] and md.names == ["x", "y"]
b = S.space_from_json({"type": "Box", "shape": [2], "dtype": "float64", "low": [-1.7976931348623157e308, 0], "high": [1, 2]})
assert isinstance(b, gymnasium.spaces.Box) and b.dtype == np.float64 and b.low[0] == -np.inf
ib = S.space_from_json({"type": "Box", "shape": [], "dtype": "int64", "low": [0], "high": [1.7976931348623157e308]})
assert ib.high == np.iinfo(np.int64).max and ib.dtype == np.int64
mb = S.space_from_json({"type": "MultiBinary", "n": 5})
assert isinstance(mb, gymnasium.spaces.MultiBinary) and mb.shape == (5,)
dd = S.space_from_json({"type": "Dict", "spaces": {"b": {"type": "MultiBinary", "n": 2}, "a": {"type": "Discrete", "n": 2}}})
assert isinstance(dd, gymnasium.spaces.Dict) and list(dd.spaces) == ["a", "b"]
for j in ({"type": "Discrete", "n": 6, "start": 1, "name": "loop", "labels": list("abcdef")},
          {"type": "MultiDiscrete", "nvec": [3, 4], "names": ["x", "y"]}, {"type": "MultiBinary", "n": 5}):
    assert S.space_to_json(S.space_from_json(j)) == j, S.space_to_json(S.space_from_json(j))

srv = FakeServer(diagish)
try:
    env = hwgym.make("diag-v0", endpoint=srv.endpoint, timeout=5, dims=3)
    assert isinstance(env, gymnasium.Env)
    assert isinstance(env.spec, gymnasium.envs.registration.EnvSpec) and env.spec.id == "diag-v0"
    assert isinstance(env.action_space, gymnasium.spaces.MultiDiscrete)
    obs, info = env.reset(seed=5)
    r1 = env.np_random.random()
    env.reset(seed=5)
    assert env.np_random.random() == r1  # reset(seed) seeds np_random through Gymnasium's Env.reset
    assert len(env.step(np.array([1, 2, 3]))) == 5
    assert env.unwrapped is env
    lg_path = __import__("tempfile").mktemp(suffix=".db")
    lg = hwgym.TrialLogger(lg_path, agent="t", env="diag-v0", handle_sigterm=False)
    w = lg.wrap(env)
    assert isinstance(w, gymnasium.Wrapper)
    w.reset(seed=1)
    w.step(np.array([0, 0, 0]))
    lg.close()
    env.close(); env.close()
    venv = hwgym.make_vec("diag-v0", 3, endpoint=srv.endpoint, timeout=5)
    assert isinstance(venv, gymnasium.vector.VectorEnv)
    assert venv.metadata["autoreset_mode"] is gymnasium.vector.AutoresetMode.NEXT_STEP
    # Gymnasium batches a MultiDiscrete as an integer Box; hwgym still sends and names it as MultiDiscrete
    assert isinstance(venv.action_space, gymnasium.spaces.Box) and venv.action_space.shape == (3, 3)
    assert venv.action_space.dtype == np.int64
    try:
        venv.step(np.zeros((3, 2), dtype=np.int64))
        raise SystemExit("a wrong batch shape must raise")
    except hwgym.BadAction as e:
        assert "a batch of MultiDiscrete of shape (3, 3)" in str(e) and "Box" not in str(e), str(e)
    assert isinstance(lg.wrap(venv), gymnasium.vector.VectorWrapper)
    venv.close(); venv.close()
    # registered at import, without a server: every server env id, endpoint read when made
    reg = gymnasium.envs.registration.registry
    for eid in hwgym.ENV_IDS:
        spec = reg["hwgym/" + eid]
        assert spec.entry_point == "hwgym.env:make" and spec.kwargs == {"env_id": eid}, spec
        assert spec.vector_entry_point == "hwgym.registry:_vector_entry"
    import os
    os.environ["HWGYM_ENDPOINT"] = srv.endpoint
    e = gymnasium.envs.registration.make_from_registry("hwgym/diag-v0", dims=3)
    assert isinstance(e, hwgym.HwEnv) and e.config == {"dims": 3} and e.client.endpoint == srv.endpoint
    e.close()
    from hwgym.registry import _vector_entry
    v = _vector_entry(num_envs=2, env_id="diag-v0", endpoint=srv.endpoint, dims=3, autoreset_mode="same_step")
    assert v.num_envs == 2 and v.metadata["autoreset_mode"] is gymnasium.vector.AutoresetMode.SAME_STEP
    v.close()
    assert hwgym.register_envs(srv.endpoint, env_ids=["diag-v0"]) == ["hwgym/diag-v0"]
    assert reg["hwgym/diag-v0"].kwargs["endpoint"] == srv.endpoint
finally:
    srv.close()
print("OK")
'''

V0_SCRIPT = r'''
import numpy as np
import gymnasium
assert gymnasium.__version__.startswith("0.29") and not hasattr(gymnasium.vector, "VectorWrapper")
import hwgym
from hwgym._compat import GYM_V0
from tests.python._support import ServerProcess
assert GYM_V0 and hwgym.SAME_STEP == "SameStep"
srv = ServerProcess()
try:
    z = np.zeros((2, 2), np.int64)
    v = hwgym.make_vec("diag-v0", 2, endpoint=srv.endpoint, dims=2, episode_length=2)
    assert v.metadata["autoreset_mode"] == "SameStep"  # 0.29's vector API autoresets in the same step
    lg = hwgym.TrialLogger(__import__("tempfile").mktemp(suffix=".db"), agent="t", env="diag-v0", handle_sigterm=False)
    w = lg.wrap(v)
    assert isinstance(w, gymnasium.vector.VectorEnvWrapper)
    first, _ = w.reset(seed=0)
    w.step(z)
    obs, r, te, tr, inf = w.step(z)
    assert (te | tr).all()
    assert inf["final_observation"].dtype == object and inf["_final_observation"].all(), inf
    assert inf["final_observation"][0].shape == v.single_observation_space.shape
    assert inf["final_info"][1]["t"] == 2, inf["final_info"]
    obs, r, te, tr, inf = w.step(z)  # the reset happened in the previous step: a real step
    assert inf["t"].tolist() == [1, 1] and "autoreset" not in inf, inf
    lg.close()
    try:
        hwgym.make_vec("diag-v0", 2, endpoint=srv.endpoint, autoreset_mode="next_step")
        raise SystemExit("NEXT_STEP must be refused under 0.29")
    except ValueError as e:
        assert "1.0" in str(e)
    spec = gymnasium.envs.registration.registry["hwgym/diag-v0"]
    v2 = spec.vector_entry_point(num_envs=2, max_episode_steps=None, endpoint=srv.endpoint, dims=2)  # make_vec(custom)
    assert v2.env_id == "diag-v0" and v2.num_envs == 2
    v2.close()
    w.close()
finally:
    srv.stop()
print("OK")
'''

OLD_GYM = r'''
try:
    import hwgym
    raise SystemExit("importing hwgym under Gymnasium 0.28 must fail")
except ImportError as e:
    assert "Gymnasium 0.29.x or 1.x" in str(e) and "0.28.1" in str(e) and "HWGYM_NO_GYMNASIUM" in str(e), e
print("OK")
'''

FALLBACK = r'''
import hwgym
assert not hwgym.HAVE_GYMNASIUM
assert hwgym.spaces.Discrete is hwgym.spaces.LocalDiscrete
assert hwgym.HwEnv.__mro__[1].__module__ == "hwgym.env"
try:
    hwgym.register_envs("ipc:///nonexistent")
    raise SystemExit("register_envs without gymnasium must raise")
except RuntimeError:
    pass
print("OK")
'''


class TestGymnasiumPath(unittest.TestCase):
    def run_script(self, script, extra_path=(), **env):
        e = dict(os.environ, **env)
        e["PYTHONPATH"] = os.pathsep.join(list(extra_path) + [os.path.join(REPO, "clients", "python"), REPO])
        p = subprocess.run([sys.executable, "-c", script], env=e, capture_output=True, timeout=60, cwd=REPO)
        self.assertEqual(p.returncode, 0, p.stderr.decode() + p.stdout.decode())
        self.assertEqual(p.stdout.decode().strip().splitlines()[-1], "OK")

    def test_with_gymnasium(self):
        self.run_script(SCRIPT, [os.path.join(HERE, "fake_gymnasium")])

    def test_gymnasium_029_vector_api(self):
        from ._support import server_binary
        path, why = server_binary()
        if path is None:
            self.skipTest(why)
        self.run_script(V0_SCRIPT, [os.path.join(HERE, "fake_gymnasium")], FAKE_GYMNASIUM_VERSION="0.29.1")

    def test_unsupported_version_is_refused(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="hwgym-oldgym-")
        os.makedirs(os.path.join(d, "gymnasium", "spaces"))
        with open(os.path.join(d, "gymnasium", "__init__.py"), "w") as f:
            f.write('__version__ = "0.28.1"\n')
        open(os.path.join(d, "gymnasium", "spaces", "__init__.py"), "w").close()
        self.run_script(OLD_GYM, [d])

    def test_forced_fallback(self):
        self.run_script(FALLBACK, [os.path.join(HERE, "fake_gymnasium")], HWGYM_NO_GYMNASIUM="1")


if __name__ == "__main__":
    unittest.main()
