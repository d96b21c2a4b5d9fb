#!/usr/bin/env python3
"""Bounded hostile-message mix against a real hwgym-server binary (docs/security.md, "Hostile mix").

Starts BIN/hwgym-server on an ipc endpoint in a scratch dir (a --data-dir with a small hw.json,
--cache FILE, a short --request-timeout, diag step_us capped), opens a few DEALER clients and
keeps WINDOW requests in flight on each until MESSAGES were sent or SECONDS passed. The mix:
valid requests of every op (sessions made up front: diag-v0, maestro-v0, placement-v0 with
hw_file), lean evaluate_batch on the cache (duplicates, other clients' points, data-file
configs), costly points at the caps, and mutations of all of them (bytes flipped, cut, extended,
fields of the wrong type, invalid UTF-8, NaN/inf, huge counts, deep nesting, raw garbage).

Every request must get exactly one reply that is msgpack with valid UTF-8 strings, a map with a
boolean "ok" and, when not ok, an error {code: str, message: non-empty str}. Counted: sent,
replies, invalid replies, missing replies (none within HANG seconds = a hang), and whether the
server process died or its log holds a sanitizer report. Exit status 0 only when all are clean.

Usage: scripts/hostile_mix.py --bin build/asan/bin --messages 200000 --seconds 600 [--seed N]
"""
import argparse
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

import msgpack
import zmq

T = "T" * 32  # placeholder tokens replaced by live sessions
U = "U" * 32
P = "P" * 32


def wire(dtype, shape, raw):
    return {"dtype": dtype, "shape": shape, "data": raw}


def base_requests(rng):
    pts8 = [[rng.randrange(8) for _ in range(4)] for _ in range(rng.randrange(1, 40))]
    pl = [[rng.randrange(3) for _ in range(114)] for _ in range(rng.randrange(1, 4))]
    return [
        {"op": "hello", "v": 1},
        {"op": "ping", "v": 1},
        {"op": "envs", "v": 1},
        {"op": "stats", "v": 1},
        {"op": "spaces", "v": 1, "env": rng.choice(["diag-v0", "maestro-v0", "dram-v0", "sched-v0", "mmap-v0", "placement-v0"])},
        {"op": "make", "v": 1, "env": "diag-v0", "config": {"dims": 4, "choices": 8}},
        {"op": "make", "v": 1, "env": "diag-v0", "num_envs": rng.randrange(1, 64)},
        {"op": "make", "v": 1, "env": "mmap-v0", "num_envs": 4096, "config": {"problem": "transformer_big_train"}},
        {"op": "make", "v": 1, "env": "placement-v0", "config": {"hw_file": "hw.json"}},
        {"op": "make", "v": 1, "env": "dram-v0", "config": {"count": rng.choice([100, 1000, 10 ** 7])}},
        {"op": "reset", "v": 1, "session": T, "seed": rng.randrange(1 << 62)},
        {"op": "step", "v": 1, "session": T, "action": [rng.randrange(8) for _ in range(4)]},
        {"op": "step", "v": 1, "session": T, "action": wire("int64", [4], struct.pack("<4q", *[rng.randrange(9) for _ in range(4)]))},
        {"op": "step", "v": 1, "session": U, "action": [rng.randrange(6) for _ in range(10)]},
        {"op": "snapshot", "v": 1, "session": T},
        {"op": "evaluate", "v": 1, "env": "diag-v0", "point": [rng.randrange(8) for _ in range(4)]},
        {"op": "evaluate", "v": 1, "env": "maestro-v0", "point": [rng.randrange(4) for _ in range(10)]},
        {"op": "evaluate_batch", "v": 1, "env": "diag-v0", "config": {"dims": 4, "choices": 8}, "points": pts8, "metrics": "all"},
        {"op": "evaluate_batch", "v": 1, "env": "diag-v0", "config": {"step_us": 20000}, "points": pts8[:8], "metrics": []},
        {"op": "evaluate_batch", "v": 1, "env": "diag-v0", "points": wire("int8", [len(pts8), 4], bytes(sum(pts8, []))),
         "metrics": ["distance"]},
        {"op": "evaluate_batch", "v": 1, "env": "placement-v0", "config": {"hw_file": "hw.json"}, "points": pl, "metrics": "all"},
        {"op": "evaluate_batch", "v": 1, "session": P, "points": pl, "metrics": ["latency_us"]},
        {"op": "evaluate_batch", "v": 1, "env": "maestro-v0", "points": [[rng.randrange(4) for _ in range(10)]] * 3},
        {"op": "close", "v": 1, "session": "Z" * 32},
    ]


