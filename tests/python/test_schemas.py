"""schemas/protocol: every file is JSON Schema 2020-12, every op of PROTOCOL.md has a request and a
reply schema, and real messages validate (with python3-jsonschema when importable, and always with
the small validator below, which covers the keywords these schemas use)."""

import glob
import json
import math
import os
import re
import unittest

import numpy as np

import hwgym
from hwgym.wire import encode_array, pack, unpack

from ._support import REPO

SDIR = os.path.join(REPO, "schemas", "protocol")
KEYWORDS = {"$schema", "$id", "$ref", "$defs", "title", "description", "type", "const", "enum", "required",
            "properties", "additionalProperties", "items", "minItems", "maxItems", "minimum", "pattern", "anyOf"}


def load_all():
    out = {}
    for p in sorted(glob.glob(os.path.join(SDIR, "*.schema.json"))):
        with open(p) as f:
            out[os.path.basename(p)] = json.load(f)
    return out


class MiniValidator:
    """Just enough of JSON Schema 2020-12 for these files. Raises AssertionError with a path."""

    def __init__(self, schemas):
        self.schemas = schemas

    def resolve(self, ref, doc):
        f, _, frag = ref.partition("#")
        doc = f or doc
        node = self.schemas[doc]
        for part in [p for p in frag.split("/") if p]:
            node = node[part]
        return node, doc

    def is_type(self, x, t):
        if t == "object":
            return isinstance(x, dict)
        if t == "array":
            return isinstance(x, list)
        if t == "string":
            return isinstance(x, str)
        if t == "integer":
            return isinstance(x, int) and not isinstance(x, bool)
        if t == "number":
            return isinstance(x, (int, float)) and not isinstance(x, bool)
        if t == "boolean":
            return isinstance(x, bool)
        if t == "null":
            return x is None
        raise AssertionError("unknown type %r" % t)

    def check(self, x, s, doc, path="$"):
        if s is True:
            return
        for k in s:
            assert k in KEYWORDS, "schema keyword %r not handled by MiniValidator" % k
        if "$ref" in s:
            sub, d = self.resolve(s["$ref"], doc)
            self.check(x, sub, d, path)
        if "type" in s:
            ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
            assert any(self.is_type(x, t) for t in ts), "%s: %r is not of type %s" % (path, x, ts)
        if "const" in s:
            assert x == s["const"] and type(x) is type(s["const"]), "%s: %r != const %r" % (path, x, s["const"])
        if "enum" in s:
            assert x in s["enum"], "%s: %r not in %s" % (path, x, s["enum"])
        if "anyOf" in s:
            errs = []
            for alt in s["anyOf"]:
                try:
                    self.check(x, alt, doc, path)
                    break
                except AssertionError as e:
                    errs.append(str(e))
            else:
                raise AssertionError("%s: no alternative matched: %s" % (path, "; ".join(errs)))
        if isinstance(x, dict):
            for r in s.get("required", []):
                assert r in x, "%s: missing %r" % (path, r)
            props = s.get("properties", {})
            for k, v in x.items():
                if k in props:
                    self.check(v, props[k], doc, "%s.%s" % (path, k))
                elif "additionalProperties" in s:
                    ap = s["additionalProperties"]
                    assert ap is not False, "%s: unexpected field %r" % (path, k)
                    self.check(v, ap, doc, "%s.%s" % (path, k))
        if isinstance(x, list):
            if "items" in s:
                for i, v in enumerate(x):
                    self.check(v, s["items"], doc, "%s[%d]" % (path, i))
            assert len(x) >= s.get("minItems", 0), "%s: too few items" % path
            assert len(x) <= s.get("maxItems", math.inf), "%s: too many items" % path
        if "minimum" in s and self.is_type(x, "number"):
            assert x >= s["minimum"], "%s: %r < %r" % (path, x, s["minimum"])
        if "pattern" in s and isinstance(x, str):
            assert re.search(s["pattern"], x), "%s: %r does not match %s" % (path, x, s["pattern"])


def protocol_ops():
    with open(os.path.join(REPO, "protocol", "PROTOCOL.md")) as f:
        return sorted(set(re.findall(r'\{"op":"(\w+)"', f.read())))


