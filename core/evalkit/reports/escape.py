r"""Escaping for reports: every string from a set, plugin, endpoint or stored row is data.

Each built-in reporter is its own output boundary and escapes in one place:

- HTML and Markdown are written from templates — :meth:`Html.fill`, :meth:`Markdown.fill` — that
  escape every value put into them (:func:`html_text`, :func:`markdown_inline`); what a template
  returns is already escaped (an :class:`Escaped` of its format) and goes into the next template
  as it is, as jinja2's autoescape and markupsafe treat ``Markup``;
- JUnit XML is built with :mod:`xml.etree.ElementTree`, which escapes markup; its tree is made
  safe once before it is written (:func:`visible` for text, :func:`one_line` for attributes);
- JSON is written by the encoder (:func:`json_document`).

Every one of them scrubs the secrets of the components built in this process
(:func:`evalkit.privacy.remove_secrets`), makes control and invisible format characters visible
with the kernel's one rule (:func:`evalkit.printable.visible`: ``\x1b``, ``\x00``, bidi
overrides …) plus what XML 1.0 cannot carry at all (lone surrogates, U+FFFE, U+FFFF); multi-line
texts keep their newlines and tabs (:func:`visible`), one-line cells do not (:func:`one_line`).
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from ..printable import visible as printable

__all__ = ["Escaped", "Html", "Markdown", "html_text", "json_document", "markdown_inline", "one_line", "visible"]

_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_LINE_BREAKS = re.compile("([\n\t])")
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _not_xml(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _scrubbed(text: object) -> str:
    """``text`` with the secrets of the components built in this process replaced by ``***``."""
    from ..privacy import remove_secrets, secrets_to_hide

    return remove_secrets(str(text), secrets_to_hide())


def _shown(text: str) -> str:
    return _NOT_XML.sub(_not_xml, printable(text))


def one_line(text: object) -> str:
    r"""``text`` on one line: secrets scrubbed, every control and format character (newlines and
    tabs too) written out as its escape (``\x0a``, ``\x1b``), and lone surrogates as ``\udcff``."""
    return _shown(_scrubbed(text))


def visible(text: object) -> str:
    """Like :func:`one_line`, but newlines and tabs are kept (answers, failure bodies)."""
    return "".join(part if part in ("\n", "\t") else _shown(part) for part in _LINE_BREAKS.split(_scrubbed(text)))


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


class Escaped(str):
    """Text already escaped for one document format: a template of that format takes it as it is,
    where it escapes any other value (:meth:`fill`). Each format is a subclass naming its escape."""

    #: The format's escape for one value.
    escape: ClassVar[Callable[[object], str]]

    @classmethod
    def fill(cls, template: str, /, *args: Any, **values: Any) -> Escaped:
        """``template`` — the reporter's own text in this format, ``str.format`` fields — with each
        value escaped (:attr:`escape`), except one already of this format."""
        return cls(_Filling(cls).vformat(template, args, values))

    @classmethod
    def of(cls, value: object) -> Escaped:
        """``value`` escaped (as it is when already of this format)."""
        return value if isinstance(value, cls) else cls(cls.escape(value))

    def __add__(self, other: object) -> Escaped:  # type: ignore[override]
        """This text followed by ``other``, escaped unless already of this format."""
        return type(self)(str.__add__(self, type(self).of(other)))

    def join(self, parts: Iterable[object]) -> Escaped:  # type: ignore[override]
        """``parts`` joined by this text, each escaped unless already of this format."""
        return type(self)(str.join(self, (type(self).of(part) for part in parts)))


class _Filling(string.Formatter):
    """Fills a template of one format: every value is escaped, unless it already is."""

    def __init__(self, kind: type[Escaped]) -> None:
        self.kind = kind

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, self.kind):
            return value
        return self.kind.escape(format(value, format_spec))


class Html(Escaped):
    """Text safe in an HTML document (:func:`html_text` for every value put in)."""

    escape = staticmethod(html_text)


class Markdown(Escaped):
    """Text safe in a Markdown paragraph or table cell (:func:`markdown_inline` for every value put in)."""

    escape = staticmethod(markdown_inline)


def json_document(document: Any) -> str:
    """``document`` as indented JSON, non-ASCII text as it is, secrets scrubbed (in the forms JSON
    escapes them in too), and the characters a terminal acts on that JSON leaves raw written as
    ``\\uXXXX`` escapes (:func:`evalkit.printable.json_visible`): it parses to the same data."""
    from ..jsontext import document_text
    from ..printable import json_visible

    return json_visible(_scrubbed(document_text(document, indent=2)))
