"""Rendering runs and verdicts for people (rich) and machines (JSON).

What is printed goes through the output boundaries — :class:`~evalkit.cli.console.Output` for
people, :mod:`evalkit.cli.json_output` for ``--json`` — which make every string from a plugin, a
set, an endpoint or the store safe; the code here says what is evalkit's own markup and what is
data (see :mod:`evalkit.cli.console`), and escapes nothing itself.
"""

from __future__ import annotations

import contextlib
import functools
import sys

from ..jsontext import document_text, scalar_text
from ..prompts import displayed_check_name
from ..run_figures import answered_text, rate_text
from ..shapes import clipped
from ..wording import counted, quoted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from ..run.outcome import Outcome
    from ..runs import CaseResult, Run
    from ..validation import CheckProgress
    from .console import Output

__all__ = [
    "ProgressDisplay",
    "SetCheckDisplay",
    "acceptance_document",
    "acceptance_line",
    "base_prompt_line",
    "case_document",
    "case_json",
    "outcome_document",
    "print_cases_json",
    "render_outcome",
    "run_document",
]


class ProgressDisplay:
    """A progress bar on stderr while answers come in (only on a terminal): count, rate and time remaining."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Any = None
        self._shown: Any = None
        self._task: Any = None

    def start(self, run: Run, total: int) -> None:
        """Show the bar for ``total`` cases."""
        if not self.enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

        from .console import console
        from .rate_column import CaseRateColumn

        err = console(stderr=True)
        self._progress, self._shown = _started(
            TextColumn("{task.description}", style="bold", markup=False), BarColumn(), MofNCompleteColumn(),
            CaseRateColumn(), TimeRemainingColumn(), console=err.rich,
        )
        self._task = self._progress.add_task(err.safe(run.set_identifier), total=total)

    def advance(self, case: CaseResult) -> None:
        """One more case is in."""
        if self._progress is not None:
            self._progress.advance(self._task)

    def stop(self) -> None:
        """Remove the bar."""
        if self._progress is not None:
            self._shown.close()  # the bar stopped, plugins' output back on standard error
            self._progress = None


#: How long a set's check goes on before its progress is shown: a check that ends sooner (every
#: set of a few thousand prompts) draws nothing, as before.
CHECK_SHOWN_AFTER_S = 1.0
#: The most of a set's identifier the check's progress shows (it is the plugin's, and unchecked yet).
SHOWN_IDENTIFIER_CHARS = 80


class SetCheckDisplay:
    """The progress of a pass over a set on stderr, only on a terminal, as :class:`ProgressDisplay`
    shows a run's: the check before a run, ``evalkit plan`` or ``evalkit regrade`` (the pass that
    checks, counts and fingerprints it) or ``evalkit validate``'s, and ``evalkit list``'s count of
    a stream that declares none, and ``evalkit plan``'s estimate (its own pass over the prompts,
    after the check). It shows ``VERB set X`` (``verb``: ``checking``, ``counting``, ``estimating``), a
    bar (of the count a stream declares, with the time remaining; one that moves to and fro when
    it declares none) and the prompts reached so far. It appears once the pass has taken
    :data:`CHECK_SHOWN_AFTER_S` and is removed when the pass ends. Called with each
    :class:`~evalkit.validation.CheckProgress` the pass reports (the kernel's ``on_check`` or
    ``progress``); it looks at the clock only then, every
    :data:`~evalkit.validation.CHECK_PROGRESS_EVERY` prompts or
    :data:`~evalkit.validation.CHECK_PROGRESS_SECONDS`, whichever comes first."""

    def __init__(self, enabled: bool = True, verb: str = "checking") -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.verb = verb
        self._progress: Any = None
        self._shown: Any = None
        self._task: Any = None
        self._began = 0.0

    def __call__(self, report: CheckProgress) -> None:
        """Take in how far the check has come."""
        if not self.enabled:
            return
        import time

        if report.done or report.checked == 0:  # one set's check ended, or another's begins
            self.stop()
            self._began = time.monotonic()
            return
        if self._progress is None:
            if time.monotonic() - self._began < CHECK_SHOWN_AFTER_S:
                return
            self._show(report)
        self._progress.update(self._task, completed=report.checked, count=_checked_count(report))

    def _show(self, report: CheckProgress) -> None:
        from rich.progress import BarColumn, TextColumn, TimeRemainingColumn

        from .console import console

        err = console(stderr=True)
        # The time remaining only when there is a total to reach; the bar moves to and fro without one.
        columns = [TextColumn("{task.description}", style="bold", markup=False), BarColumn(), TextColumn("{task.fields[count]}", markup=False)]
        if report.total is not None:
            columns.append(TimeRemainingColumn())
        self._progress, self._shown = _started(*columns, console=err.rich)
        described = err.safe(f"{self.verb} set {clipped(report.identifier, SHOWN_IDENTIFIER_CHARS)}")
        self._task = self._progress.add_task(described, total=report.total, count=_checked_count(report))

    def stop(self) -> None:
        """Remove what is shown (nothing when the check ended before it appeared)."""
        if self._progress is not None:
            self._shown.close()  # the bar stopped, plugins' output back on standard error
            self._progress = None


def _started(*columns: Any, console: Any) -> tuple[Any, contextlib.ExitStack]:
    """A transient rich ``Progress`` of ``columns`` on ``console``, started, and what stops it.
    Meanwhile what plugins write is printed above the bar, made safe
    (:func:`evalkit.cli.plugin_streams.shown_above`): rich's own redirection of ``sys.stdout`` and
    ``sys.stderr`` is off, as it would print their text unmade-safe (escape sequences read as
    styles, secrets as they are)."""
    from rich.progress import Progress

    from .plugin_streams import shown_above

    progress = Progress(*columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False)
    with contextlib.ExitStack() as stack:
        stack.enter_context(shown_above(console))
        progress.start()
        stack.callback(progress.stop)
        return progress, stack.pop_all()


def _checked_count(report: CheckProgress) -> str:
    """``412,000/1,000,000 prompts``, or ``412,000 prompts…`` when the total is not known."""
    if report.total is None:
        return f"{report.checked:,} prompts…"
    return f"{report.checked:,}/{report.total:,} prompts"


def _percent(value: Any) -> str:
    return f"{float(value) * 100:.1f}%"


#: How much of a failed check's reason the run's table shows (``evalkit show RUN --json`` has it whole).
SHOWN_REASON_CHARS = 300


def _failed_checks(case: CaseResult) -> str:
    if case.errored:
        return f"error: {clipped(case.error, SHOWN_REASON_CHARS)}"
    parts = []
    for check in case.failed_checks:
        why = check.error or check.detail
        why = clipped(why, SHOWN_REASON_CHARS) if why else why
        name = displayed_check_name(check.name)
        if check.advisory:  # a judge's verdict that does not gate (evalkit.judge_gate)
            why = f"advisory: {why}" if why else "advisory"
        parts.append(f"{name} ({why})" if why else name)
    return ", ".join(parts)


def render_outcome(
    out: Output,
    outcome: Outcome,
    golden_set: Any = None,
    live_cases: Mapping[str, CaseResult] | None = None,
    show_all: bool = False,
    fail_on_new_failures: bool = False,
    cases: Iterable[CaseResult] | None = None,
    show_answers: bool = False,
    fail_on_inconclusive: bool = False,
    flaky: Mapping[str, str] | None = None,
) -> None:
    """The human report of one run: cases, aggregates, identity, then the regression check.

    Cases are listed in the set's order (``golden_set``), whatever order they were answered in;
    ``show_answers`` adds each failing case's answer after the table, as a short excerpt.

    The table lists the cases that need a look — failed, errored, unstable — and counts the
    passing ones in one line; ``show_all`` lists every case. ``live_cases`` are the failed cases
    as graded in this process: their check details (which the privacy level may have kept out of
    the store) say why a check failed. ``cases`` are the run's cases read from the store when the
    run comes without them — every case under ``show_all``, else at least the ones listed; the
    passing ones are counted from the run's aggregates. ``flaky`` marks the cases whose outcome
    flipped between earlier runs of the scope (with why), beside those whose answers disagreed.
    """
    from .layout import Column, print_rows

    flaky = flaky or {}
    run = outcome.run
    out.line("[bold]Evaluation: {set}[/bold]  (run {run})", set=run.set_identifier, run=run.id)
    if outcome.concurrency is not None:  # a re-grade asks the model nothing: its cases are graded that many at a time
        from ..run.placement import regraded_from

        unit = "grading" if regraded_from(run) is not None else "request"
        out.print(f"Concurrency: {counted(outcome.concurrency, unit)} in flight")
    for note in outcome.notes:
        out.print(note, style="yellow")
    if outcome.shard is not None:  # a shard's own figures, then the run's (labelled as such)
        out.print(outcome.shard.said(run.status.value != "running"))
    for failure in outcome.plugin_failures:
        out.print(f"warning: {failure}", style="yellow")
    columns = (
        Column("Case", whole=True, primary=True), Column("Result", whole=True, primary=True),
        Column("Score", "right", whole=True), Column("Latency (ms)", "right", whole=True), Column("Failed checks"),
    )  # fmt: skip
    rows = []
    answers: dict[str, str | None] = {}
    hidden = 0
    comparison = outcome.verdict.comparison
    regressed = set(comparison.regressed_cases) if comparison is not None else set()
    regressed_checks: dict[str, str] = {}
    for case in run.cases if cases is None else cases:
        if case.case_id in regressed:
            regressed_checks[case.case_id] = check_names(case)
        if not case.needs_a_look and not show_all:
            hidden += 1
            continue
        shown = (live_cases or {}).get(case.case_id, case)
        result = result_cell(out, case, flaky=case.case_id in flaky)
        rows.append([case.case_id, result, f"{case.score:.2f}", f"{case.latency_s * 1000:.0f}", _failed_checks(shown)])
        if show_answers and not case.passed:
            answers[case.case_id] = shown.answer_text
    if cases is not None and not show_all:
        hidden = run.answered_count - len(rows)
    position = set_positions(golden_set)
    if position:
        rows.sort(key=lambda row: position.get(row[0], len(position)))
    if rows:
        print_rows(out, columns, rows)
    if answers:
        out.line("[bold]Answers of the failing cases[/bold] (--no-show-answers leaves them out):")
        for row in rows:
            if row[0] in answers:
                out.print(f"  {row[0]}: {answer_excerpt(answers[row[0]])}")
    if hidden:
        out.print(unlisted_cases_line(hidden, run.answered_count))
    render_summary(out, run)
    render_judges(out, run)
    render_verdict(
        out, outcome, fail_on_new_failures=fail_on_new_failures, case_notes=regressed_checks,
        fail_on_inconclusive=fail_on_inconclusive, flaky=flaky,
    )  # fmt: skip


def render_judges(out: Output, run: Run) -> None:
    """Each judge of the run with its κ (or "uncalibrated") and whether its verdicts gate."""
    from ..judge_gate import judge_lines

    for line in judge_lines(run.metrics):
        out.print(line, style="yellow" if "advisory" in line else None)


#: The most characters of an answer the run's output shows for a failing case.
ANSWER_EXCERPT_CHARS = 160


def answer_excerpt(text: str | None, limit: int = ANSWER_EXCERPT_CHARS) -> str:
    """An answer as one short line for the terminal: secrets scrubbed *before* it is cut (a cut
    secret would no longer be recognised), runs of white space made one space, cut at ``limit``
    characters with "…". Control characters are left to the console, which shows them as escapes."""
    if text is None:
        return "(no answer)"
    from ..privacy import scrub, secrets_to_hide

    one_line = " ".join(scrub(text, secrets_to_hide()).split())
    if not one_line:
        return "(an empty answer)"
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def set_positions(golden_set: Any) -> dict[str, int]:
    """Each prompt id's position in ``golden_set`` (empty when the set is not at hand, or streams
    its prompts: a table is then in the order the store reads the cases)."""
    prompts = getattr(golden_set, "prompts", None)
    if not isinstance(prompts, (list, tuple)):
        return {}
    return {prompt.id: index for index, prompt in enumerate(prompts)}


def result_cell(out: Output, case: CaseResult, *, flaky: bool = False) -> Any:
    """A case's result for a table: ``pass``, ``FAIL`` in red or ``ERROR``, with its passes of its
    answers when repeated, marked when unstable and when flaky (its repeats disagree, or ``flaky``:
    its history flips)."""
    result = "ERROR" if case.errored else ("pass" if case.passed else "[red]FAIL[/red]")
    if case.answers > 1:
        result += f" {case.passes}/{case.answers}"
    if case.unstable:
        result += " [yellow](unstable)[/yellow]"
    if case.flaky or flaky:
        result += " [yellow](flaky)[/yellow]"
    return out.text(result)


def unlisted_cases_line(hidden: int, answered: int) -> str:
    """The line that counts the passing cases a table left out (``--show-all`` lists them)."""
    if hidden == answered:
        return f"All {counted(hidden, 'case')} passed (--show-all lists them)."
    return f"{counted(hidden, 'passing case')} {'is' if hidden == 1 else 'are'} not listed (--show-all lists every case)."


#: What each piece of serving evidence is, in words (the stored keys stay as they are).
EVIDENCE_LABELS = {
    "routed_model": "gateway routed to",
    "owned_by": "model list says owned by",
    "model_file": "model file",
    "total_slots": "server slots",
    "build_info": "server build",
}


def _evidence_label(key: str) -> str:
    """``owned_by`` → "model list says owned by"; ``meta.n_params`` → "model n_params"."""
    if key.startswith("meta."):
        return f"model {key[5:]}"
    return EVIDENCE_LABELS.get(key, key)


def base_prompt_line(run: Run) -> str | None:
    """Which base system prompt the run's provider instance put before every request: its digest
    and first words (secrets scrubbed when the run was stored); ``None`` when it had none."""
    kept = (run.metrics or {}).get("base_prompt")
    digest = run.identity.base_prompt if run.identity is not None else ""
    if isinstance(kept, dict):
        digest = digest or str(kept.get("digest") or "")
        opening = kept.get("opening")
        if isinstance(opening, str) and opening:
            return f'base system prompt {digest} "{opening}"'
    return f"base system prompt {digest}" if digest else None


def serving_lines(run: Run) -> list[str]:
    """The lines under ``Model:`` on who served the run, as stored with it (``metrics["serving"]``):
    its note (the reported model is the alias sent …) and the free evidence (``Served by:``) —
    what ``run`` prints and ``show`` prints again. A stored value of another shape shows nothing."""
    serving = (run.metrics or {}).get("serving") if isinstance(run.metrics, dict) else None
    if not isinstance(serving, dict):
        return []
    lines = []
    note = serving.get("note")
    if isinstance(note, str) and note:
        lines.append(f"            ({note})")
    evidence = serving.get("evidence")
    if isinstance(evidence, dict) and evidence:
        shown = ", ".join(f"{_evidence_label(str(key))} {value}" for key, value in evidence.items())
        lines.append(f"Served by:  {shown}")
    return lines


def render_summary(out: Output, run: Run) -> None:
    """Identity and aggregates."""
    if run.identity is not None:
        who = f"{run.identity.reported_model} (alias {run.identity.model_alias} via {run.identity.provider_instance})"
    else:
        who = "(unknown)"
    out.print(f"Model:      {who}")
    for line in serving_lines(run):
        out.print(line)
    base = base_prompt_line(run)
    if base is not None:
        out.print(f"System:     {base}")
    out.print(f"Grader:     {run.grader}")
    out.print(f"Status:     {run.status.value}, {answered_text(run)}")
    out.print(f"Pass rate:  {rate_text(run)}")
    repeats = (run.metrics or {}).get("repeats")
    if isinstance(repeats, dict) and isinstance(repeats.get("answers_per_case"), int):
        out.print(
            f"Repeats:    {repeats['answers_per_case']} answers per case (a case passes when most of its answers do); "
            f"pass fraction {_percent(repeats.get('pass_fraction', 0))}, "
            f"pass@{repeats['answers_per_case']} {_percent(repeats.get('pass_at_n', 0))}, "
            f"pass^{repeats['answers_per_case']} {_percent(repeats.get('pass_all_n', 0))}, "
            f"{counted(int(repeats.get('flaky_count', 0)), 'flaky case')}"
        )
    out.print(f"Mean score: {run.mean_score:.3f}")
    from .spend_view import spend_lines

    for line in spend_lines(run):
        out.print(line)
    judge = (run.metrics or {}).get("judge")
    if isinstance(judge, dict):
        line = f"Judge:      {quoted(judge.get('instance'))} (prompt v{judge.get('prompt_version')}, asked {judge.get('repeats')}x per case)"
        if "self_agreement" in judge:
            line += (
                f"; self-agreement {_percent(judge['self_agreement'])} "
                f"({judge['agreeing_cases']}/{judge['judged_cases']} cases), {len(judge['unstable_cases'])} unstable"
            )
        out.print(line)


def check_names(case: CaseResult) -> str:
    """``check_a, check_b`` — the named checks a case failed (``errored`` for an error), for the
    regression list."""
    names = [displayed_check_name(check.name) for check in case.failed_checks]
    if case.errored:
        names.append("errored")
    return ", ".join(names)


def acceptance_line(acceptance: Any, baseline_id: str | None, complete: bool, note: str | None = None) -> str | None:
    """Whether the run became its scope's baseline, in one line (``None`` for a run that cannot be);
    ``note`` says why a compared run was not accepted."""
    if acceptance is not None:
        return f"Accepted as the baseline of its scope ({acceptance.describe().removeprefix('accepted ')})."
    if not complete:
        return None
    if baseline_id is not None:
        why = f"{note}; " if note else ""
        return (
            f"Not accepted as the baseline: run {baseline_id} stays the baseline "
            f"({why}accept this run on purpose with `evalkit baseline accept RUN_ID --reason TEXT`)."
        )
    if note:
        return f"Not accepted as the baseline: {note}."
    return "Not accepted as the baseline: the run could not be compared."


def render_verdict(
    out: Output,
    outcome: Outcome,
    *,
    fail_on_new_failures: bool = False,
    case_notes: Mapping[str, str] | None = None,
    fail_on_inconclusive: bool = False,
    flaky: Mapping[str, str] | None = None,
) -> None:
    """The regression check: first the cases that passed in the baseline and fail now, each with
    its ``case_notes`` entry (its failed checks) when there is one, and its flakiness."""
    from .comparison_view import render_comparison

    verdict = outcome.verdict
    out.line()
    out.line("[bold]Regression check[/bold]")
    if verdict.state in ("not_comparable", "pending"):
        out.print(verdict.reason or "", style="yellow")
    elif verdict.state == "baseline":
        out.print("No accepted run for this set, serving identity and grader — recorded as the baseline.")
    else:
        assert verdict.comparison is not None
        for note in verdict.notes:
            out.print(note, style="yellow")
        render_comparison(
            out, verdict.comparison, fail_on_new_failures=fail_on_new_failures, case_notes=case_notes,
            fail_on_inconclusive=fail_on_inconclusive, flaky=flaky,
        )  # fmt: skip
    complete = outcome.run.status.value == "complete" and outcome.run.verified
    baseline_id = verdict.baseline.id if verdict.baseline is not None else None
    line = acceptance_line(verdict.acceptance, baseline_id, complete, verdict.acceptance_note)
    if line is not None:
        out.print(line)


def case_document(case: CaseResult) -> dict[str, Any]:
    """A case as JSON-ready data."""
    check_data, identity_data = _case_hooks()
    return {
        "id": case.case_id,
        "passed": case.passed,
        "score": case.score,
        "errored": case.errored,
        "error": case.error,
        "latency_ms": round(case.latency_s * 1000, 3),
        "checks": _check_documents(case.checks, check_data),
        "yardstick": case.yardstick,
        "unstable": case.unstable,
        "identity": identity_data(case.identity) if case.identity else None,
        "answer": case.answer_text,
        "detail": case.detail,
        "usage": _usage_document(case.usage),
        "judge_usage": [_usage_document(u) for u in case.judge_usage],
        "answer_source": case.answer_source,
        "requests": case.requests,
        "requests_sent": case.requests_sent,
        **({"transcript": _transcript_document(case.transcript)} if case.transcript else {}),
        **repeats_document(case),
    }


def repeats_document(case: CaseResult) -> dict[str, Any]:
    """A repeated case's ``answers``, ``pass_fraction``, ``pass_at_n`` (at least one answer passed),
    ``pass_all_n`` (all did) and ``flaky``; empty for a case answered once."""
    if case.answers < 2:
        return {}
    return {
        "answers": case.answers,
        "pass_fraction": case.pass_fraction,
        "pass_at_n": case.passes > 0,
        "pass_all_n": case.passes == case.answers,
        "flaky": case.flaky,
    }


def _usage_document(usage: Any) -> dict[str, Any] | None:
    """One request's token counts as JSON (``None``: not reported)."""
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "cached_prompt_tokens": usage.cached_input_tokens,
    }


