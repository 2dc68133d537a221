"""``evalkit regrade RUN_ID``: grade a stored run's answers again, without asking the model."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .app import Arguments, EvalkitCommand, arguments
from .names import PluginName, ProviderName, RunId
from .params import global_options, tolerance_options


@click.command(
    "regrade",
    cls=EvalkitCommand,
    help=(
        "Grade the stored answers of run RUN_ID again — with the set's current checks, or another grader — and "
        "store a new run linked to it (same answers, same serving identity, new yardstick), compared like any "
        "run. The model is not asked. Only answers to unchanged prompts are reused, and only a run stored with "
        "--privacy full can be re-graded. A re-graded run is never accepted as a baseline automatically."
    ),
)
@click.argument(
    "run_id", metavar="RUN_ID", type=RunId(), help="the stored run whose answers are graded again (see `evalkit history SET`)"
)
@click.option(
    "--grader", metavar="NAME", type=PluginName("evalkit.graders"),
    help="grader (default: the run's own; see `evalkit list`)",
)
@click.option(
    "--judge", metavar="NAME", type=ProviderName(),
    help='the configured provider instance a judge grader asks (default: the config\'s judge = "NAME")',
)
@click.option(
    "--show-all", is_flag=True,
    help="list every case in the table (default: failed, errored and unstable cases; passing ones are counted)",
)
@tolerance_options("max-pass-rate-drop", "max-mean-score-drop", ("pass rate", "mean score"))
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit regrade``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """Re-grade, render, and return the exit code (that of ``evalkit run``)."""
    from ..config import load_config
    from ..run.regrade import regrade_run
    from .common import database_url
    from .console import console
    from .json_output import print_json
    from .render import ProgressDisplay, SetCheckDisplay, outcome_document, render_outcome
    from .resuming import resumed_options, store_words
    from .stored import require_existing_store

    config = load_config(args.config)
    url = database_url(args, config)
    require_existing_store(url, config, args.database)  # as `show` refuses it: the store is not made to say the run is not in it
    from .gate_options import gate_of

    if args.judge:
        _refuse_a_judge_nobody_asks(args, url)
    tolerances, gate = gate_of(args, config)
    checking = SetCheckDisplay(enabled=not args.json)  # the set's check, before anything is graded
    progress = ProgressDisplay(enabled=not args.json)  # then each case graded, as `evalkit run` shows them
    try:
        outcome = regrade_run(
            args.run_id,
            grader=args.grader,
            grader_options={"judge": args.judge} if args.judge else None,
            config=config,
            database=url,
            tolerances=tolerances,
            gate=gate,
            on_check=checking,
            on_start=progress.start,
            on_case=progress.advance,
            # the live line's words in the stored line's order (placement.regrade_again): the same line
            command_args=(*(word for option in resumed_options(args) for word in option), *store_words(args)),
            resumed_options=resumed_options(args),
        )
    finally:
        checking.stop()
        progress.stop()
    if args.json:
        print_json(outcome_document(outcome))
    else:
        render_outcome(console(), outcome, show_all=args.show_all, fail_on_new_failures=args.fail_on_new_failures)
    return outcome.exit_code(args.fail_on_regression, args.fail_on_new_failures)


def _refuse_a_judge_nobody_asks(args: Arguments, url: str) -> None:
    """``--judge`` for a grader that asks no judge (``--grader``, else the run's own) is refused as
    ``evalkit run`` refuses it (:func:`~evalkit.cli.judge_flags.refuse_judge_flags`), before anything is graded.
    A run that is not stored, or whose grader is not installed, is left to the re-grade to report."""
    from ..errors import UnknownPluginError
    from ..run.placement import grader_plugin_of
    from ..storage import close_repository
    from .judge_flags import refuse_judge_flags
    from .stored import open_for_reading

    grader = args.grader
    if grader is None:
        repository = open_for_reading(url, args)
        try:
            source = repository.get_run(args.run_id, with_cases=False)
        finally:
            close_repository(repository)
        if source is None:
            return
        grader = grader_plugin_of(source)
    try:
        refuse_judge_flags(grader, "--judge")
    except UnknownPluginError:
        return
