"""Test support: a real hwgym-server subprocess ($HWGYM_BIN) and a scriptable fake server."""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import msgpack
import zmq

import hwgym

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def server_binary():
    d = os.environ.get("HWGYM_BIN")
    if not d:
        return None, "HWGYM_BIN is unset (run via `make test-py`, or set HWGYM_BIN=<build>/bin)"
    p = os.path.join(d, "hwgym-server")
    if not os.access(p, os.X_OK):
        return None, "%s is missing or not executable (build it with make)" % p
    return p, None


class ServerProcess:
    """hwgym-server --bind ipc://<tmp>/s.sock --workers 2 [extra args]; waits for ping."""

    def __init__(self, *extra, workers=2):
        path, why = server_binary()
        if path is None:
            raise unittest.SkipTest(why)
        self.tmp = tempfile.mkdtemp(prefix="hwgym-py-")
        self.endpoint = "ipc://%s/s.sock" % self.tmp
        self.log = open(os.path.join(self.tmp, "server.log"), "w+b")
        self.proc = subprocess.Popen([path, "--bind", self.endpoint, "--workers", str(workers)] + list(extra),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        with hwgym.Client(self.endpoint, timeout=0.2) as c:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError("hwgym-server exited with %s: %s" % (self.proc.returncode, self.output()))
                try:
                    c.ping()
                    break
                except hwgym.ClientTimeout:
                    if time.monotonic() > deadline:
                        self.proc.kill()
                        raise RuntimeError("hwgym-server did not answer ping within 15 s: %s" % self.output())

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-4000:]

    def stop(self):
        """SIGTERM; returns the exit code (the server must exit 0)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.log.close()
                shutil.rmtree(self.tmp, ignore_errors=True)
                return "did not exit within 20 s of SIGTERM"
        rc = self.proc.returncode
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return rc


class ServerTestCase(unittest.TestCase):
    """One real server per test class (started in setUpClass, SIGTERM-ed in tearDownClass, which
    checks that it exited 0)."""

    server_args = ()

    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(*cls.server_args)
        cls.endpoint = cls.server.endpoint

    @classmethod
    def tearDownClass(cls):
        out = cls.server.output()
        rc = cls.server.stop()
        if rc != 0:
            raise AssertionError("hwgym-server exit status %r after SIGTERM (expected 0); output:\n%s" % (rc, out))


class FakeServer:
    """A ROUTER socket in a thread answering with ``handler(msg) -> reply map | None | list``.

    A list of replies sends each (to test stale replies); None sends nothing (client timeout);
    a bytes value is sent raw.  The request ``id`` is filled in unless the reply has one.
    """

    def __init__(self, handler):
        self.handler = handler
        self.tmp = tempfile.mkdtemp(prefix="hwgym-fake-")
        self.endpoint = "ipc://%s/f.sock" % self.tmp
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(self.endpoint)
        self.requests = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop.is_set():
            if not self.sock.poll(20):
                continue
            frames = self.sock.recv_multipart()
            ident, body = frames[0], frames[-1]
            try:
                msg = msgpack.unpackb(body, raw=False)
            except Exception:
                msg = None
            self.requests.append(msg)
            rep = self.handler(msg)
            reps = rep if isinstance(rep, list) else [rep]
            for r in reps:
                if r is None:
                    continue
                if isinstance(r, bytes):
                    self.sock.send_multipart([ident, r])
                    continue
                r = dict(r)
                r.setdefault("id", msg.get("id") if isinstance(msg, dict) else None)
                self.sock.send_multipart([ident, msgpack.packb(r, use_bin_type=True)])

    def close(self):
        self._stop.set()
        self.thread.join(5)
        self.sock.close(0)
        self.ctx.term()
        shutil.rmtree(self.tmp, ignore_errors=True)
