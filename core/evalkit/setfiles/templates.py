"""Prompt templates × variables: one entry of a set file that expands into a golden prompt per row.

::

    prompts:
      - id: capital                       # each row's prompt is capital/<id_column value>, or capital/<row number>
        template: What is the capital of {country}? Answer with the city only.
        vars: capitals.csv                # or a list of rows: [{country: France, capital: Paris}, ...]
        id_column: country                # optional
        ignore_columns: [notes]           # optional: columns no placeholder uses, on purpose
        reference: "{capital}"
        assertions:
          - contains: "{capital}"
          - regex: '/^\\w+\\.?$/'         # never substituted: braces are the regex's own

``{name}`` stands for the row's value of the column ``name``; ``{{`` and ``}}`` are literal braces.
Placeholders are substituted in the template, the system prompt, the reference (its text), the
tags, and the text values of the ``exact``, ``contains``, ``contains_any``, ``contains_none`` and
``cites_any`` assertions — never in a ``regex`` or ``json_schema`` value, a check name, or a
plugin kind's value, which are taken as written. Each expanded prompt is an ordinary golden prompt
whose fingerprint covers its expanded text, so editing one row edits one case.

Every mistake is a problem with the place it is at: a placeholder no column provides (with the
nearest column names), a row that lacks a variable (by its id and line), two rows that expand to
one id, a column no placeholder uses (a problem unless listed in ``ignore_columns``: a column
nobody reads is most often a check that was never written).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..checks import AssertionKind
from ..wording import did_you_mean
from .documents import MAX_SET_FILE_BYTES, SetDocument
from .problems import FileProblem, JsonPath, format_path, quoted
from .tables import Row, Table, TableError, inline_table, read_table

if TYPE_CHECKING:  # importing project_files here would import the configuration
    from ..project_files import ProjectBoundary
    from .sets import FlaggedPaths

__all__ = [
    "MAX_EXPANDED_CHARACTERS",
    "SUBSTITUTED_KINDS",
    "Template",
    "TemplateReading",
    "TemplateSyntaxError",
    "expand_templates",
    "parse_template",
]

#: The assertion kinds whose text values take placeholders (the others are taken as written).
SUBSTITUTED_KINDS = ("exact", "contains", "contains_any", "contains_none", "cites_any")
#: The most characters the prompts of one set file's templates may expand into (as much as a set
#: file may hold): ten rows of a 100 MB template would otherwise take a gigabyte.
MAX_EXPANDED_CHARACTERS = MAX_SET_FILE_BYTES
#: What separates a template's id from a row's id in the expanded prompt's id.
ID_SEPARATOR = "/"

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class TemplateSyntaxError(ValueError):
    """A template's text has a lone brace or an empty placeholder; ``offset`` is where."""

    def __init__(self, reason: str, offset: int) -> None:
        self.reason = reason
        self.offset = offset
        super().__init__(reason)


