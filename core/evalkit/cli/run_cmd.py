"""``evalkit run SET``: answer a golden prompt set, grade it, store it, compare it with its baseline."""

from __future__ import annotations

import contextlib

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from ..storage.protocols import ResultRepository

from .app import Arguments, EvalkitCommand, arguments
from .gate_options import gate_options, repeats_option
from .names import PluginName, ProviderName, SetIdentifier
from .params import (
    MAX_REPEATS,
    Choice,
    Duration,
    PositiveInt,
    Temperature,
    baseline_option,
    global_options,
    non_empty,
    option_group,
    placement_options,
    report_option,
    tolerance_options,
)
from .spend_options import spending_option_group

#: What answer text a run stores.
PRIVACY_LEVELS = ("metadata", "redacted", "full")


#: ``--judge NAME``, ``--judge-repeats K``, ``--judge-temperature T`` and ``--allow-self-judge``, for judge graders.
judge_options = option_group(
    click.option(
        "--judge", metavar="NAME", type=ProviderName(),
        help='the configured provider instance a judge grader (decision, groundedness) or a set\'s rubric checks ask (default: the config\'s judge = "NAME")',
    ),
    click.option(
        "--judge-repeats", type=PositiveInt(MAX_REPEATS), metavar="K",
        help="ask the judge K times per case, store every verdict and report its self-agreement (default 1)",
    ),
    click.option(
        "--judge-temperature", type=Temperature(), metavar="T",
        help="the judge's sampling temperature (default 0); above 0, --judge-repeats measures how stable its verdicts are",
    ),
    click.option(
        "--allow-self-judge", is_flag=True,
        help="let the judge be the provider instance (or model and endpoint) under test; refused otherwise",
    ),
)  # fmt: skip


