"""Making hostile text printable: a string from a plugin, a set, an endpoint or a stored row is
data, so its control and format characters are shown as escapes rather than acted on."""

from __future__ import annotations

import unicodedata

__all__ = ["visible"]


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control character (``\\n``, ``\\x1b``, …) and invisible format character
    (bidi overrides, zero-width joiners) replaced by its backslash escape; the rest unchanged."""
    return "".join(_escape(c) if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)
