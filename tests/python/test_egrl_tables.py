"""scripts/egrl-tables.py regenerates every EGRL result page, its Figure 4 curves and its
Figure 7 pictures byte for byte from the committed data (docs/results/egrl*/)."""

import filecmp
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "docs", "results")


def pages():
    import importlib.util
    spec = importlib.util.spec_from_file_location("egrl_tables", os.path.join(ROOT, "scripts", "egrl-tables.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {p: d for p, d in mod.PAGES.items() if os.path.exists(os.path.join(RESULTS, d, "meta.json"))}


class EgrlTables(unittest.TestCase):
    def setUp(self):
        d = os.environ.get("HWGYM_BIN")
        if not d or not os.access(os.path.join(d, "hwgym"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym is required for the Figure 7 pictures (run via make test-py)")

    def test_byte_for_byte(self):
        found = pages()
        self.assertIn("egrl.md", found)
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "egrl-tables.py"), "--out", out],
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            for page, ddir in found.items():
                self.assertTrue(filecmp.cmp(os.path.join(out, page), os.path.join(RESULTS, page), shallow=False),
                                "%s differs from the regenerated page" % page)
                made = sorted(os.listdir(os.path.join(out, ddir)))
                self.assertTrue(any(f.startswith("fig4_") for f in made), made)
                self.assertTrue(any(f.startswith("fig7_") for f in made), made)
                for f in made:
                    self.assertTrue(filecmp.cmp(os.path.join(out, ddir, f), os.path.join(RESULTS, ddir, f), shallow=False),
                                    "%s/%s differs from the regenerated file" % (ddir, f))

    def test_unknown_page(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "egrl-tables.py"), "--page", "nope.md",
                            "--out", tempfile.gettempdir()], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--page nope.md: unknown", p.stderr)


if __name__ == "__main__":
    unittest.main()
