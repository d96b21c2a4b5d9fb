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


if __name__ == "__main__":
    unittest.main()