TOKEN = "9f1c" * 8
OBS = encode_array(np.zeros(5, np.float32))
MESSAGES = [
    ("hello.request", {"op": "hello", "v": 1, "id": 1, "client": "my-agent/0.3"}),
    ("hello.reply", {"id": 1, "ok": True, "server": "hwgym-server", "version": "0.1.0", "protocol": 1, "protocols": [1],
                     "envs": ["diag-v0"], "limits": {"max_msg": 67108864}}),
    ("ping.reply", {"id": 2, "ok": True, "time": 1732252800.123}),
    ("envs.reply", {"id": 3, "ok": True, "envs": [{"id": "diag-v0", "summary": "diagnostic env"}]}),
    ("make.request", {"op": "make", "v": 1, "id": 4, "env": "diag-v0", "config": {"dims": 3}, "num_envs": 4}),
    ("make.request", {"op": "make", "v": 1, "id": 4, "env": "diag-v0", "config": {},
                      "agents": [{"name": "a0", "dims": [0, 1]}, {"name": "a1", "dims": [2]}], "agent_timeout_ms": 500}),
    ("make.reply", {"id": 4, "ok": True, "session": TOKEN, "env": "diag-v0", "kind": "single", "num_envs": 1,
                    "action_space": {"type": "MultiDiscrete", "nvec": [8, 8, 8], "names": ["p0", "p1", "p2"],
                                     "labels": [["v0"] * 8, None, ["v0"] * 8]},
                    "observation_space": {"type": "Box", "shape": [5], "dtype": "float32", "low": [0] * 5, "high": [1] * 5}}),
    ("reset.request", {"op": "reset", "v": 1, "id": 6, "session": TOKEN, "seed": 42, "options": {}}),
    ("reset.request", {"op": "reset", "v": 1, "id": 6, "session": TOKEN, "seed": [1, 2, 3]}),
    ("reset.reply", {"id": 6, "ok": True, "obs": OBS, "info": {}}),
    ("reset.reply", {"id": 6, "ok": True, "obs": {"last_action": OBS, "t": encode_array(np.int64(0))}, "info": [{}, {}]}),
    ("step.request", {"op": "step", "v": 1, "id": 7, "session": TOKEN, "action": encode_array(np.array([1, 2, 3]))}),
    ("step.request", {"op": "step", "v": 1, "id": 7, "session": TOKEN, "action": 5}),
    ("step.request", {"op": "step", "v": 1, "id": 7, "session": TOKEN, "agent": "a1", "action": [[5], [6]]}),
    ("step.reply", {"id": 7, "ok": True, "obs": OBS, "reward": 0.75, "terminated": False, "truncated": False,
                    "info": {"distance": 0.25}}),
    ("step.reply", {"id": 7, "ok": True, "obs": OBS, "reward": encode_array(np.zeros(2)),
                    "terminated": encode_array(np.zeros(2, bool)), "truncated": encode_array(np.zeros(2, bool)),
                    "info": [{}, {"autoreset": True}]}),
    ("evaluate.request", {"op": "evaluate", "v": 1, "id": 8, "env": "diag-v0", "config": {}, "point": [3, 1, 4]}),
    ("evaluate.reply", {"id": 8, "ok": True, "reward": 1.2e-5, "metrics": {"runtime": 81234, "feasible": True}}),
    ("evaluate_batch.request", {"op": "evaluate_batch", "v": 1, "id": 9, "session": TOKEN, "points": [[1, 2], {"directives": "x"}]}),
    ("evaluate_batch.reply", {"id": 9, "ok": True, "reward": encode_array(np.array([1.0, np.nan])), "metrics": [{}, {}],
                              "errors": [None, {"code": "BAD_ACTION", "message": "point[0]: 9 out of range"}]}),
    ("snapshot.reply", {"id": 10, "ok": True, "snapshot": 1}),
    ("restore.request", {"op": "restore", "v": 1, "id": 11, "session": TOKEN, "snapshot": 1}),
    ("drop_snapshot.reply", {"id": 12, "ok": True}),
    ("close.request", {"op": "close", "v": 1, "id": 13, "session": TOKEN}),
    ("join.request", {"op": "join", "v": 1, "id": 14, "session": TOKEN, "agent": "a1"}),
    ("join.reply", {"id": 14, "ok": True, "agent": "a1", "dims": [2], "action_space": {"type": "MultiDiscrete", "nvec": [8]},
                    "observation_space": {"type": "Discrete", "n": 3}, "agents": ["a0", "a1"]}),
    ("stats.reply", {"id": 17, "ok": True, "uptime_s": 12.5, "workers": 2, "sessions": 3, "snapshots": 1, "steps": 120345,
                     "env_steps": 1200000, "requests": 120400, "errors": 12,
                     "ops": {"step": {"count": 120345, "p50_us": 31.0, "p90_us": 40.2, "p99_us": 77.9, "max_us": 900.1}}}),
    ("step.reply", {"id": 7, "ok": False, "error": {"code": "BAD_ACTION", "message": "action element 3 (tile_K): 9 out of range [0, 7]"}}),
]
BAD = [
    ("reset.request", {"op": "reset", "v": 1, "session": TOKEN, "seed": [1, None]}),  # the server wants integers
    ("step.request", {"op": "step", "v": 1, "session": TOKEN}),  # no action
    ("step.request", {"op": "reset", "v": 1, "session": TOKEN, "action": 1}),  # wrong op
    ("make.reply", {"id": 4, "ok": True, "session": "xyz", "kind": "single", "action_space": {}, "observation_space": {}}),
    ("reset.reply", {"id": 6, "ok": True, "obs": {"dtype": "complex64", "shape": [1], "data": b"\0" * 8}}),
    ("step.reply", {"id": 7, "ok": False, "error": {"code": "NO_SUCH_CODE", "message": "x"}}),
    ("space", {"type": "Box", "shape": [2], "low": [0, 0], "high": [1, 1]}),  # no dtype
]


