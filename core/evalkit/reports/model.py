"""What a reporter is given: one stored run, its verdict and comparison, and its scope's history.

:class:`Report` is the single input every reporter (JUnit, Markdown, HTML, JSON, third-party)
renders. It is assembled in one place (:mod:`evalkit.reports.assemble`) from the results store,
so a change to how verdicts or comparisons are made is adapted there and nowhere else.

Every string in it (set and case ids, check details, answers, notes) is data from a plugin, a
set, an endpoint or a stored row: a reporter escapes it for its format
(:mod:`evalkit.reports.escape`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import attrs

from ..prompts import displayed_check_name
from ..runs import CaseResult, Run, RunKind, RunStatus
from ..storage import StoredVerdict
from ..verdict import Comparison
from ..wording import counted

__all__ = [
    "CHANGE_SECTIONS",
    "Figure",
    "HistoryPoint",
    "QuestionInfo",
    "Report",
    "figures_of",
    "verdict_word",
]

#: The comparison's case sections, in the order reports list them: attribute, heading, and the
#: short tag a per-case table shows. Regressed cases always come first.
CHANGE_SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("regressed_cases", "Regressed (passed in the baseline, fail now)", "regressed"),
    ("fixed_cases", "Fixed (failed in the baseline, pass now)", "fixed"),
    ("still_failing", "Still failing", "still failing"),
    ("added_cases", "Added (not in the baseline)", "added"),
    ("removed_cases", "Removed (not in this run)", "removed"),
)


@attrs.frozen
class Figure:
    """One headline number of a run, beside the same number of its baseline.

    ``percent`` figures are rates shown as percentages with deltas in points; the others are
    0..1 means shown with three decimals.
    """

    key: str
    label: str
    value: float | None
    baseline: float | None = None
    percent: bool = True

    @property
    def delta(self) -> float | None:
        """This run minus the baseline, when both are known."""
        if self.value is None or self.baseline is None:
            return None
        return self.value - self.baseline

    def show(self, value: float | None) -> str:
        """``66.7%`` or ``0.667``; an em dash when unknown."""
        if value is None:
            return "—"
        return f"{value * 100:.1f}%" if self.percent else f"{value:.3f}"

    def show_delta(self) -> str:
        """``-33.3 pp`` or ``+0.120``; empty when there is no baseline."""
        delta = self.delta
        if delta is None:
            return ""
        return f"{delta * 100:+.1f} pp" if self.percent else f"{delta:+.3f}"


def _retrieval_metrics(run: Run) -> Mapping[str, Any]:
    metrics = (run.metrics or {}).get("retrieval")
    return metrics if isinstance(metrics, Mapping) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        return None
    return float(value)


def figures_of(run: Run) -> dict[str, float | None]:
    """The headline numbers of one run by key: ``pass_rate``/``mean_score`` for a prompt run (over
    its scored cases, :attr:`~evalkit.runs.Run.pass_rate`);
    ``hit_at_1``/``hit_at_3``/``mrr_at_k``/``ndcg_at_k`` for a retrieval run (read from its stored
    metrics; the hit rates fall back to the stored pass rate and mean score; all ``None`` for a
    run whose every question errored: it measured nothing)."""
    if run.kind is not RunKind.RETRIEVAL:
        if not run.scored_count and run.errored_count:
            return {"pass_rate": None, "mean_score": None}  # every case errored: nothing was measured
        return {"pass_rate": float(run.pass_rate), "mean_score": float(run.mean_score)}
    metrics = _retrieval_metrics(run)
    if metrics.get("question_count") == 0 and run.errored_count:
        # every question errored: nothing was measured (the terminal says "Measured: nothing"),
        # and the stored zeros drawn as a 0 % hit rate read as a collapse of the retriever
        return {"hit_at_1": None, "hit_at_3": None, "mrr_at_k": None, "ndcg_at_k": None}
    hit1 = _number(metrics.get("top1_hit_rate"))
    hit3 = _number(metrics.get("top3_hit_rate"))
    return {
        "hit_at_1": hit1 if hit1 is not None else float(run.pass_rate),
        "hit_at_3": hit3 if hit3 is not None else float(run.mean_score),
        "mrr_at_k": _number(metrics.get("mrr_at_k", metrics.get("mrr"))),
        "ndcg_at_k": _number(metrics.get("ndcg_at_k")),
    }


#: The headline figures measured at a cut-off ``k``, compared only between runs of the same ``k``.
_AT_K = ("mrr_at_k", "ndcg_at_k")


def _cut_off(run: Run) -> object:
    """A retrieval run's ``k`` as its metrics keep it (``None`` for a prompt run)."""
    return _retrieval_metrics(run).get("k") if run.kind is RunKind.RETRIEVAL else None


