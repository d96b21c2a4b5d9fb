"""End to end against a real hwgym-server ($HWGYM_BIN/hwgym-server) and diag-v0."""

import os
import shutil
import sqlite3
import tempfile
import threading
import time
import unittest

import numpy as np

import hwgym
from hwgym import errors
from hwgym.spaces import split_mask

from ._support import ServerTestCase


def run_episode(env, seed, actions):
    obs, info = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        o, r, term, trunc, info = env.step(a)
        out.append((o, r, term, trunc))
    return out


class TestSingleEnv(ServerTestCase):
    def make(self, **cfg):
        env = hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, **cfg)
        self.addCleanup(env.close)
        return env

    def test_handshake_ping_envs_stats(self):
        with hwgym.Client(self.endpoint, timeout=10) as c:
            h = c.hello()
            self.assertIn(1, h["protocols"])
            self.assertIn("diag-v0", h["envs"])
            self.assertIsInstance(c.ping()["time"], float)
            self.assertIn("diag-v0", [e["id"] for e in c.envs()])
            env = self.make()
            env.reset(seed=0)
            env.step(env.action_space.sample())
            st = c.stats()
            self.assertGreaterEqual(st["sessions"], 1)
            self.assertGreaterEqual(st["steps"], 1)
            self.assertIn("step", st["ops"])
            self.assertIn("p99_us", st["ops"]["step"])
        with hwgym.Client(self.endpoint, timeout=10, version=2) as c2:
            with self.assertRaises(errors.UnsupportedVersion) as cm:
                c2.ping()
            self.assertIn("2", cm.exception.message)

    def test_gymnasium_api_contract(self):
        env = self.make(dims=3, episode_length=4)
        self.assertEqual(env.spec.id, "diag-v0")
        self.assertIsInstance(env.metadata, dict)
        self.assertIs(env.unwrapped, env)
        self.assertEqual(env.action_space.shape, (3,))
        self.assertEqual(env.action_space.names, ["p0", "p1", "p2"])
        self.assertEqual(env.action_space.labels[1][7], "v7")
        self.assertEqual(env.observation_space.shape, (5,))
        self.assertEqual(env.observation_space.names[3:], ["noise", "progress"])
        r = env.reset(seed=1)
        self.assertIsInstance(r, tuple)
        self.assertEqual(len(r), 2)
        obs, info = r
        self.assertIsInstance(info, dict)
        self.assertIn(obs, env.observation_space)
        self.assertIsInstance(env.np_random, np.random.Generator)
        for t in range(4):
            r = env.step(env.action_space.sample())
            self.assertEqual(len(r), 5)
            obs, rew, term, trunc, info = r
            self.assertIn(obs, env.observation_space)
            self.assertIsInstance(rew, float)
            self.assertIsInstance(term, bool)
            self.assertIsInstance(trunc, bool)
            self.assertFalse(term)  # diag-v0's horizon is a time limit: the episode ends truncated
            self.assertEqual(trunc, t == 3)
            self.assertEqual(info["t"], t + 1)
        with self.assertRaises(errors.BadState):  # the episode is over
            env.step(env.action_space.sample())
        env.close()
        env.close()
        self.assertTrue(env.closed)

    def test_reward_at_target_is_one(self):
        env = self.make(dims=2, choices=4)
        env.reset(seed=0)
        best = max((env.evaluate([a, b])[0], (a, b)) for a in range(4) for b in range(4))
        self.assertEqual(best[0], 1.0)
        env.reset(seed=0)
        self.assertEqual(env.step(np.array(best[1]))[1], 1.0)

    def test_seeds_reproducible(self):
        acts = [np.array([i % 8, (3 * i) % 8, 1, 2]) for i in range(6)]
        e1, e2 = self.make(), self.make()
        a, b = run_episode(e1, 123, acts), run_episode(e2, 123, acts)
        np.testing.assert_array_equal(a[0], b[0])
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_array_equal(x[0], y[0])
            self.assertEqual(x[1:], y[1:])
        c = run_episode(e1, 124, acts)
        self.assertFalse(np.array_equal(a[0], c[0]))  # the seed drives the noise
        # np_random follows reset(seed=) like Gymnasium's
        e1.reset(seed=5)
        x = e1.np_random.random()
        e1.reset(seed=5)
        self.assertEqual(e1.np_random.random(), x)

    def test_errors_carry_codes(self):
        with self.assertRaises(errors.UnknownEnv) as cm:
            hwgym.make("no-such-env-v0", endpoint=self.endpoint, timeout=10)
        self.assertEqual(cm.exception.code, "UNKNOWN_ENV")
        with self.assertRaises(errors.BadConfig) as cm:
            hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, dims=0)
        self.assertIn("dims", cm.exception.message)
        with self.assertRaises(errors.BadConfig) as cm:
            hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, bogus_key=1)
        self.assertIn("bogus_key", cm.exception.message)
        env = self.make(dims=3)
        with self.assertRaises(errors.BadState):
            env.step(np.array([0, 0, 0]))
        env.reset(seed=0)
        with self.assertRaises(errors.BadAction) as cm:
            env.step(np.array([0, 9, 0]))
        self.assertEqual(cm.exception.code, "BAD_ACTION")
        self.assertTrue("1" in cm.exception.message or "p1" in cm.exception.message, cm.exception.message)
        with self.assertRaises(errors.BadAction):
            env.step(np.array([0, 0]))
        with self.assertRaises(errors.BadAction):
            env.step(np.array([0.5, 1, 1]))
        env.step([1, 2, 3])  # a plain list works too
        sess = env.session
        env.close()
        with hwgym.Client(self.endpoint, timeout=10) as c:
            with self.assertRaises(errors.UnknownSession):
                c.step(sess, [0, 0, 0])
            with self.assertRaises(errors.UnknownOp):
                c.request("frobnicate")

    def test_other_spaces(self):
        d = self.make(action_space="discrete", choices=5)
        self.assertIsInstance(d.action_space, hwgym.spaces.Discrete)
        self.assertEqual(d.action_space.n, 5)
        d.reset(seed=0)
        self.assertEqual(len(d.step(d.action_space.sample())), 5)
        d.step(np.int64(2))
        b = self.make(action_space="box", dims=2)
        self.assertIsInstance(b.action_space, hwgym.spaces.Box)
        b.reset(seed=0)
        b.step(b.action_space.sample())
        with self.assertRaises(errors.BadAction):
            b.step(np.array([2.0, 0.0], np.float32))
        m = self.make(action_space="multibinary", dims=6)
        self.assertIsInstance(m.action_space, hwgym.spaces.MultiBinary)
        m.reset(seed=0)
        m.step(m.action_space.sample())
        dd = self.make(obs="dict", dims=3)
        self.assertIsInstance(dd.observation_space, hwgym.spaces.Dict)
        obs, _ = dd.reset(seed=0)
        self.assertEqual(set(obs), {"last_action", "noise", "t"})
        self.assertEqual(obs["t"].shape, ())
        self.assertEqual(obs["t"].dtype, np.int64)
        self.assertEqual(obs["noise"].dtype, np.float64)
        self.assertIn(obs, dd.observation_space)
        obs, *_ = dd.step(dd.action_space.sample())
        self.assertEqual(int(obs["t"]), 1)
        self.assertIn(obs, dd.observation_space)

    def test_action_mask(self):
        env = self.make(dims=3, choices=4, action_mask=True)
        _, info = env.reset(seed=0)
        mask = split_mask(env.action_space, info["action_mask"])
        self.assertEqual(len(mask), 3)
        a = env.action_space.sample(mask=mask)
        self.assertIn(a, env.action_space)
        env.step(a)

    def test_snapshot_restore_bit_identical(self):
        env = self.make(dims=4)
        env.reset(seed=9)
        env.step([1, 2, 3, 4])
        snap = env.snapshot()
        acts = [[i % 8, 7, 0, i % 3] for i in range(5)]
        ref = [env.step(a) for a in acts]
        for _ in range(2):  # a snapshot survives any number of restores
            env.restore(snap)
            again = [env.step(a) for a in acts]
            for x, y in zip(ref, again):
                self.assertEqual(x[0].tobytes(), y[0].tobytes())
                self.assertEqual(x[1:4], y[1:4])
        env.drop_snapshot(snap)
        with self.assertRaises(errors.UnknownSnapshot):
            env.restore(snap)

    def test_evaluate_and_batch(self):
        env = self.make(dims=3)
        pts = [[i % 8, (i * 5) % 8, (i * 3) % 8] for i in range(40)]
        single = [env.evaluate(p) for p in pts]
        self.assertTrue(all(m.get("feasible") is True for _, m in single))
        rew, metrics, errs = env.evaluate_batch(pts)
        self.assertEqual(rew.shape, (40,))
        np.testing.assert_array_equal(rew, [r for r, _ in single])
        self.assertEqual(errs, [None] * 40)
        self.assertAlmostEqual(metrics[3]["distance"], single[3][1]["distance"])
        rew2, _, _ = env.evaluate_batch(np.array(pts, dtype=np.int64))  # as a 2-D wire array
        np.testing.assert_array_equal(rew2, rew)
        bad = pts[:2] + [[0, 99, 0], [1, 2]] + pts[2:4]
        rew3, _, errs3 = env.evaluate_batch(bad)
        self.assertTrue(np.isnan(rew3[2]) and np.isnan(rew3[3]))
        self.assertIsInstance(errs3[2], errors.BadAction)
        self.assertIsNone(errs3[4])
        np.testing.assert_array_equal(rew3[[0, 1, 4, 5]], rew[:4])
        with hwgym.Client(self.endpoint, timeout=10) as c:
            r, m = c.evaluate([1, 2, 3], env="diag-v0", config={"dims": 3})
            self.assertEqual(r, env.evaluate([1, 2, 3])[0])
            rb, _, _ = c.evaluate_batch([[1, 2, 3]], env="diag-v0", config={"dims": 3})
            self.assertEqual(rb[0], r)
            with self.assertRaises(errors.BadAction):
                c.evaluate([1, 2, 30], env="diag-v0", config={"dims": 3})

    def test_threads_share_one_client(self):
        with hwgym.Client(self.endpoint, timeout=10) as c:
            envs = [hwgym.make("diag-v0", client=c, dims=2, episode_length=1000) for _ in range(4)]
            errs = []

            def work(e, k):
                try:
                    e.reset(seed=k)
                    for i in range(50):
                        e.step([i % 8, k])
                except Exception as ex:  # reported below
                    errs.append(ex)
            ts = [threading.Thread(target=work, args=(e, k)) for k, e in enumerate(envs)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            for e in envs:
                e.close()
            self.assertEqual(errs, [])
            self.assertFalse(c.closed)  # envs made on a given client leave it open

    def test_trial_log_of_real_env(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        db = os.path.join(tmp, "t.db")
        with hwgym.TrialLogger(db, agent="test", env="diag-v0", env_config={"dims": 3}, seed=0,
                               endpoint=self.endpoint) as log:
            env = log.wrap(self.make(dims=3, episode_length=3))
            for ep in range(2):
                env.reset(seed=ep)
                done = False
                while not done:
                    _, _, term, trunc, _ = env.step(env.action_space.sample())
                    done = term or trunc
            r, m = env.unwrapped.evaluate([1, 2, 3])
            log.log_eval([1, 2, 3], r, m)
        c = sqlite3.connect(db)
        rows = c.execute("SELECT episode, step, reset_seed, truncated FROM trials WHERE kind='step' ORDER BY id").fetchall()
        self.assertEqual(rows, [(0, 0, 0, 0), (0, 1, 0, 0), (0, 2, 0, 1), (1, 0, 1, 0), (1, 1, 1, 0), (1, 2, 1, 1)])
        self.assertEqual(c.execute("SELECT feasible FROM trials WHERE kind='eval'").fetchall(), [(1,)])
        c.close()


class TestReplayOfPythonLog(ServerTestCase):
    """The C tools read what the Python logger writes: `hwgym replay` re-executes a Python-logged run."""

    def test_hwgym_replay_matches(self):
        import json
        import subprocess
        cli = os.path.join(os.environ.get("HWGYM_BIN", ""), "hwgym")
        if not os.access(cli, os.X_OK):
            self.skipTest("%s not built" % cli)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        db = os.path.join(tmp, "r.db")
        for cfg in ({"dims": 3, "episode_length": 4}, {"dims": 2, "episode_length": 3, "obs": "dict", "action_space": "box"}):
            with hwgym.TrialLogger(db, agent="py", env="diag-v0", env_config=cfg, endpoint=self.endpoint) as log:
                with hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, **cfg) as raw:
                    env = log.wrap(raw)
                    for ep in range(2):
                        env.reset(seed=10 + ep)
                        done = False
                        while not done:
                            _, _, term, trunc, _ = env.step(env.action_space.sample())
                            done = term or trunc
                    pt = [0.5, -0.25] if cfg.get("action_space") == "box" else [1, 2, 3]
                    r, m = raw.evaluate(pt)
                    log.log_eval(pt, r, m)
            run = str(log.run_id)
            p = subprocess.run([cli, "replay", db, "--endpoint", self.endpoint, "--run", run],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            out = json.loads(p.stdout)
            self.assertEqual(out["trials"], 2 * cfg["episode_length"] + 1)
            self.assertEqual(out["matching"], out["trials"])


class TestVector(ServerTestCase):
    def make_vec(self, n, **cfg):
        env = hwgym.make_vec("diag-v0", n, endpoint=self.endpoint, timeout=10, **cfg)
        self.addCleanup(env.close)
        return env

    def test_spaces_and_shapes(self):
        v = self.make_vec(3, dims=4)
        self.assertEqual(v.num_envs, 3)
        self.assertEqual(v.single_action_space.shape, (4,))
        self.assertEqual(v.action_space.shape, (3, 4))
        self.assertEqual(v.single_observation_space.shape, (6,))
        self.assertEqual(v.observation_space.shape, (3, 6))
        obs, infos = v.reset(seed=0)
        self.assertEqual(obs.shape, (3, 6))
        self.assertIsInstance(infos, dict)
        self.assertIn(obs, v.observation_space)
        obs, rew, term, trunc, infos = v.step(v.action_space.sample())
        self.assertEqual((obs.shape, rew.shape, term.shape, trunc.shape), ((3, 6), (3,), (3,), (3,)))
        self.assertEqual((rew.dtype, term.dtype, trunc.dtype), (np.float64, np.bool_, np.bool_))
        np.testing.assert_array_equal(infos["t"], [1, 1, 1])
        np.testing.assert_array_equal(infos["_t"], [True, True, True])
        self.assertEqual(infos["distance"].dtype, np.float64)
        self.assertIn("autoreset_mode", v.metadata)
        v.close()
        v.close()

    def test_autoreset_next_step(self):
        v = self.make_vec(3, dims=2, episode_length=2)
        obs0, _ = v.reset(seed=10)
        a = np.array([[1, 1], [2, 2], [3, 3]])
        _, r1, t1, _, i1 = v.step(a)
        self.assertFalse(t1.any())
        self.assertTrue((r1 > 0).all())
        o2, r2, t2, tr2, i2 = v.step(a)
        self.assertTrue(tr2.all())  # diag-v0's horizon is a time limit: truncated
        self.assertFalse(t2.any())
        np.testing.assert_allclose(o2[:, -1], 1.0)  # progress t/len of the final obs
        # next step: every sub-env is reset, its action ignored
        o3, r3, t3, tr3, i3 = v.step(np.array([[7, 7], [7, 7], [7, 7]]))
        np.testing.assert_array_equal(r3, [0, 0, 0])
        self.assertFalse(t3.any() or tr3.any())
        np.testing.assert_array_equal(o3[:, :2], 0)  # last_action cleared by the reset
        np.testing.assert_array_equal(o3[:, -1], 0)
        self.assertTrue(i3["autoreset"].all())
        self.assertTrue(i3["_autoreset"].all())
        # and the following step is a normal first step again
        _, r4, t4, _, i4 = v.step(a)
        np.testing.assert_array_equal(r4, r1)
        np.testing.assert_array_equal(i4["t"], [1, 1, 1])
        self.assertNotIn("autoreset", i4)

    def test_autoreset_only_ended_subenvs(self):
        v = self.make_vec(2, dims=1, episode_length=1, choices=4)
        v.reset(seed=0)
        _, _, t, tr, _ = v.step(np.array([[0], [1]]))
        self.assertTrue(tr.all() and not t.any())
        _, r, t, _, info = v.step(np.array([[0], [1]]))
        np.testing.assert_array_equal(r, [0, 0])
        self.assertTrue(info["_autoreset"].all())

    def test_seeds_match_single_envs(self):
        v = self.make_vec(3, dims=3)
        acts = [np.array([[i % 8, 2, 3], [4, i % 8, 6], [7, 0, i % 8]]) for i in range(4)]
        obs_int, _ = v.reset(seed=50)
        steps = [v.step(a) for a in acts]
        obs_list, _ = v.reset(seed=[50, 51, 52])
        np.testing.assert_array_equal(obs_int, obs_list)
        with hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, dims=3) as e:
            for i in range(3):
                o, _ = e.reset(seed=50 + i)
                np.testing.assert_array_equal(o, obs_int[i])
                for k, a in enumerate(acts):
                    o, r, *_ = e.step(a[i])
                    np.testing.assert_array_equal(o, steps[k][0][i])
                    self.assertEqual(r, steps[k][1][i])
        # no seed: the streams continue (different noise than the seeded reset)
        obs_cont, _ = v.reset()
        self.assertFalse(np.array_equal(obs_cont, obs_int))

    def test_discrete_and_dict_vectors(self):
        v = self.make_vec(4, action_space="discrete", obs="dict", choices=6)
        self.assertEqual(v.action_space.shape, (4,))
        obs, _ = v.reset(seed=1)
        self.assertEqual(obs["last_action"].shape, (4, 1))
        self.assertEqual(obs["t"].shape, (4,))
        obs, rew, *_ = v.step(v.action_space.sample())
        np.testing.assert_array_equal(obs["t"], [1, 1, 1, 1])
        self.assertIn(obs, v.observation_space)
        with self.assertRaises(errors.BadAction):
            v.step(np.zeros(3, np.int64))  # wrong leading axis

    def test_vector_trial_log(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        db = os.path.join(tmp, "v.db")
        with hwgym.TrialLogger(db, agent="vec", env="diag-v0") as log:
            v = log.wrap(self.make_vec(2, dims=2, episode_length=2))
            v.reset(seed=3)
            for _ in range(5):
                v.step(v.action_space.sample())
        c = sqlite3.connect(db)
        rows = c.execute("SELECT worker, episode, step, reset_seed FROM trials ORDER BY id").fetchall()
        c.close()
        # steps 1,2 logged; step 3 is the autoreset; steps 4,5 logged as episode 1
        self.assertEqual([r for r in rows if r[0] == "0/1"], [("0/1", 0, 0, 4), ("0/1", 0, 1, 4), ("0/1", 1, 0, None), ("0/1", 1, 1, None)])


class TestMultiAgent(ServerTestCase):
    def test_workers_in_threads(self):
        ma = hwgym.make_multiagent("diag-v0", {"a0": [0, 1], "a1": [2, 3]}, endpoint=self.endpoint, timeout=10, dims=4)
        self.addCleanup(ma.close)
        self.assertEqual(set(ma.agents), {"a0", "a1"})
        results, errs = {}, []
        parts = {"a0": [np.array([i % 8, 1]) for i in range(5)], "a1": [np.array([2, (i * 3) % 8]) for i in range(5)]}

        def worker(name):
            try:
                w = hwgym.join(ma.session, name, endpoint=self.endpoint, timeout=10)
                self.assertEqual(w.action_space.shape, (2,))
                out = [w.reset(seed=77)[0]]
                for a in parts[name]:
                    out.append(w.step(a))
                w.close()
                results[name] = (w.dims, out)
            except Exception as e:  # reported below
                errs.append(e)
        ts = [threading.Thread(target=worker, args=(n,)) for n in ("a0", "a1")]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        self.assertEqual(errs, [])
        self.assertEqual(results["a0"][0], [0, 1])
        self.assertEqual(results["a1"][0], [2, 3])
        o0, o1 = results["a0"][1], results["a1"][1]
        np.testing.assert_array_equal(o0[0], o1[0])
        with hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10, dims=4) as single:
            ref0, _ = single.reset(seed=77)
            np.testing.assert_array_equal(ref0, o0[0])
            for k in range(5):
                joint = np.concatenate([parts["a0"][k], parts["a1"][k]])
                ro, rr, *_ = single.step(joint)
                for out in (o0, o1):
                    np.testing.assert_array_equal(out[k + 1][0], ro)
                    self.assertEqual(out[k + 1][1], rr)
                    np.testing.assert_array_equal(out[k + 1][4]["action"], joint)

    def test_barrier_timeout_and_errors(self):
        ma = hwgym.make_multiagent("diag-v0", [{"name": "x", "dims": [0]}, {"name": "y", "dims": [1]}],
                                   endpoint=self.endpoint, timeout=10, agent_timeout_ms=300, dims=2)
        self.addCleanup(ma.close)
        w = ma.join("x")
        self.addCleanup(w.close)
        with self.assertRaises(errors.BarrierTimeout) as cm:
            w.reset(seed=1)  # y never comes
        self.assertIn("y", cm.exception.message)
        with self.assertRaises(errors.UnknownAgent):
            ma.join("nobody")
        y = ma.join("y")
        self.addCleanup(y.close)
        got = {}
        t = threading.Thread(target=lambda: got.setdefault("y", y.reset(seed=1)))
        t.start()
        ox, _ = w.reset(seed=1)
        t.join(10)
        np.testing.assert_array_equal(ox, got["y"][0])
        t0 = time.monotonic()
        with self.assertRaises(errors.BadAction):
            w.step(np.array([0, 1]))  # wrong part size: answered at once, not counted
        self.assertLess(time.monotonic() - t0, 0.25)
        with self.assertRaises(errors.BarrierTimeout) as cm:
            w.step(np.array([1]))
        self.assertIn("y", cm.exception.message)
        with hwgym.make("diag-v0", endpoint=self.endpoint, timeout=10) as plain:
            with self.assertRaises(errors.BadState):
                hwgym.join(plain.session, "x", endpoint=self.endpoint, timeout=10)

    def test_restarted_worker_supersedes_and_logging(self):
        ma = hwgym.make_multiagent("diag-v0", {"x": [0], "y": [1]}, endpoint=self.endpoint, timeout=10, dims=2)
        self.addCleanup(ma.close)
        old, new, y = ma.join("x"), ma.join("x"), ma.join("y")
        for w in (old, new, y):
            self.addCleanup(w.close)
        got = {}

        def call(name, fn):
            try:
                got[name] = fn()
            except Exception as e:
                got[name] = e
        t_old = threading.Thread(target=call, args=("old", lambda: old.reset(seed=3)))
        t_old.start()
        time.sleep(0.2)  # old's part is in; now the "restarted" x sends its own
        t_new = threading.Thread(target=call, args=("new", lambda: new.reset(seed=3)))
        t_new.start()
        t_old.join(10)
        self.assertIsInstance(got["old"], errors.Superseded)
        y.reset(seed=3)
        t_new.join(10)
        self.assertIsInstance(got["new"], tuple)
        # a worker's steps can be logged like an env's
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        db = os.path.join(tmp, "ma.db")
        with hwgym.TrialLogger(db, agent="ma", env="diag-v0") as log:
            wx = log.wrap(new, worker="x")
            t = threading.Thread(target=call, args=("y", lambda: [y.step([k]) for k in range(3)]))
            t.start()
            for k in range(3):
                wx.step(np.array([k]))
            t.join(10)
        c = sqlite3.connect(db)
        rows = c.execute("SELECT worker, step, action, metrics FROM trials ORDER BY id").fetchall()
        c.close()
        self.assertEqual([r[:3] for r in rows], [("x", 0, "[0]"), ("x", 1, "[1]"), ("x", 2, "[2]")])
        self.assertIn('"action":[2,2]', rows[2][3])  # the joint action is in the step info


if __name__ == "__main__":
    unittest.main()
