"""Low-level client: one method per protocol op (PROTOCOL.md), over a ZeroMQ DEALER socket.

Thread-safe: a lock serialises each request/reply exchange on the socket.  Use one Client per
thread when requests block for long (multi-agent barriers), so that threads do not queue.
"""

import itertools
import os
import threading
import time

import zmq

from . import __version__
from .errors import ClientTimeout, HwgymError, TransportError, UnsupportedVersion
from .wire import PROTOCOL_VERSION, from_wire, pack, unpack

__all__ = ["Client", "DEFAULT_ENDPOINT", "DEFAULT_TIMEOUT"]

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5555"
DEFAULT_TIMEOUT = 30.0


def _opt(d, **kw):
    for k, v in kw.items():
        if v is not None:
            d[k] = v
    return d


class Client:
    """A connection to one hwgym-server.

    ``timeout`` (seconds) bounds every request unless the call gives its own ``timeout=``; a request
    without a reply in time raises :class:`hwgym.errors.ClientTimeout` (code ``"IO"``).  Replies
    whose ``id`` does not match the request (e.g. late replies to timed-out requests) are dropped.
    Errors the server reports are raised as :class:`hwgym.HwgymError` subclasses.
    """

    def __init__(self, endpoint=DEFAULT_ENDPOINT, timeout=DEFAULT_TIMEOUT, context=None,
                 client_name=None, version=PROTOCOL_VERSION):
        self.endpoint = endpoint
        self.timeout = float(timeout) if timeout is not None else None
        self.client_name = client_name or "hwgym-python/%s" % __version__
        self.version = int(version)
        self._ctx = context or zmq.Context.instance()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._hello = None
        self._closed = False
        self._pid = os.getpid()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        server_key = os.environ.get("HWGYM_CURVE_SERVERKEY")
        if server_key:  # the server runs with --curve-secret (PROTOCOL.md, "Security")
            pub = os.environ.get("HWGYM_CURVE_PUBLICKEY")
            sec = os.environ.get("HWGYM_CURVE_SECRETKEY")
            if not (pub and sec):
                pub, sec = (k.decode() for k in zmq.curve_keypair())
            self._sock.setsockopt(zmq.CURVE_SERVERKEY, server_key.encode())
            self._sock.setsockopt(zmq.CURVE_PUBLICKEY, pub.encode())
            self._sock.setsockopt(zmq.CURVE_SECRETKEY, sec.encode())
        try:
            self._sock.connect(endpoint)
        except zmq.ZMQError as e:
            self._sock.close(0)
            self._closed = True
            raise TransportError("IO", "cannot connect to %r: %s" % (endpoint, e)) from None

    # -- transport --------------------------------------------------------------------------
    def request(self, op, timeout=None, **fields):
        """Send ``{"op": op, "v": 1, "id": n, **fields}`` (``None`` fields are left out) and return
        the reply map with wire arrays decoded to numpy; raise HwgymError on an error reply."""
        msg = _opt({}, **fields)
        msg["op"] = op
        msg["v"] = self.version
        tmo = self.timeout if timeout is None else timeout
        with self._lock:
            if self._closed:
                raise TransportError("IO", "client is closed", op)
            if os.getpid() != self._pid:  # ZeroMQ sockets do not survive fork()
                raise TransportError("IO", "this Client was created in process %d; make a new one after fork()" % self._pid, op)
            rid = next(self._ids)
            msg["id"] = rid
            try:
                buf = pack(msg)
            except (TypeError, ValueError, OverflowError) as e:
                raise TransportError("IO", "cannot encode %s request: %s" % (op, e), op) from None
            deadline = None if tmo is None else time.monotonic() + tmo
            try:
                self._sock.send(buf, copy=len(buf) < 65536)
                while True:
                    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                    if not self._sock.poll(None if wait is None else int(wait * 1000) + 1, zmq.POLLIN):
                        raise ClientTimeout("IO", "no reply to %r from %s within %.3g s" % (op, self.endpoint, tmo), op)
                    frames = self._sock.recv_multipart(copy=True)
                    try:
                        rep = unpack(frames[-1])
                    except Exception:  # garbage on the wire: not ours, drop it
                        continue
                    if not isinstance(rep, dict) or rep.get("id") != rid:
                        continue  # a stale reply to an earlier (timed-out) request
                    break
            except zmq.ZMQError as e:
                raise TransportError("IO", "%s request to %s failed: %s" % (op, self.endpoint, e), op) from None
        if not rep.get("ok", False):
            raise HwgymError.from_wire(rep.get("error"), op)
        return from_wire(rep)

    def close(self):
        """Close the socket (idempotent). Sessions on the server are not closed: use close_session."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if os.getpid() == self._pid:
                    self._sock.close(0)

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Client(%r%s)" % (self.endpoint, ", closed" if self._closed else "")

    # -- ops ----------------------------------------------------------------------------------
    def hello(self, timeout=None):
        """Version handshake. Raises UnsupportedVersion when the server does not speak ours."""
        rep = self.request("hello", timeout=timeout, client=self.client_name)
        protos = rep.get("protocols", [rep.get("protocol")])
        if self.version not in protos:
            raise UnsupportedVersion("UNSUPPORTED_VERSION", "client speaks protocol %d, server speaks %s"
                                     % (self.version, protos), "hello")
        self._hello = rep
        return rep

    def ensure_hello(self):
        """hello once per client (cached)."""
        return self._hello if self._hello is not None else self.hello()

    def ping(self, timeout=None):
        return self.request("ping", timeout=timeout)

    def envs(self):
        """List of ``{"id", "summary"}`` maps."""
        return self.request("envs")["envs"]

    def make(self, env, config=None, num_envs=None, agents=None, agent_timeout_ms=None, **extra):
        """Create a session; returns the reply (``session``, ``kind``, ``action_space``, ...)."""
        return self.request("make", env=env, config=config if config is not None else {}, num_envs=num_envs,
                            agents=agents, agent_timeout_ms=agent_timeout_ms, **extra)

    def spaces(self, session=None, env=None, config=None):
        return self.request("spaces", session=session, env=env, config=config)

    def reset(self, session, seed=None, options=None, agent=None, timeout=None):
        return self.request("reset", timeout=timeout, session=session, agent=agent, seed=seed, options=options)

    def step(self, session, action, agent=None, timeout=None):
        return self.request("step", timeout=timeout, session=session, agent=agent, action=action)

    def evaluate(self, point, env=None, config=None, session=None, timeout=None):
        """Score one design point: returns ``(reward, metrics)``."""
        rep = self.request("evaluate", timeout=timeout, env=env, config=config, session=session, point=point)
        return float(rep["reward"]), rep.get("metrics", {})

    def evaluate_batch(self, points, env=None, config=None, session=None, timeout=None):
        """Score K points across the server's workers: returns ``(rewards float64[K], metrics list,
        errors list)``; a failed point has reward NaN and ``errors[k]`` set to a HwgymError."""
        rep = self.request("evaluate_batch", timeout=timeout, env=env, config=config, session=session, points=points)
        import numpy as np
        rewards = np.asarray(rep["reward"], dtype=np.float64).reshape(-1)
        errors = [None if e is None else HwgymError.from_wire(e, "evaluate_batch") for e in rep.get("errors", [None] * len(rewards))]
        return rewards, rep.get("metrics", [{}] * len(rewards)), errors

    def snapshot(self, session):
        return self.request("snapshot", session=session)["snapshot"]

    def restore(self, session, snapshot):
        self.request("restore", session=session, snapshot=snapshot)

    def drop_snapshot(self, session, snapshot):
        self.request("drop_snapshot", session=session, snapshot=snapshot)

    def close_session(self, session, timeout=None):
        """The ``close`` op."""
        self.request("close", timeout=timeout, session=session)

    def join(self, session, agent):
        return self.request("join", session=session, agent=agent)

    def stats(self):
        return self.request("stats")


def _close_timeout(client):
    """Closing a session should not hang on a dead server for the full request timeout."""
    return 5.0 if client.timeout is None else min(5.0, client.timeout)