#: What was made of the last few shared objects printed — a case's tuple of checks, a serving
#: identity — by the object's identity, one dict per use (each entry keeps its object alive, so an
#: identity is never reused while it is a key). A few are enough: a store shares one tuple among
#: the cases whose stored checks read the same, and a run has a handful of such shapes and
#: identities; more would keep long, never-shared check lists alive.
_CHECK_DOCUMENTS: dict[int, tuple[Any, Any]] = {}
_CHECK_TEXTS: dict[int, tuple[Any, Any]] = {}
_IDENTITY_TEXTS: dict[int, tuple[Any, Any]] = {}
_CHECK_DOCUMENTS_KEPT = 16


def _made_once(made: dict[int, tuple[Any, Any]], shared: Any, make: Callable[[Any], Any]) -> Any:
    """``make(shared)``, made once per object ``shared`` while it stays among the last
    :data:`_CHECK_DOCUMENTS_KEPT` objects remembered in ``made``."""
    entry = made.get(id(shared))
    if entry is not None and entry[0] is shared:
        return entry[1]
    result = make(shared)
    if len(made) >= _CHECK_DOCUMENTS_KEPT:
        del made[next(iter(made))]
    made[id(shared)] = (shared, result)
    return result


def _check_documents(checks: tuple[Any, ...], check_data: Callable[[Any], Any]) -> list[Any]:
    """A case's checks as JSON-ready data, shared (read-only) by the cases that share one tuple of
    checks, so a 100,000-case ``--json`` unstructures a handful of check lists, not 300,000 checks."""
    return _made_once(_CHECK_DOCUMENTS, checks, lambda shared: [check_data(c) for c in shared])


