"""CURVE from Python: the client reads HWGYM_CURVE_* from the environment (PROTOCOL.md,
"Security"); an allow-listed keypair is served, another keypair or no CURVE is not."""
import os
import tempfile
import unittest

import zmq

import hwgym
from tests.python._support import ServerProcess

KEYS = ("HWGYM_CURVE_SERVERKEY", "HWGYM_CURVE_PUBLICKEY", "HWGYM_CURVE_SECRETKEY")


def keypair():
    pub, sec = zmq.curve_keypair()
    return pub.decode(), sec.decode()


@unittest.skipUnless(zmq.has("curve"), "libzmq without CURVE")
class TestCurve(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in KEYS}
        self.dir = tempfile.TemporaryDirectory()
        spub, ssec = keypair()
        self.allowed = keypair()
        with open(os.path.join(self.dir.name, "server.key"), "w") as f:
            f.write("%s\n" % ssec)
        with open(os.path.join(self.dir.name, "allow.txt"), "w") as f:
            f.write("# the one agent allowed\n%s\n" % self.allowed[0])
        self.use(spub, *self.allowed)
        self.spub = spub
        self.server = ServerProcess("--curve-secret", os.path.join(self.dir.name, "server.key"),
                                    "--curve-allow", os.path.join(self.dir.name, "allow.txt"))

    def tearDown(self):
        self.assertEqual(self.server.stop(), 0)
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.dir.cleanup()

    def use(self, server, pub=None, sec=None):
        for k, v in zip(KEYS, (server, pub, sec)):
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def ping(self):
        with hwgym.Client(self.server.endpoint, timeout=1.0) as c:
            return c.ping()

    def test_allow_list(self):
        self.assertTrue(self.ping()["ok"])
        env = hwgym.make("diag-v0", endpoint=self.server.endpoint, dims=2)
        obs, _ = env.reset(seed=1)
        env.step(env.action_space.sample())
        env.close()
        self.use(self.spub, *keypair())
        with self.assertRaises(hwgym.ClientTimeout):
            self.ping()
        self.use(None)
        with self.assertRaises(hwgym.ClientTimeout):
            self.ping()
        self.use(self.spub, *self.allowed)
        self.assertTrue(self.ping()["ok"])


if __name__ == "__main__":
    unittest.main()
