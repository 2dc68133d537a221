"""Migration 2: keep each run's verdict with it; index history and retention; on PostgreSQL, widen
times and scores to ``double precision`` and names to ``text``.

Frozen: never edit.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "keep each run's verdict; index history and retention; PostgreSQL: double times, text names"


def run_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the run table: the verdict a run got when it was stored.

    All nullable: a run stored before version 2 has no recorded verdict, and none is invented.
    """
    return [
        ("verdict", pw.CharField(max_length=16, null=True)),
        ("baseline_id", pw.CharField(max_length=64, null=True)),
        ("verdict_note", pw.TextField(null=True)),
    ]


#: Indexes added: history of a set newest first, and retention by run date.
INDEXES = (
    ("evalkit_run_set_started", "evalkit_run", ("set_identifier", "started_at")),
    ("evalkit_run_started", "evalkit_run", ("started_at",)),
)

#: PostgreSQL only. Version 1 declared times and scores as Peewee ``FloatField``, which PostgreSQL
#: stores as 4-byte ``real``: a Unix time then has a resolution of about two minutes, so runs
#: minutes apart tie and "newest" is decided by the run id. They become ``double precision``
#: (SQLite's ``REAL`` is already 8 bytes). Values stored before keep the precision they were stored with.
PG_DOUBLE_COLUMNS = {
    "evalkit_run": ("pass_rate", "mean_score", "started_at", "finished_at"),
    "evalkit_case": ("score", "latency_s", "finished_at"),
    "evalkit_schema_migration": ("applied_at",),
}

#: PostgreSQL only. Version 1's ``varchar(n)`` limits are enforced by PostgreSQL (not by SQLite):
#: a reported model name, case id or label one character too long failed the run after its
#: answers were paid for. The names and labels become unbounded ``text``.
PG_TEXT_COLUMNS = {
    "evalkit_run": (
        "set_identifier", "set_fingerprint", "grader", "provider_instance", "adapter", "model_alias", "reported_model",
        "retriever", "deployment", "benchmark_fingerprint", "variant_fingerprint", "label",
    ),
    "evalkit_case": ("case_id", "provider_instance", "model_alias", "reported_model", "adapter", "yardstick"),
}


def up(migrator: Any, db: pw.Database) -> None:
    """Add the verdict columns and the history indexes (those missing); retype PostgreSQL's columns."""
    existing = {column.name for column in db.get_columns("evalkit_run")}
    migrator.migrate(*(migrator.add_column("evalkit_run", name, field) for name, field in run_columns() if name not in existing))
    indexed = {index.name for index in db.get_indexes("evalkit_run")}
    migrator.migrate(*(migrator.add_index(table, columns, name=name) for name, table, columns in INDEXES if name not in indexed))
    if isinstance(db, pw.PostgresqlDatabase):
        for table in ("evalkit_run", "evalkit_case", "evalkit_schema_migration"):
            # One ALTER TABLE per table, not one per column (the migrator's alter_column_type): each
            # statement that widens a float rewrites the whole table.
            changes = [f'ALTER COLUMN "{c}" TYPE double precision' for c in PG_DOUBLE_COLUMNS.get(table, ())]
            changes += [f'ALTER COLUMN "{c}" TYPE text' for c in PG_TEXT_COLUMNS.get(table, ())]
            migrator.migrate(migrator.sql(f'ALTER TABLE "{table}" {", ".join(changes)}'))
