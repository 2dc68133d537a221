"""JSON parsed from files a user or a plugin hands over, every failure a ``JSONDecodeError``.

``json.loads`` raises ``RecursionError``, not ``JSONDecodeError``, for text nested deeper than the
interpreter's stack allows: ``[[[…]]]`` 100,000 deep is 200 KB. A reader that reports a
``JSONDecodeError`` as "not JSON", naming its file and line, reports that text the same way
through :func:`parse_json` instead of failing with an internal error. The same for a number
too long for Python to convert (more than 4,300 digits: ``ValueError``, not ``JSONDecodeError``);
:func:`too_many_digits` tells that failure apart for the TOML and YAML readers, which raise it too.

A JSON Lines text is split into its lines by :func:`json_lines`, at ``\n``, ``\r\n`` and a lone
``\r`` only: ``str.splitlines()`` also breaks at U+2028, U+2029 and U+0085, which JSON carries raw
inside a string, and so cut a valid line in two.

``json.loads`` also reads ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259),
and reads a number too large for a float (``1e400``) as an infinity. :func:`parse_json` refuses
both as ``JSONDecodeError`` at the value (``NaN is not JSON``, ``the number 1e400 is out of
range``), so a NaN in a set file, an answer file or an endpoint's reply is the reader's "not JSON"
problem at its line and column, never a value that reaches a check, the store or a ``--json``
document. A caller that has its own use for them passes ``parse_constant`` or ``parse_float``.

``json.loads`` keeps the last of a key written twice in one object (``{"id": "a", "text": "x",
"id": "b"}``). A reader of a file a user writes (recorded answers, a table of variables, a corpus,
a collection's queries) passes ``unique_keys=True``: the repeated key is then a ``JSONDecodeError``
at the repeat (``key "id" appears more than once``, a :class:`RepeatedKeyError`), as it is in a set file, never a value that
silently replaced the first.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .shapes import clipped
from .wording import quoted

__all__ = ["TOO_MANY_DIGITS", "RepeatedKeyError", "json_lines", "parse_json", "too_many_digits"]

#: What a reader says of a number longer than Python converts (``sys.get_int_max_str_digits()``).
TOO_MANY_DIGITS = "a number with more than 4,300 digits"

_LONG_NUMBER = re.compile(r"\d{4301,}")

#: Where a line of a JSON Lines text ends (a lone ``\r`` too: a raw CR is never inside a JSON string).
_LINE_END = re.compile(r"\r\n|\r|\n")

#: How deep the nesting is where :func:`parse_json` says it went too deep (json itself gives up
#: at the interpreter's recursion limit, 1,000 frames less what the caller uses).
REPORTED_DEPTH = 500

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)

#: A string (skipped), a constant or a number of JSON text: what :func:`_value_at` looks through.
_VALUES = re.compile(r'"(?:[^"\\]|\\.)*"?|NaN|-?Infinity|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?', re.DOTALL)


class RepeatedKeyError(json.JSONDecodeError):
    """The ``JSONDecodeError`` :func:`parse_json` raises with ``unique_keys`` for a key written
    twice in one object (``key "id" appears more than once``), at the repeat: a reader that tells
    this failure apart (a valid document but for the repeat) says so; ``key`` is the key."""

    def __init__(self, key: str, doc: str, pos: int) -> None:
        super().__init__(f"key {quoted(key)} appears more than once", doc, pos)
        self.key = key

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.key, self.doc, self.pos)


class _NotFinite(Exception):
    """Raised out of ``json.loads`` for a value that is no finite number (deliberately not a
    ``ValueError``: nothing between the hook and :func:`parse_json` may take it for another failure)."""

    def __init__(self, literal: str, reason: str) -> None:
        super().__init__(reason)
        self.literal = literal
        self.reason = reason


class _RepeatedKey(Exception):
    """Raised out of ``json.loads`` for a key written twice in one object (not a ``ValueError``,
    as :class:`_NotFinite` is not)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise _RepeatedKey(key)
        made[key] = value
    return made


