"""What a Python user meets (issue 12): failing fast, finalizers, vector reset_mask / None seeds /
SAME_STEP, strict actions and seeds, the registry's env ids, the PettingZoo view (through its own
minimal base class here; the real PettingZoo tests run locally, see docs/python.md), normalize_obs
and the pip-installable package.  Needs $HWGYM_BIN for the server-backed classes."""

import gc
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import hwgym
from hwgym import errors

from ._support import REPO, ServerProcess, ServerTestCase


class TestFailFast(unittest.TestCase):
    def test_no_server_says_so(self):
        ep = "ipc://%s/nobody.sock" % tempfile.mkdtemp()
        t0 = time.monotonic()
        with self.assertRaises(errors.NoServer) as cm:
            hwgym.make("diag-v0", endpoint=ep)  # default timeout 30 s: the connect timeout bounds it
        waited = time.monotonic() - t0
        self.assertLess(waited, 10, "NoServer should come after the 2 s connect timeout, not the 30 s request one")
        msg = str(cm.exception)
        self.assertIn("no hwgym-server answers at %s" % ep, msg)
        self.assertIn("hwgym-server --bind %s" % ep, msg)
        self.assertIsInstance(cm.exception, errors.ClientTimeout)  # still an IO / TimeoutError
        self.assertIsInstance(cm.exception, ConnectionError)

    def test_endpoint_from_environment(self):
        ep = "ipc://%s/envvar.sock" % tempfile.mkdtemp()
        old = os.environ.get("HWGYM_ENDPOINT")
        os.environ["HWGYM_ENDPOINT"] = ep
        try:
            with self.assertRaises(errors.NoServer) as cm:
                hwgym.make("diag-v0", connect_timeout=0.2)
            self.assertIn(ep, str(cm.exception))
            with hwgym.Client() as c:
                self.assertEqual(c.endpoint, ep)
        finally:
            if old is None:
                del os.environ["HWGYM_ENDPOINT"]
            else:
                os.environ["HWGYM_ENDPOINT"] = old


class TestDeadServer(unittest.TestCase):
    def test_close_does_not_wait_on_a_dead_server(self):
        srv = ServerProcess()
        try:
            envs = [hwgym.make("diag-v0", endpoint=srv.endpoint, dims=2) for _ in range(3)]
            vec = hwgym.make_vec("diag-v0", 2, endpoint=srv.endpoint, dims=2)
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait()
            deadline = time.monotonic() + 10  # let the sockets see the disconnect
            while any(e.client.connected() for e in envs + [vec]) and time.monotonic() < deadline:
                time.sleep(0.05)
            t0 = time.monotonic()
            for e in envs + [vec]:
                e.close()
            self.assertLess(time.monotonic() - t0, 2.0, "4 closes on a dead server (each used to wait 5 s)")
        finally:
            srv.stop()


class TestSessions(ServerTestCase):
    def sessions(self):
        with hwgym.Client(self.endpoint, timeout=10) as c:
            return c.stats()["sessions"]

    def test_finalizer_closes_dropped_envs(self):
        base = self.sessions()
        env = hwgym.make("diag-v0", endpoint=self.endpoint, dims=2)
        vec = hwgym.make_vec("diag-v0", 2, endpoint=self.endpoint, dims=2)
        env.reset(seed=0)
        self.assertEqual(self.sessions(), base + 2)
        del env, vec
        gc.collect()
        self.assertEqual(self.sessions(), base)
        pz = hwgym.parallel_env("diag-v0", agents=2, endpoint=self.endpoint, dims=2)
        ma = hwgym.make_multiagent("diag-v0", {"a": [0], "b": [1]}, endpoint=self.endpoint, dims=2)
        self.assertEqual(self.sessions(), base + 2)
        del pz, ma
        gc.collect()
        self.assertEqual(self.sessions(), base)

    def test_registry_ids_are_the_servers(self):
        with hwgym.Client(self.endpoint, timeout=10) as c:
            self.assertEqual(sorted(e["id"] for e in c.envs()), sorted(hwgym.ENV_IDS))


