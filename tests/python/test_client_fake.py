"""Client transport and API against a scriptable fake server (no hwgym-server needed)."""

import threading
import time
import unittest

import numpy as np

import hwgym
from hwgym import errors
from hwgym.wire import encode_array

from ._support import FakeServer

MD = {"type": "MultiDiscrete", "nvec": [8, 8, 8], "names": ["p0", "p1", "p2"]}
OBS = {"type": "Box", "shape": [5], "dtype": "float32", "low": [0] * 5, "high": [1] * 5}


def diagish(msg):
    """A tiny stand-in for hwgym-server."""
    op = msg.get("op")
    if msg.get("v") != 1:
        return {"ok": False, "error": {"code": "UNSUPPORTED_VERSION", "message": "protocol version %s is not supported" % msg.get("v")}}
    if op == "hello":
        return {"ok": True, "server": "fake", "protocol": 1, "protocols": [1], "envs": ["diag-v0"]}
    if op == "ping":
        return {"ok": True, "time": time.time()}
    if op == "make":
        n = msg.get("num_envs")
        return {"ok": True, "session": "ab" * 16, "env": msg["env"], "kind": "vector" if n else "single",
                "action_space": MD, "observation_space": OBS, "num_envs": n or 1}
    if op == "reset":
        return {"ok": True, "obs": encode_array(np.zeros(5, np.float32)), "info": {"seed": msg.get("seed")}}
    if op == "step":
        a = msg["action"]
        if isinstance(a, dict) and a.get("dtype") != "int64":
            return {"ok": False, "error": {"code": "BAD_ACTION", "message": "action: dtype %s" % a.get("dtype")}}
        return {"ok": True, "obs": encode_array(np.ones(5, np.float32)), "reward": 0.5, "terminated": False,
                "truncated": False, "info": {"distance": 0.5, "mask": encode_array(np.ones(3, np.uint8))}}
    if op == "close":
        return {"ok": True}
    if op == "slow":
        time.sleep(msg.get("sleep", 0))
        return {"ok": True, "slept": msg.get("sleep", 0)}
    if op == "stale":  # a stale reply first (wrong id), then garbage, then the real one
        return [{"id": -5, "ok": True, "which": "stale"}, b"\xc1garbage", {"ok": True, "which": "real"}]
    if op == "silent":
        return None
    return {"ok": False, "error": {"code": "UNKNOWN_OP", "message": "op %r: no such operation" % op}}


class TestFakeServer(unittest.TestCase):
    def setUp(self):
        self.srv = FakeServer(diagish)
        self.c = hwgym.Client(self.srv.endpoint, timeout=2)

    def tearDown(self):
        self.c.close()
        self.srv.close()

    def test_request_fields(self):
        self.c.ping()
        self.c.reset("s" * 32, seed=3)
        m = self.srv.requests[-1]
        self.assertEqual((m["op"], m["v"], m["seed"], m["session"]), ("reset", 1, 3, "s" * 32))
        self.assertNotIn("options", m)  # None fields are left out
        self.assertIsInstance(m["id"], int)
        self.assertGreater(m["id"], self.srv.requests[-2]["id"])

    def test_hello_and_version_mismatch(self):
        self.assertEqual(self.c.hello()["protocols"], [1])
        c2 = hwgym.Client(self.srv.endpoint, timeout=2, version=2)
        with self.assertRaises(errors.UnsupportedVersion) as cm:
            c2.hello()
        self.assertEqual(cm.exception.code, "UNSUPPORTED_VERSION")
        self.assertIn("version 2", cm.exception.message)
        c2.close()

    def test_error_codes(self):
        with self.assertRaises(errors.UnknownOp) as cm:
            self.c.request("frobnicate")
        self.assertEqual(cm.exception.code, "UNKNOWN_OP")
        self.assertEqual(cm.exception.op, "frobnicate")
        self.assertIsInstance(cm.exception, hwgym.HwgymError)

    def test_garbage_reply_is_reported_at_once(self):
        # a stale reply (wrong id) is dropped; bytes that are not msgpack are reported at once
        # (issue 28: the client used to wait out its whole timeout), and the client stays usable
        t0 = time.monotonic()
        with self.assertRaises(errors.TransportError) as cm:
            self.c.request("stale")
        self.assertLess(time.monotonic() - t0, 2.0)
        self.assertIn("unreadable reply", str(cm.exception))
        self.assertEqual(cm.exception.code, "IO")
        self.c.ping()  # the late "real" reply to the failed request is dropped as stale

    def test_timeout_then_usable(self):
        t0 = time.monotonic()
        with self.assertRaises(errors.ClientTimeout) as cm:
            self.c.request("slow", timeout=0.2, sleep=0.6)
        self.assertLess(time.monotonic() - t0, 0.5)
        self.assertEqual(cm.exception.code, "IO")
        self.assertIsInstance(cm.exception, TimeoutError)
        # the late reply to the timed-out request must not be taken for the next one's
        self.assertEqual(self.c.request("slow", sleep=0.0)["slept"], 0.0)
        with self.assertRaises(errors.ClientTimeout):
            self.c.request("silent", timeout=0.1)

    def test_threads_share_a_client(self):
        out, errs = [], []

        def work(k):
            try:
                for i in range(50):
                    r = self.c.request("slow", sleep=0.0, tag=k * 1000 + i)
                    out.append(r["ok"])
            except Exception as e:  # pragma: no cover - reported below
                errs.append(e)
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errs, [])
        self.assertEqual(len(out), 200)

    def test_env_api_on_fake(self):
        env = hwgym.make("diag-v0", endpoint=self.srv.endpoint, timeout=2, dims=3)
        self.assertEqual(self.srv.requests[-1]["config"], {"dims": 3})
        self.assertEqual(env.spec.id, "diag-v0")
        obs, info = env.reset(seed=7)
        self.assertEqual(info, {"seed": 7})
        self.assertEqual(obs.dtype, np.float32)
        r = env.step(np.array([1, 2, 3], dtype=np.int32))
        self.assertEqual(len(r), 5)
        self.assertEqual(self.srv.requests[-1]["action"]["dtype"], "int64")  # integer actions go as int64
        self.assertIsInstance(r[4]["mask"], np.ndarray)
        with self.assertRaises(errors.BadAction):
            env.step(np.array([1.5, 2, 3]))  # not silently truncated
        env.close()
        env.close()
        self.assertEqual([m["op"] for m in self.srv.requests].count("close"), 1)

    def test_closed_client(self):
        self.c.close()
        self.c.close()
        with self.assertRaises(errors.TransportError) as cm:
            self.c.ping()
        self.assertEqual(cm.exception.code, "IO")


