"""The Peewee repository, whole: every part of :mod:`evalkit.storage.sql` in one class.

Each repository builds its own model classes bound to its own database, so several stores can be
open in one process.
"""

from __future__ import annotations

from pathlib import Path

import peewee as pw

from ...errors import SchemaOutOfDateError, StorageError
from .. import schema
from ..engine import open_database
from ..urls import redact_url, sqlite_path
from .baselines import BaselinesAndVerdicts
from .history import HistoryAndQuality
from .leases import Leases
from .retrieval import RetrievalReads
from .store import too_new

__all__ = ["SqlRepository", "apply_migrations", "read_schema_status"]


def read_schema_status(url: str) -> schema.SchemaStatus:
    """Where the database's schema stands; a SQLite file that does not exist yet is version 0."""
    path = sqlite_path(url)
    if path is not None and path != ":memory:" and not Path(path).exists():
        return schema.SchemaStatus(
            url=redact_url(url), engine="sqlite", version=0, latest=schema.SCHEMA_VERSION, applied=(),
            pending=tuple((v, n) for v, n, _ in schema.MIGRATIONS),
        )
    db = open_database(url)
    try:
        return schema.schema_status(db, url)
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot read database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()


def apply_migrations(url: str) -> tuple[schema.SchemaStatus, list[int]]:
    """Bring the database up to this evalkit's schema; returns the new status and what was applied."""
    db = open_database(url, writing=True)
    try:
        version = schema.current_version(db)
        if version > schema.SCHEMA_VERSION:
            raise SchemaOutOfDateError(too_new(url, version))
        applied = schema.upgrade(db)
        return schema.schema_status(db, url), applied
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot upgrade database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()


class SqlRepository(BaselinesAndVerdicts, RetrievalReads, HistoryAndQuality, Leases):
    """A :class:`~evalkit.storage.ResultRepository` with every optional capability, over Peewee.

    Composed of one part per concern, each over the open database of :class:`.store.SqlStore`:
    runs and cases (:mod:`.runs`), verdicts and baselines (:mod:`.baselines`), retrieval reads
    (:mod:`.retrieval`), history, retention and quality (:mod:`.history`) and leases (:mod:`.leases`).
    ``SqlRepository(url, create=True)`` opens ``url`` as :class:`.store.SqlStore` does.
    """