class TestStrict(ServerTestCase):
    def make(self, **cfg):
        env = hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, **cfg)
        self.addCleanup(env.close)
        env.reset(seed=0)
        return env

    def test_multidiscrete_shape_and_kind(self):
        env = self.make(dims=10, choices=10)
        for bad, want in ((np.zeros((2, 5), np.int64), r"expected shape \(10,\), got shape \(2, 5\)"),
                          (np.zeros(10, bool), "expected integers, got dtype bool"),
                          (np.zeros(10), "expected integers, got dtype float64"),
                          (np.zeros(9, np.int64), r"expected shape \(10,\)")):
            with self.assertRaises(errors.BadAction) as cm:
                env.step(bad)
            self.assertRegex(str(cm.exception), want)
        env.step(np.zeros(10, np.int32))
        env.step([1] * 10)

    def test_discrete(self):
        env = self.make(action_space="discrete", choices=5)
        for bad in ([[3]], True, np.bool_(True), [3], 2.0, np.array([3])):
            with self.assertRaises(errors.BadAction, msg=repr(bad)) as cm:
                env.step(bad)
            self.assertIn("Discrete(5)", str(cm.exception))
        for good in (3, np.int64(3), np.array(3), np.uint8(1)):
            env.step(good)

    def test_box_float32_bounds_in_dtype(self):
        env = self.make(action_space="box", dims=2)
        self.assertEqual(env.action_space.dtype, np.float32)
        self.assertEqual(env.action_space.low.dtype, np.float32)
        self.assertEqual(env.observation_space.low.dtype, env.observation_space.dtype)
        with self.assertRaises(errors.BadAction):
            env.step(np.zeros((1, 2), np.float32))

    def test_seed_range(self):
        env = self.make(dims=2)
        for bad in (2 ** 64, -1, True, 1.5, "7"):
            with self.assertRaises(ValueError) as cm:
                env.reset(seed=bad)
            self.assertIn("0..2**64-1", str(cm.exception))
        env.reset(seed=2 ** 64 - 1)
        env.reset(seed=np.uint64(2 ** 64 - 1))


class TestVectorDetails(ServerTestCase):
    def make_vec(self, n, **kw):
        env = hwgym.make_vec("diag-v0", n, endpoint=self.endpoint, timeout=10, **kw)
        self.addCleanup(env.close)
        return env

    def test_none_seeds(self):
        v = self.make_vec(3, dims=3)
        a, _ = v.reset(seed=[7, 8, 9])
        b, _ = v.reset(seed=[7, None, 9])  # sub-env 1 continues its stream
        np.testing.assert_array_equal(a[[0, 2]], b[[0, 2]])
        c, _ = v.reset(seed=[None, None, None])
        self.assertEqual(c.shape, a.shape)
        with self.assertRaises(ValueError):
            v.reset(seed=[1, 2])
        with self.assertRaises(ValueError):
            v.reset(seed=[1, -2, 3])

    def test_reset_mask(self):
        v = self.make_vec(3, dims=2, episode_length=50)
        v.reset(seed=0)
        before, *_ = v.step(np.ones((3, 2), np.int64))
        before, *_ = v.step(np.ones((3, 2), np.int64))
        obs, infos = v.reset(options={"reset_mask": np.array([False, True, False])})
        np.testing.assert_array_equal(obs[[0, 2]], before[[0, 2]])  # untouched sub-envs keep their obs
        _, _, _, _, inf = v.step(np.ones((3, 2), np.int64))
        np.testing.assert_array_equal(inf["t"], [3, 1, 3])  # only sub-env 1 restarted its episode
        for bad in (np.array([1, 0, 0]), np.array([True, False]), np.zeros(3, bool)):
            with self.assertRaises(ValueError):
                v.reset(options={"reset_mask": bad})

    def test_same_step_autoreset(self):
        v = self.make_vec(2, dims=2, episode_length=2, autoreset_mode=hwgym.SAME_STEP)
        self.assertEqual(v.metadata["autoreset_mode"], hwgym.SAME_STEP)
        first, _ = v.reset(seed=3)
        v.step(np.zeros((2, 2), np.int64))
        obs, rew, term, trunc, infos = v.step(np.zeros((2, 2), np.int64))
        self.assertTrue((term | trunc).all())
        self.assertTrue(infos["_final_obs"].all())
        self.assertEqual(infos["final_obs"].shape, (2,) + v.single_observation_space.shape)
        np.testing.assert_array_equal(infos["final_info"]["t"], [2, 2])
        obs, rew, term, trunc, infos = v.step(np.zeros((2, 2), np.int64))  # a real step, no autoreset step
        self.assertNotIn("autoreset", infos)
        np.testing.assert_array_equal(infos["t"], [1, 1])
        self.assertTrue(np.all(rew != 0) or True)
        with self.assertRaises(ValueError):
            self.make_vec(2, dims=2, autoreset_mode="disabled")

    def test_next_step_default(self):
        v = self.make_vec(2, dims=2, episode_length=1)
        self.assertEqual(v.metadata["autoreset_mode"], hwgym.NEXT_STEP)
        v.reset(seed=0)
        v.step(np.zeros((2, 2), np.int64))
        _, _, _, _, infos = v.step(np.zeros((2, 2), np.int64))
        self.assertTrue(infos["autoreset"].all())


