"""Where a store's schema stands, and bringing it up to date.

The schema is declared once, by the models of :mod:`evalkit.storage.models`. An empty database gets
its tables from them in one step, and every migration is logged as applied (peewee's migration runner
calls this "faking" them). A database written by an earlier evalkit is brought up to date by the
numbered migrations of :mod:`evalkit.storage.migrations`, applied in order through
``playhouse.migrate`` and each logged in ``evalkit_schema_migration`` (version, name, when).

Upgrading is safe with many processes opening one database at once: every pending migration is
applied in one transaction that holds the database's write lock (SQLite ``BEGIN IMMEDIATE``) or a
transaction-scoped advisory lock (PostgreSQL), and the applied versions are re-read under that lock.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import attrs
import peewee as pw

from ..errors import SchemaOutOfDateError, StorageError
from ..shapes import short_repr
from .engine import open_database
from .migrations import Migration, discover
from .models import MIGRATION_LOG, models_for
from .stored_checks import stored_count, stored_time
from .urls import redact_url, sqlite_path

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "AppliedMigration",
    "Migration",
    "SchemaStatus",
    "apply_migrations",
    "current_version",
    "read_schema_status",
    "redact_url",
    "schema_status",
    "too_new",
    "too_old",
    "upgrade",
]

#: Key of the PostgreSQL advisory lock that serialises migrations (any constant; "evalkit" in hex).
_PG_MIGRATION_LOCK = 0x6576616C6B6974

#: Every migration this evalkit knows, in order (``version, name, up``); never edit a shipped one.
MIGRATIONS: tuple[Migration, ...] = discover()
#: The schema version this evalkit reads and writes: the last migration's.
SCHEMA_VERSION = MIGRATIONS[-1].version


@attrs.frozen
class AppliedMigration:
    """One migration recorded in the database."""

    version: int
    name: str
    applied_at: float


@attrs.frozen
class SchemaStatus:
    """Where a database's schema stands against this evalkit."""

    url: str
    engine: str
    version: int
    latest: int
    applied: tuple[AppliedMigration, ...]
    pending: tuple[tuple[int, str], ...]

    @property
    def up_to_date(self) -> bool:
        """True when every migration this evalkit knows is applied (and none it does not know)."""
        return self.version == self.latest


def too_new(url: str, version: int) -> str:
    """The refusal of a database whose schema is newer than this evalkit."""
    return (
        f"database {redact_url(url)} has schema version {version}, newer than this evalkit "
        f"understands ({SCHEMA_VERSION}); upgrade evalkit"
    )


def too_old(url: str, version: int) -> str:
    """The refusal of a database whose schema is older than this evalkit."""
    return (
        f"database {redact_url(url)} has schema version {version}, this evalkit needs "
        f"{SCHEMA_VERSION}: run `evalkit db upgrade` (it keeps every stored run)"
    )


def _migration_log(db: pw.Database) -> type[pw.Model]:
    return models_for(db).SchemaMigration


def current_version(db: pw.Database) -> int:
    """The highest applied migration (0 for an empty database)."""
    log = _migration_log(db)
    if not db.table_exists(MIGRATION_LOG):
        return 0
    return int(log.select(pw.fn.MAX(log.version)).scalar() or 0)


def _applied(db: pw.Database) -> list[AppliedMigration]:
    log = _migration_log(db)
    if not db.table_exists(MIGRATION_LOG):
        return []
    applied = []
    for row in log.select().order_by(log.version):
        owner = f"migration {short_repr(row.version)}"  # the log as another program may have left it
        applied.append(AppliedMigration(stored_count(row.version, owner, "version"), row.name, stored_time(row.applied_at, owner, "applied_at")))
    return applied


