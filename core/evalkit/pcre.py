"""Translate the original's PCRE-style delimited patterns (``/9(:00)?\\s*am/i``) to Python regexes.

A pattern that starts with a delimiter and ends with the same delimiter (or the closing bracket of
an opening one) followed only by modifier letters is read as PCRE: ``i m s x u D A`` are honoured,
and without ``u`` the character classes are ASCII-only, as in PCRE. Anything else is a plain
Python regular expression.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["compile_pattern", "PatternError"]

_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_SUPPORTED = set("imsxuDA")


class PatternError(ValueError):
    """The pattern cannot be compiled; the message says why."""


def _split_delimited(pattern: str) -> tuple[str, str] | None:
    text = pattern.lstrip()
    if len(text) < 2:
        return None
    opener = text[0]
    if opener.isalnum() or opener == "\\" or opener.isspace():
        return None
    closer = _BRACKETS.get(opener, opener)
    end = text.rfind(closer)
    if end <= 0:
        return None
    modifiers = text[end + 1 :]
    if not all(ch.isalpha() for ch in modifiers):
        return None
    return text[1:end], modifiers


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` (PCRE-delimited or plain) or raise :class:`PatternError`."""
    parts = _split_delimited(pattern)
    if parts is None:
        body, flags = pattern, 0
    else:
        body, modifiers = parts
        unknown = sorted(set(modifiers) - _SUPPORTED)
        if unknown:
            raise PatternError(f"unsupported PCRE modifier(s) {''.join(unknown)!r} in {pattern!r}")
        flags = 0 if "u" in modifiers else re.ASCII
        for letter in modifiers:
            flags |= _FLAGS.get(letter, 0)
        if "A" in modifiers:
            body = rf"\A(?:{body})"
        if "D" in modifiers and "m" not in modifiers:
            body = body[:-1] + r"\Z" if body.endswith("$") and not body.endswith(r"\$") else body
    try:
        return re.compile(body, flags)
    except re.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None
