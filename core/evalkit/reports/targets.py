"""``--report FORMAT[:PATH]``: parsing the option, and writing every requested report.

Parsing happens before a run starts (an unknown format or a malformed value is a usage error:
exit 2, nothing called, nothing stored). Writing happens after the run is stored and its verdict
decided: a reporter that fails to load, raises or returns something other than text is reported
by name in a :class:`ReportFailure` and the other reports are still written — the run's stored
result and its exit code do not change.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import attrs

from .. import registry
from ..components import offers
from ..errors import PLUGIN_FAILURES, UsageError, carried
from ..shapes import exception_text
from ..textfiles import append_text_file, output_refusal, write_text_file
from ..wording import path_named, quoted
from .contract import DefaultDestination, Reporter
from .model import Report

__all__ = [
    "GROUP",
    "STDOUT",
    "RenderedReport",
    "ReportFailure",
    "ReportTarget",
    "ReportWritten",
    "deliver",
    "parse_targets",
    "pinned",
    "render_reports",
    "write_reports",
]

GROUP = "evalkit.reporters"
#: The path that means standard output.
STDOUT = "-"
#: Paths that name standard output too: written as ``-`` is, so the verdict lines go to stderr.
STDOUT_PATHS = frozenset({STDOUT, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


@attrs.frozen
class ReportTarget:
    """One ``--report``: a reporter name and where its output goes (``None``: the reporter's
    default destination, else standard output; ``-``: standard output). A target
    :func:`pinned` has its destination decided once: ``appends`` (the path is the reporter's
    default, appended to), or ``unresolved`` (why it could not be decided: its failure when it
    renders)."""

    format: str
    path: str | None = None
    appends: bool = False
    unresolved: str | None = None

    @classmethod
    def parse(cls, text: str, option: str = "--report") -> ReportTarget:
        """``junit:out/results.xml``, ``markdown``, ``html:-`` → a target whose reporter exists, and
        whose path a write could make (:func:`~evalkit.textfiles.output_refusal`: refused here,
        before anything runs, naming ``option``, the one that gave the path)."""
        name, colon, path = text.partition(":")
        name = name.strip()
        if not name:
            raise UsageError(f"--report {quoted(text)}: name a format before the colon, e.g. junit:results.xml")
        if colon and not path:
            raise UsageError(
                f'--report {quoted(text)}: the path after the colon is empty (use "-" for standard output)'
            )
        registry.find(GROUP, name)
        if path and path not in STDOUT_PATHS and (refusal := output_refusal(path)) is not None:
            raise UsageError(f"{option}: the {name} report cannot be written to {path_named(path)}: it {refusal}")
        return cls(name, STDOUT if path in STDOUT_PATHS else path or None)


def parse_targets(values: Sequence[str] | None) -> tuple[ReportTarget, ...]:
    """Every ``--report`` value parsed; at most one of them may write to standard output."""
    targets = tuple(ReportTarget.parse(value) for value in values or ())
    explicit_stdout = [t for t in targets if t.path == STDOUT]
    if len(explicit_stdout) > 1:
        raise UsageError("only one --report can write to standard output (-); give the others a path")
    return targets


def _default_destination(target: ReportTarget, environ: Mapping[str, str]) -> tuple[str, bool]:
    """Where ``target``'s reporter puts a report given no path, and whether it appends there: its
    ``default_destination`` (``markdown``: ``$GITHUB_STEP_SUMMARY``, when set), else standard output."""
    record = registry.find(GROUP, target.format)
    reporter = registry.instantiate(record, registry.load(record))
    default = reporter.default_destination(environ) if offers(reporter, DefaultDestination) else None
    if default is not None and not isinstance(default, str):  # an int would be a file descriptor to open()
        raise TypeError(f"default_destination() returned {type(default).__name__}, not a path")
    return (default, True) if default else (STDOUT, False)


def pinned(target: ReportTarget, environ: Mapping[str, str] | None = None) -> ReportTarget:
    """``target`` with its destination decided now, once, where a command must know before it runs
    whether the report takes standard output (beside ``--json``): the one rule, so rendering goes
    where the check saw. A reporter that fails to say is pinned ``unresolved``: its failure is said
    when it renders, and it writes nowhere. Asked twice (checked, then resolved again as it
    rendered) a reporter could answer otherwise, and a guard at each place said it twice."""
    if target.path is not None or target.unresolved is not None:
        return target
    try:
        destination, appends = carried(_default_destination, target, os.environ if environ is None else environ)
    except PLUGIN_FAILURES as exc:
        return attrs.evolve(target, unresolved=exception_text(exc))
    return attrs.evolve(target, path=destination, appends=appends)


@attrs.frozen
class ReportWritten:
    """A report that was written: its format and where (``-`` for standard output)."""

    format: str
    destination: str
    appended: bool = False


@attrs.frozen
class ReportFailure:
    """A reporter that failed, named, with why."""

    format: str
    message: str


def _render(target: ReportTarget, report: Report) -> tuple[str, object]:
    """The text and the reporter object (for its default destination)."""
    record = registry.find(GROUP, target.format)
    reporter = registry.instantiate(record, registry.load(record))
    if not offers(reporter, Reporter):
        raise TypeError(f"{type(reporter).__name__} has no render(report) method")
    text = reporter.render(report)
    if not isinstance(text, str):
        raise TypeError(f"render() returned {type(text).__name__}, not text")
    return text, reporter


@attrs.frozen
class RenderedReport:
    """A report rendered and not yet written: its text and resolved destination."""

    format: str
    text: str
    destination: str
    append: bool = False


def _rendered(target: ReportTarget, report: Report, environ: Mapping[str, str]) -> tuple[str, str, bool]:
    """The text of ``target``'s report, where it goes, and whether it is appended there (a
    :func:`pinned` target's destination as it was decided)."""
    text, _ = _render(target, report)
    if target.path is not None:
        return text, target.path, target.appends
    return (text, *_default_destination(target, environ))


