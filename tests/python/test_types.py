"""Type information (issue 29 item 6): the package ships py.typed, `mypy --strict` passes on it
(configured in clients/python/pyproject.toml), and the public API's types are real: a user
program using make / make_vec / Client / parallel_env / TrialLogger / spaces checks clean, and one
that misuses a return type is an error.  Skipped, saying so, when mypy is not installed
(Debian: apt-get install mypy; scripts/install-deps.sh installs it)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from ._support import REPO

PKG = os.path.join(REPO, "clients", "python")

GOOD = '''
from typing import Any, Dict, List
import numpy as np
import hwgym

env: hwgym.HwEnv = hwgym.make("diag-v0", endpoint="ipc:///x", dims=3)
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
r: float = reward
done: bool = terminated or truncated
meta: Dict[str, Any] = info
venv: hwgym.HwVectorEnv = hwgym.make_vec("diag-v0", 4)
_, rewards, terms, truncs, infos = venv.step(venv.action_space.sample())
mean: float = float(np.mean(rewards))
c: hwgym.Client = hwgym.Client("tcp://127.0.0.1:5555", timeout=5.0)
envs: List[Dict[str, Any]] = c.envs()
pz: hwgym.HwParallelEnv = hwgym.parallel_env("dram-v0", agents=2)
o, infos2 = pz.reset(seed=1)
log: hwgym.TrialLogger = hwgym.TrialLogger("t.db", agent="a", env="diag-v0", seed=0)
space = hwgym.spaces.Discrete(3)
ok: bool = space.contains(1)
err: hwgym.HwgymError = hwgym.ConnectionLost("IO", "lost")
'''

BAD = '''
import hwgym
n: int = hwgym.make("diag-v0")           # an HwEnv is not an int
s: str = hwgym.make_vec("diag-v0").step([0])[1]   # rewards are an array
hwgym.make(3)                             # an env id is a str
'''


class TestTypes(unittest.TestCase):
    def setUp(self):
        self.mypy = shutil.which("mypy")
        if self.mypy is None:
            self.skipTest("mypy is not installed (Debian: apt-get install mypy; scripts/install-deps.sh installs it)")

    def run_mypy(self, *args, cwd=PKG):
        p = subprocess.run([self.mypy, "--no-incremental", "--cache-dir", os.devnull] + list(args), cwd=cwd,
                           capture_output=True, timeout=600, env=dict(os.environ, MYPYPATH=PKG))
        return p.returncode, p.stdout.decode() + p.stderr.decode()

    def test_py_typed_ships(self):
        self.assertTrue(os.path.exists(os.path.join(PKG, "hwgym", "py.typed")))
        with open(os.path.join(PKG, "pyproject.toml")) as f:
            self.assertIn('"py.typed"', f.read())

    def test_package_is_strict_clean(self):
        rc, out = self.run_mypy("--strict", "hwgym")
        self.assertEqual(rc, 0, out)

    def test_public_api_types_are_real(self):
        d = tempfile.mkdtemp(prefix="hwgym-types-")
        for name, text in (("good.py", GOOD), ("bad.py", BAD)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        cfg = ["--strict", "--config-file", os.path.join(PKG, "pyproject.toml")]
        rc, out = self.run_mypy(*cfg, os.path.join(d, "good.py"))
        self.assertEqual(rc, 0, out)
        rc, out = self.run_mypy(*cfg, os.path.join(d, "bad.py"))
        self.assertNotEqual(rc, 0, out)
        self.assertIn('bad.py:3: error: Incompatible types in assignment (expression has type "HwEnv"', out)
        self.assertIn("bad.py:4: error", out)
        self.assertIn("bad.py:5: error", out)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
