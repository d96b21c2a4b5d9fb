"""What tripped users (issue 29), at the boundary they see: the Python API against a real server
($HWGYM_BIN), a scriptable fake server, and Gymnasium/SB3 fakes where those are not installed.

One class per item: render modes, action masks, torch-safe observation keys, dead servers,
pickling, named variants, episode ends, and the smaller ones (render(), bounds, endpoint hints,
flattened observations for PettingZoo 1.24's api_test)."""

import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

import msgpack
import numpy as np
import zmq

import hwgym
from hwgym import errors
from hwgym.obs import RESERVED_KEYS, python_key, wire_key

from ._support import REPO, ServerProcess, ServerTestCase

HERE = os.path.dirname(os.path.abspath(__file__))


class TestRenderMode(ServerTestCase):
    """Item 1: a render mode warns (as Gymnasium does) instead of raising; render() says why."""

    def test_render_mode_warns(self):
        # the last case is item 9: render() on an env made without a render_mode says why too
        for factory, kw in ((hwgym.make, {"render_mode": "rgb_array"}), (hwgym.make_vec, {"num_envs": 2, "render_mode": "rgb_array"}),
                            (hwgym.make, {})):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                env = factory("dram-v0", endpoint=self.endpoint, **kw)
            try:
                if kw:
                    self.assertTrue(any("do not render" in str(x.message) for x in w), [str(x.message) for x in w])
                env.reset(seed=1)
                with self.assertRaises(NotImplementedError) as cm:
                    env.render()
                self.assertIn("hwgym envs do not render", str(cm.exception))
            finally:
                env.close()


class TestActionMask(ServerTestCase):
    """Item 2: info["action_mask"] is an int8 ndarray that sample(mask=) takes."""

    def test_single_env_mask(self):
        env = hwgym.make("mmap-v0", endpoint=self.endpoint)
        try:
            obs, info = env.reset(seed=3)
            for _ in range(20):
                m = info["action_mask"]
                self.assertIsInstance(m, np.ndarray)
                self.assertEqual(m.dtype, np.int8)
                self.assertEqual(m.shape, (int(env.action_space.n),))
                a = env.action_space.sample(mask=m)
                self.assertEqual(m[int(a)], 1)
                obs, r, term, trunc, info = env.step(a)
                if term or trunc:
                    break
        finally:
            env.close()

    def test_vector_and_multidiscrete_masks(self):
        venv = hwgym.make_vec("diag-v0", num_envs=3, endpoint=self.endpoint, dims=2, choices=4, action_mask=True)
        try:
            _, infos = venv.reset(seed=0)
            self.assertEqual(infos["action_mask"].dtype, np.int8)
            self.assertEqual(infos["action_mask"].shape, (3, 8))
            sub = hwgym.spaces.split_mask(venv.single_action_space, infos["action_mask"][0])
            self.assertIn(venv.single_action_space.sample(mask=sub), venv.single_action_space)
        finally:
            venv.close()