#: A string followed by ``:`` (an object's key), a string, or a bracket: what :func:`_repeat_at` walks.
_KEYS = re.compile(r'("(?:[^"\\]|\\.)*")\s*:|"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _repeat_at(text: str, key: str) -> int:
    """Where ``key`` is written the second time as a key of one object of ``text`` (0 when it is
    not found): a position for the reader's line and column. A key every object of a document has
    (``"id"``) is a repeat only in the same object, not at its second object."""
    objects: list[set[str] | None] = []
    for token in _KEYS.finditer(text):
        mark = token.group()
        if mark in "[{":
            objects.append(set() if mark == "{" else None)
        elif mark in "]}":
            if objects:
                objects.pop()
        elif token.group(1) is not None and objects and objects[-1] is not None:
            try:
                name = json.loads(token.group(1))
            except ValueError:
                continue
            if name in objects[-1] and name == key:
                return token.start()
            objects[-1].add(name)
    return 0


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(name, f"{name} is not JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NotFinite(literal, f"the number {clipped(literal, 40)} is out of range")
    return value


def parse_json(text: str | bytes, *, unique_keys: bool = False, **options: Any) -> Any:
    """``json.loads(text, **options)``; text nested too deeply raises ``JSONDecodeError("nested
    too deeply")`` at the bracket where the nesting passes :data:`REPORTED_DEPTH` levels (for
    bytes, a position in their UTF-8 decoding). ``NaN``, ``Infinity``, ``-Infinity`` and a number
    that is infinite as a float raise ``JSONDecodeError`` at that value, unless ``options`` give
    their own ``parse_constant`` or ``parse_float``. With ``unique_keys``, a key written twice in
    one object raises :class:`RepeatedKeyError` (``key "K" appears more than once``) at its second place."""
    options.setdefault("parse_constant", _refuse_constant)
    options.setdefault("parse_float", _finite_float)
    if unique_keys:
        options.setdefault("object_pairs_hook", _unique_pairs)
    try:
        return json.loads(text, **options)
    except _NotFinite as exc:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(exc.reason, shown, _value_at(shown, exc.literal)) from None
    except _RepeatedKey as exc:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise RepeatedKeyError(exc.key, shown, _repeat_at(shown, exc.key)) from None
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", shown, _too_deep_at(shown)) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or not too_many_digits(exc):
            raise
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(TOO_MANY_DIGITS, shown, long_number_at(shown)) from None


def json_lines(text: str) -> list[str]:
    """The lines of the JSON Lines ``text``, as ``str.splitlines()`` gives them but broken only
    at ``\n``, ``\r\n`` and ``\r``: U+2028, U+2029 and U+0085 (NEL), which JSON allows raw in a
    string and ``splitlines`` takes for line ends, stay in their line. Line N of the file is
    item N - 1."""
    lines = _LINE_END.split(text)
    if lines[-1] == "":  # the text ended with a line end (or was empty): no line after it
        lines.pop()
    return lines


def too_many_digits(exc: BaseException) -> bool:
    """True when ``exc`` is Python refusing to convert an integer of too many digits (a parser of
    JSON, TOML or YAML met one): not a syntax error of the text, a number no reader should take."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def long_number_at(text: str) -> int:
    """Where in ``text`` the first run of more than 4,300 digits starts (0 when there is none)."""
    found = _LONG_NUMBER.search(text)
    return found.start() if found else 0


def _value_at(text: str, literal: str) -> int:
    """Where in ``text`` the constant or number ``literal`` that the parser refused starts: its
    first occurrence outside a string (the parser reads in order, so an earlier one would have
    been refused first); 0 when there is none."""
    for token in _VALUES.finditer(text):
        if token.group() == literal:
            return token.start()
    return 0


def _too_deep_at(text: str) -> int:
    depth = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > REPORTED_DEPTH:
                return token.start()
        elif mark in "]}":
            depth -= 1
    return 0
