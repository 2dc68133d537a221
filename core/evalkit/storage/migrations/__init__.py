"""The numbered schema migrations, one module per migration: ``mNNNN_what.py``.

Each module is written as ``playhouse.migrations`` (peewee's runner) expects a migration file to be
— a function ``up(migrator, db)`` that changes the schema through ``migrator``, a
``playhouse.migrate.SchemaMigrator`` for ``db``'s engine — plus ``NAME``, the line the migration
log and ``evalkit db status`` show. :mod:`evalkit.storage.schema` applies them in order and logs
each in ``evalkit_schema_migration``.

A shipped migration is never edited: it declares what it creates or adds as it was then (a frozen
copy), independent of :mod:`evalkit.storage.models`, and imports nothing from ``playhouse`` itself
(opening a store imports this package for the names; the migrator is made only when one runs).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Migration", "discover"]

_MODULE_NAME = re.compile(r"m(\d{4})_\w+")


class Migration(NamedTuple):
    """One numbered migration: its version, its name in the log, and its ``up(migrator, db)``."""

    version: int
    name: str
    up: Callable[[Any, Any], None]


def discover() -> tuple[Migration, ...]:
    """Every migration module of this package, in version order; versions run 1, 2, … without a gap."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        match = _MODULE_NAME.fullmatch(info.name)
        if match is not None:
            module = importlib.import_module(f"{__name__}.{info.name}")
            found.append(Migration(int(match.group(1)), module.NAME, module.up))
    found.sort(key=lambda migration: migration.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"the schema migrations must be numbered 1 to {len(found)}, found {[m.version for m in found]}")
    return tuple(found)
