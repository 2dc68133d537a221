"""``evalkit report RUN_ID``: render any stored run as HTML, JUnit, Markdown or JSON, later.

With ``--wait`` it is the final job of a sharded CI run: it waits until every shard is in,
prints the verdict, writes the reports and exits with the run's own code.
"""

from __future__ import annotations

import click

from ..wording import counted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..storage.protocols import ResultRepository

from .app import Arguments, EvalkitCommand, arguments
from .names import RunId
from .params import global_options, non_empty_path, report_option, wait_options


@click.command(
    "report",
    cls=EvalkitCommand,
    help=(
        "Render the stored run RUN_ID with a reporter: its verdict as stored, its comparison with the "
        "baseline it was compared with, and its scope's history. --format/-o name one report; --report "
        "adds more. With --wait, wait until every shard of the run is in first (the final job of a sharded "
        "CI run). Exit code: 3 when the run is not complete (incomplete, interrupted, or running with no live "
        "process: killed), 1 under "
        "--fail-on-regression when its gate "
        "fails, else 3 when a report could not be rendered or written (named on stderr), else 0."
    ),
)
@click.argument("run_id", metavar="RUN_ID", type=RunId(), help="a run id (see `evalkit history SET`)")
@click.option("--format", metavar="NAME", help="reporter: html (default), junit, markdown, json or an installed one")
@click.option(
    "-o",
    "--output",
    metavar="PATH",
    help='where --format writes ("-": standard output, the default)',
    callback=non_empty_path,
)
@report_option(failing="makes the command exit 3")
@wait_options("--wait", "wait until every shard of the run is in (and its verdict recorded)")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="exit 1 when the run regressed, could not be compared, or is still pending",
)
@global_options()
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit report``."""
    return arguments(handle, params)


def wait_for(args: Arguments, repository: ResultRepository, run_id: str) -> Any:
    """Wait for ``run_id`` as ``--timeout``/``--poll`` say, telling stderr once what it waits for."""
    from ..waiting import parse_duration, wait_for_run
    from .console import console

    timeout = parse_duration(args.timeout, "--timeout")
    poll = parse_duration(args.poll, "--poll")
    err = console(stderr=True)
    told: list[bool] = []

    def on_poll(run: Any) -> None:
        if not told:
            told.append(True)
            seen = (
                "not in the store yet"
                if run is None
                else f"{run.answered_count} of {counted(run.case_count, 'case')} in"
            )
            err.print(f"Waiting up to {args.timeout} for every shard of run {run_id} ({seen})…")

    from ..config import load_config
    from .resuming import continuing_defaults

    defaults = continuing_defaults(args, load_config(getattr(args, "config", None)))
    return wait_for_run(repository, run_id, timeout_s=timeout, poll_s=poll, on_poll=on_poll, defaults=defaults)


def handle(args: Arguments) -> int:
    """Render the run; its exit code (see the description)."""
    from ..leases import liveness
    from ..reports.targets import ReportTarget
    from ..run.continuing import gone_sentence
    from ..runs import RunStatus
    from ..storage import close_repository
    from .console import console
    from .reporting import deliver_reports, render_for, report_targets
    from .resuming import continuing_defaults
    from .stored import open_store, require_run

    extra = report_targets(args)
    fmt = args.format or ("html" if not extra or args.output else None)
    primary = (ReportTarget.parse(f"{fmt}:{args.output}" if args.output else fmt, option="--output"),) if fmt else ()
    targets = primary + extra
    repository = open_store(args)
    try:
        run = wait_for(args, repository, args.run_id) if args.wait else require_run(repository, args.run_id)
        live = liveness(repository, [run]).get(run.id)
    finally:
        close_repository(repository)
    from ..config import load_config
    from ..reports.assemble import installed_questions
    from .common import database_url

    config = load_config(args.config)
    # pending for ever: nothing answers the run any more; the report files say it too
    gone = (
        (f"The run has {gone_sentence(run, live, continuing_defaults(args, config))}.",)
        if live is not None and live.gone
        else ()
    )
    rendered = render_for(
        args, targets, database_url(args, config), run,
        questions=installed_questions(run), fail_on_regression=args.fail_on_regression, config=config, notes=gone,
    )  # fmt: skip
    report = rendered.report
    out = console(stderr=rendered.takes_stdout)
    out.print(f"{report.verdict_word}: {run.set_identifier} run {run.id}")
    out.print(report.verdict_sentence)
    for note in gone:
        out.print(note)
    failed = deliver_reports(rendered, keeps_exit_code=False)
    # Not complete, and nothing will complete it: stored incomplete or interrupted, or still
    # "running" with no live process (killed, or stopped by a spending limit; the note above says
    # which, and how to continue it). Only a run a live process still answers is pending.
    if run.status is not RunStatus.COMPLETE and (run.status is not RunStatus.RUNNING or gone):
        return 3
    if args.fail_on_regression and (run.status is RunStatus.RUNNING or report.gate_failed):
        return 1
    # The report is this command's whole job (unlike `evalkit run --report`, whose verdict is):
    # a CI step that renders one must not go green without the file it uploads next.
    return 3 if failed else 0
