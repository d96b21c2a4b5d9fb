#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (committed): one valid request per op and
variant, as msgpack. Tokens are the placeholders fuzz_request.c replaces: 32 'T' (a diag-v0
session) and 32 'U' (a maestro-v0 session). Usage: fuzz/make_corpus.py (from the repo root)."""
import hashlib
import os
import struct

import msgpack

T, U = "T" * 32, "U" * 32


def wire(dtype, shape, raw):
    return {"dtype": dtype, "shape": shape, "data": raw}


REQS = [
    {"op": "hello", "v": 1, "id": 1},
    {"op": "ping", "v": 1},
    {"op": "envs", "v": 1, "id": "a"},
    {"op": "stats", "v": 1},
    {"op": "make", "v": 1, "env": "diag-v0", "config": {"dims": 4, "step_us": 10}},
    {"op": "make", "v": 1, "env": "diag-v0", "num_envs": 4, "config": {"action_space": "box"}},
    {"op": "make", "v": 1, "env": "diag-v0", "agents": [{"name": "a", "dims": [0, 1]}, {"name": "b", "dims": [2, 3]}],
     "agent_timeout_ms": 200},
    {"op": "make", "v": 1, "env": "maestro-v0", "config": {"model": "vgg16", "layer": 2, "objective": "energy"}},
    {"op": "make", "v": 1, "env": "dram-v0", "config": {"count": 200, "workload": "random"}},
    {"op": "make", "v": 1, "env": "dram-v0", "config": {"workload": "file", "trace_file": {"text": "0:\tread\t0x0\n4:\twrite\t0x40\n"}}},
    {"op": "make", "v": 1, "env": "mmap-v0", "config": {"problem": "alexnet_train_batch_32"}},
    {"op": "make", "v": 1, "env": "placement-v0", "config": {"workload": "resnet50"}},
    {"op": "make", "v": 1, "env": "sched-v0", "config": {"accelerator": "simba"}},
    {"op": "make", "v": 1, "env": "maestro-v0", "config": {"model_file": "x.csv"}},
    {"op": "spaces", "v": 1, "session": T},
    {"op": "spaces", "v": 1, "env": "dram-v0"},
    {"op": "reset", "v": 1, "session": T, "seed": 3},
    {"op": "reset", "v": 1, "session": U, "seed": 1, "options": {}},
    {"op": "step", "v": 1, "session": T, "action": [1, 2, 3, 4]},
    {"op": "step", "v": 1, "session": T, "action": wire("int64", [4], struct.pack("<4q", 1, 2, 3, 4))},
    {"op": "step", "v": 1, "session": U, "action": [3, 1, 0, 1, 5, 2, 0, 0, 3, 5]},
    {"op": "step", "v": 1, "session": T, "action": [1e19, 0, 0, 0]},
    {"op": "snapshot", "v": 1, "session": T},
    {"op": "restore", "v": 1, "session": T, "snapshot": 1},
    {"op": "drop_snapshot", "v": 1, "session": T, "snapshot": 1},
    {"op": "evaluate", "v": 1, "session": U, "point": [3, 1, 0, 1, 5, 2, 0, 0, 3, 5]},
    {"op": "evaluate", "v": 1, "env": "diag-v0", "point": [0, 1, 2, 3]},
    {"op": "evaluate", "v": 1, "env": "mmap-v0", "point": {"actions": "0120"}},
    {"op": "evaluate", "v": 1, "env": "sched-v0", "point": {"baseline": "random-pruned", "samples": 50}},
    {"op": "evaluate", "v": 1, "env": "placement-v0", "point": "heuristic"},
    {"op": "evaluate_batch", "v": 1, "env": "diag-v0", "points": [[0, 1, 2, 3], [1, 1, 1, 1]]},
    {"op": "evaluate_batch", "v": 1, "session": T, "points": wire("int32", [2, 4], struct.pack("<8i", *range(8)))},
    {"op": "evaluate_batch", "v": 1, "env": "dram-v0", "config": {"count": 100}, "points": [[0] * 10]},
    {"op": "join", "v": 1, "session": T, "agent": "a"},
    {"op": "close", "v": 1, "session": T},
]


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    for sub in ("request", "decode"):
        d = os.path.join(root, "corpus", sub)
        os.makedirs(d, exist_ok=True)
        for r in REQS:
            b = msgpack.packb(r, use_bin_type=True)
            name = "%s-%s" % (r["op"], hashlib.sha1(b).hexdigest()[:10])
            with open(os.path.join(d, name), "wb") as f:
                f.write(b)


if __name__ == "__main__":
    main()
