"""``evalkit retrieval SET RETRIEVER``: measure a retriever against a golden question set, store it, compare it."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .console import Output

from ..run_figures import answered_text, rate_text
from ..wording import counted, path_named, quoted
from .app import Arguments, EvalkitCommand, arguments
from .gate_options import gate_options
from .names import DeploymentName, PluginName, SetIdentifier
from .params import (
    Choice,
    PositiveInt,
    baseline_option,
    global_options,
    placement_options,
    report_option,
    tolerance_options,
)


@click.command(
    "retrieval",
    cls=EvalkitCommand,
    help=(
        "Ask RETRIEVER every question of SET, score the rankings (top-1/top-3 hit rates, MRR@k, recall@k, "
        "nDCG@k, latency), store the run and compare it with the baseline of its scope — the most recently "
        "accepted run of the same set and retriever in the same deployment — when both declare the same "
        "benchmark (corpus, labels, scoring protocol)."
    ),
    epilog=(
        "baseline states (the benchmark provenance): baseline (first known run) · comparable (same benchmark; "
        "compared) · mismatch (corpus or labels changed) · unknown (provenance missing or invalid). "
        "Verdicts, as for `evalkit run`: baseline · no_regression · regressed · not_comparable (mismatch, "
        "unknown, incomplete…) · pending (a shard is done, others are not). With --fail-on-regression, "
        "not_comparable and pending exit 1 as well."
    ),
)
@click.argument(
    "set", metavar="SET", type=SetIdentifier("question"), help="golden question set identifier (see `evalkit list`)"
)
@click.argument(
    "retriever",
    metavar="[RETRIEVER]",
    required=False,
    type=PluginName("evalkit.retrievers"),
    help="retriever id, an evalkit.retrievers entry point (e.g. evalkit.lexical); default: the one the deployment names",
)
@click.option(
    "--deployment",
    metavar="NAME",
    type=DeploymentName(),
    help='the deployment to measure: its retriever ([deployments.NAME] retriever = "ID") and options '
    '([deployments.NAME.retrievers."ID"]), from the configuration or the set\'s provider '
    "(default: EVALKIT_DEPLOYMENT, else none; see `evalkit list deployments`)",
)
@click.option("--k", type=PositiveInt(), default=10, metavar="N", help="cut-off of recall@k and nDCG@k (default 10)")
@click.option(
    "--relevance-threshold",
    type=PositiveInt(),
    default=1,
    metavar="GRADE",
    help="the grade from which a judged document counts as relevant for hit@1, hit@3, MRR and recall "
    "(default 1; nDCG uses the grades themselves; trec_eval's -l)",
)
@click.option(
    "--judge-unjudged",
    metavar="NAME",
    help="grade the top-k documents nobody judged with the relevance judge NAME (a configured provider instance) "
    "and report the metrics with those holes filled beside the human-label ones (which alone are stored as the "
    "run's figures, compared and gated); the retriever must show document texts",
)
@click.option(
    "--export-run", metavar="PATH", help="also write the rankings as a TREC run file (qid Q0 docid rank score tag)"
)
@click.option(
    "--export-qrels", metavar="PATH", help="also write the set's judgements as TREC qrels (qid 0 docid grade)"
)
@click.option(
    "--concurrency",
    type=PositiveInt(),
    default=1,
    metavar="N",
    help="questions in flight at once (default 1; more only for retrievers that declare thread_safe = True)",
)
@placement_options(
    resume="ask only the questions an unfinished run has no answer for, then complete it "
    "(default: the newest unfinished run of this set, retriever and deployment)",
    scope="set, retriever and deployment",
)
@click.option(
    "--privacy",
    type=Choice(("metadata", "redacted", "full")),
    metavar="{metadata,redacted,full}",
    help="whether per-question rankings are stored (redacted, full) or only hits (default: config, else metadata)",
)
@click.option("--label", metavar="TEXT", help="a free label stored with the run, at most 1,000 characters")
@click.option(
    "--show-all",
    is_flag=True,
    help="list every question (default: the ones that missed at top-1 or top-3, or errored; the others are counted)",
)
@tolerance_options("max-top1-drop", "max-top3-drop", ("top-1 hit rate", "top-3 hit rate"))
@gate_options("retrieval")
@report_option
@baseline_option
@global_options(json="print one JSON document instead of tables")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit retrieval``."""
    return arguments(handle, params, collects_garbage_from_run_start=True)