@click.command(
    "run",
    cls=EvalkitCommand,
    help=(
        "Answer every prompt of SET, grade the answers, store the run and compare it with the baseline of its "
        "scope: the most recently accepted run of the same set, serving identity and grader (see `evalkit "
        "baseline`). With no provider configured, "
        "the set's own references answer (a self-check)."
    ),
)
@click.argument("set", metavar="SET", type=SetIdentifier("prompt"), help="golden prompt set identifier (see `evalkit list sets`)")
@click.option(
    "--provider", "providers", metavar="NAME", type=ProviderName(), multiple=True,
    help="a configured provider instance, or an adapter for an ad-hoc (never compared) run; given several times, "
    "the set runs once per provider (each its own run and verdict) and a side-by-side summary follows",
)
@click.option("--model", metavar="ALIAS", help="model alias to send instead of the instance's", callback=non_empty("a model alias"))
@click.option(
    "--grader", default="deterministic", metavar="NAME", type=PluginName("evalkit.graders"),
    help="grader (default: deterministic; see `evalkit list`)",
)
@click.option("--concurrency", type=PositiveInt(), metavar="N", help="prompts in flight (default: the instance's concurrency, else $EVALKIT_CONCURRENCY, else what the generator asks for, else 8)")
@click.option(
    "--wait-ready", type=Duration(), metavar="DURATION",
    help="keep asking the generator's endpoint for up to DURATION (90s, 2m) until it answers its readiness probe: "
    "a local model server that was just started (default: ask once)",
)
@click.option(
    "--show-all", is_flag=True,
    help="list every case in the table (default: failed, errored and unstable cases; passing ones are counted)",
)
@click.option(
    "--show-answers/--no-show-answers", default=None,
    help="print each failing case's answer, a short excerpt with secrets hidden (default: on a terminal, "
    "off in CI — where CI is set — and when the output is piped); --privacy decides what is stored",
)
@click.option(
    "--privacy", type=Choice(PRIVACY_LEVELS), metavar="{metadata,redacted,full}",
    help="what answer text is stored (default: config, else metadata)",
)
@click.option("--label", metavar="TEXT", help="a free label stored with the run (e.g. a prompt version), at most 1,000 characters")
@tolerance_options("max-pass-rate-drop", "max-mean-score-drop", ("pass rate", "mean score"))
@gate_options()
@repeats_option
@baseline_option
@judge_options
@placement_options(
    resume="answer only the missing cases of an unfinished run, each as many times as the run was (another --repeats is "
    "refused), then complete it (default: the newest unfinished run of this set, provider instance, alias and grader)",
    scope="set, provider, model and grader",
)
@report_option
@spending_option_group
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit run``: ``args.providers`` as given, ``args.provider`` the one provider of a
    single run (``None`` with none, or with several)."""
    providers = params["providers"]
    params["provider"] = providers[0] if len(providers) == 1 else None
    return arguments(handle, params, collects_garbage_from_run_start=True)


class LiveFailures(dict):  # type: ignore[type-arg]  (typing is not imported at run time here)
    """The failed cases as graded in this process, by case id: the table and the reports show their
    check details whatever the privacy level kept in the store.

    Bounded: past :attr:`LIMIT` failed cases (a run whose endpoint went down errors every case) the
    rest are shown as the store keeps them, so such a run does not hold them all in memory.
    """

    LIMIT = 1000

    def keep(self, case: Any) -> None:
        """Keep ``case`` when it failed and there is room."""
        if not case.passed and len(self) < self.LIMIT:
            self[case.case_id] = case


def handle(args: Arguments) -> int:
    """Validate everything, run, render, and return the exit code."""
    from .. import registry
    from ..catalog import prompt_set_catalog
    from ..config import load_config
    from .common import database_url
    from .reporting import report_targets

    config = load_config(args.config)
    catalog = prompt_set_catalog(config=config)
    sourced = catalog.get(args.set)  # given to the run as the catalog's entry: a set the CLI finds, resumed by the CLI
    golden_set = sourced.set
    registry.find("evalkit.graders", args.grader)
    from .gate_options import gate_of

    gating = gate_of(args, config)
    targets = report_targets(args)
    baseline_file = read_baseline_option(args)
    database = database_url(args, config)
    if len(args.providers) > 1:
        from ..components import check_provider_known
        from .provider_comparison import ProviderResult, refuse_single_run_options, run_each_provider

        refuse_single_run_options(args)
        for provider in args.providers:  # each one known before the first runs and is stored
            check_provider_known(provider, config)

        def result_of(provider: str, outcome: Any) -> ProviderResult:
            with stored_cases(args, database, outcome.run, notable_only=False) as cases:
                return ProviderResult(provider, outcome, outcome.run.cases if cases is None else cases)

        return run_each_provider(args, lambda one, collect: run_one(one, sourced, config, database, gating, targets, collect), result_of)
    if args.wait:
        return _verdict_job(args, golden_set, database, gating, targets, baseline_file)
    return run_one(args, sourced, config, database, gating, targets, baseline_file=baseline_file)[0]


def run_one(
    args: Arguments, sourced: Any, config: Any, database: str, gating: Any, targets: Any,
    collect: list[Any] | None = None, baseline_file: Any = None,
) -> tuple[int, Any]:
    """Run the set of catalog entry ``sourced`` for ``args.provider``, print its outcome (or, with
    ``collect``, keep its ``--json`` document there instead of printing it) and deliver its
    reports; the exit code and the outcome. ``gating``: the tolerances and the gate's settings; ``baseline_file``:
    the baseline ``--baseline-file`` names. Every other keyword of the library call is read from
    ``args`` as its declaration says (:func:`~evalkit.cli.run_keywords.library_keywords`): ``--repeats``
    as given (``None``: a continued run's own, else ``[run] repeats``, else 1), so a line that
    continues a run need not say it, whatever ``[run] repeats`` says when it is pasted."""
    from ..errors import RunInternalError, RunInterrupted, RunStoreFailed
    from ..run.answering.prompts import PromptRules
    from ..run.decide import stored_verdict
    from ..run.library import evaluate_set
    from ..run.settings import PromptRunSettings
    from ..storage import is_in_memory
    from . import ending
    from .case_spool import CaseJsonSpool
    from .common import run_started
    from .json_output import print_json_streamed
    from .render import ProgressDisplay, SetCheckDisplay, outcome_document
    from .reporting import deliver_reports, render_for
    from .resuming import resume_command, with_resume_command
    from .run_keywords import Reading, library_keywords

    reading = Reading(
        "run", args, config=config, database=database, gating=gating, baseline_file=baseline_file, scope=_pipeline_scope(args)
    )
    reading.wait_ready  # noqa: B018  (read first: it says on stderr that the run may wait, before the displays start)
    checking = SetCheckDisplay(enabled=not args.json)  # the set's check, before anything is called
    progress = ProgressDisplay(enabled=not args.json)
    failed = LiveFailures()
    keep_cases = is_in_memory(database)
    # A large run's --json cases are written out as they are committed, not read back at its end.
    with CaseJsonSpool(wanted=args.json and not keep_cases) as spool:

        def started(run: Any, total: int) -> None:
            ending.run_began(run.id, resume_command(("run", args.set), args, run.id))
            spool.start(run, total)
            progress.start(run, total)

        def case_done(case: Any) -> None:
            ending.case_committed()
            progress.advance(case)
            failed.keep(case)

        try:
            keywords = library_keywords(
                PromptRunSettings, reading, on_start=run_started(started), on_case=case_done,
                on_stored=spool.add if spool.wanted else None, on_check=checking,
            )  # fmt: skip
            outcome = evaluate_set(sourced, **keywords)
        except (RunInterrupted, RunStoreFailed, RunInternalError) as exc:  # the line that resumes it, as this command was given
            raise with_resume_command(exc, resume_command(("run", args.set), args, exc.run_id)) from exc.__cause__  # a bug's traceback kept
        finally:
            checking.stop()
            progress.stop()
        verdict = outcome.verdict
        rendered = render_for(
            args, targets, database, outcome.run,
            verdict=None if outcome.run.status.value == "running" else stored_verdict(verdict, PromptRules()),
            comparison=verdict.comparison, baseline=verdict.baseline,
            fail_on_regression=args.fail_on_regression, notes=outcome.notes, fail_on_inconclusive=args.fail_on_inconclusive,
        )  # fmt: skip
        if collect is not None:
            spool.close()
            collect.append(_outcome_with_cases(args, outcome, database))
        elif args.json and spool.holds(outcome.run):
            document = outcome_document(outcome, with_cases=False, flaky=flaky_in_history(args, database, outcome))
            print_json_streamed(document, "cases", spool.texts(), encoded=True, batch=1)
        else:
            spool.close()
            _print_outcome(args, outcome, sourced.set, database, failed, rendered.takes_stdout)
    deliver_reports(rendered)
    return outcome.exit_code(args.fail_on_regression, args.fail_on_new_failures, args.fail_on_inconclusive), outcome


def _outcome_with_cases(args: Arguments, outcome: Any, database: str) -> dict[str, Any]:
    """The run's ``--json`` document with every case, read back from the store when the run does
    not carry them."""
    from .render import case_document, outcome_document

    document = outcome_document(outcome, with_cases=False, flaky=flaky_in_history(args, database, outcome))
    with stored_cases(args, database, outcome.run, notable_only=False) as cases:
        document["cases"] = [case_document(case) for case in (outcome.run.cases if cases is None else cases)]
    return document


def _print_outcome(args: Arguments, outcome: Any, golden_set: Any, database: str, failed: Any, takes_stdout: bool) -> None:
    """Print the run's table, or its JSON document, with its cases read back from the store."""
    from .console import console
    from .render import outcome_document, print_cases_json, render_outcome

    flaky = flaky_in_history(args, database, outcome)
    with stored_cases(args, database, outcome.run, notable_only=not (args.json or args.show_all)) as cases:
        if args.json:
            document = outcome_document(outcome, with_cases=False, flaky=flaky)
            print_cases_json(document, outcome.run.cases if cases is None else cases, outcome.run.case_count)
        else:
            out = console(stderr=takes_stdout)
            render_outcome(
                out, outcome, golden_set, live_cases=failed, show_all=args.show_all,
                fail_on_new_failures=args.fail_on_new_failures, cases=cases, show_answers=_shows_answers(args, out.file),
                fail_on_inconclusive=args.fail_on_inconclusive, flaky=flaky,
            )  # fmt: skip


def _shows_answers(args: Arguments, stream: Any) -> bool:
    """``--show-answers`` / ``--no-show-answers`` as given; else on for a person at a terminal,
    off in CI (the ``CI`` variable every major CI sets) and in a pipe or a log file."""
    import os

    if args.show_answers is not None:
        return bool(args.show_answers)
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) and os.environ.get("CI", "").lower() in ("", "0", "false")