def schema_status(db: pw.Database, url: str) -> SchemaStatus:
    """The applied and pending migrations of ``db``."""
    applied = _applied(db)
    done = {m.version for m in applied}
    return SchemaStatus(
        url=redact_url(url),
        engine="sqlite" if isinstance(db, pw.SqliteDatabase) else "postgresql",
        version=max(done, default=0),
        latest=SCHEMA_VERSION,
        applied=tuple(applied),
        pending=tuple((m.version, m.name) for m in MIGRATIONS if m.version not in done),
    )


def _locked_transaction(db: pw.Database) -> Any:
    if isinstance(db, pw.SqliteDatabase):
        return db.atomic("IMMEDIATE")
    return db.atomic()


def _store_tables(db: pw.Database) -> list[type[pw.Model]]:
    models = models_for(db)
    return [models.Run, models.Case, models.RunLease, models.JudgeCalibration, models.AnswerCache]


def _holds_no_store_table(db: pw.Database) -> bool:
    """True when none of the store's tables is in ``db`` (the migration log's aside)."""
    present = set(db.get_tables())
    return not any(model._meta.table_name in present for model in _store_tables(db))


def _create_current(db: pw.Database, log: type[pw.Model]) -> list[int]:
    """Create the current tables from the models and log every migration as applied."""
    db.create_tables(_store_tables(db), safe=False)
    applied_at = time.time()
    log.insert_many([{"version": m.version, "name": m.name, "applied_at": applied_at} for m in MIGRATIONS]).execute()
    return [m.version for m in MIGRATIONS]


def upgrade(db: pw.Database, target: int | None = None) -> list[int]:
    """Apply the migrations above the current version (up to ``target``) in one locked transaction.

    A database holding none of the store's tables, asked for the latest version, gets them from the
    models in one step instead (:mod:`evalkit.storage.models`). Returns the versions applied by this
    call (empty when another process got there first).
    """
    applied: list[int] = []
    with _locked_transaction(db):
        if isinstance(db, pw.PostgresqlDatabase):
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_MIGRATION_LOCK,))
        log = _migration_log(db)
        db.create_tables([log], safe=True)
        done = {row.version for row in log.select(log.version)}
        if not done and target is None and _holds_no_store_table(db):
            return _create_current(db, log)
        migrator = None
        for migration in MIGRATIONS:
            if target is not None and migration.version > target:
                break
            if migration.version in done:
                continue
            if migrator is None:
                from playhouse.migrate import SchemaMigrator  # only when a migration runs

                migrator = SchemaMigrator.from_database(db)
            migration.up(migrator, db)
            log.insert(version=migration.version, name=migration.name, applied_at=time.time()).execute()
            applied.append(migration.version)
    return applied


def read_schema_status(url: str) -> SchemaStatus:
    """Where the database's schema stands; a SQLite file that does not exist yet is version 0."""
    path = sqlite_path(url)
    if path is not None and path != ":memory:" and not Path(path).exists():
        return SchemaStatus(
            url=redact_url(url), engine="sqlite", version=0, latest=SCHEMA_VERSION, applied=(),
            pending=tuple((m.version, m.name) for m in MIGRATIONS),
        )  # fmt: skip
    # A read-only connection: ``db status`` reads, and a writing one turned the file to WAL mode
    # first, so on a read-only file it said "attempt to write a readonly database".
    db = open_database(url, read_only=True)
    try:
        return schema_status(db, url)
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot read database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()


def apply_migrations(url: str) -> tuple[SchemaStatus, list[int]]:
    """Bring the database up to this evalkit's schema; returns the new status and what was applied."""
    db = open_database(url, writing=True)
    try:
        version = current_version(db)
        if version > SCHEMA_VERSION:
            raise SchemaOutOfDateError(too_new(url, version))
        applied = upgrade(db)
        return schema_status(db, url), applied
    except (pw.DatabaseError, pw.InterfaceError) as exc:
        raise StorageError(f"cannot upgrade database {redact_url(url)}: {' '.join(str(exc).split())}") from None
    finally:
        db.close()
