"""Migration 11: the generator requests each case took.

Frozen: never edit.

``requests`` on the case is how many generator requests answered it: one an answer, one a model
turn of a conversation, summed over ``--repeats``; 0 when no request got an answer or the answer
was reused. Cases stored before keep null: their run counts one request a case answered, as it did
when they were stored. (Nullable on purpose, as in migration 9: no table is rebuilt.)
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "the generator requests each case took (--repeats, a conversation's model turns)"


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table."""
    return [("requests", pw.IntegerField(null=True))]


def up(migrator: Any, db: pw.Database) -> None:
    """Add the column (unless the case table has it); existing cases get null, not known."""
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrator.migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in case_columns() if name not in existing))