def handle(args: Arguments) -> int:
    """Refuse what is wrong (set, retriever, tolerances — in that order), run, render, return the exit code."""
    from .. import registry
    from ..catalog import question_set_catalog
    from ..config import load_config
    from ..errors import RunInternalError, RunInterrupted, RunStoreFailed
    from ..run.library import evaluate_retrieval
    from ..run.settings import RetrievalRunSettings
    from . import ending
    from .common import database_url, run_started
    from .gate_options import gate_of
    from .render import ProgressDisplay
    from .reporting import report_targets
    from .resuming import resume_command, with_resume_command
    from .run_cmd import read_baseline_option
    from .run_keywords import Reading, library_keywords

    config = load_config(args.config)
    sourced = question_set_catalog(config=config).get(args.set)
    if args.retriever is not None:
        registry.find("evalkit.retrievers", args.retriever)
    gating = gate_of(args, config, "retrieval")
    targets = report_targets(args)
    baseline_file = read_baseline_option(args)
    database = database_url(args, config)
    _check_export_paths(args, database)
    if args.export_run or args.export_qrels:
        from ..retrieval.trec import check_exportable

        check_exportable(sourced.set.questions, run=args.export_run, qrels=args.export_qrels)
    if args.wait:
        return _verdict_job(args, sourced, config, database, gating, targets, baseline_file)
    progress = ProgressDisplay(enabled=not args.json)
    words = ("retrieval", args.set, *((args.retriever,) if args.retriever else ()))

    def started(run: Any, total: int) -> None:
        ending.run_began(run.id, resume_command(words, args, run.id))
        progress.start(run, total)

    def case_done(case: Any) -> None:
        ending.case_committed()
        progress.advance(case)

    reading = Reading(
        "retrieval", args, config=config, database=database, gating=gating, baseline_file=baseline_file,
        scope=_pipeline_scope(args),
    )  # fmt: skip
    try:
        # The cases are not kept in memory (but with a store in memory): the verdict is counted and
        # paired by the store, the outcome's detail keeps each question's score and the errored cases.
        keywords = library_keywords(
            RetrievalRunSettings, reading, on_start=run_started(started), on_case=case_done, on_prepare=_still_preparing
        )
        outcome = evaluate_retrieval(sourced, args.retriever, **keywords)
    except (
        RunInterrupted,
        RunStoreFailed,
        RunInternalError,
    ) as exc:  # the line that resumes it, as this command was given
        raise with_resume_command(
            exc, resume_command(words, args, exc.run_id)
        ) from exc.__cause__  # a bug's traceback kept
    finally:
        progress.stop()
    return _deliver(args, outcome, targets, database)


def _still_preparing(retriever_id: str, seconds: float) -> None:
    """Say on standard error that the retriever's ``prepare()`` (an index build, untimed) is still
    running: without it a long one looked like a hung command."""
    from ..wording import quoted
    from .console import console

    console(stderr=True).plain(f"still preparing retriever {quoted(retriever_id)} ({seconds:.0f} s)")


def _pipeline_scope(args: Arguments) -> tuple[str | None, ...]:
    """What a retrieval run's pipeline id is derived from: the set, retriever and deployment."""
    return ("retrieval", args.set, args.retriever, args.deployment)


def _deliver(args: Arguments, outcome: Any, targets: Any, database: str) -> int:
    """Write the reports and exports, print the outcome (table or ``--json``); its exit code."""
    from ..errors import OutputFailed, UsageError
    from .console import console
    from .json_output import print_json
    from .reporting import deliver_reports

    rendered = _render_reports(args, targets, database, outcome, args.fail_on_regression, args.fail_on_inconclusive)
    try:
        exported, unwritten = _export(args, outcome), None
    except (OutputFailed, UsageError) as exc:  # a full disk, a retriever's document id holding whitespace:
        # the run is stored, so its outcome is still shown, then the failure (exit 3, never "nothing
        # stored"), whatever write_failed made of it: a path's own fault is refused before the run
        exported, unwritten = [], OutputFailed(f"{exc}; run {outcome.run.id} is stored, the export is not written")
    if args.json:
        print_json(outcome_document(outcome))
    else:
        out = console(stderr=rendered.takes_stdout)
        render_outcome(
            out, outcome, fail_on_new_failures=args.fail_on_new_failures, show_all=args.show_all,
            fail_on_inconclusive=args.fail_on_inconclusive,
        )  # fmt: skip
        for line in exported:
            out.print(line)
    deliver_reports(rendered)
    if unwritten is not None:
        raise unwritten
    return outcome.exit_code(args.fail_on_regression, args.fail_on_new_failures, args.fail_on_inconclusive)