def render_reports(
    targets: Sequence[ReportTarget], report: Report, *, environ: Mapping[str, str] | None = None
) -> tuple[list[RenderedReport], list[ReportFailure]]:
    """Render every target and resolve where it goes (a :func:`pinned` one's destination as it
    was decided); a reporter's fault becomes a failure. At most one report goes to standard
    output; a second one is a failure naming it."""
    environ = os.environ if environ is None else environ
    rendered: list[RenderedReport] = []
    failures: list[ReportFailure] = []
    for target in targets:
        if target.unresolved is not None:  # its destination could not be decided: written nowhere
            failures.append(ReportFailure(target.format, target.unresolved))
            continue
        try:
            text, destination, append = carried(_rendered, target, report, environ)
        except PLUGIN_FAILURES as exc:  # a reporter's fault never changes the run
            failures.append(ReportFailure(target.format, exception_text(exc)))
            continue
        if destination == STDOUT and any(r.destination == STDOUT for r in rendered):
            failures.append(
                ReportFailure(target.format, "another report already writes to standard output; give this one a path")
            )
            continue
        rendered.append(RenderedReport(target.format, text, destination, append))
    return rendered, failures


def deliver(
    rendered: Sequence[RenderedReport], *, stdout: TextIO | None = None
) -> tuple[list[ReportWritten], list[ReportFailure]]:
    """Write rendered reports: files whole (or appended), standard output as is."""
    written: list[ReportWritten] = []
    failures: list[ReportFailure] = []
    for item in rendered:
        text = item.text if item.text.endswith("\n") else item.text + "\n"
        try:
            if item.destination == STDOUT:
                stream = stdout or sys.stdout
                stream.write(text)
                stream.flush()
            elif item.append:
                append_text_file(Path(item.destination), (text,))
            else:
                write_text_file(Path(item.destination), (text,))
        except OSError as exc:
            failures.append(
                ReportFailure(item.format, f"cannot write {path_named(item.destination)}: {exc.strerror or exc}")
            )
            continue
        written.append(ReportWritten(item.format, item.destination, item.append))
    return written, failures


def write_reports(
    targets: Sequence[ReportTarget],
    report: Report,
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
) -> tuple[list[ReportWritten], list[ReportFailure]]:
    """Render and write every target (a library call's one step); never raises for a reporter's fault."""
    rendered, failures = render_reports(targets, report, environ=environ)
    written, more = deliver(rendered, stdout=stdout)
    return written, failures + more
