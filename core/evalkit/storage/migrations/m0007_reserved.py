"""Migration 7: reserved — a placeholder that changes nothing.

Another line of work ships its own migration 7; this one holds the number so that the versions
run without a gap (:func:`evalkit.storage.migrations.discover` insists) until that one is merged.
Merging it means deleting this file: two migrations numbered 7 fail ``discover`` loudly.
"""

from __future__ import annotations

from typing import Any

NAME = "reserved (changes nothing)"


def up(migrator: Any, db: Any) -> None:
    """Nothing: see the module docstring."""