def mutate_value(rng, v, depth=0):
    r = rng.random()
    if r < 0.15:
        return rng.choice([None, True, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 1e308, float("nan"), float("inf"), "",
                           b"\xff\xfe", "\u00e9" * 300, [], {}, [[[[]]]], "x" * 5000])
    if isinstance(v, dict) and v:
        v = dict(v)
        k = rng.choice(list(v))
        if rng.random() < 0.2:
            del v[k]
        else:
            v[k] = mutate_value(rng, v[k], depth + 1)
        return v
    if isinstance(v, list) and v:
        v = list(v)
        i = rng.randrange(len(v))
        v[i] = mutate_value(rng, v[i], depth + 1)
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return rng.choice([v + 1, -v, v * 10 ** 9, 0])
    if isinstance(v, str):
        return rng.choice([v + "\x00", v[:1], "../" + v, v * 3])
    return v


def message(rng, tokens):
    reqs = base_requests(rng)
    r = rng.random()
    if r < 0.05:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))  # raw garbage
    if r < 0.08:  # deep nesting, written by hand (msgpack-python stops at 512 levels)
        n = rng.randrange(50, 3000)
        head = msgpack.packb({"op": "make", "v": 1, "env": "diag-v0"})
        return bytes([head[0] + 1]) + head[1:] + msgpack.packb("config") + b"\x81\xa1a" + b"\x91" * n + b"\x90"
    q = rng.choice(reqs)
    if r < 0.55:
        q = mutate_value(rng, q)
    if isinstance(q, dict):
        q = dict(q)
        q["id"] = rng.randrange(1 << 40)
        if isinstance(q.get("session"), str) and q["session"] in tokens:
            q["session"] = tokens[q["session"]]
    try:
        b = msgpack.packb(q, use_bin_type=True)
    except Exception:
        b = msgpack.packb({"op": "ping", "v": 1})
    r2 = rng.random()
    if r2 < 0.1 and len(b) > 2:  # flip bytes
        ba = bytearray(b)
        for _ in range(rng.randrange(1, 4)):
            ba[rng.randrange(len(ba))] = rng.randrange(256)
        b = bytes(ba)
    elif r2 < 0.15:
        b = b[:rng.randrange(len(b) + 1)]
    elif r2 < 0.17:
        b = b + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    return b


