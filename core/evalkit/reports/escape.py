"""Escaping for reports: every string from a set, plugin, endpoint or stored row is data.

Control characters (C0 except tab and newline, DEL, C1), lone surrogates and the two XML
non-characters are made visible as ``\\xNN`` / ``\\uNNNN`` first — they are not allowed in XML 1.0
at all, and in HTML or a terminal they would move the cursor or hide text. Then each format's own
escaping applies: :func:`html_text` for HTML (also attributes), :func:`markdown_inline` for a
Markdown paragraph or table cell. XML is written with :mod:`xml.etree.ElementTree`, which escapes
markup; it is given :func:`visible` text.
"""

from __future__ import annotations

import html
import re

__all__ = ["html_text", "markdown_inline", "one_line", "visible"]

_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` as a string with every control character, lone surrogate and XML non-character
    written out (``\\x1b``, ``\\x00``, ``\\r`` → ``\\x0d``); tabs and newlines are kept."""
    return _INVISIBLE.sub(_show, str(text))


def one_line(text: object) -> str:
    """:func:`visible`, with newlines and tabs shown as ``\\n`` / ``\\t`` so it fits one line."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")


def html_text(text: object) -> str:
    """Text safe inside an HTML element or a quoted attribute value."""
    return html.escape(visible(text), quote=True)


def markdown_inline(text: object) -> str:
    """Text safe in a Markdown paragraph, list item or table cell (CommonMark and GFM).

    Every ASCII punctuation character is backslash-escaped (so ``|`` cannot end a table cell,
    ``<script>`` is not raw HTML and ``*``/``[`` start no emphasis or link), newlines become
    visible ``\\n`` so a cell stays on its row.
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line(text))
