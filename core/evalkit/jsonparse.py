"""JSON parsed from files a user or a plugin hands over, every failure a ``JSONDecodeError``.

``json.loads`` raises ``RecursionError``, not ``JSONDecodeError``, for text nested deeper than the
interpreter's stack allows: ``[[[…]]]`` 100,000 deep is 200 KB. A reader that reports a
``JSONDecodeError`` as "not JSON", naming its file and line, reports that text the same way
through :func:`parse_json` instead of failing with an internal error.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["parse_json"]

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
