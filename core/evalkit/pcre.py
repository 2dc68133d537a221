"""Translate the original's PCRE-style delimited patterns (``/9(:00)?\\s*am/i``) to Python regexes.

A pattern is *delimited* only when its first character is one of ``/ # ~ ! @ % | + , ; :``, the
same character closes it (the first occurrence not escaped by a backslash, as PHP reads it) and
only known modifier letters follow. Paired brackets (``()``, ``[]``, ``{}``, ``<>``) are never
delimiters, so ``[0-9]``, ``(a|b)c`` and ``<b>`` are what they look like. Anything else,
including a pattern whose delimiter is never closed, is a plain Python regular expression.

Honoured modifiers: ``i m s x u D A`` (and ``S``, a PCRE optimisation hint with no effect on
what matches). Without ``u`` the character classes are ASCII-only, as in PCRE. ``D`` makes every
``$`` of the pattern match only at the very end of the subject (unless ``m`` is given, as in
PCRE). ``U X J n e`` are PCRE modifiers Python's ``re`` cannot honour: refused by name.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["DELIMITERS", "SUPPORTED_MODIFIERS", "compile_pattern", "PatternError", "split_delimited"]

#: The characters that open (and close) a delimited pattern.
DELIMITERS = frozenset("/#~!@%|+,;:")
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
#: Modifiers a delimited pattern may carry and that evalkit honours.
SUPPORTED_MODIFIERS = frozenset("imsxuDAS")
#: PCRE modifiers that Python's ``re`` cannot honour; a pattern carrying one is refused.
_UNSUPPORTED_MODIFIERS = frozenset("UXJne")
_KNOWN_MODIFIERS = SUPPORTED_MODIFIERS | _UNSUPPORTED_MODIFIERS
#: Global inline flags must stay at the very start of a Python pattern.
_LEADING_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))+")


class PatternError(ValueError):
    """The pattern cannot be compiled; the message says why."""


def split_delimited(pattern: str) -> tuple[str, str] | None:
    """``(body, modifiers)`` when ``pattern`` is delimited, else ``None`` (a plain regex)."""
    if not pattern or pattern[0] not in DELIMITERS:
        return None
    delimiter = pattern[0]
    index = 1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == delimiter:
            modifiers = pattern[index + 1 :]
            if all(letter in _KNOWN_MODIFIERS for letter in modifiers):
                return pattern[1:index], modifiers
            return None
        index += 1
    return None


def _dollar_end_only(body: str, verbose: bool) -> str:
    """``body`` with every ``$`` anchor (not escaped, not in a character class, not in a verbose
    comment) replaced by ``\\Z``, Python's end-of-subject anchor."""
    out: list[str] = []
    index = 0
    in_class = False
    while index < len(body):
        char = body[index]
        if char == "\\":
            out.append(body[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            # A "]" right after "[" or "[^" is a literal member, not the end of the class.
            if body.startswith("^", index):
                out.append("^")
                index += 1
            if body.startswith("]", index):
                out.append("]")
                index += 1
            continue
        elif char == "#" and verbose:
            end = body.find("\n", index)
            end = len(body) if end < 0 else end
            out.append(body[index:end])
            index = end
            continue
        elif char == "$":
            char = r"\Z"
        out.append(char)
        index += 1
    return "".join(out)


def _anchored(body: str, verbose: bool) -> str:
    """``body`` anchored at the start of the subject, its leading global flags kept first."""
    flags = _LEADING_FLAGS.match(body)
    head = flags.group(0) if flags else ""
    rest = body[len(head) :]
    # In verbose mode a trailing comment would swallow the closing parenthesis without the newline.
    return rf"{head}\A(?:{rest}{chr(10) if verbose else ''})"


def _translate(body: str, modifiers: str) -> tuple[str, int]:
    unsupported = sorted(set(modifiers) & _UNSUPPORTED_MODIFIERS)
    if unsupported:
        raise PatternError(f"unsupported PCRE modifier(s) {''.join(unsupported)!r}")
    flags = 0 if "u" in modifiers else re.ASCII
    for letter in modifiers:
        flags |= _FLAGS.get(letter, 0)
    verbose = "x" in modifiers
    if "D" in modifiers and "m" not in modifiers:
        body = _dollar_end_only(body, verbose)
    if "A" in modifiers:
        body = _anchored(body, verbose)
    return body, flags


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` (delimited or plain) or raise :class:`PatternError` naming it."""
    parts = split_delimited(pattern)
    try:
        body, flags = (pattern, 0) if parts is None else _translate(*parts)
        return re.compile(body, flags)
    except PatternError as exc:
        raise PatternError(f"{exc} in {pattern!r}") from None
    except re.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None
