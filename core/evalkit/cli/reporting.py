"""``--report`` for the commands that produce a verdict (run, retrieval, compare, report).

Imported by command handlers only. The flow: :func:`report_targets` refuses a bad ``--report``
before anything is called; after the run is stored, :func:`render_for` assembles the report from
the store and renders every target; the command prints its own output (on stderr when a report
takes standard output); :func:`deliver_reports` writes the files and names any reporter that
failed. A failing reporter never changes the exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..wording import path_named, quoted

if TYPE_CHECKING:
    from ..reports.targets import RenderedReport, ReportFailure, ReportTarget
    from .app import Arguments

# evalkit.reports (its model, assembly and escaping) is imported only when a report is asked for:
# a run without --report does not pay for it.

__all__ = ["Rendered", "deliver_reports", "render_for", "report_targets"]


def report_targets(args: Arguments) -> tuple[ReportTarget, ...]:
    """The command's ``--report`` values, parsed; refused with ``--json`` when both want stdout.
    Beside ``--json`` each target's destination is decided here, once
    (:func:`~evalkit.reports.targets.pinned`): the report goes where this check saw, so no second
    guard is needed where it renders."""
    if not getattr(args, "report", None):
        return ()
    from ..reports.targets import STDOUT, parse_targets, pinned

    targets = parse_targets(args.report)
    if getattr(args, "json", False):
        for target in targets:
            if target.path == STDOUT:
                raise UsageError("--json and --report FORMAT:- both write to standard output; give the report a path")
        targets = tuple(pinned(target) for target in targets)
        for target in targets:
            if target.path == STDOUT:
                raise UsageError(
                    f"--json and --report {target.format} both write to standard output: a report given no path "
                    "prints (markdown goes to $GITHUB_STEP_SUMMARY only when that is set); give it a path "
                    f"(--report {target.format}:PATH)"
                )
    return targets


class Rendered:
    """Reports rendered for one command, not yet written."""

    def __init__(
        self, reports: Sequence[RenderedReport] = (), failures: Sequence[ReportFailure] = (), report: Any = None
    ) -> None:
        self.reports = list(reports)
        self.failures = list(failures)
        #: The :class:`~evalkit.reports.Report` they were rendered from (``None`` when nothing was asked).
        self.report = report

    @property
    def takes_stdout(self) -> bool:
        """True when a report prints on standard output (the command's own output then goes to stderr)."""
        if not self.reports:
            return False
        from ..reports.targets import STDOUT

        return any(r.destination == STDOUT for r in self.reports)


def render_for(args: Arguments, targets: Sequence[ReportTarget], database: str, run: Any, **assemble: Any) -> Rendered:
    """Assemble the report of the stored ``run`` from ``database`` (opened for the command ``args``:
    :func:`~evalkit.cli.stored.open_for_reading`) and render every target."""
    if not targets:
        return Rendered()
    from ..reports.assemble import assemble_report
    from ..reports.targets import render_reports
    from ..storage import close_repository
    from .stored import open_for_reading

    repository = open_for_reading(database, args)
    try:
        # A report lists every case: a run (or baseline) that came without its cases is read back whole.
        if not run.cases and run.answered_count:
            run = repository.get_run(run.id) or run
        baseline = assemble.get("baseline")
        if baseline is not None and not baseline.cases and baseline.answered_count:
            assemble["baseline"] = repository.get_run(baseline.id) or baseline
        report = assemble_report(repository, run, **assemble)
    finally:
        close_repository(repository)
    reports, failures = render_reports(targets, report)
    return Rendered(reports, failures, report)


def deliver_reports(rendered: Rendered, *, keeps_exit_code: bool = True) -> int:
    """Write the rendered reports; name each one written and each reporter that failed (stderr),
    and return how many failed. ``keeps_exit_code`` is false for ``evalkit report``, whose job the
    report is: there a failed report is its exit code's business (3), and the message says only
    that the stored run is unchanged."""
    if not rendered.reports and not rendered.failures:
        return 0
    from ..reports.targets import STDOUT, deliver
    from .console import console
    from .stdout import stdout

    written, failures = deliver(rendered.reports, stdout=stdout())
    err = console(stderr=True)
    for item in written:
        if item.destination != STDOUT:
            verb = "appended to" if item.appended else "written to"
            err.print(f"Report {item.format} {verb} {path_named(item.destination)}")
    unchanged = "the run's stored result and exit code are unchanged" if keeps_exit_code else "the stored run is unchanged"
    failed = [*rendered.failures, *failures]
    for failure in failed:
        err.print(f'evalkit: error: reporter {quoted(failure.format)} failed: {failure.message} ({unchanged})')
    return len(failed)