@attrs.frozen
class Template:
    """A parsed template: literal text and placeholder names, in order (a name is a ``tuple``
    holding it, so it cannot be mistaken for text)."""

    parts: tuple[str | tuple[str], ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The placeholder names, each once, in order."""
        return tuple(dict.fromkeys(part[0] for part in self.parts if isinstance(part, tuple)))

    def render(self, values: Mapping[str, str]) -> str:
        """The text with each placeholder replaced by its value (every name must be in ``values``)."""
        return "".join(part if isinstance(part, str) else values[part[0]] for part in self.parts)


def parse_template(text: str) -> Template:
    """Parse ``{name}`` placeholders and ``{{``/``}}`` escapes; a lone ``{`` or ``}`` or an empty
    ``{}`` raises :class:`TemplateSyntaxError`."""
    parts: list[str | tuple[str]] = []
    literal: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        literal.append(text[last : match.start()])
        last = match.end()
        token = match.group()
        if token in ("{{", "}}"):
            literal.append(token[0])
        elif token in ("{", "}"):
            raise TemplateSyntaxError(f"a lone {token!r} at character {match.start() + 1}; write {token * 2!r} for a literal brace", match.start())
        elif not match.group(1):
            raise TemplateSyntaxError(f"an empty placeholder {{}} at character {match.start() + 1}; write '{{{{}}}}' for literal braces", match.start())
        else:
            parts.append("".join(literal))
            literal = []
            parts.append((match.group(1),))
    literal.append(text[last:])
    parts.append("".join(literal))
    return Template(tuple(part for part in parts if part != ""))


@attrs.frozen
class TemplateReading:
    """What expanding a set file's templates needs beside the document: the file as read (a
    ``vars`` path starts from its folder), the places files may be read from, the assertion kinds
    (to check each expanded value) and how a table file is named in problems."""

    source: Path
    boundary: ProjectBoundary
    kinds: Mapping[str, AssertionKind]
    shown: Callable[[Path], str] = str


#: ``{path of a template entry: the raw prompt objects it expands into}``.
Expansions = dict[JsonPath, list[dict[str, Any]]]


def expand_templates(document: SetDocument, reading: TemplateReading, flagged: FlaggedPaths) -> tuple[Expansions, list[FileProblem]]:
    """Every template entry of ``document`` expanded into plain prompt objects, or the problems
    that stop it. Entries the schema or the rules already reported (``flagged``) are skipped."""
    from .sets import near, set_entries  # sets imports this module's callers, not this module

    expansions: Expansions = {}
    problems: list[FileProblem] = []
    tables: dict[str, Table | TableError] = {}
    budget = _Budget()
    for where, entry in set_entries(document.data):
        prompts = entry.get("prompts") if isinstance(entry, dict) else None
        if not isinstance(prompts, list):
            continue
        taken = {raw["id"]: (where + ("prompts", index, "id"), None) for index, raw in enumerate(prompts)
                 if isinstance(raw, dict) and "template" not in raw and isinstance(raw.get("id"), str)}  # fmt: skip
        for index, raw in enumerate(prompts):
            at = where + ("prompts", index)
            if not isinstance(raw, dict) or "template" not in raw or near(at, flagged):
                continue
            expansion = _Expansion(document, reading, at, raw, taken, budget)
            table = expansion.table(tables)
            if table is None:
                problems += expansion.problems
                continue
            expanded = expansion.expand(table)
            problems += expansion.problems
            if expanded is not None:
                expansions[at] = expanded
            if budget.exceeded:
                break
    return expansions, problems


@attrs.define
class _Budget:
    """The characters the templates of one file have expanded into so far."""

    used: int = 0
    exceeded: bool = False


@attrs.define
class _Field:
    """One substituted text of a template entry: where it is, its template, and how to put the
    rendered text into an expanded prompt."""

    path: JsonPath
    template: Template
    put: Callable[[dict[str, Any], str], None]


class _Expansion:
    """Checks and expands one template entry; its problems accumulate in :attr:`problems`."""

    def __init__(self, document: SetDocument, reading: TemplateReading, at: JsonPath, raw: dict[str, Any],
                 taken: dict[str, tuple[JsonPath, Row | None]], budget: _Budget) -> None:  # fmt: skip
        self.document = document
        self.reading = reading
        self.at = at
        self.raw = raw
        self.taken = taken
        self.budget = budget
        self.problems: list[FileProblem] = []
        self.table_file: str | None = None

    def problem(self, path: JsonPath, reason: str) -> None:
        self.problems.append(self.document.problem(path, reason))

    # --- the table ---------------------------------------------------------------------------

    def table(self, cache: dict[str, Table | TableError]) -> Table | None:
        """The entry's table of variables, inline or read from its file (once per file)."""
        source = self.raw["vars"]
        at = self.at + ("vars",)
        if isinstance(source, list):
            lines = [(self.document.positions.get(at + (i,)) or (None,))[0] for i in range(len(source))]
            return inline_table(source, lines)
        if "\x00" in source:
            self.problem(at, "names a file with a NUL character, which no file name can hold")
            return None
        path = Path(os.path.join(self.reading.source.parent, source))
        self.table_file = self.reading.shown(path)
        outside = self.reading.boundary.outside(os.path.abspath(path))
        if outside is not None:
            self.problem(at, f"the table of variables {self.table_file} {outside}")
            return None
        key = os.path.realpath(path)
        if key not in cache:
            try:
                cache[key] = read_table(path, self.table_file)
            except TableError as exc:
                cache[key] = exc
                self.problems += (self.in_table(p) for p in exc.problems)
                return None
        found = cache[key]
        return found if isinstance(found, Table) else None

    # --- the fields ----------------------------------------------------------------------------

    def fields(self) -> list[_Field] | None:
        """Every substituted text of the entry, parsed; ``None`` when one does not parse."""
        fields: list[_Field] = []
        failed = False
        for path, text, put in self._texts():
            try:
                fields.append(_Field(path, parse_template(text), put))
            except TemplateSyntaxError as exc:
                self.problem(path, exc.reason)
                failed = True
        return None if failed else fields

    def _texts(self) -> Iterator[tuple[JsonPath, str, Callable[[dict[str, Any], str], None]]]:
        raw, at = self.raw, self.at
        yield at + ("template",), raw["template"], _setter("prompt")
        if isinstance(raw.get("system_prompt"), str):
            yield at + ("system_prompt",), raw["system_prompt"], _setter("system_prompt")
        reference = raw.get("reference")
        if isinstance(reference, str):
            yield at + ("reference",), reference, _setter("reference")
        elif isinstance(reference, dict):
            yield at + ("reference", "text"), reference["text"], _item_setter("reference", "text")
        for index, tag in enumerate(raw.get("tags", ())):
            yield at + ("tags", index), tag, _item_setter("tags", index)
        for number, assertion in enumerate(raw.get("assertions", ())):
            kind = next((k for k in SUBSTITUTED_KINDS if k in assertion), None)
            if kind is None:
                continue
            path = at + ("assertions", number, kind)
            value = assertion[kind]
            if isinstance(value, str):
                yield path, value, _assertion_setter(number, kind, None)
            else:
                for item, text in enumerate(value):
                    yield path + (item,), text, _assertion_setter(number, kind, item)

    # --- expanding -----------------------------------------------------------------------------

    def expand(self, table: Table) -> list[dict[str, Any]] | None:
        """The prompt objects of every row, or ``None`` with the problems recorded."""
        fields = self.fields()
        if fields is None:
            return None
        used = {name for field in fields for name in field.template.names}
        if not self._columns_fit(fields, used, table):
            return None
        id_column = self.raw.get("id_column")
        expanded: list[dict[str, Any]] = []
        for row in table.rows:
            missing = [name for name in sorted(used) if name not in row.values]
            if missing:
                names = ", ".join("{" + name + "}" for name in missing)
                self.row_problem(row, f"has no value for {names}, which the template uses")
                continue
            prompt_id = self._row_id(row, id_column)
            if prompt_id is None:
                continue
            prompt = self._render(row, fields, prompt_id)
            if self.budget.exceeded:
                return None
            if prompt is not None:
                expanded.append(prompt)
        return None if self.problems else expanded

    def _columns_fit(self, fields: list[_Field], used: set[str], table: Table) -> bool:
        """Whether every placeholder names a column, ``id_column`` and ``ignore_columns`` name
        columns, and every column is used by a placeholder (or ignored); problems recorded."""
        columns = table.columns
        fits = True
        for field in fields:
            for name in field.template.names:
                if name not in columns:
                    hint = did_you_mean(name, columns) or _brace_hint(name)
                    where = f" in {self.table_file}" if self.table_file else ""
                    reason = f"the placeholder {quoted(name)} names no column of the table{where} (columns: {_listed(columns)})."
                    self.problem(field.path, (reason + hint).rstrip("."))
                    fits = False
        id_column = self.raw.get("id_column")
        if id_column is not None and id_column not in columns:
            reason = f"{quoted(id_column)} is no column of the table (columns: {_listed(columns)}).{did_you_mean(id_column, columns)}"
            self.problem(self.at + ("id_column",), reason.rstrip("."))
            fits = False
        ignored = self.raw.get("ignore_columns", [])
        for index, name in enumerate(ignored):
            if name not in columns:
                reason = f"{quoted(name)} is no column of the table (columns: {_listed(columns)}).{did_you_mean(name, columns)}"
                self.problem(self.at + ("ignore_columns", index), reason.rstrip("."))
                fits = False
        unused = [c for c in columns if c not in used and c != id_column and c not in ignored]
        if unused and fits:
            names = ", ".join(quoted(c) for c in unused)
            self.problem(
                self.at + ("vars",),
                f"{'column' if len(unused) == 1 else 'columns'} {names} {'is' if len(unused) == 1 else 'are'} used by no "
                f"placeholder; use {'it' if len(unused) == 1 else 'them'}, or list {'it' if len(unused) == 1 else 'them'} in ignore_columns",
            )
            fits = False
        return fits

    def _row_id(self, row: Row, id_column: str | None) -> str | None:
        """The expanded prompt's id (``<template id>/<row id>``), or ``None`` with a problem."""
        if id_column is None:
            key = str(row.number)
        else:
            key = row.values.get(id_column, "")
            if not key.strip():
                self.row_problem(row, f"has no value in its id column {quoted(id_column)}")
                return None
        prompt_id = f"{self.raw['id']}{ID_SEPARATOR}{key}"
        first = self.taken.get(prompt_id)
        if first is not None:
            path, other = first
            earlier = self._row_name(other) if other is not None else f"the prompt at {format_path(path)}"
            self.row_problem(row, f"expands to the id {quoted(prompt_id)}, which {earlier} already has")
            return None
        self.taken[prompt_id] = (self.at, row)
        return prompt_id

    def _render(self, row: Row, fields: list[_Field], prompt_id: str) -> dict[str, Any] | None:
        """The prompt object of ``row``: a copy of the entry with every field rendered."""
        raw = self.raw
        prompt: dict[str, Any] = {"id": prompt_id}
        for key in ("system_prompt", "reference", "tags"):
            if key in raw:
                prompt[key] = dict(raw[key]) if isinstance(raw[key], dict) else list(raw[key]) if isinstance(raw[key], list) else raw[key]
        prompt["assertions"] = [{k: (list(v) if isinstance(v, list) else v) for k, v in a.items()} for a in raw.get("assertions", ())]
        for field in fields:
            text = field.template.render(row.values)
            self.budget.used += len(text)
            if self.budget.used > MAX_EXPANDED_CHARACTERS:
                self.budget.exceeded = True
                self.problem(self.at, f"the templates of this file expand into more than {MAX_EXPANDED_CHARACTERS:,} characters, "
                             "as much as a set file may hold; a set that large is a provider's job (a PromptStream)")  # fmt: skip
                return None
            field.put(prompt, text)
        failed = self._kernel_rules_broken(row, fields, prompt)
        for number, assertion in enumerate(prompt["assertions"]):
            kind = next((k for k in SUBSTITUTED_KINDS if k in assertion), None)
            if kind is None or kind not in self.reading.kinds:
                continue
            value = assertion[kind]
            for issue in self.reading.kinds[kind].validate(tuple(value) if isinstance(value, list) else value):
                self.row_problem(row, f"makes {format_path(self.at + ('assertions', number, kind))} invalid ({issue})")
                failed = True
        return None if failed else prompt

    def _kernel_rules_broken(self, row: Row, fields: list[_Field], prompt: dict[str, Any]) -> bool:
        """Whether the row's values break a rule the kernel holds every prompt to — its text
        visible, its id in Unicode NFC and at most :data:`~evalkit.shapes.MAX_NAME_CHARS` long, no
        tag with a control or invisible character — each a problem at the row, naming the columns
        whose values did it. Checked on the raw file these rules pass the template's own text; the
        kernel's check of the built set would place them at the set's first line."""
        from ..identity import hidden_problem
        from ..printable import not_nfc
        from ..problem_texts import too_long
        from ..shapes import MAX_NAME_CHARS
        from ..validation import has_visible_text

        broken = []
        for field in fields:
            if not field.template.names:
                continue
            key = field.path[len(self.at) :]
            if key == ("template",) and not has_visible_text(prompt["prompt"]):
                broken.append((field, "must not be empty (or hold only whitespace and control characters)"))
            elif key[0] == "tags" and (hidden := hidden_problem(prompt["tags"][key[1]])) is not None:
                broken.append((field, hidden))
        for field, issue in broken:
            self.row_problem(row, f"makes {format_path(field.path)} invalid{_through(field.template.names)} ({issue})")
        id_column = self.raw.get("id_column")
        if id_column is not None:
            issue = too_long(prompt["id"], MAX_NAME_CHARS) or not_nfc(prompt["id"])
            if issue is not None:
                broken.append(issue)
                self.row_problem(row, f"makes the id invalid through its column {quoted(id_column)} (the id {issue})")
        return bool(broken)

    # --- naming rows ---------------------------------------------------------------------------

    def _row_name(self, row: Row) -> str:
        id_column = self.raw.get("id_column")
        named = f"row {row.number}"
        if id_column is not None and row.values.get(id_column, "").strip():
            named += f" ({quoted(row.values[id_column])})"
        return named

    def row_problem(self, row: Row, reason: str) -> None:
        """A problem of one row: at its line in the table file, or at the row in the set file."""
        if self.table_file is None:
            self.problem(self.at + ("vars", row.number - 1), f"{self._row_name(row)} {reason}")
        else:
            self.problems.append(self.in_table(FileProblem(self.table_file, f"{self._row_name(row)} {reason}", (), row.line)))

    def in_table(self, problem: FileProblem) -> FileProblem:
        """A problem of the table file (at its line there), saying which set file's template named
        the table: ``evals/capitals.csv: is not UTF-8 text (…) (the template at prompts[0] of
        evals/capitals.yaml)``; the set file fails with it (:attr:`SetFiles.failed`)."""
        of = f" (the template at {format_path(self.at)} of {self.document.file})"
        return attrs.evolve(problem, reason=problem.reason + of)


