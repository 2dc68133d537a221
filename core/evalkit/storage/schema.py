"""The tables, their indexes and the numbered migrations that create and evolve them.

Migration 1 creates the tables exactly as the first release shipped them, from a frozen copy of
those model classes (:func:`v1_tables`); later migrations add to them, and migration 6 drops the one
column whose data it moved elsewhere (:data:`_V6_DROPPED_RUN_COLUMNS`). The model classes a
repository works with (:func:`bind_models`) are the frozen ones plus every column a later migration
added, declared once in that migration's list, less the dropped ones, so the models and the
migrations cannot drift.

Upgrading is safe with many processes opening one database at once: every pending migration is
applied in one transaction that holds the database's write lock (SQLite ``BEGIN IMMEDIATE``) or a
transaction-scoped advisory lock (PostgreSQL), and the applied versions are re-read under that lock.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import attrs
import peewee as pw

from .urls import redact_url

__all__ = [
    "MIGRATIONS",
    "v1_tables",
    "SCHEMA_VERSION",
    "AppliedMigration",
    "SchemaStatus",
    "bind_models",
    "current_version",
    "redact_url",
    "schema_status",
    "upgrade",
]

#: Key of the PostgreSQL advisory lock that serialises migrations (any constant; "evalkit" in hex).
_PG_MIGRATION_LOCK = 0x6576616C6B6974


def v1_tables(db: pw.Database) -> SimpleNamespace:
    """The tables as schema version 1 created them. Frozen: never edit, a shipped migration uses it."""

    class Base(pw.Model):
        class Meta:
            database = db

    class SchemaMigration(Base):
        version = pw.IntegerField(primary_key=True)
        name = pw.CharField(max_length=100)
        applied_at = pw.FloatField()

        class Meta:
            table_name = "evalkit_schema_migration"

    class Run(Base):
        id = pw.CharField(primary_key=True, max_length=64)
        kind = pw.CharField(max_length=16, default="prompts")
        set_identifier = pw.CharField(max_length=190)
        set_fingerprint = pw.CharField(max_length=80, default="")
        grader = pw.CharField(max_length=190)
        status = pw.CharField(max_length=16)
        provider_instance = pw.CharField(max_length=100, null=True)
        adapter = pw.CharField(max_length=100, null=True)
        model_alias = pw.CharField(max_length=150, null=True)
        reported_model = pw.CharField(max_length=150, null=True)
        verified = pw.BooleanField(default=False)
        identity_note = pw.TextField(null=True)
        generator_provenance = pw.TextField(null=True)
        retriever = pw.CharField(max_length=190, null=True)
        deployment = pw.CharField(max_length=100, null=True)
        benchmark_fingerprint = pw.CharField(max_length=80, default="")
        variant_fingerprint = pw.CharField(max_length=80, default="")
        provenance = pw.TextField(null=True)
        metrics = pw.TextField(null=True)
        case_count = pw.IntegerField(default=0)
        answered_count = pw.IntegerField(default=0)
        passed_count = pw.IntegerField(default=0)
        errored_count = pw.IntegerField(default=0)
        pass_rate = pw.FloatField(default=0.0)
        mean_score = pw.FloatField(default=0.0)
        started_at = pw.FloatField()
        finished_at = pw.FloatField(null=True)
        label = pw.CharField(max_length=190, null=True)
        privacy = pw.CharField(max_length=16, default="metadata")

        class Meta:
            table_name = "evalkit_run"
            indexes = (
                (
                    (
                        "set_identifier",
                        "provider_instance",
                        "model_alias",
                        "reported_model",
                        "grader",
                        "status",
                        "finished_at",
                    ),
                    False,
                ),
                (("set_identifier", "retriever", "kind", "finished_at"), False),
                (("model_alias", "grader", "verified"), False),
                (("finished_at",), False),
            )

    class Case(Base):
        id = pw.AutoField()
        run = pw.ForeignKeyField(Run, column_name="run_id", on_delete="CASCADE", field="id")
        case_id = pw.CharField(max_length=190)
        passed = pw.BooleanField()
        score = pw.FloatField()
        errored = pw.BooleanField(default=False)
        error = pw.TextField(null=True)
        checks = pw.TextField(null=True)
        latency_s = pw.FloatField(default=0.0)
        provider_instance = pw.CharField(max_length=100, null=True)
        model_alias = pw.CharField(max_length=150, null=True)
        reported_model = pw.CharField(max_length=150, null=True)
        adapter = pw.CharField(max_length=100, null=True)
        yardstick = pw.CharField(max_length=190, null=True)
        answer_text = pw.TextField(null=True)
        detail = pw.TextField(null=True)
        usage = pw.TextField(null=True)
        finished_at = pw.FloatField()

        class Meta:
            table_name = "evalkit_case"
            indexes = ((("run", "case_id"), True),)

    return SimpleNamespace(Base=Base, SchemaMigration=SchemaMigration, Run=Run, Case=Case)


def _v2_run_columns() -> list[tuple[str, pw.Field]]:
    """Columns migration 2 adds to the run table: the verdict a run got when it was stored.

    All nullable: a run stored before version 2 has no recorded verdict, and none is invented.
    """
    return [
        ("verdict", pw.CharField(max_length=16, null=True)),
        ("baseline_id", pw.CharField(max_length=64, null=True)),
        ("verdict_note", pw.TextField(null=True)),
    ]


#: Indexes migration 2 adds: history of a set newest first, and retention by run date.
_V2_INDEXES = (
    ("evalkit_run_set_started", "evalkit_run", ("set_identifier", "started_at")),
    ("evalkit_run_started", "evalkit_run", ("started_at",)),
)

#: PostgreSQL only. Version 1 declared times and scores as Peewee ``FloatField``, which PostgreSQL
#: stores as 4-byte ``real``: a Unix time then has a resolution of about two minutes, so runs
#: minutes apart tie and "newest" is decided by the run id. Migration 2 widens them to
#: ``double precision`` (SQLite's ``REAL`` is already 8 bytes). Values stored before keep the
#: precision they were stored with.
_V2_PG_DOUBLE_COLUMNS = {
    "evalkit_run": ("pass_rate", "mean_score", "started_at", "finished_at"),
    "evalkit_case": ("score", "latency_s", "finished_at"),
    "evalkit_schema_migration": ("applied_at",),
}

#: PostgreSQL only. Version 1's ``varchar(n)`` limits are enforced by PostgreSQL (not by SQLite):
#: a reported model name, case id or label one character too long failed the run after its
#: answers were paid for. Migration 2 makes the names and labels unbounded ``text``.
_V2_PG_TEXT_COLUMNS = {
    "evalkit_run": (
        "set_identifier", "set_fingerprint", "grader", "provider_instance", "adapter", "model_alias", "reported_model",
        "retriever", "deployment", "benchmark_fingerprint", "variant_fingerprint", "label",
    ),
    "evalkit_case": ("case_id", "provider_instance", "model_alias", "reported_model", "adapter", "yardstick"),
}


def v4_lease_table(db: pw.Database, run_table: type[pw.Model]) -> type[pw.Model]:
    """The lease table as schema version 4 created it. Frozen: never edit, a shipped migration uses it.

    One row per part of a run a process answers: ``*`` for the whole run (a run, or a resume) or
    ``I/N`` for a shard. The owner (host, pid, random token) refreshes ``heartbeat_at`` while it
    answers and clears itself when it stops; ``done_at`` is set when a shard's slice is in.
    """

    class RunLease(pw.Model):
        id = pw.AutoField()
        run = pw.ForeignKeyField(run_table, column_name="run_id", on_delete="CASCADE", field="id")
        part = pw.TextField()
        shard_index = pw.IntegerField(null=True)
        shard_count = pw.IntegerField(null=True)
        owner_host = pw.TextField(null=True)
        owner_pid = pw.IntegerField(null=True)
        owner_token = pw.TextField(null=True)
        acquired_at = pw.DoubleField()
        heartbeat_at = pw.DoubleField(null=True)
        done_at = pw.DoubleField(null=True)

        class Meta:
            database = db
            table_name = "evalkit_run_lease"
            indexes = ((("run", "part"), True),)

    return RunLease


def _store_text_losslessly(model: type[pw.Model]) -> None:
    """Route every text column of ``model`` through :mod:`.textcodec` (NUL, lone surrogates)."""
    from .textcodec import decode_text, encode_text

    for field in model._meta.sorted_fields:
        if isinstance(field, pw._StringField) and not field.primary_key:
            adapt = field.adapt
            field.db_value = lambda value, adapt=adapt: None if value is None else encode_text(adapt(value))
            field.python_value = lambda value: None if value is None else decode_text(value)


def _v3_run_columns() -> list[tuple[str, pw.Field]]:
    """Columns migration 3 adds to the run table: whether and why the run is an accepted baseline,
    and the fingerprint of each case of the set version it ran.

    A run is accepted when ``accepted_at`` is set; ``acceptance`` says how (see
    :data:`evalkit.baselines.ACCEPTANCE_KINDS`), ``accepted_by`` who and ``acceptance_reason`` why.
    ``case_fingerprints`` is a JSON object ``{case id: fingerprint}`` (``NULL`` for runs stored
    before: every case of theirs counts as unchanged in a comparison). Migration 6 moves it onto
    the case rows and drops it.
    """
    return [
        ("accepted_at", pw.DoubleField(null=True)),
        ("acceptance", pw.CharField(max_length=16, null=True)),
        ("accepted_by", pw.TextField(null=True)),
        ("acceptance_reason", pw.TextField(null=True)),
        ("case_fingerprints", pw.TextField(null=True)),
    ]


#: Indexes migration 3 adds: the accepted runs of a set, most recently accepted first.
_V3_INDEXES = (("evalkit_run_set_accepted", "evalkit_run", ("set_identifier", "accepted_at")),)


def _v5_case_columns() -> list[tuple[str, pw.Field]]:
    """Columns migration 5 adds to the case table: a retrieval question's rank measures.

    ``measures`` is JSON (``{"reciprocal_rank_at_k": …, "recall_at_k": …, "ndcg_at_k": …}``), kept at
    every privacy level (numbers name no content), so a resumed retrieval run can average the
    questions answered before the interruption. Null for prompt cases and for cases stored before.
    """
    return [("measures", pw.TextField(null=True))]


def _v6_run_columns() -> list[tuple[str, pw.Field]]:
    """Columns migration 6 adds to the run table: whether the run keeps its cases' fingerprints.

    ``fingerprints_kept`` is true for a run whose cases carry the fingerprint of the set version it
    answered (the case column ``fingerprint``), false for a run stored before fingerprints were kept
    (before schema 3, or with a map that could not be read): a comparison with such a run counts
    every case present in both runs as unchanged and says so (``fingerprints_known``).
    """
    return [("fingerprints_kept", pw.BooleanField(default=False))]


def _v6_case_columns() -> list[tuple[str, pw.Field]]:
    """Columns migration 6 adds to the case table: the case's fingerprint (a prompt's or question's,
    see :mod:`evalkit.set_versions`); null for a case stored without one (it counts as unchanged)."""
    return [("fingerprint", pw.TextField(null=True))]


#: Run columns migration 6 empties and drops: migration 3's ``case_fingerprints`` (a JSON map of
#: the whole set, 8 MiB at 100,000 cases, rewritten with every update of the run row), whose
#: entries it moves onto the case rows. Where SQLite is older than 3.35 (no ``DROP COLUMN``) the
#: column stays, emptied; no model declares it.
_V6_DROPPED_RUN_COLUMNS = ("case_fingerprints",)


def bind_models(db: pw.Database) -> SimpleNamespace:
    """Fresh model classes for the current schema, bound to ``db`` (several databases per process)."""
    models = v1_tables(db)
    for name, field in (*_v2_run_columns(), *_v3_run_columns(), *_v6_run_columns()):
        if name not in _V6_DROPPED_RUN_COLUMNS:
            models.Run._meta.add_field(name, field)
    for name, field in (*_v5_case_columns(), *_v6_case_columns()):
        models.Case._meta.add_field(name, field)
    models.RunLease = v4_lease_table(db, models.Run)
    for model in (models.Run, models.Case, models.RunLease):
        _store_text_losslessly(model)
    return models


def _migrate_1(db: pw.Database) -> None:
    tables = v1_tables(db)
    db.create_tables([tables.Run, tables.Case], safe=True)


def _migrate_2(db: pw.Database) -> None:
    from playhouse.migrate import SchemaMigrator, migrate

    migrator = SchemaMigrator.from_database(db)
    existing = {column.name for column in db.get_columns("evalkit_run")}
    migrate(*(migrator.add_column("evalkit_run", name, field) for name, field in _v2_run_columns() if name not in existing))
    for index, table, columns in _V2_INDEXES:
        db.execute_sql(f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ({", ".join(columns)})')
    if isinstance(db, pw.PostgresqlDatabase):
        for table in ("evalkit_run", "evalkit_case", "evalkit_schema_migration"):
            changes = [f'ALTER COLUMN "{c}" TYPE double precision' for c in _V2_PG_DOUBLE_COLUMNS.get(table, ())]
            changes += [f'ALTER COLUMN "{c}" TYPE text' for c in _V2_PG_TEXT_COLUMNS.get(table, ())]
            db.execute_sql(f'ALTER TABLE "{table}" {", ".join(changes)}')


def _migrate_4(db: pw.Database) -> None:
    db.create_tables([v4_lease_table(db, v1_tables(db).Run)], safe=True)


def _migrate_3(db: pw.Database) -> None:
    from playhouse.migrate import SchemaMigrator, migrate

    from .metric_names import migrate_retrieval_metric_names

    migrator = SchemaMigrator.from_database(db)
    existing = {column.name for column in db.get_columns("evalkit_run")}
    migrate(*(migrator.add_column("evalkit_run", name, field) for name, field in _v3_run_columns() if name not in existing))
    for index, table, columns in _V3_INDEXES:
        db.execute_sql(f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ({", ".join(columns)})')
    # Existing complete runs that did not regress count as accepted: those whose stored verdict is
    # "baseline" or "ok", and those stored before verdicts were kept (they were baselines under the
    # rules they were stored with). Prompt runs only when verified: no other prompt run has a scope.
    eligible = "status = 'complete' AND (kind = 'retrieval' OR verified = %s)" % ("1" if isinstance(db, pw.SqliteDatabase) else "true")
    db.execute_sql(
        "UPDATE evalkit_run SET accepted_at = COALESCE(finished_at, started_at), acceptance = 'migrated', "
        "acceptance_reason = 'a complete run whose stored verdict was ' || verdict "
        f"WHERE {eligible} AND verdict IN ('baseline', 'ok')"
    )
    db.execute_sql(
        "UPDATE evalkit_run SET accepted_at = COALESCE(finished_at, started_at), acceptance = 'migrated', "
        "acceptance_reason = 'a complete run stored before verdicts were kept' "
        f"WHERE {eligible} AND verdict IS NULL"
    )
    migrate_retrieval_metric_names(db)


def _migrate_5(db: pw.Database) -> None:
    from playhouse.migrate import SchemaMigrator, migrate

    migrator = SchemaMigrator.from_database(db)
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in _v5_case_columns() if name not in existing))


#: Runs whose ids are read per query while migration 6 moves fingerprints, and the most map text
#: (characters) read into memory at once: a 100,000-case run's map is about 8 MiB.
_V6_RUN_PAGE = 500
_V6_TEXT_BUDGET = 32 * 1024 * 1024
#: Case rows updated per statement (batch) while migration 6 moves fingerprints.
_V6_CASE_BATCH = 2000


def _v6_fingerprint_map(text: str | None) -> dict[str, str] | None:
    """A run's stored ``case_fingerprints`` as migration 3 wrote them (JSON ``{case id: fingerprint}``,
    through :mod:`.textcodec`), or ``None`` when absent or unreadable — as version 5 read them: such
    a run counted as stored without fingerprints. Frozen: migration 6 uses it."""
    import json

    from .textcodec import decode_text

    if not text:
        return None
    try:
        value = json.loads(decode_text(text))
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return value


def _v6_move_run_fingerprints(db: pw.Database, run_id: str, prints: dict[str, str]) -> None:
    """Write one run's map onto its case rows (cases the map lacks keep ``NULL``), a batch per
    statement. Frozen: migration 6 uses it."""
    from .textcodec import encode_text

    items = list(prints.items())
    cursor = db.cursor()
    for start in range(0, len(items), _V6_CASE_BATCH):
        batch = [(run_id, encode_text(case_id), encode_text(fingerprint)) for case_id, fingerprint in items[start : start + _V6_CASE_BATCH]]
        if isinstance(db, pw.PostgresqlDatabase):
            from psycopg2.extras import execute_values

            execute_values(
                cursor,
                "UPDATE evalkit_case AS c SET fingerprint = v.fingerprint FROM (VALUES %s) AS v(run_id, case_id, fingerprint) "
                "WHERE c.run_id = v.run_id AND c.case_id = v.case_id",
                batch,
                page_size=len(batch),
            )
        else:
            cursor.executemany(
                "UPDATE evalkit_case SET fingerprint = ? WHERE run_id = ? AND case_id = ?",
                [(fingerprint, run, case_id) for run, case_id, fingerprint in batch],
            )
    db.execute_sql(f"UPDATE evalkit_run SET fingerprints_kept = {db.param} WHERE id = {db.param}", (True, run_id))


def _v6_can_drop_column(db: pw.Database) -> bool:
    """True when the engine has ``ALTER TABLE … DROP COLUMN`` (PostgreSQL; SQLite from 3.35)."""
    if not isinstance(db, pw.SqliteDatabase):
        return True
    import sqlite3

    version = getattr(db, "server_version", None)
    return (version if isinstance(version, tuple) and version else sqlite3.sqlite_version_info) >= (3, 35, 0)


def _migrate_6(db: pw.Database) -> None:
    from playhouse.migrate import SchemaMigrator, migrate

    migrator = SchemaMigrator.from_database(db)
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in _v6_case_columns() if name not in existing))
    # NOT NULL with a default in the one ADD COLUMN both engines accept: peewee would add it nullable
    # and then rebuild the SQLite table to set NOT NULL (renaming a table the case rows refer to).
    boolean, false = ("INTEGER", "0") if isinstance(db, pw.SqliteDatabase) else ("BOOLEAN", "false")
    existing = {column.name for column in db.get_columns("evalkit_run")}
    for name, _ in _v6_run_columns():
        if name not in existing:
            db.execute_sql(f'ALTER TABLE "evalkit_run" ADD COLUMN "{name}" {boolean} NOT NULL DEFAULT {false}')
    if "case_fingerprints" not in {column.name for column in db.get_columns("evalkit_run")}:
        return
    # Each run's map onto its case rows: run ids a page at a time (keyset), the maps read a few
    # at a time within a text budget, so a store of many large runs never sits in memory at once.
    param = db.param
    after = ""
    while True:
        page = db.execute_sql(
            "SELECT id, LENGTH(case_fingerprints) FROM evalkit_run "
            f"WHERE case_fingerprints IS NOT NULL AND id > {param} ORDER BY id LIMIT {_V6_RUN_PAGE}",
            (after,),
        ).fetchall()
        if not page:
            break
        after = page[-1][0]
        chunks: list[list[str]] = [[]]
        budget = 0
        for run_id, length in page:
            if chunks[-1] and budget + (length or 0) > _V6_TEXT_BUDGET:
                chunks.append([])
                budget = 0
            chunks[-1].append(run_id)
            budget += length or 0
        for chunk in chunks:
            rows = db.execute_sql(
                f"SELECT id, case_fingerprints FROM evalkit_run WHERE id IN ({', '.join(param for _ in chunk)})", tuple(chunk)
            ).fetchall()
            for run_id, text in rows:
                prints = _v6_fingerprint_map(text)
                if prints is not None:
                    _v6_move_run_fingerprints(db, run_id, prints)
            del rows
    # One source of truth: the map goes (emptied where this SQLite cannot drop a column).
    for column in _V6_DROPPED_RUN_COLUMNS:
        if _v6_can_drop_column(db):
            db.execute_sql(f'ALTER TABLE "evalkit_run" DROP COLUMN "{column}"')
        else:
            db.execute_sql(f'UPDATE "evalkit_run" SET "{column}" = NULL WHERE "{column}" IS NOT NULL')


#: Numbered migrations, applied in order by ``evalkit db upgrade``; never edit a shipped one.
MIGRATIONS: list[tuple[int, str, Callable[[pw.Database], None]]] = [
    (1, "create run and case tables", _migrate_1),
    (
        2,
        "keep each run's verdict; index history and retention; PostgreSQL: double times, text names",
        _migrate_2,
    ),
    (
        3,
        "accepted baselines (who, when, why); retrieval MRR stored as MRR@k",
        _migrate_3,
    ),
    (4, "run leases: who is answering a run or shard, with a heartbeat; which shards are in", _migrate_4),
    (5, "keep each retrieval question's rank measures at every privacy level (resumable retrieval runs)", _migrate_5),
    # (the name column is varchar(100) on PostgreSQL)
    (6, "each case keeps its fingerprint, moved from the run's map (dropped); runs say if they kept them", _migrate_6),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


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


#: The migration log's model per open database: opening a store asks for it several times, and
#: building the v1 tables each time cost more than the queries.
_MIGRATION_TABLES: weakref.WeakKeyDictionary[pw.Database, type[pw.Model]] = weakref.WeakKeyDictionary()


def _migration_table(db: pw.Database) -> type[pw.Model]:
    table = _MIGRATION_TABLES.get(db)
    if table is None:
        table = _MIGRATION_TABLES[db] = v1_tables(db).SchemaMigration
    return table


def current_version(db: pw.Database) -> int:
    """The highest applied migration (0 for an empty database)."""
    table = _migration_table(db)
    if not db.table_exists(table._meta.table_name):
        return 0
    return int(table.select(pw.fn.MAX(table.version)).scalar() or 0)


def _applied(db: pw.Database) -> list[AppliedMigration]:
    table = _migration_table(db)
    if not db.table_exists(table._meta.table_name):
        return []
    return [AppliedMigration(r.version, r.name, r.applied_at) for r in table.select().order_by(table.version)]


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
        pending=tuple((v, n) for v, n, _ in MIGRATIONS if v not in done),
    )


def _locked_transaction(db: pw.Database) -> Any:
    if isinstance(db, pw.SqliteDatabase):
        return db.atomic("IMMEDIATE")
    return db.atomic()


def _creates_in_one_step(db: pw.Database) -> bool:
    """True for an empty SQLite store (none of its tables) when :mod:`.sqlite_schema` is current."""
    from . import sqlite_schema

    if not isinstance(db, pw.SqliteDatabase) or sqlite_schema.VERSION != SCHEMA_VERSION:
        return False
    marks = ", ".join("?" for _ in sqlite_schema.TABLES)
    return db.execute_sql(f"SELECT 1 FROM sqlite_master WHERE name IN ({marks})", sqlite_schema.TABLES).fetchone() is None


def _create_current(db: pw.Database, table: type[pw.Model]) -> list[int]:
    """Create the current schema on an empty SQLite store and log every migration as applied."""
    from . import sqlite_schema

    for statement in sqlite_schema.STATEMENTS:
        db.execute_sql(statement)
    applied_at = time.time()
    table.insert_many([{"version": v, "name": n, "applied_at": applied_at} for v, n, _ in MIGRATIONS]).execute()
    return [version for version, _, _ in MIGRATIONS]


def upgrade(db: pw.Database, target: int | None = None) -> list[int]:
    """Apply the migrations above the current version (up to ``target``) in one locked transaction.

    An empty SQLite store asked for the latest version gets it in one step, from
    :mod:`.sqlite_schema` (the same tables, as its test proves). Returns the versions applied by
    this call (empty when another process got there first).
    """
    applied: list[int] = []
    with _locked_transaction(db):
        if isinstance(db, pw.PostgresqlDatabase):
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_MIGRATION_LOCK,))
        table = _migration_table(db)
        db.create_tables([table], safe=True)
        done = {row.version for row in table.select(table.version)}
        if not done and target is None and _creates_in_one_step(db):
            return _create_current(db, table)
        for version, name, step in MIGRATIONS:
            if target is not None and version > target:
                break
            if version in done:
                continue
            step(db)
            table.insert(version=version, name=name, applied_at=time.time()).execute()
            applied.append(version)
    return applied