def check_reply(body):
    """None when the reply is valid, else why not."""
    try:
        rep = msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception as e:
        return "undecodable (%s)" % type(e).__name__
    if not isinstance(rep, dict) or not isinstance(rep.get("ok"), bool):
        return "no boolean ok"
    if not rep["ok"]:
        err = rep.get("error")
        if not isinstance(err, dict) or not isinstance(err.get("code"), str) or not isinstance(err.get("message"), str) or not err["message"]:
            return "malformed error %r" % (err,)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory holding hwgym-server")
    ap.add_argument("--messages", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--window", type=int, default=8)
    ap.add_argument("--hang", type=float, default=30, help="seconds without a reply that count as a hang")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="hwgym-hostile-")
    os.makedirs(os.path.join(tmp, "data"))
    with open(os.path.join(tmp, "data", "hw.json"), "w") as f:
        f.write('{"element_bytes": 2}\n')
    ep = "ipc://%s/s.sock" % tmp
    log = open(os.path.join(tmp, "server.log"), "w")
    env = dict(os.environ, ASAN_OPTIONS="abort_on_error=0:detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    srv = subprocess.Popen([os.path.join(a.bin, "hwgym-server"), "--bind", ep, "--workers", "2", "--data-dir", os.path.join(tmp, "data"),
                            "--cache", os.path.join(tmp, "cache.db"), "--cache-mb", "64", "--request-timeout", "2",
                            "--env-limit", "diag-v0.step_us=20000", "--max-sessions", "2000", "--session-ttl", "30"],
                           stdout=log, stderr=subprocess.STDOUT, env=env)
    ctx = zmq.Context()
    socks = []
    for _ in range(a.clients):
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(ep)
        socks.append(s)
    # live sessions for the placeholder tokens
    tokens = {}
    s0 = socks[0]
    for ph, env_id, cfg in ((T, "diag-v0", {"dims": 4, "choices": 8}), (U, "maestro-v0", None), (P, "placement-v0", {"hw_file": "hw.json"})):
        for _ in range(100):
            s0.send_multipart([b"", msgpack.packb({"op": "make", "v": 1, "env": env_id, "config": cfg, "id": 1})])
            if s0.poll(2000):
                rep = msgpack.unpackb(s0.recv_multipart()[-1], raw=False)
                if rep.get("ok"):
                    tokens[ph] = rep["session"]
                    break
            time.sleep(0.1)
    out = {p: 0 for p in socks}
    sent = replies = invalid = missing = 0
    examples = []
    t0 = time.monotonic()
    last = t0
    poller = zmq.Poller()
    for s in socks:
        poller.register(s, zmq.POLLIN)
    while True:
        now = time.monotonic()
        done_sending = sent >= a.messages or now - t0 > a.seconds
        for s in socks:
            while not done_sending and out[s] < a.window and sent < a.messages:
                s.send_multipart([b"", message(rng, tokens)])
                out[s] += 1
                sent += 1
        if done_sending and not any(out.values()):
            break
        ev = dict(poller.poll(1000))
        if not ev:
            if srv.poll() is not None:
                break
            if time.monotonic() - last > a.hang:
                missing = sum(out.values())
                break
            continue
        for s in ev:
            while s.poll(0):
                body = s.recv_multipart()[-1]
                out[s] -= 1
                replies += 1
                last = time.monotonic()
                why = check_reply(body)
                if why:
                    invalid += 1
                    if len(examples) < 5:
                        examples.append(why)
        if replies and replies % 20000 == 0:
            print("hostile_mix: %d sent, %d replies, %.0f s" % (sent, replies, time.monotonic() - t0), file=sys.stderr, flush=True)
    wall = time.monotonic() - t0
    alive = srv.poll() is None
    if alive:
        srv.send_signal(signal.SIGTERM)
        try:
            rc = srv.wait(60)
        except subprocess.TimeoutExpired:
            srv.kill()
            rc = "killed after 60 s"
    else:
        rc = srv.returncode
    for s in socks:
        s.close(0)
    ctx.term()
    log.close()
    text = open(os.path.join(tmp, "server.log"), errors="replace").read()
    sanitizer = "ERROR: AddressSanitizer" in text or "runtime error:" in text or "ERROR: LeakSanitizer" in text
    res = {"sent": sent, "replies": replies, "invalid_replies": invalid, "missing_replies": missing, "server_died": not alive,
           "exit_status": rc, "sanitizer_report": sanitizer, "wall_s": round(wall, 1), "seed": a.seed, "examples": examples}
    print(res)
    clean = replies == sent and not invalid and not missing and alive and rc == 0 and not sanitizer
    if clean:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("hostile_mix: NOT CLEAN; log and files kept in %s" % tmp, file=sys.stderr)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
