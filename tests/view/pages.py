"""Reading the viewer's pages in tests: the cases a page lists, an element's text, without a browser."""

from __future__ import annotations

import html
import re

_CASE = re.compile(r'<(?:tbody|article) class="(?:case|compare-case)" id="[^"]*" data-case="([^"]*)"')
_CASE_PAGE = re.compile(r'<article class="case-page" id="[^"]*" data-case="([^"]*)"')


def listed_cases(page: str) -> list[str]:
    """The ids (as shown, unescaped) of the cases a run or comparison page lists, in order."""
    return [html.unescape(found) for found in _CASE.findall(page)]


def element_text(page: str, element_id: str) -> str:
    """The text of the element with ``id`` (tags dropped, entities unescaped, spaces collapsed)."""
    match = re.search(rf'id="{re.escape(element_id)}"[^>]*>(.*?)</', page, re.S)
    assert match is not None, f"no element #{element_id}"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).split())


def shown(text: str) -> str:
    """``text`` as a page shows it: control and format characters escaped, then HTML-escaped."""
    from evalkit.reports.escape import visible
    from markupsafe import escape

    return str(escape(visible(text)))


def seen(text: str) -> str:
    """``text`` as a reader sees it on a page: control and format characters escaped."""
    from evalkit.reports.escape import visible

    return visible(text)


def markup_problems(page: str) -> list[str]:
    """What in ``page`` could run or restyle anything: a ``<script>`` with a body or from
    elsewhere, an ``on…`` or ``style`` attribute, a tag no viewer template writes."""
    from html.parser import HTMLParser

    allowed = {
        "html", "head", "meta", "title", "link", "script", "body", "nav", "a", "span", "main", "footer", "h1", "h2", "h3",
        "h4", "p", "div", "table", "thead", "tbody", "tr", "th", "td", "ul", "ol", "li", "dl", "dt", "dd", "code", "pre",
        "del", "ins", "details", "summary", "section", "article", "header", "form", "label", "input", "select", "option",
        "button", "noscript", "svg", "line", "text", "polyline", "circle",
    }  # fmt: skip
    problems: list[str] = []

    class Reader(HTMLParser):
        in_script = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag not in allowed:
                problems.append(f"tag <{tag}>")
            for name, _ in attrs:
                if name.startswith("on") or name == "style":
                    problems.append(f"attribute {name} on <{tag}>")
            if tag == "script":
                source = dict(attrs).get("src") or ""
                if not source.startswith("/static/viewer.js?v="):
                    problems.append(f"script from {source!r}")
                self.in_script = True

        def handle_endtag(self, tag: str) -> None:
            self.in_script = False

        def handle_data(self, data: str) -> None:
            if self.in_script and data.strip():
                problems.append("an inline script")

    Reader().feed(page)
    return problems
