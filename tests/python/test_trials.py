"""TrialLogger: schema, batching, wrappers, several processes writing one DB, flush at exit/SIGTERM."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import numpy as np

import hwgym
from hwgym import trials

from ._support import REPO


class FakeEnv:
    """A local 3-step env with a MultiDiscrete action (to test the wrappers without a server)."""

    def __init__(self):
        self.action_space = hwgym.spaces.MultiDiscrete([4, 4])
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, a):
        self.t += 1
        return np.full(2, self.t, np.float32), float(np.sum(a)), self.t >= 3, False, {"t": self.t, "feasible": self.t != 2}

    def close(self):
        pass


class FakeVec:
    num_envs = 2
    single_action_space = hwgym.spaces.MultiDiscrete([4])

    def __init__(self):
        self.t = np.zeros(2, int)
        self.ended = np.zeros(2, bool)

    def reset(self, *, seed=None, options=None):
        self.t[:] = 0
        return np.zeros((2, 1), np.float32), {}

    def step(self, actions):
        rew = np.zeros(2)
        for i in range(2):
            if self.ended[i]:
                self.t[i] = 0
            else:
                self.t[i] += 1
                rew[i] = actions[i][0]
        term = (self.t >= np.array([1, 2])) & ~self.ended
        self.ended = term.copy()
        info = {"t": self.t.copy(), "_t": np.ones(2, bool)}
        return self.t.reshape(2, 1).astype(np.float32), rew, term, np.zeros(2, bool), info

    def close(self):
        pass


class TestTrialLogger(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwgym-trials-")
        self.db = os.path.join(self.tmp, "t.db")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def q(self, sql, *args):
        c = sqlite3.connect(self.db)
        try:
            return c.execute(sql, args).fetchall()
        finally:
            c.close()

    def test_schema_is_the_repo_file(self):
        self.assertEqual(os.path.realpath(trials.schema_path()), os.path.realpath(os.path.join(REPO, "schemas", "trials.sql")))
        lg = hwgym.TrialLogger(self.db, agent="t", env="diag-v0")
        lg.close()
        self.assertEqual(self.q("PRAGMA user_version"), [(hwgym.SCHEMA_VERSION,)])
        self.assertEqual(self.q("PRAGMA journal_mode"), [("wal",)])
        tables = {r[0] for r in self.q("SELECT name FROM sqlite_master WHERE type='table'")}
        self.assertTrue({"runs", "trials"} <= tables)
        with open(os.path.join(REPO, "schemas", "trials.sql")) as f:
            self.assertIn("PRAGMA user_version = %d" % hwgym.SCHEMA_VERSION, f.read())

    def test_other_schema_version_is_refused(self):
        c = sqlite3.connect(self.db)
        c.execute("PRAGMA user_version = 7")
        c.close()
        with self.assertRaises(RuntimeError) as cm:
            hwgym.TrialLogger(self.db, agent="t", env="e")
        self.assertIn("version 7", str(cm.exception))

    def test_hwgym_schema_env_var(self):
        os.environ["HWGYM_SCHEMA"] = "/nonexistent/trials.sql"
        try:
            with self.assertRaises(FileNotFoundError):
                hwgym.TrialLogger(self.db, agent="t", env="e")
        finally:
            del os.environ["HWGYM_SCHEMA"]

    def test_rows_runs_and_batching(self):
        lg = hwgym.TrialLogger(self.db, agent="agent --x 1", env="diag-v0", env_config={"dims": 2}, seed=9,
                               agent_config={"lr": 0.1}, endpoint="tcp://h:1", batch_size=4, flush_interval=1e9)
        lg.begin_episode(seed=11)
        for i in range(3):
            lg.log_step(np.array([i, 1]), {"x": np.arange(4).reshape(2, 2)}, 0.25 * i, i == 2, False, {"d": np.float32(0.5)})
        self.assertEqual(self.q("SELECT count(*) FROM trials"), [(0,)])  # buffered
        lg.log_eval([1, 2], float("nan"), {"feasible": False, "runtime": 12})
        self.assertEqual(self.q("SELECT count(*) FROM trials"), [(4,)])  # batch of 4 committed
        lg.log_step([0, 0], None, 1.0, False, True, worker="w1")
        self.assertIsNone(self.q("SELECT ended_at FROM runs")[0][0])
        lg.close()
        lg.close()
        run = self.q("SELECT agent, agent_config, env, env_config, seed, endpoint, version, started_at <= ended_at FROM runs")
        self.assertEqual(run, [("agent --x 1", '{"lr":0.1}', "diag-v0", '{"dims":2}', 9, "tcp://h:1", hwgym.__version__, 1)])
        rows = self.q("SELECT worker, episode, step, kind, reset_seed, action, observation, reward, terminated, truncated, "
                      "metrics, feasible FROM trials ORDER BY id")
        self.assertEqual(rows[0], ("0", 0, 0, "step", 11, "[0,1]", '{"x":[0,1,2,3]}', 0.0, 0, 0, '{"d":0.5}', None))
        self.assertEqual(rows[2][2], 2)
        self.assertEqual(rows[2][8], 1)
        self.assertEqual(rows[3], ("0", 0, -1, "eval", None, "[1,2]", None, None, None, None,
                                   '{"feasible":false,"runtime":12}', 0))
        self.assertEqual(rows[4][:5], ("w1", 0, 0, "step", None))
        with self.assertRaises(ValueError):
            lg.log_step([0], None, 0, False, False)

    def test_wrappers(self):
        lg = hwgym.TrialLogger(self.db, agent="t", env="fake")
        env = lg.wrap(FakeEnv(), worker="a")
        for ep in range(2):
            env.reset(seed=ep)
            done = False
            while not done:
                _, _, term, trunc, _ = env.step(np.array([1, 2]))
                done = term or trunc
        venv = lg.wrap(FakeVec(), worker="v")
        venv.reset(seed=100)
        for _ in range(4):
            venv.step(np.array([[3], [4]]))
        lg.close()
        rows = self.q("SELECT episode, step, reset_seed, reward, terminated, feasible FROM trials WHERE worker='a' ORDER BY id")
        self.assertEqual(rows, [(0, 0, 0, 3.0, 0, 1), (0, 1, 0, 3.0, 0, 0), (0, 2, 0, 3.0, 1, 1),
                                (1, 0, 1, 3.0, 0, 1), (1, 1, 1, 3.0, 0, 0), (1, 2, 1, 3.0, 1, 1)])
        # sub-env 0 ends every step (then autoresets), sub-env 1 every 2 steps; autoreset steps are not logged
        v0 = self.q("SELECT episode, step, reset_seed, action FROM trials WHERE worker='v/0' ORDER BY id")
        v1 = self.q("SELECT episode, step, reset_seed, action FROM trials WHERE worker='v/1' ORDER BY id")
        self.assertEqual(v0, [(0, 0, 100, "[3]"), (1, 0, None, "[3]")])
        self.assertEqual(v1, [(0, 0, 101, "[4]"), (0, 1, 101, "[4]"), (1, 0, None, "[4]")])

    def _run_py(self, code, wait=True, **kw):
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "clients", "python"))
        p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, **kw)
        if wait:
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err.decode())
        return p

    def test_processes_share_one_db(self):
        nproc, per = 4, 5000  # as the issue asks of the C module: 4 x 5000 = 20000
        code = """
            import sys, hwgym
            w = sys.argv[1]
            lg = hwgym.TrialLogger(%r, agent="proc " + w, env="diag-v0", seed=int(w), batch_size=100)
            for i in range(%d):
                lg.log_step([i %% 8, 1], [0.5], i / 10.0, False, False, {"i": i}, worker=w)
            lg.close()
        """ % (self.db, per)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "clients", "python"))
        t0 = time.monotonic()
        ps = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(k)], env=env, stderr=subprocess.PIPE)
              for k in range(nproc)]
        for p in ps:
            _, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err.decode())
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(self.q("SELECT count(*) FROM trials"), [(nproc * per,)])
        self.assertEqual(self.q("SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), [(nproc,)])
        self.assertEqual(self.q("SELECT count(DISTINCT run_id || '/' || worker || '/' || step) FROM trials"), [(nproc * per,)])
        self.assertEqual(self.q("PRAGMA integrity_check"), [("ok",)])

    def test_flush_at_exit_and_on_sigterm(self):
        # exit without close(): atexit flushes
        self._run_py("""
            import hwgym
            import gc
            lg = hwgym.TrialLogger(%r, agent="exit", env="e", batch_size=10**6, flush_interval=1e9)
            for i in range(7):
                lg.log_step([i], None, 1.0, False, False)
            del lg  # dropped without close(): still flushed at exit
            gc.collect()
        """ % self.db)
        self.assertEqual(self.q("SELECT count(*) FROM trials"), [(7,)])
        self.assertEqual(self.q("SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), [(1,)])
        # SIGTERM while looping: the handler exits through SystemExit, atexit flushes
        p = self._run_py("""
            import sys, time, hwgym
            lg = hwgym.TrialLogger(%r, agent="term", env="e", batch_size=10**6, flush_interval=1e9)
            for i in range(5):
                lg.log_step([i], None, 1.0, False, False)
            print("ready", flush=True)
            while True:
                time.sleep(0.01)
        """ % self.db, wait=False)
        self.assertEqual(p.stdout.readline().strip(), b"ready")
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=20)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM)
        self.assertEqual(self.q("SELECT count(*) FROM trials t JOIN runs r ON r.id = t.run_id WHERE r.agent='term'"), [(5,)])

    def test_json_columns_parse(self):
        lg = hwgym.TrialLogger(self.db, agent="t", env="e")
        lg.log_step({"directives": "x"}, np.zeros((2, 2)), np.float32(0.5), np.bool_(True), False,
                    {"a": [np.int64(1)], "feasible": np.bool_(True)})
        lg.close()
        a, o, m, f = self.q("SELECT action, observation, metrics, feasible FROM trials")[0]
        self.assertEqual(json.loads(a), {"directives": "x"})
        self.assertEqual(json.loads(o), [0.0, 0.0, 0.0, 0.0])
        self.assertEqual(json.loads(m), {"a": [1], "feasible": True})
        self.assertEqual(f, 1)


if __name__ == "__main__":
    unittest.main()
