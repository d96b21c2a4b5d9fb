#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (committed): one valid request per op and
variant, as msgpack. Tokens are the placeholders fuzz_request.c replaces: 32 'T' (a diag-v0
session) and 32 'U' (a maestro-v0 session). Usage: fuzz/make_corpus.py (from the repo root)."""
import hashlib
import json
import os
import sqlite3
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


# fuzz_checkpoint: entry records [name length][name][type][count i64][bytes u16][data] and one
# whole checkpoint file (the schema of agents/lib/run/checkpoint.c; owner "main")
CK_ENTRIES = [
    ("w", 1, 3, struct.pack("<3d", 0.5, -1.0, 2.0)),
    ("i", 2, 2, struct.pack("<2q", 7, -7)),
    ("u", 3, 4, b"\x00\x01\x02\x03"),
    ("cfg", 4, 13, b'{"seed": 1.5}'),
    ("rng", 5, 12, b"mt19937\x00" + b"\x01\x02\x03\x04"),
    ("ppo.theta", 1, 1000, struct.pack("<2d", 1.0, 2.0)),  # a count past its blob (finding 3)
]


def ck_record(name, typ, n, data):
    nb = name.encode()
    return struct.pack("<B", len(nb)) + nb + struct.pack("<BqH", typ, n, len(data)) + data


def ck_file(path):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=512")
    db.execute("CREATE TABLE ckpt(owner TEXT NOT NULL, samples INTEGER NOT NULL, config TEXT, created REAL,"
               " PRIMARY KEY(owner, samples))")
    db.execute("CREATE TABLE ckpt_entry(owner TEXT NOT NULL, samples INTEGER NOT NULL, name TEXT NOT NULL,"
               " type INTEGER NOT NULL, n INTEGER NOT NULL, data BLOB, PRIMARY KEY(owner, samples, name))")
    db.execute("INSERT INTO ckpt VALUES('main', 10, ?, 0)", (json.dumps({"seed": 1}),))
    for name, typ, n, data in CK_ENTRIES[:5]:
        db.execute("INSERT INTO ckpt_entry VALUES('main', 10, ?, ?, ?, ?)", (name, typ, n, data))
    db.commit()
    db.close()


def main_checkpoint():
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "checkpoint")
    os.makedirs(d, exist_ok=True)
    for k in range(len(CK_ENTRIES)):
        with open(os.path.join(d, "records-%d" % k), "wb") as f:
            f.write(b"".join(ck_record(*e) for e in CK_ENTRIES[k:] + CK_ENTRIES[:k]))
    ck_file(os.path.join(d, "file-main.db"))


if __name__ == "__main__":
    main()
    main_checkpoint()
