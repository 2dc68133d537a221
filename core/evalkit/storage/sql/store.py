"""What every part of the SQL repository stands on: the open database and its models, write
transactions, and database errors turned into :class:`~evalkit.errors.StoreFailure`.

Opening refuses a database whose schema is older or newer than this evalkit before anything is
written; an empty one gets the current schema.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import peewee as pw

from ...errors import SchemaOutOfDateError, StorageError, StoreFailure, StoreUnavailable
from .. import schema
from ..engine import busy_timeout_s, environment_fault, failure_cause, is_database_error, lock_timed_out, open_database
from ..models import models_for
from ..urls import redact_url, sqlite_path

__all__ = ["SqlStore", "guarded"]

_T = TypeVar("_T")


def guarded(method: Callable[..., _T]) -> Callable[..., _T]:
    """Turn a database error raised by a repository method into :class:`StoreFailure` (one line,
    the real cause); a lost PostgreSQL connection is dropped so the next call reconnects."""

    @functools.wraps(method)
    def call(self: SqlStore, *args: Any, **kwargs: Any) -> _T:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # the driver's own errors too: fetching rows is not wrapped by peewee
            if not is_database_error(exc):
                raise
            raise self._failure(exc) from None

    return call


def _missing_folders(path: str) -> list[str]:
    """The folders on the way to ``path`` that are not there yet, deepest first: what opening a new
    store makes, and what :func:`_remove_empty_store` takes back when making it failed."""
    missing = []
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return missing


def _remove_empty_store(path: str, folders: list[str]) -> None:
    """Take back the file this process made for a new store when making it failed (a full disk),
    and the ``folders`` it made for it (deepest first, each only while empty): only while the file
    is still empty, with no write-ahead log holding anything — never a store another process has
    begun to write (that one holds the write lock, and would have made this one fail with a lock
    timeout, which keeps the file)."""
    for name in (path, f"{path}-wal"):
        try:
            if os.stat(name).st_size != 0:
                return
        except FileNotFoundError:
            continue
        except OSError:
            return
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            os.unlink(name)
        except OSError:
            pass
    for folder in folders:
        try:
            os.rmdir(folder)  # refused while anything is in it: another process's file stays
        except OSError:
            return


class SqlStore:
    """The open database a :class:`~evalkit.storage.sql.SqlRepository` works through, its model
    classes (``Run``, ``Case``, ``Lease``), its write transactions and its failures."""

    def __init__(self, url: str, *, create: bool = True, read_only: bool = False) -> None:
        """Open ``url``; an empty database gets the current schema (unless ``create`` is false, or
        ``read_only``: a connection that refuses every change, for a reader), an older or newer one
        is refused with :class:`SchemaOutOfDateError` before anything is written."""
        self.url = url
        self.busy_timeout = busy_timeout_s()
        path = sqlite_path(url)
        made_here = path not in (None, ":memory:") and not read_only and not os.path.lexists(path)  # type: ignore[arg-type]
        folders = _missing_folders(path) if made_here else []  # type: ignore[arg-type]
        try:
            self.db = open_database(url, writing=not read_only, read_only=read_only)
        except StorageError as exc:
            # A disk with no room for the new file's first page fails as SQLite switches it to WAL,
            # here and not below, and left the empty file and its folders behind. A file another
            # process is switching to WAL (it holds the lock we timed out on) is that process's.
            if made_here and not lock_timed_out(exc, is_sqlite=True):
                _remove_empty_store(path, folders)  # type: ignore[arg-type]
            raise
        self.is_sqlite = isinstance(self.db, pw.SqliteDatabase)
        self.in_memory = sqlite_path(url) == ":memory:"
        self.models = models_for(self.db)
        self.Run = self.models.Run
        self.Case = self.models.Case
        self.Lease = self.models.RunLease
        try:
            version = schema.current_version(self.db)
            if version == 0 and create and not read_only:
                schema.upgrade(self.db)
                version = schema.current_version(self.db)
            if self.is_sqlite and not self.in_memory and not read_only:
                # A file can be readable and still refuse writes (a read-only mount): find out now.
                self.db.execute_sql("BEGIN IMMEDIATE")
                self.db.execute_sql("ROLLBACK")
        except (pw.DatabaseError, pw.InterfaceError) as exc:
            self.close()
            cause, _ = failure_cause(exc, is_sqlite=self.is_sqlite, busy_timeout=self.busy_timeout)
            if made_here and not lock_timed_out(exc, is_sqlite=self.is_sqlite):
                _remove_empty_store(path, folders)  # type: ignore[arg-type]
            # a lock held past the busy timeout, a disk that cannot take the first write: the
            # environment's fault (exit 3), not the command's
            error = StoreUnavailable if environment_fault(exc, is_sqlite=self.is_sqlite) else StorageError
            raise error(f"cannot use database {redact_url(url)}: {cause}") from None
        if version > schema.SCHEMA_VERSION:
            self.close()
            raise SchemaOutOfDateError(schema.too_new(url, version))
        if version < schema.SCHEMA_VERSION:
            self.close()
            raise SchemaOutOfDateError(schema.too_old(url, version))

    def _store_now(self) -> float:
        """The store's clock, in seconds since the epoch: what every lease time is written and judged by."""
        query = "SELECT EXTRACT(EPOCH FROM now())" if not self.is_sqlite else "SELECT (julianday('now') - 2440587.5) * 86400.0"
        return float(self.db.execute_sql(query).fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        try:
            if not self.db.is_closed():
                self.db.close()
        except (pw.DatabaseError, pw.InterfaceError):
            self._drop_connection()

    def release_thread_connection(self) -> None:
        """Close the calling thread's connection (peewee keeps one per thread)."""
        self.close()

    def _drop_connection(self) -> None:
        """Forget a connection that is broken (and any transaction on it); the next call reconnects."""
        try:
            self.db._state.conn.close()
        except Exception:  # noqa: BLE001 - the connection is already gone
            pass
        self.db._state.reset()

    def _failure(self, exc: BaseException) -> StoreFailure:
        cause, lost = failure_cause(exc, is_sqlite=self.is_sqlite, busy_timeout=self.busy_timeout)
        if lost:
            self._drop_connection()
        environment = environment_fault(exc, is_sqlite=self.is_sqlite)
        return StoreFailure(cause, connection_lost=lost, database=redact_url(self.url), environment=environment)

    def _atomic(self) -> Any:
        """A write transaction (on SQLite ``BEGIN IMMEDIATE``, the database's lock type: see
        :func:`evalkit.storage.engine.connect`)."""
        return self.db.atomic()

    def _guarded_rows(self, rows: Iterator[_T]) -> Iterator[_T]:
        """``rows``, with a database error raised while reading them turned into :class:`StoreFailure`."""
        try:
            yield from rows
        except Exception as exc:  # the driver's own errors too: fetching rows is not wrapped by peewee
            if not is_database_error(exc):
                raise
            raise self._failure(exc) from None