def _figure_labels(run: Run) -> tuple[tuple[str, str, bool], ...]:
    if run.kind is not RunKind.RETRIEVAL:
        return (("pass_rate", "Pass rate", True), ("mean_score", "Mean score", False))
    k = _retrieval_metrics(run).get("k")
    k_label = str(k) if isinstance(k, int) else "k"
    return (
        ("hit_at_1", "hit@1", True),
        ("hit_at_3", "hit@3", True),
        ("mrr_at_k", f"MRR@{k_label}", False),
        ("ndcg_at_k", f"nDCG@{k_label}", False),
    )


def verdict_word(run: Run, verdict: StoredVerdict | None, gate_failed: bool) -> str:
    """The verdict in one upper-case word or two, as every report's first line shows it."""
    if run.status is RunStatus.RUNNING:
        return "PENDING"
    if run.status is not RunStatus.COMPLETE:
        return run.status.value.upper()
    state = verdict.state if verdict is not None else "not_comparable"
    if state == "regressed":
        return "REGRESSED"
    if state == "inconclusive":
        return "INCONCLUSIVE (GATE FAILED)" if gate_failed else "INCONCLUSIVE"
    if state == "not_comparable":
        return "NOT COMPARED (GATE FAILED)" if gate_failed else "NOT COMPARED"
    if state == "baseline":
        return "BASELINE"
    return "PASSED"


@attrs.frozen
class HistoryPoint:
    """One earlier (or this) run of the same scope, for trend charts.

    ``accepted`` marks a run that is (or was) a baseline of its scope; ``current`` the run the
    report is about.
    """

    run_id: str
    started_at: float
    status: RunStatus
    figures: Mapping[str, float | None]
    verdict_state: str | None = None
    accepted: bool = False
    current: bool = False
    label: str | None = None


@attrs.frozen
class QuestionInfo:
    """What a golden question asks and expects, for showing a retrieval run's rankings."""

    question: str
    expected_ids: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    form: str | None = None
    hard_class: str | None = None


