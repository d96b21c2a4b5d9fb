"""examples/python: the PPO example trains briefly on maestro-v0 and dram-v0 and must beat random
play on the same evaluation episodes.  Skipped (with the reason) when torch is not importable
(Debian: python3-torch) or $HWGYM_BIN is unset."""

import json
import os
import subprocess
import sys
import unittest

from ._support import REPO, ServerTestCase

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

EXAMPLE = os.path.join(REPO, "examples", "python", "ppo_multidiscrete.py")


@unittest.skipUnless(HAVE_TORCH, "torch is not importable: install python3-torch to run the training examples")
class TestTrainingExamples(ServerTestCase):
    def run_example(self, env_id, steps):
        e = dict(os.environ, PYTHONPATH=os.path.join(REPO, "clients", "python"))
        p = subprocess.run([sys.executable, EXAMPLE, "--env", env_id, "--endpoint", self.endpoint, "--total-steps", str(steps),
                            "--num-envs", "4", "--num-steps", "32", "--eval-episodes", "4"],
                           capture_output=True, env=e, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr.decode()[-3000:])
        self.assertIn("[ppo %s] update" % env_id, p.stderr.decode())
        out = json.loads(p.stdout.decode().strip().splitlines()[-1])
        self.assertEqual(out["env"], env_id)
        self.assertEqual(out["env_steps"], steps)
        self.assertGreater(out["trained_mean_reward"], out["random_mean_reward"], out)
        return out

    def test_maestro(self):
        self.run_example("maestro-v0", 1024)

    def test_dram(self):
        self.run_example("dram-v0", 1024)


class TestExampleWithoutTorch(unittest.TestCase):
    def test_message_when_torch_missing(self):
        if HAVE_TORCH:
            self.skipTest("torch is importable")
        p = subprocess.run([sys.executable, EXAMPLE, "--help"], capture_output=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "clients", "python")))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("needs torch", p.stderr.decode())


if __name__ == "__main__":
    unittest.main()
