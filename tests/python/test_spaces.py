"""Spaces: protocol round trip, sample/contains/mask, seeding, batching (local classes, or
Gymnasium's when importable: the tests use only behaviour both share)."""

import copy
import unittest

import numpy as np

from hwgym import spaces as S
from hwgym.wire import INF_WIRE, pack, unpack

# The PROTOCOL.md "Spaces" examples, with the elided parts filled in.
LOOP_ORDERS = ["KCYXRS", "KCRSYX", "CKYXRS", "YXRSKC", "RSYXKC", "YXKCRS"]
EXAMPLES = [
    {"type": "Discrete", "n": 6, "start": 0, "name": "loop_order", "labels": LOOP_ORDERS},
    {"type": "MultiDiscrete", "nvec": [6, 6, 8], "names": ["loop_order", "spatial_dim", "tile_K"],
     "labels": [LOOP_ORDERS, None, ["1", "2", "4", "8", "16", "32", "64", "128"]]},
    {"type": "Box", "shape": [4], "dtype": "float32", "low": [0, 0, 0, 0], "high": [INF_WIRE] * 4,
     "names": ["latency", "power", "energy", "area"]},
    {"type": "MultiBinary", "n": 8, "names": ["b%d" % i for i in range(8)]},
    {"type": "Dict", "spaces": {"edges": {"type": "Box", "shape": [2, 3], "dtype": "int64", "low": [0] * 6, "high": [9] * 6},
                                "nodes": {"type": "Box", "shape": [3], "dtype": "float64", "low": [-INF_WIRE] * 3,
                                          "high": [1.5, 2, INF_WIRE]}}},
]


class TestProtocolRoundTrip(unittest.TestCase):
    def test_examples_round_trip(self):
        for j in EXAMPLES:
            with self.subTest(type=j["type"]):
                j2 = unpack(pack(j))  # as it arrives from msgpack
                s = S.space_from_json(j2)
                self.assertEqual(S.space_to_json(s), j)
                self.assertEqual(S.space_from_json(S.space_to_json(s)), s)

    def test_metadata_attributes(self):
        d = S.space_from_json(EXAMPLES[0])
        self.assertEqual((d.n, d.start, d.name, d.labels[2]), (6, 0, "loop_order", "CKYXRS"))
        md = S.space_from_json(EXAMPLES[1])
        self.assertEqual(md.names[2], "tile_K")
        self.assertIsNone(md.labels[1])
        self.assertEqual(md.labels[2][md.sample()[2]] in EXAMPLES[1]["labels"][2], True)
        self.assertEqual(md.shape, (3,))
        self.assertEqual(md.dtype, np.int64)

    def test_box_infinity_and_dtypes(self):
        b = S.space_from_json(EXAMPLES[2])
        self.assertEqual(b.dtype, np.float32)
        self.assertTrue(np.all(np.isinf(b.high)))
        self.assertFalse(b.is_bounded("both"))
        self.assertTrue(b.is_bounded("below"))
        self.assertIn(np.array([0, 1, 2, 1e30], dtype=np.float32), b)
        self.assertNotIn(np.array([-1, 1, 2, 3], dtype=np.float32), b)
        self.assertNotIn(np.array([0, 1, 2], dtype=np.float32), b)
        d = S.space_from_json(EXAMPLES[4])
        self.assertEqual(list(d.keys()), ["edges", "nodes"])
        self.assertEqual(d["edges"].dtype, np.int64)
        self.assertEqual(d["edges"].shape, (2, 3))
        self.assertEqual(float(d["nodes"].high[0]), 1.5)
        self.assertEqual(d["nodes"].low[0], -np.inf)
        # an int64 scalar Box, as diag-v0's Dict observation "t" has
        t = S.space_from_json({"type": "Box", "shape": [], "dtype": "int64", "low": [0], "high": [16]})
        self.assertEqual(t.shape, ())
        self.assertIn(np.array(3, dtype=np.int64), t)
        self.assertNotIn(np.array(17, dtype=np.int64), t)
        # integer Box with "infinite" bounds maps to the dtype's limits
        u = S.space_from_json({"type": "Box", "shape": [1], "dtype": "int32", "low": [-INF_WIRE], "high": [INF_WIRE]})
        self.assertEqual(int(u.high[0]), np.iinfo(np.int32).max)

    def test_unknown_type(self):
        with self.assertRaises(ValueError):
            S.space_from_json({"type": "Graph"})
        with self.assertRaises(ValueError):
            S.space_from_json([1, 2])


