"""Errors raised by the hwgym client.

Every error the server reports arrives as ``{"code": ..., "message": ...}`` and is raised as an
instance of :class:`HwgymError` (or rather of its subclass for that code, e.g. :class:`BadAction`
for ``BAD_ACTION``).  ``HwgymError(code, message)`` itself returns the subclass for ``code``.
Client-side transport failures and timeouts use the code ``"IO"`` (:class:`TransportError`,
:class:`ClientTimeout`, which is also a builtin :class:`TimeoutError`).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

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


class BadRequest(HwgymError, ValueError):
    """Malformed request (the message names the field)."""
    code = "BAD_REQUEST"


class UnsupportedVersion(HwgymError):
    """Protocol version not spoken by the peer."""
    code = "UNSUPPORTED_VERSION"


class UnknownOp(HwgymError):
    """The op names no operation."""
    code = "UNKNOWN_OP"


class UnknownSession(HwgymError):
    """Session token unknown, closed or reaped."""
    code = "UNKNOWN_SESSION"


class UnknownEnv(HwgymError):
    """No env with that id."""
    code = "UNKNOWN_ENV"


class BadConfig(HwgymError, ValueError):
    """Invalid env config (the message names the field)."""
    code = "BAD_CONFIG"


class BadAction(HwgymError, ValueError):
    """Action or design point out of range, wrong shape or dtype."""
    code = "BAD_ACTION"


class BadState(HwgymError):
    """Op not valid now (e.g. step before reset)."""
    code = "BAD_STATE"


class LimitExceeded(HwgymError):
    """A size or count limit was exceeded."""
    code = "LIMIT"


class BarrierTimeout(HwgymError):
    """A multi-agent barrier timed out (the message lists the missing agents)."""
    code = "TIMEOUT"


class NotSupported(HwgymError):
    """The env or session kind does not support this op."""
    code = "NOT_SUPPORTED"


class UnknownAgent(HwgymError):
    """Multi-agent: no agent of that name."""
    code = "UNKNOWN_AGENT"


class UnknownSnapshot(HwgymError):
    """No snapshot with that id in this session."""
    code = "UNKNOWN_SNAPSHOT"


class Superseded(HwgymError):
    """Multi-agent: a newer request of the same agent replaced this one."""
    code = "SUPERSEDED"


class ShuttingDown(HwgymError):
    """The server is draining after SIGTERM/SIGINT."""
    code = "SHUTTING_DOWN"


class InternalError(HwgymError):
    """A bug in the server or client; please report it."""
    code = "INTERNAL"


class TransportError(HwgymError, OSError):
    """Client side: transport failure or client timeout."""
    code = "IO"


for _cls in (BadRequest, UnsupportedVersion, UnknownOp, UnknownSession, UnknownEnv, BadConfig, BadAction, BadState,
             LimitExceeded, BarrierTimeout, NotSupported, UnknownAgent, UnknownSnapshot, Superseded, ShuttingDown,
             InternalError, TransportError):
    _BY_CODE[str(_cls.code)] = _cls


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