def case_json(case: CaseResult) -> str:
    """``case_document(case)`` as compact JSON text, exactly what ``json.dumps(document,
    separators=(",", ":"), ensure_ascii=False, default=str)`` writes: the scalars are written one by
    one and a shared tuple of checks or serving identity is encoded once, so a 100,000-case
    ``--json`` builds no document per case. Secrets and hidden characters are left to the caller,
    as for a document (see :func:`evalkit.cli.json_output.print_json_streamed`)."""
    # Whether a case is unstable is read from its checks alone, so it is kept with their text.
    checks_text, unstable = _made_once(
        _CHECK_TEXTS, case.checks, lambda checks: (_compact_json(_check_documents(checks, _case_hooks()[0])), case.unstable)
    )
    identity = case.identity
    identity_text = "null" if identity is None else _made_once(_IDENTITY_TEXTS, identity, _identity_text)
    value = _json_value
    detail = case.detail
    return (
        f'{{"id":{value(case.case_id)},"passed":{value(case.passed)},"score":{value(case.score)},'
        f'"errored":{value(case.errored)},"error":{value(case.error)},'
        f'"latency_ms":{value(round(case.latency_s * 1000, 3))},"checks":{checks_text},'
        f'"yardstick":{value(case.yardstick)},"unstable":{"true" if unstable else "false"},'
        f'"identity":{identity_text},"answer":{value(case.answer_text)},'
        f'"detail":{"null" if detail is None else _compact_json(detail)},'
        f'"usage":{_compact_json(_usage_document(case.usage))},'
        f'"judge_usage":{_compact_json([_usage_document(u) for u in case.judge_usage])},'
        f'"answer_source":{value(case.answer_source)},"requests":{value(case.requests)},"requests_sent":{value(case.requests_sent)}'
        f'{_repeats_text(case)}'
        + (f',"transcript":{_compact_json(_transcript_document(case.transcript))}' if case.transcript else "")
        + "}"
    )


