"""Tables that fit the terminal without cutting what people copy.

Run ids, case ids and verdicts are copied into other commands, so they are never truncated nor
folded. :func:`print_rows` prints a table when its whole columns fit the console's width; when
they do not, each row becomes a block: its primary cells on the first line, the other columns
(``Header: value``) under it, indented and wrapped at spaces.

A cell is a ``str`` — data, shown as it is — or a rich ``Text`` made by
:meth:`~evalkit.cli.console.Output.text` (styled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from rich.text import Text

    from .console import Output

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


def _width(cell: Text) -> int:
    return max((line.cell_len for line in cell.split("\n")), default=0)


def _table_fits(width: int, columns: Sequence[Column], rows: Sequence[Sequence[Text]]) -> bool:
    need = _GAP * (len(columns) - 1)
    for index, column in enumerate(columns):
        widest = max([len(column.header), *(_width(row[index]) for row in rows)])
        need += widest if column.whole else min(widest, MIN_FOLD)
    return need <= width


def print_rows(out: Output, columns: Sequence[Column], rows: Sequence[Sequence[str | Text]]) -> None:
    """Print ``rows`` as a table when it fits ``out``'s width, else as one block per row."""
    from rich.text import Text

    cells = [[cell if isinstance(cell, Text) else Text(out.safe(cell)) for cell in row] for row in rows]
    if _table_fits(out.width, columns, cells):
        from rich.table import Table

        table = Table(show_edge=False, pad_edge=False)
        for index, column in enumerate(columns):
            widest = max([len(column.header), *(_width(row[index]) for row in cells)])
            if column.whole:
                table.add_column(column.header, justify=column.justify, no_wrap=True, min_width=widest)
            else:
                table.add_column(column.header, justify=column.justify, overflow="fold")
        for row in cells:
            table.add_row(*row)
        out.print(table)
        return
    from rich.padding import Padding

    for row in cells:
        lead = Text("  ").join(cell for column, cell in zip(columns, row, strict=True) if column.primary and cell)
        rest = Text(" · ").join(
            Text.assemble(f"{column.header}: ", cell)
            for column, cell in zip(columns, row, strict=True)
            if not column.primary and cell
        )
        lead.overflow = rest.overflow = "fold"
        out.print(lead, soft_wrap=False)
        if rest:
            out.print(Padding(rest, (0, 0, 0, 2)), soft_wrap=False)
