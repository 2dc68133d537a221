"""What a set file declares in its head, read without reading the set.

The rules a JSONL set file's first line follows (:func:`is_jsonl_header`: the set's header, or its
first member; without a header the set is named after the file, :func:`jsonl_file_identifier`),
which :mod:`evalkit.setfiles.documents` reads a whole file by; and the identifier any set file
declares near its top (:func:`jsonl_declared_identifier` for JSONL, a key ``identifier`` for the
others), which the catalog names when a set is asked for by a file's path
(:func:`set_file_hint`). Below both: it imports no set reader and no catalog.
"""

from __future__ import annotations

import re
from collections.abc import Container
from pathlib import Path
from typing import Any

from .jsonparse import json_lines, parse_json
from .wording import quoted

__all__ = [
    "JSONL_MEMBER_KEYS",
    "SET_FILE_HINT_BYTES",
    "is_jsonl_header",
    "jsonl_declared_identifier",
    "jsonl_file_identifier",
    "set_file_hint",
]


#: The keys that make a JSONL line a member of the set, not its header.
JSONL_MEMBER_KEYS = frozenset(("prompt", "question", "template", "messages"))


def is_jsonl_header(first: Any) -> bool:
    """Whether ``first``, the parsed first line of a JSONL set file, is the set's header: an object
    with none of :data:`JSONL_MEMBER_KEYS`, and no ``id`` unless it has an ``identifier`` too."""
    return (
        isinstance(first, dict) and not JSONL_MEMBER_KEYS & set(first) and ("id" not in first or "identifier" in first)
    )


def jsonl_file_identifier(file: Path) -> str:
    """The identifier (and name) of a JSONL set file without a header line: its file name without
    its suffix (``myapp.faq.jsonl`` holds the set ``myapp.faq``)."""
    return file.name[: -len(file.suffix)]


def jsonl_declared_identifier(file: Path, head: str) -> str | None:
    """The identifier the JSONL set file ``file`` holds, found from ``head`` (its first part) as
    :func:`~evalkit.setfiles.documents.read_document` finds it: its header's ``identifier`` (``None`` when that is not text), or
    without a header :func:`jsonl_file_identifier`. ``None`` when the first line cannot be parsed
    (or ``head`` ends before it does)."""
    first = next((line for line in json_lines(head) if line.strip()), None)
    if first is None:
        return jsonl_file_identifier(file)
    try:
        parsed = parse_json(first)
    except (ValueError, RecursionError):
        return None
    if not is_jsonl_header(parsed):
        return jsonl_file_identifier(file)
    declared = parsed.get("identifier")
    return declared if isinstance(declared, str) else None


#: How much of a file named where a set identifier was expected is read to find the identifier
#: it declares: enough for the head of any set file, never a whole large file.
SET_FILE_HINT_BYTES = 64 * 1024

_DECLARED_IDENTIFIER = re.compile(r"""["']?\bidentifier["']?\s*[:=]\s*["']?([a-z0-9_]+(?:\.[a-z0-9_]+)*)""")


def _declared_identifier(file: Path, head: str) -> str | None:
    """The set identifier the file's ``head`` declares, by the loader's rule for a JSONL file
    (:func:`jsonl_declared_identifier`: no header line, the file's
    name), by its ``identifier`` key for the others; ``None`` when none that reads as an
    identifier is found."""
    if file.suffix.lower() == ".jsonl":
        from .validation import IDENTIFIER_PATTERN

        declared = jsonl_declared_identifier(file, head)
        return declared if declared is not None and IDENTIFIER_PATTERN.fullmatch(declared) else None
    found = _DECLARED_IDENTIFIER.search(head)
    return None if found is None else found.group(1)


def set_file_hint(identifier: str, command: str | None = None, known: Container[str] = ()) -> str:
    """When ``identifier`` names a regular file (a set file given by its path), a sentence saying
    that set files are run by the identifier they declare, naming it (and ``command`` with it) when
    the file's head declares one, and whether it is among the ``known`` ones; else ``""``. Reads
    at most :data:`SET_FILE_HINT_BYTES`, opened as every file evalkit reads
    (:func:`~evalkit.textfiles.open_regular_file`: never waiting on a pipe); any error reading it
    gives the hint without the identifier."""
    import os
    import stat

    from .textfiles import open_regular_file

    try:
        if not stat.S_ISREG(os.stat(identifier).st_mode):
            return ""
    except (OSError, ValueError):  # no such file, a name too long, a NUL in it
        return ""
    generic = "Set files are listed under [sets] paths in evalkit.toml and run by the identifier they declare."
    try:
        with open_regular_file(identifier) as handle:
            head = handle.read(SET_FILE_HINT_BYTES).decode("utf-8", errors="replace").removeprefix("\ufeff")
    except (OSError, ValueError):
        return generic
    declared = _declared_identifier(Path(identifier), head)
    if declared is None:
        return generic
    run = f" ({command} {declared})" if command else ""
    if declared in known:
        return f"That is a set file, and it declares the set {quoted(declared)}, which is known: run it by that identifier{run}."
    return (
        f"That is a set file, and it declares the set {quoted(declared)}: list the file under [sets] paths "
        f"in evalkit.toml and run it by that identifier{run}."
    )
