"""Migration 12: the generator requests each case sent, a failed one included.

Frozen: never edit.

``requests_sent`` on the case is how many generator requests it sent: one an answer asked of the
model (a reply or not: one that failed on every attempt went out; a transport retry is not counted),
one a model turn of a conversation asked (the turn that failed midway included), summed over
``--repeats``; 0 for a reused answer. ``--max-requests`` counts a run's requests as the sum of it
over the stored cases, so every shard and a resume count what the shard that sent them counted.
Cases stored before keep null: they count as they did when they were stored — their replies
(``requests``, migration 11), and one for a case asked of the model that errored with none.
(Nullable on purpose, as in migrations 9 and 11: no table is rebuilt.)
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "the generator requests each case sent, a failed one included (--max-requests)"


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table."""
    return [("requests_sent", pw.IntegerField(null=True))]


def up(migrator: Any, db: pw.Database) -> None:
    """Add the column (unless the case table has it); existing cases get null, not known."""
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrator.migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in case_columns() if name not in existing))
