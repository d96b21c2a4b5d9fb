"""docs/python.md, "Use it with": every snippet there runs as written against a real server, with
the library where it is importable and otherwise with the fakes in tests/python/fake_libs (SB3,
RLlib) and tests/python/fake_gymnasium.  A snippet is the ```python block after a
``<!-- use-with: NAME -->`` line; EP is the server's endpoint."""

import importlib.util
import os
import re
import subprocess
import sys
import unittest

from ._support import REPO, ServerTestCase

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(REPO, "docs", "python.md")
#: snippet -> the libraries it imports (a fake stands in for each one that is not importable)
NEEDS = {"sb3": ("gymnasium", "stable_baselines3"), "cleanrl": (), "pettingzoo": (), "rllib": ("ray",)}


def snippets():
    with open(DOC) as f:
        text = f.read()
    return dict(re.findall(r"<!-- use-with: (\w+) -->\n```python\n(.*?)```", text, re.S))


def have(mod):
    return importlib.util.find_spec(mod) is not None


class TestUseWith(ServerTestCase):
    def test_every_library_has_a_snippet(self):
        self.assertEqual(sorted(snippets()), sorted(NEEDS))

    def run_snippet(self, name):
        code = snippets()[name]
        path = []
        for lib in NEEDS[name]:
            if not have(lib):
                path.append(os.path.join(HERE, "fake_gymnasium" if lib == "gymnasium" else "fake_libs"))
        path += [os.path.join(REPO, "clients", "python"), REPO]
        env = dict(os.environ, EP=self.endpoint, PYTHONPATH=os.pathsep.join(dict.fromkeys(path)))
        script = "import os\nEP = os.environ['EP']\n" + code + "\nprint('SNIPPET OK')\n"
        p = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", script], env=env,
                           capture_output=True, timeout=120, cwd=REPO)
        self.assertEqual(p.returncode, 0, "%s snippet failed:\n%s" % (name, p.stderr.decode()))
        self.assertIn("SNIPPET OK", p.stdout.decode())
        return p.stderr.decode()

    def test_sb3(self):
        err = self.run_snippet("sb3")
        self.assertIn("do not render", err)  # SB3's render_mode="rgb_array" is a warning, not an error

    def test_cleanrl(self):
        self.run_snippet("cleanrl")

    def test_pettingzoo(self):
        self.run_snippet("pettingzoo")

    def test_rllib(self):
        self.run_snippet("rllib")


if __name__ == "__main__":
    unittest.main()
