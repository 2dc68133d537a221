"""Migration 10: checks a judge decided, and those the judge gate left advisory.

Frozen: never edit.

No column changes: a stored check may now carry ``judged`` and ``advisory`` (inside the case's
checks, JSON), which a release before this one cannot read. Raising the schema version makes such a
release refuse the store with "run `evalkit db upgrade`" instead of failing on the first check it
reads.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "checks a judge decided, and those the judge gate left advisory (inside the stored checks)"


def up(migrator: Any, db: pw.Database) -> None:
    """Nothing to change in the tables: the version alone tells older releases to stay away."""
