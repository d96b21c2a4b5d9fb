"""`hwgym placement-bound --config JSON` (docs/placement.md "Headroom bounds"): JSON on stdout
with capacity_free >= capacity_aware >= 1 and the hand-computed chain3 values of
tests/c/placement/test_placement_bound.c; bad input exits 2 naming the problem."""

import json
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHAIN = {"graph_file": "tests/data/placement/chain3.json", "hw_file": "tests/data/placement/chain3_hw.json"}


class PlacementBound(unittest.TestCase):
    def setUp(self):
        d = os.environ.get("HWGYM_BIN")
        if not d or not os.access(os.path.join(d, "hwgym"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym is required (run via make test-py)")
        self.hwgym = os.path.join(d, "hwgym")

    def run_cli(self, *args):
        return subprocess.run([self.hwgym, "placement-bound", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)

    def test_chain3_by_hand(self):
        p = self.run_cli("--config", json.dumps(CHAIN))
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertAlmostEqual(out["baseline_latency_us"], 0.970, places=12)
        self.assertAlmostEqual(out["capacity_free"], 970 / 917, places=12)
        self.assertAlmostEqual(out["capacity_aware"], 970 / 926, places=12)
        self.assertEqual(out["workload"], "chain3")

    def test_nnpi_preset(self):
        p = self.run_cli("--config", '{"workload":"resnet50","hw":"nnp-i"}', "--iterations", "50")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out["hw"], "nnp-i")
        self.assertGreaterEqual(out["capacity_free"], out["capacity_aware"])
        self.assertGreaterEqual(out["capacity_aware"], 1.0)

    def test_errors(self):
        p = self.run_cli("--config", '{"hw":"nope"}')
        self.assertEqual(p.returncode, 2)
        self.assertIn("config.hw: unknown preset 'nope'", p.stderr)
        p = self.run_cli("--iterations", "-1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--iterations", p.stderr)
        p = self.run_cli("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("capacity_aware", p.stdout)


if __name__ == "__main__":
    unittest.main()
