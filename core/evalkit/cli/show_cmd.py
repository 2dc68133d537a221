"""``evalkit show RUN_ID``: one stored run with its cases and their named checks."""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..storage.protocols import ResultRepository

from ..run_figures import answered_text, rate_text
from .app import Arguments, EvalkitCommand, arguments
from .names import RunId
from .params import global_options

#: How much of each stored answer the terminal shows; ``--json`` has every character.
SHOWN_ANSWER_CHARS = 2_000


@click.command(
    "show",
    cls=EvalkitCommand,
    help=(
        "Show the stored run RUN_ID: who answered, grader, status (and, for a running run whose process is gone, "
        "since when no process answers it), aggregates, the verdict it got, and the "
        "cases that need a look (failed, errored, unstable) with their named checks and answers (answer text "
        "only when the run was stored with privacy redacted or full), each answer with the prompt and reference "
        "it answered (from the set installed here, when it is that version) and, for a case that regressed or "
        "was edited since the baseline, the baseline's answer; --show-all lists every case. --json "
        "lists every case, written case by case for a large run."
    ),
)
@click.argument("run_id", metavar="RUN_ID", type=RunId(), help="a run id (see `evalkit history SET`)")
@click.option(
    "--show-all", is_flag=True, help="list every case, passing ones too (default: failed, errored and unstable ones)"
)
@global_options(json="print one JSON document instead of tables (every case)")
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit show``."""
    return arguments(handle, params)


def _checks(case: Any) -> str:
    from ..prompts import displayed_check_name

    if case.errored and not case.checks:
        return f"error: {case.error}"
    parts = []
    for check in case.checks:
        why = check.error or (check.detail if not check.passed else None)
        if check.advisory:  # a judge's verdict that does not gate (evalkit.judge_gate)
            why = f"advisory: {why}" if why else "advisory"
        mark = "✓" if check.passed else "✗"
        parts.append(f"{mark} {displayed_check_name(check.name)}" + (f" ({why})" if why else ""))
    if case.errored:
        parts.append(f"error: {case.error}")
    return ", ".join(parts)


def _acceptance(repository: ResultRepository, run_id: str) -> Any:
    from ..storage import capabilities

    baselines = capabilities(repository).baselines
    if baselines is None:
        return None
    return baselines.acceptances_for([run_id]).get(run_id)


def handle(args: Arguments) -> int:
    """Print the run; exit 2 when there is no such run."""
    from ..leases import liveness
    from ..storage import capabilities, close_repository
    from .stored import open_store, require_run, stored_verdicts

    repository = open_store(args)
    try:
        # A store that streams cases is read a page at a time: a 100,000-case run is never held.
        streamed = capabilities(repository).streamed
        run = require_run(repository, args.run_id, with_cases=streamed is None)
        live = liveness(repository, [run]).get(run.id)
        verdict = stored_verdicts(repository, [run.id]).get(run.id)
        acceptance = _acceptance(repository, run.id)
        if streamed is not None:
            cases = streamed.iter_cases(run.id, notable_only=not (args.json or args.show_all))
        else:
            cases = run.cases if args.json or args.show_all else [c for c in run.cases if c.needs_a_look]
        if args.json:
            _print_json(run, live, verdict, acceptance, cases)
        else:
            before = _baseline_answers(repository, run, verdict)
            _print_tables(run, live, verdict, acceptance, cases, args, Beside(before, args.config))
    finally:
        close_repository(repository)
    return 0


class Beside:
    """What ``evalkit show`` prints beside each stored answer: what the case asked and its reference
    (from the set installed here, when it is the version the run answered), and the baseline's answer
    of a case that regressed or was edited since the baseline (``answers``: case id → that answer)."""

    def __init__(self, answers: tuple[str, dict[str, str]] | None, config_path: str | None) -> None:
        self.baseline_id, self.answers = answers if answers is not None else ("", {})
        self.config_path = config_path

    def texts(self, run: Any, cases: list[Any]) -> dict[str, Any]:
        """The installed text of each case in ``cases`` that is the one the run answered."""
        from ..case_texts import answered_texts
        from ..config import load_config

        return answered_texts(run, cases, load_config(self.config_path)) if cases else {}


def _baseline_answers(repository: ResultRepository, run: Any, verdict: Any) -> tuple[str, dict[str, str]] | None:
    """The baseline the run's stored verdict names, and the answers it stored for the cases that
    regressed or were edited since (each cut to what the terminal shows); ``None`` without one."""
    from ..run.decide import compare_runs
    from ..storage import capabilities
    from ..tolerance import Tolerances

    baseline_id = getattr(verdict, "baseline_id", None)
    if not baseline_id:
        return None
    store = capabilities(repository)
    whole = store.streamed is None
    baseline = repository.get_run(baseline_id, with_cases=whole)
    if baseline is None:
        return None
    current = repository.get_run(run.id, with_cases=True) if whole and not run.cases else run
    comparison = compare_runs(current, baseline, store, Tolerances())
    wanted = {*comparison.regressed_cases, *(edited.case_id for edited in comparison.edited_cases)}
    if not wanted:
        return baseline_id, {}
    cases = baseline.cases if whole else store.streamed.iter_cases(baseline_id)  # type: ignore[union-attr]
    answers = {}
    for case in cases:
        if case.case_id in wanted and case.answer_text is not None:
            answers[case.case_id] = case.answer_text[: SHOWN_ANSWER_CHARS + 1]
    return baseline_id, answers


def _print_json(run: Any, live: Any, verdict: Any, acceptance: Any, cases: Any) -> None:
    from .render import acceptance_document, print_cases_json, run_document
    from .stored import liveness_fields, verdict_document

    document = run_document(run, with_cases=False)
    document.update(liveness_fields(live))
    document["cases"] = None  # keeps its place: filled from the cases below
    document["verdict"] = verdict_document(verdict)
    document["accepted"] = acceptance_document(acceptance)
    print_cases_json(document, cases, run.case_count)


def _retrieval_measures(run: Any) -> str | None:
    """A retrieval run's stored MRR@k, recall@k and nDCG@k (``MRR@10 0.651, recall@10 0.823,
    nDCG@10 0.687``; the pass rate and mean score are its top-1 and top-3 hit rates), ``None``
    when its metrics do not hold them (a run stored before they were kept, an unfinished run)."""
    from ..shapes import finite_number

    metrics = run.metrics.get("retrieval") if isinstance(run.metrics, dict) else None
    if not isinstance(metrics, dict):
        return None
    k = metrics.get("k")
    values = [metrics.get(key) for key in ("mrr_at_k", "recall_at_k", "ndcg_at_k")]
    if not isinstance(k, int) or isinstance(k, bool) or not all(finite_number(v) for v in values):
        return None
    return ", ".join(f"{name}@{k} {value:.3f}" for name, value in zip(("MRR", "recall", "nDCG"), values, strict=True))


def _print_tables(
    run: Any, live: Any, verdict: Any, acceptance: Any, cases: Any, args: Arguments, beside: Beside
) -> None:
    from ..conversations import transcript_lines
    from .console import Lines, console
    from .layout import Column, print_rows
    from .render import base_prompt_line, result_cell, serving_lines, unlisted_cases_line
    from .stored import format_date, identity_label, measured_label, verdict_line

    out = console()
    out.line("[bold]Run {run}[/bold]  ({set}, {kind})", run=run.id, set=run.set_identifier, kind=run.kind.value)
    finished = f"{format_date(run.finished_at)} UTC" if run.finished_at else format_date(run.finished_at)
    out.print(f"Started:    {format_date(run.started_at)} UTC   Finished: {finished}")
    retrieval = run.kind.value == "retrieval"
    if retrieval:
        # a retrieval run has no serving identity: "Model: unverified (evalkit.lexical)" hid the
        # deployment that scopes its baseline
        out.print(f"Retriever:  {measured_label(run)}")
    else:
        out.print(f"Model:      {identity_label(run)}")
    if not retrieval and run.identity is None and run.identity_note:
        out.print(f"            ({run.identity_note})")
    for line in serving_lines(run):
        out.print(line)
    base = base_prompt_line(run)
    if base is not None:
        out.print(f"System:     {base}")
    out.print(f"Grader:     {run.grader}")
    # an errored case is stored, and counted among the answered ones: "4 of 4 answered" beside
    # "1 errored" read as a contradiction
    out.print(f"Status:     {run.status.value}, {answered_text(run)}")
    if live is not None and live.gone:
        from ..config import load_config
        from ..run.continuing import gone_sentence
        from .resuming import continuing_defaults

        # the configured aliases and repeats: a run given another --model or --repeats is continued
        # with it; in the store and with the configuration this command was given
        out.print(f"            {gone_sentence(run, live, continuing_defaults(args, load_config(beside.config_path)))}")
    out.print(f"Pass rate:  {rate_text(run)}")
    out.print(f"Mean score: {run.mean_score:.3f}")
    measures = _retrieval_measures(run) if retrieval else None
    if measures is not None:
        out.print(f"Measures:   {measures}")
    from .spend_view import spend_lines

    for line in spend_lines(run):
        out.print(line)
    if run.label:
        out.print(f"Label:      {run.label}")
    out.print(f"Privacy:    {run.privacy}")
    out.print(f"Verdict:    {verdict_line(verdict)}", soft_wrap=False)
    out.print(f"Baseline:   {acceptance.describe() if acceptance is not None else 'not accepted'}")
    from ..judge_gate import judge_lines

    for line in judge_lines(run.metrics):
        out.print(line)
    columns = (
        Column("Case", whole=True, primary=True), Column("Result", whole=True, primary=True),
        Column("Score", "right", whole=True), Column("Latency (ms)", "right", whole=True), Column("Checks"),
    )  # fmt: skip
    rows = []
    answers = []
    conversations = []
    for case in cases:
        rows.append(
            [case.case_id, result_cell(out, case), f"{case.score:.2f}", f"{case.latency_s * 1000:.0f}", _checks(case)]
        )
        if case.answer_text:
            answers.append(case)
        if case.transcript:
            conversations.append((case.case_id, transcript_lines(case.transcript)))
    if rows:
        out.line()
        print_rows(out, columns, rows)
    hidden = run.answered_count - len(rows)
    if hidden > 0 and not args.show_all:
        out.line()
        out.print(unlisted_cases_line(hidden, run.answered_count))
    if answers:
        out.line()
        out.line("[bold]Answers[/bold]")
        texts = beside.texts(run, answers)
        for case in answers:
            text = case.answer_text
            shown = text if len(text) <= SHOWN_ANSWER_CHARS else text[:SHOWN_ANSWER_CHARS]
            out.line("  {case}: {answer}", case=case.case_id, answer=Lines(shown))
            if shown is not text:
                out.print(
                    f"  … {len(text) - len(shown):,} more characters (`evalkit show {run.id} --json` prints the whole answer)"
                )
            _print_beside(out, texts.get(case.case_id), beside, case.case_id)
    if conversations:
        out.line()
        out.line("[bold]Conversations[/bold] (the turns after each conversation's fixed history)")
        for case_id, turns in conversations:
            out.line("  {case}:", case=case_id)
            for who, what in turns:
                out.line("    {who}: {what}", who=who, what=Lines(what))


def _print_beside(out: Any, asked: Any, beside: Beside, case_id: str) -> None:
    """The lines under a case's answer: what it asked, its reference, the baseline's answer."""
    from .console import Lines

    lines = [
        (role if role != "user" else "prompt", text) for role, text in (asked.messages if asked is not None else ())
    ]
    if asked is not None and asked.reference is not None:
        lines.append(("reference", asked.reference))
    if case_id in beside.answers:
        lines.append((f"baseline answer (run {beside.baseline_id})", beside.answers[case_id]))
    for label, text in lines:
        cut = text if len(text) <= SHOWN_ANSWER_CHARS else text[:SHOWN_ANSWER_CHARS] + "…"
        out.line("    {label}: {text}", label=label, text=Lines(cut))
