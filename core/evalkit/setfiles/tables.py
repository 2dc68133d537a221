"""Tables of variables for prompt templates: inline rows, or a CSV, TSV or JSONL file beside the set.

A template's ``vars`` is a list of rows written in the set file, or the path of a file relative to
the set file. A file is read whole (at most :data:`MAX_TABLE_BYTES`), as UTF-8 (a byte-order mark
skipped); CSV and TSV through the :mod:`csv` module (the first row names the columns), JSONL with
evalkit's JSON reader (one object a line). Every problem — text that is not UTF-8, a NUL, a ragged
row, a repeated column, a value that is a list — names the file and the line, never quoting more
of the file than :func:`~.problems.quoted` allows: a table may hold anything.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..jsonparse import json_lines, parse_json
from ..textfiles import read_whole_file, utf8_text
from .problems import FileProblem, lone_surrogate_problem, quoted, quoted_key

__all__ = ["MAX_TABLE_BYTES", "MAX_TABLE_ROWS", "TABLE_SUFFIXES", "Row", "Table", "TableError", "inline_table", "read_table", "text_of"]

#: The largest table file read, in bytes (as large as a set file may be).
MAX_TABLE_BYTES = 256 * 1024 * 1024
#: The most rows one table may hold: each becomes a golden prompt held in memory. A larger set is
#: a provider's job (a ``PromptStream``).
MAX_TABLE_ROWS = 1_000_000
#: Table file suffixes and the reader of each.
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl")


@attrs.frozen
class Row:
    """One row of a table: its number (1 for the first row below a header), its values as text,
    and its line in the file that holds it (``None`` where the reader knows none)."""

    number: int
    values: Mapping[str, str]
    line: int | None = None


@attrs.frozen
class Table:
    """The rows of a table and its columns: a file's header, or every key the rows use, in order."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]


class TableError(Exception):
    """A table file cannot be read; ``problems`` says where and why."""

    def __init__(self, problems: list[FileProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def text_of(value: Any) -> str | None:
    """A variable's value as the text a template receives: text as it is, a number as JSON writes
    it (``7``, ``1.5``); ``None`` for anything else (a boolean, null, a list, a mapping)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    return None


def inline_table(rows: list[Mapping[str, Any]], lines: list[int | None]) -> Table:
    """The table of rows written in the set file (the schema checked that each value is text or a
    number), with the line of each."""
    columns: dict[str, None] = {}
    built = []
    for number, (raw, line) in enumerate(zip(rows, lines, strict=True), start=1):
        values = {key: text_of(value) or "" for key, value in raw.items()}
        columns.update(dict.fromkeys(values))
        built.append(Row(number, values, line))
    return Table(tuple(columns), tuple(built))


def read_table(path: Path, shown: str) -> Table:
    """The table in the file ``path`` (named ``shown`` in problems), by its suffix; raises
    :class:`TableError`."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise TableError([FileProblem(shown, f"has an unsupported type; a table of variables is one of {', '.join(TABLE_SUFFIXES)}")])
    try:
        text = utf8_text(read_whole_file(path, MAX_TABLE_BYTES))
    except UnicodeDecodeError as exc:
        raise TableError([FileProblem(shown, f"is not UTF-8 text ({exc.reason} at byte {exc.start})")]) from None
    except OSError as exc:
        raise TableError([FileProblem(shown, f"cannot be read: {exc.strerror}")]) from None
    nul = text.find("\x00")
    if nul != -1:
        line = text.count("\n", 0, nul) + 1
        raise TableError([FileProblem(shown, "holds a NUL character; a table of variables is text", (), line)])
    table = _read_jsonl(text, shown) if suffix == ".jsonl" else _read_delimited(text, shown, "\t" if suffix == ".tsv" else ",")
    if not table.rows:
        raise TableError([FileProblem(shown, "holds no row; a template needs at least one")])
    return table


def _too_many_rows(shown: str, line: int | None) -> TableError:
    return TableError([FileProblem(shown, f"holds more than {MAX_TABLE_ROWS:,} rows; a set that large is a provider's job (a PromptStream)", (), line)])


def _read_delimited(text: str, shown: str, delimiter: str) -> Table:
    """A CSV or TSV table: the first row names the columns, each further row holds one value each."""
    problems: list[FileProblem] = []
    rows: list[Row] = []
    header: list[str] | None = None
    for start, fields in _records(text, shown, delimiter):
        if header is None:
            header = fields
            problems += _header_problems(shown, header, start)
            continue
        if len(fields) != len(header):
            problems.append(FileProblem(shown, f"row {len(rows) + 1} has {_fields(len(fields))}; the header names {_fields(len(header))}", (), start))
            rows.append(Row(len(rows) + 1, {}, start))
            continue
        if len(rows) >= MAX_TABLE_ROWS:
            raise _too_many_rows(shown, start)
        rows.append(Row(len(rows) + 1, dict(zip(header, fields, strict=True)), start))
    if header is None:
        raise TableError([FileProblem(shown, "holds no header row; its first row names the columns")])
    if problems:
        raise TableError(problems)
    return Table(tuple(header), tuple(rows))


def _fields(count: int) -> str:
    return f"{count} field" + ("" if count == 1 else "s")


def _records(text: str, shown: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Each non-blank record of a CSV or TSV text with the line it starts on. A cell may be as long
    as the file (the csv module's own limit, 128 KiB, is lifted while reading)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True, strict=True)
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, MAX_TABLE_BYTES))
    try:
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise TableError([FileProblem(shown, f"CSV syntax: {exc}", (), reader.line_num or start)]) from None
            if fields:
                yield start, fields
    finally:
        csv.field_size_limit(limit)


def _header_problems(shown: str, header: list[str], line: int) -> list[FileProblem]:
    problems = []
    seen: set[str] = set()
    for number, name in enumerate(header, start=1):
        if not name.strip():
            problems.append(FileProblem(shown, f"column {number} of the header has no name", (), line))
        elif name in seen:
            problems.append(FileProblem(shown, f"the header names column {quoted_key(name)} more than once", (), line))
        seen.add(name)
    return problems


def _read_jsonl(text: str, shown: str) -> Table:
    """A JSONL table: one JSON object a line, its keys the columns, its values text or numbers."""
    problems: list[FileProblem] = []
    rows: list[Row] = []
    columns: dict[str, None] = {}
    for line_number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        number = len(rows) + 1
        if number > MAX_TABLE_ROWS:
            raise _too_many_rows(shown, line_number)
        try:
            item = parse_json(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            problems.append(FileProblem(shown, f"JSON syntax: {exc.msg}", (), line_number, exc.colno))
            continue
        if not isinstance(item, dict):
            problems.append(FileProblem(shown, f"row {number} is {quoted(item)}, not an object of variables", (), line_number))
            continue
        values: dict[str, str] = {}
        for key, value in item.items():
            text_value = text_of(value)
            if text_value is None:
                problems.append(FileProblem(
                    shown, f"row {number}: the value of {quoted_key(key)} is {quoted(value)}; a variable is text or a number", (), line_number,
                ))  # fmt: skip
                continue
            lone = lone_surrogate_problem(key) or lone_surrogate_problem(text_value)
            if lone is not None:  # it would be put in a prompt that no endpoint can be sent
                problems.append(FileProblem(shown, f"row {number}: {lone}", (), line_number))
                continue
            values[key] = text_value
        columns.update(dict.fromkeys(values))
        rows.append(Row(number, values, line_number))
    if problems:
        raise TableError(problems)
    return Table(tuple(columns), tuple(rows))