def flaky_in_history(args: Arguments, database: str, outcome: Any) -> dict[str, str]:
    """``{case id: why}`` for the cases the verdict names (regressed, fixed, still failing) that
    flip back and forth in the scope's history (:mod:`evalkit.flakiness`); empty when the run was
    not compared, or the store is in memory."""
    comparison = outcome.verdict.comparison
    if comparison is None:
        return {}
    from ..flakiness import flaky_marks
    from ..storage import capabilities, close_repository, is_in_memory
    from .stored import opened_for

    named = [*comparison.regressed_cases, *comparison.fixed_cases, *comparison.still_failing]
    if not named or is_in_memory(database):
        return {}
    repository = opened_for(args, database)
    try:
        return dict(flaky_marks(capabilities(repository), outcome.run, named))
    finally:
        close_repository(repository)


@contextlib.contextmanager
def stored_cases(args: Arguments, database: str, run: Any, *, notable_only: bool) -> Iterator[Iterable[Any] | None]:
    """The run's cases read back from the store a page at a time (``notable_only``: the failed,
    errored and unstable ones), while the store is open; ``None`` when the run carries its cases
    (or has none, or the store cannot stream them)."""
    if run.cases or not run.answered_count:
        yield None
        return
    from ..storage import capabilities, close_repository
    from .stored import opened_for

    repository = opened_for(args, database)
    try:
        streamed = capabilities(repository).streamed
        yield streamed.iter_cases(run.id, notable_only=notable_only) if streamed is not None else None
    finally:
        close_repository(repository)