class TestObservationKeys(ServerTestCase):
    """Item 3: no observation key shadows a torch.nn.Module attribute (mmap-v0's `buffers`)."""

    def test_no_reserved_key_in_any_env(self):
        for eid in hwgym.ENV_IDS:
            with self.subTest(env=eid):
                env = hwgym.make(eid, endpoint=self.endpoint)
                try:
                    sp = env.observation_space
                    keys = list(sp.spaces) if hasattr(sp, "spaces") else []
                    self.assertFalse(set(keys) & RESERVED_KEYS, keys)
                    obs, _ = env.reset(seed=0)
                    if keys:
                        self.assertEqual(sorted(obs), sorted(keys))
                        self.assertTrue(sp.contains(obs))
                finally:
                    env.close()

    def test_mmap_buffers_renamed_and_wire_names_kept_on_request(self):
        env = hwgym.make("mmap-v0", endpoint=self.endpoint)
        old = hwgym.make("mmap-v0", endpoint=self.endpoint, wire_obs_keys=True)
        try:
            self.assertIn("buffers_obs", env.observation_space.spaces)
            self.assertNotIn("buffers", env.observation_space.spaces)
            self.assertIn("buffers", old.observation_space.spaces)
            a, _ = env.reset(seed=2)
            b, _ = old.reset(seed=2)
            np.testing.assert_array_equal(a["buffers_obs"], b["buffers"])
            venv = hwgym.make_vec("mmap-v0", num_envs=2, endpoint=self.endpoint)
            try:
                vobs, _ = venv.reset(seed=2)
                self.assertEqual(vobs["buffers_obs"].shape[0], 2)
                self.assertIn("buffers_obs", venv.single_observation_space.spaces)
            finally:
                venv.close()
        finally:
            env.close()
            old.close()
        self.assertEqual(python_key("buffers"), "buffers_obs")
        self.assertEqual(wire_key("buffers_obs"), "buffers")
        self.assertEqual(wire_key("supply"), "supply")


class TestDeadServer(unittest.TestCase):
    """Item 4: a dead server fails a call within 2 s, not after the 30 s request timeout."""

    def test_killed_server(self):
        srv = ServerProcess()
        env = None
        try:
            env = hwgym.make("diag-v0", endpoint=srv.endpoint, dims=3)  # default timeout: 30 s
            env.reset(seed=0)
            env.step(env.action_space.sample())
            srv.proc.kill()
            srv.proc.wait()
            for _ in range(2):  # the next calls, and the ones after, fail fast
                t0 = time.monotonic()
                with self.assertRaises(errors.ConnectionLost) as cm:
                    env.step(env.action_space.sample())
                self.assertLess(time.monotonic() - t0, 2.0)
                self.assertIn("was lost", str(cm.exception))
                self.assertIsInstance(cm.exception, ConnectionError)
            t0 = time.monotonic()
            env.close()
            self.assertLess(time.monotonic() - t0, 1.0)
            t0 = time.monotonic()  # a fresh client, no hello: envs() says no server in the connect timeout
            with self.assertRaises(errors.NoServer) as cm:
                hwgym.Client(srv.endpoint).envs()
            self.assertLess(time.monotonic() - t0, 3.0)
            self.assertIn("no hwgym-server answers", str(cm.exception))
        finally:
            if env is not None:
                env.close()
            srv.stop()

    def test_client_recovers_when_the_server_is_back(self):
        """After ConnectionLost the same client works again once a server runs at the endpoint."""
        from ._support import server_binary
        path, why = server_binary()
        if path is None:
            self.skipTest(why)
        ep = "ipc://%s/r.sock" % tempfile.mkdtemp(prefix="hwgym-back-")
        start = lambda: subprocess.Popen([path, "--bind", ep, "--workers", "1"], stdout=subprocess.DEVNULL,  # noqa: E731
                                         stderr=subprocess.DEVNULL)
        p = start()
        c = hwgym.Client(ep, timeout=10)
        try:
            c.hello()
            p.kill()
            p.wait()
            with self.assertRaises(errors.ConnectionLost):
                c.ping()
            p = start()
            deadline = time.monotonic() + 15
            while True:
                try:
                    self.assertTrue(c.ping()["ok"])
                    break
                except errors.TransportError:
                    self.assertLess(time.monotonic(), deadline, "no reconnection within 15 s")
        finally:
            c.close()
            p.terminate()
            p.wait()

    def test_hung_server_heartbeat(self):
        """A stopped (hung) server answers no heartbeat: the call fails within 2 s."""
        srv = ServerProcess()
        env = None
        try:
            env = hwgym.make("diag-v0", endpoint=srv.endpoint, dims=3)
            env.reset(seed=0)
            srv.proc.send_signal(signal.SIGSTOP)
            t0 = time.monotonic()
            with self.assertRaises(errors.ConnectionLost):
                env.step(env.action_space.sample())
            self.assertLess(time.monotonic() - t0, 2.0)
        finally:
            srv.proc.send_signal(signal.SIGCONT)
            if env is not None:
                env.close()
            srv.stop()

    def test_drop_while_waiting_for_the_reply(self):
        """The server goes away after taking the request: the client sees the disconnection."""
        tmp = tempfile.mkdtemp(prefix="hwgym-drop-")
        ep = "ipc://%s/d.sock" % tmp
        ctx = zmq.Context()
        router = ctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind(ep)
        got = threading.Event()

        def serve():
            for _ in range(2):  # answer ping, then take "slow" and vanish
                if not router.poll(5000):
                    return
                ident, body = router.recv_multipart()
                msg = msgpack.unpackb(body, raw=False)
                if msg["op"] == "ping":
                    router.send_multipart([ident, msgpack.packb({"ok": True, "id": msg["id"]})])
                else:
                    got.set()
                    time.sleep(0.2)
                    router.close(0)
                    return

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        c = hwgym.Client(ep, timeout=30)
        try:
            c.ping()
            t0 = time.monotonic()
            with self.assertRaises(errors.ConnectionLost) as cm:
                c.request("slow")
            self.assertTrue(got.is_set())
            self.assertLess(time.monotonic() - t0, 2.0)
            self.assertIn("while waiting for the reply to 'slow'", str(cm.exception))
        finally:
            c.close()
            t.join(5)
            ctx.term()

    def test_endpoint_without_scheme_gets_a_hint(self):
        with self.assertRaises(errors.TransportError) as cm:
            hwgym.Client("127.0.0.1:5555")
        self.assertIn("tcp://127.0.0.1:5555", str(cm.exception))
        with self.assertRaises(errors.TransportError) as cm:
            hwgym.make("diag-v0", endpoint="/tmp/hwgym.sock")
        self.assertIn("ipc:///tmp/hwgym.sock", str(cm.exception))


