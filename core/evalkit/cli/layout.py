"""Tables that fit the terminal without cutting what people copy.

Run ids, case ids and verdicts are copied into other commands, so they are never truncated nor
folded. :func:`print_rows` prints a table when its whole columns fit the console's width; when
they do not, each row becomes a block: its primary cells on the first line, the other columns
(``Header: value``) under it, indented and wrapped at spaces.

Cells are rich markup strings (the caller escapes what came from outside).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["Column", "print_rows"]

#: The narrowest a foldable column may become in table form.
MIN_FOLD = 10
_GAP = 3  # rich's " │ " between columns (no outer edge, no padding at the edges)


class Column(NamedTuple):
    """A column: header, justification, whether its cells stay whole, whether they lead a block."""

    header: str
    justify: str = "left"
    whole: bool = False
    primary: bool = False


def _width(markup: str) -> int:
    from rich.text import Text

    return max((Text.from_markup(line).cell_len for line in markup.split("\n")), default=0)


def _table_fits(width: int, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> bool:
    need = _GAP * (len(columns) - 1)
    for index, column in enumerate(columns):
        widest = max([_width(column.header), *(_width(row[index]) for row in rows)])
        need += widest if column.whole else min(widest, MIN_FOLD)
    return need <= width


def print_rows(out: Any, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    """Print ``rows`` as a table when it fits ``out``'s width, else as one block per row."""
    if _table_fits(out.width, columns, rows):
        from rich.table import Table

        table = Table(show_edge=False, pad_edge=False)
        for index, column in enumerate(columns):
            widest = max([_width(column.header), *(_width(row[index]) for row in rows)])
            if column.whole:
                table.add_column(column.header, justify=column.justify, no_wrap=True, min_width=widest)
            else:
                table.add_column(column.header, justify=column.justify, overflow="fold")
        for row in rows:
            table.add_row(*row)
        out.print(table)
        return
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    for row in rows:
        lead = "  ".join(cell for column, cell in zip(columns, row, strict=True) if column.primary and cell)
        rest = " · ".join(
            f"{escape(column.header)}: {cell}"
            for column, cell in zip(columns, row, strict=True)
            if not column.primary and cell
        )
        out.print(lead, overflow="fold", soft_wrap=False)
        if rest:
            out.print(Padding(Text.from_markup(rest, overflow="fold"), (0, 0, 0, 2)), soft_wrap=False)
