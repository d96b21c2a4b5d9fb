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


if __name__ == "__main__":
    unittest.main()
