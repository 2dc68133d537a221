"""What a PostgreSQL error is, told by its SQLSTATE, not by its words.

A server says its errors in its own language (``lc_messages``: "Sperrzeitüberschreitung", "das
Datenbanksystem startet"), so reading the English text misfiled every fault of a German, French or
Japanese server. Each error the server sends carries a five-character SQLSTATE, the same in every
language: psycopg2 gives it as ``pgcode`` on an error a statement met. An error with no SQLSTATE is
libpq's own (the server never answered, or the socket went away), told apart by its class.

psycopg2 drops the SQLSTATE of a failed connection attempt (it keeps only libpq's message), so
:func:`attempt_sqlstate` tries once more with libpq asked for verbose errors, which put the code in
the message (``FATAL:  57P03: …``).
"""

from __future__ import annotations

import re
import select
import time
from typing import Any

__all__ = [
    "LOCK_NOT_AVAILABLE",
    "attempt_sqlstate",
    "driver_connection_failed",
    "environment_code",
    "lost_code",
    "sqlstate",
]

#: ``lock_not_available``: ``lock_timeout`` passed while another session held the lock.
LOCK_NOT_AVAILABLE = "55P03"
#: SQLSTATE classes that are the environment's: 08 connection exception, 53 insufficient resources
#: (too many connections, disk full, out of memory), 57 operator intervention (shutting down,
#: starting up, in recovery, a statement cancelled by ``statement_timeout`` or an operator),
#: 58 system error (an I/O error on the server).
_ENVIRONMENT_CLASSES = frozenset({"08", "53", "57", "58"})
#: Codes after which the session is gone: the server terminated it (an administrator, a crash, an
#: idle timeout, its database dropped).
_LOST_CODES = frozenset({"57P01", "57P02", "57P04", "57P05", "25P03"})
#: libpq's verbose layout of a server's error: ``SEVERITY:  SQLSTATE: message``.
_VERBOSE_CODE = re.compile(r":  ([0-9A-Z]{5}): ")
#: How long the second attempt may take (seconds): the server answered the first at once.
_ATTEMPT_S = 10.0
#: ``PQERRORS_VERBOSE`` of libpq's ``PGVerbosity``.
_PQERRORS_VERBOSE = 2


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it was raised while handling (peewee keeps the driver's there)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__context__ or current.__cause__
    return chain


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE the server gave for ``exc`` or the errors it was raised while handling (the
    earliest: a failed rollback's must not hide the fault it followed), or None when none did."""
    found = None
    for error in _chain(exc):
        code = getattr(error, "pgcode", None)
        if isinstance(code, str) and len(code) == 5:
            found = code
    return found


def environment_code(code: str) -> bool:
    """True when the SQLSTATE ``code`` is the environment's fault, not the command's (a lock held
    too long, the server down, starting, shutting down, out of slots or space, the session gone)."""
    return code == LOCK_NOT_AVAILABLE or code[:2] in _ENVIRONMENT_CLASSES or code in _LOST_CODES


def lost_code(code: str) -> bool:
    """True when the SQLSTATE ``code`` says the session is gone (a connection exception, the server
    terminated the backend)."""
    return code[:2] == "08" or code in _LOST_CODES


def _driver_error(error: BaseException, name: str) -> bool:
    """True when ``error`` is psycopg2's ``name`` (``OperationalError``, ``InterfaceError``) or a subclass."""
    return any(cls.__name__ == name and cls.__module__.split(".")[0] == "psycopg2" for cls in type(error).__mro__)


def driver_connection_failed(exc: BaseException) -> bool:
    """True when psycopg2 says, without a SQLSTATE, that the connection failed: an
    ``InterfaceError`` (the connection or cursor already closed), an ``OperationalError`` the server
    did not send (every error it sends has a SQLSTATE; one without is libpq's: the socket closed,
    data could not be sent or received), or any error of a connection psycopg2 marks closed."""
    if sqlstate(exc) is not None:
        return False
    for error in _chain(exc):
        if _driver_error(error, "InterfaceError") or _driver_error(error, "OperationalError"):
            return True
        connection = getattr(getattr(error, "cursor", None), "connection", None)
        if connection is not None and getattr(connection, "closed", 0):
            return True
    return False


def attempt_sqlstate(database: Any) -> str | None:
    """Connect once more as the PostgreSQL ``database`` (a peewee database) does, with libpq asked
    for verbose errors, and give the SQLSTATE the server refused the attempt with; None when it
    said none (a refused TCP connection, a time-out, a name that does not resolve: libpq's own
    faults), when the attempt succeeds, or when libpq cannot be asked."""
    try:
        import ctypes

        import psycopg2
        import psycopg2._psycopg as extension
        from psycopg2.extensions import POLL_OK, POLL_READ

        # libpq is a dependency of psycopg2's extension module: found through its handle
        set_verbosity = ctypes.CDLL(extension.__file__).PQsetErrorVerbosity
    except (ImportError, OSError, AttributeError):
        return None
    set_verbosity.argtypes = [ctypes.c_void_p, ctypes.c_int]
    try:
        connection = psycopg2.connect(database=database.database, **database.connect_params, async_=True)
    except psycopg2.Error:
        return None
    try:
        set_verbosity(connection.pgconn_ptr, _PQERRORS_VERBOSE)
        # libpq leaves the time-out of an asynchronous attempt to its caller: a server that stops
        # answering now gives no code, not a command that hangs
        deadline = time.monotonic() + _ATTEMPT_S
        while (state := connection.poll()) != POLL_OK:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            socket = [connection.fileno()]
            if state == POLL_READ:
                select.select(socket, [], [], remaining)
            else:
                select.select([], socket, [], remaining)
    except psycopg2.Error as exc:
        found = _VERBOSE_CODE.search(str(exc))
        return found.group(1) if found else None
    finally:
        connection.close()
    return None