def _verdict_job(
    args: Arguments, sourced: Any, config: Any, database: str, gating: Any, targets: Any, baseline_file: Any
) -> int:
    """``--wait-for-shards``: wait for the run, then print its verdict, write the reports, return its exit code."""
    from ..errors import UsageError
    from ..retrieval.deployments import Deployment, choose_deployment
    from ..run.answering.questions import recorded_detail, stored_answering
    from ..run.decide import Judging, recorded_verdict
    from ..run.outcome import Outcome
    from ..storage import capabilities, close_repository
    from .run_cmd import gate_notes, waited_run
    from .stored import opened_for

    question_set = sourced.set
    repository = opened_for(args, database)
    try:
        run = waited_run(args, repository, _pipeline_scope(args), question_set)
        if run.kind.value != "retrieval":
            raise UsageError(f"run {run.id} is a {run.kind.value} run, not a retrieval run")
        choice = choose_deployment(args.deployment, config, sourced=sourced)
        deployment = Deployment(run.deployment, {}, choice.sources if choice is not None else "none")
        store = capabilities(repository)
        answering = stored_answering(run, question_set, deployment, store)
        # The whole gate, as a single process would apply it: tolerances, the gate's method, a chosen
        # baseline, new failures.
        tolerances, gate = gating
        from_file = baseline_file.run if baseline_file is not None else None
        judging = Judging(
            store,
            answering.rules,
            tolerances,
            args.baseline,
            None,
            args.fail_on_new_failures,
            baseline_run=from_file,
            gate=gate,
        )
        verdict, detail = recorded_detail(answering, recorded_verdict(run, judging))
        notes = (f"Every shard of run {run.id} is in.", *gate_notes(verdict, judging))
    finally:
        close_repository(repository)
    outcome = Outcome(run, verdict, notes, detail=detail)
    return _deliver(args, outcome, targets, database)


def _render_reports(
    args: Arguments, targets: Any, database: str, outcome: Any, fail_on_regression: bool, fail_on_inconclusive: bool = False
) -> Any:
    """The ``--report`` documents of a retrieval run: its stored questions, each ranking as far as the
    run's privacy level kept it (as ``evalkit report RUN`` later shows them)."""
    from ..reports import question_infos
    from .reporting import render_for

    detail = outcome.detail
    return render_for(
        args, targets, database, outcome.run,
        comparison=outcome.comparison, baseline=outcome.baseline, questions=question_infos(detail.question_set),
        fail_on_regression=fail_on_regression, notes=(*detail.warnings, *outcome.verdict.notes, *outcome.notes),
        fail_on_inconclusive=fail_on_inconclusive,
    )  # fmt: skip


def _check_export_paths(args: Arguments, database: str) -> None:
    """Refuse (exit 2), before anything is asked or stored, an export path no write could make
    (:func:`evalkit.textfiles.output_refusal`: a blank name, a name too long, a folder, the results
    store ``database``'s own file) or whose folder does not exist (a link to a folder is not one:
    the export replaces the link, as every output does). ``--export-run " "`` wrote a file named
    by a space; ``--export-run .evalkit/results.db`` stored the run, then failed, exit 3."""
    from pathlib import Path

    from ..errors import UsageError
    from ..storage.engine import keep_store_files
    from ..textfiles import output_refusal

    if args.export_run is None and args.export_qrels is None:
        return
    keep_store_files(database)
    for option, value in (("--export-run", args.export_run), ("--export-qrels", args.export_qrels)):
        if value is None:
            continue
        if (refusal := output_refusal(value)) is not None:
            raise UsageError(f"{option} {path_named(value)}: {refusal}")
        path = Path(value)
        if (path.is_dir() and not path.is_symlink()) or not path.parent.is_dir():
            raise UsageError(f"{option} {path_named(value)}: must be a file in an existing folder")