class TestPickle(ServerTestCase):
    """Item 5: pickling says the env holds a connection and to pass a factory."""

    def test_pickle_message(self):
        env = hwgym.make("diag-v0", endpoint=self.endpoint, dims=2)
        venv = hwgym.make_vec("diag-v0", num_envs=2, endpoint=self.endpoint, dims=2)
        try:
            for obj in (env, venv, env.client):
                with self.subTest(obj=type(obj).__name__):
                    with self.assertRaises(TypeError) as cm:
                        pickle.dumps(obj)
                    msg = str(cm.exception)
                    self.assertIn("connection", msg)
                    self.assertNotIn("__cinit__", msg)
            with self.assertRaises(TypeError) as cm:
                pickle.dumps(env)
            self.assertIn("factory", str(cm.exception))
            # the documented way: a factory, and spec.kwargs remake the env
            again = hwgym.make(**env.spec.kwargs)
            self.assertEqual(again.action_space, env.action_space)
            again.close()
        finally:
            env.close()
            venv.close()


class TestVariants(ServerTestCase):
    """Item 7: the papers' setups as ids, through hwgym.make and Gymnasium's "module:id" form."""

    server_args = ("--workers", "1")

    def test_every_variant_makes_and_steps(self):
        for vid, (base, cfg, what) in hwgym.VARIANTS.items():
            with self.subTest(variant=vid):
                env = hwgym.make("hwgym/" + vid, endpoint=self.endpoint)
                try:
                    self.assertEqual(env.env_id, base)
                    for k, v in cfg.items():
                        self.assertEqual(env.config[k], v)
                    env.reset(seed=0)
                    out = env.step(env.action_space.sample())
                    self.assertEqual(len(out), 5)
                finally:
                    env.close()
        env = hwgym.make("dram-tdm-v0", endpoint=self.endpoint, objective="power")  # kwargs override
        try:
            self.assertEqual(env.config["objective"], "power")
            self.assertEqual(env.config["action_space"], "tdm")
        finally:
            env.close()

    def test_gymnasium_module_id(self):
        script = ("import gymnasium, os\n"
                  "assert 'hwgym' not in __import__('sys').modules\n"
                  "env = gymnasium.make('hwgym:hwgym/dram-tdm-v0', endpoint=os.environ['EP'])\n"
                  "assert env.config['action_space'] == 'tdm', env.config\n"
                  "env.reset(seed=0); env.step(0); env.close()\n"
                  "print('OK')\n")
        e = dict(os.environ, EP=self.endpoint, PYTHONPATH=os.pathsep.join(
            [os.path.join(HERE, "fake_gymnasium"), os.path.join(REPO, "clients", "python"), REPO]))
        p = subprocess.run([sys.executable, "-c", script], env=e, capture_output=True, timeout=60, cwd=REPO)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertEqual(p.stdout.decode().split(), ["OK"])


