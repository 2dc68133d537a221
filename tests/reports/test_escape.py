"""Escaping for reports: control characters made visible, then each format's own escaping."""

from __future__ import annotations

import html as html_module
import xml.etree.ElementTree as ET

import pytest
from evalkit.reports.escape import html_text, markdown_inline, one_line, visible
from markdown_it import MarkdownIt


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("nul\x00bell\x07cr\r", "nul\\x00bell\\x07cr\\x0d"),
        ("del\x7f c1\x9b", "del\\x7f c1\\x9b"),
        ("lone \udcff surrogate", "lone \\udcff surrogate"),
        ("non-char \ufffe", "non-char \\ufffe"),
        ("ünïcødé ✓ 漢字", "ünïcødé ✓ 漢字"),
    ],
)
def test_visible_writes_out_what_a_terminal_or_xml_cannot_show(raw, shown) -> None:
    assert visible(raw) == shown
    ET.fromstring(f"<a>{visible(raw).replace('&', '&amp;').replace('<', '&lt;')}</a>")  # XML 1.0 accepts it


def test_one_line_keeps_a_cell_on_its_row() -> None:
    assert one_line("a\nb\tc\x1b\u202e") == "a\\x0ab\\x09c\\x1b\\u202e"


def test_html_text_escapes_markup_and_quotes() -> None:
    assert html_text('<script>alert("x")</script> & \'q\'') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;q&#x27;"


@pytest.mark.parametrize(
    "raw",
    ["<script>alert(1)</script>", "a|b|c", "*bold* _em_ `code`", "[link](http://x.invalid)", "# heading", "&amp; &lt;",
     "back\\slash", "~~strike~~", "line\nbreak", "http://bare.invalid www.bare.invalid", "<!-- comment -->"],
)
def test_markdown_inline_renders_as_the_same_text_in_a_table_cell(raw) -> None:
    document = f"| h |\n| --- |\n| {markdown_inline(raw)} |\n"
    html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(document)
    cell = html[html.index("<td>") + 4 : html.index("</td>")]
    assert "<" not in cell.replace("&lt;", "")  # no element, comment or link was made
    assert html_module.unescape(cell) == one_line(raw)
