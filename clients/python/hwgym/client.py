"""Low-level client: one method per protocol op (PROTOCOL.md), over a ZeroMQ DEALER socket.

Thread-safe: a lock serialises each request/reply exchange on the socket.  Use one Client per
thread when requests block for long (multi-agent barriers), so that threads do not queue.
"""

from __future__ import annotations

from typing import Any, Dict, List, NoReturn, Optional, SupportsIndex, Tuple

import itertools
import os
import threading
import time

import numpy as np
import zmq

from ._version import __version__
from .errors import ClientTimeout, ConnectionLost, HwgymError, NoServer, TransportError, UnsupportedVersion
from .wire import PROTOCOL_VERSION, from_wire, pack, unpack

__all__ = ["Client", "DEFAULT_ENDPOINT", "DEFAULT_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "resolve_endpoint"]

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5555"
DEFAULT_TIMEOUT = 30.0
#: How long the first request (hello) waits for a server to accept the connection and answer.
DEFAULT_CONNECT_TIMEOUT = 2.0
#: How long closing a session waits for the server's reply (only while a connection is up).
CLOSE_TIMEOUT = 1.0
#: ZeroMQ heartbeats (ZMTP PING/PONG, answered by the server's ZeroMQ I/O thread even while its
#: workers are busy): a server that does not answer within this many seconds of a PING (sent every
#: third of it) is dropped, so a hung (SIGSTOP) or unreachable server host is seen as a lost
#: connection within ~1.6 s; a server process that exits is seen at once.  $HWGYM_HEARTBEAT_TIMEOUT
#: sets it (seconds; 0 turns heartbeats off).
DEFAULT_HEARTBEAT_TIMEOUT = 1.2
#: After the monitor saw the connection drop, how long a request waits for ZeroMQ to reconnect
#: (it retries every 100 ms) before raising ConnectionLost.
RECONNECT_GRACE = 0.5

_SCHEMES = ("tcp://", "ipc://", "inproc://", "pgm://", "epgm://", "vmci://", "ws://", "wss://", "tipc://", "udp://")


def resolve_endpoint(endpoint: Optional[str] = None) -> str:
    """``endpoint``, else ``$HWGYM_ENDPOINT``, else DEFAULT_ENDPOINT."""
    return endpoint or os.environ.get("HWGYM_ENDPOINT") or DEFAULT_ENDPOINT


def _connect_timeout(value: Any) -> Any:
    if value is not None:
        return float(value)
    env = os.environ.get("HWGYM_CONNECT_TIMEOUT")
    return float(env) if env else DEFAULT_CONNECT_TIMEOUT


def no_server_message(endpoint: Optional[str], waited: Any) -> str:
    return ("no hwgym-server answers at %s (waited %.3g s). Start one with `hwgym-server --bind %s` "
            "(built as build/bin/hwgym-server by `make`), or point the client at a running one with "
            "endpoint=... or HWGYM_ENDPOINT." % (endpoint, waited, endpoint))


def lost_message(endpoint: Optional[str], op: str, when: Any) -> str:
    return ("the connection to hwgym-server at %s was lost %s %r (the server exited, was killed, or "
            "the network dropped). Sessions live in the server: once it runs again, make new envs."
            % (endpoint, when, op))


def check_endpoint(endpoint: Optional[str]) -> None:
    """A TransportError with a hint when ``endpoint`` has no ZeroMQ transport scheme."""
    if not isinstance(endpoint, str) or not endpoint.startswith(_SCHEMES):
        hint = ""
        if isinstance(endpoint, str) and "://" not in endpoint:
            guess = "tcp://%s" % endpoint if ":" in endpoint else "ipc://%s" % endpoint
            hint = " (did you mean %r?)" % guess
        raise TransportError("IO", "endpoint %r has no transport scheme: write tcp://HOST:PORT or "
                             "ipc:///path/to/socket%s" % (endpoint, hint))


def _opt(d: Any, **kw: Any) -> Any:
    for k, v in kw.items():
        if v is not None:
            d[k] = v
    return d


class Client:
    """A connection to one hwgym-server.

    ``timeout`` (seconds) bounds every request unless the call gives its own ``timeout=``; a request
    without a reply in time raises :class:`hwgym.errors.ClientTimeout` (code ``"IO"``).
    ``connect_timeout`` (default 2 s, or ``$HWGYM_CONNECT_TIMEOUT``) bounds :meth:`hello`: with
    nothing answering at ``endpoint`` it raises :class:`hwgym.errors.NoServer` saying so.
    ``endpoint`` defaults to ``$HWGYM_ENDPOINT``, else ``tcp://127.0.0.1:5555``.  Replies
    whose ``id`` does not match the request (e.g. late replies to timed-out requests) are dropped.
    Errors the server reports are raised as :class:`hwgym.HwgymError` subclasses.
    """

    def __init__(self, endpoint: Optional[str] = None, timeout: Optional[float] = DEFAULT_TIMEOUT, context: Any = None,
                 client_name: Optional[str] = None, version: int = PROTOCOL_VERSION, connect_timeout: Optional[float] = None) -> None:
        endpoint = resolve_endpoint(endpoint)
        check_endpoint(endpoint)
        self.endpoint = endpoint
        self.timeout = float(timeout) if timeout is not None else None
        self.connect_timeout = _connect_timeout(connect_timeout)
        self.client_name = client_name or "hwgym-python/%s" % __version__
        self.version = int(version)
        self._ctx = context or zmq.Context.instance()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._hello: Optional[Dict[str, Any]] = None
        self._closed = False
        self._pid = os.getpid()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        # Queue messages only to live connections: a send then waits (bounded below) for a server
        # instead of piling up for nobody, and a dead server is seen at once (close() does not wait).
        self._sock.setsockopt(zmq.IMMEDIATE, 1)
        hb = float(os.environ.get("HWGYM_HEARTBEAT_TIMEOUT") or DEFAULT_HEARTBEAT_TIMEOUT)
        if hb > 0:
            self._sock.setsockopt(zmq.HEARTBEAT_IVL, max(1, int(hb * 1000 / 3)))
            self._sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, max(1, int(hb * 1000)))
        # The socket monitor reports a dropped connection at once: a request waiting for its reply
        # then fails with ConnectionLost instead of waiting out its timeout.
        self._mon = self._sock.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self._link_down = False  # the monitor's last event was a disconnection
        self._poller = zmq.Poller()
        self._poller.register(self._sock, zmq.POLLIN)
        self._poller.register(self._mon, zmq.POLLIN)
        self._send_poller = zmq.Poller()  # waiting for a connection: it comes up, or an event
        self._send_poller.register(self._sock, zmq.POLLOUT)
        self._send_poller.register(self._mon, zmq.POLLIN)
        self._answered = False  # a reply has come in on this client: a missing connection is a lost one
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
            self._close_sockets()
            self._closed = True
            raise TransportError("IO", "cannot connect to %r: %s" % (endpoint, e)) from None

    # -- transport --------------------------------------------------------------------------
    def request(self, op: str, timeout: Optional[float] = None, **fields: Any) -> Dict[str, Any]:
        """Send ``{"op": op, "v": 1, "id": n, **fields}`` (``None`` fields are left out) and return
        the reply map with wire arrays decoded to numpy; raise HwgymError on an error reply."""
        with self._lock:
            pending = self._send(op, timeout, fields)
            rep = self._recv(pending)
        return _result(rep, op)

    def _send(self, op: str, timeout: Optional[float], fields: Any) -> Any:
        """(lock held) Encode and send one request; returns what _recv needs."""
        msg = _opt({}, **fields)
        msg["op"] = op
        msg["v"] = self.version
        tmo = self.timeout if timeout is None else timeout
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
        # Waiting for a connection is bounded by connect_timeout (2 s): with IMMEDIATE a send
        # only goes to a live connection, so no connection by then means no server (never
        # answered) or a lost one (answered before), not a slow reply.
        self._drain_monitor()
        cwait = self.connect_timeout if tmo is None else min(tmo, self.connect_timeout)
        if self._answered and self._link_down:  # known to have dropped: only a short reconnect grace
            cwait = min(cwait, RECONNECT_GRACE)
        cdeadline = time.monotonic() + cwait
        try:
            while True:  # non-blocking send: the connection may drop between poll and send
                self._drain_monitor()
                if not self._link_down and self._sock.poll(0, zmq.POLLOUT):
                    try:
                        self._sock.send(buf, zmq.NOBLOCK, copy=len(buf) < 65536)
                        break
                    except zmq.Again:
                        pass
                left = cdeadline - time.monotonic()
                if left <= 0:
                    raise self._no_connection(op, cwait, tmo)
                if self._link_down and self._sock.poll(0, zmq.POLLOUT):
                    time.sleep(min(left, 0.01))  # a dropped pipe not yet reaped: wait for the reconnect
                else:
                    self._send_poller.poll(int(left * 1000) + 1)
        except zmq.ZMQError as e:
            raise TransportError("IO", "%s request to %s failed: %s" % (op, self.endpoint, e)) from None
        return op, rid, deadline, tmo

    def _recv(self, pending: Any) -> Any:
        """(lock held) Wait for the reply to a request sent by _send; returns the raw reply map."""
        op, rid, deadline, tmo = pending
        try:
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready = dict(self._poller.poll(None if wait is None else int(wait * 1000) + 1))
                if self._sock in ready or self._sock.poll(0, zmq.POLLIN):
                    frames = self._sock.recv_multipart(copy=True)
                    try:
                        rep = unpack(frames[-1])
                    except Exception as e:  # reported at once, not by waiting out the timeout (issue 28)
                        raise TransportError("IO", "unreadable reply to %r from %s: %s" % (op, self.endpoint, e), op) from None
                    if not isinstance(rep, dict) or rep.get("id") != rid:
                        continue  # a stale reply to an earlier (timed-out) request
                    self._answered = True
                    return rep
                if self._mon in ready:
                    if self._drain_monitor():  # dropped while we wait: the reply cannot come
                        raise ConnectionLost("IO", lost_message(self.endpoint, op, "while waiting for the reply to"), op)
                    continue
                raise ClientTimeout("IO", "no reply to %r from %s within %.3g s" % (op, self.endpoint, tmo), op)
        except zmq.ZMQError as e:
            raise TransportError("IO", "%s request to %s failed: %s" % (op, self.endpoint, e)) from None

    def _drain_monitor(self) -> bool:
        """(lock held) Read the pending monitor events; True when one was a disconnection."""
        lost = False
        while self._mon.poll(0):
            frames = self._mon.recv_multipart()
            event = int.from_bytes(frames[0][:2], "little") if len(frames[0]) >= 2 else 0
            if event == zmq.EVENT_DISCONNECTED:
                lost = self._link_down = True
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._link_down = False
        return lost

    def _no_connection(self, op: str, waited: Any, tmo: Any) -> Any:
        if self._answered:
            return ConnectionLost("IO", lost_message(self.endpoint, op, "(no connection within %.3g s) before" % waited), op)
        if op == "hello" or tmo is None or waited < tmo:
            return NoServer("IO", no_server_message(self.endpoint, waited), op)
        return ClientTimeout("IO", "no reply to %r: no connection to a server at %s within %.3g s"
                             % (op, self.endpoint, tmo), op)

    def _close_sockets(self) -> None:
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._mon.close(0)
        self._sock.close(0)

    def close(self) -> None:
        """Close the socket (idempotent). Sessions on the server are not closed: use close_session."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if os.getpid() == self._pid:
                    self._close_sockets()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Client(%r%s)" % (self.endpoint, ", closed" if self._closed else "")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise TypeError("cannot pickle a hwgym Client: it holds a ZeroMQ connection, which cannot move to another "
                        "process; make a new Client(%r) there (or pass a factory that makes one)" % (self.endpoint,))

    # -- ops ----------------------------------------------------------------------------------
    def connected(self, wait: float = 0.0) -> bool:
        """True when a connection to a server is up (waiting up to ``wait`` seconds for one)."""
        with self._lock:
            if self._closed or os.getpid() != self._pid:
                return False
            try:
                return bool(self._sock.poll(int(wait * 1000), zmq.POLLOUT))
            except zmq.ZMQError:
                return False

    def hello(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Version handshake. Raises UnsupportedVersion when the server does not speak ours, and
        :class:`hwgym.errors.NoServer` when nothing answers within ``timeout`` (default: the
        client's ``connect_timeout``, at most its ``timeout``)."""
        if timeout is None:
            timeout = self.connect_timeout if self.timeout is None else min(self.connect_timeout, self.timeout)
        try:
            rep = self.request("hello", timeout=timeout, client=self.client_name)
        except ClientTimeout:
            raise NoServer("IO", no_server_message(self.endpoint, timeout), "hello") from None
        protos = rep.get("protocols", [rep.get("protocol")])
        if self.version not in protos:
            raise UnsupportedVersion("UNSUPPORTED_VERSION", "client speaks protocol %d, server speaks %s"
                                     % (self.version, protos), "hello")
        self._hello = rep
        return rep

    def ensure_hello(self) -> Dict[str, Any]:
        """hello once per client (cached)."""
        return self._hello if self._hello is not None else self.hello()

    def ping(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self.request("ping", timeout=timeout)

    def envs(self) -> List[Dict[str, Any]]:
        """List of ``{"id", "summary"}`` maps."""
        envs: List[Dict[str, Any]] = self.request("envs")["envs"]
        return envs

    def make(self, env: Any, config: Optional[Dict[str, Any]] = None, num_envs: Optional[int] = None, agents: Any = None, agent_timeout_ms: Optional[int] = None, **extra: Any) -> Dict[str, Any]:
        """Create a session; returns the reply (``session``, ``kind``, ``action_space``, ...)."""
        return self.request("make", env=env, config=config if config is not None else {}, num_envs=num_envs,
                            agents=agents, agent_timeout_ms=agent_timeout_ms, **extra)

    def spaces(self, session: Optional[str] = None, env: Any = None, config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        return self.request("spaces", session=session, env=env, config=config)

    def reset(self, session: str, seed: Any = None, options: Optional[Dict[str, Any]] = None, agent: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        return _masks(self.request("reset", timeout=timeout, session=session, agent=agent, seed=seed, options=options))

    def step(self, session: str, action: Any, agent: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        return _masks(self.request("step", timeout=timeout, session=session, agent=agent, action=action))

    def evaluate(self, point: Any, env: Any = None, config: Optional[Dict[str, Any]] = None, session: Optional[str] = None, timeout: Optional[float] = None) -> Tuple[float, Dict[str, Any]]:
        """Score one design point: returns ``(reward, metrics)``."""
        rep = self.request("evaluate", timeout=timeout, env=env, config=config, session=session, point=point)
        return float(rep["reward"]), rep.get("metrics", {})

    def evaluate_batch(self, points: Any, env: Any = None, config: Optional[Dict[str, Any]] = None, session: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        """Score K points across the server's workers: returns ``(rewards float64[K], metrics list,
        errors list)``; a failed point has reward NaN and ``errors[k]`` set to a HwgymError."""
        rep = self.request("evaluate_batch", timeout=timeout, env=env, config=config, session=session, points=points)
        rewards = np.asarray(rep["reward"], dtype=np.float64).reshape(-1)
        errors = [None if e is None else HwgymError.from_wire(e, "evaluate_batch") for e in rep.get("errors", [None] * len(rewards))]
        return rewards, rep.get("metrics", [{}] * len(rewards)), errors

    def snapshot(self, session: str) -> int:
        return int(self.request("snapshot", session=session)["snapshot"])

    def restore(self, session: str, snapshot: int) -> None:
        self.request("restore", session=session, snapshot=snapshot)

    def drop_snapshot(self, session: str, snapshot: int) -> None:
        self.request("drop_snapshot", session=session, snapshot=snapshot)

    def close_session(self, session: str, timeout: Optional[float] = None) -> None:
        """The ``close`` op."""
        self.request("close", timeout=timeout, session=session)

    def close_session_quietly(self, session: str) -> None:
        """Close ``session`` without raising and without waiting on a dead server: when no
        connection is up nothing is sent; otherwise the reply is awaited for at most 1 s."""
        try:
            if self.connected():
                self.close_session(session, timeout=_close_timeout(self))
        except HwgymError:
            pass  # already gone (reaped, server down): nothing left to release

    def join(self, session: str, agent: str) -> Any:
        return self.request("join", session=session, agent=agent)

    def stats(self) -> Dict[str, Any]:
        return self.request("stats")


def _mask_of(info: Any) -> None:
    m = info.get("action_mask") if isinstance(info, dict) else None
    if m is not None and not (isinstance(m, np.ndarray) and m.dtype == np.int8):
        info["action_mask"] = np.asarray(m, dtype=np.int8)


def _masks(rep: Any) -> Any:
    """``info["action_mask"]`` as an int8 numpy array (what Gymnasium's ``sample(mask=)`` and
    MaskablePPO-style agents take), in a reset/step reply's info or in each sub-env's info."""
    info = rep.get("info")
    if isinstance(info, list):
        for i in info:
            _mask_of(i)
    else:
        _mask_of(info)
    return rep


def _result(rep: Any, op: str) -> Dict[str, Any]:
    if not rep.get("ok", False):
        raise HwgymError.from_wire(rep.get("error"), op)
    out: Dict[str, Any] = from_wire(rep)
    return out


def request_all(calls: Any, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
    """Send one request on each of several clients, then collect every reply: ``calls`` is a list
    of ``(client, op, fields)``; returns the replies in order.  Used for multi-agent barriers,
    where each agent's request only completes once all are in (so they must all be sent first).
    When some fail, the first error is raised after every reply (or timeout) has been collected."""
    clients = [c for c, _, _ in calls]
    if len(set(map(id, clients))) != len(clients):
        raise ValueError("request_all needs a distinct client per call")
    for c in clients:
        c._lock.acquire()
    try:
        pending: List[Any] = []
        out: List[Any] = []
        first_err: Optional[HwgymError] = None
        for c, op, fields in calls:
            try:
                pending.append(c._send(op, timeout, fields))
            except HwgymError as e:
                pending.append(None)
                first_err = first_err or e
        for c, p in zip(clients, pending):
            if p is None:
                out.append(None)
                continue
            try:
                out.append(_result(c._recv(p), p[0]))
            except HwgymError as e:
                out.append(None)
                first_err = first_err or e
        if first_err is not None:
            raise first_err
        return out
    finally:
        for c in clients:
            c._lock.release()


def _close_timeout(client: Client) -> float:
    """Closing a session should not hang on a dead server for the full request timeout."""
    return CLOSE_TIMEOUT if client.timeout is None else min(CLOSE_TIMEOUT, client.timeout)
