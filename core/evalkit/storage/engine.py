"""From a database URL to an open Peewee database, and what a database error means.

SQLite runs in WAL mode (readers never block the writer) with a busy timeout and ``synchronous =
NORMAL``; PostgreSQL gets the same timeout as its ``lock_timeout``. An error a store raises in use is
reduced to its first cause, in one line (:func:`failure_cause`).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import peewee as pw

from ..durations import read_duration
from ..environment import variable
from ..errors import StorageError, StoreUnavailable
from ..textfiles import keep_from_outputs
from .pgstate import (
    LOCK_NOT_AVAILABLE,
    attempt_sqlstate,
    driver_connection_failed,
    environment_code,
    lost_code,
    sqlstate,
)
from .urls import check_postgres_url, check_sqlite_file, query_key, redact_url, sqlite_path

__all__ = ["BUSY_TIMEOUT_ENV", "BUSY_TIMEOUT_S", "busy_timeout_s", "connect", "failure_cause", "keep_store_files", "open_database"]

#: How long a writer waits for another process's transaction before giving up (seconds), unless
#: ``$EVALKIT_BUSY_TIMEOUT`` says otherwise.
BUSY_TIMEOUT_S = 60
#: Environment variable overriding :data:`BUSY_TIMEOUT_S` (seconds, a number above 0 up to a day).
BUSY_TIMEOUT_ENV = "EVALKIT_BUSY_TIMEOUT"

#: What psycopg2 and peewee say when the server went away (restarted, terminated the backend,
#: the network dropped): the run cannot go on, and the message says so in plain words. Only the
#: last resort, for an error that carries no SQLSTATE and is no psycopg2 error (see
#: :mod:`evalkit.storage.pgstate`): a server speaking another language says these in its own.
_PG_LOST = (
    "server closed the connection",
    "terminating connection",
    "connection already closed",
    "connection not open",
    "no connection to the server",
    "could not receive data",
    "could not send data",
    "ssl connection has been closed",
    "connection to server",
    "the database system is shutting down",
    "cursor already closed",
)


def busy_timeout_s() -> float:
    """The busy timeout in seconds: ``$EVALKIT_BUSY_TIMEOUT`` (a duration from 1 ms to a day, by
    :mod:`evalkit.durations`' one rule: ``30``, ``90s``, ``2m``), else :data:`BUSY_TIMEOUT_S`."""
    raw = variable(BUSY_TIMEOUT_ENV, "a duration such as 60 or 2m", f"wait the default {BUSY_TIMEOUT_S} s")
    if raw is None:
        return float(BUSY_TIMEOUT_S)
    return read_duration(raw, BUSY_TIMEOUT_ENV, most=86400)


def _first_database_error(exc: BaseException) -> BaseException:
    """The earliest error raised by peewee or a driver in ``exc``'s chain of handled errors."""
    first = exc
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__module__.split(".")[0] in ("peewee", "sqlite3", "psycopg2"):
            first = current
        current = current.__context__
    return first


def is_database_error(exc: BaseException) -> bool:
    """True for an error of peewee or of a database driver: one peewee wrapped, and one a driver
    raised where peewee does not wrap it — fetching rows from a cursor (``fetchall``, iterating a
    query), where SQLite says ``database disk image is malformed`` of a damaged page."""
    return isinstance(exc, (pw.DatabaseError, pw.InterfaceError)) or type(exc).__module__.split(".")[0] in ("sqlite3", "psycopg2")


def lock_timed_out(exc: BaseException, *, is_sqlite: bool) -> bool:
    """True when a database error says another process or session held a lock past the busy
    timeout (an environment fault: the command was right, the store was not free)."""
    lowered = " ".join(str(_first_database_error(exc)).split()).lower()
    if is_sqlite:
        return "locked" in lowered or "busy" in lowered
    code = sqlstate(exc)
    # the SQLSTATE is the same in every language the server speaks; the English words only when
    # the error carries none
    return code == LOCK_NOT_AVAILABLE if code is not None else "lock timeout" in lowered


#: The query parameters of a PostgreSQL URL that are peewee's options for the database object
#: (read as Python values), not libpq's connection parameters (text, passed as written).
_PEEWEE_OPTIONS = frozenset(
    {"autoconnect", "autorollback", "thread_safe", "isolation_level", "server_side_cursors", "register_unicode"}
)

#: What SQLite says when the disk cannot take a write (full, a file size limit, a failing device).
_SQLITE_DISK_FAULTS = ("database or disk is full", "disk i/o error")
#: A PostgreSQL server that is down, restarting, full or out of reach (one shutting down is among
#: :data:`_PG_LOST`, which is matched too): the environment's fault. A wrong password, database or
#: host name stays the command's (exit 2). The last resort, read only when no SQLSTATE could be
#: had: libpq's own messages (refused, timed out, unreachable: the server never answered) are
#: English unless the CLIENT's locale has libpq's translations installed; the server's (starting
#: up, too many clients) are in the server's language and matched only for an English one.
_PG_UNREACHABLE = (
    "connection refused",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "the database system is starting up",
    "the database system is in recovery mode",
    "too many clients",
    "remaining connection slots are reserved",
)


#: How libpq begins the reason a connection attempt failed for (``connection to server at "db",
#: port 5432 failed: …``, ``… on socket "/run/postgresql/.s.PGSQL.5432" failed: …``), lower-cased.
_PG_ATTEMPT = re.compile(r'^connection to server (?:at "[^"]*"(?:\s*\([^)]*\))?, port \S+|on socket "[^"]*") failed:\s*')


def environment_fault(
    exc: BaseException, *, is_sqlite: bool, code: str | None = None, connecting: bool = False
) -> bool:
    """True when a database error is the environment's, not the command's: a lock held past the
    busy timeout (:func:`lock_timed_out`), on SQLite a disk that cannot take the write, on
    PostgreSQL a server that refuses or drops the connection, is starting up or has no connection
    slot left (exit 3, as the same faults mid-run are; the command itself was right).

    PostgreSQL's are told by the error's SQLSTATE (``code``, when the caller read it elsewhere;
    :func:`evalkit.storage.pgstate.environment_code`), else, for an error met in use (not
    ``connecting``), by its class (a connection psycopg2 says failed,
    :func:`~evalkit.storage.pgstate.driver_connection_failed`), and only then by libpq's English
    words."""
    if lock_timed_out(exc, is_sqlite=is_sqlite):
        return True
    lowered = " ".join(str(_first_database_error(exc)).split()).lower()
    if is_sqlite:
        return any(marker in lowered for marker in _SQLITE_DISK_FAULTS)
    code = code or sqlstate(exc)
    if code is not None:
        return environment_code(code)
    if not connecting and driver_connection_failed(exc):
        return True  # lost in use (an attempt fails with one too, for a wrong host name as well)
    # the reason after libpq's "connection to server at …, port … failed:", which every failed
    # attempt begins with, a refused password too ("connection to server" also marks a lost one)
    reason = _PG_ATTEMPT.sub("", lowered)
    return any(marker in reason for marker in (*_PG_UNREACHABLE, *_PG_LOST))


def failure_cause(exc: BaseException, *, is_sqlite: bool, busy_timeout: float) -> tuple[str, bool]:
    """A one-line cause for a database error, and whether the connection is lost.

    The first database error in the chain is the cause: a failed transaction's rollback often
    fails too ("cannot rollback - no transaction is active" after SQLite already rolled back a
    full disk; "connection already closed" after PostgreSQL went away) and would hide it.
    """
    exc = _first_database_error(exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    if is_sqlite:
        if "locked" in lowered or "busy" in lowered:
            return f"database is locked after {busy_timeout:g} s (another process held the write lock that long)", False
        return text, False
    if lock_timed_out(exc, is_sqlite=False):
        return f"database is locked after {busy_timeout:g} s (another session held a lock that long)", False
    code = sqlstate(exc)
    if code is not None:
        lost = lost_code(code)
    else:
        lost = isinstance(exc, pw.InterfaceError) or driver_connection_failed(exc) or any(marker in lowered for marker in _PG_LOST)
    if lost:
        return f"connection to PostgreSQL lost ({text})", True
    return text, False


def keep_store_files(url: str) -> None:
    """Keep the files of the SQLite store ``url`` names (the database, its write-ahead log, shared
    memory and journal) from every output of the command (:func:`evalkit.textfiles.keep_from_outputs`);
    nothing for another store. Done when the store is opened, and by a command before anything
    runs, so that :func:`~evalkit.textfiles.output_refusal` refuses an output naming one then."""
    path = sqlite_path(url)
    if path is None or path == ":memory:":
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        keep_from_outputs(path + suffix, f"the results store's file ({redact_url(url)})")


def connect(url: str, *, writing: bool = False, read_only: bool = False) -> pw.Database:
    """Open the database a URL names (``sqlite:///path``, ``postgresql://…``), after refusing what
    cannot hold a store (see :mod:`evalkit.storage.urls`); ``writing`` also refuses read-only files.

    SQLite runs in WAL mode (readers never block the writer) with a busy timeout, and its
    transactions begin with ``BEGIN IMMEDIATE``, so concurrent ``evalkit run`` processes wait their
    turn instead of failing with "database is locked".

    ``read_only`` makes the connection itself refuse every change, for a reader such as ``evalkit
    view``: SQLite's ``query_only`` (its transactions deferred: they never take the write lock, and
    the journal mode is left as the file has it), PostgreSQL's ``default_transaction_read_only``.
    """
    path = sqlite_path(url)
    if path is not None:
        if path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create the folder of database {redact_url(url)}: {exc.strerror}") from None
            check_sqlite_file(url, path, writing=writing and not read_only)
            keep_store_files(url)
        timeout = busy_timeout_s()
        if read_only:
            return pw.SqliteDatabase(
                path, timeout=timeout, pragmas={"busy_timeout": int(timeout * 1000), "query_only": 1}
            )
        return pw.SqliteDatabase(
            path,
            timeout=timeout,
            # Every transaction takes the write lock when it begins: one that reads and then writes
            # would otherwise fail at once with "database is locked" when another process writes.
            lock_type="IMMEDIATE",
            pragmas={
                "busy_timeout": int(timeout * 1000),
                "journal_mode": "wal",
                "synchronous": "normal",
                "foreign_keys": 1,
            },
        )
    if url.startswith(("postgres://", "postgresql://")):
        from playhouse.db_url import parse  # imports every playhouse backend: only for PostgreSQL

        check_postgres_url(url)
        # A URL's user, password and database are percent-encoded (RFC 3986; libpq, psql and
        # SQLAlchemy decode them): peewee's parse keeps them as written unless asked, so a password
        # holding "@", "/" or "#" written as "%40", "%2F", "%23" was sent as those six characters.
        params = parse(url, unquote_password=True, unquote_user=True)
        params["database"] = unquote(str(params["database"]))
        # peewee also reads each query value as a Python value ("00123" as 123, "true" as True,
        # "none" as None), and as a form does ("+" as a space): libpq's parameters are text, only
        # percent-decoded, so "?password=00123" sent the password 123. Only peewee's own options
        # keep its reading.
        for pair in urlsplit(url).query.split("&"):
            written_key, _, written_value = pair.partition("=")
            key, value = query_key(written_key), unquote(written_value)
            if key and key not in _PEEWEE_OPTIONS:
                params[key] = value
        options = str(params.get("options", ""))
        if "lock_timeout" not in options:
            # A row lock held by another session gets the busy timeout SQLite has, not forever.
            params["options"] = f"{options} -c lock_timeout={int(busy_timeout_s() * 1000)}".strip()
        if read_only:
            params["options"] = f"{params.get('options', '')} -c default_transaction_read_only=on".strip()
        return pw.PostgresqlDatabase(params.pop("database"), **params)
    raise StorageError(f"unsupported database URL {redact_url(url)!r}; use sqlite:///PATH or postgresql://…")


def open_database(url: str, *, writing: bool = False, read_only: bool = False) -> pw.Database:
    """:func:`connect`, then open the connection (a :class:`StorageError` naming the URL when it
    cannot be opened; :class:`StoreUnavailable`, exit 3, when the environment is at fault — a full
    disk, an I/O error, a PostgreSQL server that is down, out of reach, starting or out of
    connection slots (:func:`environment_fault`); a wrong password, role, database or host name,
    a URL whose parameters are refused, or a PostgreSQL URL with no driver installed stays the
    command's fault, exit 2)."""
    db = connect(url, writing=writing, read_only=read_only)
    deadline = time.monotonic() + busy_timeout_s()
    while True:
        try:
            db.connect(reuse_if_open=True)
            return db
        except pw.ImproperlyConfigured:
            # peewee's word for a driver that is not installed: the kernel installs no PostgreSQL
            # driver unless asked, so a postgresql:// URL met an "internal error" and a traceback.
            raise StorageError(
                f"cannot open database {redact_url(url)}: PostgreSQL needs the psycopg2 driver, which is not "
                f'installed here; install it with pip install "evalkit-golden[postgres]" (or psycopg2-binary)'
            ) from None
        except (pw.DatabaseError, pw.InterfaceError) as exc:
            # Switching a new file to WAL takes an exclusive lock that SQLite does not wait for
            # (no busy handler), so processes opening one fresh file at once retry here.
            if "locked" in str(exc) and time.monotonic() < deadline:
                if not db.is_closed():
                    db.close()
                time.sleep(0.05)
                continue
            is_sqlite = isinstance(db, pw.SqliteDatabase)
            code = None
            if not is_sqlite and sqlstate(exc) is None and ":  " in str(exc):
                # psycopg2 keeps no SQLSTATE for a failed attempt: when the server answered (libpq
                # lays out its errors "SEVERITY:  message"; libpq's own have no two spaces), ask
                # once more for the code, which is the same in every language the server speaks
                code = attempt_sqlstate(db)
            error = StoreUnavailable if environment_fault(exc, is_sqlite=is_sqlite, code=code, connecting=True) else StorageError
            raise error(f"cannot open database {redact_url(url)}: {' '.join(str(exc).split())}") from None
