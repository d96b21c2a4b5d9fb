"""scripts/rlsched-tables.py regenerates docs/results/rlsched.md byte for byte from the committed
data (docs/results/rlsched/), with the command the page prints."""

import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "results", "rlsched.md")


class RlschedTables(unittest.TestCase):
    def test_byte_for_byte(self):
        with open(PAGE, encoding="utf-8") as f:
            page = f.read()
        cmd = re.search(r"^python3 scripts/rlsched-tables\.py (.*) > docs/results/rlsched\.md$", page, re.M)
        self.assertIsNotNone(cmd, "the page prints the command that recomputes it")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "rlsched-tables.py")] + cmd.group(1).split(),
                           capture_output=True, text=True, timeout=600, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, page)

    def test_figure_byte_for_byte(self):
        svg = os.path.join(ROOT, "docs", "results", "rlsched", "dev-curves.svg")
        with open(PAGE, encoding="utf-8") as f:
            if "rlsched/dev-curves.svg" not in f.read():
                self.skipTest("the page has no dev-set figure")
        with open(svg, encoding="utf-8") as f:
            want = f.read()
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "rlsched-tables.py"),
                            os.path.join(ROOT, "docs", "results", "rlsched"), "--svg"],
                           capture_output=True, text=True, timeout=600, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, want)
        self.assertIn("<polyline", want, "the figure draws curves")

    def test_dev_curves_against_the_sampled_control(self):
        """The dev table: greedy after e episodes (mean over seeds) beside the untrained sampled pass of
        the same seeds, and how many seeds are below their own control at each point."""
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write("method,model,accelerator,objective,seed,energy_pj,cycles,objective_total,steps,episodes,"
                        "cpu_s,samples\n")
                for seed, us, ug in [(1, 100.0, 300.0), (2, 80.0, 90.0), (3, 50.0, 60.0)]:
                    f.write("untrained-sampled,resnet50,simba,energy,%d,,,%g,10,10,1.0,0\n" % (seed, us))
                    f.write("untrained-greedy,resnet50,simba,energy,%d,%g,1,%g,10,10,1.0,0\n" % (seed, ug, ug))
            with open(os.path.join(d, "dev-curves.jsonl"), "w") as f:
                # seed 3 is not in the dev set: the control is the mean of seeds 1 and 2 alone (90)
                for seed, pts in [(1, [300.0, 95.0, 99.0]), (2, [90.0, 85.0, 70.0])]:
                    f.write(json.dumps({"variant": "v", "model": "resnet50", "accelerator": "simba", "seed": seed,
                                        "args": "--ent-decay 0.98", "episodes": 20, "eval_every": 10,
                                        "objective": "energy",
                                        "curve": [{"episode": e, "greedy_total": g} for e, g in zip([0, 10, 20], pts)],
                                        "episode_totals": [120.0] * 10 + [100.0] * 10, "greedy_total": pts[-1],
                                        "best_seen_total": 1.0, "steps": 10, "ent_coef": 0.1, "cpu_s": 4.0}) + "\n")
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "rlsched-tables.py"), d,
                                "--episodes", "20"], capture_output=True, text=True, timeout=120, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [x for x in p.stdout.splitlines() if x.startswith("| v |")]
        self.assertEqual(len(rows), 1, p.stdout)
        cells = [c.strip() for c in rows[0].strip("|").split("|")]
        self.assertEqual(cells[1:5], ["`--ent-decay 0.98`", "ResNet-50", "Simba", "1, 2"])
        self.assertEqual(cells[5:8], ["195 (+116.7%)", "90 (+0.0%)", "84.5 (-6.1%)"])
        self.assertEqual(cells[8:10], ["90", "195"])          # untrained sampled and greedy of seeds 1, 2
        # after 10 episodes seed 1 (95) is below its control (100), seed 2 (85) is not (80); after 20 both
        self.assertEqual(cells[10], "1/2 / 2/2")
        self.assertEqual(cells[11], "120 / 100")
        self.assertEqual(cells[12], "4")


if __name__ == "__main__":
    unittest.main()
