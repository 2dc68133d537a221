"""The reporter plugin contract (entry-point group ``evalkit.reporters``).

An entry point names a class or zero-argument factory; the entry-point name is the format
(``junit``, ``markdown``, ``html``, ``json``, or a third party's). evalkit creates it with no
arguments and calls :meth:`Reporter.render` with a :class:`~evalkit.reports.model.Report`; the
returned text is written where ``--report FORMAT:PATH`` says. A reporter never writes files
itself and never changes a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from .model import Report

__all__ = ["DefaultDestination", "Reporter"]


@runtime_checkable
class Reporter(Protocol):
    """Turns one report into the text of a file (XML, Markdown, HTML, JSON …)."""

    def render(self, report: Report) -> str:
        """The whole document for ``report``; every string in it escaped for the format."""
        ...


@runtime_checkable
class DefaultDestination(Protocol):
    """Optional: where a report goes when ``--report FORMAT`` names no path.

    Returning a path makes evalkit *append* the report to it (a CI job summary collects several);
    returning ``None`` sends it to standard output. The built-in ``markdown`` reporter appends to
    ``$GITHUB_STEP_SUMMARY`` when it is set.
    """

    def default_destination(self, environ: Mapping[str, str]) -> str | None:
        """A file to append to, or ``None`` for standard output."""
        ...
