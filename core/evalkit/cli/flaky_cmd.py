"""``evalkit flaky SET``: the cases whose outcome flips between runs of one serving identity, or
differs among a run's repeats, with their history."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..wording import counted, quoted
from .app import Arguments, EvalkitCommand, arguments
from .names import PluginName, ProviderName, SetIdentifier
from .params import PositiveInt, global_options, non_empty


@click.command(
    "flaky",
    cls=EvalkitCommand,
    help=(
        "List the flaky cases of SET per scope (serving identity and grader, or retriever and deployment): a case "
        "whose outcome flipped between the scope's recent complete runs while its content did not change, or whose "
        "repeated answers (--repeats) disagreed. For each: the runs since its content last changed, the flips, its "
        "last outcomes (oldest first) and the runs whose answers disagreed. Keep one out of the gate with "
        '[gate] quarantine = ["case-id"].'
    ),
)
@click.argument(
    "set", metavar="SET", type=SetIdentifier("prompt", "question"), help="golden set identifier (need not be installed any more)"
)
@click.option("--provider", metavar="NAME", type=ProviderName(), help="only the runs of this provider instance (or retriever)")
@click.option("--model", metavar="ALIAS", help="only the runs that sent this model alias", callback=non_empty("a model alias"))
@click.option(
    "--grader", metavar="NAME", type=PluginName("evalkit.graders"), help="only the runs under this grader (decision matches decision:…)"
)
@click.option(
    "--runs", type=PositiveInt(), default=20, metavar="N", help="the history spans each scope's last N complete runs (default 20)"
)
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit flaky``."""
    return arguments(handle, params)


def _scopes(runs: Any, args: Arguments) -> list[Any]:
    """The scopes of the listed runs that the filters keep, newest first."""
    from ..baselines import graded_by
    from ..storage.values import BaselineScope

    found: dict[Any, None] = {}
    for run in runs:
        scope = BaselineScope.of_run(run)
        if scope is None or run.status.value != "complete":
            continue
        who = scope.provider_instance if scope.kind.value == "prompts" else scope.retriever
        if args.provider is not None and who != args.provider:
            continue
        if args.model is not None and scope.model_alias != args.model:
            continue
        # a run without a grader (retrieval) matches no --grader, as one without a model matches no --model
        if args.grader is not None and (
            scope.grader is None or not graded_by(scope.grader, args.grader)
        ):
            continue
        found.setdefault(scope)
    return list(found)


def _outcomes(outcomes: Any) -> str:
    return "".join("✓" if passed else "✗" for passed in outcomes)


def handle(args: Arguments) -> int:
    """Print the flaky cases per scope; exit 2 when the store cannot list runs."""
    from ..errors import UsageError
    from ..flakiness import flaky_cases, scope_history
    from ..storage import capabilities, close_repository, unwrapped
    from .console import console
    from .json_output import print_json
    from .layout import Column, print_rows
    from .stored import open_store

    repository = open_store(args)
    try:
        store = capabilities(repository)
        if store.history is None:
            raise UsageError(
                f"the configured repository ({type(unwrapped(repository)).__name__}) cannot list runs: it lacks the RunHistory capability"
            )
        scopes = _scopes(store.history.recent_runs(args.set, limit=max(200, args.runs * 10)), args)
        found = []
        for scope in scopes:
            history = scope_history(store, scope, runs=args.runs)
            cases = {case_id for run in history for case_id in run.outcomes}
            found.append((scope, history, flaky_cases(history), len(cases)))
    finally:
        close_repository(repository)
    if args.json:
        print_json({
            "set": args.set,
            "scopes": [
                {
                    "scope": {k: v for k, v in {
                        "kind": scope.kind.value, "provider_instance": scope.provider_instance, "model_alias": scope.model_alias,
                        "reported_model": scope.reported_model, "grader": scope.grader, "retriever": scope.retriever,
                        "deployment": scope.deployment,
                    }.items() if v is not None},
                    "runs": [run.run_id for run in history],
                    "cases": case_count,
                    "flaky": [
                        {
                            "id": c.case_id, "runs": c.runs, "flips": c.flips, "last_outcomes": list(c.last_outcomes),
                            "disagreeing_runs": c.disagreeing_runs, "latest_pass_fraction": c.latest_fraction, "why": c.why,
                        }
                        for c in flaky
                    ],
                }
                for scope, history, flaky, case_count in found
            ],
        })  # fmt: skip
        return 0
    out = console()
    if not found:
        out.print(f"No complete runs of set {quoted(args.set)} match: nothing to tell flaky cases by.")
        return 0
    columns = (
        Column("Case", whole=True, primary=True), Column("Runs", "right", whole=True), Column("Flips", "right", whole=True),
        Column("Last outcomes", whole=True), Column("Repeats"),
    )  # fmt: skip
    for scope, history, flaky, case_count in found:
        out.line()
        out.line("[bold]{scope}[/bold] — the last {runs}", scope=scope.describe(), runs=counted(len(history), "complete run"))
        if not flaky:
            out.print(f"No flaky case among {counted(case_count, 'case')}.")
            continue
        rows = []
        for case in flaky:
            repeats = ""
            if case.disagreeing_runs:
                repeats = f"disagreed in {counted(case.disagreeing_runs, 'run')}"
                if case.latest_fraction is not None:
                    repeats += f" (latest pass fraction {case.latest_fraction * 100:.0f}%)"
            rows.append([case.case_id, str(case.runs), str(case.flips), _outcomes(case.last_outcomes), repeats])
        print_rows(out, columns, rows)
        out.print(f"{counted(len(flaky), 'flaky case')} of {case_count}; keep one out of the gate with [gate] quarantine = [\"case-id\"].")
    return 0
