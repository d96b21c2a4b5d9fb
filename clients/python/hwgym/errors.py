"""Errors raised by the hwgym client.

Every error the server reports arrives as ``{"code": ..., "message": ...}`` and is raised as an
instance of :class:`HwgymError` (or rather of its subclass for that code, e.g. :class:`BadAction`
for ``BAD_ACTION``).  ``HwgymError(code, message)`` itself returns the subclass for ``code``.
Client-side transport failures and timeouts use the code ``"IO"`` (:class:`TransportError`,
:class:`ClientTimeout`, which is also a builtin :class:`TimeoutError`).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type

__all__ = [
    "HwgymError", "BadRequest", "UnsupportedVersion", "UnknownOp", "UnknownSession", "UnknownEnv",
    "BadConfig", "BadAction", "BadState", "LimitExceeded", "BarrierTimeout", "NotSupported",
    "UnknownAgent", "UnknownSnapshot", "Superseded", "ShuttingDown", "InternalError",
    "TransportError", "ClientTimeout", "NoServer", "ConnectionLost", "error_class", "ERROR_CODES",
]

_BY_CODE: Dict[str, Type["HwgymError"]] = {}


class HwgymError(Exception):
    """An error with a protocol error ``code`` (``"BAD_ACTION"``, ...) and a ``message``."""

    code: Optional[str] = None

    def __new__(cls, code: Optional[str] = None, message: str = "", *args: Any, **kwargs: Any) -> "HwgymError":
        if cls is HwgymError and code is not None and code in _BY_CODE:
            cls = _BY_CODE[code]
        return super().__new__(cls)

    def __init__(self, code: Optional[str] = None, message: str = "", op: Optional[str] = None) -> None:
        if code is None:
            code = type(self).code or "INTERNAL"
        self.code = code
        self.message = message
        self.op = op
        super().__init__(code, message)

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)

    def __reduce__(self) -> Any:  # picklable across processes
        return (HwgymError, (self.code, self.message, self.op))

    @classmethod
    def from_wire(cls, err: Any, op: Optional[str] = None) -> "HwgymError":
        """Build the error of an ``{"ok": false, "error": {...}}`` reply."""
        if not isinstance(err, dict):
            return HwgymError("INTERNAL", "malformed error reply: %r" % (err,), op)
        return HwgymError(str(err.get("code", "INTERNAL")), str(err.get("message", "")), op)


def _register(code: str, name: str, doc: str, bases: Tuple[type, ...] = ()) -> Type[HwgymError]:
    cls = type(name, (HwgymError,) + bases, {"code": code, "__doc__": doc, "__module__": __name__})
    _BY_CODE[code] = cls
    return cls


BadRequest = _register("BAD_REQUEST", "BadRequest", "Malformed request (the message names the field).", (ValueError,))
UnsupportedVersion = _register("UNSUPPORTED_VERSION", "UnsupportedVersion", "Protocol version not spoken by the peer.")
UnknownOp = _register("UNKNOWN_OP", "UnknownOp", "The op names no operation.")
UnknownSession = _register("UNKNOWN_SESSION", "UnknownSession", "Session token unknown, closed or reaped.")
UnknownEnv = _register("UNKNOWN_ENV", "UnknownEnv", "No env with that id.")
BadConfig = _register("BAD_CONFIG", "BadConfig", "Invalid env config (the message names the field).", (ValueError,))
BadAction = _register("BAD_ACTION", "BadAction", "Action or design point out of range, wrong shape or dtype.", (ValueError,))
BadState = _register("BAD_STATE", "BadState", "Op not valid now (e.g. step before reset).")
LimitExceeded = _register("LIMIT", "LimitExceeded", "A size or count limit was exceeded.")
BarrierTimeout = _register("TIMEOUT", "BarrierTimeout", "A multi-agent barrier timed out (the message lists the missing agents).")
NotSupported = _register("NOT_SUPPORTED", "NotSupported", "The env or session kind does not support this op.")
UnknownAgent = _register("UNKNOWN_AGENT", "UnknownAgent", "Multi-agent: no agent of that name.")
UnknownSnapshot = _register("UNKNOWN_SNAPSHOT", "UnknownSnapshot", "No snapshot with that id in this session.")
Superseded = _register("SUPERSEDED", "Superseded", "Multi-agent: a newer request of the same agent replaced this one.")
ShuttingDown = _register("SHUTTING_DOWN", "ShuttingDown", "The server is draining after SIGTERM/SIGINT.")
InternalError = _register("INTERNAL", "InternalError", "A bug in the server or client; please report it.")


class TransportError(HwgymError, OSError):
    """Client side: transport failure or client timeout (a class, not registered by _register,
    because the client's timeout and connection errors derive from it)."""
    code = "IO"


_BY_CODE["IO"] = TransportError


class ClientTimeout(TransportError, TimeoutError):
    """Client side: no reply within the request's timeout (code ``"IO"``)."""

    code = "IO"


class NoServer(ClientTimeout, ConnectionError):
    """Client side: nothing answered the first request (hello) at the endpoint within the connect
    timeout (code ``"IO"``); the message says how to start a server."""

    code = "IO"


class ConnectionLost(TransportError, ConnectionError):
    """Client side: the connection to the server dropped while a request waited for its reply, or
    did not come back within the connect timeout after the server had answered before (code
    ``"IO"``).  Raised within about 2 s of the server exiting, not after the request timeout; the
    server's sessions are gone with it."""

    code = "IO"


ERROR_CODES = tuple(_BY_CODE)


def error_class(code: str) -> Type[HwgymError]:
    """The exception class for a protocol error code (HwgymError for unknown codes)."""
    return _BY_CODE.get(code, HwgymError)
