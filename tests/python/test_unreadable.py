"""Issue 28 finding 2 at the Python boundary: a reply that is not valid msgpack/UTF-8 (the server
once sent stack bytes as an error message) is reported at once, not after the client's timeout."""

import time
import unittest

import hwgym
from hwgym import errors

from ._support import FakeServer

# {"id": <filled>, "ok": false, "error": {"code": "INTERNAL", "message": <4 bytes, not UTF-8>}}
BAD = b"\\x83\\xa2id\\x01\\xa2ok\\xc2\\xa5error\\x82\\xa4code\\xa8INTERNAL\\xa7message\\xa4\\xff\\x7f\\xfe\\x80"


class UnreadableReply(unittest.TestCase):
    def setUp(self):
        self.srv = FakeServer(lambda msg: BAD if msg and msg.get("op") == "evaluate_batch" else {"ok": True, "time": 0.0})
        self.c = hwgym.Client(self.srv.endpoint, timeout=30)

    def tearDown(self):
        self.c.close()
        self.srv.close()

    def test_reported_at_once(self):
        t0 = time.monotonic()
        with self.assertRaises(errors.TransportError) as cm:
            self.c.request("evaluate_batch", env="diag-v0", points=[[0, 0, 0, 0]])
        took = time.monotonic() - t0
        self.assertLess(took, 5.0, "waited %.1f s of a 30 s timeout" % took)
        self.assertIn("unreadable reply", str(cm.exception))
        self.c.ping()  # still usable


if __name__ == "__main__":
    unittest.main()