def _export(args: Arguments, outcome: Any) -> list[str]:
    """Write the TREC run and qrels files asked for; one line per file written."""
    from ..retrieval.trec import write_qrels, write_run

    written = []
    if args.export_run:
        tag = f"evalkit-{outcome.run.id}"
        rankings = outcome.detail.rankings
        path = write_run(args.export_run, rankings, tag)
        written.append(f"TREC run:       {path_named(path)} ({counted(len(rankings), 'question')}, tag {tag})")
    if args.export_qrels:
        path = write_qrels(args.export_qrels, outcome.detail.question_set.questions)
        written.append(f"TREC qrels:     {path_named(path)}")
    return written


def _hit(out: Output, value: bool) -> Any:
    return "hit" if value else out.text("[red]MISS[/red]")


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def render_outcome(
    out: Output,
    outcome: Any,
    *,
    fail_on_new_failures: bool = False,
    show_all: bool = False,
    fail_on_inconclusive: bool = False,
) -> None:
    """The human report: questions, rates, breakdowns, provenance, baseline state, regression check.

    The table lists the questions that need a look — a miss at top-1 or top-3, or an error — and
    counts the others in one line; ``show_all`` lists every question.
    """
    from ..shapes import clipped
    from .layout import Column, print_rows
    from .render import SHOWN_REASON_CHARS

    run = outcome.run
    detail = outcome.detail
    metrics = detail.metrics
    k = metrics.k
    out.line(
        "[bold]Retrieval evaluation: {set} vs {retriever}[/bold]  (run {run})",
        set=run.set_identifier, retriever=run.retriever or "", run=run.id,
    )  # fmt: skip
    for warning in (*detail.warnings, *outcome.plugin_failures):
        out.print(f"warning: {warning}", style="yellow")
    for note in outcome.notes:
        out.print(note, style="yellow")
    if outcome.shard is not None:  # a shard's own figures, then the run's (labelled as such)
        out.print(outcome.shard.said(run.status.value != "running"))
    if detail.resume_note:
        out.print(detail.resume_note)
    columns = (
        Column("Question", whole=True, primary=True), Column("Form", whole=True), Column("Hard class"),
        Column("Top-1", whole=True, primary=True), Column("Top-3", whole=True), Column(f"RR@{k}", "right", whole=True),
        Column("Latency (ms)", "right", whole=True),
    )  # fmt: skip
    rows = []
    hidden = 0
    cases = detail.errors
    answered = {**detail.scores, **cases}
    for question in detail.question_set.questions:
        if question.id not in answered:
            continue  # not in the run yet: another shard asks it
        score = detail.scores.get(question.id)
        if score is not None and score.hit_at_1 and score.hit_at_3 and not show_all:
            hidden += 1
            continue
        hard = question.hard_class or "-"
        case = cases.get(question.id)
        if score is None:
            latency = f"{case.latency_s * 1000:.1f}" if case is not None else "-"
            rows.append([question.id, question.form.value, hard, "ERROR", "ERROR", "-", latency])
            continue
        rows.append([
            question.id, question.form.value, hard, _hit(out, score.hit_at_1), _hit(out, score.hit_at_3),
            f"{score.reciprocal_rank_at_k:.3f}", f"{score.latency_s * 1000:.1f}",
        ])  # fmt: skip
    if rows:
        print_rows(out, columns, rows)
    if hidden:
        if hidden == len(answered):
            out.print(f"All {counted(hidden, 'question')} hit at top-1 and top-3 (--show-all lists them).")
        else:
            verb = "is" if hidden == 1 else "are"
            out.print(
                f"{counted(hidden, 'question')} that hit at top-1 and top-3 {verb} not listed (--show-all lists every question)."
            )
    errors = list(detail.errors.values())
    if errors:
        out.print(f"Errored questions ({len(errors)}):", style="red")
        for case in errors:
            out.print(f"  - {clipped(case.error or '', SHOWN_REASON_CHARS)}")
    out.line()
    deployment = detail.deployment
    where = f"{deployment.name} ({deployment.source})" if deployment.name else "(none: the retriever got no options)"
    out.print(f"Retriever:      {run.retriever}")
    out.print(f"Deployment:     {where}")
    out.print(f"Status:         {run.status.value}, {answered_text(run, 'question')}")
    n = metrics.question_count
    if not n and run.errored_count:
        # Every question errored: "0.0% (0/0)", MRR 0.000 and "p50 0.0 ms" read as measurements of
        # a retriever that found nothing, instantly; none was made.
        out.print(f"Measured:       nothing (no question was scored; {counted(run.errored_count, 'question')} errored)")
        if detail.prepare_seconds is not None:
            out.print(f"Prepared in:    {detail.prepare_seconds:.2f} s (not counted as latency)")
        _render_provenance(out, outcome)
        _render_regression(out, outcome, fail_on_new_failures, fail_on_inconclusive)
        return
    # the run's pass rate is its top-1 hit rate, said as every command says it (evalkit.run_figures)
    out.print(f"Top-1 hit rate: {rate_text(run)}")
    out.print(f"Top-3 hit rate: {_percent(metrics.top3_hit_rate)} ({metrics.top3_hits}/{n})")
    if run.errored_count:
        out.print(f"                (rates over the {counted(n, 'scored question')}; {run.errored_count} errored)")
    out.print(f"{f'MRR@{k}:':<16}{metrics.mrr_at_k:.3f}")
    out.print(f"{f'Recall@{k}:':<16}{metrics.recall_at_k:.3f}")
    out.print(f"{f'nDCG@{k}:':<16}{metrics.ndcg_at_k:.3f}")
    threshold = detail.identity.threshold
    out.print(
        f"                (relevant: grade {threshold} or more, for the hit rates, MRR and recall; nDCG gains are the "
        "grades themselves, linear, as trec_eval's ndcg_cut)"
    )
    out.print(f"Latency:        p50 {metrics.latency_p50_s * 1000:.1f} ms, p95 {metrics.latency_p95_s * 1000:.1f} ms")
    if detail.prepare_seconds is not None:
        out.print(f"Prepared in:    {detail.prepare_seconds:.2f} s (not counted as latency)")
    _render_holes(out, detail)
    _render_breakdown(out, "By form", metrics.by_form, k)
    _render_breakdown(out, "By hard class", metrics.by_hard_class, k)
    _render_provenance(out, outcome)
    _render_regression(out, outcome, fail_on_new_failures, fail_on_inconclusive)


