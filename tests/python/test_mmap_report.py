"""scripts/paper-mmap-report.py regenerates docs/results/mmap.md and its SVG figures byte for byte
from the committed data (docs/results/mmap/data), with the command docs/results/mmap-notes.md
prints. The report writes next to its output directory, so it runs on a copy in a temporary
directory."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "docs", "results")


class MmapReport(unittest.TestCase):
    def test_byte_for_byte(self):
        with open(os.path.join(RES, "mmap-notes.md"), encoding="utf-8") as f:
            notes = f.read()
        m = re.search(r"^python3 scripts/paper-mmap-report\.py docs/results/mmap ((?:.*\\\n)*.*)$", notes, re.M)
        self.assertIsNotNone(m, "the notes print the command that recomputes the page")
        args = shlex.split(m.group(1).replace("\\\n", " "))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mmap")
            shutil.copytree(os.path.join(RES, "mmap"), out)
            shutil.copy(os.path.join(RES, "mmap-notes.md"), tmp)
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "paper-mmap-report.py"), out] + args,
                               capture_output=True, text=True, timeout=600, cwd=ROOT)
            self.assertEqual(p.returncode, 0, p.stderr)
            for name in ["mmap.md"] + [os.path.join("mmap", f) for f in os.listdir(out) if f.endswith(".svg")]:
                with open(os.path.join(tmp, name), encoding="utf-8") as a, open(os.path.join(RES, name), encoding="utf-8") as b:
                    self.assertEqual(a.read(), b.read(), f"{name} does not regenerate from the committed data")

    def test_keep_merges_the_run_and_size_lists(self):
        """scripts/paper-mmap.sh with MMAP_KEEP=1 keeps the earlier invocations' lines of data/runs.txt and
        data/sizes.txt and adds (or replaces, by name) its own; a past MMAP_DEADLINE skips every run."""
        bindir = os.environ.get("HWGYM_BIN", os.path.join(ROOT, "build", "bin"))
        if not os.access(os.path.join(bindir, "hwgym-muzero"), os.X_OK) or not os.access(os.path.join(bindir, "hwgym"), os.X_OK):
            self.skipTest("hwgym-muzero / hwgym are not built")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mmap")
            os.makedirs(os.path.join(out, "data"))
            with open(os.path.join(out, "data", "runs.txt"), "w") as f:
                f.write("old-run-s1 muzero 1 mlp_train_batch_16 --seed 1\n")
            with open(os.path.join(out, "data", "sizes.txt"), "w") as f:
                f.write("kept_prog 99\nmlp_train_batch_16 1\n")
            env = dict(os.environ, BUILD=os.path.dirname(bindir), MMAP_OUT=out, MMAP_KEEP="1", MMAP_PARTS="dev t3v",
                       MMAP_DEV_NAME="x", MMAP_DEV_ARGS="--heuristic-prior 0.5", MMAP_T3P="mlp_train_batch_16",
                       MMAP_T2P="alexnet_train_batch_32", MMAP_DEV_PROGS="inference_resnet", MMAP_DEV_SEEDS="1",
                       MMAP_T3_SEEDS="2", MMAP_DEADLINE="1")
            p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "paper-mmap.sh")], env=env, capture_output=True, text=True,
                               timeout=300, cwd=ROOT)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(out, "data", "runs.txt")) as f:
                names = [l.split()[0] for l in f]
            self.assertEqual(names, ["old-run-s1", "dev-x-inference_resnet-s1", "dev-x-untrained-inference_resnet-s1",
                                     "t3-mlp_train_batch_16-x-s2", "t3-mlp_train_batch_16-x-untrained-s2"])
            with open(os.path.join(out, "data", "runs.txt")) as f:
                self.assertIn("--heuristic-prior 0.5 --train-every 1000000000", f.read())
            with open(os.path.join(out, "data", "sizes.txt")) as f:
                sizes = dict(l.split() for l in f)
            self.assertEqual(sizes, {"kept_prog": "99", "alexnet_train_batch_32": "167", "inference_resnet": "324",
                                     "mlp_train_batch_16": "152"})
            self.assertFalse(os.path.exists(os.path.join(out, "data", "runs.new")))


if __name__ == "__main__":
    unittest.main()