def _pipeline_scope(args: Arguments) -> tuple[str | None, ...]:
    """What a prompt run's pipeline id is derived from: the set, provider, model and grader."""
    return (args.set, args.provider, args.model, args.grader)


def waited_run(args: Arguments, repository: ResultRepository, scope: tuple[str | None, ...], golden_set: Any) -> Any:
    """``--wait-for-shards``: the run once every shard is in (refusing what cannot be waited for, and
    the options that only say how a run is answered: :func:`evalkit.cli.resuming.answering_only_given`)."""
    from ..errors import UsageError
    from .report_cmd import wait_for
    from .run_keywords import pipeline_run_id

    if args.shard or args.resume is not None:
        raise UsageError("--wait-for-shards answers nothing itself; it cannot be combined with --shard or --resume")
    from .resuming import answering_only_given

    ignored = answering_only_given(args)
    if ignored:
        raise UsageError(
            f"--wait-for-shards answers nothing itself, so {', '.join(ignored)} would change nothing: "
            f"{'it says' if len(ignored) == 1 else 'they say'} how the shard jobs answer; give "
            f"{'it' if len(ignored) == 1 else 'them'} to the shard jobs and leave {'it' if len(ignored) == 1 else 'them'} "
            "out here"
        )
    run_id = args.run_id or pipeline_run_id(scope)
    if run_id is None:
        raise UsageError("--wait-for-shards needs the run's id: pass --run-id ID (no CI pipeline id is set to derive it from)")
    run = wait_for(args, repository, run_id)
    if run.set_identifier != golden_set.identifier:
        from ..wording import quoted

        raise UsageError(f'run {run.id} is a run of set {quoted(run.set_identifier)}, not {quoted(golden_set.identifier)}')
    return run


