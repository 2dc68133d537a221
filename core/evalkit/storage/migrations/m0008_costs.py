"""Migration 8: what a run spent, answers reused, and the answer cache.

Frozen: never edit.

Each case keeps the token counts of each judge call (``judge_usage``, JSON) beside the generator's
(``usage``, whose JSON list grows from two counts to four: prompt, completion, total, cached
prompt) and where its answer came from when the model was not asked (``answer_source``: ``cache``
or ``run:<id>``), and the digest of what the model was asked (``prompt_digest``: prompt and system
prompt, not the checks — a re-grade reuses an answer only to the same question). Each run keeps the prices it was costed at (``pricing``), what it spent
(``spend``), whether its answers were reused (``answers_reused``) and the run they came from
(``source_run_id``). Runs and cases stored before keep ``NULL`` there: their spend reads as unknown.
The answer cache is a table of its own (``evalkit_answer_cache``), keyed by the digest of the
canonical request.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "what runs spent (tokens per judge call, prices, spend), reused answers, the answer cache"

CACHE_TABLE = "evalkit_answer_cache"


def case_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the case table."""
    return [
        ("judge_usage", pw.TextField(null=True)),
        ("answer_source", pw.TextField(null=True)),
        ("prompt_digest", pw.TextField(null=True)),
    ]


def run_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the run table."""
    return [
        ("pricing", pw.TextField(null=True)),
        ("spend", pw.TextField(null=True)),
        ("answers_reused", pw.CharField(max_length=16, null=True)),
        ("source_run_id", pw.CharField(max_length=64, null=True)),
    ]


def cache_model(db: pw.Database) -> type[pw.Model]:
    """The answer cache's table as this migration creates it."""

    class AnswerCache(pw.Model):
        key = pw.CharField(primary_key=True, max_length=64)
        provider_instance = pw.TextField()
        model_alias = pw.TextField(null=True)
        reported_model = pw.TextField(null=True)
        answer = pw.TextField()
        created_at = pw.DoubleField()
        used_at = pw.DoubleField(null=True)

        class Meta:
            database = db
            table_name = CACHE_TABLE
            indexes = ((("created_at",), False),)

    return AnswerCache


def up(migrator: Any, db: pw.Database) -> None:
    """Add the columns (unless present) and create the cache table (unless present)."""
    for table, columns in (("evalkit_case", case_columns()), ("evalkit_run", run_columns())):
        existing = {column.name for column in db.get_columns(table)}
        migrator.migrate(*(migrator.add_column(table, name, field) for name, field in columns if name not in existing))
    db.create_tables([cache_model(db)], safe=True)