class TestSampleContains(unittest.TestCase):
    def test_discrete(self):
        d = S.Discrete(5, start=2)
        d.seed(3)
        xs = [int(d.sample()) for _ in range(200)]
        self.assertEqual(set(xs), {2, 3, 4, 5, 6})
        for x in xs:
            self.assertIn(x, d)
        self.assertNotIn(7, d)
        self.assertNotIn(1, d)
        self.assertNotIn(2.0, d)
        m = np.array([0, 0, 1, 0, 1], dtype=np.int8)
        self.assertEqual({int(d.sample(mask=m)) for _ in range(100)}, {4, 6})
        self.assertEqual(int(d.sample(mask=np.zeros(5, np.int8))), 2)  # all masked: start
        with self.assertRaises(Exception):
            d.sample(mask=np.ones(4, np.int8))

    def test_multidiscrete(self):
        md = S.MultiDiscrete([3, 4])
        md.seed(0)
        for _ in range(50):
            x = md.sample()
            self.assertIn(x, md)
            self.assertEqual(x.shape, (2,))
        self.assertIn([2, 3], md)
        self.assertNotIn(np.array([3, 0]), md)
        self.assertNotIn(np.array([0, 0, 0]), md)
        mask = (np.array([0, 1, 0], np.int8), np.array([0, 0, 0, 1], np.int8))
        for _ in range(20):
            np.testing.assert_array_equal(md.sample(mask=mask), [1, 3])
        flat = S.split_mask(md, [1, 0, 0, 0, 1, 0, 0])
        self.assertEqual(len(flat), 2)
        np.testing.assert_array_equal(md.sample(mask=flat), [0, 1])
        with self.assertRaises(ValueError):
            S.split_mask(md, [1, 1])

    def test_multibinary(self):
        mb = S.MultiBinary(6)
        mb.seed(1)
        x = mb.sample()
        self.assertEqual(x.shape, (6,))
        self.assertIn(x, mb)
        self.assertNotIn(np.array([0, 1, 2, 0, 0, 0]), mb)
        m = np.array([0, 1, 2, 2, 0, 1], np.int8)
        for _ in range(20):
            y = mb.sample(mask=m)
            np.testing.assert_array_equal(y[[0, 1, 4, 5]], [0, 1, 0, 1])

    def test_box(self):
        b = S.Box(-1.0, 1.0, shape=(3,), dtype=np.float32)
        b.seed(2)
        for _ in range(50):
            self.assertIn(b.sample(), b)
        self.assertEqual(b.sample().dtype, np.float32)
        with self.assertRaises(Exception):
            b.sample(mask=np.ones(3, np.int8))
        ib = S.Box(0, 3, shape=(100,), dtype=np.int64)
        x = ib.sample()
        self.assertEqual(x.dtype, np.int64)
        self.assertTrue(0 <= x.min() and x.max() <= 3)

    def test_dict(self):
        d = S.Dict({"b": S.Discrete(3), "a": S.MultiBinary(2)})
        self.assertEqual(list(d.keys()), ["a", "b"])
        d.seed(5)
        x = d.sample()
        self.assertIn(x, d)
        self.assertNotIn({"a": x["a"]}, d)
        y = d.sample(mask={"a": np.array([1, 1], np.int8), "b": np.array([0, 0, 1], np.int8)})
        np.testing.assert_array_equal(y["a"], [1, 1])
        self.assertEqual(int(y["b"]), 2)

    def test_seed_reproducible(self):
        for s in (S.space_from_json(j) for j in EXAMPLES):
            with self.subTest(space=repr(s)):
                a = copy.deepcopy(s)
                b = copy.deepcopy(s)
                a.seed(42)
                b.seed(42)
                xa = [a.sample() for _ in range(5)]
                xb = [b.sample() for _ in range(5)]
                for p, q in zip(xa, xb):
                    if isinstance(p, dict):
                        for k in p:
                            np.testing.assert_array_equal(p[k], q[k])
                    else:
                        np.testing.assert_array_equal(p, q)
                self.assertIsNotNone(a.np_random)

    def test_equality(self):
        self.assertEqual(S.Discrete(3), S.Discrete(3))
        self.assertNotEqual(S.Discrete(3), S.Discrete(3, start=1))
        self.assertNotEqual(S.MultiDiscrete([2, 3]), S.MultiDiscrete([2, 4]))
        self.assertNotEqual(S.Box(0, 1, (2,)), S.Box(0, 2, (2,)))
        self.assertEqual(S.MultiBinary(3), S.MultiBinary(3))


class TestBatch(unittest.TestCase):
    def test_batch_space(self):
        bd = S.batch_space(S.Discrete(4, start=1), 3)
        self.assertEqual(bd.shape, (3,))
        np.testing.assert_array_equal(bd.nvec, [4, 4, 4])
        np.testing.assert_array_equal(bd.start, [1, 1, 1])
        bm = S.batch_space(S.MultiDiscrete([2, 5]), 3)
        self.assertEqual(bm.shape, (3, 2))
        self.assertIn(bm.sample(), bm)
        bb = S.batch_space(S.Box(0, 1, (4,)), 2)
        self.assertEqual(bb.shape, (2, 4))
        self.assertEqual(S.batch_space(S.MultiBinary(5), 2).shape, (2, 5))
        bdict = S.batch_space(S.Dict({"x": S.Box(0, 1, (2,)), "t": S.Box(0, 9, (), dtype=np.int64)}), 3)
        self.assertEqual(bdict["x"].shape, (3, 2))
        self.assertEqual(bdict["t"].shape, (3,))


if __name__ == "__main__":
    unittest.main()
