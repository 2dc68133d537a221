"""``evalkit history SET``: the stored runs of a set, newest first, with a trend line per series."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..storage.protocols import ResultRepository

from ..run_figures import percent, rate_cell, rate_of
from ..wording import counted, quoted
from .app import Arguments, EvalkitCommand, arguments
from .names import SetIdentifier
from .params import PositiveInt, global_options


@click.command(
    "history",
    cls=EvalkitCommand,
    help=(
        "List the stored runs of SET, newest first: date (UTC), run id, serving identity, grader, status, "
        "pass rate, mean score, the verdict the run got and whether it is an accepted baseline (first of its scope, "
        "significantly better, accepted by a person, or migrated; * marks each scope's current baseline). A running run "
        "whose process is gone (killed) reads 'running (no live process)', with the command that continues it. Below "
        "the table, one trend line per series "
        "(serving identity + grader; for a retrieval run, retriever + deployment): the pass rate of its listed runs, "
        "oldest to newest. Runs stored before "
        "verdicts were kept show — as their verdict."
    ),
)
@click.argument(
    "set",
    metavar="SET",
    type=SetIdentifier("prompt", "question"),
    help="golden set identifier (need not be installed any more)",
)
@click.option("--limit", type=PositiveInt(), default=20, metavar="N", help="at most N runs (default 20)")
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit history``."""
    return arguments(handle, params)


def _series_key(run: Any) -> tuple[str, str]:
    from .stored import measured_label

    return measured_label(run), run.grader


def _acceptances(
    repository: ResultRepository, set_identifier: str, run_ids: list[str]
) -> tuple[dict[str, Any], set[str]]:
    """The acceptances of the listed runs and the ids of the set's current baselines (empty when the
    store keeps no acceptances)."""
    from ..baselines import current_baselines
    from ..storage import capabilities

    baselines = capabilities(repository).baselines
    if baselines is None or not run_ids:
        return {}, set()
    return baselines.acceptances_for(run_ids), {b.run.id for b in current_baselines(repository, set_identifier)}


def _accepted_label(acceptance: Any, current: bool) -> str:
    if acceptance is None:
        return "no"
    how = {"first": "first", "no_regression": "better", "manual": f"by {acceptance.by}", "migrated": "migrated"}
    return ("* " if current else "") + how.get(acceptance.how, acceptance.how)


#: The most runs a trend's sparkline draws (the newest), so it keeps within 80 columns.
SPARKLINE_RUNS = 50


def handle(args: Arguments) -> int:
    """Print the history; exit 2 when the store cannot list runs."""
    from ..config import load_config
    from ..errors import UsageError
    from ..leases import liveness
    from ..run.continuing import gone_sentence, status_label
    from ..storage import capabilities, close_repository, counted_so_far, unwrapped
    from .console import console
    from .json_output import print_json
    from .render import acceptance_document, run_document
    from .resuming import continuing_defaults
    from .stored import (
        format_date,
        liveness_fields,
        measured_label,
        open_store,
        sparkline,
        stored_verdicts,
        verdict_document,
        verdict_label,
    )

    repository = open_store(args)
    try:
        history = capabilities(repository).history
        if history is None:
            raise UsageError(
                f"the configured repository ({type(unwrapped(repository)).__name__}) cannot list runs: it lacks the "
                "RunHistory capability (recent_runs, purge_older_than)"
            )
        runs = [counted_so_far(repository, run) for run in history.recent_runs(args.set, limit=args.limit)]
        alive = liveness(repository, runs)
        verdicts = stored_verdicts(repository, [r.id for r in runs])
        acceptances, current = _acceptances(repository, args.set, [r.id for r in runs])
    finally:
        close_repository(repository)

    series: dict[tuple[str, str], list[Any]] = {}
    for run in reversed(runs):
        series.setdefault(_series_key(run), []).append(run)
    trends = [
        {
            "identity": identity,
            "grader": grader,
            "deployment": members[0].deployment,
            "runs": [r.id for r in members],
            # None (null) for a run with no rate: every case errored, nothing was scored (not a 0 %)
            "pass_rates": [rate_of(r) for r in members],
            # the newest SPARKLINE_RUNS runs: a bar per run (a gap for no rate), so the line keeps within 80 columns
            "sparkline": ("…" if len(members) > SPARKLINE_RUNS else "")
            + sparkline(rate_of(r) for r in members[-SPARKLINE_RUNS:]),
        }
        for (identity, grader), members in series.items()
    ]

    if args.json:
        documents = []
        for run in runs:
            document = run_document(run, with_cases=False)
            document.update(liveness_fields(alive.get(run.id)))
            document["verdict"] = verdict_document(verdicts.get(run.id))
            document["accepted"] = acceptance_document(acceptances.get(run.id))
            document["current_baseline"] = run.id in current
            documents.append(document)
        print_json({"set": args.set, "runs": documents, "series": trends})
        return 0

    out = console()
    if not runs:
        out.print(f"No stored runs of set {quoted(args.set)}.")
        return 0
    from .layout import Column, print_rows
    from .spend_view import cost_cell

    out.line("[bold]History: {set}[/bold]  ({runs}, newest first)", set=args.set, runs=counted(len(runs), "run"))
    columns = (
        Column("Date (UTC)", whole=True), Column("Run", whole=True, primary=True), Column("Identity"), Column("Grader"),
        Column("Status", whole=True), Column("Pass rate", "right", whole=True), Column("Mean", "right", whole=True),
        Column("Cost", "right", whole=True), Column("Verdict", whole=True, primary=True), Column("Accepted", whole=True),
    )  # fmt: skip
    rows = []
    for run in runs:
        verdict = verdicts.get(run.id)
        shown = verdict_label(verdict)
        if verdict is not None and verdict.state == "regressed":
            shown = out.text("[red]{}[/red]", shown)
        rows.append([
            format_date(run.started_at), run.id, measured_label(run), run.grader,
            status_label(run, alive.get(run.id)), rate_cell(run), f"{run.mean_score:.3f}" if run.scored_count else "—", cost_cell(run), shown,
            _accepted_label(acceptances.get(run.id), run.id in current),
        ])  # fmt: skip
    print_rows(out, columns, rows)
    defaults = (
        continuing_defaults(args, load_config(args.config)) if any(live.gone for live in alive.values()) else None
    )
    for run in runs:
        live = alive.get(run.id)
        if live is not None and live.gone:
            out.print(f"Run {run.id}: {gone_sentence(run, live, defaults)}.")
    out.line()
    out.line("[bold]Trend[/bold] (pass rate, oldest → newest, per serving identity and grader)")
    for trend in trends:
        rates = trend["pass_rates"]
        # two lines, the series' name first: on one line with the sparkline it passed 80 columns
        out.print(f"  {trend['identity']} · {trend['grader']}")
        out.print(
            f"    {trend['sparkline']}  {_trend_end(rates[0])} → {_trend_end(rates[-1])}  ({counted(len(rates), 'run')})"
        )
    return 0


def _trend_end(rate: float | None) -> str:
    """A trend's first or last rate as its line says it: ``50.0%``, an em dash for no rate (as the table's cell)."""
    return "—" if rate is None else percent(rate)