class TestNoServer(unittest.TestCase):
    def test_timeout_when_nobody_listens(self):
        import tempfile
        ep = "ipc://%s/nobody.sock" % tempfile.mkdtemp()
        t0 = time.monotonic()
        with self.assertRaises(errors.ClientTimeout):
            hwgym.make("diag-v0", endpoint=ep, timeout=0.2)
        self.assertLess(time.monotonic() - t0, 2)
        with self.assertRaises(errors.TransportError):
            hwgym.Client("bogus://endpoint")

    def test_client_after_fork(self):
        import os
        c = hwgym.Client("ipc:///nonexistent/x.sock", timeout=0.1)
        pid = os.fork()
        if pid == 0:  # child: the parent's client must refuse, not corrupt the socket
            try:
                c.ping()
                os._exit(1)
            except errors.TransportError as e:
                os._exit(0 if "fork" in e.message else 2)
            except BaseException:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        c.close()


class TestErrors(unittest.TestCase):
    def test_subclass_per_code(self):
        for code in ["BAD_REQUEST", "UNSUPPORTED_VERSION", "UNKNOWN_OP", "UNKNOWN_SESSION", "UNKNOWN_ENV", "BAD_CONFIG",
                     "BAD_ACTION", "BAD_STATE", "LIMIT", "TIMEOUT", "NOT_SUPPORTED", "UNKNOWN_AGENT",
                     "UNKNOWN_SNAPSHOT", "SUPERSEDED", "SHUTTING_DOWN", "INTERNAL", "IO"]:
            e = hwgym.HwgymError(code, "msg")
            self.assertEqual(e.code, code)
            self.assertIsNot(type(e), hwgym.HwgymError)
            self.assertIs(type(e), errors.error_class(code))
            self.assertIn(code, str(e))
        self.assertIs(type(hwgym.HwgymError("NEW_CODE", "m")), hwgym.HwgymError)
        self.assertEqual(hwgym.BadAction(message="x").code, "BAD_ACTION")
        import pickle
        e = pickle.loads(pickle.dumps(hwgym.HwgymError("BAD_CONFIG", "config.dims: 0")))
        self.assertIsInstance(e, hwgym.BadConfig)
        self.assertEqual(e.message, "config.dims: 0")

    def test_protocol_md_codes_all_mapped(self):
        import os
        import re
        from ._support import REPO
        with open(os.path.join(REPO, "protocol", "PROTOCOL.md")) as f:
            md = f.read()
        table = md.split("## Error codes")[1].split("## Ops")[0]
        codes = re.findall(r"^\| `([A-Z_]+)` \|", table, re.M)
        self.assertGreater(len(codes), 10)
        for c in codes:
            self.assertIn(c, errors.ERROR_CODES)


if __name__ == "__main__":
    unittest.main()
