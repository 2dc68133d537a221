"""The trend chart of the HTML report and of `evalkit view`'s set page: inline SVG drawn here, on
the server side (no library, no script). In the kernel, beside the report model it draws, so that
the viewer and the built-in HTML reporter share it without the kernel importing a plugin.

One line per headline figure (pass rate and mean score; for retrieval hit@1, hit@3, MRR@k and
nDCG@k) over the scope's history, oldest to newest, on a fixed 0..1 scale. Accepted baselines
are ringed, the run the report is about is drawn larger, and every point has a ``<title>``
tooltip. Every string that reaches the SVG is escaped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..wording import counted
from .escape import html_text
from .model import Figure, HistoryPoint

__all__ = ["SERIES_CLASSES", "trend_svg"]

#: CSS classes of the series, in figure order (the stylesheet colours them).
SERIES_CLASSES = ("s0", "s1", "s2", "s3")
_WIDTH, _HEIGHT = 720, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 16, 14, 34


def _date(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp)) if timestamp else "—"


def _x(index: int, count: int) -> float:
    span = _WIDTH - _LEFT - _RIGHT
    return _LEFT + (span / 2 if count == 1 else span * index / (count - 1))


def _y(value: float) -> float:
    clamped = min(1.0, max(0.0, value))
    return _TOP + (_HEIGHT - _TOP - _BOTTOM) * (1.0 - clamped)


def trend_svg(history: Sequence[HistoryPoint], figures: Sequence[Figure]) -> str:
    """The chart as an ``<svg>`` element (empty string when there is no history)."""
    if not history:
        return ""
    count = len(history)
    parts = [
        f'<svg class="trend" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="Trend over {counted(count, "run")}, oldest to newest" xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="axis" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for index, point in enumerate(history):
        if point.accepted:
            x = _x(index, count)
            parts.append(
                f'<line class="accepted-line" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_HEIGHT - _BOTTOM}">'
                f"<title>accepted baseline: run {html_text(point.run_id)}</title></line>"
            )
    parts.append(f'<text class="axis" x="{_LEFT}" y="{_HEIGHT - 10}">{html_text(_date(history[0].started_at))}</text>')
    if count > 1:
        parts.append(
            f'<text class="axis" x="{_WIDTH - _RIGHT}" y="{_HEIGHT - 10}" text-anchor="end">'
            f"{html_text(_date(history[-1].started_at))}</text>"
        )
    for series, figure in enumerate(figures):
        css = SERIES_CLASSES[series % len(SERIES_CLASSES)]
        points = [
            (index, point, float(value))
            for index, point in enumerate(history)
            if (value := point.figures.get(figure.key)) is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{_x(i, count):.1f},{_y(v):.1f}" for i, _, v in points)
            parts.append(f'<polyline class="series {css}" points="{path}"/>')
        for index, point, value in points:
            x, y = _x(index, count), _y(value)
            marks = ["point", css]
            if point.accepted:
                marks.append("accepted")
            if point.current:
                marks.append("current")
            tip = (
                f"run {point.run_id} · {_date(point.started_at)} UTC · {figure.label} {figure.show(value)}"
                + (" · accepted baseline" if point.accepted else "")
                + (" · this run" if point.current else "")
            )
            radius = 6 if point.current else 4
            parts.append(
                f'<circle class="{" ".join(marks)}" cx="{x:.1f}" cy="{y:.1f}" r="{radius}" data-run="{html_text(point.run_id)}">'
                f"<title>{html_text(tip)}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)
