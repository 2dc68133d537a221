"""Values read from a store, checked as they are read: SQLite keeps whatever another program (or a
hand, or a newer evalkit) put in a column — text in a REAL column, an infinity, a time no calendar
holds — and each reader refuses such a value by name (:class:`~evalkit.errors.StorageError`, exit 2)
instead of failing later in an internal error. Used by the row readers of :mod:`.sql` and by the
models' column readers (:mod:`.models`), so it stands below both.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import StorageError
from ..shapes import short_repr

__all__ = ["LATEST_TIME", "stored_count", "stored_number", "stored_time", "time_held"]


def _refused(owner: str, field: str, value: Any, what: str) -> StorageError:
    """The error for ``value`` in ``owner``'s ``field``, which is not ``what`` it must be."""
    return StorageError(
        f"{owner} in the store has {field} {short_repr(value)}, not {what}: the database was written by something else than evalkit"
    )


def stored_number(value: Any, owner: str, field: str) -> Any:
    """``value`` when the store holds a finite number there; else a :class:`StorageError` naming
    its ``owner`` (``case 'x'``, ``run 'y'``) and ``field``: SQLite keeps whatever text a hand or
    another program put in a REAL column, and reads back an infinity (PostgreSQL also a NaN) that
    no mean, chart or JSON document survives."""
    number = type(value) is float or type(value) is int
    if not number or not math.isfinite(value):
        raise _refused(owner, field, value, "a finite number" if number else "a number")
    return value


#: The latest time a store may hold: the last second of year 9999, the last that ``time.gmtime()``
#: and every date the reports print can show.
LATEST_TIME = 253_402_300_799.0


def time_held(value: Any) -> bool:
    """The fast test of a stored time: a float from 1970 to :data:`LATEST_TIME` (NaN fails it)."""
    return type(value) is float and 0.0 <= value <= LATEST_TIME


def stored_time(value: Any, owner: str, field: str) -> Any:
    """``value`` when the store holds a time there (seconds since 1970, up to the end of year 9999);
    else a :class:`StorageError` as :func:`stored_number` raises: ``started_at = 1e300`` ended
    ``evalkit history`` and ``evalkit show`` in an internal error where the date is printed."""
    stored_number(value, owner, field)
    if not 0 <= value <= LATEST_TIME:
        raise _refused(owner, field, value, "a time from 1970 to the year 9999")
    return value


def stored_count(value: Any, owner: str, field: str) -> int:
    """``value`` when the store holds a whole number of zero or more there; else a
    :class:`StorageError` as :func:`stored_number` raises (``case_count = 'many'`` ended
    ``show --json`` in an internal error)."""
    if type(value) is not int or value < 0:
        raise _refused(owner, field, value, "a whole number of zero or more")
    return value
