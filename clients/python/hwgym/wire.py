"""Message encoding: msgpack maps, numpy arrays as ``{"dtype", "shape", "data"}`` (PROTOCOL.md).

``to_wire`` turns a Python/numpy value into something msgpack can pack (numpy arrays become wire
arrays, numpy scalars become Python scalars); ``from_wire`` turns every wire array inside a decoded
reply back into a numpy array.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

import msgpack
import numpy as np

__all__ = ["DTYPES", "PROTOCOL_VERSION", "INF_WIRE", "encode_array", "decode_array", "is_wire_array",
           "to_wire", "from_wire", "pack", "unpack", "jsonable"]

PROTOCOL_VERSION = 1
#: The number that stands for infinity in JSON-ish space bounds.
INF_WIRE = 1.7976931348623157e308

#: wire dtype name -> little-endian numpy dtype
DTYPES: Dict[str, np.dtype[Any]] = {
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "int8": np.dtype("i1"),
    "int16": np.dtype("<i2"),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "uint8": np.dtype("u1"),
    "bool": np.dtype("?"),
}
_WIRE_KEYS = frozenset(("dtype", "shape", "data"))


def _wire_dtype(dt: Any) -> str:
    """The wire dtype name a numpy dtype travels as (widening where the wire has no exact match)."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return "bool"
    if dt.kind == "f":
        return "float64" if dt.itemsize > 4 else "float32"
    if dt.kind == "i":
        return {1: "int8", 2: "int16", 4: "int32"}.get(dt.itemsize, "int64")
    if dt.kind == "u":
        return {1: "uint8", 2: "int32", 4: "int64"}.get(dt.itemsize, "int64")
    raise TypeError("dtype %s cannot travel on the wire (numeric or bool only)" % dt)


def encode_array(a: Any, dtype: Optional[str] = None) -> Dict[str, Any]:
    """numpy array (or array-like) -> ``{"dtype", "shape", "data"}`` (little-endian, C order)."""
    a = np.asarray(a)
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > np.iinfo(np.int64).max:
        raise OverflowError("uint64 value does not fit the wire's int64")
    name = dtype or _wire_dtype(a.dtype)
    b = np.asarray(a, dtype=DTYPES[name])  # (np.ascontiguousarray would turn a 0-d array into 1-d)
    return {"dtype": name, "shape": [int(d) for d in b.shape], "data": b.tobytes(order="C")}


def is_wire_array(o: Any) -> bool:
    return isinstance(o, dict) and len(o) == 3 and _WIRE_KEYS.issuperset(o) and \
        isinstance(o.get("data"), (bytes, bytearray, memoryview))


def decode_array(o: Dict[str, Any]) -> np.ndarray[Any, Any]:
    """``{"dtype", "shape", "data"}`` -> a writable numpy array (shape ``[]`` gives a 0-d array)."""
    name = o["dtype"]
    if name not in DTYPES:
        raise ValueError("unknown wire dtype %r" % (name,))
    dt = DTYPES[name]
    shape = tuple(int(d) for d in o["shape"])
    n = 1
    for d in shape:
        if d < 0:
            raise ValueError("negative extent in wire array shape %r" % (shape,))
        n *= d
    data = o["data"]
    if len(data) != n * dt.itemsize:
        raise ValueError("wire array of %s%s carries %d bytes, expected %d" % (name, list(shape), len(data), n * dt.itemsize))
    a = np.frombuffer(data, dtype=dt).reshape(shape)
    return a.astype(dt.newbyteorder("="), copy=True)


def to_wire(v: Any) -> Any:
    """Python/numpy value -> msgpack-packable value (numpy arrays become wire arrays)."""
    if isinstance(v, np.ndarray):
        return encode_array(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, dict):
        return {str(k): to_wire(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_wire(x) for x in v]
    return v


def from_wire(v: Any) -> Any:
    """Decoded msgpack value -> the same with every wire array replaced by a numpy array."""
    if isinstance(v, dict):
        if is_wire_array(v):
            return decode_array(v)
        return {k: from_wire(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_wire(x) for x in v]
    return v


def _default(v: Any) -> Any:
    """msgpack hook for the types it cannot pack itself (numpy arrays and scalars, tuples are lists)."""
    if isinstance(v, np.ndarray):
        return encode_array(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    raise TypeError("cannot send a %s on the wire" % type(v).__name__)


def pack(msg: Any) -> bytes:
    """A message map -> msgpack bytes (numpy arrays become wire arrays)."""
    out: bytes = msgpack.packb(msg, use_bin_type=True, default=_default)
    return out


def unpack(buf: Any) -> Any:
    return msgpack.unpackb(buf, raw=False, strict_map_key=False)


def jsonable(v: Any) -> Any:
    """A JSON-serialisable copy of v (numpy arrays become nested lists; NaN/inf become None)."""
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return v