@attrs.frozen
class Report:
    """Everything a reporter renders.

    ``run`` is the stored run with its cases (answer text only where its privacy level kept it).
    ``verdict`` is the verdict as stored (``None`` while the run is not finished); ``comparison``
    the case-by-case comparison with ``baseline`` (both ``None`` when the run was not compared).
    ``history`` holds the scope's runs oldest first, this run included. ``questions`` describes a
    retrieval run's questions by id (empty when the set is not installed). ``fail_on_regression``
    is the gate the command ran with: a run that could not be compared fails it too.
    """

    run: Run
    verdict: StoredVerdict | None = None
    comparison: Comparison | None = None
    baseline: Run | None = None
    history: tuple[HistoryPoint, ...] = attrs.field(default=(), converter=tuple)
    questions: Mapping[str, QuestionInfo] = attrs.field(factory=dict)
    fail_on_regression: bool = False
    notes: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    generated_at: float = attrs.field(factory=time.time)
    #: The cases known to be flaky (their repeats disagree, or they flip back and forth in the
    #: scope's history), with why (see :mod:`evalkit.flakiness`).
    flaky: Mapping[str, str] = attrs.field(factory=dict)
    fail_on_inconclusive: bool = False
    #: What each prompt case asked (its messages and reference) by case id, from the installed set
    #: when it is the version the run answered (:func:`evalkit.case_texts.answered_texts`).
    texts: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def retrieval(self) -> bool:
        """True for a retrieval run (questions, rankings, hit rates)."""
        return self.run.kind is RunKind.RETRIEVAL

    @property
    def gate_failed(self) -> bool:
        """True when the regression gate fails: a regression, an incomplete or pending run, or,
        under ``fail_on_regression``, a run that could not be compared."""
        if self.run.status is not RunStatus.COMPLETE:
            return self.fail_on_regression or self.run.status is not RunStatus.RUNNING
        state = self.verdict.state if self.verdict is not None else "not_comparable"
        return (
            state == "regressed"
            or (self.fail_on_regression and state == "not_comparable")
            or (self.fail_on_inconclusive and state == "inconclusive")
        )

    @property
    def verdict_word(self) -> str:
        """``PASSED``, ``REGRESSED``, ``BASELINE``, ``NOT COMPARED``, ``PENDING``, ``INCOMPLETE`` …"""
        return verdict_word(self.run, self.verdict, self.gate_failed)

    @property
    def verdict_sentence(self) -> str:
        """The stored verdict's one-line note, or why there is none."""
        if self.run.status is RunStatus.RUNNING:
            return (
                f"{self.run.answered_count} of {counted(self.run.case_count, 'case')} are in; "
                "the verdict is pending until the run has finished (every shard of a sharded run)."
            )
        if self.verdict is not None and self.verdict.reason:
            return self.verdict.reason
        if self.run.status is not RunStatus.COMPLETE:
            return f"The run is {self.run.status.value} ({counted(self.run.errored_count, 'errored case')}); it is not compared."
        return "No verdict was recorded for this run."

    @property
    def identity(self) -> str:
        """Who answered (prompt runs) or which retriever in which deployment (retrieval runs)."""
        run = self.run
        if self.retrieval:
            return f"{run.retriever or run.adapter or '?'}" + (f" (deployment {run.deployment})" if run.deployment else "")
        if run.identity is not None:
            who = run.identity
            return f"{who.reported_model} ({who.provider_instance}/{who.model_alias})"
        return f"unverified ({run.provider_instance or run.adapter or '?'}/{run.model_alias or '?'})"

    @property
    def cost(self) -> str | None:
        """What a prompt run cost, ``0.0123 EUR`` (``unknown`` without prices or usage, never 0),
        with its baseline's and the difference when it was compared; ``None`` for a retrieval run."""
        from ..costs import format_amount, spend_cost

        if self.retrieval:
            return None
        amount, currency = spend_cost(self.run.spend)
        text = format_amount(amount, currency)
        if self.baseline is not None and self.comparison is not None:
            before, before_currency = spend_cost(self.baseline.spend)
            text += f" (baseline {format_amount(before, before_currency)}"
            if amount is not None and before is not None and currency == before_currency:
                delta = amount - before
                text += ", " + ("+" if delta >= 0 else "-") + format_amount(abs(delta), currency)
            text += ")"
        return text

    def figures(self) -> tuple[Figure, ...]:
        """The run's headline numbers, each beside the baseline's."""
        mine = figures_of(self.run)
        theirs = figures_of(self.baseline) if self.baseline is not None and self.comparison is not None else {}
        if theirs and self.baseline is not None and _cut_off(self.baseline) != _cut_off(self.run):
            # MRR@k and nDCG@k at two cut-offs are different measures (the comparison says so):
            # the baseline's MRR@10 under "MRR@5" read as a figure of the same measure
            theirs = {key: value for key, value in theirs.items() if key not in _AT_K}
        return tuple(
            Figure(key, label, mine.get(key), theirs.get(key), percent)
            for key, label, percent in _figure_labels(self.run)
        )

    def changes(self) -> dict[str, str]:
        """``{case id: tag}`` from the comparison (``regressed``, ``fixed``, ``added`` …)."""
        if self.comparison is None:
            return {}
        tags: dict[str, str] = {}
        for attribute, _, tag in CHANGE_SECTIONS:
            for case_id in getattr(self.comparison, attribute):
                tags.setdefault(case_id, tag)
        return tags

    def sections(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The comparison's sections as ``(heading, case ids)``, regressed first."""
        if self.comparison is None:
            return ()
        return tuple((heading, tuple(getattr(self.comparison, attribute))) for attribute, heading, _ in CHANGE_SECTIONS)

    def uncertainty_lines(self) -> tuple[str, ...]:
        """The comparison's uncertainty, one line per metric (the terminal's lines; plain text,
        escaped by each reporter), then the warnings of tolerances the set cannot keep and the
        quarantine line; empty when the run was not compared."""
        comparison = self.comparison
        if comparison is None:
            return ()
        from ..verdict_text import metric_lines

        unit = "question" if self.retrieval else "case"
        lines = [line.strip() for line in metric_lines(comparison, unit)]
        lines.extend(comparison.warnings(unit))
        if comparison.quarantined_cases:
            ids = ", ".join(q.case_id for q in comparison.quarantined_cases)
            lines.append(f"Quarantined ([gate] quarantine): {counted(len(comparison.quarantined_cases), unit)} left out of the gate: {ids}")
        if comparison.inconclusive and comparison.decision is not None:
            lines.extend(m.reason for m in comparison.decision.metrics if m.state.value != "no_regression")
        return tuple(lines)

    def case_marks(self, case: CaseResult) -> tuple[str, ...]:
        """What a report says beside a case's result: its answers' tally under repeats, and flaky."""
        marks = []
        if case.answers > 1:
            marks.append(f"{case.passes}/{case.answers} answers passed")
        if case.flaky or case.case_id in self.flaky:
            marks.append("flaky" + (f": {self.flaky[case.case_id]}" if case.case_id in self.flaky else ""))
        return tuple(marks)

    @property
    def regressed_cases(self) -> tuple[str, ...]:
        """The cases that passed in the baseline and fail now."""
        return self.comparison.regressed_cases if self.comparison is not None else ()

    def beside_baseline(self, case_id: str) -> CaseResult | None:
        """The baseline's case, for a case that regressed or was edited since it (else ``None``)."""
        if self.comparison is None or self.baseline is None:
            return None
        edited = {edited.case_id for edited in self.comparison.edited_cases}
        if case_id not in self.comparison.regressed_cases and case_id not in edited:
            return None
        return next((case for case in self.baseline.cases if case.case_id == case_id), None)

    @staticmethod
    def failed_checks(case: CaseResult) -> tuple[str, ...]:
        """A case's failed checks as ``name (why)`` (an unnamed check by its kind, as the terminal
        shows it: :func:`~evalkit.prompts.displayed_check_name`), or its error."""
        if case.errored and not case.failed_checks:
            return (f"error: {case.error}",)
        parts = []
        for check in case.failed_checks:
            why = check.error or check.detail
            if check.advisory:  # a judge's verdict that does not gate (evalkit.judge_gate)
                why = f"advisory: {why}" if why else "advisory"
            name = displayed_check_name(check.name)
            parts.append(f"{name} ({why})" if why else name)
        if case.errored:
            parts.append(f"error: {case.error}")
        return tuple(parts)

    def ranking(self, case: CaseResult) -> tuple[str, ...] | None:
        """The ids a retriever ranked for this question, when the run's privacy level kept them."""
        ranked = (case.detail or {}).get("ranked_ids")
        if not isinstance(ranked, (list, tuple)):
            return None
        return tuple(str(item) for item in ranked)