class TestEpisodeEnds(ServerTestCase):
    """Item 8: a fixed horizon that is a time limit ends with truncated=True; a terminal state of
    the task (mmap-v0: every buffer decided, or an illegal action) with terminated=True."""

    HORIZONS = {"diag-v0": ({"episode_length": 2}, 2), "dram-v0": ({"episode_length": 2, "count": 2000}, 2),
                "maestro-v0": ({"episode_length": 2}, 2), "placement-v0": ({"workload": "bert_base", "episode_steps": 2}, 2),
                "sched-v0": ({"steps_per_layer": 2}, 2)}

    def test_time_limits_truncate(self):
        for eid, (cfg, n) in self.HORIZONS.items():
            with self.subTest(env=eid):
                env = hwgym.make(eid, endpoint=self.endpoint, **cfg)
                try:
                    env.reset(seed=0)
                    for t in range(n):
                        a = env.action_space.sample()
                        _, _, term, trunc, info = env.step(a)
                        self.assertFalse(term)
                        self.assertEqual(trunc, t == n - 1, "step %d" % t)
                finally:
                    env.close()

    def test_mmap_illegal_action_terminates(self):
        env = hwgym.make("mmap-v0", endpoint=self.endpoint)
        try:
            _, info = env.reset(seed=0)
            bad = np.flatnonzero(info["action_mask"] == 0)
            if bad.size == 0:
                self.skipTest("every action legal at this state")
            _, r, term, trunc, info = env.step(int(bad[0]))
            self.assertTrue(term)
            self.assertFalse(trunc)
            self.assertIn("illegal_action", info)
        finally:
            env.close()


class TestSmaller(ServerTestCase):
    """Item 9: dram-v0's unbounded observation is inf; flatten_obs gives PettingZoo 1.24's api_test
    the Box it checks (its Dict check wants an "observation" key)."""

    def test_dram_upper_bound_is_inf(self):
        env = hwgym.make("dram-v0", endpoint=self.endpoint)
        try:
            hi = env.observation_space.high
            self.assertTrue(np.isinf(hi[:3]).all(), hi)
            self.assertLess(float(np.max(env.observation_space.low)), 1)
        finally:
            env.close()

    def test_flatten_obs_for_pettingzoo_124(self):
        env = hwgym.parallel_env("placement-v0", agents=2, endpoint=self.endpoint, flatten_obs=True)
        try:
            sp = env.observation_space(env.possible_agents[0])
            self.assertEqual(type(sp).__name__, "Box")
            obs, infos = env.reset(seed=0)
            while env.agents:
                for a, o in obs.items():
                    self.assertEqual(o.dtype, sp.dtype)
                    self.assertTrue(sp.contains(o))
                obs, r, term, trunc, infos = env.step({a: env.action_space(a).sample() for a in env.agents})
        finally:
            env.close()


if __name__ == "__main__":
    unittest.main()
