"""``evalkit compare BASE RUN``: any two stored runs of one set, case by case."""

from __future__ import annotations

import click

from ..wording import counted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ..run_figures import rate_text
from ..wording import quoted
from .app import Arguments, EvalkitCommand, arguments
from .gate_options import gate_options
from .names import ProviderName, RunId
from .params import global_options, report_option, tolerance_options


@click.command(
    "compare",
    cls=EvalkitCommand,
    help=(
        "Compare the stored run RUN with the stored run BASE (both of one set), by the same rule as `evalkit run`: "
        "the pass-rate and mean-score deltas against the tolerances, the cases that regressed (passed in BASE, "
        "fail in RUN; each with the checks it fails in RUN), were fixed or still fail, and the exact McNemar p-value on the flipped cases, all on the "
        "cases whose content is unchanged; cases added, edited or removed between the two set versions are "
        "listed apart and are never a regression. "
        "Any two runs can be compared — other models, graders or prompt versions — and a note says what differs (a run with "
        "itself is refused, exit 2). "
        "With --pairwise-judge NAME, the judge NAME also compares the two answers of every unchanged case, shown in "
        "both orders: RUN's wins, ties and losses, its win rate (ties apart) with a 95% Wilson interval, and the "
        'judge\'s position bias; both runs must have stored their answers in full (privacy "full"), else exit 2; '
        "a judge that fails exits 3 and nothing is printed."
    ),
)
@click.argument("base", metavar="BASE", type=RunId(), help="the run compared against (the baseline)")
@click.argument("run", metavar="RUN", type=RunId(), help="the run under review")
@tolerance_options("max-pass-rate-drop", "max-mean-score-drop", ("pass rate", "mean score"))
@gate_options()
@click.option(
    "--pairwise-judge",
    metavar="NAME",
    type=ProviderName(),
    help="the configured provider instance that judges RUN's answers against BASE's, case by case in both orders",
)
@report_option
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit compare``."""
    return arguments(handle, params)


def _differences(base: Any, run: Any, alive: Any, config: Any, args: Arguments) -> list[str]:
    """What differs between the two runs besides their cases, and which is not complete (a running
    run no process answers any more said as ``history`` and ``show`` say it: ``alive``, the runs'
    :func:`evalkit.leases.liveness`, its resume line with the ``--model`` the configuration's
    aliases call for: :func:`evalkit.run.continuing.resume_defaults`)."""
    from ..run.continuing import gone_clause, status_label
    from ..verdict import different_corpora, different_k
    from .resuming import continuing_defaults
    from .stored import identity_label, measured_label

    notes = []
    retrieval = base.kind.value == "retrieval" and run.kind.value == "retrieval"
    if retrieval:
        if measured_label(base) != measured_label(run):
            notes.append(
                f"The runs measured different retrievers or deployments: {measured_label(base)} vs {measured_label(run)}."
            )
        corpora = different_corpora(run, base)
        if corpora is not None:
            notes.append(
                f"The runs searched different corpora (corpus revision {quoted(corpora[0])} vs {quoted(corpora[1])}): "
                "a document one corpus lacks is a miss in that run only, so the difference is not the retriever's alone."
            )
    elif identity_label(base) != identity_label(run):
        notes.append(
            f"The runs were answered by different generators: {identity_label(base)} vs {identity_label(run)}."
        )
    if base.grader != run.grader:
        notes.append(f"The runs were graded by different yardsticks: {quoted(base.grader)} vs {quoted(run.grader)}.")
    if base.set_fingerprint and run.set_fingerprint and base.set_fingerprint != run.set_fingerprint:
        notes.append(
            "The set changed between the two runs (its fingerprint differs): the gate counts only the unchanged cases."
        )
    if (ks := different_k(run, base)) is not None:
        notes.append(
            f"The runs measured at different cut-offs (k {ks[0]} and {ks[1]}): their MRR@k, recall@k and nDCG@k are "
            "different measures and are not compared; the top-1 and top-3 hit rates are."
        )
    defaults = continuing_defaults(args, config) if any(live.gone for live in alive.values()) else None
    for which, stored in (("BASE", base), ("RUN", run)):
        if stored.status.value != "complete":
            live = alive.get(stored.id)
            gone = gone_clause(stored, live, defaults)
            notes.append(
                f"{which} {stored.id} ({stored.answered_count} of {counted(stored.case_count, 'case')} answered) "
                f"is {status_label(stored, live)}: cases it lacks count as added or removed{gone}."
            )
    return notes


def _retrieval_names(args: Arguments) -> Any:
    """The tolerance options as a retrieval run names them (pass rate: hit@1, mean score: hit@3)."""
    from types import SimpleNamespace

    return SimpleNamespace(max_top1_drop=args.max_pass_rate_drop, max_top3_drop=args.max_mean_score_drop)


def handle(args: Arguments) -> int:
    """Compare and print; 1 under --fail-on-regression when an aggregate dropped beyond tolerance,
    and under --fail-on-new-failures when an added or edited case fails."""
    from ..config import load_config
    from ..errors import UsageError
    from ..leases import liveness
    from ..run.decide import compare_runs
    from ..storage import capabilities, close_repository
    from .comparison_view import PROMPT_WORDS, RETRIEVAL_WORDS, comparison_document, render_comparison
    from .console import console
    from .gate_options import gate_of
    from .json_output import print_json
    from .render import run_document
    from .reporting import deliver_reports, report_targets
    from .stored import identity_label, measured_label, open_store, require_run

    config = load_config(args.config)
    tolerances, gate = gate_of(args, config)
    targets = report_targets(args)
    repository = open_store(args)
    try:
        # A store that streams cases matches the two runs itself, a page at a time.
        store = capabilities(repository)
        whole = store.streamed is None
        base = require_run(repository, args.base, with_cases=whole)
        run = require_run(repository, args.run, with_cases=whole)
        if base.id == run.id:  # it printed "inconclusive", and failed the gate under --fail-on-inconclusive
            raise UsageError(
                f"BASE and RUN are both run {base.id}: a run compared with itself tells nothing; name two runs"
            )
        alive = liveness(repository, [base, run])
        if base.set_identifier != run.set_identifier:
            raise UsageError(
                f"runs {base.id} and {run.id} are of different sets ({quoted(base.set_identifier)} and {quoted(run.set_identifier)}); "
                "compare two runs of one set"
            )
        if run.kind.value == "retrieval":  # the two options are hit@1's and hit@3's; the rest from [gate]
            tolerances, _ = gate_of(_retrieval_names(args), config, "retrieval")
        comparison = compare_runs(run, base, store, tolerances, gate)
        regressed_checks = _regressed_checks(run, comparison.regressed_cases, store)
        if args.pairwise_judge is not None:
            # the judge needs every case's answer, also from a store that streams cases
            judged_pair = (base, run) if whole else (require_run(repository, base.id), require_run(repository, run.id))
    finally:
        close_repository(repository)
    pairwise = _judge_pairwise(args, config, *judged_pair) if args.pairwise_judge is not None else None
    words = RETRIEVAL_WORDS if run.kind.value == "retrieval" and base.kind.value == "retrieval" else PROMPT_WORDS
    notes = _differences(base, run, alive, config, args)
    cases = {
        "regressed": list(comparison.regressed_cases),
        "fixed": list(comparison.fixed_cases),
        "still_failing": list(comparison.still_failing),
        "added": list(comparison.added_cases),
        "edited": [e.case_id for e in comparison.edited_cases],
        "removed": list(comparison.removed_cases),
    }
    exit_code = 0
    if args.fail_on_regression and comparison.regressed:
        exit_code = 1
    if args.fail_on_new_failures and comparison.new_failures:
        exit_code = 1
    if args.fail_on_inconclusive and comparison.inconclusive:
        exit_code = 1
    rendered = _render_reports(args, targets, base, run, comparison, notes, words)

    from .spend_view import cost_delta_cells, cost_delta_document

    if args.json:
        print_json(
            {
                "set": run.set_identifier,
                "base": run_document(base, with_cases=False),
                "run": run_document(run, with_cases=False),
                "pass_rate_delta": float(comparison.pass_rate_delta),
                "mean_score_delta": float(comparison.mean_score_delta),
                "pass_rate_regressed": comparison.pass_rate_regressed,
                "mean_score_regressed": comparison.mean_score_regressed,
                "regressed": comparison.regressed,
                "cases": cases,
                "regressed_checks": {
                    case_id: {"failed_checks": entry["failed_checks"], "errored": entry["errored"]}
                    for case_id, entry in regressed_checks.items()
                },
                "mcnemar_p": comparison.mcnemar_p,
                "summary": words.summary(comparison),
                "comparison": comparison_document(comparison, words),
                "cost": cost_delta_document(run, base),
                "notes": notes,
                **({"pairwise": pairwise.as_dict()} if pairwise is not None else {}),
            }
        )
        deliver_reports(rendered)
        return exit_code

    from rich.table import Table

    out = console(stderr=rendered.takes_stdout)
    out.line("[bold]Compare: {set}[/bold]  (base {base} → run {run})", set=run.set_identifier, base=base.id, run=run.id)
    for note in notes:
        out.print(note, style="yellow")
    table = Table(show_edge=False, pad_edge=False)
    for column, justify in (("", "left"), ("Base", "right"), ("Run", "right"), ("Delta", "right")):
        table.add_column(column, justify=justify)
    table.add_row(
        "Pass rate",
        rate_text(base),
        rate_text(run),
        f"{float(comparison.pass_rate_delta) * 100:+.1f} pp",
    )
    table.add_row(
        "Mean score", f"{base.mean_score:.3f}", f"{run.mean_score:.3f}", f"{float(comparison.mean_score_delta):+.3f}"
    )
    table.add_row("Cost", *cost_delta_cells(run, base))
    if base.kind.value == "retrieval" and run.kind.value == "retrieval":
        table.add_row("Retriever", measured_label(base), measured_label(run), "")
    else:
        table.add_row("Model", identity_label(base), identity_label(run), "")
    out.print(table)
    out.line()
    render_comparison(
        out,
        comparison,
        words,
        fail_on_new_failures=args.fail_on_new_failures,
        fail_on_inconclusive=args.fail_on_inconclusive,
        case_notes={case_id: entry["shown"] for case_id, entry in regressed_checks.items()},
    )
    if pairwise is not None:
        from .pairwise_view import render_pairwise

        out.line()
        render_pairwise(out, pairwise)
    deliver_reports(rendered)
    return exit_code


def _regressed_checks(run: Any, regressed_ids: Any, store: Any) -> dict[str, dict[str, Any]]:
    """Each regressed case of RUN, in the comparison's order, with what it failed now:
    ``{"failed_checks": [stored check names], "errored": bool, "shown": "a, b"}`` (``shown``: the
    names as the terminal lists them, ``errored`` for an error). Read from the run's cases, or —
    from a store that streams cases — from its failing ones, a page at a time."""
    from .render import check_names

    wanted = set(regressed_ids)
    if not wanted:
        return {}
    cases = run.cases if store.streamed is None else store.streamed.iter_cases(run.id, notable_only=True)
    found = {
        case.case_id: {
            "failed_checks": [c.name for c in case.failed_checks],
            "errored": case.errored,
            "shown": check_names(case),
        }
        for case in cases
        if case.case_id in wanted
    }
    return {case_id: found[case_id] for case_id in regressed_ids if case_id in found}


def _judge_pairwise(args: Arguments, config: Any, base: Any, run: Any) -> Any:
    """The pairwise judge's comparison of RUN's answers with BASE's (see :mod:`evalkit.pairwise`)."""
    from ..pairwise import PairwiseSettings, compare_pairwise

    return compare_pairwise(base, run, PairwiseSettings(judge=args.pairwise_judge), config)


def _render_reports(
    args: Arguments, targets: Any, base: Any, run: Any, comparison: Any, notes: list[str], words: Any
) -> Any:
    """The ``--report`` documents of RUN against BASE (the verdict is this comparison's, in the
    words the command printed it: hit rates for two retrieval runs)."""
    from ..config import load_config
    from ..storage import StoredVerdict
    from .common import database_url
    from .reporting import render_for

    verdict = StoredVerdict(comparison.state, base.id, words.summary(comparison))
    return render_for(
        args, targets, database_url(args, load_config(args.config)), run, verdict=verdict, comparison=comparison,
        baseline=base, fail_on_regression=args.fail_on_regression, notes=notes,
        fail_on_inconclusive=args.fail_on_inconclusive,
    )  # fmt: skip
