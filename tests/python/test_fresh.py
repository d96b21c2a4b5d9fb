"""Fresh machine: the README's entry targets must build on their first run.

A clean copy of the repository (the files `git clone` would give: tracked and untracked-but-not-
ignored, no build outputs) is built through `make demo` and `make paper-marl` with a `pkg-config`
first on PATH that fails until scripts/install-deps.sh has run (it touches $HWGYM_DEPS_STAMP).
A Makefile that evaluates pkg-config before the deps step links without -ljansson -lzmq ... and
fails, which is what a fresh Debian machine saw. To stay fast each run builds one small binary
(hwgym-server with only the diag env, -O0), replaces the demo script with `true`, and the second
entry starts from the first one's object files (it still archives, links and runs deps first).
"""

import os
import shutil
import subprocess
import tempfile
import unittest

from ._support import REPO

FAKE_PKG_CONFIG = """#!/bin/sh
# fails like a machine without the -dev packages until install-deps.sh has touched the stamp
[ -e "$HWGYM_DEPS_STAMP" ] || { echo "fake pkg-config: deps not installed yet" >&2; exit 1; }
PATH="$REAL_PATH" exec pkg-config "$@"
"""


def clean_copy(dst):
    """Copies what a clone holds; falls back to a copy without build outputs outside git."""
    try:
        out = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = None
    if files is None:
        shutil.copytree(REPO, dst, symlinks=True, ignore=shutil.ignore_patterns("build", "build-*", "out", "*.db"))
        return
    for f in files:
        src = os.path.join(REPO, f)
        if not os.path.lexists(src):  # deleted in the work tree, not yet committed
            continue
        d = os.path.join(dst, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(src, d, follow_symlinks=False)


@unittest.skipUnless(shutil.which("make") and shutil.which("pkg-config") and shutil.which("cc"),
                     "needs make, cc and pkg-config")
class FreshMachine(unittest.TestCase):
    objs = None  # BUILD/obj of an entry that built (reused by the next; see entry())

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hwgym-fresh-")
        cls.src = os.path.join(cls.tmp, "hwgym")
        clean_copy(cls.src)
        fake = os.path.join(cls.tmp, "fakebin")
        os.makedirs(fake)
        with open(os.path.join(fake, "pkg-config"), "w") as f:
            f.write(FAKE_PKG_CONFIG)
        os.chmod(os.path.join(fake, "pkg-config"), 0o755)
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "BUILD", "OPT", "SAN",
                            "ENV_FAMS", "PYTHON", "HWGYM_DEPS_STAMP")}
        env["REAL_PATH"] = env.get("PATH", "/usr/bin:/bin")
        env["PATH"] = fake + os.pathsep + env["REAL_PATH"]
        cls.env = env

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entry(self, target, goals_var, run_var):
        stamp = os.path.join(self.tmp, target + ".stamp")
        env = dict(self.env, HWGYM_DEPS_STAMP=stamp)
        build = "build-" + target
        server = build + "/bin/hwgym-server"
        # Every entry compiles the same sources with the same flags; what a fresh machine breaks is
        # the link (flags evaluated before the deps step) and the order of the steps. So an entry
        # starts from the objects an earlier one compiled: its archives, link and deps step still
        # run from scratch, and the compile is not paid twice.
        if type(self).objs and not os.path.exists(os.path.join(self.src, build)):
            shutil.copytree(type(self).objs, os.path.join(self.src, build, "obj"), symlinks=True)
        r = subprocess.run(["make", "-j2", target, "BUILD=" + build, "OPT=-O0", "ENV_FAMS=common diag",
                            goals_var + "=" + server, run_var + "=true"],
                           cwd=self.src, env=env, capture_output=True, text=True, timeout=300)
        log = (r.stdout + r.stderr)[-3000:]
        self.assertTrue(os.path.exists(stamp), "install-deps.sh did not run (or not first):\n" + log)
        self.assertEqual(r.returncode, 0, "make %s failed on its first run:\n%s" % (target, log))
        self.assertIn("-o " + server, r.stdout + r.stderr, "make %s did not link the server:\n%s" % (target, log))
        type(self).objs = os.path.join(self.src, build, "obj")
        p = subprocess.run([os.path.join(self.src, server), "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--bind", p.stdout + p.stderr)

    def test_fake_pkg_config_fails_before_deps(self):
        # the harness itself: without the stamp, pkg-config gives nothing (as on a fresh machine)
        env = dict(self.env, HWGYM_DEPS_STAMP=os.path.join(self.tmp, "never"))
        r = subprocess.run(["pkg-config", "--libs", "jansson"], env=env, capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stdout.strip(), "")

    def test_make_demo_first_run(self):
        self.entry("demo", "DEMO_GOALS", "DEMO_RUN")

    def test_make_paper_marl_first_run(self):
        self.entry("paper-marl", "PAPER_GOALS", "PAPER_RUN")


if __name__ == "__main__":
    unittest.main()
