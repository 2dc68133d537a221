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
