"""Lossless storage of any Python string in a text column, identical on SQLite and PostgreSQL.

PostgreSQL refuses NUL (``\\x00``) in ``text``; neither engine can store a lone surrogate (what
``surrogateescape`` decoding makes of bytes that are not UTF-8, or what a JSON ``"\\ud800"``
escape decodes to). Such strings come from endpoints, retrievers and plugins, so the repository
escapes them on the way in and restores them on the way out:

============================  ========================================
in the string                 stored as
============================  ========================================
``\\x00`` (NUL)               ``\\uffff`` ``0``
a lone surrogate ``\\udXYZ``  ``\\uffff`` ``u`` and four hex digits
``\\uffff`` itself            ``\\uffff`` ``\\uffff``
============================  ========================================

U+FFFF is a Unicode noncharacter: no text is supposed to contain it, so every string without
NUL, surrogates or U+FFFF — nearly all of them — is stored exactly as it is and stays readable
(and comparable) in SQL. The mapping is injective, so unique indexes and equality reads are
unaffected. The same escaping is applied on both engines: a database holds the same characters
whichever engine it is.
"""

from __future__ import annotations

import re

__all__ = ["ESCAPE", "decode_text", "encode_text"]

#: The escape character (U+FFFF, a noncharacter).
ESCAPE = "\uffff"

_UNSTORABLE = re.compile("[\x00\uffff\ud800-\udfff]")
_ESCAPED = re.compile("\uffff(?:(\uffff)|(0)|u([0-9a-f]{4}))")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\x00":
        return ESCAPE + "0"
    if char == ESCAPE:
        return ESCAPE + ESCAPE
    return f"{ESCAPE}u{ord(char):04x}"


def _unescape(match: re.Match[str]) -> str:
    escape, nul, surrogate = match.groups()
    if escape:
        return ESCAPE
    if nul:
        return "\x00"
    return chr(int(surrogate, 16))


def encode_text(text: str) -> str:
    """``text`` as it is stored: unchanged unless it holds NUL, a lone surrogate or U+FFFF."""
    if _UNSTORABLE.search(text) is None:
        return text
    return _UNSTORABLE.sub(_escape, text)


def decode_text(stored: str) -> str:
    """The string :func:`encode_text` stored."""
    if ESCAPE not in stored:
        return stored
    return _ESCAPED.sub(_unescape, stored)
