"""`hwgym top --endpoint EP` on a pseudo-terminal against a real server: it draws frames with the
server's numbers (sessions, per-op latency rows, cache hit rate), redraws, and quits on q."""

import os
import pty
import select
import subprocess
import time
import unittest

import numpy as np

import hwgym

from ._support import ServerProcess


class Top(unittest.TestCase):
    def setUp(self):
        d = os.environ.get("HWGYM_BIN")
        if not d or not os.access(os.path.join(d, "hwgym"), os.X_OK):
            self.skipTest("HWGYM_BIN with hwgym is required (run via make test-py)")
        self.hwgym = os.path.join(d, "hwgym")
        self.srv = ServerProcess("--cache-mb", "8")

    def tearDown(self):
        self.srv.stop()

    def read_until(self, fd, needle, timeout=10):
        buf = b""
        deadline = time.monotonic() + timeout
        while needle not in buf and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    buf += os.read(fd, 65536)
                except OSError:
                    break
        return buf

    def test_live_view_on_a_pty_quits_on_q(self):
        with hwgym.Client(self.srv.endpoint) as c:
            pts = np.array([[3, 1, 0, 1, 5, 2, 0, 0, 3, 5]] * 4, dtype=np.int64)
            cfg = {"model": "mobilenet_v2", "layer": 2}
            for _ in range(2):  # the second request hits the cache
                c.request("evaluate_batch", env="maestro-v0", config=cfg, points=pts, metrics=["runtime"])
            s = c.request("make", env="diag-v0", config={"dims": 3})
            c.request("reset", session=s["session"], seed=1)
            c.request("step", session=s["session"], action=[1, 2, 3])
            master, slave = pty.openpty()
            p = subprocess.Popen([self.hwgym, "top", "--endpoint", self.srv.endpoint, "--interval", "0.2"],
                                 stdin=slave, stdout=slave, stderr=slave, close_fds=True)
            os.close(slave)
            try:
                out = self.read_until(master, b"steps/s 0")  # the second frame has rates
                text = out.decode("utf-8", "replace")
                self.assertIn("\x1b[H\x1b[2J", text, "a terminal gets full-screen redraws")
                self.assertIn("sessions 1", text)
                self.assertRegex(text, r"evaluate_batch\s+2\s")
                self.assertRegex(text, r"step\s+1\s")
                self.assertIn("hit rate 87.5%  hits 4  merged 3  misses 1", text)  # 4 equal points twice
                os.write(master, b"q")
                self.assertEqual(p.wait(timeout=5), 0)
            finally:
                if p.poll() is None:
                    p.kill()
                os.close(master)

    def test_count_without_a_terminal(self):
        r = subprocess.run([self.hwgym, "top", "--endpoint", self.srv.endpoint, "--count", "2", "--interval", "0.1"],
                           capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b[", r.stdout)
        self.assertEqual(r.stdout.count("hwgym top"), 2)
        self.assertIn("cache: hit rate", r.stdout)
        bad = subprocess.run([self.hwgym, "top"], capture_output=True, text=True, timeout=20)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--endpoint is required", bad.stderr)


if __name__ == "__main__":
    unittest.main()
