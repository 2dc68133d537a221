"""The built-in repository over Peewee: SQLite by default, PostgreSQL through the same URL scheme.

Nothing outside :mod:`evalkit.storage` knows about Peewee. :class:`SqlRepository` is composed of
one part per concern, each a module of this package; every part works through the open database
:class:`~evalkit.storage.sql.store.SqlStore` holds.
"""

from __future__ import annotations

from ..engine import BUSY_TIMEOUT_ENV, busy_timeout_s, connect, failure_cause
from ..schema import apply_migrations, read_schema_status
from ..urls import sqlite_path
from .repository import SqlRepository

__all__ = [
    "BUSY_TIMEOUT_ENV",
    "SqlRepository",
    "apply_migrations",
    "busy_timeout_s",
    "connect",
    "failure_cause",
    "read_schema_status",
    "sqlite_path",
]