def read_baseline_option(args: Arguments) -> Any:
    """The :class:`~evalkit.baseline_file.BaselineFile` ``--baseline-file`` names (``None``
    without it); refused with ``--baseline`` (two baselines)."""
    if args.baseline_file is None:
        return None
    from ..baseline_file import read_baseline_file
    from ..errors import UsageError

    if args.baseline is not None:
        raise UsageError("--baseline and --baseline-file name two baselines; give one")
    return read_baseline_file(args.baseline_file)


def _verdict_job(args: Arguments, golden_set: Any, database: str, gating: Any, targets: Any, baseline_file: Any) -> int:
    """``--wait-for-shards``: wait for the run, then print its verdict, write the reports, return its exit code."""
    from ..run.answering.prompts import PromptRules
    from ..run.decide import Judging, recorded_verdict, stored_verdict
    from ..run.limit_stops import run_stopped_by
    from ..run.outcome import Outcome
    from ..runs import RunStatus
    from ..storage import capabilities, close_repository
    from .console import console
    from .json_output import print_json
    from .render import outcome_document, render_outcome
    from .reporting import deliver_reports, render_for
    from .stored import opened_for

    repository = opened_for(args, database)
    try:
        run = waited_run(args, repository, _pipeline_scope(args), golden_set)
        store = capabilities(repository)
        # The whole gate, as a single process would apply it: tolerances, the gate's method, a chosen
        # baseline, new failures.
        tolerances, gate = gating
        from_file = baseline_file.run if baseline_file is not None else None
        # An incomplete run a limit stopped says which, from the stop its shards kept as data.
        stopped_by = run_stopped_by(run) if run.status is RunStatus.INCOMPLETE else None
        judging = Judging(
            store, PromptRules(), tolerances, args.baseline, None, args.fail_on_new_failures, baseline_run=from_file, gate=gate,
            stopped_by=stopped_by,
        )
        verdict = recorded_verdict(run, judging)
        notes = (f"Every shard of run {run.id} is in.", *gate_notes(verdict, judging))
    finally:
        close_repository(repository)
    outcome = Outcome(run, verdict, notes)
    rendered = render_for(
        args, targets, database, run, verdict=stored_verdict(verdict, PromptRules()), comparison=verdict.comparison,
        baseline=verdict.baseline, fail_on_regression=args.fail_on_regression, notes=outcome.notes,
        fail_on_inconclusive=args.fail_on_inconclusive,
    )  # fmt: skip
    if args.json:
        print_json(outcome_document(outcome))
    else:
        render_outcome(
            console(stderr=rendered.takes_stdout), outcome, golden_set, show_all=args.show_all,
            fail_on_new_failures=args.fail_on_new_failures, fail_on_inconclusive=args.fail_on_inconclusive,
        )  # fmt: skip
    deliver_reports(rendered)
    return outcome.exit_code(args.fail_on_regression, args.fail_on_new_failures, args.fail_on_inconclusive)


def gate_notes(verdict: Any, judging: Any) -> tuple[str, ...]:
    """What the verdict job says when the shard that closed the run accepted it as the baseline
    although this job's gate would not have (it was not given --fail-on-new-failures)."""
    from ..run.decide import automatic_acceptance

    acceptance = verdict.acceptance
    if acceptance is None or acceptance.how not in ("first", "no_regression"):
        return ()
    if automatic_acceptance(verdict, judging.store, fail_on_new_failures=judging.fail_on_new_failures) is not None:
        return ()
    return (
        "The shard that closed the run accepted it as its scope's baseline, but this job's gate would not have: "
        "give the shard jobs the same gate options as the verdict job (--fail-on-new-failures included).",
    )
