"""Set members produced one by one, for the tests of how far evalkit reads an iterator."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any


def numbered(make: Callable[[int], Any], count: int | None, made: list[int]) -> Iterator[Any]:
    """``make(0)``, ``make(1)``, … — ``count`` of them, or for ever when ``count`` is ``None`` —
    appending each number to ``made`` as it is made (what the reader asked for)."""
    for number in itertools.count() if count is None else range(count):
        made.append(number)
        yield make(number)
