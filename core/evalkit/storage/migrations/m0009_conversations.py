"""Migration 9: a run's base system prompt in its serving identity, and a conversation's turns on its case.

Frozen: never edit.

``base_prompt`` on the run is the digest of the base system prompt its provider instance put before
every request (``[providers.NAME] system_prompt``), null for none: part of the serving identity, so
changing the base prompt starts a new comparison scope. Runs stored before keep null: they match an
empty base prompt, so no scope loses its baseline on upgrade. (Nullable on purpose: a NOT NULL
column added to SQLite's run table makes the migrator rebuild the table, and dropping the old one
would cascade to its cases.) ``transcript`` on the case
is a conversation's turns after its fixed history (JSON), reduced to the run's privacy level; null
for a plain prompt and for cases stored before.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "a run's base system prompt in its serving identity; a conversation's turns on its case"


def run_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the run table."""
    return [("base_prompt", pw.CharField(max_length=80, null=True))]


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table."""
    return [("transcript", pw.TextField(null=True))]


def up(migrator: Any, db: pw.Database) -> None:
    """Add the columns (unless the tables have them); existing runs get null, the empty base prompt."""
    steps = []
    for table, columns in (("evalkit_run", run_columns()), ("evalkit_case", case_columns())):
        existing = {column.name for column in db.get_columns(table)}
        steps += [migrator.add_column(table, name, field) for name, field in columns if name not in existing]
    migrator.migrate(*steps)