def _repeats_text(case: CaseResult) -> str:
    """The keys :func:`repeats_document` adds, as compact JSON text after a comma (empty when none)."""
    extra = repeats_document(case)
    return "," + _compact_json(extra)[1:-1] if extra else ""



def _transcript_document(transcript: Any) -> list[dict[str, Any]]:
    """A case's stored turns as JSON-ready data (``transcript`` in ``--json``; only for a conversation)."""
    from ..conversations import transcript_data

    return transcript_data(transcript)


def _identity_text(identity: Any) -> str:
    """A serving identity as compact JSON text."""
    return _compact_json(_case_hooks()[1](identity))


def _json_value(value: Any) -> str:
    """One value as compact JSON text, as :func:`_compact_json` writes it; the plain scalars
    without the encoder's set-up."""
    return scalar_text(value) or _compact_json(value)


def _compact_json(value: Any) -> str:
    """``value`` as the compact JSON text ``--json`` prints (no spaces, characters as they are,
    anything else by ``str``)."""
    return document_text(value)


@functools.cache
def _case_hooks() -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """The project converter's unstructure functions for a check and a serving identity, looked up
    once: a 100,000-case ``--json`` calls them 400,000 times."""
    from ..answers import ServingIdentity
    from ..convert import converter
    from ..grading import Check

    return converter.get_unstructure_hook(Check), converter.get_unstructure_hook(ServingIdentity)