class TestSchemas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schemas = load_all()
        cls.v = MiniValidator(cls.schemas)

    def test_every_file_is_a_2020_12_schema(self):
        self.assertGreaterEqual(len(self.schemas), 33)
        for name, s in self.schemas.items():
            self.assertEqual(s["$schema"], "https://json-schema.org/draft/2020-12/schema", name)
            self.assertTrue(s["$id"].endswith("/" + name), name)
        for extra in ("array.schema.json", "space.schema.json", "error.schema.json"):
            self.assertIn(extra, self.schemas)

    def test_every_op_has_request_and_reply(self):
        ops = protocol_ops()
        self.assertGreaterEqual(len(ops), 15, ops)
        for op in ops:
            self.assertIn(op + ".request.schema.json", self.schemas)
            self.assertIn(op + ".reply.schema.json", self.schemas)
            self.assertEqual(self.schemas[op + ".request.schema.json"]["properties"]["op"], {"const": op})
        # and no schema for an op PROTOCOL.md does not have
        for name in self.schemas:
            if name.endswith(".request.schema.json"):
                self.assertIn(name.split(".")[0], ops)

    def test_refs_resolve(self):
        def walk(node, doc):
            if isinstance(node, dict):
                if "$ref" in node:
                    self.v.resolve(node["$ref"], doc)
                for v in node.values():
                    walk(v, doc)
            elif isinstance(node, list):
                for v in node:
                    walk(v, doc)
        for name, s in self.schemas.items():
            walk(s, name)

    def validate(self, kind, msg):
        name = kind + ".schema.json"
        self.v.check(unpack(pack(msg)), self.schemas[name], name)

    def test_messages_validate(self):
        for kind, msg in MESSAGES:
            with self.subTest(kind=kind, msg=str(msg)[:60]):
                self.validate(kind, msg)
        for kind, msg in BAD:
            with self.subTest(bad=kind, msg=str(msg)[:60]):
                with self.assertRaises(AssertionError):
                    self.validate(kind, msg)

    def test_client_space_encoding_validates(self):
        for s in (hwgym.spaces.Discrete(3), hwgym.spaces.MultiDiscrete([2, 3]), hwgym.spaces.MultiBinary(4),
                  hwgym.spaces.Box(0, np.inf, (2,)), hwgym.spaces.Dict({"a": hwgym.spaces.Discrete(2)})):
            self.validate("space", hwgym.space_to_json(s))

    def test_with_jsonschema(self):
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed (the MiniValidator tests above still ran)")
        for s in self.schemas.values():
            jsonschema.Draft202012Validator.check_schema(s)


if __name__ == "__main__":
    unittest.main()
