import unittest

import numpy as np

from hwgym import wire


class TestArrays(unittest.TestCase):
    def test_round_trip_every_dtype(self):
        for name, dt in wire.DTYPES.items():
            a = (np.arange(12) % 2).astype(dt).reshape(3, 4) if name == "bool" else (np.arange(12) - 5).astype(dt).reshape(3, 4)
            enc = wire.encode_array(a)
            self.assertEqual(enc["dtype"], name)
            self.assertEqual(enc["shape"], [3, 4])
            self.assertEqual(len(enc["data"]), 12 * dt.itemsize)
            # the wire is little-endian, C order
            self.assertEqual(enc["data"], np.ascontiguousarray(a, dtype=dt.newbyteorder("<")).tobytes())
            back = wire.decode_array(wire.unpack(wire.pack(enc)))
            self.assertEqual(back.dtype, np.dtype(dt).newbyteorder("="))
            np.testing.assert_array_equal(back, a)
            back[0, 0] = 1  # decoded arrays are writable

    def test_known_bytes(self):
        enc = wire.encode_array(np.array([1.0, -2.0], dtype=np.float32))
        self.assertEqual(enc["data"], b"\x00\x00\x80\x3f\x00\x00\x00\xc0")
        enc = wire.encode_array(np.array([258], dtype=np.int16))
        self.assertEqual(enc["data"], b"\x02\x01")

    def test_scalar_and_fortran_order(self):
        s = wire.encode_array(np.int64(7))
        self.assertEqual(s["shape"], [])
        d = wire.decode_array(s)
        self.assertEqual(d.shape, ())
        self.assertEqual(int(d), 7)
        f = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
        np.testing.assert_array_equal(wire.decode_array(wire.encode_array(f)), f)

    def test_widening(self):
        self.assertEqual(wire.encode_array(np.zeros(2, np.uint16))["dtype"], "int32")
        self.assertEqual(wire.encode_array(np.zeros(2, np.float16))["dtype"], "float32")
        self.assertEqual(wire.encode_array(np.zeros(2, np.uint32))["dtype"], "int64")
        with self.assertRaises(TypeError):
            wire.encode_array(np.array(["a"]))

    def test_bad_wire_arrays_are_rejected(self):
        with self.assertRaises(ValueError):
            wire.decode_array({"dtype": "float32", "shape": [3], "data": b"\0" * 8})
        with self.assertRaises(ValueError):
            wire.decode_array({"dtype": "complex64", "shape": [1], "data": b"\0" * 8})
        with self.assertRaises(ValueError):
            wire.decode_array({"dtype": "int8", "shape": [-1], "data": b""})

    def test_nested_to_from_wire(self):
        msg = {"op": "step", "action": np.array([1, 2], dtype=np.int64), "x": [np.float32(0.5), np.bool_(True)],
               "n": {"k": np.arange(3, dtype=np.uint8)}}
        back = wire.from_wire(wire.unpack(wire.pack(msg)))
        np.testing.assert_array_equal(back["action"], [1, 2])
        self.assertEqual(back["x"], [0.5, True])
        self.assertIsInstance(back["x"][0], float)
        self.assertEqual(back["n"]["k"].dtype, np.uint8)
        # a plain map that merely has a "data" key is not an array
        plain = {"dtype": "x", "shape": 1, "data": "s"}
        self.assertEqual(wire.from_wire(plain), plain)

    def test_jsonable(self):
        self.assertEqual(wire.jsonable({"a": np.arange(2), "b": np.float64("nan"), "c": (np.bool_(False),)}),
                         {"a": [0, 1], "b": None, "c": [False]})


if __name__ == "__main__":
    unittest.main()