def print_cases_json(document: dict[str, Any], cases: Any, case_count: int) -> None:
    """Print ``document`` with its ``"cases"`` made of ``cases`` (an iterable of
    :class:`~evalkit.runs.CaseResult`): whole and indented for a run of at most
    :data:`~evalkit.cli.json_output.COMPACT_JSON_CASES` cases, else compact and case by case (:func:`~evalkit.cli.json_output.print_json_streamed`,
    each case's text written by :func:`case_json`), so a 100,000-case run never
    holds the list, nor a document per case."""
    from .json_output import print_json, print_json_streamed, prints_compact

    if prints_compact(case_count):
        print_json_streamed(document, "cases", map(case_json, cases), encoded=True)
    else:
        print_json({**document, "cases": [case_document(case) for case in cases]})


def run_document(run: Run, with_cases: bool = True) -> dict[str, Any]:
    """A run as JSON-ready data."""
    from ..convert import unstructure

    document: dict[str, Any] = {
        "run_id": run.id,
        "kind": run.kind.value,
        "set": run.set_identifier,
        "status": run.status.value,
        "grader": run.grader,
        "verified": run.verified,
        "identity": unstructure(run.identity) if run.identity else None,
        "identity_note": run.identity_note,
        "provider_instance": run.provider_instance,
        "adapter": run.adapter,
        "model_alias": run.model_alias,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "label": run.label,
        "privacy": run.privacy,
        "case_count": run.case_count,
        "answered": run.answered_count,
        "passed": run.passed_count,
        "errored": run.errored_count,
        # the cases pass_rate and mean_score are over: answered, not errored (evalkit.run_figures)
        "scored": run.scored_count,
        "pass_rate": float(run.pass_rate),
        "mean_score": run.mean_score,
    }
    if run.retriever is not None:
        document.update(
            retriever=run.retriever,
            deployment=run.deployment,
            benchmark_fingerprint=run.benchmark_fingerprint,
            variant_fingerprint=run.variant_fingerprint,
            provenance=run.provenance,
        )
    if run.metrics:
        document["metrics"] = run.metrics
    if run.kind.value == "prompts":
        from ..run.limit_stops import stops_of
        from .spend_view import spend_document

        document["spend"] = spend_document(run)
        document["answers_reused"] = run.answers_reused
        document["source_run_id"] = run.source_run_id
        # the spending limits that stopped the run or its shards, by part (``*``, ``I/N``): {} when none did
        document["limit_stops"] = {part: dict(stop) for part, stop in stops_of(run).items()}
    if with_cases:
        document["cases"] = [case_document(c) for c in run.cases]
    return document