def _setter(key: str) -> Callable[[dict[str, Any], str], None]:
    def put(prompt: dict[str, Any], text: str) -> None:
        prompt[key] = text

    return put


def _item_setter(key: str, item: str | int) -> Callable[[dict[str, Any], str], None]:
    def put(prompt: dict[str, Any], text: str) -> None:
        prompt[key][item] = text

    return put


def _assertion_setter(number: int, kind: str, item: int | None) -> Callable[[dict[str, Any], str], None]:
    def put(prompt: dict[str, Any], text: str) -> None:
        if item is None:
            prompt["assertions"][number][kind] = text
        else:
            prompt["assertions"][number][kind][item] = text

    return put


def _through(names: tuple[str, ...]) -> str:
    """`` through its column 'a'`` (or columns): the placeholders of a field a row fills."""
    return f" through its column{'s' if len(names) > 1 else ''} " + ", ".join(quoted(name) for name in names)


def _listed(columns: tuple[str, ...]) -> str:
    """The columns as a problem lists them: quoted, at most ten."""
    if not columns:
        return "none"
    shown = ", ".join(quoted(c) for c in columns[:10])
    return shown + (f" and {len(columns) - 10:,} more" if len(columns) > 10 else "")


def _brace_hint(name: str) -> str:
    """For a placeholder that looks like literal text (``{"a": 1}``): how to write braces."""
    return " Write {{ and }} for literal braces." if not re.fullmatch(r"\s*[\w.-]+\s*", name) else ""
