"""Migration 5: keep each retrieval question's rank measures on its case at every privacy level,
so a resumed retrieval run averages the questions answered before the interruption.

Frozen: never edit.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "keep each retrieval question's rank measures at every privacy level (resumable retrieval runs)"


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table: a retrieval question's rank measures.

    ``measures`` is JSON (``{"reciprocal_rank_at_k": …, "recall_at_k": …, "ndcg_at_k": …}``), kept at
    every privacy level (numbers name no content). Null for prompt cases and for cases stored before.
    """
    return [("measures", pw.TextField(null=True))]


def up(migrator: Any, db: pw.Database) -> None:
    """Add the measures column (unless the case table has it)."""
    existing = {column.name for column in db.get_columns("evalkit_case")}
    migrator.migrate(*(migrator.add_column("evalkit_case", name, field) for name, field in case_columns() if name not in existing))
