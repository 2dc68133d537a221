r"""Escaping for reports: every string from a set, plugin, endpoint or stored row is data.

Control and invisible format characters are made visible with the kernel's one rule
(:func:`evalkit.printable.visible`: ``\x1b``, ``\x00``, bidi overrides …), plus what XML 1.0
cannot carry at all (lone surrogates, U+FFFE, U+FFFF); multi-line texts keep their newlines and
tabs (:func:`visible`), one-line cells do not (:func:`one_line`). Then each format's own escaping
applies: :func:`html_text` for HTML (also attributes), :func:`markdown_inline` for a Markdown
paragraph or table cell. XML is written with :mod:`xml.etree.ElementTree`, which escapes markup;
it is given :func:`visible` text.
"""

from __future__ import annotations

import html
import re

from ..printable import visible as printable

__all__ = ["html_text", "markdown_inline", "one_line", "visible"]

_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_LINE_BREAKS = re.compile("([\n\t])")
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _not_xml(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def one_line(text: object) -> str:
    r"""``text`` on one line: every control and format character (newlines and tabs too) written
    out as its escape (``\x0a``, ``\x1b``), and lone surrogates as ``\udcff``."""
    return _NOT_XML.sub(_not_xml, printable(str(text)))


def visible(text: object) -> str:
    """Like :func:`one_line`, but newlines and tabs are kept (answers, failure bodies)."""
    return "".join(part if part in ("\n", "\t") else one_line(part) for part in _LINE_BREAKS.split(str(text)))


def html_text(text: object) -> str:
    """Text safe inside an HTML element or a quoted attribute value."""
    return html.escape(visible(text), quote=True)


def markdown_inline(text: object) -> str:
    r"""Text safe in a Markdown paragraph, list item or table cell (CommonMark and GFM).

    Every ASCII punctuation character is backslash-escaped (so ``|`` cannot end a table cell,
    ``<script>`` is not raw HTML and ``*``/``[`` start no emphasis or link); newlines are shown as
    ``\x0a`` so a cell stays on its row.
    """
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line(text))
