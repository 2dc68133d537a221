"""Cutting a list into pages, and reading page numbers and sizes from an address."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import attrs

from ..shapes import whole_number

__all__ = ["MAX_PER_PAGE", "Paging", "page_number", "per_page"]

#: The most cases one page shows, whatever the address asks.
MAX_PER_PAGE = 500
_T = TypeVar("_T")


@attrs.frozen
class Paging:
    """Page ``number`` (from 1) of ``total`` items, ``per`` a page."""

    number: int
    per: int
    total: int

    @property
    def count(self) -> int:
        """How many pages there are (at least 1)."""
        return max(1, -(-self.total // self.per))

    @property
    def first_item(self) -> int:
        """The 1-based number of the page's first item (0 when there is none)."""
        return min(self.total, (self.number - 1) * self.per + 1)

    @property
    def last_item(self) -> int:
        """The 1-based number of the page's last item."""
        return min(self.total, self.number * self.per)

    def cut(self, items: Sequence[_T]) -> Sequence[_T]:
        """The page's items."""
        start = (self.number - 1) * self.per
        return items[start : start + self.per]

    @classmethod
    def of(cls, number: int, per: int, total: int) -> Paging:
        """Page ``number`` clamped into the pages ``total`` items make."""
        paging = cls(1, per, total)
        return cls(min(max(1, number), paging.count), per, total)


def _whole(text: str | None, default: int, low: int, high: int) -> int:
    number = whole_number(text, max_digits=7) if text is not None else None
    if number is None:
        return default
    return min(max(number, low), high)


def page_number(text: str | None) -> int:
    """A page number from an address (1 when absent or not a number)."""
    return _whole(text, 1, 1, 10_000_000)


def per_page(text: str | None, default: int) -> int:
    """A page size from an address, between 1 and :data:`MAX_PER_PAGE` (``default`` when absent)."""
    return _whole(text, default, 1, MAX_PER_PAGE)