def acceptance_document(acceptance: Any) -> dict[str, Any] | None:
    """An acceptance as JSON-ready data (``None`` for a run that is not accepted)."""
    if acceptance is None:
        return None
    return {"how": acceptance.how, "at": acceptance.at, "by": acceptance.by, "reason": acceptance.reason, "summary": acceptance.describe()}


def outcome_document(outcome: Outcome, with_cases: bool = True, flaky: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``--json`` document of ``evalkit run``; without ``with_cases`` its ``"cases"`` is
    ``None`` (keeping its place for cases printed one by one). ``flaky_cases`` lists the cases the
    verdict names that flip back and forth in the scope's history (``flaky``: id → why). ``"shard"``:
    a shard's own figures (:meth:`~evalkit.run.outcome.ShardFigures.document`), ``null`` for a run
    not sharded; every other figure is the run's."""
    from .comparison_view import verdict_document

    verdict = outcome.verdict
    document = run_document(outcome.run, with_cases=with_cases)
    document.setdefault("cases", None)
    document["notes"] = list(outcome.notes)
    document["warnings"] = list(outcome.plugin_failures)
    document["concurrency"] = outcome.concurrency
    document["verdict"] = verdict_document(verdict)
    document["accepted"] = acceptance_document(verdict.acceptance)
    document["baseline_id"] = document["verdict"]["baseline_id"]
    document["flaky_cases"] = [{"id": case_id, "why": why} for case_id, why in (flaky or {}).items()]
    # a shard's own figures; the document's others (answered, passed, pass_rate, spend…) are the run's
    document["shard"] = outcome.shard.document() if outcome.shard is not None else None
    return document
