"""JSON parsed from files a user or a plugin hands over, every failure a ``JSONDecodeError``.

``json.loads`` raises ``RecursionError``, not ``JSONDecodeError``, for text nested deeper than the
interpreter's stack allows: ``[[[…]]]`` 100,000 deep is 200 KB. A reader that reports a
``JSONDecodeError`` as "not JSON", naming its file and line, reports that text the same way
through :func:`parse_json` instead of failing with an internal error. The same for a number
too long for Python to convert (more than 4,300 digits: ``ValueError``, not ``JSONDecodeError``);
:func:`too_many_digits` tells that failure apart for the TOML and YAML readers, which raise it too.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["TOO_MANY_DIGITS", "parse_json", "too_many_digits"]

#: What a reader says of a number longer than Python converts (``sys.get_int_max_str_digits()``).
TOO_MANY_DIGITS = "a number with more than 4,300 digits"

_LONG_NUMBER = re.compile(r"\d{4301,}")

#: How deep the nesting is where :func:`parse_json` says it went too deep (json itself gives up
#: at the interpreter's recursion limit, 1,000 frames less what the caller uses).
REPORTED_DEPTH = 500

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def parse_json(text: str | bytes, **options: Any) -> Any:
    """``json.loads(text, **options)``; text nested too deeply raises ``JSONDecodeError("nested
    too deeply")`` at the bracket where the nesting passes :data:`REPORTED_DEPTH` levels (for
    bytes, a position in their UTF-8 decoding)."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", shown, _too_deep_at(shown)) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or not too_many_digits(exc):
            raise
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(TOO_MANY_DIGITS, shown, long_number_at(shown)) from None


def too_many_digits(exc: BaseException) -> bool:
    """True when ``exc`` is Python refusing to convert an integer of too many digits (a parser of
    JSON, TOML or YAML met one): not a syntax error of the text, a number no reader should take."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def long_number_at(text: str) -> int:
    """Where in ``text`` the first run of more than 4,300 digits starts (0 when there is none)."""
    found = _LONG_NUMBER.search(text)
    return found.start() if found else 0


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