def _render_holes(out: Output, detail: Any) -> None:
    """``--judge-unjudged``: the figures with human labels only and with the judged holes filled, side by side."""
    from rich.table import Table

    holes = detail.holes
    if holes is None:
        return
    human, filled, k = detail.metrics, holes.metrics, detail.metrics.k
    judge = holes.judge or {}
    who = quoted(judge["instance"]) if judge.get("instance") else "the judge"
    models = ", ".join(judge.get("models") or ()) or "no model reported"
    out.line()
    out.line("[bold]Unjudged documents graded by a relevance judge[/bold]")
    out.print(
        f"Judge:          {who} ({models}, relevance prompt v{judge.get('prompt_version', '?')}); "
        f"{counted(holes.judged, 'hole')} graded, {holes.unjudged} could not be, over {counted(len(holes.scores), 'question')}"
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in ("Metric", "Human labels", "Holes filled"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    rows = (
        ("Top-1 hit rate", _percent(human.top1_hit_rate), _percent(filled.top1_hit_rate)),
        ("Top-3 hit rate", _percent(human.top3_hit_rate), _percent(filled.top3_hit_rate)),
        (f"MRR@{k}", f"{human.mrr_at_k:.3f}", f"{filled.mrr_at_k:.3f}"),
        (f"Recall@{k}", f"{human.recall_at_k:.3f}", f"{filled.recall_at_k:.3f}"),
        (f"nDCG@{k}", f"{human.ndcg_at_k:.3f}", f"{filled.ndcg_at_k:.3f}"),
    )
    for row in rows:
        table.add_row(*row)
    out.print(table)
    binary = " (a binary set: grade 2 or more counts as relevant)" if judge.get("binary_from") else ""
    out.print(
        f"The gate and the regression check use the human labels only; the model's grades are stored apart{binary}."
    )


def _render_breakdown(out: Output, title: str, groups: Any, k: int) -> None:
    from rich.table import Table

    if not groups:
        return
    out.line()
    out.print(title, style="bold")
    table = Table(show_edge=False, pad_edge=False)
    for column in ("Class", "Questions", "Top-1", "Top-3", f"MRR@{k}", f"Recall@{k}", f"nDCG@{k}"):
        table.add_column(column, justify="left" if column == "Class" else "right")
    for name, b in groups.items():
        table.add_row(
            name, str(b.questions), _percent(b.top1_hit_rate), _percent(b.top3_hit_rate),
            f"{b.mrr_at_k:.3f}", f"{b.recall_at_k:.3f}", f"{b.ndcg_at_k:.3f}",
        )  # fmt: skip
    out.print(table)


_PROVENANCE_LABELS = (
    ("corpus_revision", "Corpus revision:    "),
    ("model_revision", "Model revision:     "),
    ("chunking_identity", "Chunking identity:  "),
    ("pipeline_identity", "Pipeline identity:  "),
    ("execution_revision", "Execution revision: "),
)


def _render_provenance(out: Output, outcome: Any) -> None:
    identity = outcome.detail.identity
    out.line()
    out.line("[bold]Retrieval provenance[/bold]")
    if identity.provenance is None:
        if not identity.problems:
            out.print("unknown: the retriever declares no provenance")
        else:
            out.print("unknown: the retriever's declaration cannot be used", style="yellow")
            for problem in identity.problems:
                out.print(f"  - {problem}", style="yellow")
    else:
        for field, label in _PROVENANCE_LABELS:
            value = getattr(identity.provenance, field)
            out.print(f"{label}{value if value is not None else 'unknown'}")
    out.print(
        f"Baseline state: {outcome.detail.baseline_state or 'pending (the shard that completes the run decides it)'}"
    )


def _render_regression(
    out: Output, outcome: Any, fail_on_new_failures: bool, fail_on_inconclusive: bool = False
) -> None:
    from .comparison_view import RETRIEVAL_WORDS, render_comparison
    from .render import acceptance_line

    verdict = outcome.verdict
    out.line()
    out.line("[bold]Regression check (pass rate = top-1 hit rate, mean score = top-3 hit rate)[/bold]")
    if verdict.comparison is None:
        out.print(verdict.reason or "", style=None if verdict.state == "baseline" else "yellow")
    else:
        for note in verdict.notes:
            out.print(note, style="yellow")
        render_comparison(
            out, verdict.comparison, RETRIEVAL_WORDS, fail_on_new_failures=fail_on_new_failures,
            fail_on_inconclusive=fail_on_inconclusive,
        )  # fmt: skip

    baseline_id = outcome.baseline.id if outcome.baseline is not None else None
    line = acceptance_line(
        outcome.acceptance, baseline_id, outcome.run.status.value == "complete", verdict.acceptance_note
    )
    if line is not None:
        out.print(line)


def outcome_document(outcome: Any) -> dict[str, Any]:
    """The ``--json`` document: every question's ranking and metrics, the run metrics, provenance
    and the verdict — the same ``verdict`` object as ``evalkit run --json``, beside the retrieval
    run's own ``baseline_state``, ``treatment_changed`` and ``hit_rate_changes``."""
    import attrs

    from ..retrieval.stored import retrieval_limit
    from .comparison_view import RETRIEVAL_WORDS, verdict_document
    from .render import acceptance_document

    run = outcome.run
    detail = outcome.detail
    identity = detail.identity
    verdict = outcome.verdict
    questions = []
    for question in detail.question_set.questions:
        score = detail.scores.get(question.id)
        case = detail.errors.get(question.id)
        entry: dict[str, Any] = {
            "id": question.id,
            "form": question.form.value,
            "hard_class": question.hard_class,
            "expected_ids": list(question.expected_document_ids),
        }
        if question.grades is not None:
            entry["grades"] = list(question.grades)
        if detail.holes is not None and question.id in detail.holes.scores:
            filled = detail.holes.scores[question.id]
            entry["holes_filled"] = {
                "model_grades": detail.holes.model_grades.get(question.id),
                "hit_at_1": filled.hit_at_1, "hit_at_3": filled.hit_at_3, "reciprocal_rank_at_k": filled.reciprocal_rank_at_k,
                "recall_at_k": filled.recall_at_k, "ndcg_at_k": filled.ndcg_at_k,
            }  # fmt: skip
        if score is not None:
            ranking = detail.rankings.get(question.id)
            entry.update(
                ranked_ids=list(score.ranked_ids),
                ranking=ranking.pairs() if ranking is not None else None,
                hit_at_1=score.hit_at_1,
                hit_at_3=score.hit_at_3,
                reciprocal_rank_at_k=score.reciprocal_rank_at_k,
                recall_at_k=score.recall_at_k,
                ndcg_at_k=score.ndcg_at_k,
                latency_ms=round(score.latency_s * 1000, 3),
                error=None,
            )
        else:
            entry.update(
                error=case.error if case is not None else None,
                latency_ms=round(case.latency_s * 1000, 3) if case else None,
            )
        questions.append(entry)
    metrics = attrs.asdict(detail.metrics)
    metrics["errored_questions"] = len(detail.errors)
    return {
        "run_id": run.id,
        "kind": run.kind.value,
        "set": run.set_identifier,
        "retriever": run.retriever,
        "deployment": {
            "name": detail.deployment.name,
            "source": detail.deployment.source,
            "sources": list(detail.deployment.sources),
        },
        "status": run.status.value,
        "grader": run.grader,
        "k": detail.metrics.k,
        "relevance_threshold": identity.threshold,
        "limit": retrieval_limit(detail.metrics.k),
        "privacy": run.privacy,
        "label": run.label,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "answered": run.answered_count,
        "prepare_seconds": detail.prepare_seconds,
        "metrics": metrics,
        "judged_holes": _holes_document(detail.holes),
        "questions": questions,
        "provenance": {
            "declared": attrs.asdict(identity.provenance) if identity.provenance is not None else None,
            "problems": list(identity.problems),
            "labels_fingerprint": identity.labels_fingerprint,
            "benchmark_fingerprint": identity.benchmark_fingerprint,
            "variant_fingerprint": identity.variant_fingerprint,
            "scoring_version": identity.scoring_version,
        },
        "baseline_state": detail.baseline_state,
        "treatment_changed": detail.treatment_changed,
        "verdict": verdict_document(verdict, RETRIEVAL_WORDS),
        "hit_rate_changes": _hit_rate_changes(verdict.comparison),
        "baseline_id": verdict.baseline_id,
        "warnings": [*detail.warnings, *outcome.plugin_failures],  # as the terminal prints them
        "notes": [*verdict.notes, *outcome.notes],
        "resumed": detail.resume_note,
        "accepted": acceptance_document(verdict.acceptance),
        # a shard's own figures; the metrics and the rest are the run's
        "shard": outcome.shard.document() if outcome.shard is not None else None,
    }


def _holes_document(holes: Any) -> dict[str, Any] | None:
    """``--judge-unjudged``'s figures: the judge, the hole counts and the metrics with the holes filled
    (``None`` when no hole was judged); the run's ``metrics`` stay the human-label ones."""
    import attrs

    if holes is None:
        return None
    return {
        "judge": dict(holes.judge) if holes.judge is not None else None,
        "questions": len(holes.scores),
        "judged": holes.judged,
        "unjudged": holes.unjudged,
        "metrics": attrs.asdict(holes.metrics),
    }


def _hit_rate_changes(comparison: Any) -> dict[str, Any] | None:
    """A comparison in hit-rate words (``None`` when the run was not compared)."""
    if comparison is None:
        return None
    return {
        "top1_hit_rate_delta": float(comparison.pass_rate_delta),
        "top3_hit_rate_delta": float(comparison.mean_score_delta),
        "lost_top1_hits": list(comparison.regressed_cases),
        "gained_top1_hits": list(comparison.fixed_cases),
        "added_questions": list(comparison.added_cases),
        "edited_questions": [e.case_id for e in comparison.edited_cases],
        "removed_questions": list(comparison.removed_cases),
    }