class TestNormalizeObs(ServerTestCase):
    def test_log_scale(self):
        raw = hwgym.make("diag-v0", endpoint=self.endpoint, dims=3)
        env = hwgym.make("diag-v0", endpoint=self.endpoint, dims=3, normalize_obs=True)
        self.addCleanup(raw.close)
        self.addCleanup(env.close)
        a, _ = raw.reset(seed=4)
        b, _ = env.reset(seed=4)
        self.assertEqual(b.dtype, np.float32)
        np.testing.assert_allclose(b, np.sign(a) * np.log1p(np.abs(a)), rtol=1e-6)
        self.assertIn(b, env.observation_space)
        v = hwgym.make_vec("diag-v0", 2, endpoint=self.endpoint, dims=3, normalize_obs=True)
        self.addCleanup(v.close)
        o, _ = v.reset(seed=0)
        self.assertIn(o, v.observation_space)


class TestParallelEnv(ServerTestCase):
    def test_agents_spaces_and_episode(self):
        env = hwgym.parallel_env("diag-v0", agents={"a": [0, 1], "b": [2]}, endpoint=self.endpoint,
                                 dims=3, episode_length=3)
        self.addCleanup(env.close)
        self.assertEqual(env.possible_agents, ["a", "b"])
        self.assertEqual(env.action_space("a").shape, (2,))
        self.assertIsInstance(env.action_space("b"), hwgym.spaces.Discrete)  # one element: Discrete
        self.assertIs(env.observation_space("a"), env.observation_space("b"))
        obs, infos = env.reset(seed=1)
        self.assertEqual(set(obs), {"a", "b"})
        steps = 0
        while env.agents:
            acts = {a: env.action_space(a).sample() for a in env.agents}
            obs, rew, term, trunc, infos = env.step(acts)
            steps += 1
            self.assertEqual(rew["a"], rew["b"])
            self.assertEqual(infos["a"]["action"].tolist()[2], int(acts["b"]))
        self.assertEqual(steps, 3)
        self.assertTrue(trunc["a"] or term["a"])

    def test_default_and_int_agents_and_determinism(self):
        def run(agents):
            env = hwgym.parallel_env("diag-v0", agents=agents, endpoint=self.endpoint, dims=4)
            try:
                for a in env.possible_agents:
                    env.action_space(a).seed(5)
                out = [env.reset(seed=11)[0][env.possible_agents[0]]]
                for _ in range(4):
                    out.append(env.step({a: env.action_space(a).sample() for a in env.agents})[0][env.possible_agents[0]])
                return env.possible_agents, [env.dims[a] for a in env.possible_agents], out
            finally:
                env.close()
        names, dims, o1 = run(None)
        self.assertEqual(dims, [[0], [1], [2], [3]])
        self.assertEqual(len(set(names)), 4)
        names2, dims2, o2 = run(None)
        for x, y in zip(o1, o2):
            np.testing.assert_array_equal(x, y)
        self.assertEqual(run(2)[1], [[0, 1], [2, 3]])

    def test_bad_parts_fail_before_the_barrier(self):
        env = hwgym.parallel_env("diag-v0", agents=2, endpoint=self.endpoint, dims=4, choices=4,
                                 agent_timeout_ms=60000)
        self.addCleanup(env.close)
        env.reset(seed=0)
        t0 = time.monotonic()
        with self.assertRaises(errors.BadAction):
            env.step({"agent_0": [0, 0]})  # agent_1 missing
        with self.assertRaises(errors.BadAction):
            env.step({"agent_0": [0, 9], "agent_1": [0, 0]})  # out of range: checked before sending
        self.assertLess(time.monotonic() - t0, 5, "a bad part must not wait for the 60 s barrier timeout")
        env.step({"agent_0": [0, 1], "agent_1": [2, 3]})

    def test_aec_needs_pettingzoo(self):
        try:
            import pettingzoo  # noqa: F401
            self.skipTest("PettingZoo is installed: aec_env is checked by the local real-library check")
        except ImportError:
            pass
        with self.assertRaises(ImportError) as cm:
            hwgym.aec_env("diag-v0", endpoint=self.endpoint)
        self.assertIn("PettingZoo", str(cm.exception))


class TestPackage(unittest.TestCase):
    def test_version_in_one_place(self):
        with open(os.path.join(REPO, "clients", "python", "pyproject.toml")) as f:
            py = f.read()
        self.assertIn('dynamic = ["version"]', py)
        self.assertIn('version = {attr = "hwgym._version.__version__"}', py)
        self.assertRegex(hwgym.__version__, r"^\d+\.\d+\.\d+")
        for dep in ("pyzmq", "msgpack", "numpy"):
            self.assertRegex(py, r'dependencies = \[[^]]*"%s' % dep)
        self.assertNotRegex(py.split("[project.optional-dependencies]")[0], r'dependencies = \[[^]]*gymnasium')

    def test_pip_install_offline(self):
        try:
            import setuptools  # noqa: F401
            import wheel  # noqa: F401
            import pip  # noqa: F401
        except ImportError as e:
            self.skipTest("pip/setuptools/wheel not importable (%s): scripts/install-deps.sh installs them" % e)
        src = tempfile.mkdtemp(prefix="hwgym-pipsrc-")
        target = tempfile.mkdtemp(prefix="hwgym-pip-")
        # build from a copy: an in-tree build would leave build/ and *.egg-info in the repository
        import shutil
        shutil.copytree(os.path.join(REPO, "clients", "python"), os.path.join(src, "p"), symlinks=False,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--target", target,
                            os.path.join(src, "p")], capture_output=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr.decode()[-3000:])
        out = subprocess.run([sys.executable, "-c", "import hwgym, hwgym.trials as t; print(hwgym.__version__, hwgym.__file__, t.schema_path())"],
                             capture_output=True, env=dict(os.environ, PYTHONPATH=target, HWGYM_NO_GYMNASIUM="1"),
                             cwd=target, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        ver, path, schema = out.stdout.decode().split()
        self.assertEqual(ver, hwgym.__version__)
        self.assertTrue(path.startswith(target))
        self.assertTrue(schema.startswith(target), schema)  # trials.sql ships inside the package
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
